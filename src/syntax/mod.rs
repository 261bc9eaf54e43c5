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
mod lr;
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
    let parsed = parse_parts(file, text);
    let mut diags = parsed.misread;
    diags.extend(parsed.too_deep);
    (parsed.tree, diagnostics::cap::limit(diags))
}

/// A parsed file with its diagnostics by kind.
pub struct Parsed {
    pub tree: ast::File,
    /// Lexer and parser errors (the first [`diagnostics::cap::PER_CODE`] of
    /// each code, then an "and N more"): where the parser recovered, what
    /// follows on the line may have been misread.
    pub misread: Vec<Diagnostic>,
    /// From each of those errors, shown or not, to the end of its line.
    pub misread_lines: Vec<Span>,
    /// Constructs past the nesting limit (E0124): read correctly, and not
    /// checked.
    pub too_deep: Vec<Diagnostic>,
}

/// [`parse`], keeping the two kinds of diagnostics apart.
pub fn parse_parts(file: FileId, text: &str) -> Parsed {
    crate::stack::with_big_stack(|| parse_here(file, text))
}

fn parse_here(file: FileId, text: &str) -> Parsed {
    let (tokens, mut lex_errors) = lexer::lex(file, text);
    let gaps = std::mem::take(&mut lex_errors.gaps);
    let lexed_lines = std::mem::take(&mut lex_errors.misread);
    let (tree, mut parse_errors, too_deep) =
        parser::parse_tokens(file, text, &tokens, (&gaps, &lexed_lines));
    drop(tokens);
    // The parser took the lexer's lines in, each extended to the start of
    // the statement that holds it.
    let misread_lines = std::mem::take(&mut parse_errors.misread);
    let mut misread = lex_errors.into_diagnostics();
    misread.extend(parse_errors.into_diagnostics());
    diagnostics::sort(&mut misread);
    Parsed {
        tree,
        misread,
        misread_lines,
        too_deep: too_deep
            .into_iter()
            .map(depth::TooDeep::into_diagnostic)
            .collect(),
    }
}

/// The tokens of one file with their spans (`--emit tokens`), and the
/// lexer's errors. Comments and whitespace are not tokens.
pub fn tokens(file: FileId, text: &str) -> (Vec<(Span, Token)>, Vec<Diagnostic>) {
    let (tokens, errors) = lexer::lex(file, text);
    let tokens = tokens
        .into_iter()
        .map(|(s, t, e)| (Span::new(file, s, e), t))
        .collect();
    (tokens, errors.into_diagnostics())
}
