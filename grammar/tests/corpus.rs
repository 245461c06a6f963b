//! Every `.tenx` program in the repository parses with `Rule::file`: the examples, the standard
//! library, and the ```` ```tenx ```` blocks of `docs/language.md`.
//!
//! This checks syntax only. A parse also fails here when it succeeds only through a recovery
//! rule (`bad_line`, `missing_close`, `colon_assign`, `fat_arrow`): those exist so the compiler
//! can report a mistake, and a program in the repository must not contain one.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers report a failure by panicking"
)]

use std::path::{Path, PathBuf};

use tenx_grammar::pest::Parser;
use tenx_grammar::{Rule, TenxParser};

/// The workspace root: the parent of this crate's folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `*.tenx` file under `dir`, recursively, sorted.
fn tenx_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "tenx") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The ```` ```tenx ```` blocks of a Markdown text, with the line each starts on.
fn tenx_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim();
        match current.take() {
            Some((start, text)) if trimmed == "```" => blocks.push((start, text)),
            Some((start, mut text)) => {
                text.push_str(line);
                text.push('\n');
                current = Some((start, text));
            }
            None if trimmed == "```tenx" => current = Some((index + 2, String::new())),
            None => {}
        }
    }
    assert!(current.is_none(), "a ```tenx block is never closed");
    blocks
}

/// Parses `text` as a whole file; the error names `what` and says why.
fn check(what: &str, text: &str) -> Result<(), String> {
    let pairs = TenxParser::parse(Rule::file, text).map_err(|e| format!("{what}: does not parse\n{e}"))?;
    for pair in pairs.flatten() {
        let rule = pair.as_rule();
        if matches!(
            rule,
            Rule::bad_line | Rule::missing_close | Rule::colon_assign | Rule::fat_arrow
        ) {
            let (line, col) = pair.line_col();
            return Err(format!(
                "{what}:{line}:{col}: parses only through the recovery rule `{rule:?}`: {:?}",
                pair.as_str()
            ));
        }
    }
    Ok(())
}

fn check_all(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            check(&path.display().to_string(), &text).err()
        })
        .collect()
}

#[test]
fn examples_parse() {
    let files = tenx_files(&root().join("examples"));
    assert!(
        files.len() >= 4,
        "expected at least 4 example files, found {}",
        files.len()
    );
    let failures = check_all(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn stdlib_parses() {
    let files = tenx_files(&root().join("stdlib").join("std"));
    assert!(!files.is_empty(), "no stdlib files found");
    let failures = check_all(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn language_reference_blocks_parse() {
    let path = root().join("docs").join("language.md");
    let Ok(markdown) = std::fs::read_to_string(&path) else {
        return; // The reference is not written yet.
    };
    let blocks = tenx_blocks(&markdown);
    assert!(!blocks.is_empty(), "{} has no ```tenx blocks", path.display());
    let failures: Vec<String> = blocks
        .iter()
        .filter_map(|(line, text)| check(&format!("{} (block at line {line})", path.display()), text).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn recovery_rules_are_caught() {
    assert!(check("good", "tag billing \"Moves money\"").is_ok());
    assert!(check("bad line", "model m {\n  provider openai\n}").is_err());
    assert!(check("colon", "model m {\n  provider: openai\n}").is_err());
    assert!(check("fat arrow", "graph g {\n  a => b\n}").is_err());
    assert!(check("unclosed", "model m {\n  provider = openai\n").is_err());
}
