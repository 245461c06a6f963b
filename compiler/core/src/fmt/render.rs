//! Turns a document into text, with no spaces at the ends of lines.
//!
//! An empty line inside an indented block is written by the layout as a line break and the
//! indentation; the writer holds runs of spaces back and drops them when a line break follows.
//! Text blocks are written in one piece with the rest of their text, so the spaces inside them
//! are never touched.

use super::printer::Doc;
use pretty::{Render, RenderAnnotated};

/// Lays `doc` out at `width` columns.
pub(crate) fn render(doc: Doc<'_>, width: usize) -> String {
    let mut out = Writer::default();
    // Writing into a `String` cannot fail.
    let _ = doc.into_doc().render_raw(width, &mut out);
    // Spaces at the very end are kept: the caller writes more after them on the same line.
    out.text.extend(std::iter::repeat_n(' ', out.spaces));
    out.text
}

/// A `String` writer that drops spaces before a line break.
#[derive(Default)]
struct Writer {
    text: String,
    /// Spaces written but held back.
    spaces: usize,
}

impl Render for Writer {
    type Error = std::fmt::Error;

    fn write_str(&mut self, s: &str) -> Result<usize, Self::Error> {
        if !s.is_empty() && s.bytes().all(|b| b == b' ') {
            self.spaces += s.len();
            return Ok(s.len());
        }
        if !s.starts_with('\n') {
            self.text.extend(std::iter::repeat_n(' ', self.spaces));
        }
        self.spaces = 0;
        self.text.push_str(s);
        Ok(s.len())
    }

    fn fail_doc(&self) -> Self::Error {
        std::fmt::Error
    }
}

impl RenderAnnotated<'_, ()> for Writer {
    fn push_annotation(&mut self, _: &()) -> Result<(), Self::Error> {
        Ok(())
    }

    fn pop_annotation(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
