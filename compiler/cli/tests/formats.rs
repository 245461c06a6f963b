//! End-to-end tests of the machine-readable formats and of bounded snippets: real `tenxc check`
//! output from files with awkward names (spaces, `%`, brackets, non-ASCII) and standard library
//! labels. The SARIF log is validated against the SARIF 2.1.0 JSON Schema (`tests/data/`); GitHub
//! annotations are parsed back the way the Actions runner parses them; a 58 KB line stays small.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed step should stop the test"
)]

use serde_json::Value;
use std::path::Path;
use std::process::Output;

mod common;

use common::{repo, temp_dir, tenxc_in};

/// The official SARIF 2.1.0 schema (OASIS, Errata 01); see `tests/data/README.md`.
const SARIF_SCHEMA: &str = include_str!("data/sarif-schema-2.1.0.json");

/// The project of the format tests: four programs under `my project/`, copied from fixtures,
/// with names a URI or a workflow command must escape. Returns their names, relative to `dir`.
fn awkward_project(dir: &Path) -> Vec<&'static str> {
    let files = [
        // Two TENX0604 errors, each with a secondary label, help and the bypass path as a note.
        ("policy/approval_bypass_refund.tenx", "my project/100% sure.tenx"),
        // A secondary label in `<stdlib>/approval.tenx`.
        ("resolve/duplicate_stdlib_declaration.tenx", "my project/std [dup].tenx"),
        // A warning.
        ("unused/unused_model.tenx", "my project/règles, v2.tenx"),
        // Secondary labels in `<stdlib>/validators.tenx`.
        ("validators/argument_out_of_range.tenx", "my project/a:b#c.tenx"),
    ];
    std::fs::create_dir_all(dir.join("my project")).unwrap();
    for (fixture, name) in files {
        std::fs::copy(repo().join("tests/fixtures").join(fixture), dir.join(name)).unwrap();
    }
    files.iter().map(|(_, name)| *name).collect()
}

/// `tenxc check --format FORMAT` on the awkward project.
fn check_awkward(name: &str, format: &str) -> Output {
    let dir = temp_dir(name);
    let mut args = vec!["check"];
    args.extend(awkward_project(&dir));
    args.extend(["--format", format]);
    let output = tenxc_in(&dir, &args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The schema's complaints about `log`, read twice: as it declares itself (draft-04), and with
/// draft-07 rules and formats checked, since draft-04 has no `uri-reference` format (the schema
/// uses no keyword whose meaning differs between the two).
fn schema_errors(log: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SARIF_SCHEMA).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-04/schema#");
    let declared = jsonschema::validator_for(&schema).unwrap();
    let with_formats = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let mut errors = Vec::new();
    for (name, validator) in [("draft-04", &declared), ("draft-07 with formats", &with_formats)] {
        errors.extend(
            validator
                .iter_errors(log)
                .map(|e| format!("{name}: {e} at {}", e.instance_path())),
        );
    }
    errors
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().unwrap()
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let output = check_awkward("sarif-schema", "sarif");
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let errors = schema_errors(&log);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // It is a real log: every shape of diagnostic the test wants is in it.
    let results = results(&log);
    let codes: Vec<&str> = results.iter().map(|r| r["ruleId"].as_str().unwrap()).collect();
    for code in ["TENX0604", "TENX0103", "TENX0702", "TENX0902"] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    assert!(results.iter().any(|r| r["level"] == "warning"));
}

/// A way to break a SARIF log, and what it breaks.
type Breakage = (&'static str, fn(&mut Value));

#[test]
fn the_schema_check_rejects_broken_sarif() {
    let output = check_awkward("sarif-broken", "sarif");
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(schema_errors(&log).is_empty());
    let breakages: [Breakage; 5] = [
        // The bug this test guards against: a file name used as a URI as it is.
        ("an unencoded uri", |log| {
            log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
                "my project/100% sure.tenx".into();
        }),
        ("a `<stdlib>` uri", |log| {
            log["runs"][0]["results"][0]["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
                "<stdlib>/approval.tenx".into();
        }),
        ("a result without a message", |log| {
            log["runs"][0]["results"][0].as_object_mut().unwrap().remove("message");
        }),
        ("an unknown level", |log| {
            log["runs"][0]["results"][0]["level"] = "fatal".into()
        }),
        ("line 0", |log| {
            log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
        }),
    ];
    for (what, breakage) in breakages {
        let mut broken = log.clone();
        breakage(&mut broken);
        let errors = schema_errors(&broken);
        assert!(!errors.is_empty(), "{what} passed the schema");
        if what.contains("uri") {
            assert!(
                errors.iter().all(|e| e.contains("is not a \"uri-reference\"")),
                "{errors:?}"
            );
        }
    }
}

#[test]
fn sarif_results_keep_help_notes_and_related_locations() {
    let output = check_awkward("sarif-content", "sarif");
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    let run = &log["runs"][0];
    let bases = run["originalUriBaseIds"].as_object().unwrap();
    let results = results(&log);

    let bypass: Vec<&Value> = results.iter().filter(|r| r["ruleId"] == "TENX0604").collect();
    assert_eq!(bypass.len(), 2);
    for result in &bypass {
        let text = result["message"]["text"].as_str().unwrap();
        assert!(text.contains("\nhelp: "), "{text}");
        assert!(text.contains("\nnote: path"), "the bypass path is kept: {text}");
        assert!(
            text.contains("[my project/100% sure.tenx:23:15](1): the approval is declared here"),
            "{text}"
        );
        let related = &result["relatedLocations"][0];
        assert_eq!(related["id"], 1);
        assert_eq!(related["message"]["text"], "the approval is declared here");
        let artifact = &related["physicalLocation"]["artifactLocation"];
        assert_eq!(artifact["uri"], "my%20project/100%25%20sure.tenx");
        assert_eq!(artifact["uriBaseId"], "%SRCROOT%");
    }

    let duplicate = results.iter().find(|r| r["ruleId"] == "TENX0103").unwrap();
    let primary = &duplicate["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(primary["uri"], "my%20project/std%20%5Bdup%5D.tenx");
    let stdlib = &duplicate["relatedLocations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(stdlib["uri"], "approval.tenx");
    assert_eq!(stdlib["uriBaseId"], "TENXSTDLIB");
    let text = duplicate["message"]["text"].as_str().unwrap();
    assert!(
        text.contains("[<stdlib>/approval.tenx:12:8](1): first declared here"),
        "{text}"
    );
    assert!(
        text.contains("my project/std [dup].tenx:6:8: schema `yes_no` declared again here"),
        "{text}"
    );

    let warning = results.iter().find(|r| r["ruleId"] == "TENX0902").unwrap();
    let artifact = &warning["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "my%20project/r%C3%A8gles,%20v2.tenx");
    let out_of_range = results.iter().find(|r| r["ruleId"] == "TENX0702").unwrap();
    let artifact = &out_of_range["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(artifact["uri"], "my%20project/a%3Ab%23c.tenx");

    // Every base a location uses is declared.
    for result in results {
        let locations = result["locations"].as_array().unwrap().iter();
        let related = result["relatedLocations"].as_array().into_iter().flatten();
        for location in locations.chain(related) {
            let base = location["physicalLocation"]["artifactLocation"]["uriBaseId"]
                .as_str()
                .unwrap();
            assert!(bases.contains_key(base), "{base} is not declared");
        }
    }
}

/// Undoes workflow-command escaping the way the runner does (`ActionCommand.cs`): `%0D`, `%0A`,
/// for properties `%3A` and `%2C`, then `%25`.
fn unescape(s: &str, property: bool) -> String {
    let mut s = s.replace("%0D", "\r").replace("%0A", "\n");
    if property {
        s = s.replace("%3A", ":").replace("%2C", ",");
    }
    s.replace("%25", "%")
}

/// A workflow command parsed as the runner parses it: its name, properties and text.
struct Annotation {
    command: String,
    properties: Vec<(String, String)>,
    text: String,
}

impl Annotation {
    fn parse(line: &str) -> Annotation {
        let rest = line.strip_prefix("::").unwrap();
        let (info, data) = rest.split_once("::").unwrap();
        let (command, properties) = info.split_once(' ').unwrap_or((info, ""));
        let properties = properties
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (key, value) = p.split_once('=').unwrap();
                (key.to_string(), unescape(value, true))
            })
            .collect();
        Annotation {
            command: command.to_string(),
            properties,
            text: unescape(data, false),
        }
    }

    fn property(&self, key: &str) -> &str {
        self.properties
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

#[test]
fn github_annotations_keep_help_notes_and_labels() {
    let output = check_awkward("github", "github");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let annotations: Vec<Annotation> = stdout.lines().map(Annotation::parse).collect();
    assert!(annotations.len() >= 6, "{stdout}");
    for annotation in &annotations {
        let allowed = ["file", "line", "col", "endLine", "endColumn", "title"];
        for (key, _) in &annotation.properties {
            assert!(
                allowed.contains(&key.as_str()),
                "property `{key}` leaked out of a value: {stdout}"
            );
        }
    }
    let bypass: Vec<&Annotation> = annotations
        .iter()
        .filter(|a| a.property("title") == "TENX0604 approval-bypass")
        .collect();
    assert_eq!(bypass.len(), 2, "{stdout}");
    let route = bypass.iter().find(|a| a.property("line") == "41").unwrap();
    assert_eq!(route.command, "error");
    assert_eq!(route.property("file"), "my project/100% sure.tenx");
    assert_eq!(route.property("col"), "5");
    assert_eq!(
        route.text,
        "graph `refunds` reaches `issue_refund` without passing its approval\n\
         my project/100% sure.tenx:41:5: this path skips the approval\n\
         my project/100% sure.tenx:23:15: the approval is declared here\n\
         help: make every path to `issue_refund` pass through `approve_refund` first\n\
         note: path: entry `billing` → `issue_refund` runs"
    );
    let warning = annotations.iter().find(|a| a.command == "warning").unwrap();
    assert_eq!(warning.property("file"), "my project/règles, v2.tenx");
    let stdlib = annotations
        .iter()
        .find(|a| a.property("file") == "my project/std [dup].tenx")
        .unwrap();
    assert!(
        stdlib
            .text
            .contains("\n<stdlib>/approval.tenx:12:8: first declared here as a schema\n"),
        "{}",
        stdlib.text
    );
    assert!(
        annotations
            .iter()
            .any(|a| a.property("file") == "my project/a:b#c.tenx")
    );
}

/// A program whose every declaration is on one line of about 58 KB, with some 5,000 edges to
/// nodes the graph does not have: one diagnostic each.
fn long_line_program() -> String {
    let mut text = String::from(
        "model m { provider = scripted turns = [{ text: \"hi\" }] } agent a { model = m prompt = \"Say hi.\" } \
         graph g { entry = a nodes = [a]",
    );
    let mut i = 0;
    while text.len() < 58_000 {
        text.push_str(&format!(" a -> b{i}"));
        i += 1;
    }
    text.push_str(" }\n");
    text
}

#[test]
fn diagnostics_on_a_58_kb_line_print_a_window_of_it() {
    let dir = temp_dir("long-line");
    let program = long_line_program();
    std::fs::write(dir.join("long.tenx"), &program).unwrap();

    let output = tenxc_in(&dir, &["check", "long.tenx", "--max-diagnostics", "0"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let count = stderr.matches("error[TENX0302]").count();
    assert!(count > 4_000, "{count} diagnostics");
    // Each diagnostic prints a window of the line, not the line: well under 1 KB apiece, where
    // printing the line would take 58 KB apiece (270 MB in all).
    assert!(
        stderr.len() < count * 1024,
        "{} bytes for {count} diagnostics",
        stderr.len()
    );
    let widest = stderr.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 200, "a line of {widest} characters");
    assert!(stderr.contains("┌─ long.tenx:1:"), "{}", &stderr[..2000]);

    // JSON keeps the exact spans into the whole line.
    let json = tenxc_in(&dir, &["check", "long.tenx", "--format", "json"]);
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    let last = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|d| d["code"] == "TENX0302")
        .unwrap();
    let start = last["primary"]["start"].as_u64().unwrap() as usize;
    let end = last["primary"]["end"].as_u64().unwrap() as usize;
    assert_eq!(&program[start..end], format!("b{}", count - 1));
    assert_eq!(last["primary"]["column"].as_u64().unwrap() as usize, start + 1);
}
