//! Source positions.
//!
//! A [`Span`] is a small `Copy` value: the file it points into and a half-open
//! byte range. Line and column are computed only when a diagnostic is shown
//! (see [`crate::source`]), never stored.

use serde::Serialize;

/// Index of a file in the [`crate::source::SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct FileId(pub u32);

/// A half-open byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (they must be in the same file; if not,
    /// `self` is returned unchanged).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// An empty span at the end of this one (where a missing token would go).
    pub fn end_point(self) -> Span {
        Span {
            file: self.file,
            start: self.end,
            end: self.end,
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// A value with the span of the source it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub node: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(node: T, span: Span) -> Self {
        Spanned { node, span }
    }
}
