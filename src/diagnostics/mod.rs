//! Diagnostics: the one type every stage's errors become, and its renderers.
//!
//! Each stage has its own error enum (`LexError`, `ParseError`, `CheckError`,
//! `BarrierError`, ...). Each implements `into_diagnostic` in its own module
//! and nothing else builds a [`Diagnostic`] by hand, so the wording of every
//! code lives next to the condition that triggers it. Rendering (human,
//! short, JSON) is done here and only here.

pub mod catalog;
pub mod render;

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
}

/// The diagnostics of one compilation, in source order.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| d.primary_span().map(|s| (s.file, s.start, s.end)));
}
