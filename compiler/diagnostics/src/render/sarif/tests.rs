//! Unit tests of the SARIF log: what a result's message and locations carry, how file names
//! become URIs against declared bases, and the rules made from the code table. The log is
//! validated against the SARIF 2.1.0 schema end to end, in `compiler/cli/tests/formats.rs`.

use super::*;
use crate::Span;

fn bypass(sources: &mut SourceSet) -> Diagnostic {
    let main = sources.add("my project/100% sure.tenx", "approves = [x]\nwhen a < 1 -> x\n");
    let std = sources.add("<stdlib>/approval.tenx", "schema yes_no = {}\n");
    Diagnostic::new(
        Code::TENX0604,
        "graph `g` reaches `x` without passing its approval",
        main,
        Span::new(20, 30),
    )
    .label("this path skips the approval")
    .secondary(main, Span::new(12, 13), "the approval is declared here")
    .secondary(std, Span::new(7, 13), "")
    .help("make every path to `x` pass through `approve` first")
    .note("path: entry `a` → `x` runs")
    .note("a second note")
}

fn log(diagnostics: &[Diagnostic], sources: &SourceSet) -> Value {
    serde_json::from_str(&render_sarif(diagnostics, sources, "9.9.9")).unwrap()
}

#[test]
fn the_message_keeps_labels_help_and_every_note() {
    let mut sources = SourceSet::new();
    let d = bypass(&mut sources);
    let log = log(&[d], &sources);
    let result = &log["runs"][0]["results"][0];
    assert_eq!(
        result["message"]["text"],
        "graph `g` reaches `x` without passing its approval\n\
         my project/100% sure.tenx:2:6: this path skips the approval\n\
         [my project/100% sure.tenx:1:13](1): the approval is declared here\n\
         [<stdlib>/approval.tenx:1:8](2)\n\
         help: make every path to `x` pass through `approve` first\n\
         note: path: entry `a` → `x` runs\n\
         note: a second note"
    );
    assert_eq!(
        result["locations"][0]["message"]["text"],
        "this path skips the approval"
    );
    let related = result["relatedLocations"].as_array().unwrap();
    assert_eq!(related.len(), 2);
    assert_eq!(related[0]["id"], 1);
    assert_eq!(related[0]["message"]["text"], "the approval is declared here");
    assert_eq!(related[0]["physicalLocation"]["region"]["startLine"], 1);
    assert_eq!(related[0]["physicalLocation"]["region"]["startColumn"], 13);
    assert_eq!(related[1]["id"], 2);
    assert!(related[1].get("message").is_none(), "an empty label has no message");
}

#[test]
fn uris_are_encoded_and_relative_to_declared_bases() {
    let mut sources = SourceSet::new();
    let d = bypass(&mut sources);
    let log = log(&[d], &sources);
    let run = &log["runs"][0];
    let result = &run["results"][0];
    let primary = &result["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(primary["uri"], "my%20project/100%25%20sure.tenx");
    assert_eq!(primary["uriBaseId"], SRCROOT_BASE);
    let stdlib = &result["relatedLocations"][1]["physicalLocation"]["artifactLocation"];
    assert_eq!(stdlib["uri"], "approval.tenx");
    assert_eq!(stdlib["uriBaseId"], STDLIB_BASE);
    let bases = run["originalUriBaseIds"].as_object().unwrap();
    assert_eq!(bases.keys().collect::<Vec<_>>(), [SRCROOT_BASE, STDLIB_BASE]);
    for base in bases.values() {
        assert!(base.get("uri").is_none(), "no machine-specific path: {base}");
        assert!(!base["description"]["text"].as_str().unwrap().is_empty());
    }
    assert!(
        bases[STDLIB_BASE]["description"]["text"]
            .as_str()
            .unwrap()
            .contains("9.9.9")
    );
    assert_eq!(run["columnKind"], "unicodeCodePoints");
}

#[test]
fn an_absolute_path_is_a_file_uri_without_a_base() {
    let mut sources = SourceSet::new();
    let file = sources.add("/tmp/by pass.tenx", "a -> b\n");
    let d = Diagnostic::new(Code::TENX0302, "unknown node `b`", file, Span::new(5, 6));
    let log = log(&[d], &sources);
    let artifact = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "file:///tmp/by%20pass.tenx");
    assert!(artifact.get("uriBaseId").is_none());
    assert!(log["runs"][0]["results"][0].get("relatedLocations").is_none());
}

#[test]
fn link_text_escapes_brackets_and_backslashes() {
    assert_eq!(escape_link_text(r"a[0]\b.tenx:1:2"), r"a\[0\]\\b.tenx:1:2");
    let mut sources = SourceSet::new();
    let file = sources.add("dir[1]/x.tenx", "ab\n");
    let d = Diagnostic::new(
        Code::TENX0103,
        "the name `a` is declared more than once",
        file,
        Span::new(1, 2),
    )
    .secondary(file, Span::new(0, 1), "first declared here");
    let log = log(&[d], &sources);
    let text = log["runs"][0]["results"][0]["message"]["text"].as_str().unwrap();
    assert!(
        text.ends_with(r"[dir\[1\]/x.tenx:1:1](1): first declared here"),
        "{text}"
    );
}

#[test]
fn every_code_is_a_rule_with_its_catalog_text() {
    let log = log(&[], &SourceSet::new());
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), Code::ALL.len());
    for (rule, code) in rules.iter().zip(Code::ALL) {
        assert_eq!(rule["id"], code.as_str());
        assert_eq!(rule["shortDescription"]["text"], code.summary());
        assert_eq!(rule["help"]["markdown"], code.page());
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        // GitHub code scanning shows at most 1024 characters of it.
        assert!(
            !full.is_empty() && full.chars().count() <= 1024 && !full.contains('\n'),
            "{}: the first paragraph of its page is the full description: {full:?}",
            code.as_str()
        );
    }
    let bypass = &rules[Code::ALL.iter().position(|c| *c == Code::TENX0604).unwrap()];
    assert!(
        bypass["fullDescription"]["text"].as_str().unwrap().starts_with(
            "A path through a graph reaches the execution of an approval-gated tool without passing its approval."
        ),
        "{bypass}"
    );
}
