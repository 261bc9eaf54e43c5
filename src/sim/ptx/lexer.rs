//! PTX text → tokens, with logos. Comments and whitespace are skipped; a
//! character outside PTX's alphabet becomes an `Error` token that the parser
//! reports with its line.

use logos::Logos;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Tok {
    /// Never produced: its callback skips a `/* ... */` comment (an
    /// unterminated one is an error token).
    #[token("/*", block_comment)]
    BlockComment,
    /// A name: `add`, `%r1`, `$L__BB0_2`, `_Z3foo`.
    #[regex(r"[A-Za-z][A-Za-z0-9_$]*")]
    #[regex(r"[_$%][A-Za-z0-9_$]+")]
    Ident,
    /// A dotted word: a directive (`.reg`), a modifier (`.f32`,
    /// `.shared::cta`, `.mbarrier::complete_tx::bytes`) or a vector
    /// component (`.x`).
    #[regex(r"\.[A-Za-z0-9_][A-Za-z0-9_]*(::[A-Za-z0-9_]+)*")]
    Dot,
    #[regex(r"[0-9]+U?")]
    Dec,
    #[regex(r"0[xX][0-9a-fA-F]+U?")]
    Hex,
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    F32,
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    F64,
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    Decimal,
    #[regex(r#""[^"\n]*""#)]
    Str,
    #[token("_")]
    Sink,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("!")]
    Bang,
    #[token("|")]
    Pipe,
    #[token("@")]
    At,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("=")]
    Eq,
    /// Anything else (never produced by logos itself; see [`lex`]).
    Error,
}

fn block_comment(lex: &mut logos::Lexer<Tok>) -> logos::FilterResult<(), ()> {
    match lex.remainder().find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            logos::FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            logos::FilterResult::Error(())
        }
    }
}

/// A token with its byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub start: u32,
    pub end: u32,
}

/// Every token of `text`, an unrecognised character as [`Tok::Error`].
pub fn lex(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut lexer = Tok::lexer(text);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        out.push(Token {
            tok: result.unwrap_or(Tok::Error),
            start: span.start as u32,
            end: span.end as u32,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Tok> {
        lex(text).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn opcodes_modifiers_and_immediates() {
        assert_eq!(
            kinds("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2+-8], 0f3F800000;"),
            vec![
                Tok::Ident,
                Tok::Dot,
                Tok::Dot,
                Tok::Dot,
                Tok::Dot,
                Tok::Ident,
                Tok::Comma,
                Tok::LBracket,
                Tok::Ident,
                Tok::Plus,
                Tok::Minus,
                Tok::Dec,
                Tok::RBracket,
                Tok::Comma,
                Tok::F32,
                Tok::Semi
            ]
        );
        assert_eq!(
            kinds("_ $L__BB0_2: 0x1f 1.5 0d3FF0000000000000"),
            vec![
                Tok::Sink,
                Tok::Ident,
                Tok::Colon,
                Tok::Hex,
                Tok::Decimal,
                Tok::F64
            ]
        );
        assert_eq!(
            kinds("/* c */ // x\n\"a.cu\" ~"),
            vec![Tok::Str, Tok::Error]
        );
    }
}
