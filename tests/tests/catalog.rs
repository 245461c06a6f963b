//! The catalog stays in step with the code table: every code has a page with a failing and a
//! fixed example, the failing example produces exactly its code, the fixed example is clean,
//! and every code is produced by at least one fixture; a retired code is produced by none.

use std::collections::BTreeSet;
use tenx_diagnostics::Code;
use tenx_tests::{Expect, check_text, expect_header, files_under, repo_root, tenx_blocks};

#[test]
fn every_page_is_well_formed_and_its_examples_behave() {
    let mut failures = Vec::new();
    for code in Code::ALL {
        let page = code.page();
        let title = format!("# {}: {}", code.as_str(), code.name());
        if page.lines().next() != Some(title.as_str()) {
            failures.push(format!("{code}: the page must start with `{title}`"));
            continue;
        }
        let blocks = tenx_blocks(page);
        // A retired code is never reported: its page says so, and has no failing example.
        if code.is_retired() {
            if !page.contains("retired") || blocks.iter().any(|(info, _)| info == "tenx,fail") {
                failures.push(format!(
                    "{code}: a retired code's page says it is retired and has no ```tenx,fail block"
                ));
            }
            continue;
        }
        let failing: Vec<_> = blocks.iter().filter(|(info, _)| info == "tenx,fail").collect();
        let fixed: Vec<_> = blocks.iter().filter(|(info, _)| info == "tenx").collect();
        // Invalid UTF-8 cannot be written in a Markdown page, nor a 16 MiB file, nor usefully
        // a chain of hundreds of schemas; their failing examples are the fixtures
        // `syntax/invalid_utf8.tenx`, `resolve/import_too_large.tenx` and
        // `schemas/schema_nested_too_deep.tenx`.
        let not_in_a_page = [Code::TENX0006, Code::TENX0114, Code::TENX0407].contains(code);
        if (failing.len() != 1 && !not_in_a_page) || fixed.is_empty() {
            failures.push(format!(
                "{code}: needs exactly one ```tenx,fail block and at least one ```tenx block"
            ));
            continue;
        }
        for (_, source) in &failing {
            let outcome = check_text(&format!("{code}-fail.tenx"), source);
            let expected = BTreeSet::from([code.as_str().to_string()]);
            if outcome.codes() != expected {
                failures.push(format!(
                    "{code}: the failing example gives {:?}\n{}",
                    outcome.codes(),
                    outcome.rendered()
                ));
            }
        }
        for (_, source) in &fixed {
            let outcome = check_text(&format!("{code}-fixed.tenx"), source);
            if !outcome.diagnostics.is_empty() {
                failures.push(format!(
                    "{code}: the fixed example is not clean\n{}",
                    outcome.rendered()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_page_belongs_to_a_code() {
    let dir = repo_root().join("compiler/diagnostics/codes");
    for page in files_under(&dir, "md") {
        let stem = page.file_stem().unwrap().to_string_lossy().to_string();
        assert!(
            Code::parse(&stem).is_some_and(|c| c.as_str() == stem),
            "{stem}.md has no code in the table"
        );
    }
}

#[test]
fn every_code_has_a_fixture() {
    let mut produced = BTreeSet::new();
    for fixture in files_under(&repo_root().join("tests/fixtures"), "tenx") {
        let text = String::from_utf8_lossy(&std::fs::read(&fixture).unwrap()).into_owned();
        if let Some(Expect::Codes(codes)) = expect_header(&text) {
            for code in &codes {
                assert!(
                    Code::parse(code).is_some(),
                    "{}: unknown code {code}",
                    fixture.display()
                );
            }
            produced.extend(codes);
        }
    }
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !c.is_retired())
        .map(|c| c.as_str())
        .filter(|c| !produced.contains(*c))
        .collect();
    assert!(missing.is_empty(), "codes without a fixture: {missing:?}");
    let retired: Vec<&str> = Code::RETIRED
        .iter()
        .map(|c| c.as_str())
        .filter(|c| produced.contains(*c))
        .collect();
    assert!(retired.is_empty(), "fixtures expect retired codes: {retired:?}");
}

#[test]
fn every_snapshot_has_its_fixture() {
    let snapshots = repo_root().join("tests/snapshots");
    for snap in files_under(&snapshots, "snap") {
        let name = snap.file_stem().unwrap().to_string_lossy().to_string();
        // `artifact__<example>` and `mermaid__<example>` belong to `examples/<example>/main.tenx`.
        if let Some(example) = name
            .strip_prefix("artifact__")
            .or_else(|| name.strip_prefix("mermaid__"))
        {
            let main = repo_root().join("examples").join(example).join("main.tenx");
            assert!(
                main.is_file(),
                "snapshot {name}.snap has no example {}: delete it",
                main.display()
            );
            continue;
        }
        // `fmt__<name>` belongs to the formatter's input fixture `tests/fmt/<name>.tenx`.
        if let Some(input) = name.strip_prefix("fmt__") {
            let fixture = repo_root().join("tests/fmt").join(format!("{input}.tenx"));
            assert!(
                fixture.is_file(),
                "snapshot {name}.snap has no formatter fixture {}: delete it",
                fixture.display()
            );
            continue;
        }
        // `port__<name>` belongs to `tests/ports/<name>.tenx` or `tests/ports/<name>/main.tenx`.
        if let Some(port) = name.strip_prefix("port__") {
            let ports = repo_root().join("tests/ports");
            assert!(
                ports.join(format!("{port}.tenx")).is_file() || ports.join(port).join("main.tenx").is_file(),
                "snapshot {name}.snap has no port tests/ports/{port}.tenx: delete it"
            );
            continue;
        }
        let fixture = repo_root()
            .join("tests/fixtures")
            .join(format!("{}.tenx", name.replace("__", "/")));
        assert!(
            fixture.is_file(),
            "snapshot {name}.snap has no fixture {}: delete it",
            fixture.display()
        );
    }
    let pending = files_under(&snapshots, "new");
    assert!(pending.is_empty(), "unreviewed snapshots: {pending:?}");
}
