//! Source text → tokens → AST.
//!
//! [`lexer`] turns text into tokens (logos), [`parser`] runs the LALRPOP
//! parser generated from `grammar/kdsl.lalrpop`. Both recover from errors:
//! the lexer skips what it cannot read, the parser replaces what it cannot
//! parse with `Error` nodes, so one run reports every syntax error.

pub mod ast;
mod build;
pub mod depth;
pub mod dump;
pub mod lexer;
pub mod number;
mod parser;

pub use lexer::Token;

use crate::diagnostics::{self, Diagnostic};
use crate::span::{FileId, Span};

/// Parses one file. Always returns a tree: where the parser recovered from a
/// syntax error the tree holds `Error` nodes and the error is in the list.
/// It runs on the big stack ([`crate::stack`]): a parse that fails drops
/// the partial trees it built, which may nest as deep as the limit.
pub fn parse(file: FileId, text: &str) -> (ast::File, Vec<Diagnostic>) {
    crate::stack::with_big_stack(|| parse_here(file, text))
}

fn parse_here(file: FileId, text: &str) -> (ast::File, Vec<Diagnostic>) {
    let (tokens, lex_errors) = lexer::lex(file, text);
    let (tree, parse_errors, too_deep) = parser::parse_tokens(file, text, &tokens, &lex_errors);
    let mut diags: Vec<Diagnostic> = lex_errors
        .into_iter()
        .map(lexer::LexError::into_diagnostic)
        .collect();
    diags.extend(
        parse_errors
            .into_iter()
            .map(parser::ParseError::into_diagnostic),
    );
    diags.extend(too_deep.into_iter().map(depth::TooDeep::into_diagnostic));
    diagnostics::sort(&mut diags);
    (tree, diags)
}

/// The tokens of one file with their spans (`--emit tokens`), and the
/// lexer's errors. Comments and whitespace are not tokens.
pub fn tokens(file: FileId, text: &str) -> (Vec<(Span, Token)>, Vec<Diagnostic>) {
    let (tokens, errors) = lexer::lex(file, text);
    let tokens = tokens
        .into_iter()
        .map(|(s, t, e)| (Span::new(file, s, e), t))
        .collect();
    (
        tokens,
        errors
            .into_iter()
            .map(lexer::LexError::into_diagnostic)
            .collect(),
    )
}
