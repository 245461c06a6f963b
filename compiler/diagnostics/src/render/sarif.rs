//! SARIF 2.1.0 output, so code-scanning UIs show each finding on its line.

use crate::{Code, Diagnostic, Severity, SourceSet};
use serde_json::{Value, json};

fn location(label: &crate::Label, sources: &SourceSet) -> Value {
    let Some(file) = sources.get(label.file) else {
        return json!({});
    };
    let start = file.line_col(label.span.start as usize);
    let end = file.line_col(label.span.end as usize);
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": file.name },
            "region": {
                "startLine": start.line,
                "startColumn": start.column,
                "endLine": end.line,
                "endColumn": end.column,
                "byteOffset": label.span.start,
                "byteLength": label.span.len(),
            }
        },
        "message": { "text": label.message },
    })
}

/// A SARIF 2.1.0 log with one run of `tenxc`: every code as a rule, every diagnostic as a result.
pub fn render_sarif(diagnostics: &[Diagnostic], sources: &SourceSet, tool_version: &str) -> String {
    let rules: Vec<Value> = Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "name": c.name(),
                "shortDescription": { "text": c.summary() },
                "fullDescription": { "text": c.page() },
                "help": { "text": format!("tenxc explain {}", c.as_str()), "markdown": c.page() },
                "defaultConfiguration": { "level": level(c.default_severity()) },
            })
        })
        .collect();
    let results: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let rule_index = Code::ALL.iter().position(|c| *c == d.code).unwrap_or(0);
            let mut text = d.message.clone();
            if let Some(help) = &d.help {
                text.push_str(&format!("\nhelp: {help}"));
            }
            json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": rule_index,
                "level": level(d.severity),
                "message": { "text": text },
                "locations": [location(&d.primary, sources)],
                "relatedLocations": d.secondary.iter().enumerate().map(|(i, l)| {
                    let mut loc = location(l, sources);
                    if let Some(obj) = loc.as_object_mut() {
                        obj.insert("id".into(), json!(i));
                    }
                    loc
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
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
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).unwrap_or_default()
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
