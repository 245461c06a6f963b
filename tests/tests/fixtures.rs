//! Every `tests/fixtures/<stage>/<name>.tenx` is a test: its `// expect:` header names the codes
//! it must produce (or `ok`), and the snapshot `tests/snapshots/<stage>__<name>.snap` shows the
//! source with the rendered diagnostics. Files in a `support/` folder are imported by fixtures
//! and are not tests themselves. All fixtures run; failures are listed together at the end.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers report a failure by panicking"
)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use tenx_tests::{Expect, check_file, expect_header, files_under, repo_root};

/// The snapshot name of a fixture: its path below `tests/fixtures`, `/` as `__`, no extension.
pub fn snapshot_name(relative: &str) -> String {
    relative.trim_end_matches(".tenx").replace('/', "__")
}

#[test]
fn fixtures() {
    let root = repo_root().join("tests/fixtures");
    let fixtures: Vec<_> = files_under(&root, "tenx")
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "support"))
        .collect();
    assert!(!fixtures.is_empty(), "no fixtures found");
    let mut failures = Vec::new();
    for path in &fixtures {
        let relative = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let result = catch_unwind(AssertUnwindSafe(|| check_fixture(path, &relative)));
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("tests/fixtures/{relative}: {message}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n\n{}",
        failures.len(),
        fixtures.len(),
        failures.join("\n\n")
    );
}

fn check_fixture(path: &std::path::Path, relative: &str) {
    // Lossy: one fixture is deliberately not UTF-8.
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    let name = format!("tests/fixtures/{relative}");
    let expect = expect_header(&text).unwrap_or_else(|| panic!("no `// expect:` header"));
    let outcome = check_file(path);
    let rendered = outcome.rendered();
    match &expect {
        Expect::Clean => assert!(
            outcome.diagnostics.is_empty(),
            "expected no diagnostics, got:\n{rendered}"
        ),
        Expect::Codes(codes) => assert_eq!(&outcome.codes(), codes, "codes differ; diagnostics:\n{rendered}"),
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(path);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::assert_snapshot!(
            snapshot_name(relative),
            format!("----- SOURCE {name}\n{text}\n----- DIAGNOSTICS\n{rendered}")
        );
    });
}
