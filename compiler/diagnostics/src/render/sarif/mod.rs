//! SARIF 2.1.0 output (`--format sarif`), for code-scanning UIs such as GitHub's.
//!
//! The log has one run of `tenxc`. Every code is a rule: its summary is the short description,
//! the first paragraph of its catalog page the full description, and the whole page the help.
//! Every diagnostic is a result whose `message.text` says all that the human output says: the
//! message, the primary label, each secondary label as an embedded link
//! (`[main.tenx:23:15](1): …`, SARIF §3.11.6) to its entry in `relatedLocations`, the help and
//! every note. Each label is also the message of its location. File names are percent-encoded
//! URI references relative to the bases declared in `originalUriBaseIds` (see [`uri`]); columns
//! count Unicode code points (`columnKind`), as the other formats do.

mod uri;

pub use uri::{SRCROOT_BASE, STDLIB_BASE};

use super::diagnostic_text;
use crate::{Code, Diagnostic, Label, Severity, SourceSet};
use serde_json::{Map, Value, json};

/// A SARIF 2.1.0 log with one run of `tenxc`: every code as a rule, every diagnostic as a result.
pub fn render_sarif(diagnostics: &[Diagnostic], sources: &SourceSet, tool_version: &str) -> String {
    let rules: Vec<Value> = Code::ALL.iter().map(|c| rule(*c)).collect();
    let results: Vec<Value> = diagnostics.iter().map(|d| result(d, sources)).collect();
    let mut bases = Map::new();
    bases.insert(
        SRCROOT_BASE.into(),
        description(
            "The directory tenxc ran in: file names on its command line, and the files they import, are \
             relative to it. Run tenxc from the repository root, so that they are relative to the repository.",
        ),
    );
    bases.insert(
        STDLIB_BASE.into(),
        description(&format!(
            "The standard library modules embedded in tenxc {tool_version} (`<stdlib>/name.tenx` in the \
             other output formats). Their source is the folder `stdlib/std/` of the tenx repository."
        )),
    );
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "tenxc",
                "version": tool_version,
                "informationUri": "https://github.com/tenx-lang/tenx",
                "rules": rules,
            }},
            "originalUriBaseIds": bases,
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

/// A base id's declaration: no `uri` (it differs from machine to machine, and SARIF §3.14.14
/// lets a producer leave it out), only what the base means.
fn description(text: &str) -> Value {
    json!({ "description": { "text": text } })
}

/// The reporting descriptor of a code.
fn rule(code: Code) -> Value {
    let paragraph = first_paragraph(code.page());
    json!({
        "id": code.as_str(),
        "name": code.name(),
        "shortDescription": { "text": code.summary() },
        "fullDescription": { "text": paragraph.replace("**", ""), "markdown": paragraph },
        "help": { "text": code.page(), "markdown": code.page() },
        "defaultConfiguration": { "level": level(code.default_severity()) },
    })
}

/// The first paragraph of a catalog page (after its `# TENXnnnn: name` heading), on one line.
fn first_paragraph(page: &str) -> String {
    page.lines()
        .skip_while(|line| line.starts_with('#') || line.trim().is_empty())
        .take_while(|line| !line.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The result of one diagnostic.
fn result(d: &Diagnostic, sources: &SourceSet) -> Value {
    let rule_index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
    let text = diagnostic_text(d, sources, |place, i| {
        format!("[{}]({})", escape_link_text(place), related_id(i))
    });
    let related: Vec<Value> = d
        .secondary
        .iter()
        .enumerate()
        .map(|(i, l)| location(l, sources, Some(related_id(i))))
        .collect();
    let mut result = json!({
        "ruleId": d.code.as_str(),
        "ruleIndex": rule_index,
        "level": level(d.severity),
        "message": { "text": text },
        "locations": [location(&d.primary, sources, None)],
    });
    if !related.is_empty()
        && let Some(object) = result.as_object_mut()
    {
        object.insert("relatedLocations".into(), Value::Array(related));
    }
    result
}

/// The id of the `i`-th (0-based) secondary label's related location, which links point to.
fn related_id(i: usize) -> usize {
    i + 1
}

/// Escapes the link text of an embedded link: `\`, `[` and `]` take a backslash (SARIF §3.11.6).
fn escape_link_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A location object: the file, the region (lines and columns, and the exact bytes), the label's
/// message, and an id for a related location.
fn location(label: &Label, sources: &SourceSet, id: Option<usize>) -> Value {
    let mut object = Map::new();
    if let Some(id) = id {
        object.insert("id".into(), json!(id));
    }
    if let Some(file) = sources.get(label.file) {
        let start = file.line_col(label.span.start as usize);
        let end = file.line_col(label.span.end as usize);
        let artifact = uri::artifact_uri(&file.name);
        let mut artifact_location = Map::new();
        artifact_location.insert("uri".into(), json!(artifact.uri));
        if let Some(base) = artifact.base {
            artifact_location.insert("uriBaseId".into(), json!(base));
        }
        object.insert(
            "physicalLocation".into(),
            json!({
                "artifactLocation": artifact_location,
                "region": {
                    "startLine": start.line,
                    "startColumn": start.column,
                    "endLine": end.line,
                    "endColumn": end.column,
                    "byteOffset": label.span.start,
                    "byteLength": label.span.len(),
                },
            }),
        );
    }
    if !label.message.is_empty() {
        object.insert("message".into(), json!({ "text": label.message }));
    }
    Value::Object(object)
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests;
