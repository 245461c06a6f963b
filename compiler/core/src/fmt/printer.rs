//! The printer's state: the source, its comments not yet printed, and the document arena.
//!
//! Every construct is printed in source order, and every token goes through [`Printer::token`],
//! which first prints the comments that come before it: no comment can be dropped, however a
//! construct is laid out. Lists of things (items, block entries, list elements, parameters)
//! take their comments themselves ([`Printer::leading`], [`Printer::trailing`]) so that they
//! keep their place on their own line or at the end of a line.

use super::cst::Node;
use super::trivia::{Comment, blank_line_between, line_break_between};
use pretty::{Arena, DocAllocator, DocBuilder};

/// A document under construction.
pub(crate) type Doc<'a> = DocBuilder<'a, Arena<'a>>;

/// What comes before an element of a list: comments, and the empty lines the author left.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    /// An empty line.
    Blank,
    /// A comment.
    Comment(Comment),
}

/// The formatter's state while one file is printed.
pub(crate) struct Printer<'a> {
    /// The file's text.
    pub src: &'a str,
    /// Where documents live.
    pub arena: &'a Arena<'a>,
    /// Every comment of the file, in order.
    comments: Vec<Comment>,
    /// The first comment not printed yet.
    next: usize,
    /// The line width to fit.
    pub width: usize,
}

impl<'a> Printer<'a> {
    /// A printer for `src` with its comments.
    pub fn new(src: &'a str, arena: &'a Arena<'a>, comments: Vec<Comment>, width: usize) -> Self {
        Printer {
            src,
            arena,
            comments,
            next: 0,
            width,
        }
    }

    /// An empty document.
    pub fn nil(&self) -> Doc<'a> {
        self.arena.nil()
    }

    /// Fixed text.
    pub fn text(&self, text: &'a str) -> Doc<'a> {
        self.arena.text(text)
    }

    /// Text made while printing.
    pub fn owned(&self, text: String) -> Doc<'a> {
        self.arena.text(text)
    }

    /// A line break that always breaks.
    pub fn hardline(&self) -> Doc<'a> {
        self.arena.hardline()
    }

    /// A space, or a line break when its group does not fit.
    pub fn line(&self) -> Doc<'a> {
        self.arena.line()
    }

    /// Nothing, or a line break when its group does not fit.
    pub fn line_(&self) -> Doc<'a> {
        self.arena.line_()
    }

    /// The source text of `node`.
    pub fn slice(&self, node: &Node) -> &'a str {
        self.src.get(node.start..node.end).unwrap_or("")
    }

    /// The source text of a comment.
    pub fn comment_text(&self, comment: &Comment) -> &'a str {
        self.src.get(comment.start..comment.end).unwrap_or("")
    }

    /// `node` exactly as written, after any comment before it.
    pub fn token(&mut self, node: &Node) -> Doc<'a> {
        let before = self.inline_comments(node.start);
        before.append(self.text(self.slice(node)))
    }

    /// Fixed text standing at `at` in the source (punctuation), after any comment before it.
    pub fn punct(&mut self, at: usize, text: &'a str) -> Doc<'a> {
        let before = self.inline_comments(at);
        before.append(self.text(text))
    }

    /// The comments before `at` not printed yet, inside a line: each is followed by a space, or
    /// by a line break when it ends its line.
    pub fn inline_comments(&mut self, at: usize) -> Doc<'a> {
        let mut doc = self.nil();
        while let Some(comment) = self.comments.get(self.next).copied() {
            if comment.start >= at {
                break;
            }
            self.next += 1;
            doc = doc.append(self.text(self.comment_text(&comment)));
            doc = if comment.ends_line {
                doc.append(self.hardline())
            } else {
                doc.append(self.text(" "))
            };
        }
        doc
    }

    /// Takes what stands between `prev_end` and the element at `start`: the comments not printed
    /// yet and the empty lines around them.
    pub fn leading(&mut self, prev_end: usize, start: usize) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut cursor = prev_end;
        while let Some(comment) = self.comments.get(self.next).copied() {
            if comment.start >= start {
                break;
            }
            self.next += 1;
            if blank_line_between(self.src, cursor, comment.start) {
                pieces.push(Piece::Blank);
            }
            pieces.push(Piece::Comment(comment));
            cursor = comment.end;
        }
        if blank_line_between(self.src, cursor, start) {
            pieces.push(Piece::Blank);
        }
        pieces
    }

    /// Takes the comment that ends the line of `end` (before `limit`), with any block comments
    /// before it on that line.
    pub fn trailing(&mut self, end: usize, limit: usize) -> Vec<Comment> {
        let mut out = Vec::new();
        let mut cursor = end;
        while let Some(comment) = self.comments.get(self.next).copied() {
            // A comment with more text after it on its line belongs to that text.
            if comment.end > limit || !comment.ends_line || line_break_between(self.src, cursor, comment.start) {
                break;
            }
            self.next += 1;
            out.push(comment);
            cursor = comment.end;
            if comment.is_line {
                break;
            }
        }
        out
    }

    /// Where an element's trailing comments end: `end`, or past the last of them.
    pub fn end_after(end: usize, trailing: &[Comment]) -> usize {
        trailing.last().map_or(end, |c| c.end)
    }

    /// Comments on their own lines, each followed by a line break (or a space when the element
    /// followed it on its line), with empty lines kept. A leading empty line is dropped when
    /// `first` (right after an opening bracket).
    pub fn pieces(&self, pieces: &[Piece], first: bool) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, piece) in pieces.iter().enumerate() {
            match piece {
                Piece::Blank if first && i == 0 => {}
                Piece::Blank => doc = doc.append(self.hardline()),
                Piece::Comment(comment) => {
                    doc = doc.append(self.text(self.comment_text(comment)));
                    doc = if comment.ends_line {
                        doc.append(self.hardline())
                    } else {
                        doc.append(self.text(" "))
                    };
                }
            }
        }
        doc
    }

    /// Comments at the end of a line, the first after `gap` spaces, the others one apart.
    pub fn trailing_doc(&self, trailing: &[Comment], gap: usize) -> Doc<'a> {
        let mut doc = self.nil();
        for (i, comment) in trailing.iter().enumerate() {
            doc = doc.append(self.owned(" ".repeat(if i == 0 { gap } else { 1 })));
            doc = doc.append(self.text(self.comment_text(comment)));
        }
        doc
    }

    /// `doc` laid out on one line at `width` columns: its text, or `None` when it cannot be
    /// (a comment or a text block forces a line break).
    pub fn flat(&self, doc: &Doc<'a>) -> Option<String> {
        let rendered = super::render::render(self.arena.nil().append(doc.clone()), usize::MAX / 4);
        (!rendered.contains('\n')).then_some(rendered)
    }
}
