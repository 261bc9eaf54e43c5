//! Tokens → AST: runs the LALRPOP parser generated from
//! `grammar/kdsl.lalrpop` and turns its errors into diagnostics.
//!
//! [`from_lalrpop`](convert::from_lalrpop) is the one place where
//! LALRPOP's errors become ours: terminal names become readable (`";"` →
//! `` `;` ``, `Ident` → `identifier`), groups of them collapse
//! (`expression`, `an operator`), and a missing `;` gets a fix.
//!
//! This file runs the parser (and checks a missing token's fix by parsing
//! again); `parser/recovery.rs` judges each error as the grammar recovers
//! from it, `parser/context.rs` answers its questions about the tokens
//! around an error, `parser/convert.rs` converts LALRPOP's errors, and
//! `parser/error.rs` holds [`ParseError`] and its wording.

mod context;
mod convert;
mod error;
mod recovery;
#[cfg(test)]
mod tests;

use super::lexer::Token;
use crate::diagnostics::cap::Cap;
use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use crate::syntax::ast;
use context::Context;
use std::convert::Infallible;

pub use error::ParseError;
pub use recovery::Recovery;

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
