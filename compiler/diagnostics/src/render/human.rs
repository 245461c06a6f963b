//! Human-readable rendering with codespan-reporting: `error[TENX0302]: …`, labels, help, notes.

use crate::{Diagnostic, Severity, SourceSet};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term;

/// How to render for people.
#[derive(Debug, Clone, Copy)]
pub struct HumanOptions {
    /// ANSI colours (only on a terminal; never in tests).
    pub color: bool,
}

fn to_codespan(d: &Diagnostic) -> cs::Diagnostic<crate::FileId> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut labels = vec![cs::Label::primary(d.primary.file, d.primary.span.range()).with_message(&d.primary.message)];
    labels.extend(
        d.secondary
            .iter()
            .map(|l| cs::Label::secondary(l.file, l.span.range()).with_message(&l.message)),
    );
    let mut notes: Vec<String> = Vec::new();
    if let Some(help) = &d.help {
        notes.push(format!("help: {help}"));
    }
    notes.extend(d.notes.iter().map(|n| format!("note: {n}")));
    cs::Diagnostic::new(severity)
        .with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

/// Renders diagnostics one after another, each followed by a blank line. The text is stable:
/// no colour unless asked, fixed layout, file names as given to the [`SourceSet`].
pub fn render_human(diagnostics: &[Diagnostic], sources: &SourceSet, options: HumanOptions) -> String {
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let diagnostic = to_codespan(d);
        let rendered = if options.color {
            let mut buffer = term::termcolor::Buffer::ansi();
            let styles = term::Styles::default();
            let mut writer = term::StylesWriter::new(&mut buffer, &styles);
            term::emit_to_write_style(&mut writer, &config, sources, &diagnostic)
                .map(|()| String::from_utf8_lossy(buffer.as_slice()).into_owned())
        } else {
            term::emit_into_string(&config, sources, &diagnostic)
        };
        match rendered {
            Ok(text) => out.push_str(&text),
            // A label outside its file: still say what the problem is.
            Err(_) => out.push_str(&format!("{}[{}]: {}\n\n", d.severity.as_str(), d.code, d.message)),
        }
    }
    out
}
