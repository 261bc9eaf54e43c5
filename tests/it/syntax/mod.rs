//! The front end: source text → tokens → AST, syntax errors and the
//! nesting limit.

mod depth;
mod parser;
