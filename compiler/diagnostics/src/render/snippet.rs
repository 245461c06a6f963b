//! Bounded source snippets for human output.
//!
//! codespan-reporting prints every line it shows whole, so a diagnostic on a 58 KB line would
//! print 58 KB, and each further diagnostic on that line 58 KB more. Each diagnostic is rendered
//! against a [`View`] of its files instead: the view holds only the lines the diagnostic can show
//! (its labelled lines and the context lines codespan adds), and cuts every line longer than
//! [`FULL_LINE`] characters to the parts around the labels on it, with `…` at every cut:
//!
//! - when the labels on the line fit in [`WINDOW`] characters: one window of that width, from
//!   the line's start when they end in its first `WINDOW - CONTEXT` characters, to its end when
//!   they start in its last `WINDOW - CONTEXT`, else centred on them;
//! - otherwise each label with [`CONTEXT`] characters on either side, and of a label longer than
//!   twice [`LABEL_KEEP`] characters only its first and last `LABEL_KEEP` (the elided middle is
//!   still underlined);
//! - a long line with no label on it (a context line, a line inside a multi-line label): its first
//!   `WINDOW` characters.
//!
//! Widths count characters, and cuts fall between characters. The labels are remapped into the
//! view, and the view reports the original line and column of every place, so line numbers,
//! `file:line:col` and carets stay right. JSON and SARIF keep the exact spans.

use crate::{Diagnostic, FileId, SourceFile, SourceSet, Span};
use codespan_reporting::files::{Error, Files, Location};
use codespan_reporting::term::Config;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// A line of at most this many characters is shown whole.
pub const FULL_LINE: usize = 160;
/// A longer line is cut to a window of this many characters when its labels fit in one.
pub const WINDOW: usize = 120;
/// Characters kept on either side of each label when a line's labels do not fit in one window.
pub const CONTEXT: usize = 16;
/// Characters kept at each end of a label too long for a window.
pub const LABEL_KEEP: usize = 24;
/// Two kept parts of a line closer than this many characters are joined rather than cut apart.
const MERGE_GAP: usize = 3;
/// The mark of a cut.
const CUT: &str = "…";

/// A run of an original line that the view keeps.
#[derive(Debug)]
struct Piece {
    /// Its bytes in the file.
    original: Range<usize>,
    /// Where it starts in the view's text.
    shown: usize,
}

/// A line of the file as the view shows it.
#[derive(Debug)]
struct ShownLine {
    /// The 0-based line index in the file.
    index: usize,
    /// Its bytes in the view's text, with a final `\n`.
    range: Range<usize>,
    /// The runs of the original line it keeps, in order; never empty.
    pieces: Vec<Piece>,
}

/// A file to show, with the byte ranges of the labels in it.
type Plan<'a> = (FileId, &'a SourceFile, Vec<(usize, usize)>);

/// One file as a diagnostic shows it.
#[derive(Debug)]
struct FileView<'a> {
    id: FileId,
    file: &'a SourceFile,
    /// The shown lines, one after another.
    text: String,
    /// In line order.
    lines: Vec<ShownLine>,
}

/// The files of one diagnostic, each holding only the lines it can show, long ones cut. It
/// implements codespan's [`Files`] with the original names, line numbers and columns.
#[derive(Debug)]
pub(crate) struct View<'a> {
    files: Vec<FileView<'a>>,
}

impl<'a> View<'a> {
    /// The view of the files `d`'s labels point into, and the labels' spans (primary first, then
    /// the secondary ones in order) moved into it. `None` when a label's file is not in `sources`.
    pub(crate) fn new(d: &Diagnostic, sources: &'a SourceSet, config: &Config) -> Option<(View<'a>, Vec<Span>)> {
        let labels: Vec<_> = std::iter::once(&d.primary).chain(&d.secondary).collect();
        // The files in the order their labels come, each with its labels' byte ranges.
        let mut plans: Vec<Plan<'a>> = Vec::new();
        for label in &labels {
            let file = sources.get(label.file)?;
            let start = floor_char_boundary(&file.text, label.span.start as usize);
            let end = floor_char_boundary(&file.text, label.span.end as usize).max(start);
            match plans.iter_mut().find(|(id, _, _)| *id == label.file) {
                Some((_, _, ranges)) => ranges.push((start, end)),
                None => plans.push((label.file, file, vec![(start, end)])),
            }
        }
        let files: Vec<FileView<'a>> = plans
            .iter()
            .map(|(id, file, ranges)| FileView::new(*id, file, ranges, config))
            .collect();
        let view = View { files };
        let spans = labels
            .iter()
            .map(|label| {
                let file = view.files.iter().find(|f| f.id == label.file);
                let map =
                    |offset: u32| file.map_or(0, |f| f.to_view(floor_char_boundary(&f.file.text, offset as usize)));
                Span::new(map(label.span.start), map(label.span.end))
            })
            .collect();
        Some((view, spans))
    }

    fn file(&self, id: FileId) -> Result<&FileView<'a>, Error> {
        self.files.iter().find(|f| f.id == id).ok_or(Error::FileMissing)
    }
}

impl<'a> FileView<'a> {
    /// The view of `file` for labels on the byte ranges `ranges`.
    fn new(id: FileId, file: &'a SourceFile, ranges: &[(usize, usize)], config: &Config) -> Self {
        let last_line = file.line_count().saturating_sub(1);
        let mut needed = BTreeSet::new();
        // Per line, the byte ranges of the labels on it that its cut must keep.
        let mut marks: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for &(start, end) in ranges {
            let (first, last) = (file.line_index(start), file.line_index(end));
            needed.extend(first.saturating_sub(config.before_label_lines)..=first);
            needed.extend(last..=(last + config.after_label_lines).min(last_line));
            if first == last {
                marks.entry(first).or_default().push((start, end));
            } else {
                // A multi-line label shows where it starts and where it ends, and codespan shows a
                // few of the lines between.
                marks.entry(first).or_default().push((start, start));
                marks.entry(last).or_default().push((end, end));
                needed.extend((first + 1..last).take(config.start_context_lines));
                needed.extend((first + 1..last).rev().take(config.end_context_lines));
            }
        }
        // codespan shows a single line between two shown lines rather than a `·` break.
        let gaps: Vec<usize> = needed
            .iter()
            .filter(|&&line| needed.contains(&(line + 2)) && !needed.contains(&(line + 1)))
            .map(|line| line + 1)
            .collect();
        needed.extend(gaps);

        let mut text = String::new();
        let mut lines = Vec::with_capacity(needed.len());
        for index in needed {
            let Some(content) = file.line_content(index) else {
                continue;
            };
            let line = file.text.get(content.clone()).unwrap_or("");
            let relative: Vec<(usize, usize)> = marks
                .get(&index)
                .map(|m| {
                    m.iter()
                        .map(|&(s, e)| (s.saturating_sub(content.start), e.saturating_sub(content.start)))
                        .collect()
                })
                .unwrap_or_default();
            let start = text.len();
            let mut pieces = Vec::new();
            let mut at = 0;
            for (from, to) in cut(line, &relative) {
                if from > at {
                    text.push_str(CUT);
                }
                pieces.push(Piece {
                    original: content.start + from..content.start + to,
                    shown: text.len(),
                });
                text.push_str(line.get(from..to).unwrap_or(""));
                at = to;
            }
            if at < line.len() {
                text.push_str(CUT);
            }
            text.push('\n');
            lines.push(ShownLine {
                index,
                range: start..text.len(),
                pieces,
            });
        }
        FileView { id, file, text, lines }
    }

    /// Where a byte offset of the file is in the view: in a kept run, its place there; in a cut,
    /// the next kept run's start (or the end of the shown line).
    fn to_view(&self, offset: usize) -> usize {
        let index = self.file.line_index(offset);
        let Ok(at) = self.lines.binary_search_by_key(&index, |l| l.index) else {
            return self.text.len();
        };
        let Some(line) = self.lines.get(at) else {
            return self.text.len();
        };
        if let Some(piece) = line
            .pieces
            .iter()
            .find(|p| p.original.start <= offset && offset <= p.original.end)
        {
            return piece.shown + (offset - piece.original.start);
        }
        line.pieces
            .iter()
            .find(|p| p.original.start > offset)
            .map_or(line.range.end.saturating_sub(1), |p| p.shown)
    }

    /// The shown line holding a byte of the view's text (the last one past the end).
    fn line_at(&self, shown: usize) -> Option<&ShownLine> {
        let after = self.lines.partition_point(|l| l.range.start <= shown);
        self.lines.get(after.saturating_sub(1))
    }

    /// The byte offset of the file that a byte of the view shows (for a cut mark, the next kept
    /// byte).
    fn to_original(&self, shown: usize) -> usize {
        let Some(line) = self.line_at(shown) else {
            return 0;
        };
        for piece in &line.pieces {
            let length = piece.original.end - piece.original.start;
            if piece.shown <= shown && shown <= piece.shown + length {
                return piece.original.start + (shown - piece.shown);
            }
            if piece.shown > shown {
                return piece.original.start;
            }
        }
        line.pieces.last().map_or(0, |p| p.original.end)
    }
}

/// The byte ranges `(start, end)` of `line` to keep (in order, apart, at least one) so that it
/// shows the label ranges `marks` (byte offsets in the line) within the bounds of the module
/// comment.
fn cut(line: &str, marks: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // At most FULL_LINE bytes is at most FULL_LINE characters: no need to count them.
    if line.len() <= FULL_LINE {
        return vec![(0, line.len())];
    }
    let length = line.chars().count();
    if length <= FULL_LINE {
        return vec![(0, line.len())];
    }
    let column = |byte: usize| line.get(..byte).map_or(0, |s| s.chars().count());
    // Each label as characters, at least one wide (codespan draws one caret for an empty label).
    let labels: Vec<(usize, usize)> = marks
        .iter()
        .map(|&(s, e)| {
            let s = column(s).min(length);
            (s, column(e).max(s + 1).min(length))
        })
        .collect();
    let kept: Vec<(usize, usize)> = match (labels.iter().map(|l| l.0).min(), labels.iter().map(|l| l.1).max()) {
        (Some(low), Some(high)) if high - low <= WINDOW => {
            // The line's start (indentation, the key) or end when the labels are near it, with
            // CONTEXT characters to spare; otherwise centred on the labels.
            let start = if high + CONTEXT <= WINDOW {
                0
            } else if low + WINDOW >= length + CONTEXT {
                length - WINDOW
            } else {
                low.saturating_sub((WINDOW - (high - low)) / 2)
            };
            let end = (start + WINDOW).min(length);
            vec![(end.saturating_sub(WINDOW), end)]
        }
        (Some(_), Some(_)) => {
            let mut parts = Vec::new();
            for &(s, e) in &labels {
                if e - s > 2 * LABEL_KEEP {
                    parts.push((s, s + LABEL_KEEP));
                    parts.push((e - LABEL_KEEP, e));
                } else {
                    parts.push((s, e));
                }
            }
            let mut parts: Vec<(usize, usize)> = parts
                .into_iter()
                .map(|(s, e)| (s.saturating_sub(CONTEXT), (e + CONTEXT).min(length)))
                .collect();
            parts.sort_unstable();
            // Parts, and the line's ends, that a cut would keep only a few characters apart are
            // joined.
            let mut merged: Vec<(usize, usize)> = Vec::new();
            for (s, e) in parts {
                match merged.last_mut() {
                    Some(last) if s <= last.1 + MERGE_GAP => last.1 = last.1.max(e),
                    _ => merged.push((if s <= MERGE_GAP { 0 } else { s }, e)),
                }
            }
            if let Some(last) = merged.last_mut()
                && last.1 + MERGE_GAP >= length
            {
                last.1 = length;
            }
            merged
        }
        _ => vec![(0, WINDOW)],
    };
    let byte = |column: usize| line.char_indices().nth(column).map_or(line.len(), |(b, _)| b);
    kept.into_iter().map(|(s, e)| (byte(s), byte(e))).collect()
}

/// The largest char boundary of `text` at or before `offset` (and at most its length).
fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl<'a> Files<'a> for View<'_> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, Error> {
        Ok(self.file(id)?.file.name.as_str())
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, Error> {
        Ok(self.file(id)?.text.as_str())
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, Error> {
        Ok(self.file(id)?.line_at(byte_index).map_or(0, |l| l.index))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, Error> {
        let file = self.file(id)?;
        match file.lines.binary_search_by_key(&line_index, |l| l.index) {
            Ok(at) => Ok(file.lines.get(at).map_or(0..0, |l| l.range.clone())),
            // A line the diagnostic does not show (inside a long multi-line label): empty.
            Err(_) if line_index < file.file.line_count() => Ok(file.text.len()..file.text.len()),
            Err(_) => Err(Error::LineTooLarge {
                given: line_index,
                max: file.file.line_count().saturating_sub(1),
            }),
        }
    }

    fn location(&'a self, id: FileId, byte_index: usize) -> Result<Location, Error> {
        let file = self.file(id)?;
        let at = file.file.line_col(file.to_original(byte_index));
        Ok(Location {
            line_number: at.line,
            column_number: at.column,
        })
    }

    fn column_number(&'a self, id: FileId, _line_index: usize, byte_index: usize) -> Result<usize, Error> {
        Ok(self.location(id, byte_index)?.column_number)
    }
}

#[cfg(test)]
mod tests;
