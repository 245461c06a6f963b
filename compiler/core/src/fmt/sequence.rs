//! Bracketed, comma-separated lists: lists `[…]`, maps `{…}`, arguments and parameters `(…)`,
//! handoff lists. One line when they fit, else one element per line.
//!
//! A list that holds a comment ending a line, or an empty line between its elements, is always
//! written one element per line, so comments keep their lines and the author's groups stay
//! apart. A block comment inside a line stays before its element.

use super::cst::Node;
use super::printer::{Doc, Piece, Printer};

/// How a kind of list is written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Brackets {
    /// The opening bracket.
    pub open: &'static str,
    /// The closing bracket.
    pub close: &'static str,
    /// Spaces inside the brackets on one line (`{ a: 1 }`), none (`[a]`) otherwise.
    pub spaced: bool,
    /// A comma after the last element when written one per line (parameters, arguments).
    pub trailing_comma: bool,
}

/// `[a, b]`.
pub(crate) const LIST: Brackets = Brackets {
    open: "[",
    close: "]",
    spaced: false,
    trailing_comma: false,
};

/// `{ a: 1, b: 2 }`.
pub(crate) const MAP: Brackets = Brackets {
    open: "{",
    close: "}",
    spaced: true,
    trailing_comma: false,
};

/// `(a, b: 1)`, for arguments and parameters.
pub(crate) const PARENS: Brackets = Brackets {
    open: "(",
    close: ")",
    spaced: false,
    trailing_comma: true,
};

/// One element and what surrounds it.
struct Element<'a> {
    leading: Vec<Piece>,
    doc: Doc<'a>,
    trailing: Vec<super::trivia::Comment>,
}

/// Indentation of a list's elements when written one per line.
pub(crate) const INDENT: isize = 2;

impl<'a> Printer<'a> {
    /// Prints `node`, a bracketed list whose elements are `elements`, each with `print`.
    pub(crate) fn bracketed(
        &mut self,
        node: &Node,
        elements: &[&Node],
        brackets: Brackets,
        print: fn(&mut Printer<'a>, &Node) -> Doc<'a>,
    ) -> Doc<'a> {
        let open = self.punct(node.start, brackets.open);
        let closer = node.end.saturating_sub(1);
        let mut prev_end = node.start + 1;
        let mut items = Vec::with_capacity(elements.len());
        for (i, element) in elements.iter().enumerate() {
            let leading = self.leading(prev_end, element.start);
            let doc = print(self, element);
            let limit = elements.get(i + 1).map_or(closer, |next| next.start);
            let trailing = self.trailing(element.end, limit);
            prev_end = Printer::end_after(element.end, &trailing);
            items.push(Element { leading, doc, trailing });
        }
        let dangling: Vec<Piece> = self.leading(prev_end, closer);
        // A comment that ends its line needs the line break after it; one inside a line does not.
        let has_comment = |pieces: &[Piece]| pieces.iter().any(|p| matches!(p, Piece::Comment(c) if c.ends_line));
        let broken = dangling.iter().any(|p| matches!(p, Piece::Comment(_)))
            || items.iter().enumerate().any(|(i, item)| {
                !item.trailing.is_empty()
                    || has_comment(&item.leading)
                    || (i > 0 && item.leading.iter().any(|p| matches!(p, Piece::Blank)))
            });
        let close = self.punct(closer, brackets.close);
        if items.is_empty() && !broken {
            return open.append(close);
        }
        let count = items.len();
        if broken {
            let mut inner = self.nil();
            for (i, item) in items.into_iter().enumerate() {
                let comma = i + 1 < count || brackets.trailing_comma;
                inner = inner
                    .append(self.hardline())
                    .append(self.pieces(&item.leading, i == 0))
                    .append(item.doc)
                    .append(self.text(if comma { "," } else { "" }))
                    .append(self.trailing_doc(&item.trailing, 2));
            }
            inner = inner.append(self.dangling(&dangling));
            return open.append(inner.nest(INDENT)).append(self.hardline()).append(close);
        }
        let edge = if brackets.spaced { self.line() } else { self.line_() };
        let mut inner = edge.clone();
        for (i, item) in items.into_iter().enumerate() {
            // Only comments inside the line can be here: any other would have broken the list.
            inner = inner.append(self.pieces(&item.leading, true)).append(item.doc);
            if i + 1 < count {
                inner = inner.append(self.text(",")).append(self.line());
            } else if brackets.trailing_comma {
                inner = inner.append(self.text(",").flat_alt(self.nil()));
            }
        }
        open.append(inner.nest(INDENT)).append(edge).append(close).group()
    }

    /// Comments left before a closing bracket, each on its own line (empty lines kept between
    /// them, not after the last).
    pub(crate) fn dangling(&self, pieces: &[Piece]) -> Doc<'a> {
        let last_comment = pieces.iter().rposition(|p| matches!(p, Piece::Comment(_)));
        let mut doc = self.nil();
        for (i, piece) in pieces.iter().enumerate() {
            if last_comment.is_none_or(|last| i > last) {
                break;
            }
            match piece {
                Piece::Blank => doc = doc.append(self.hardline()),
                Piece::Comment(comment) => {
                    doc = doc
                        .append(self.hardline())
                        .append(self.text(self.comment_text(comment)));
                }
            }
        }
        doc
    }
}
