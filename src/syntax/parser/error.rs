//! A syntax error ([`ParseError`]) and the one place it is worded.

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// A syntax error, before it becomes a [`Diagnostic`].
#[derive(Clone, Debug, PartialEq)]
pub enum ParseError {
    /// E0010: a token the grammar does not allow here.
    Unexpected {
        /// The token as the user wrote it, described: `` `}` ``,
        /// ``identifier `foo` ``.
        found: String,
        span: Span,
        /// Readable expectations, in display order.
        expected: Vec<String>,
        /// A token that is probably missing just before `span`, where to
        /// insert it (the end of the previous token) and that token's text.
        insert: Option<(&'static str, Span, String)>,
        /// `a < b < c`.
        chained_comparison: bool,
        /// An item keyword inside a block: the innermost `{` still open.
        unclosed: Option<Span>,
        /// In the header of a C-style `for (init; cond; step)` loop.
        c_style_for: bool,
        /// Right after a `?` that does not start C's `c ? a : b` (Rust's
        /// `x?`): the `?`.
        question: Option<Span>,
    },
    /// E0010: C's conditional operator `c ? a : b`, read as the `if` it
    /// means; `replacement` is that `if`.
    Ternary {
        question: Span,
        whole: Span,
        fix: Option<String>,
    },
    /// E0011: the file ended inside an item.
    UnexpectedEof {
        /// Empty span at the end of the file.
        at: Span,
        expected: Vec<String>,
        /// The innermost bracket still open at the end, if any.
        unclosed: Option<(Span, &'static str)>,
    },
}

impl ParseError {
    pub fn into_diagnostic(self) -> Diagnostic {
        match self {
            ParseError::Ternary {
                question,
                whole,
                fix,
            } => {
                let d = Diagnostic::error("E0010", "expected an operator, found `?`")
                    .primary(question, "kdsl has no conditional operator `c ? a : b`")
                    .help("an `if` is an expression: `if c { a } else { b }` evaluates only the branch it takes, as `?:` does (`select(c, a, b)` evaluates both)");
                match fix {
                    Some(f) => d.fix("write it as an `if` expression", whole, f),
                    None => d,
                }
            }
            ParseError::Unexpected {
                found,
                span,
                expected,
                insert,
                chained_comparison,
                unclosed,
                c_style_for,
                question,
            } => {
                let mut d = Diagnostic::error(
                    "E0010",
                    format!("expected {}, found {found}", list(&expected)),
                )
                .primary(span, format!("unexpected {found}"));
                if let Some((tok, at, after)) = insert {
                    // Renderers show a fix as a `help:` line with the edit
                    // applied, so the fix's message is the help.
                    d = d.fix(format!("add `{tok}` after `{after}`"), at, tok);
                }
                if expected == ["`else`"] {
                    d = d.help("an `if` used as a value needs an `else` branch; an `if` statement stands on its own, not after `=` or inside an expression");
                }
                if let Some(open) = unclosed {
                    d = d
                        .secondary(open, "this `{` is not closed")
                        .help("an item cannot stand inside a block; is a `}` missing?");
                }
                if chained_comparison {
                    d = d.help("comparison operators cannot be chained; combine the comparisons with `&&`, as in `a < b && b < c`");
                }
                if c_style_for {
                    d = d.help("kdsl has no C-style `for (init; condition; step)`: its loop is `for i in a..b { ... }` (`for i in a..b step s` for another stride), or a `while` loop");
                }
                if let Some(q) = question {
                    d = d
                        .secondary(q, "kdsl has no `?` operator")
                        .help("`?` is read only as the start of C's `c ? a : b`, which kdsl writes `if c { a } else { b }`");
                }
                d
            }
            ParseError::UnexpectedEof {
                at,
                expected,
                unclosed,
            } => {
                let mut d = Diagnostic::error("E0011", "unexpected end of file")
                    .primary(at, "the file ends here");
                if let Some((span, open)) = unclosed {
                    d = d.secondary(span, format!("this `{open}` is not closed"));
                }
                if !expected.is_empty() {
                    d = d.note(format!("expected {}", list(&expected)));
                }
                d
            }
        }
    }
}

/// `a`, or `one of a, b, c`.
pub(super) fn list(expected: &[String]) -> String {
    match expected {
        [] => "something else".to_string(),
        [one] => one.clone(),
        many => format!("one of {}", many.join(", ")),
    }
}
