//! PTX text → a module AST: the lexer and parser of the PTX `kdslc` and
//! `nvcc` write (see [`parser`] for the accepted syntax).

pub mod ast;
pub mod lexer;
pub mod parser;
