//! Examples never rot: every example program checks with no diagnostic at all and is in the
//! canonical layout (`tenxc fmt --check examples/` passes, as a new project's CI runs it), and every
//! ```` ```tenx ```` block of `docs/language.md` is a clean program (a block tagged
//! ```` ```tenx,expect=CODE ```` must produce exactly those codes).

use std::collections::BTreeSet;
use tenx_tests::{check_file, check_text, files_under, repo_root, tenx_blocks};

#[test]
fn every_example_checks_clean() {
    let mains: Vec<_> = files_under(&repo_root().join("examples"), "tenx")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "main.tenx"))
        .collect();
    assert!(
        mains.len() >= 4,
        "expected at least four examples, found {}",
        mains.len()
    );
    for main in mains {
        let outcome = check_file(&main);
        assert!(
            outcome.diagnostics.is_empty(),
            "{}:\n{}",
            main.display(),
            outcome.rendered()
        );
    }
}

#[test]
fn every_example_file_is_in_the_canonical_layout() {
    let files = files_under(&repo_root().join("examples"), "tenx");
    assert!(files.len() >= 5, "found only {} example files", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let formatted = tenx_tests::formatting::format(&text)
            .unwrap_or_else(|at| panic!("{}: the formatter refused at byte {at}", file.display()))
            .unwrap_or_else(|| panic!("{}: syntax error", file.display()));
        assert!(
            formatted == text,
            "{} is not formatted: run `tenxc fmt examples/`",
            file.display()
        );
    }
}

#[test]
fn language_reference_examples_check() {
    let doc = std::fs::read_to_string(repo_root().join("docs/language.md")).unwrap();
    let blocks = tenx_blocks(&doc);
    assert!(
        blocks.len() >= 10,
        "docs/language.md has only {} tenx blocks",
        blocks.len()
    );
    for (i, (info, code)) in blocks.iter().enumerate() {
        let outcome = check_text(&format!("docs/language.md#{}", i + 1), code);
        let expected: BTreeSet<String> = info
            .split(',')
            .filter_map(|part| part.trim().strip_prefix("expect="))
            .flat_map(|codes| codes.split('+').map(str::to_string))
            .collect();
        assert_eq!(
            outcome.codes(),
            expected,
            "block {} of docs/language.md:\n{code}\n{}",
            i + 1,
            outcome.rendered()
        );
    }
}
