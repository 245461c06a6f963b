//! Generates one `#[test]` per fixture `tests/fixtures/<area>/<name>.tenx` (files in `support/`
//! folders are imported by fixtures and are not tests), so `cargo test -p tenx-tests dead_end`
//! runs one fixture and a failure names its file. The tests call `check_fixture` of
//! `tests/fixtures.rs`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    println!("cargo::rerun-if-changed={}", root.display());
    let mut fixtures = Vec::new();
    collect(&root, &root, &mut fixtures);
    fixtures.sort();
    let mut code = String::new();
    for relative in &fixtures {
        let _ = writeln!(
            code,
            "#[test]\nfn {}() {{\n    check_fixture({relative:?});\n}}\n",
            test_name(relative)
        );
    }
    if fixtures.is_empty() {
        code.push_str("compile_error!(\"no fixtures found under tests/fixtures\");\n");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("fixture_tests.rs");
    if let Err(error) = std::fs::write(&out, code) {
        println!("cargo::error=cannot write {}: {error}", out.display());
    }
}

/// Every `.tenx` file below `dir`, as a path relative to `root` with `/` separators.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "support") {
                collect(root, &path, out);
            }
        } else if path.extension().is_some_and(|e| e == "tenx")
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// `graph/dead_end.tenx` → `graph__dead_end`: the snapshot's name, as a Rust identifier.
fn test_name(relative: &str) -> String {
    relative
        .trim_end_matches(".tenx")
        .replace('/', "__")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect()
}
