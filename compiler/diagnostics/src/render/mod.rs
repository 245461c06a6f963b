//! Renderers: human text (codespan-reporting), JSON, SARIF 2.1.0 and GitHub workflow commands.
//!
//! The machine formats that carry one text per diagnostic (SARIF, GitHub) say everything the
//! human output says: the message, where each label is and what it says, the help and every note.

mod github;
mod human;
mod json;
mod sarif;
mod snippet;

pub use github::render_github;
pub use human::{HumanOptions, render_human};
pub use json::{JsonDiagnostic, render_json, to_json};
pub use sarif::{SRCROOT_BASE, STDLIB_BASE, render_sarif};
pub use snippet::{CONTEXT, FULL_LINE, LABEL_KEEP, WINDOW};

use crate::{Diagnostic, Label, SourceSet};

/// The text of a diagnostic for the formats that show one text per diagnostic (SARIF, GitHub):
/// the message; a line for the primary label when it says something and one for each secondary
/// label, each with its place; the help; every note.
///
/// ```text
/// graph `refunds` reaches `issue_refund` without passing its approval
/// main.tenx:40:5: this path skips the approval
/// main.tenx:23:15: the approval is declared here
/// help: make every path to `issue_refund` pass through `approve_refund` first
/// note: path: entry `billing` → `issue_refund` runs
/// ```
///
/// `secondary(place, i)` writes the place of the `i`-th secondary label (SARIF makes it a link to
/// the related location).
fn diagnostic_text(d: &Diagnostic, sources: &SourceSet, secondary: impl Fn(&str, usize) -> String) -> String {
    let mut lines = vec![d.message.clone()];
    if !d.primary.message.is_empty() {
        lines.push(match place(&d.primary, sources) {
            Some(at) => format!("{at}: {}", d.primary.message),
            None => d.primary.message.clone(),
        });
    }
    for (i, label) in d.secondary.iter().enumerate() {
        let at = place(label, sources).map(|at| secondary(&at, i));
        lines.push(match (at, label.message.is_empty()) {
            (Some(at), true) => at,
            (Some(at), false) => format!("{at}: {}", label.message),
            (None, _) => label.message.clone(),
        });
    }
    if let Some(help) = &d.help {
        lines.push(format!("help: {help}"));
    }
    lines.extend(d.notes.iter().map(|note| format!("note: {note}")));
    lines.retain(|line| !line.is_empty());
    lines.join("\n")
}

/// Where a label points, as people write it: `main.tenx:23:15` (1-based line and column, the
/// column in characters). `None` when its file is not in the set.
fn place(label: &Label, sources: &SourceSet) -> Option<String> {
    let file = sources.get(label.file)?;
    let at = file.line_col(label.span.start as usize);
    Some(format!("{}:{}:{}", file.name, at.line, at.column))
}
