//! Diagnostics: the one type every stage's errors become, and its renderers.
//!
//! Each stage has its own error enum (`LexError`, `ParseError`, `CheckError`,
//! `BarrierError`, ...). Each implements `into_diagnostic` in its own module
//! and nothing else builds a [`Diagnostic`] by hand, so the wording of every
//! code lives next to the condition that triggers it. Rendering (human,
//! short, JSON) is done here and only here.

pub mod cap;
pub mod catalog;
pub mod render;

pub use cap::{Diags, Misread};

use crate::span::Span;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// A place in the source with a message. The primary label marks the
/// offending code; secondary labels explain it (a declaration, a first
/// definition).
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One text edit: replace `span` with `replacement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A machine-applicable fix: what it does, and its edits.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub message: String,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code, `E0301` or `W0001`; see [`catalog`].
    pub code: &'static str,
    /// The first line: exact text from the catalogue with `{…}` filled in.
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
    pub fixes: Vec<Fix>,
    /// For the "and N more" diagnostic of a code that went past the cap
    /// ([`cap`]): how many diagnostics it stands for (0 for every other).
    pub omitted: usize,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
            fixes: Vec::new(),
            omitted: 0,
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// The primary label (the offending source).
    pub fn primary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// A secondary label: another place that explains this one.
    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// A machine-applicable fix with a single edit.
    pub fn fix(
        mut self,
        message: impl Into<String>,
        span: Span,
        replacement: impl Into<String>,
    ) -> Self {
        self.fixes.push(Fix {
            message: message.into(),
            edits: vec![Edit {
                span,
                replacement: replacement.into(),
            }],
        });
        self
    }

    /// The span of the primary label (the first label if none is primary).
    pub fn primary_span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or_else(|| self.labels.first())
            .map(|l| l.span)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// How many diagnostics this one counts for in a total: 1, or what an
    /// "and N more" stands for.
    pub fn weight(&self) -> usize {
        if self.omitted > 0 {
            self.omitted
        } else {
            1
        }
    }
}

/// `1 byte`, `2 bytes`, `0 arrivals`: a count and its noun, which takes an
/// English plural ending unless the count is 1. The one place every
/// message, report and note words a number of things.
pub fn plural<N: Count>(n: N, noun: &str) -> String {
    format!("{n} {}", noun_for(n, noun))
}

/// The noun as it goes with `n`: `byte` for 1, `bytes` otherwise (for
/// wording such as "3 more errors" or "elements of 1 byte").
pub fn noun_for<N: Count>(n: N, noun: &str) -> String {
    if n.is_one() {
        noun.to_string()
    } else {
        plural_noun(noun)
    }
}

/// A number of things, for [`plural`]: any integer type.
pub trait Count: std::fmt::Display + Copy {
    fn is_one(self) -> bool;
}

macro_rules! counts {
    ($($t:ty),*) => {
        $(impl Count for $t {
            fn is_one(self) -> bool {
                self == 1
            }
        })*
    };
}
counts!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize);

/// The verb form that goes with `n` things: `one` for 1, `many` otherwise
/// (`1 arrival is`, `2 arrivals are`).
pub fn agree<N: Count>(n: N, one: &'static str, many: &'static str) -> &'static str {
    if n.is_one() {
        one
    } else {
        many
    }
}

/// The plural of an English noun (`byte` → `bytes`, `entry` → `entries`,
/// `batch` → `batches`, `index` → `indices`, `matrix` → `matrices`); of a phrase, of its last word.
pub fn plural_noun(noun: &str) -> String {
    if let Some(stem) = noun.strip_suffix("index") {
        return format!("{stem}indices");
    }
    if let Some(stem) = noun.strip_suffix("matrix") {
        return format!("{stem}matrices");
    }
    let consonant_y = noun.strip_suffix('y').filter(|stem| {
        stem.chars()
            .last()
            .is_some_and(|c| !"aeiou".contains(c.to_ascii_lowercase()))
    });
    if let Some(stem) = consonant_y {
        return format!("{stem}ies");
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| noun.ends_with(e))
    {
        return format!("{noun}es");
    }
    format!("{noun}s")
}

/// The diagnostics of one compilation, in source order.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start, s.end)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_their_nouns_plural_unless_one() {
        assert_eq!(plural(1u32, "arrival"), "1 arrival");
        assert_eq!(plural(0usize, "arrival"), "0 arrivals");
        assert_eq!(plural(2u64, "byte"), "2 bytes");
        assert_eq!(plural(-1i64, "step"), "-1 steps");
        assert_eq!(plural(3u32, "index"), "3 indices");
        assert_eq!(plural(2u32, "entry"), "2 entries");
        assert_eq!(plural(2u32, "day"), "2 days");
        assert_eq!(plural(4usize, "launch"), "4 launches");
        assert_eq!(plural(2u32, "more arrival"), "2 more arrivals");
        assert_eq!(plural(5u32, "CTA"), "5 CTAs");
        assert_eq!(noun_for(1u8, "byte"), "byte");
        assert_eq!(agree(1u32, "is", "are"), "is");
        assert_eq!(agree(7u32, "is", "are"), "are");
    }
}
