//! `tenxc fmt`: the layout of the input fixtures `tests/fmt/*.tenx` (snapshots
//! `tests/snapshots/fmt__<name>.snap`), and the two properties every formatted file must have:
//! formatting it again changes nothing, and it builds to the same artifact (see
//! [`tenx_tests::formatting`] for what "same" means given the source map). The properties are
//! checked over every example, fixture, port, catalog page example and `docs/language.md`
//! example; `fmt_roundtrip` checks them over thousands of mutated programs.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test code: a failure stops the test")]

use tenx_tests::formatting::{build, format};
use tenx_tests::{files_under, port_files, repo_root, tenx_blocks};

/// Every program of the repository, as (name relative to the repository root, text).
fn corpus() -> Vec<(String, String)> {
    let root = repo_root();
    let relative = |path: &std::path::Path| path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
    let mut programs = Vec::new();
    let files = files_under(&root.join("examples"), "tenx")
        .into_iter()
        .chain(files_under(&root.join("tests/fixtures"), "tenx"))
        .chain(files_under(&root.join("tests/fmt"), "tenx"))
        .chain(port_files());
    for path in files {
        // One fixture is deliberately not UTF-8.
        if let Ok(text) = std::fs::read_to_string(&path) {
            programs.push((relative(&path), text));
        }
    }
    let pages = files_under(&root.join("compiler/diagnostics/codes"), "md");
    for page in pages.iter().chain(std::iter::once(&root.join("docs/language.md"))) {
        let markdown = std::fs::read_to_string(page).unwrap();
        for (i, (_, code)) in tenx_blocks(&markdown).into_iter().enumerate() {
            // A block is checked as a file next to its page, as the catalog test does.
            programs.push((relative(page).replace(".md", &format!("_{}.tenx", i + 1)), code));
        }
    }
    programs
}

#[test]
fn formatting_is_idempotent_and_never_changes_the_artifact() {
    let (mut built, mut same_id, mut formatted_count, mut refused) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (name, text) in corpus() {
        let formatted = match format(&text) {
            Ok(formatted) => formatted,
            Err(at) => {
                failures.push(format!("{name}: the formatter would change the program at byte {at}"));
                continue;
            }
        };
        let Some(formatted) = formatted else {
            refused += 1;
            // Only a file with a syntax error is refused.
            let outcome = tenx_tests::check_text(&name, &text);
            if !outcome
                .diagnostics
                .iter()
                .any(|d| d.is_error() && d.code.as_str().starts_with("TENX00"))
            {
                failures.push(format!(
                    "{name}: refused without a syntax error\n{}",
                    outcome.rendered()
                ));
            }
            continue;
        };
        formatted_count += 1;
        if format(&formatted) != Ok(Some(formatted.clone())) {
            failures.push(format!("{name}: formatting twice changes it\n{formatted}"));
        }
        let before = build(&name, &text, false);
        let after = build(&name, &text, true);
        match (before, after) {
            (Some(before), Some(after)) => {
                built += 1;
                if before.meaning != after.meaning || before.declared != after.declared {
                    failures.push(format!("{name}: the formatted program builds differently\n{formatted}"));
                } else if before.id == after.id {
                    same_id += 1;
                }
            }
            (None, None) => {}
            (before, _) => failures.push(format!(
                "{name}: {} before formatting, {} after\n{formatted}",
                if before.is_some() { "builds" } else { "does not build" },
                if before.is_some() { "does not" } else { "does" },
            )),
        }
    }
    println!(
        "fmt: {formatted_count} files formatted ({refused} refused for syntax errors); {built} built to the same \
         artifact, {same_id} of them with the same id (no line moved)"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(built >= 250, "only {built} programs built");
}

#[test]
fn formatter_fixtures() {
    let dir = repo_root().join("tests/fmt");
    let fixtures = files_under(&dir, "tenx");
    assert!(fixtures.len() >= 5, "only {} formatter fixtures", fixtures.len());
    for path in fixtures {
        let text = std::fs::read_to_string(&path).unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let formatted = format(&text)
            .unwrap()
            .unwrap_or_else(|| panic!("{stem}: not formatted"));
        assert_eq!(
            format(&formatted),
            Ok(Some(formatted.clone())),
            "{stem}: not idempotent"
        );
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(&path);
        settings.set_omit_expression(true);
        settings.bind(|| {
            insta::assert_snapshot!(
                format!("fmt__{stem}"),
                format!("----- INPUT tests/fmt/{stem}.tenx\n{text}\n----- FORMATTED\n{formatted}")
            );
        });
    }
}
