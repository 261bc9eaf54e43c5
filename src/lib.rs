//! kdsl: a small language for NVIDIA GPU kernels, and its compiler.
//!
//! The pipeline, one module per stage (see `docs/architecture.md`):
//!
//! ```text
//! source ──syntax::lexer──▶ tokens ──syntax::parser──▶ AST (syntax::ast)
//!        ──check──▶ IR (ir) ──analysis──▶ facts (analysis::ModuleInfo)
//!        ──barriers──▶ checked IR ──ptx (IR + facts)──▶ PTX text
//! ```
//!
//! Every stage reports problems as its own error type, turned into a
//! [`diagnostics::Diagnostic`] in that stage's module; [`compile`] collects
//! them all, every independent error in one run and none that only follows
//! from another: the checker runs on a partly broken AST (error nodes are
//! skipped silently), the barrier pass on whatever checked (statements that
//! failed are left out of the IR or kept as [`ir::StmtKind::Poisoned`]), and
//! the PTX writer only when there are no errors at all.
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

pub mod analysis;
pub mod barriers;
pub mod check;
pub mod diagnostics;
pub mod driver;
pub mod fp;
pub mod fp8;
pub mod header;
pub mod host;
pub mod input;
pub mod ir;
pub mod launch;
pub mod lsp;
pub mod manifest;
pub mod operator;
pub mod opt;
pub mod ptx;
pub mod sim;
pub mod source;
pub mod span;
pub mod stack;
pub mod syntax;
pub mod target;
pub mod types;
pub mod warpgroup;

mod pipeline;

pub use pipeline::{compile, compile_str, Compilation, Options};
