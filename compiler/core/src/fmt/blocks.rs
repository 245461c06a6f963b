//! Blocks `{ … }`: one entry per line, indented, with `=` (and a graph's `->`) aligned down runs
//! of neighbouring entries.
//!
//! A run is a sequence of entries of one kind with no empty line or own-line comment between
//! them, where no key is more than two and a half times as long as the key before it (so a long
//! `description` does not push `tags = […]` far to the right). An entry joins its run's
//! alignment only when it is written on one line and still fits the width once padded; one that
//! does not is written with a single space, and splits the run.

use super::cst::Node;
use super::printer::{Doc, Piece, Printer};
use super::trivia::Comment;
use tenx_grammar::Rule;

/// Indentation of a block's entries.
pub(crate) const INDENT: usize = 2;

/// How one line of a block is printed.
pub(crate) enum Shape<'a> {
    /// `head sep tail`, where `sep` lines up with the lines around it of the same `kind`.
    Aligned {
        /// What kind of line: only lines of one kind align with each other.
        kind: u8,
        /// The part before the separator.
        head: Doc<'a>,
        /// Its width on one line, `None` when it cannot be on one line.
        head_width: Option<usize>,
        /// ` = ` or ` -> ` (with a comment before it, if one was written there).
        sep: Doc<'a>,
        /// The separator's width.
        sep_width: usize,
        /// The part after the separator.
        tail: Doc<'a>,
        /// Its width on one line, `None` when it cannot be on one line. A text block counts as
        /// its first line, `"""`.
        tail_width: Option<usize>,
    },
    /// Anything else.
    Plain(Doc<'a>),
}

/// A line with what stands before it and after it.
struct Line<'a> {
    leading: Vec<Piece>,
    shape: Shape<'a>,
    trailing: Vec<Comment>,
}

impl<'a> Printer<'a> {
    /// Prints a block `{ … }` (any of the grammar's blocks: its children are the entries, and
    /// its last child may be the closing brace) whose entries sit at column `indent`.
    pub(crate) fn statements(
        &mut self,
        node: &Node,
        open_at: usize,
        indent: usize,
        print: fn(&mut Printer<'a>, &Node, usize) -> Shape<'a>,
    ) -> Doc<'a> {
        let open = self.punct(open_at, "{");
        let closer = node.end.saturating_sub(1);
        let entries: Vec<&Node> = node
            .children
            .iter()
            .filter(|c| c.start > open_at && c.rule != Rule::close_brace)
            .collect();
        let mut prev_end = open_at + 1;
        let mut lines = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let leading = self.leading(prev_end, entry.start);
            let shape = print(self, entry, indent);
            let limit = entries.get(i + 1).map_or(closer, |next| next.start);
            let trailing = self.trailing(entry.end, limit);
            prev_end = Printer::end_after(entry.end, &trailing);
            lines.push(Line {
                leading,
                shape,
                trailing,
            });
        }
        let dangling = self.leading(prev_end, closer);
        let close = self.punct(closer, "}");
        let has_dangling = dangling.iter().any(|p| matches!(p, Piece::Comment(_)));
        if lines.is_empty() && !has_dangling {
            return open.append(close);
        }
        let inner = self.lines(lines, indent).append(self.dangling(&dangling));
        open.append(inner.nest(INDENT as isize))
            .append(self.hardline())
            .append(close)
    }

    /// The lines of a block, each after a line break, aligned.
    fn lines(&self, lines: Vec<Line<'a>>, indent: usize) -> Doc<'a> {
        let columns = self.alignment(&lines, indent);
        let mut laid = Vec::with_capacity(lines.len());
        for (line, column) in lines.into_iter().zip(columns) {
            let body = match line.shape {
                Shape::Aligned {
                    head,
                    head_width,
                    sep,
                    tail,
                    ..
                } => {
                    let pad = match (column, head_width) {
                        (Some(column), Some(width)) => column.saturating_sub(width),
                        _ => 0,
                    };
                    head.append(self.owned(" ".repeat(pad))).append(sep).append(tail)
                }
                Shape::Plain(doc) => doc,
            };
            let width = if line.trailing.is_empty() {
                None
            } else {
                self.flat(&body).map(|t| t.chars().count())
            };
            laid.push((line.leading, body, width, line.trailing));
        }
        let spans: Vec<(bool, Option<usize>)> = laid
            .iter()
            .map(|(leading, _, width, _)| (leading.is_empty(), *width))
            .collect();
        let gaps = comment_gaps(&spans);
        let mut doc = self.nil();
        for (i, ((leading, body, _, trailing), gap)) in laid.into_iter().zip(gaps).enumerate() {
            doc = doc
                .append(self.hardline())
                .append(self.pieces(&leading, i == 0))
                .append(body)
                .append(self.trailing_doc(&trailing, gap));
        }
        doc
    }

    /// The column each line's head is padded to, `None` for lines that are not aligned.
    fn alignment(&self, lines: &[Line<'a>], indent: usize) -> Vec<Option<usize>> {
        let mut member: Vec<bool> = lines
            .iter()
            .map(|l| {
                matches!(
                    l.shape,
                    Shape::Aligned {
                        head_width: Some(_),
                        tail_width: Some(_),
                        ..
                    }
                )
            })
            .collect();
        loop {
            let runs = runs(lines, &member);
            let mut changed = false;
            for run in &runs {
                let column = run.iter().filter_map(|&i| head_width(lines.get(i))).max().unwrap_or(0);
                for &i in run {
                    if let Some(Line {
                        shape:
                            Shape::Aligned {
                                sep_width,
                                tail_width: Some(tail),
                                ..
                            },
                        ..
                    }) = lines.get(i)
                        && indent + column + sep_width + tail > self.width
                        && let Some(slot) = member.get_mut(i)
                    {
                        *slot = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                let mut columns = vec![None; lines.len()];
                for run in &runs {
                    let column = run.iter().filter_map(|&i| head_width(lines.get(i))).max();
                    for &i in run {
                        if let Some(slot) = columns.get_mut(i) {
                            *slot = column;
                        }
                    }
                }
                return columns;
            }
        }
    }

    /// Prints a block of entries (`model`, `tool`, `agent`, … and nested blocks).
    pub(crate) fn block(&mut self, node: &Node, indent: usize) -> Doc<'a> {
        self.statements(node, node.start, indent, Printer::block_entry)
    }

    /// One entry of a block.
    pub(crate) fn block_entry(&mut self, node: &Node, indent: usize) -> Shape<'a> {
        match node.rule {
            Rule::entry | Rule::handoffs_entry | Rule::agents_entry => self.assignment(node),
            Rule::nested_block => {
                let mut doc = self.nil();
                for child in &node.children {
                    let part = match child.rule {
                        Rule::block => {
                            let block = self.block(child, indent + INDENT);
                            self.text(" ").append(block)
                        }
                        _ => self.all_tokens(child),
                    };
                    doc = doc.append(part);
                }
                Shape::Plain(doc)
            }
            _ => Shape::Plain(self.all_tokens(node)),
        }
    }

    /// `key = value` (also `handoffs = [a, b(reason: string)]`).
    pub(crate) fn assignment(&mut self, node: &Node) -> Shape<'a> {
        let mut head = self.nil();
        let mut head_width = Some(0);
        let mut sep = self.nil();
        let mut tail = self.nil();
        let mut tail_width = None;
        for child in &node.children {
            match child.rule {
                Rule::key | Rule::kw_handoffs | Rule::kw_agents => {
                    head = self.all_tokens(child);
                    head_width = self.flat(&head).map(|t| t.chars().count());
                }
                Rule::equals => {
                    let before = self.inline_comments(child.start);
                    sep = self
                        .text(" ")
                        .append(before)
                        .append(self.token(child))
                        .append(self.text(" "));
                }
                Rule::handoff_list => {
                    let items: Vec<&Node> = child.all(Rule::handoff_item).collect();
                    tail = self.bracketed(child, &items, super::sequence::LIST, Printer::handoff_item);
                    tail_width = self.flat(&tail).map(|t| t.chars().count());
                }
                _ => {
                    tail = self.value(child);
                    tail_width = if is_text_block(child) {
                        Some(3)
                    } else {
                        self.flat(&tail).map(|t| t.chars().count())
                    };
                }
            }
        }
        let sep_width = self.flat(&sep).map_or(3, |t| t.chars().count());
        Shape::Aligned {
            kind: 0,
            head,
            head_width,
            sep,
            sep_width,
            tail,
            tail_width,
        }
    }

    /// `billing` or `escalation(reason: string "Why")` in a `handoffs` list.
    fn handoff_item(&mut self, node: &Node) -> Doc<'a> {
        let mut doc = self.nil();
        for child in &node.children {
            let part = match child.rule {
                Rule::param_list => self.param_list(child),
                _ => self.token(child),
            };
            doc = doc.append(part);
        }
        doc
    }
}

/// The spaces before each line's trailing comment: comments of neighbouring one-line entries
/// (`spans`: whether the line follows its neighbour directly, and its width when it has a
/// trailing comment and is one line) start in one column, two spaces after the longest line.
pub(crate) fn comment_gaps(spans: &[(bool, Option<usize>)]) -> Vec<usize> {
    let mut gaps = vec![2; spans.len()];
    let mut start = 0;
    while start < spans.len() {
        let mut end = start;
        while spans.get(end).is_some_and(|(_, width)| width.is_some())
            && (end == start || spans.get(end).is_some_and(|(adjacent, _)| *adjacent))
        {
            end += 1;
        }
        if end > start + 1 {
            let column = (start..end)
                .filter_map(|i| spans.get(i).and_then(|s| s.1))
                .max()
                .unwrap_or(0);
            for i in start..end {
                if let (Some(gap), Some((_, Some(width)))) = (gaps.get_mut(i), spans.get(i)) {
                    *gap = column - width + 2;
                }
            }
        }
        start = end.max(start + 1);
    }
    gaps
}

/// Whether a value is a single text block.
fn is_text_block(value: &Node) -> bool {
    matches!(value.children.as_slice(), [only] if only.rule == Rule::text_block)
}

/// The one-line width of an aligned line's head.
fn head_width(line: Option<&Line<'_>>) -> Option<usize> {
    match line?.shape {
        Shape::Aligned { head_width, .. } => head_width,
        Shape::Plain(_) => None,
    }
}

/// The kind of an aligned line.
fn kind(line: &Line<'_>) -> Option<u8> {
    match line.shape {
        Shape::Aligned { kind, .. } => Some(kind),
        Shape::Plain(_) => None,
    }
}

/// Runs of lines that align together: neighbouring members of one kind, none of them (but the
/// first) after a comment or an empty line.
fn runs(lines: &[Line<'_>], member: &[bool]) -> Vec<Vec<usize>> {
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut current_kind = None;
    let mut previous_width = 0;
    for (i, line) in lines.iter().enumerate() {
        let is_member = member.get(i).copied().unwrap_or(false);
        let width = head_width(Some(line)).unwrap_or(0);
        let (short, long) = (width.min(previous_width), width.max(previous_width));
        let comparable = 2 * long <= 5 * short;
        previous_width = width;
        let joins =
            is_member && line.leading.is_empty() && kind(line) == current_kind && comparable && !current.is_empty();
        if !joins && !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
        if is_member {
            current.push(i);
            current_kind = kind(line);
        } else {
            current_kind = None;
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}
