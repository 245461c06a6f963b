//! GitHub Actions workflow commands (`--format github`): one `::error` or `::warning` line per
//! diagnostic, which the runner turns into an annotation on the primary label's place.
//!
//! ```text
//! ::error file=main.tenx,line=40,col=5,endLine=40,endColumn=45,title=TENX0604 approval-bypass::graph …%0Amain.tenx:40:5: this path skips the approval%0A…%0Anote: path: …
//! ```
//!
//! The annotation text is the whole diagnostic (message, labels with their places, help, every
//! note; see `diagnostic_text`), one line per part. Escaping follows the runner
//! (`actions/runner`, `ActionCommand.cs`, which undoes exactly these): in the text, `%`, CR and LF
//! become `%25`, `%0D` and `%0A`; property values (`file`, `title`) also escape `:` as `%3A` and
//! `,` as `%2C`, which would otherwise end the value.

use super::diagnostic_text;
use crate::{Diagnostic, Severity, SourceSet};

/// Escapes a property value of a workflow command.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Escapes the text (data) of a workflow command. `%` goes first, so the escapes it writes are
/// not escaped again.
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
        let text = diagnostic_text(d, sources, |place, _| place.to_string());
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
                    escape_data(&text)
                ));
            }
            None => out.push_str(&format!(
                "::{command} title={}::{}\n",
                escape_property(&title),
                escape_data(&text)
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Code, Span};

    /// Undoes the escaping the way the runner does (`StringEscapingUtil.UnescapeString`: each
    /// mapping in turn, `%25` last).
    fn unescape(s: &str, property: bool) -> String {
        let mut s = s.replace("%0D", "\r").replace("%0A", "\n");
        if property {
            s = s.replace("%3A", ":").replace("%2C", ",");
        }
        s.replace("%25", "%")
    }

    /// Splits a command line the way the runner does: the command and its properties up to the
    /// first `::` after the leading one, properties on `,` and `=`, the data after.
    fn parse(line: &str) -> (String, Vec<(String, String)>, String) {
        let rest = line.strip_prefix("::").unwrap();
        let (info, data) = rest.split_once("::").unwrap();
        let (command, properties) = info.split_once(' ').unwrap_or((info, ""));
        let properties = properties
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap();
                (k.to_string(), unescape(v, true))
            })
            .collect();
        (command.to_string(), properties, unescape(data, false))
    }

    #[test]
    fn the_text_keeps_labels_help_and_notes_and_round_trips() {
        let mut sources = SourceSet::new();
        let main = sources.add("dir, with: 100%/main.tenx", "approves = [x]\nwhen a < 1 -> x\n");
        let d = Diagnostic::new(
            Code::TENX0604,
            "graph `g` reaches `x` without passing its approval",
            main,
            Span::new(20, 30),
        )
        .label("this path skips the approval")
        .secondary(main, Span::new(12, 13), "the approval is declared here")
        .help("route every path through the approval: 100% of them")
        .note("path: entry `a` → `x` runs\r\nsecond line");
        let out = render_github(&[d], &sources);
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.ends_with('\n'));
        let (command, properties, text) = parse(out.trim_end_matches('\n'));
        assert_eq!(command, "error");
        let property = |k: &str| properties.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(property("file"), Some("dir, with: 100%/main.tenx"));
        assert_eq!(property("line"), Some("2"));
        assert_eq!(property("col"), Some("6"));
        assert_eq!(property("endColumn"), Some("16"));
        assert_eq!(property("title"), Some("TENX0604 approval-bypass"));
        assert_eq!(
            text,
            "graph `g` reaches `x` without passing its approval\n\
             dir, with: 100%/main.tenx:2:6: this path skips the approval\n\
             dir, with: 100%/main.tenx:1:13: the approval is declared here\n\
             help: route every path through the approval: 100% of them\n\
             note: path: entry `a` → `x` runs\r\nsecond line"
        );
    }

    #[test]
    fn escaping_is_exact() {
        assert_eq!(escape_data("50%\r\n:,"), "50%25%0D%0A:,");
        assert_eq!(escape_property("50%\r\n:,"), "50%25%0D%0A%3A%2C");
        // An escape sequence already in the text survives the round trip.
        assert_eq!(unescape(&escape_data("%0A and %25"), false), "%0A and %25");
        assert_eq!(unescape(&escape_property("%3A, %2C"), true), "%3A, %2C");
    }
}
