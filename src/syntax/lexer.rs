//! Source text → tokens, with logos.
//!
//! The lexer never stops: an unexpected character is reported and skipped,
//! an unterminated comment or string swallows the rest (of the file or the
//! line) and a malformed number becomes a zero literal, each with its error,
//! so the parser always sees a usable token stream.

use super::number::{self, Number, NumberError};
use crate::diagnostics::cap::Cap;
use crate::diagnostics::{Diagnostic, Severity};
use crate::span::{FileId, Span};
use logos::{FilterResult, Logos};
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexErrorKind)]
#[logos(extras = Interner)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\r\n]*")]
pub enum Token {
    // Keywords.
    #[token("kernel")]
    Kernel,
    #[token("fn")]
    Fn,
    #[token("const")]
    Const,
    #[token("let")]
    Let,
    #[token("mut")]
    Mut,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("step")]
    Step,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("return")]
    Return,
    #[token("shared")]
    Shared,
    #[token("barrier")]
    Barrier,
    #[token("accum")]
    Accum,
    #[token("global")]
    Global,
    #[token("true")]
    True,
    #[token("false")]
    False,
    #[token("as")]
    As,
    #[token("import")]
    Import,

    #[regex("[A-Za-z_][A-Za-z0-9_]*", |lex| lex.extras.intern(lex.slice()))]
    Ident(Arc<str>),
    /// Integer or float. The patterns take every letter and digit that
    /// follows (so `5u8` or `0b102` is one bad literal, not a number and a
    /// name); a fraction needs a digit after the dot, so `0..n` is a range.
    #[regex(r"[0-9][0-9A-Za-z_]*", lex_number)]
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9A-Za-z_]*", lex_number)]
    #[regex(r"[0-9][0-9_]*(\.[0-9][0-9_]*)?[eE][+-][0-9A-Za-z_]*", lex_number)]
    Number(Number),
    /// A string literal (only `import` takes one), escapes resolved.
    #[token("\"", lex_string)]
    Str(String),
    /// Never produced: its callback skips the (nested) comment or reports
    /// it unterminated. Logos needs a variant to hang the callback on.
    #[token("/*", block_comment)]
    BlockComment,

    // Punctuation.
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    /// `#`, which starts an attribute (`#[unroll]`).
    #[token("#")]
    Hash,
    /// `?`: no kdsl operator; the parser reads C's `c ? a : b` to say what
    /// to write instead.
    #[token("?")]
    Question,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("->")]
    Arrow,
    #[token("=")]
    Eq,
    #[token("+=")]
    PlusEq,
    #[token("-=")]
    MinusEq,
    #[token("*=")]
    StarEq,
    #[token("/=")]
    SlashEq,
    #[token("%=")]
    PercentEq,
    #[token("&=")]
    AmpEq,
    #[token("|=")]
    PipeEq,
    #[token("^=")]
    CaretEq,
    #[token("<<=")]
    ShlEq,
    #[token(">>=")]
    ShrEq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Amp,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("!")]
    Bang,
    #[token("<<")]
    Shl,
    #[token(">>")]
    Shr,
    #[token("==")]
    EqEq,
    #[token("!=")]
    Ne,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
}

impl Token {
    /// The fixed spelling of a keyword or punctuation token; `None` for
    /// identifiers and literals.
    pub fn spelling(&self) -> Option<&'static str> {
        use Token::*;
        Some(match self {
            Kernel => "kernel",
            Fn => "fn",
            Const => "const",
            Let => "let",
            Mut => "mut",
            If => "if",
            Else => "else",
            While => "while",
            For => "for",
            In => "in",
            Step => "step",
            Break => "break",
            Continue => "continue",
            Return => "return",
            Shared => "shared",
            Barrier => "barrier",
            Accum => "accum",
            Global => "global",
            True => "true",
            False => "false",
            As => "as",
            Import => "import",
            Ident(_) | Number(_) | Str(_) | BlockComment => return None,
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            Hash => "#",
            Question => "?",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Dot => ".",
            DotDot => "..",
            Arrow => "->",
            Eq => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            ShlEq => "<<=",
            ShrEq => ">>=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Bang => "!",
            Shl => "<<",
            Shr => ">>",
            EqEq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            AndAnd => "&&",
            OrOr => "||",
        })
    }

    /// What kind of token this is, for a token dump and for "found …" in
    /// syntax errors: `identifier`, `integer literal`, `keyword`, ….
    pub fn kind_name(&self) -> &'static str {
        match self {
            Token::Ident(_) => "identifier",
            Token::Number(Number::Int { .. } | Number::WideInt(_)) => "integer literal",
            Token::Number(Number::Invalid) => "number literal",
            Token::Number(Number::Float { .. }) => "float literal",
            Token::Str(_) => "string literal",
            Token::BlockComment => "comment",
            t if t.is_keyword() => "keyword",
            _ => "punctuation",
        }
    }

    pub fn is_keyword(&self) -> bool {
        self.spelling()
            .is_some_and(|s| s.starts_with(|c: char| c.is_ascii_alphabetic()))
    }
}

/// The token as it could be written back: `kernel`, `foo`, `16u32`,
/// `"a.kdsl"`, `<<=`.
impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(name) => f.write_str(name),
            Token::Number(n) => write!(f, "{n}"),
            Token::Str(s) => write!(f, "\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
            Token::BlockComment => f.write_str("/* */"),
            other => f.write_str(other.spelling().unwrap_or("?")),
        }
    }
}

/// What went wrong in the lexer (logos's error type).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LexErrorKind {
    /// A character no token starts with (logos's default error).
    #[default]
    UnexpectedChar,
    UnterminatedComment,
    /// A string literal without its closing quote on the same line; the
    /// text read so far is kept as the literal.
    UnterminatedString(String),
    /// A bad number literal.
    Number(NumberError),
}

/// A lexer error with the source it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub kind: LexErrorKind,
    /// The offending source: the character, the `/*`, the opening quote or
    /// the whole literal.
    pub span: Span,
    /// The character, for [`LexErrorKind::UnexpectedChar`].
    pub found: Option<char>,
}

impl LexError {
    /// The code [`LexError::into_diagnostic`] gives it.
    pub fn code(&self) -> &'static str {
        match self.kind {
            LexErrorKind::UnexpectedChar | LexErrorKind::UnterminatedString(_) => "E0001",
            LexErrorKind::UnterminatedComment => "E0002",
            LexErrorKind::Number(_) => "E0003",
        }
    }

    pub fn into_diagnostic(self) -> Diagnostic {
        match self.kind {
            LexErrorKind::UnexpectedChar => {
                let c = self.found.unwrap_or('\u{fffd}');
                Diagnostic::error("E0001", format!("unexpected character {c:?}"))
                    .primary(self.span, "no token starts with this character")
            }
            LexErrorKind::UnterminatedString(_) => {
                Diagnostic::error("E0001", format!("unexpected character {:?}", '"'))
                    .primary(self.span, "this string literal is never closed")
                    .help("close the string with `\"` before the end of the line")
            }
            LexErrorKind::UnterminatedComment => {
                Diagnostic::error("E0002", "unterminated block comment")
                    .primary(self.span, "this comment is never closed")
                    .note("block comments nest: every `/*` needs its own `*/`")
            }
            LexErrorKind::Number(NumberError::Invalid { why, help }) => {
                let d =
                    Diagnostic::error("E0003", "invalid number literal").primary(self.span, why);
                match help {
                    Some(h) => d.help(h),
                    None => d,
                }
            }
            LexErrorKind::Number(NumberError::OutOfRange(ty)) => {
                // The suffix's type, or `f64` for an unsuffixed float past
                // every `f64`: quote that type's own range.
                Diagnostic::error("E0003", format!("literal out of range for {}", ty.name()))
                    .primary(
                        self.span,
                        format!("this literal does not fit in `{}`", ty.name()),
                    )
                    .note(crate::types::literal_range_note(ty.name()))
            }
        }
    }
}

/// The names of one file, each stored once: every `Ident` token (and so
/// every AST name) with the same text shares one allocation, so a large
/// file's names cost a pointer each, not a string each.
#[derive(Default)]
pub struct Interner {
    names: HashSet<Arc<str>>,
}

impl Interner {
    fn intern(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.names.get(name) {
            return Arc::clone(known);
        }
        let new: Arc<str> = Arc::from(name);
        self.names.insert(Arc::clone(&new));
        new
    }
}

/// What the lexer found wrong in one file. A file can hold an error per
/// byte, so only the first [`cap::PER_CODE`] of each code are kept whole;
/// of all of them the parser and the pipeline keep what they need, each
/// bounded by the tokens or the lines of the file.
#[derive(Debug, Default)]
pub struct LexErrors {
    /// The errors shown, in source order.
    pub kept: Vec<LexError>,
    /// The count of the others, for "and N more".
    pub cap: Cap,
    /// Where an error may have swallowed a token the parser wanted (a
    /// skipped character or comment, the end of an unclosed string): the
    /// first such place between each two tokens, in source order.
    pub gaps: Vec<usize>,
    /// From the first error of each line to the line's end ([`Misread`]).
    ///
    /// [`Misread`]: crate::diagnostics::Misread
    pub misread: Vec<Span>,
}

impl LexErrors {
    fn push(&mut self, e: LexError, text: &str, tokens_before: usize, last_gap_tokens: &mut usize) {
        let gap = match e.kind {
            LexErrorKind::UnexpectedChar | LexErrorKind::UnterminatedComment => {
                Some(e.span.start as usize)
            }
            // The string token is pushed already: the place after it.
            LexErrorKind::UnterminatedString(_) => None,
            LexErrorKind::Number(_) => None,
        };
        if let Some(g) = gap {
            if self.gaps.is_empty() || *last_gap_tokens != tokens_before {
                self.gaps.push(g);
                *last_gap_tokens = tokens_before;
            }
        }
        let covered = self
            .misread
            .last()
            .is_some_and(|m| m.file == e.span.file && e.span.start < m.end);
        if !covered {
            let end = crate::source::next_line_start(text, e.span.start as usize);
            self.misread
                .push(Span::new(e.span.file, e.span.start as usize, end));
        }
        if self.cap.admit(e.code(), Severity::Error, Some(e.span)) {
            self.kept.push(e);
        }
    }

    /// The kept errors as diagnostics, then the "and N more".
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.cap
            .with_summaries(self.kept, LexError::into_diagnostic)
    }
}

/// Lexes a whole file: every token with its byte range, and the errors.
pub fn lex(file: FileId, text: &str) -> (Vec<(usize, Token, usize)>, LexErrors) {
    let mut tokens = Vec::new();
    let mut errors = LexErrors::default();
    let mut last_gap_tokens = 0;
    let mut lexer = Token::lexer(text);
    // A byte-order mark is not a token; spans keep counting from the file's
    // first byte.
    if text.starts_with(crate::source::BOM) {
        lexer.bump(crate::source::BOM.len_utf8());
    }
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let (start, end) = (range.start, range.end);
        match result {
            Ok(token) => tokens.push((start, token, end)),
            Err(kind) => {
                let (span, found) = error_span(file, text, &kind, start, end);
                match &kind {
                    // The literal still stands where it was written.
                    LexErrorKind::Number(_) => {
                        tokens.push((start, Token::Number(Number::Invalid), end));
                    }
                    LexErrorKind::UnterminatedString(partial) => {
                        tokens.push((start, Token::Str(partial.clone()), end));
                        // What the string swallowed may be what the parser
                        // wanted after it.
                        errors.gaps.push(end);
                        last_gap_tokens = tokens.len();
                    }
                    LexErrorKind::UnexpectedChar | LexErrorKind::UnterminatedComment => {}
                }
                let e = LexError { kind, span, found };
                errors.push(e, text, tokens.len(), &mut last_gap_tokens);
            }
        }
    }
    (tokens, errors)
}

/// Where to point an error: one character for an unexpected character (logos
/// may report a longer run), the `/*` or `"` for unterminated ones.
fn error_span(
    file: FileId,
    text: &str,
    kind: &LexErrorKind,
    start: usize,
    end: usize,
) -> (Span, Option<char>) {
    match kind {
        LexErrorKind::UnexpectedChar => {
            let c = text.get(start..).and_then(|s| s.chars().next());
            let len = c.map_or(0, char::len_utf8);
            (Span::new(file, start, start + len), c)
        }
        LexErrorKind::UnterminatedComment => (Span::new(file, start, start + 2), None),
        LexErrorKind::UnterminatedString(_) => (Span::new(file, start, start + 1), None),
        LexErrorKind::Number(_) => (Span::new(file, start, end), None),
    }
}

fn lex_number(lex: &mut logos::Lexer<Token>) -> Result<Number, LexErrorKind> {
    number::parse(lex.slice()).map_err(LexErrorKind::Number)
}

/// After `"`: reads to the closing quote, resolving `\"` and `\\` (and `\n`,
/// `\t`; any other backslash is kept as written, so Windows-style paths
/// work). A string ends at the line's end at the latest.
fn lex_string(lex: &mut logos::Lexer<Token>) -> Result<String, LexErrorKind> {
    let mut value = String::new();
    let mut chars = lex.remainder().char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return Ok(value);
            }
            '\n' | '\r' => {
                lex.bump(i);
                return Err(LexErrorKind::UnterminatedString(value));
            }
            '\\' => match chars.peek().map(|&(_, c)| c) {
                Some(e @ ('"' | '\\')) => {
                    value.push(e);
                    chars.next();
                }
                Some('n') => {
                    value.push('\n');
                    chars.next();
                }
                Some('t') => {
                    value.push('\t');
                    chars.next();
                }
                _ => value.push('\\'),
            },
            c => value.push(c),
        }
    }
    lex.bump(lex.remainder().len());
    Err(LexErrorKind::UnterminatedString(value))
}

/// After `/*`: skips to the matching `*/`, counting nested `/*`.
fn block_comment(lex: &mut logos::Lexer<Token>) -> FilterResult<(), LexErrorKind> {
    let rest = lex.remainder();
    let bytes = rest.as_bytes();
    let mut depth = 1usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let next = bytes.get(i + 1).copied();
        if b == b'/' && next == Some(b'*') {
            depth += 1;
            i += 2;
        } else if b == b'*' && next == Some(b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                lex.bump(i);
                return FilterResult::Skip;
            }
        } else {
            i += 1;
        }
    }
    // `/` and `*` are ASCII, so `rest.len()` is a char boundary.
    lex.bump(rest.len());
    FilterResult::Error(LexErrorKind::UnterminatedComment)
}

#[cfg(test)]
mod tests {
    use super::number::FloatLit;
    use super::*;
    use crate::types::Scalar;

    fn kinds(text: &str) -> Vec<Token> {
        lex(FileId(0), text)
            .0
            .into_iter()
            .map(|(_, t, _)| t)
            .collect()
    }

    fn errors(text: &str) -> Vec<(LexErrorKind, u32, u32)> {
        lex(FileId(0), text)
            .1
            .kept
            .into_iter()
            .map(|e| (e.kind, e.span.start, e.span.end))
            .collect()
    }

    fn int(value: u64) -> Token {
        Token::Number(Number::Int {
            value,
            suffix: None,
        })
    }

    #[test]
    fn keywords_identifiers_and_punctuation() {
        assert_eq!(
            kinds("kernel block cta(x) <<= .. -> _a1"),
            vec![
                Token::Kernel,
                Token::Ident("block".into()),
                Token::Ident("cta".into()),
                Token::LParen,
                Token::Ident("x".into()),
                Token::RParen,
                Token::ShlEq,
                Token::DotDot,
                Token::Arrow,
                Token::Ident("_a1".into()),
            ]
        );
    }

    #[test]
    fn ranges_are_not_floats() {
        assert_eq!(
            kinds("0..n 1..8u32 1.5"),
            vec![
                int(0),
                Token::DotDot,
                Token::Ident("n".into()),
                int(1),
                Token::DotDot,
                Token::Number(Number::Int {
                    value: 8,
                    suffix: Some(Scalar::U32)
                }),
                Token::Number(Number::Float {
                    value: FloatLit::exact(1.5),
                    suffix: None
                }),
            ]
        );
    }

    #[test]
    fn exponents_and_hex() {
        assert_eq!(
            kinds("1e-3 2.5e+4 0x1e+5"),
            vec![
                Token::Number(Number::Float {
                    value: FloatLit::exact(1e-3),
                    suffix: None
                }),
                Token::Number(Number::Float {
                    value: FloatLit::exact(2.5e4),
                    suffix: None
                }),
                int(0x1e),
                Token::Plus,
                int(5),
            ]
        );
    }

    #[test]
    fn comments_nest() {
        assert_eq!(kinds("a /* x /* y */ z */ b // c\nd"), kinds("a b d"));
        assert!(errors("a /* /* */ */ b").is_empty());
    }

    #[test]
    fn unterminated_comment_points_at_its_start() {
        assert_eq!(
            errors("a /* /* */ b"),
            vec![(LexErrorKind::UnterminatedComment, 2, 4)]
        );
        assert_eq!(kinds("a /* /* */ b"), vec![Token::Ident("a".into())]);
    }

    #[test]
    fn unexpected_characters_are_skipped_one_by_one() {
        assert_eq!(
            errors("a $é b"),
            vec![
                (LexErrorKind::UnexpectedChar, 2, 3),
                (LexErrorKind::UnexpectedChar, 3, 5)
            ]
        );
        assert_eq!(kinds("a $é b"), kinds("a b"));
        let (_, errs) = lex(FileId(0), "`");
        assert_eq!(errs.kept.first().and_then(|e| e.found), Some('`'));
    }

    #[test]
    fn strings() {
        assert_eq!(
            kinds(r#""a\"b\\c.kdsl""#),
            vec![Token::Str("a\"b\\c.kdsl".into())]
        );
        assert_eq!(
            kinds(r#""dir\x.kdsl""#),
            vec![Token::Str("dir\\x.kdsl".into())]
        );
        assert_eq!(
            errors("import \"abc\n;"),
            vec![(LexErrorKind::UnterminatedString("abc".into()), 7, 8)]
        );
        assert_eq!(
            kinds("import \"abc\n;"),
            vec![Token::Import, Token::Str("abc".into()), Token::Semi]
        );
    }

    #[test]
    fn bad_numbers_still_make_tokens() {
        let (tokens, errs) = lex(FileId(0), "x = 0b102 + 1.5u32;");
        let errs = errs.kept;
        assert_eq!(tokens.len(), 6);
        assert_eq!(errs.len(), 2);
        assert_eq!(tokens.get(2), Some(&(4, Token::Number(Number::Invalid), 9)));
        assert_eq!(
            tokens.get(4),
            Some(&(12, Token::Number(Number::Invalid), 18))
        );
        assert_eq!(
            errs.first().map(|e| (e.span.start, e.span.end)),
            Some((4, 9))
        );
    }

    #[test]
    fn display_writes_tokens_back() {
        let text = "kernel k(x: global mut [f32]) { let a = 16u32 <<= \"p.kdsl\"; }";
        let written: Vec<String> = kinds(text).iter().map(ToString::to_string).collect();
        assert_eq!(kinds(&written.join(" ")), kinds(text));
    }
}
