//! One code, one kind of mistake, one owning module: every `Code::TENXnnnn` in the non-test
//! sources of the compiler core, the CLI and the artifact crate is emitted from one module. A
//! module is a stage folder of the core (`syntax/`, `resolve/`, `schema/`, `lower/`), one check
//! of the core (`check/<name>.rs` together with `check/<name>/**`), or else a single file.
//!
//! The rule is read from the sources, not from a list, so new codes are covered as they come.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tenx_tests::{files_under, repo_root};

/// The crates scanned, relative to `compiler/`.
const CRATES: [&str; 3] = ["core/src", "cli/src", "artifact/src"];

/// Stage folders of the core that are one module each.
const STAGES: [&str; 4] = ["syntax", "resolve", "schema", "lower"];

#[test]
fn each_code_is_emitted_from_one_module() {
    let compiler = repo_root().join("compiler");
    // code → owning module → files that emit it
    let mut owners: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut scanned = 0;
    for krate in CRATES {
        let src = compiler.join(krate);
        for file in files_under(&src, "rs") {
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let relative = file.strip_prefix(&compiler).unwrap_or(&file);
            let relative = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>();
            let text = std::fs::read_to_string(&file).unwrap();
            scanned += 1;
            for code in emitted_codes(&text) {
                owners
                    .entry(code)
                    .or_default()
                    .entry(owner(&relative))
                    .or_default()
                    .insert(relative.join("/"));
            }
        }
    }
    assert!(scanned > 50, "too few sources found under {}", compiler.display());
    assert!(
        owners.len() > 50,
        "too few codes found: the scan for `Code::TENXnnnn` is broken"
    );
    let shared: Vec<String> = owners
        .iter()
        .filter(|(_, modules)| modules.len() > 1)
        .map(|(code, modules)| {
            let places = modules
                .iter()
                .map(|(module, files)| {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    format!("  {module}: {}", files.join(", "))
                })
                .collect::<Vec<_>>()
                .join("\n");
            format!("{code} is emitted from {} modules:\n{places}", modules.len())
        })
        .collect();
    assert!(
        shared.is_empty(),
        "each code must be emitted from one module (give the other mistakes their own codes):\n\n{}",
        shared.join("\n\n")
    );
}

/// The codes a source file names as `Code::TENXnnnn`, outside comments and before its first
/// `#[cfg(test)]` (tests may name any code).
fn emitted_codes(text: &str) -> BTreeSet<String> {
    const PREFIX: &str = "Code::TENX";
    let mut codes = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(PREFIX) {
            rest = rest.get(at + PREFIX.len()..).unwrap_or_default();
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if digits.len() == 4 {
                codes.insert(format!("TENX{digits}"));
            }
        }
    }
    codes
}

/// The module that owns a file, from its path relative to `compiler/` (`core/src/check/graph/
/// routes.rs` → `core/check/graph`).
fn owner(path: &[String]) -> String {
    let stem = |name: &str| {
        Path::new(name)
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
    };
    match path {
        [core, src, stage, _, ..] if core == "core" && src == "src" && STAGES.contains(&stage.as_str()) => {
            format!("core/{stage}")
        }
        [core, src, check, name, ..] if core == "core" && src == "src" && check == "check" => {
            format!("core/check/{}", stem(name))
        }
        _ => path.join("/"),
    }
}

#[test]
fn owners_follow_the_module_rule() {
    let path = |p: &str| p.split('/').map(str::to_string).collect::<Vec<_>>();
    assert_eq!(owner(&path("core/src/syntax/values.rs")), "core/syntax");
    assert_eq!(owner(&path("core/src/schema/rules.rs")), "core/schema");
    assert_eq!(owner(&path("core/src/check/graph.rs")), "core/check/graph");
    assert_eq!(owner(&path("core/src/check/graph/routes.rs")), "core/check/graph");
    assert_eq!(owner(&path("core/src/check/models/secrets.rs")), "core/check/models");
    assert_eq!(owner(&path("core/src/check/mod.rs")), "core/check/mod");
    assert_eq!(owner(&path("core/src/source.rs")), "core/src/source.rs");
    assert_eq!(owner(&path("cli/src/check_cmd.rs")), "cli/src/check_cmd.rs");
    let codes = emitted_codes(
        "// Code::TENX0001 in a comment\nlet d = (Code::TENX0101, Code::TENX0102);\n#[cfg(test)]\nmod tests { Code::TENX0103 }\n",
    );
    assert_eq!(codes, BTreeSet::from(["TENX0101".to_string(), "TENX0102".to_string()]));
}
