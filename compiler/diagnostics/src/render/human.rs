//! Human-readable rendering with codespan-reporting: `error[TENX0302]: …`, labels, help, notes.
//! Source lines are shown through a per-diagnostic [`View`], which cuts long ones (see
//! [`super::snippet`]).

use super::snippet::View;
use crate::{Diagnostic, Severity, SourceSet, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term;

/// How to render for people.
#[derive(Debug, Clone, Copy)]
pub struct HumanOptions {
    /// ANSI colours (only on a terminal; never in tests).
    pub color: bool,
}

/// The codespan form of `d`, its labels on `spans` (primary first, as [`View::new`] gives them).
fn to_codespan(d: &Diagnostic, spans: &[Span]) -> cs::Diagnostic<crate::FileId> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let span = |i: usize, label: &crate::Label| spans.get(i).copied().unwrap_or(label.span).range();
    let mut labels = vec![cs::Label::primary(d.primary.file, span(0, &d.primary)).with_message(&d.primary.message)];
    labels.extend(
        d.secondary
            .iter()
            .enumerate()
            .map(|(i, l)| cs::Label::secondary(l.file, span(i + 1, l)).with_message(&l.message)),
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
        let rendered = match View::new(d, sources, &config) {
            Some((view, spans)) => {
                let diagnostic = to_codespan(d, &spans);
                if options.color {
                    let mut buffer = term::termcolor::Buffer::ansi();
                    let styles = term::Styles::default();
                    let mut writer = term::StylesWriter::new(&mut buffer, &styles);
                    term::emit_to_write_style(&mut writer, &config, &view, &diagnostic)
                        .map(|()| String::from_utf8_lossy(buffer.as_slice()).into_owned())
                } else {
                    term::emit_into_string(&config, &view, &diagnostic)
                }
            }
            None => Err(codespan_reporting::files::Error::FileMissing),
        };
        match rendered {
            Ok(text) => out.push_str(&text),
            // A label outside the files: still say what the problem is.
            Err(_) => out.push_str(&format!("{}[{}]: {}\n\n", d.severity.as_str(), d.code, d.message)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Code;

    /// Renders straight from the [`SourceSet`], as codespan would without the [`View`].
    fn render_whole(d: &Diagnostic, sources: &SourceSet) -> String {
        let spans: Vec<Span> = std::iter::once(&d.primary)
            .chain(&d.secondary)
            .map(|l| l.span)
            .collect();
        term::emit_into_string(&term::Config::default(), sources, &to_codespan(d, &spans)).unwrap()
    }

    #[test]
    fn the_view_changes_nothing_on_short_lines() {
        let mut sources = SourceSet::new();
        let main: String = (1..=40).map(|i| format!("line {i} with ünïcödé 🦀 text\n")).collect();
        let main_id = sources.add("main.tenx", main.clone());
        let other = sources.add("<stdlib>/other.tenx", "first\nsecond\nthird");
        let at = |line: usize, column: usize| main.lines().take(line - 1).map(|l| l.len() + 1).sum::<usize>() + column;
        let diagnostics = [
            // One line, a secondary label three lines up (a gap of one line is printed, not `·`).
            Diagnostic::new(Code::TENX0302, "single", main_id, Span::new(at(5, 0), at(5, 4)))
                .label("here")
                .secondary(main_id, Span::new(at(3, 5), at(3, 6)), "and here"),
            // Over twelve lines (codespan shows three after the start and one before the end).
            Diagnostic::new(Code::TENX0304, "multi", main_id, Span::new(at(10, 2), at(22, 7)))
                .label("all this")
                .secondary(other, Span::new(6, 12), "in another file")
                .help("help")
                .note("a note"),
            // Empty spans, at a line end and at the end of a file without a final newline.
            Diagnostic::new(Code::TENX0002, "empty", main_id, Span::at(at(2, 0) - 1)).secondary(
                other,
                Span::at(18),
                "end of file",
            ),
            // Non-ASCII before the label: the column counts characters.
            Diagnostic::new(Code::TENX0001, "columns", main_id, Span::new(at(30, 25), at(30, 29))),
        ];
        for d in &diagnostics {
            let out = render_human(std::slice::from_ref(d), &sources, HumanOptions { color: false });
            assert_eq!(out, render_whole(d, &sources));
        }
        let columns = render_human(&diagnostics[3..], &sources, HumanOptions { color: false });
        assert!(columns.contains("main.tenx:30:22"), "{columns}");
    }
}
