//! The edits diagnostics propose: a "did you mean `x`?" help replaces the primary span with
//! `x`; "add `import std.m.name`" adds that import at the top of the file.

use tenx_diagnostics::{Diagnostic, Span};

/// One proposed edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// What the editor shows.
    pub title: String,
    /// The bytes replaced, in the diagnostic's primary file.
    pub span: Span,
    /// What replaces them.
    pub text: String,
}

/// The first backticked word after `marker` in `help`.
fn quoted_after<'a>(help: &'a str, marker: &str) -> Option<&'a str> {
    let rest = help.get(help.find(marker)? + marker.len()..)?;
    let end = rest.find('`')?;
    rest.get(..end).filter(|s| !s.is_empty())
}

/// The fix `diagnostic`'s help proposes, when it proposes one.
pub fn fix(diagnostic: &Diagnostic) -> Option<Fix> {
    let help = diagnostic.help.as_deref()?;
    if let Some(word) = quoted_after(help, "did you mean `") {
        return Some(Fix {
            title: format!("Replace with `{word}`"),
            span: diagnostic.primary.span,
            text: word.to_string(),
        });
    }
    let import = quoted_after(help, "add `import ")?;
    Some(Fix {
        title: format!("Add `import {import}`"),
        span: Span::at(0),
        text: format!("import {import}\n"),
    })
}
