//! Tokens → AST: runs the LALRPOP parser generated from
//! `grammar/kdsl.lalrpop` and turns its errors into diagnostics.
//!
//! [`from_lalrpop`] is the one place where LALRPOP's errors become ours:
//! terminal names become readable (`";"` → `` `;` ``, `Ident` →
//! `identifier`), groups of them collapse (`expression`, `an operator`), and
//! a missing `;` gets a fix.

use super::lexer::Token;
use crate::diagnostics::cap::Cap;
use crate::diagnostics::{Diagnostic, Severity};
use crate::span::{FileId, Span};
use crate::syntax::ast;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::convert::Infallible;
use std::rc::Rc;

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    unused,
    unused_qualifications,
    non_snake_case,
    non_camel_case_types,
    unreachable_code
)]
mod grammar {
    include!(concat!(env!("OUT_DIR"), "/kdsl.rs"));

    /// The same parser run by LALRPOP's own driver, to check that
    /// [`super::super::lr`] makes the same trees and errors.
    #[cfg(test)]
    pub mod lalrpop {
        include!(concat!(env!("OUT_DIR"), "/kdsl_lalrpop.rs"));
    }
}

type LalrpopError = lalrpop_util::ParseError<usize, Token, Infallible>;

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
fn list(expected: &[String]) -> String {
    match expected {
        [] => "something else".to_string(),
        [one] => one.clone(),
        many => format!("one of {}", many.join(", ")),
    }
}

/// What the parser needs to explain an error: the file, its text and its
/// tokens (to find the token before an error and unclosed brackets).
struct Context<'a> {
    file: FileId,
    text: &'a str,
    tokens: &'a [(usize, Token, usize)],
    /// See [`innermost_open`]: computed when the first error asks (a file
    /// without syntax errors never needs it, and it takes as many entries
    /// as the file has tokens).
    open_brackets: std::cell::OnceCell<OpenBrackets>,
    /// See [`Stretches`]: computed when the first error asks.
    stretches: std::cell::OnceCell<Stretches>,
}

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
    /// See [`LexErrors::gaps`](super::lexer::LexErrors::gaps).
    gaps: &'a [usize],
    /// Where the tokens were cut at a bracket nested too deep, or where the
    /// parser's stack grew too deep (E0124): errors from there on are not
    /// reported. Shared with the LR driver, which sets the second.
    cut: Rc<Cell<Option<usize>>>,
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
    /// [`LexErrors::misread`]: super::lexer::LexErrors::misread
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
    fn new(
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
    /// [`super::lr::Driver::drive`]).
    pub fn cut_cell(&self) -> Rc<Cell<Option<usize>>> {
        Rc::clone(&self.cut)
    }

    /// One error the grammar recovered from.
    pub fn push(&mut self, e: lalrpop_util::ErrorRecovery<usize, Token, Infallible>) {
        self.error(e.error);
    }

    fn error(&mut self, e: LalrpopError) {
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
    fn finish(mut self) -> Found {
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

/// The syntax errors of one file: those kept, the count of the others, and
/// where they leave lines misread.
#[derive(Debug, Default)]
pub struct ParseErrors {
    pub kept: Vec<ParseError>,
    pub cap: Cap,
    pub misread: Vec<Span>,
}

impl ParseErrors {
    /// The kept errors as diagnostics, then the "and N more".
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.cap
            .with_summaries(self.kept, ParseError::into_diagnostic)
    }
}

/// Parses a lexed file. `lexed` is what the parser needs of the lexer's
/// errors: the gaps, which silence syntax errors that a lexer error right
/// before them explains (a skipped `$` where an operator was meant), and
/// the misread lines, which the statements holding them extend.
///
/// A missing token's fix (`add `;` after `x``) is offered only when the
/// parser, run again with that token inserted, reports fewer errors: a fix
/// must make the file better, never move the error or add others. The first
/// [`MAX_CHECKED_FIXES`] candidates of a file are checked that way; later
/// ones are not offered.
pub fn parse_tokens(
    file: FileId,
    text: &str,
    tokens: &[(usize, Token, usize)],
    lexed: (&[usize], &[Span]),
) -> (ast::File, ParseErrors, Vec<super::depth::TooDeep>) {
    let (tree, mut errors, too_deep) = parse_once(file, text, tokens, lexed);
    let mut checked = 0;
    let baseline = errors.count;
    for e in &mut errors.kept {
        let ParseError::Unexpected { insert, .. } = e else {
            continue;
        };
        let Some((tok, at, _)) = insert.as_ref() else {
            continue;
        };
        checked += 1;
        let helps = checked <= MAX_CHECKED_FIXES
            && token_for(tok).is_some_and(|t| {
                let at = at.start as usize;
                let i = tokens.partition_point(|x| x.0 < at);
                let mut fixed = Vec::with_capacity(tokens.len() + 1);
                fixed.extend(tokens.iter().take(i).cloned());
                fixed.push((at, t, at));
                fixed.extend(tokens.iter().skip(i).cloned());
                parse_once(file, text, &fixed, lexed).1.count < baseline
            });
        if !helps {
            *insert = None;
        }
    }
    let errors = ParseErrors {
        kept: errors.kept,
        cap: errors.cap,
        misread: errors.misread,
    };
    (tree, errors, too_deep)
}

/// How many missing-token fixes of one file are checked by parsing again.
const MAX_CHECKED_FIXES: usize = 16;

/// The token a missing-token fix inserts.
fn token_for(spelling: &str) -> Option<Token> {
    match spelling {
        ";" => Some(Token::Semi),
        ")" => Some(Token::RParen),
        "]" => Some(Token::RBracket),
        _ => None,
    }
}

/// What one run of the parser found: the errors, judged as they came.
struct Found {
    kept: Vec<ParseError>,
    cap: Cap,
    count: usize,
    misread: Vec<Span>,
}

/// One run of the parser and of the filters on its errors.
fn parse_once(
    file: FileId,
    text: &str,
    tokens: &[(usize, Token, usize)],
    lexed: (&[usize], &[Span]),
) -> (ast::File, Found, Vec<super::depth::TooDeep>) {
    let cx = Context {
        file,
        text,
        tokens,
        open_brackets: std::cell::OnceCell::new(),
        stretches: std::cell::OnceCell::new(),
    };
    let mut depth = super::depth::Guard::default();
    // From a bracket nested too deep on, nothing is parsed (E0124): the file
    // ends there for the parser, and the errors that follow from that are
    // not reported.
    let cut = super::depth::brackets(file, tokens);
    let parsed = match &cut {
        Some((at, error)) => {
            depth.found.push(error.clone());
            tokens.get(..*at).unwrap_or(tokens)
        }
        None => tokens,
    };
    let cut_at = cut.as_ref().map(|(_, e)| e.span.start as usize);
    let mut recovery = Recovery::new(cx, lexed, cut_at);
    let input = parsed.iter().cloned().map(Ok::<_, Infallible>);
    let result = grammar::FileParser::new().parse(file, &mut recovery, &mut depth, input);
    // The driver cut the input where its stack grew too deep: that is news
    // unless the chain it cut is reported too deep already.
    let cut_by_driver = cut_at.is_none() && depth.found.is_empty();
    if let (true, Some(at)) = (cut_by_driver, recovery.cut.get()) {
        let i = tokens.partition_point(|t| t.0 < at);
        if let Some(&(s, _, e)) = tokens.get(i) {
            depth.found.push(super::depth::TooDeep {
                construct: super::depth::Construct::Chain,
                span: Span::new(file, s, e),
            });
        }
    }
    let tree = match result {
        Ok(tree) => tree,
        Err(e) => {
            recovery.error(e);
            ast::File::default()
        }
    };
    (tree, recovery.finish(), depth.found)
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

impl Context<'_> {
    /// True when nothing separates the bytes `from` and `to`: no line break
    /// and no `;` or `}`. A second syntax error there is most likely the
    /// parser stumbling over the rest of the first one (`let x = a b c;`).
    /// Constant time per question after one pass over the tokens (a long
    /// line of errors asks once per error).
    fn same_stretch(&self, from: usize, to: usize) -> bool {
        // The grammar reports an error when it reduces the rule that
        // recovered, so a broken header's error comes after those of its
        // body: an earlier place is never the same stretch.
        if from > to {
            return false;
        }
        let st = self
            .stretches
            .get_or_init(|| Stretches::of(self.text, self.tokens));
        let newline = st.breaks_before(self, to) != st.breaks_before(self, from);
        let first = self.tokens.partition_point(|t| t.0 <= from);
        let last = self.tokens.partition_point(|t| t.0 < to);
        let seps = |i: usize| st.separators.get(i).copied().unwrap_or(0);
        let separated = last > first && seps(last) != seps(first);
        !newline && !separated
    }

    /// The token just before byte offset `at`.
    fn token_before(&self, at: usize) -> Option<&(usize, Token, usize)> {
        let i = self.tokens.partition_point(|t| t.0 < at);
        i.checked_sub(1).and_then(|i| self.tokens.get(i))
    }

    /// The stretch of text between the token before the error and the error
    /// itself, where a skipped character would explain it.
    fn gap_before(&self, e: &LalrpopError) -> (usize, usize) {
        let at = match e {
            LalrpopError::UnrecognizedToken { token, .. } | LalrpopError::ExtraToken { token } => {
                token.0
            }
            LalrpopError::UnrecognizedEof { .. }
            | LalrpopError::InvalidToken { .. }
            | LalrpopError::User { .. } => self.text.len(),
        };
        let prev_end = self.token_before(at).map_or(0, |t| t.2);
        (prev_end, at)
    }

    /// The innermost bracket that is still open before byte `until`.
    fn unclosed_bracket(&self, until: usize) -> Option<(Span, &'static str)> {
        let i = self.tokens.partition_point(|t| t.0 < until);
        let tops = self
            .open_brackets
            .get_or_init(|| innermost_open(self.tokens));
        let &(s, e, open) = tops.get(i)?.as_ref()?;
        Some((Span::new(self.file, s, e), open))
    }
}

/// Prefix counts over the tokens for [`Context::same_stretch`].
struct Stretches {
    /// Per token index `i`, the `;` and `}` tokens before it (one more
    /// entry at the end).
    separators: Vec<u32>,
    /// Per token index, the line-break characters (`\n`, `\r`) before its
    /// start.
    breaks: Vec<u32>,
}

impl Stretches {
    fn of(text: &str, tokens: &[(usize, Token, usize)]) -> Stretches {
        let mut separators = Vec::with_capacity(tokens.len() + 1);
        let mut breaks = Vec::with_capacity(tokens.len());
        let (mut seps, mut lines, mut counted_to) = (0u32, 0u32, 0usize);
        for (start, tok, _) in tokens {
            separators.push(seps);
            if matches!(tok, Token::Semi | Token::RBrace) {
                seps += 1;
            }
            lines += count_breaks(text.get(counted_to..*start).unwrap_or(""));
            counted_to = counted_to.max(*start);
            breaks.push(lines);
        }
        separators.push(seps);
        Stretches { separators, breaks }
    }

    /// The line-break characters before byte `at`.
    fn breaks_before(&self, cx: &Context<'_>, at: usize) -> u32 {
        let i = cx.tokens.partition_point(|t| t.0 < at);
        match cx.tokens.get(i) {
            Some(t) if t.0 == at => self.breaks.get(i).copied().unwrap_or(0),
            // Not a token's start (the end of the file): from the token
            // before it.
            _ => {
                let (base, from) = match i.checked_sub(1) {
                    Some(p) => (
                        self.breaks.get(p).copied().unwrap_or(0),
                        cx.tokens.get(p).map_or(0, |t| t.0),
                    ),
                    None => (0, 0),
                };
                base + count_breaks(cx.text.get(from..at).unwrap_or(""))
            }
        }
    }
}

fn count_breaks(text: &str) -> u32 {
    text.bytes().filter(|b| matches!(b, b'\n' | b'\r')).count() as u32
}

/// Per token index, the innermost open bracket: (start, end, closer).
type OpenBrackets = Vec<Option<(usize, usize, &'static str)>>;

/// For each token index `i`, the innermost bracket still open after the
/// tokens before `i` (one pass, so that every error can ask cheaply).
fn innermost_open(tokens: &[(usize, Token, usize)]) -> OpenBrackets {
    let mut open: Vec<(usize, usize, &'static str)> = Vec::new();
    // How many of each kind are open, to skip stray closers without a scan.
    let mut counts = [0usize; 3];
    let mut tops = Vec::with_capacity(tokens.len() + 1);
    tops.push(None);
    for (start, tok, end) in tokens {
        let (kind, opens) = match tok {
            Token::LParen => (0, true),
            Token::LBracket => (1, true),
            Token::LBrace => (2, true),
            Token::RParen => (0, false),
            Token::RBracket => (1, false),
            Token::RBrace => (2, false),
            _ => {
                tops.push(open.last().copied());
                continue;
            }
        };
        const SPELLING: [&str; 3] = ["(", "[", "{"];
        let spelling = SPELLING.get(kind).copied().unwrap_or("(");
        if opens {
            open.push((*start, *end, spelling));
            if let Some(c) = counts.get_mut(kind) {
                *c += 1;
            }
        } else if counts.get(kind).is_some_and(|&c| c > 0) {
            // A closer for an outer bracket closes the ones inside it too;
            // a stray closer is ignored.
            if let Some(pos) = open.iter().rposition(|o| o.2 == spelling) {
                for (_, _, closed) in open.drain(pos..) {
                    if let Some(c) = SPELLING
                        .iter()
                        .position(|s| *s == closed)
                        .and_then(|k| counts.get_mut(k))
                    {
                        *c = c.saturating_sub(1);
                    }
                }
            }
        }
        tops.push(open.last().copied());
    }
    tops
}

/// The one conversion from LALRPOP's error type. `None` for errors that
/// cannot happen with our token source (our lexer never fails).
fn from_lalrpop(e: LalrpopError, cx: &Context<'_>) -> Option<ParseError> {
    match e {
        LalrpopError::UnrecognizedToken {
            token: (start, tok, end),
            expected,
        } => Some(unexpected(cx, start, &tok, end, &expected)),
        LalrpopError::ExtraToken {
            token: (start, tok, end),
        } => Some(unexpected(cx, start, &tok, end, &["EOF".to_string()])),
        LalrpopError::UnrecognizedEof { expected, .. } => Some(ParseError::UnexpectedEof {
            at: Span::new(cx.file, cx.text.len(), cx.text.len()),
            expected: readable(&expected),
            unclosed: cx.unclosed_bracket(cx.text.len()),
        }),
        LalrpopError::InvalidToken { .. } => None,
        LalrpopError::User { error } => match error {},
    }
}

fn unexpected(
    cx: &Context<'_>,
    start: usize,
    tok: &Token,
    end: usize,
    raw: &[String],
) -> ParseError {
    let span = Span::new(cx.file, start, end);
    let written = cx.text.get(start..end).unwrap_or("");
    let found = match tok.spelling() {
        Some(s) => format!("`{s}`"),
        None => format!("{} `{}`", tok.kind_name(), shorten(written)),
    };
    let expected = readable(raw);
    let raw_has = |name: &str| raw.iter().any(|r| unquote(r) == name);

    // A missing `;` (or closing bracket): when it is the only thing that
    // fits, or when `;` fits and the next token is on a new line.
    let prev = cx.token_before(start);
    let insert = prev.and_then(|(prev_start, prev_tok, prev_end)| {
        let only = match expected.as_slice() {
            [one] => [";", ")", "]"]
                .into_iter()
                .find(|t| *one == format!("`{t}`")),
            _ => None,
        };
        // Not after `}`, `{` or `;`, where a `;` would be an empty statement.
        let after_statement = matches!(prev_tok, Token::RBrace | Token::LBrace | Token::Semi);
        let newline = cx
            .text
            .get(*prev_end..start)
            .is_some_and(|gap| gap.contains(['\n', '\r']));
        let tok = only.or((newline && !after_statement && raw_has(";")).then_some(";"))?;
        let after = shorten(cx.text.get(*prev_start..*prev_end).unwrap_or(""));
        Some((tok, Span::new(cx.file, *prev_end, *prev_end), after))
    });

    let item_keyword = matches!(
        tok,
        Token::Kernel | Token::Fn | Token::Const | Token::Import
    );
    let unclosed = if item_keyword && raw_has("}") {
        cx.unclosed_bracket(start)
            .filter(|b| b.1 == "{")
            .map(|b| b.0)
    } else {
        None
    };
    let comparison = matches!(
        tok,
        Token::EqEq | Token::Ne | Token::Lt | Token::Le | Token::Gt | Token::Ge
    );
    let chained_comparison = comparison && raw_has("&&") && !tok.spelling().is_some_and(raw_has);
    ParseError::Unexpected {
        found,
        span,
        expected,
        // The comparison is the mistake, not a missing `;` before it.
        insert: insert.filter(|_| !chained_comparison),
        chained_comparison,
        unclosed,
        c_style_for: false,
        question: prev
            .filter(|t| matches!(t.1, Token::Question))
            .map(|t| Span::new(cx.file, t.0, t.2)),
    }
}

/// At most 24 characters of a token's text, for messages.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(24) {
        Some((i, _)) => format!("{}…", text.get(..i).unwrap_or("")),
        None => text.to_string(),
    }
}

fn unquote(raw: &str) -> &str {
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(raw)
}

/// `?` among them: it starts only C's conditional operator, which the
/// grammar reads to report it (so it is never worth listing alone).
const OPERATORS: [&str; 20] = [
    "||", "&&", "==", "!=", "<", "<=", ">", ">=", "|", "^", "&", "<<", ">>", "+", "-", "*", "/",
    "%", "as", "?",
];
const ASSIGN_OPERATORS: [&str; 11] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
];
const EXPRESSION_STARTS: [&str; 7] = ["Ident", "NumLit", "(", "-", "!", "true", "false"];
/// The tokens that start a statement (`#` an attribute of a `for` loop).
const STATEMENT_KEYWORDS: [&str; 11] = [
    "let", "if", "while", "for", "return", "break", "continue", "shared", "barrier", "accum", "#",
];
const ITEM_KEYWORDS: [&str; 4] = ["import", "const", "fn", "kernel"];
/// Shown before single tokens, in this order.
const WORDS: [&str; 7] = [
    "item",
    "statement",
    "expression",
    "identifier",
    "number literal",
    "string literal",
    "end of file",
];
/// Longer lists end in `…`.
const MAX_EXPECTED: usize = 6;

/// LALRPOP's terminal names (`"\";\""`, `"Ident"`) as a short readable
/// list: whole groups collapse into one word.
fn readable(raw: &[String]) -> Vec<String> {
    let mut set: BTreeSet<&str> = raw.iter().map(|r| unquote(r)).collect();
    let mut words: BTreeSet<&'static str> = BTreeSet::new();
    // After an operand every binary operator fits: "an operator". A few
    // operators alone are an artefact of the LR automaton having already
    // reduced part of the expression; listing them would only confuse.
    let mut operator = OPERATORS.iter().filter(|o| set.contains(*o)).count() >= 5;
    // After the place of an assignment, likewise.
    if ASSIGN_OPERATORS.iter().filter(|o| set.contains(*o)).count() >= 5 {
        set.retain(|t| !ASSIGN_OPERATORS.contains(t));
        operator = true;
    }
    // After an identifier in a call's arguments `=` (a named argument,
    // `order = acquire`) fits too; "an operator" stands for it.
    if operator {
        set.remove("=");
    }
    // In a type's place `[` starts only a register array's type, which
    // few places take (a `let`'s; E0444 elsewhere): not worth listing.
    if set.contains("global") && set.contains("Ident") {
        set.remove("[");
    }
    // After a type's name `mut` and `[` would go on to a tensor type
    // (`tensor mut [bf16; 64]`): a continuation of a rare form, where the
    // type usually ended.
    if set.contains("mut") && set.contains("[") && !set.contains("global") {
        set.remove("mut");
        set.remove("[");
    }
    let starts_expression = EXPRESSION_STARTS.iter().all(|t| set.contains(t));
    set.retain(|t| !OPERATORS.contains(t) || (*t == "-" && starts_expression));
    if starts_expression {
        set.retain(|t| !EXPRESSION_STARTS.contains(t) && *t != "if");
        words.insert("expression");
    }
    if ["let", "while", "for"].iter().all(|t| set.contains(t)) {
        set.retain(|t| !STATEMENT_KEYWORDS.contains(t) && *t != ";");
        words.remove("expression");
        words.insert("statement");
    }
    if ITEM_KEYWORDS.iter().all(|t| set.contains(t)) {
        set.retain(|t| !ITEM_KEYWORDS.contains(t));
        words.insert("item");
    }
    for (name, word) in [
        ("Ident", "identifier"),
        ("NumLit", "number literal"),
        ("StrLit", "string literal"),
        ("EOF", "end of file"),
    ] {
        if set.remove(name) {
            words.insert(word);
        }
    }
    let mut out: Vec<String> = WORDS
        .iter()
        .filter(|w| words.contains(*w))
        .map(|w| w.to_string())
        .collect();
    out.extend(set.iter().map(|t| format!("`{t}`")));
    if operator {
        out.push("an operator".to_string());
    }
    if out.len() > MAX_EXPECTED {
        out.truncate(MAX_EXPECTED);
        out.push("…".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One parse by either driver: the tree (or error), the errors judged
    /// as they came, and the nesting errors, as text.
    fn run(text: &str, lalrpop: bool) -> String {
        let (tokens, lexed) = super::super::lexer::lex(FileId(0), text);
        let cx = Context {
            file: FileId(0),
            text,
            tokens: &tokens,
            open_brackets: std::cell::OnceCell::new(),
            stretches: std::cell::OnceCell::new(),
        };
        let mut recovery = Recovery::new(cx, (&lexed.gaps, &lexed.misread), None);
        let mut depth = super::super::depth::Guard::default();
        let input = tokens.iter().cloned().map(Ok::<_, Infallible>);
        let result = if lalrpop {
            grammar::lalrpop::FileParser::new().parse(FileId(0), &mut recovery, &mut depth, input)
        } else {
            grammar::FileParser::new().parse(FileId(0), &mut recovery, &mut depth, input)
        };
        let result = match result {
            Ok(tree) => format!("{tree:?}"),
            Err(e) => format!("error {e:?}"),
        };
        let found = recovery.finish();
        format!(
            "{result}\n{:?}\n{}\n{:?}\n{:?}",
            found.kept, found.count, found.misread, depth.found
        )
    }

    /// Every program of the repository, and variants of each with a token
    /// deleted, doubled, replaced or moved, and inputs built to stress
    /// recovery: kdsl's driver and LALRPOP's agree on all of them.
    #[test]
    fn the_driver_parses_as_lalrpops_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<String> = Vec::new();
        for dir in ["tests/ui", "tests/valid", "samples", "tests/sim/broken"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.extension().is_some_and(|e| e == "kdsl") {
                    texts.extend(std::fs::read_to_string(&p).ok());
                }
            }
        }
        assert!(texts.len() > 100, "{} programs", texts.len());
        let k = "kernel k(out: global mut [u32], x: u32) block(32) {\n";
        for n in [1, 2, 17, 40] {
            texts.push(format!("{k}{}\n}}\n", "{".repeat(n)));
            texts.push(format!(
                "{k}    out[0] = {} ) {} 1;\n}}\n",
                "!".repeat(n),
                "!".repeat(n)
            ));
            texts.push(format!("{k}{}}}\n", ");\n".repeat(n)));
            texts.push("fn)".repeat(n));
            texts.push(format!("{k}    out[0] = {}x @ ;\n}}\n", "-!".repeat(n)));
            texts.push(format!(
                "{k}    out[0] = {}1{};\n}}\n",
                "(".repeat(n),
                "]".repeat(n)
            ));
        }
        // A fixed linear congruential generator: the same variants each run.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n.max(1)
        };
        let pieces = [
            "{", "}", "(", ")", ";", "=", "if", "else", "let", "fn", "!", "+", "[", "]", ",", "x",
            "1", "for", "in", "..", "kernel", "#", ".", "<", "while", "return", "?", ":",
            "[f32; 4]", "[0.0; 2]",
        ];
        let mut variants = Vec::new();
        for text in &texts {
            let (tokens, _) = super::super::lexer::lex(FileId(0), text);
            if tokens.is_empty() {
                continue;
            }
            for _ in 0..12 {
                let (s, _, e) = tokens[next(tokens.len())];
                let piece = pieces[next(pieces.len())];
                let v = match next(4) {
                    0 => format!("{}{}", &text[..s], &text[e..]),
                    1 => format!("{}{}{}", &text[..e], &text[s..e], &text[e..]),
                    2 => format!("{}{piece}{}", &text[..s], &text[e..]),
                    _ => {
                        let (s2, _, e2) = tokens[next(tokens.len())];
                        let (a, b) = if s2 < s {
                            ((s2, e2), (s, e))
                        } else {
                            ((s, e), (s2, e2))
                        };
                        if a.1 > b.0 {
                            continue;
                        }
                        format!(
                            "{}{}{}{}{}",
                            &text[..a.0],
                            &text[b.0..b.1],
                            &text[a.1..b.0],
                            &text[a.0..a.1],
                            &text[b.1..]
                        )
                    }
                };
                variants.push(v);
            }
        }
        texts.extend(variants);
        for text in &texts {
            let ours = run(text, false);
            let theirs = run(text, true);
            assert!(
                ours == theirs,
                "the drivers differ on:\n{text}\nours:\n{ours}\nLALRPOP's:\n{theirs}"
            );
        }
    }

    fn raw(names: &[&str]) -> Vec<String> {
        names
            .iter()
            .map(|n| {
                if n.chars().all(char::is_alphanumeric) && n.starts_with(char::is_uppercase) {
                    n.to_string()
                } else {
                    format!("\"{n}\"")
                }
            })
            .collect()
    }

    #[test]
    fn terminal_names_become_readable() {
        assert_eq!(readable(&raw(&[";"])), vec!["`;`"]);
        assert_eq!(
            readable(&raw(&[")", ",", "Ident"])),
            vec!["identifier", "`)`", "`,`"]
        );
    }

    #[test]
    fn groups_collapse() {
        let mut names = EXPRESSION_STARTS.to_vec();
        names.push("if");
        assert_eq!(readable(&raw(&names)), vec!["expression"]);
        let mut after_operand = OPERATORS.to_vec();
        after_operand.extend([";", "."]);
        assert_eq!(
            readable(&raw(&after_operand)),
            vec!["`.`", "`;`", "an operator"]
        );
        assert_eq!(readable(&raw(&ITEM_KEYWORDS)), vec!["item"]);
    }

    #[test]
    fn long_lists_are_cut() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let r = readable(&raw(&names));
        assert_eq!(r.len(), MAX_EXPECTED + 1);
        assert_eq!(r.last().map(String::as_str), Some("…"));
    }

    #[test]
    fn innermost_open_bracket_ignores_stray_closers() {
        let (tokens, _) = super::super::lexer::lex(FileId(0), "{ ( ] ) [ ) x");
        let tops = innermost_open(&tokens);
        let spelled: Vec<Option<&str>> = tops.iter().map(|t| t.map(|(_, _, o)| o)).collect();
        // `]` is stray (nothing to close), `)` closes `(`, the last `)` is
        // stray and leaves `[` open.
        assert_eq!(
            spelled,
            [
                None,
                Some("{"),
                Some("("),
                Some("("),
                Some("{"),
                Some("["),
                Some("["),
                Some("[")
            ]
        );
        let (tokens, _) = super::super::lexer::lex(FileId(0), "{ [ ( }");
        // A `}` closes the brackets opened inside its block too.
        assert_eq!(innermost_open(&tokens).last(), Some(&None));
    }

    #[test]
    fn list_wording() {
        assert_eq!(list(&["`;`".to_string()]), "`;`");
        assert_eq!(
            list(&["`,`".to_string(), "`)`".to_string()]),
            "one of `,`, `)`"
        );
    }
}
