//! `tenxc fmt`: source text → the same program in the one canonical layout. Pure: the CLI reads
//! and writes the files.
//!
//! The layout is the one of the examples and `docs/language.md`: two-space indentation, one
//! entry per line in blocks, `=` aligned down runs of entries and `->` down runs of edges and
//! route arms, lists and argument lists on one line when they fit in the line width (default
//! [`DEFAULT_LINE_WIDTH`], `[fmt] line_width` in `tenx.toml`) and one element per line when they
//! do not. Comments stay where they were, on their own line or at the end of one; runs of empty
//! lines become one empty line. Strings, text blocks, numbers and names are written exactly as
//! in the source.
//!
//! Formatting never changes what a program means: the formatted text is parsed again and must
//! hold the same tokens and the same comments, or the file is left as it was
//! ([`Refused::NotTheSameProgram`]). A file with a syntax error is never formatted.
//!
//! Files: [`cst`] (the parse tree), [`trivia`] (comments, empty lines), [`printer`] (state and
//! comment placement), [`sequence`] (bracketed lists), [`values`], [`blocks`], [`graph`],
//! [`items`], [`render`] (document → text), [`verify`] (the same-program check).

mod blocks;
mod cst;
mod graph;
mod items;
mod printer;
mod render;
mod sequence;
mod trivia;
mod values;
mod verify;

use printer::{Piece, Printer};
use tenx_diagnostics::{Diagnostic, FileId};

/// The line width when `tenx.toml` does not set one.
pub const DEFAULT_LINE_WIDTH: usize = 100;

/// The formatter's one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FmtOptions {
    /// Lines are kept within this many columns where the layout allows.
    pub line_width: usize,
}

impl Default for FmtOptions {
    fn default() -> Self {
        FmtOptions {
            line_width: DEFAULT_LINE_WIDTH,
        }
    }
}

/// Why a file was not formatted.
#[derive(Debug, Clone)]
pub enum Refused {
    /// The file has syntax errors (the `TENX00xx` codes); they are these diagnostics.
    SyntaxErrors(Vec<Diagnostic>),
    /// The formatted text would not have been the same program, first differing at this byte
    /// offset of the file: a formatter bug, never a problem of the file.
    NotTheSameProgram(usize),
}

/// Formats the file `text` (named by `file` in diagnostics).
///
/// # Errors
///
/// [`Refused::SyntaxErrors`] for a file with a syntax error, and
/// [`Refused::NotTheSameProgram`] when the formatted text would not be the same program (a
/// formatter bug: the file is then left as it was).
pub fn format_source(file: FileId, text: &str, options: &FmtOptions) -> Result<String, Refused> {
    let errors: Vec<Diagnostic> = crate::syntax::parse(file, text)
        .diagnostics
        .into_iter()
        .filter(|d| d.is_error() && d.code.as_str().starts_with("TENX00"))
        .collect();
    if !errors.is_empty() {
        return Err(Refused::SyntaxErrors(errors));
    }
    // The compiler's parse found no error, so the formatter's own parse cannot either; if it
    // ever did, that is a formatter bug.
    let items = cst::parse(text).map_err(Refused::NotTheSameProgram)?;
    let formatted = print(text, &items, options.line_width);
    verify::same_program(text, &items, &formatted).map_err(Refused::NotTheSameProgram)?;
    Ok(formatted)
}

/// Prints the parsed `items` of `text`. Items start in column 0, so each is laid out on its own.
fn print(text: &str, items: &[cst::Node], width: usize) -> String {
    let tokens = trivia::tokens(items);
    let comments = trivia::comments(text, &tokens);
    let arena = pretty::Arena::new();
    let mut printer = Printer::new(text, &arena, comments, width.max(1));
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut prev_end = 0;
    let mut laid = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let leading = printer.leading(prev_end, item.start);
        let body = render::render(printer.item(item), width);
        let limit = items.get(i + 1).map_or(text.len(), |next| next.start);
        let trailing = printer.trailing(item.end, limit);
        prev_end = Printer::end_after(item.end, &trailing);
        let one_line = (!trailing.is_empty() && !body.contains('\n')).then(|| body.chars().count());
        laid.push((leading, body, one_line, trailing));
    }
    let spans: Vec<(bool, Option<usize>)> = laid
        .iter()
        .map(|(leading, _, width, _)| (leading.is_empty(), *width))
        .collect();
    let gaps = blocks::comment_gaps(&spans);
    for (i, ((leading, body, _, trailing), gap)) in laid.into_iter().zip(gaps).enumerate() {
        out.push_str(&render::render(printer.pieces(&leading, i == 0), width));
        out.push_str(&body);
        out.push_str(&render::render(printer.trailing_doc(&trailing, gap), width));
        out.push('\n');
    }
    let rest = printer.leading(prev_end, text.len());
    let last = rest.iter().rposition(|p| matches!(p, Piece::Comment(_)));
    if let Some(last) = last {
        let kept = rest.get(..=last).unwrap_or_default();
        let skip_blank = items.is_empty();
        let doc = printer.pieces(kept, skip_blank);
        let rendered = render::render(doc, width);
        out.push_str(rendered.trim_end_matches([' ', '\n']));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
