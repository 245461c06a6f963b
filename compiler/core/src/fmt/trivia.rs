//! Comments and blank lines: what the parse tree leaves out and the formatter must keep.
//!
//! Comments live only between the tokens of the tree (strings and text blocks are tokens, so a
//! `//` inside one is never a comment). [`comments`] scans those gaps; [`blank_line_between`]
//! tells whether the author left an empty line between two places.

use super::cst::Node;
use tenx_grammar::Rule;

/// One comment of the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Comment {
    /// First byte (the `/`).
    pub start: usize,
    /// One past the last byte: the end of the line for `//`, past `*/` for `/*`.
    pub end: usize,
    /// A `//` comment, which runs to the end of its line.
    pub is_line: bool,
    /// Whether only whitespace follows it on its line.
    pub ends_line: bool,
}

/// Rules printed exactly as written, whose insides hold no comment.
pub(crate) fn is_token(node: &Node) -> bool {
    node.children.is_empty()
        || matches!(
            node.rule,
            Rule::string | Rule::text_block | Rule::import_path | Rule::field_ref | Rule::path | Rule::compare_op
        )
}

/// The spans of every token of `items`, in source order.
pub(crate) fn tokens(items: &[Node]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut stack: Vec<&Node> = items.iter().rev().collect();
    while let Some(node) = stack.pop() {
        if is_token(node) {
            if node.end > node.start {
                out.push((node.start, node.end));
            }
        } else {
            stack.extend(node.children.iter().rev());
        }
    }
    out
}

/// Every comment of `text`, in order, found in the gaps between `tokens`.
pub(crate) fn comments(text: &str, tokens: &[(usize, usize)]) -> Vec<Comment> {
    let mut out = Vec::new();
    let mut from = 0;
    for &(start, end) in tokens.iter().chain(std::iter::once(&(text.len(), text.len()))) {
        scan_gap(text, from, start, &mut out);
        from = from.max(end);
    }
    out
}

/// Finds the comments in `text[from..to]`, which holds only whitespace, punctuation and comments.
fn scan_gap(text: &str, from: usize, to: usize, out: &mut Vec<Comment>) {
    let bytes = text.as_bytes();
    let mut i = from;
    while i + 1 < to {
        let (Some(&first), Some(&second)) = (bytes.get(i), bytes.get(i + 1)) else {
            return;
        };
        if first == b'/' && second == b'/' {
            let end = text.get(i..to).and_then(|s| s.find('\n')).map_or(to, |n| i + n);
            // A line comment's trailing whitespace (and a `\r`) is not part of it.
            let end = i + text.get(i..end).map_or(0, |s| s.trim_end().len());
            out.push(Comment {
                start: i,
                end,
                is_line: true,
                ends_line: true,
            });
            i = end.max(i + 2);
        } else if first == b'/' && second == b'*' {
            let end = text
                .get(i + 2..to)
                .and_then(|s| s.find("*/"))
                .map_or(to, |n| i + 2 + n + 2);
            out.push(Comment {
                start: i,
                end,
                is_line: false,
                ends_line: ends_line(text, end),
            });
            i = end;
        } else {
            i += 1;
        }
    }
}

/// Whether only spaces and tabs lie between `at` and the end of its line (or of the text).
fn ends_line(text: &str, at: usize) -> bool {
    let rest = text.get(at..).unwrap_or("");
    let line = rest.split('\n').next().unwrap_or("");
    line.trim().is_empty()
}

/// Whether `text[from..to]` holds an empty line: two line breaks with only whitespace between.
pub(crate) fn blank_line_between(text: &str, from: usize, to: usize) -> bool {
    let Some(gap) = text.get(from..to.max(from)) else {
        return false;
    };
    let mut lines = gap.split('\n');
    // The first piece ends the line `from` is on; only the pieces after it are whole lines.
    lines.next();
    let mut pieces: Vec<&str> = lines.collect();
    // The last piece is the start of the line `to` is on, not a whole line.
    pieces.pop();
    pieces.iter().any(|line| line.trim().is_empty())
}

/// Whether `text[from..to]` holds a line break.
pub(crate) fn line_break_between(text: &str, from: usize, to: usize) -> bool {
    text.get(from..to.max(from)).is_some_and(|gap| gap.contains('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_need_two_breaks() {
        assert!(!blank_line_between("a\nb", 0, 3));
        assert!(blank_line_between("a\n\nb", 0, 4));
        assert!(blank_line_between("a\n  \t\n b", 0, 8));
        assert!(!blank_line_between("a\n,\nb", 0, 5));
    }

    #[test]
    fn comments_in_gaps_are_found() {
        let text = "a // one\n/* two */ b";
        let found = comments(text, &[(0, 1), (19, 20)]);
        assert_eq!(found.len(), 2);
        assert_eq!(&text[found[0].start..found[0].end], "// one");
        assert!(!found[1].is_line && !found[1].ends_line);
    }
}
