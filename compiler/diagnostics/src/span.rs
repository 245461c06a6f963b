//! Byte spans into a source file.

use serde::Serialize;

/// A half-open byte range `start..end` in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from byte offsets; offsets past `u32::MAX` are clamped.
    pub fn new(start: usize, end: usize) -> Self {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let (start, end) = (clamp(start), clamp(end));
        Span {
            start,
            end: end.max(start),
        }
    }

    /// An empty span at one offset.
    pub fn at(offset: usize) -> Self {
        Span::new(offset, offset)
    }

    /// The span moved `by` bytes to the right.
    pub fn shift(self, by: usize) -> Self {
        Span::new(self.start as usize + by, self.end as usize + by)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Self {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The range of byte offsets.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Length in bytes.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}
