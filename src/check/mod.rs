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
//!
//! Three checks need facts of the lowered body that the analysis computes
//! (`crate::analysis::values`): zero divisors in the runs of loops over
//! constant lists (E0117), the alignment of vector accesses (E0148,
//! W0325) and the constant indices of register arrays (E0440, E0441).
//! [`after_analysis`] runs them on the analysed module.

mod accum;
mod args;
pub mod arrays;
mod atomics;
mod barrier_ops;
mod body;
pub mod builtins;
mod calls;
mod cycles;
mod divisors;
pub mod error;
mod exprs;
mod globals;
pub mod instances;
mod kernel;
mod literals;
mod matrix;
mod named;
mod places;
mod stmts;
mod tensor;
mod values;
mod vector;

use crate::diagnostics::{Diagnostic, Diags};
use crate::ir::{self, FuncId};
use crate::source::SourceMap;
use crate::span::FileId;
use crate::syntax::ast;
use crate::target::Target;
pub use error::CheckError;
pub use globals::Globals;

/// The checker's diagnostics that read the analysis' facts of the lowered
/// module (partial or not): zero divisors (E0117), the alignment of
/// vector and matrix accesses (E0148, W0325, E0432, W0432), whether
/// every lane of a warp runs each matrix access (E0434), and the indices
/// of register arrays (E0440, E0441).
pub fn after_analysis(module: &ir::Module, info: &crate::analysis::ModuleInfo) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (f, fi) in module.functions.iter().zip(&info.functions) {
        found.extend(divisors::zero_divisors(&f.body, &fi.body.values));
        found.extend(vector::alignment(&f.body, &[], &fi.body.values));
        found.extend(arrays::register_indices(&f.body, &fi.body.values));
    }
    let mut all: Vec<Diagnostic> = found.into_iter().map(CheckError::into_diagnostic).collect();
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        all.extend(after_analysis_kernel(k, ki));
    }
    all
}

/// [`after_analysis`] of one kernel.
pub fn after_analysis_kernel(k: &ir::Kernel, ki: &crate::analysis::KernelInfo) -> Vec<Diagnostic> {
    let mut found = divisors::zero_divisors(&k.body, &ki.body.values);
    found.extend(vector::alignment(&k.body, &k.shared, &ki.body.values));
    found.extend(arrays::register_indices(&k.body, &ki.body.values));
    found.extend(matrix::convergence(k, &ki.body));
    found.into_iter().map(CheckError::into_diagnostic).collect()
}

/// A use of a name and what it names (for go-to-definition and hover).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference {
    pub span: crate::span::Span,
    pub to: Referent,
}

/// What a used name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Referent {
    /// Something the program declares, by the span of its definition.
    Definition(crate::span::Span),
    /// A built-in of [`builtins::BUILTINS`].
    Builtin(builtins::Builtin),
}

/// Everything the checker learns: the IR, diagnostics, and where each used
/// name is defined.
#[derive(Debug, Default)]
pub struct CheckOutput {
    /// The lowered IR; partial when there are errors (see
    /// [`ir::StmtKind::Poisoned`]).
    pub module: ir::Module,
    /// Capped ([`crate::diagnostics::cap`]); empty from [`check_into`],
    /// which leaves them in the list it is given.
    pub diagnostics: Vec<Diagnostic>,
    pub references: Vec<Reference>,
    /// The checker's diagnostics of each instantiation of a kernel with
    /// constants, by its index in `module.kernels`: they are merged with
    /// the later stages' and reported once each ([`instances::merge`]).
    pub instance_diags: Vec<(usize, Vec<Diagnostic>)>,
    /// A `--const` that no kernel can take: a usage error (nothing is
    /// checked then).
    pub usage: Option<String>,
}

/// Checks every file (the root first) and lowers the root's kernels and the
/// functions they use to IR, recording where each used name is defined. The
/// module may be partial when there are errors and must then not be used
/// for code generation.
/// `imports` maps the path span of each `import` that loaded a file to that
/// file (the order of definitions, for E0101, follows it).
pub fn check_with_references(
    sources: &SourceMap,
    files: &[(FileId, ast::File)],
    imports: &[(crate::span::Span, FileId)],
    target: Target,
) -> CheckOutput {
    let mut diags = Diags::default();
    let mut out = check_into(sources, files, imports, target, &mut diags);
    out.diagnostics = diags.into_vec();
    out
}

/// [`check_with_references`], with the diagnostics going to `diags` (the
/// pipeline's list, which drops those a syntax error explains).
pub fn check_into(
    sources: &SourceMap,
    files: &[(FileId, ast::File)],
    imports: &[(crate::span::Span, FileId)],
    target: Target,
    diags: &mut Diags,
) -> CheckOutput {
    check_instances_into(
        sources,
        files,
        imports,
        target,
        instances::Request::default(),
        diags,
    )
}

/// [`check_into`], compiling the instantiations of the kernels with
/// constants that `request` asks for (the defaults without one). A request
/// no kernel can take is [`CheckOutput::usage`], except in a file with
/// syntax errors (which may have left a kernel unread): the request is
/// then dropped.
pub fn check_instances_into(
    sources: &SourceMap,
    files: &[(FileId, ast::File)],
    imports: &[(crate::span::Span, FileId)],
    target: Target,
    request: instances::Request<'_>,
    diags: &mut Diags,
) -> CheckOutput {
    let root = files.first().map(|(id, f)| (*id, f));
    let root_kernels: Vec<&ast::KernelItem> = root
        .iter()
        .flat_map(|(_, f)| &f.items)
        .filter_map(|item| match item {
            ast::Item::Kernel(k) => Some(k),
            _ => None,
        })
        .collect();
    let misread =
        root.is_some_and(|(_, f)| f.items.iter().any(|i| matches!(i, ast::Item::Error(_))));
    let plans = match instances::plan(sources, &root_kernels, request) {
        Ok(p) => p,
        Err(usage) if !misread => {
            return CheckOutput {
                usage: Some(usage),
                ..CheckOutput::default()
            }
        }
        Err(_) => instances::plan(sources, &root_kernels, instances::Request::default())
            .unwrap_or_default(),
    };
    let mut globals = Globals::collect(sources, files, imports, diags);
    let mut references = std::mem::take(&mut globals.references);

    let mut module = ir::Module::default();
    let mut calls: Vec<Vec<(FuncId, crate::span::Span)>> = Vec::new();
    for (id, item) in globals.functions.iter().enumerate() {
        let (func, callees) = body::check_function(
            &globals,
            sources,
            target,
            FuncId(id as u32),
            item,
            diags,
            &mut references,
        );
        module.functions.push(func);
        calls.push(callees);
    }
    let mut instance_diags: Vec<(usize, Vec<Diagnostic>)> = Vec::new();
    for (k, plan) in root_kernels.iter().zip(&plans) {
        if k.consts.is_empty() {
            let kernel =
                kernel::check_kernel(&globals, sources, target, k, &[], diags, &mut references);
            module.kernels.push(kernel);
            continue;
        }
        // Each instantiation on its own: its diagnostics are merged with
        // the other instantiations' once the later stages have run.
        let first = module.kernels.len();
        for (n, given) in plan.iter().enumerate() {
            let mut own = Diags::default();
            let mut refs = Vec::new();
            let kernel =
                kernel::check_kernel(&globals, sources, target, k, given, &mut own, &mut refs);
            // Two requests that come to the same values are one.
            let earlier = module.kernels.get(first..).unwrap_or_default();
            if earlier.iter().any(|o| o.name == kernel.name) {
                continue;
            }
            if n == 0 {
                references.append(&mut refs);
            }
            instance_diags.push((module.kernels.len(), own.into_vec()));
            module.kernels.push(kernel);
        }
    }
    for (i, d) in instances::name_clashes(&module) {
        match instance_diags.iter_mut().find(|(k, _)| *k == i) {
            Some((_, list)) => list.push(d),
            None => instance_diags.push((i, vec![d])),
        }
    }
    if let Some((file, ast_file)) = root {
        if let Some(w) = no_kernel(file, ast_file) {
            diags.push(w.into_diagnostic());
        }
    }
    globals::report_recursion(&globals, &calls, diags);
    CheckOutput {
        module,
        diagnostics: Vec::new(),
        references,
        instance_diags,
        usage: None,
    }
}

/// W0003 for a root file that defines no kernel: it compiles to a PTX module
/// with no entry point. Not said when a syntax error left an item unread
/// (it may have been the kernel).
fn no_kernel(file: FileId, f: &ast::File) -> Option<CheckError> {
    let unread = f.items.iter().any(|i| matches!(i, ast::Item::Error(_)));
    let kernel = f.items.iter().any(|i| matches!(i, ast::Item::Kernel(_)));
    if kernel || unread {
        return None;
    }
    Some(CheckError::NoKernel {
        span: crate::span::Span::new(file, 0, 0),
        empty: f.items.is_empty(),
    })
}
