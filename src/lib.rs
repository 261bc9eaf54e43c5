//! kdsl: a small language for NVIDIA GPU kernels, and its compiler.
//!
//! The pipeline, one module per stage (see `docs/architecture.md`):
//!
//! ```text
//! source ──syntax::lexer──▶ tokens ──syntax::parser──▶ AST (syntax::ast)
//!        ──check──▶ IR (ir) ──barriers──▶ checked IR ──ptx──▶ PTX text
//! ```
//!
//! Every stage reports problems as its own error type, turned into a
//! [`diagnostics::Diagnostic`] in that stage's module; [`compile`] collects
//! them all. A stage runs only on input that the earlier stages accepted well
//! enough: the checker runs on a partly broken AST (error nodes are skipped
//! silently), the barrier pass only on a module that checked, and the PTX
//! writer only when there are no errors at all.
//!
//! The crate never panics on any input: `unwrap`, `expect` and slice
//! indexing are denied outside tests.

#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod barriers;
pub mod check;
pub mod diagnostics;
pub mod driver;
pub mod ir;
pub mod launch;
pub mod lsp;
pub mod ptx;
pub mod sim;
pub mod source;
pub mod span;
pub mod syntax;
pub mod target;
pub mod types;

mod pipeline;

pub use pipeline::{compile, compile_str, Compilation, Options};
