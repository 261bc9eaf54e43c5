//! Source text → tokens → AST.

pub mod ast;

use crate::diagnostics::Diagnostic;
use crate::span::FileId;

/// Parses one file. Always returns a tree: where the parser recovered from a
/// syntax error the tree holds `Error` nodes and the error is in the list.
pub fn parse(_file: FileId, _text: &str) -> (ast::File, Vec<Diagnostic>) {
    (ast::File::default(), Vec::new())
}
