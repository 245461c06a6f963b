//! The editor's parse cache changes nothing: for every fixture and example (clean and broken),
//! checking it after an edit with a warm cache gives the same module and the same diagnostics
//! as checking it cold, whether the edit lands before, between or inside items, and the items
//! the edit did not touch are taken from the cache.

use std::path::PathBuf;
use tenx_compiler::syntax::{ParseCache, parse, parse_with};
use tenx_compiler::{LintLevels, check, check_cached};
use tenx_diagnostics::{FileId, SourceSet};
use tenx_tests::{files_under, repo_root};

fn corpus() -> Vec<(PathBuf, String)> {
    let mut found = files_under(&repo_root().join("tests/fixtures"), "tenx");
    found.extend(files_under(&repo_root().join("examples"), "tenx"));
    found.sort();
    assert!(found.len() > 100, "only {} files", found.len());
    found
        .into_iter()
        .filter_map(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?)))
        .collect()
}

/// The edits tried on each text: a comment line at the start, in the middle (at a line
/// start), an item removed by cutting a line, and a character typed inside a line.
fn edits(text: &str) -> Vec<String> {
    let middle = text.len() / 2;
    let line_start = text[..middle].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i + 1);
    let inside = text[line_start..line_end]
        .char_indices()
        .nth(3)
        .map_or(line_start, |(i, _)| line_start + i);
    vec![
        format!("// a new first line\n{text}"),
        format!("{}// typed here\n{}", &text[..line_start], &text[line_start..]),
        format!("{}{}", &text[..line_start], &text[line_end..]),
        format!("{}x{}", &text[..inside], &text[inside..]),
        text.to_string(),
    ]
}

#[test]
fn a_warm_parse_is_the_cold_parse_after_every_edit() {
    let mut reused = 0;
    for (path, text) in corpus() {
        let mut cache = ParseCache::new();
        let _ = parse_with(FileId(0), &text, Some(&mut cache));
        cache.finish();
        for edited in edits(&text) {
            let cold = parse(FileId(0), &edited);
            let warm = parse_with(FileId(0), &edited, Some(&mut cache));
            cache.finish();
            assert_eq!(
                format!("{:?}", warm.module),
                format!("{:?}", cold.module),
                "{}: the module differs after an edit",
                path.display()
            );
            assert_eq!(warm.diagnostics, cold.diagnostics, "{}", path.display());
            assert_eq!(warm.broken, cold.broken, "{}", path.display());
        }
        reused += cache.reused;
    }
    assert!(reused > 1000, "the cache was hardly used: {reused} chunks");
}

#[test]
fn a_cached_check_reports_what_a_cold_check_reports() {
    let lints = LintLevels::default();
    for (path, text) in corpus().into_iter().step_by(3) {
        let mut cache = ParseCache::new();
        for edited in edits(&text) {
            let mut cold_sources = SourceSet::new();
            let root = cold_sources.add("input.tenx", edited.clone());
            let cold = check(&mut cold_sources, root, &lints);
            let mut warm_sources = SourceSet::new();
            let root = warm_sources.add("input.tenx", edited);
            let warm = check_cached(&mut warm_sources, root, &lints, &mut cache);
            assert_eq!(warm.diagnostics, cold.diagnostics, "{}", path.display());
        }
    }
}

#[test]
fn only_the_edited_item_is_parsed_again() {
    let text = (0..50).map(|i| format!("tag t{i} \"Tag {i}\"\n\n")).collect::<String>();
    let mut cache = ParseCache::new();
    let _ = parse_with(FileId(0), &text, Some(&mut cache));
    cache.finish();
    assert_eq!((cache.parsed, cache.reused), (50, 0));
    let edited = text.replace("tag t10 \"Tag 10\"", "tag t10 \"Tag ten\"");
    let warm = parse_with(FileId(0), &edited, Some(&mut cache));
    cache.finish();
    assert_eq!((cache.parsed, cache.reused), (51, 49));
    assert_eq!(
        format!("{:?}", warm.module),
        format!("{:?}", parse(FileId(0), &edited).module)
    );
}
