//! What the parser needs to explain an error: the file, its text and its
//! tokens, and the questions asked of them (the token before an error,
//! unclosed brackets, whether two errors lie on one stretch of a line).

use super::LalrpopError;
use crate::span::{FileId, Span};
use crate::syntax::lexer::Token;

/// What the parser needs to explain an error: the file, its text and its
/// tokens (to find the token before an error and unclosed brackets).
pub(super) struct Context<'a> {
    pub(super) file: FileId,
    pub(super) text: &'a str,
    pub(super) tokens: &'a [(usize, Token, usize)],
    /// See [`innermost_open`]: computed when the first error asks (a file
    /// without syntax errors never needs it, and it takes as many entries
    /// as the file has tokens).
    pub(super) open_brackets: std::cell::OnceCell<OpenBrackets>,
    /// See [`Stretches`]: computed when the first error asks.
    pub(super) stretches: std::cell::OnceCell<Stretches>,
}

impl Context<'_> {
    /// True when nothing separates the bytes `from` and `to`: no line break
    /// and no `;` or `}`. A second syntax error there is most likely the
    /// parser stumbling over the rest of the first one (`let x = a b c;`).
    /// Constant time per question after one pass over the tokens (a long
    /// line of errors asks once per error).
    pub(super) fn same_stretch(&self, from: usize, to: usize) -> bool {
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
    pub(super) fn token_before(&self, at: usize) -> Option<&(usize, Token, usize)> {
        let i = self.tokens.partition_point(|t| t.0 < at);
        i.checked_sub(1).and_then(|i| self.tokens.get(i))
    }

    /// The stretch of text between the token before the error and the error
    /// itself, where a skipped character would explain it.
    pub(super) fn gap_before(&self, e: &LalrpopError) -> (usize, usize) {
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
    pub(super) fn unclosed_bracket(&self, until: usize) -> Option<(Span, &'static str)> {
        let i = self.tokens.partition_point(|t| t.0 < until);
        let tops = self
            .open_brackets
            .get_or_init(|| innermost_open(self.tokens));
        let &(s, e, open) = tops.get(i)?.as_ref()?;
        Some((Span::new(self.file, s, e), open))
    }
}

/// Prefix counts over the tokens for [`Context::same_stretch`].
pub(super) struct Stretches {
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
pub(super) type OpenBrackets = Vec<Option<(usize, usize, &'static str)>>;

/// For each token index `i`, the innermost bracket still open after the
/// tokens before `i` (one pass, so that every error can ask cheaply).
pub(super) fn innermost_open(tokens: &[(usize, Token, usize)]) -> OpenBrackets {
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
