//! Names and types: AST → IR.
//!
//! [`check_with_references`] first collects the items of every file (constants, which it
//! evaluates, and function signatures) into [`Globals`], then checks each
//! function and kernel body with a [`body::BodyChecker`], which resolves
//! names, types every expression (untyped literals take the type their
//! context wants) and lowers to IR in the same walk. Errors are collected, not
//! returned early: a body with an error still gets checked to the end, and an
//! expression whose check failed is `None`, which silences the errors that
//! would only follow from it.

mod barrier_ops;
mod body;
mod calls;
pub mod error;
mod exprs;
mod globals;
mod kernel;
mod literals;
mod places;
mod stmts;
mod values;

use crate::diagnostics::Diagnostic;
use crate::ir::{self, FuncId};
use crate::source::SourceMap;
use crate::span::FileId;
use crate::syntax::ast;
use crate::target::Target;
pub use error::CheckError;
pub use globals::Globals;

/// A use of a name and the span of the name's definition (for go-to-definition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    pub span: crate::span::Span,
    pub definition: crate::span::Span,
}

/// Everything the checker learns: the IR, diagnostics, and where each used
/// name is defined.
#[derive(Debug, Default)]
pub struct CheckOutput {
    pub module: Option<ir::Module>,
    pub diagnostics: Vec<Diagnostic>,
    pub references: Vec<Reference>,
}

/// Checks every file (the root first) and lowers the root's kernels and the
/// functions they use to IR, recording where each used name is defined. The
/// module may be partial when there are errors and must then not be used
/// for code generation.
pub fn check_with_references(
    sources: &SourceMap,
    files: &[(FileId, ast::File)],
    target: Target,
) -> CheckOutput {
    let mut diags = Vec::new();
    let mut references = Vec::new();
    let globals = Globals::collect(sources, files, &mut diags);

    let mut module = ir::Module::default();
    let mut calls: Vec<Vec<(FuncId, crate::span::Span)>> = Vec::new();
    for (id, item) in globals.functions.iter().enumerate() {
        let (func, callees) = body::check_function(
            &globals,
            sources,
            target,
            FuncId(id as u32),
            item,
            &mut diags,
            &mut references,
        );
        module.functions.push(func);
        calls.push(callees);
    }
    let mut kernel_calls = Vec::new();
    let root = files.first().map(|(id, _)| *id);
    for (file, ast_file) in files {
        if Some(*file) != root {
            continue;
        }
        for item in &ast_file.items {
            if let ast::Item::Kernel(k) = item {
                let (kernel, callees) =
                    kernel::check_kernel(&globals, sources, target, k, &mut diags, &mut references);
                module.kernels.push(kernel);
                kernel_calls.extend(callees);
            }
        }
    }
    globals.check_kernel_names(files, &mut diags);
    module.function_order = globals::call_order(&globals, &calls, &kernel_calls, &mut diags);
    CheckOutput {
        module: Some(module),
        diagnostics: diags,
        references,
    }
}
