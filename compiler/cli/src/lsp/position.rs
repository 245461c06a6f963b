//! Where a byte offset of a file is for the editor: LSP positions count lines from 0 and columns
//! in the encoding agreed at start-up (UTF-8 bytes when the client offers it, else UTF-16 code
//! units, the protocol's default). Conversions on `line-index` (rust-analyzer's), so a column
//! past a line's end or inside a character is refused or clamped, never trusted.

use line_index::{LineCol, LineIndex, TextSize, WideEncoding, WideLineCol};
use lsp_types::{Position, Range};
use tenx_diagnostics::Span;

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units.
    Utf16,
}

/// A file's lines, for converting offsets to positions and back.
#[derive(Debug)]
pub struct Lines {
    index: LineIndex,
    encoding: Encoding,
}

impl Lines {
    /// The lines of `text`.
    pub fn new(text: &str, encoding: Encoding) -> Self {
        Lines {
            index: LineIndex::new(text),
            encoding,
        }
    }

    /// The position of byte `offset` (clamped to the end of the text).
    pub fn position(&self, offset: u32) -> Position {
        let offset = TextSize::from(offset).min(self.index.len());
        let Some(at) = self.index.try_line_col(offset) else {
            return Position::new(0, 0);
        };
        match self.encoding {
            Encoding::Utf8 => Position::new(at.line, at.col),
            Encoding::Utf16 => self
                .index
                .to_wide(WideEncoding::Utf16, at)
                .map_or(Position::new(at.line, at.col), |wide| {
                    Position::new(wide.line, wide.col)
                }),
        }
    }

    /// The range of `span`.
    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The byte offset of `position`: a column past the end of its line is the line's end; a
    /// line past the end of the text, or a column inside a character, is `None`.
    pub fn offset(&self, position: Position) -> Option<usize> {
        let line = self.index.line(position.line)?;
        // A line's range runs to the start of the next line; its text ends before the newline.
        let has_newline = self.index.line(position.line.saturating_add(1)).is_some();
        let length = u32::from(line.len()).saturating_sub(u32::from(has_newline));
        let col = match self.encoding {
            Encoding::Utf8 => position.character.min(length),
            Encoding::Utf16 => {
                let end = LineCol {
                    line: position.line,
                    col: length,
                };
                let wide_end = self.index.to_wide(WideEncoding::Utf16, end)?;
                let wide = WideLineCol {
                    line: position.line,
                    col: position.character.min(wide_end.col),
                };
                self.index.to_utf8(WideEncoding::Utf16, wide)?.col
            }
        };
        let offset = self.index.offset(LineCol {
            line: position.line,
            col,
        })?;
        // A column inside a character is no place.
        self.index.try_line_col(offset)?;
        Some(u32::from(offset) as usize)
    }

    /// The span between two positions (`None` when either cannot be placed).
    pub fn span(&self, range: Range) -> Option<Span> {
        let start = self.offset(range.start)?;
        let end = self.offset(range.end)?;
        Some(Span::new(start.min(end), start.max(end)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Encoding, Lines};
    use lsp_types::Position;

    #[test]
    fn utf16_columns_count_code_units_and_utf8_columns_count_bytes() {
        let text = "tag a \"é😀\"\nx = 1\n";
        let utf16 = Lines::new(text, Encoding::Utf16);
        let utf8 = Lines::new(text, Encoding::Utf8);
        let after_emoji = text.find('😀').unwrap() as u32 + 4;
        assert_eq!(utf16.position(after_emoji), Position::new(0, 10));
        assert_eq!(utf8.position(after_emoji), Position::new(0, 13));
        assert_eq!(utf16.offset(Position::new(0, 10)), Some(after_emoji as usize));
        assert_eq!(utf8.offset(Position::new(1, 2)), Some(text.find("= 1").unwrap()));
    }

    #[test]
    fn a_column_past_the_line_is_its_end_and_a_line_past_the_text_is_refused() {
        let text = "ab\ncd";
        let lines = Lines::new(text, Encoding::Utf16);
        assert_eq!(lines.offset(Position::new(0, 99)), Some(2));
        assert_eq!(lines.offset(Position::new(7, 0)), None);
        assert_eq!(lines.position(999), Position::new(1, 2));
    }
}
