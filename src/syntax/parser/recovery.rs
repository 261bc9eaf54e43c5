//! Judging the syntax errors of one parse as the grammar recovers from
//! them ([`Recovery`]), and what each leaves misread.

use super::context::Context;
use super::convert::from_lalrpop;
use super::{Found, LalrpopError, ParseError};
use crate::diagnostics::cap::Cap;
use crate::diagnostics::Severity;
use crate::span::Span;
use crate::syntax::ast;
use crate::syntax::lexer::Token;
use std::cell::Cell;
use std::convert::Infallible;
use std::rc::Rc;

/// The syntax errors of one parse, as the grammar's recovery finds them
/// (`errors.push(e)` in `grammar/kdsl.lalrpop`). Each is judged as it
/// comes: dropped when a lexer error explains it, when it only continues
/// the one before on the same stretch of a line, or when it lies in a C-style
/// `for` header that already has its error; the rest count, and the first
/// [`cap::PER_CODE`] of each code are kept whole. So a file with an error
/// every few bytes holds a count and a bounded list, never one record (with
/// its list of expected tokens) per error.
///
/// It also finds what each error leaves misread ([`Misread`]): the rest of
/// the error's line, from the start of the innermost statement holding the
/// error when that statement starts on the same line (`out[0] = c @ 1;`:
/// the checker's view of `out[0] = c` is not news either). The grammar
/// tells it where each statement ends (`errors.statement`), which is after
/// the errors inside it.
///
/// [`Misread`]: crate::diagnostics::Misread
pub struct Recovery<'a> {
    cx: Context<'a>,
    /// See [`LexErrors::gaps`](crate::syntax::lexer::LexErrors::gaps).
    gaps: &'a [usize],
    /// Where the tokens were cut at a bracket nested too deep, or where the
    /// parser's stack grew too deep (E0124): errors from there on are not
    /// reported. Shared with the LR driver, which sets the second.
    pub(super) cut: Rc<Cell<Option<usize>>>,
    last_reported: Option<usize>,
    /// The C-style `for` headers and whether each has its error.
    c_style_headers: Vec<(usize, usize)>,
    c_style_reported: Vec<bool>,
    /// The errors that count, kept in full while the cap allows.
    kept: Vec<ParseError>,
    cap: Cap,
    /// Every error that counts, kept or not.
    count: usize,
    /// The lexer's misread lines ([`LexErrors::misread`], sorted), taken
    /// in as parsing passes them.
    ///
    /// [`LexErrors::misread`]: crate::syntax::lexer::LexErrors::misread
    lexed: &'a [Span],
    lexed_next: usize,
    /// The misread stretches, in the order found: one per line at most.
    misread: Vec<Span>,
    /// Those of `misread` no statement has claimed yet, innermost last.
    unclaimed: Vec<usize>,
    /// The last `c ? a : b` read.
    ternary: Option<Span>,
}

impl<'a> Recovery<'a> {
    pub(super) fn new(
        cx: Context<'a>,
        lexed: (&'a [usize], &'a [Span]),
        cut_at: Option<usize>,
    ) -> Recovery<'a> {
        let cut = Rc::new(Cell::new(cut_at));
        let c_style_headers = c_style_for_headers(cx.tokens);
        Recovery {
            c_style_reported: vec![false; c_style_headers.len()],
            c_style_headers,
            cx,
            gaps: lexed.0,
            cut,
            last_reported: None,
            kept: Vec::new(),
            cap: Cap::default(),
            count: 0,
            lexed: lexed.1,
            lexed_next: 0,
            misread: Vec::new(),
            unclaimed: Vec::new(),
            ternary: None,
        }
    }

    /// The cut, for the LR driver (`build.rs` passes it to
    /// [`crate::syntax::lr::Driver::drive`]).
    pub fn cut_cell(&self) -> Rc<Cell<Option<usize>>> {
        Rc::clone(&self.cut)
    }

    /// One error the grammar recovered from.
    pub fn push(&mut self, e: lalrpop_util::ErrorRecovery<usize, Token, Infallible>) {
        self.error(e.error);
    }

    pub(super) fn error(&mut self, e: LalrpopError) {
        let (gap_start, at) = self.cx.gap_before(&e);
        let next_gap = self.gaps.get(self.gaps.partition_point(|&g| g < gap_start));
        let explained = next_gap.is_some_and(|&g| g <= at);
        let is_eof = matches!(e, LalrpopError::UnrecognizedEof { .. });
        if self.cut.get().is_some_and(|c| is_eof || at >= c) {
            return;
        }
        let cascade = !is_eof
            && self
                .last_reported
                .is_some_and(|last| self.cx.same_stretch(last, at));
        if explained || cascade {
            return;
        }
        self.last_reported = Some(at);
        // In a C-style `for` header, only the first syntax error is news: it
        // says what kdsl's loop looks like, and the rest of the header (where
        // a `;` or `)` would be "missing" everywhere) reports nothing and
        // offers no fix.
        let unexpected = matches!(
            e,
            LalrpopError::UnrecognizedToken { .. } | LalrpopError::ExtraToken { .. }
        );
        let header = if unexpected {
            self.c_style_headers
                .iter()
                .position(|&(s, end)| s <= at && at <= end)
        } else {
            None
        };
        if let Some(h) = header {
            let first = self
                .c_style_reported
                .get_mut(h)
                .map(|r| !std::mem::replace(r, true));
            if first != Some(true) {
                return;
            }
        }
        let (code, span) = match e {
            LalrpopError::UnrecognizedToken {
                token: (s, _, end), ..
            }
            | LalrpopError::ExtraToken { token: (s, _, end) } => {
                ("E0010", Span::new(self.cx.file, s, end))
            }
            LalrpopError::UnrecognizedEof { .. } => {
                let end = self.cx.text.len();
                ("E0011", Span::new(self.cx.file, end, end))
            }
            LalrpopError::InvalidToken { .. } => return,
            LalrpopError::User { error } => match error {},
        };
        self.count += 1;
        self.misread_from(span.start as usize);
        if !self.cap.admit(code, Severity::Error, Some(span)) {
            return;
        }
        if let Some(mut converted) = from_lalrpop(e, &self.cx) {
            if header.is_some() {
                if let ParseError::Unexpected {
                    insert,
                    c_style_for,
                    ..
                } = &mut converted
                {
                    *c_style_for = true;
                    *insert = None;
                }
            }
            self.kept.push(converted);
        }
    }

    /// An error the grammar found by reading a construct kdsl does not
    /// have, at byte `at`; `misread` when what follows it cannot be
    /// trusted. `e` makes the error, if it is kept.
    fn found(&mut self, at: usize, misread: bool, e: impl FnOnce(&Self) -> ParseError) {
        if self.cut.get().is_some_and(|c| at >= c) {
            return;
        }
        let cascade = self
            .last_reported
            .is_some_and(|last| self.cx.same_stretch(last, at));
        if cascade {
            return;
        }
        if misread {
            self.last_reported = Some(at);
            self.misread_from(at);
        }
        self.count += 1;
        let span = Span::new(self.cx.file, at, at);
        if self.cap.admit("E0010", Severity::Error, Some(span)) {
            let e = e(self);
            self.kept.push(e);
        }
    }

    /// C's `c ? a : b`, which the grammar reads as `if c { a } else { b }`.
    /// The fix is offered for an innermost one only (one with another
    /// inside would still hold it, and the texts of a chain of them would
    /// add up to its square).
    pub fn ternary(&mut self, question: Span, c: &ast::Expr, a: &ast::Expr, b: &ast::Expr) {
        let whole = c.span.to(b.span);
        let nested = self
            .ternary
            .is_some_and(|t| whole.start <= t.start && t.end <= whole.end);
        self.ternary = Some(whole);
        let spans = [c.span, a.span, b.span];
        // Read as meant: nothing after it is misread.
        self.found(question.start as usize, false, |r| {
            let text = |s: Span| r.cx.text.get(s.range()).unwrap_or("");
            let [c, a, b] = spans.map(text);
            ParseError::Ternary {
                question,
                whole,
                fix: (!nested).then(|| format!("if {c} {{ {a} }} else {{ {b} }}")),
            }
        });
    }

    /// The grammar read a statement from byte `start` to `end`: the errors
    /// found in it since are misread from its start, if it starts on their
    /// line.
    pub fn statement(&mut self, start: usize, end: usize) {
        self.take_lexed(end);
        while let Some(&i) = self.unclaimed.last() {
            let Some(m) = self.misread.get_mut(i) else {
                break;
            };
            let at = m.start as usize;
            if at < start || at >= end {
                break;
            }
            let line = line_start_before(self.cx.text, at);
            m.start = start.max(line) as u32;
            self.unclaimed.pop();
        }
    }

    /// The rest of the line from byte `at` is misread: one stretch a line.
    fn misread_from(&mut self, at: usize) {
        self.take_lexed(at);
        self.misread_line(at);
    }

    fn misread_line(&mut self, at: usize) {
        let file = self.cx.file;
        let covered = self
            .misread
            .last()
            .is_some_and(|m| m.file == file && (m.start as usize) <= at && at < m.end as usize);
        if covered {
            return;
        }
        let end = crate::source::next_line_start(self.cx.text, at);
        self.unclaimed.push(self.misread.len());
        self.misread.push(Span::new(file, at, end));
    }

    /// Takes in the lexer's misread lines that start before byte `until`.
    fn take_lexed(&mut self, until: usize) {
        while let Some(m) = self.lexed.get(self.lexed_next) {
            if m.start as usize >= until {
                break;
            }
            self.lexed_next += 1;
            self.misread_line(m.start as usize);
        }
    }

    /// What the parse found: its errors and the misread stretches.
    pub(super) fn finish(mut self) -> Found {
        self.take_lexed(usize::MAX);
        Found {
            kept: self.kept,
            cap: self.cap,
            count: self.count,
            misread: self.misread,
        }
    }
}

/// The first byte of the line that holds byte `at`.
fn line_start_before(text: &str, at: usize) -> usize {
    let before = text.as_bytes().get(..at).unwrap_or_default();
    before
        .iter()
        .rposition(|&b| b == b'\n' || b == b'\r')
        .map_or(0, |i| i + 1)
}

/// The byte ranges of `for` headers written C-style, from `for` to the `{`
/// of the body: `for (i = 0; i < n; i++)`, `for i = 0; i < n; i++`, and any
/// header in parentheses (`for (i in 0..n)`).
fn c_style_for_headers(tokens: &[(usize, Token, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, (start, tok, _)) in tokens.iter().enumerate() {
        if !matches!(tok, Token::For) {
            continue;
        }
        let header = tokens.get(i + 1..).unwrap_or_default();
        let c_style = matches!(header.first(), Some((_, Token::LParen, _)))
            || matches!(header.get(1), Some((_, Token::Eq, _)));
        let (mut depth, mut semi, mut range) = (0usize, false, false);
        let mut end = header.last().map_or(*start, |t| t.2);
        for (s, t, _) in header {
            match t {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
                Token::Semi if depth <= 1 => semi = true,
                // `for i in a..b;` is kdsl's loop with a stray `;`.
                Token::In if depth == 0 => range = true,
                Token::LBrace | Token::RBrace if depth == 0 => {
                    end = *s;
                    break;
                }
                _ => {}
            }
        }
        if c_style || (semi && !range) {
            out.push((*start, end));
        }
    }
    out
}
