//! The JSON form of diagnostics (`--format json`), for editors, agents and CI scripts.

use crate::{Diagnostic, SourceSet};
use serde::Serialize;

/// A label with its file name and 1-based line/column resolved.
#[derive(Debug, Serialize)]
pub struct JsonLabel {
    /// File display name.
    pub file: String,
    /// Byte offset of the start.
    pub start: u32,
    /// Byte offset one past the end.
    pub end: u32,
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column of the start.
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column of the end.
    pub end_column: usize,
    /// The label's message.
    pub message: String,
}

/// One diagnostic as JSON.
#[derive(Debug, Serialize)]
pub struct JsonDiagnostic {
    /// `TENX0302`.
    pub code: &'static str,
    /// `unknown-node`.
    pub name: &'static str,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// The message.
    pub message: String,
    /// The primary label.
    pub primary: JsonLabel,
    /// Secondary labels.
    pub secondary: Vec<JsonLabel>,
    /// Help, if any.
    pub help: Option<String>,
    /// Notes.
    pub notes: Vec<String>,
}

fn label(l: &crate::Label, sources: &SourceSet) -> JsonLabel {
    let (file, start, end) = match sources.get(l.file) {
        Some(f) => (
            f.name.clone(),
            f.line_col(l.span.start as usize),
            f.line_col(l.span.end as usize),
        ),
        None => (
            String::new(),
            crate::LineCol { line: 1, column: 1 },
            crate::LineCol { line: 1, column: 1 },
        ),
    };
    JsonLabel {
        file,
        start: l.span.start,
        end: l.span.end,
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        message: l.message.clone(),
    }
}

/// Converts diagnostics to their JSON form.
pub fn to_json(diagnostics: &[Diagnostic], sources: &SourceSet) -> Vec<JsonDiagnostic> {
    diagnostics
        .iter()
        .map(|d| JsonDiagnostic {
            code: d.code.as_str(),
            name: d.code.name(),
            severity: d.severity.as_str(),
            message: d.message.clone(),
            primary: label(&d.primary, sources),
            secondary: d.secondary.iter().map(|l| label(l, sources)).collect(),
            help: d.help.clone(),
            notes: d.notes.clone(),
        })
        .collect()
}

/// `{"diagnostics": [...], "errors": N, "warnings": N}`, pretty-printed.
pub fn render_json(diagnostics: &[Diagnostic], sources: &SourceSet) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let value = serde_json::json!({
        "diagnostics": to_json(diagnostics, sources),
        "errors": errors,
        "warnings": diagnostics.len() - errors,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}
