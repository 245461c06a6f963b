//! GitHub Actions workflow commands (`::error file=…,line=…::message`), one line per diagnostic.

use crate::{Diagnostic, Severity, SourceSet};

/// Escapes a property value of a workflow command.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Escapes the message of a workflow command.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// One `::error` or `::warning` command per diagnostic.
pub fn render_github(diagnostics: &[Diagnostic], sources: &SourceSet) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let title = format!("{} {}", d.code, d.code.name());
        match sources.get(d.primary.file) {
            Some(file) => {
                let start = file.line_col(d.primary.span.start as usize);
                let end = file.line_col(d.primary.span.end as usize);
                out.push_str(&format!(
                    "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
                    escape_property(&file.name),
                    start.line,
                    start.column,
                    end.line,
                    end.column,
                    escape_property(&title),
                    escape_data(&message)
                ));
            }
            None => out.push_str(&format!(
                "::{command} title={}::{}\n",
                escape_property(&title),
                escape_data(&message)
            )),
        }
    }
    out
}
