//! The barrier pass: checks the barrier groups and operations of an IR
//! module (E0301, E0303, E0305, E0307, E0309, E0310, E0406, E0407,
//! W0320–W0326), also one
//! with errors elsewhere, so that every independent error is reported.
//!
//! The checker reports what it sees while lowering (E0302, E0304, E0306,
//! E0308, E0311: see `check::kernel` and `check::barrier_ops`); everything
//! that needs the lowered operations, constant folding or a view of the
//! whole kernel is here, one module per concern, all walking the IR with
//! [`walk`]:
//!
//! The facts they read come from [`crate::analysis`]: uniformity, the
//! values of immutable locals (a local bound to a constant counts as a
//! constant; the element of a loop over a constant list is a constant in
//! each run of its body, which the checks that need it walk once per
//! element: [`walk::runs`]), the named-barrier facts.
//!
//! - [`refs`]: references to barriers (E0303, E0305);
//! - [`ops`]: operations against their group's scope (E0301, E0307) and
//!   their constant operands (E0309, E0310);
//! - [`divergence`]: CTA-wide barriers in divergent control flow (W0320),
//!   from the uniformity facts of [`crate::analysis`];
//! - [`arrivals`]: expected against actual arrivals per phase (W0321);
//! - [`transactions`]: transaction bytes of bulk and tensor copies (W0322,
//!   W0323, E0406);
//! - [`stages`]: the stage discipline of guarded arrays (E0407);
//! - [`named`]: named-barrier operations under conditions that split a
//!   warp (W0324), and their counts against the warps that reach them
//!   (W0326).

pub mod arrivals;
pub mod divergence;
pub mod error;
pub mod named;
pub mod ops;
pub mod refs;
pub mod stages;
pub mod transactions;
pub mod walk;

use crate::analysis::ModuleInfo;
use crate::diagnostics::Diagnostic;
use crate::ir::{self, BarrierRef, Kernel};
use crate::source::SourceMap;
use error::BarrierError;

/// Runs every barrier check on a module, which may be partial when checking
/// found errors: statements that failed to check are missing or
/// [`ir::StmtKind::Poisoned`], and every check only concludes from what is
/// there, so nothing it reports follows from an earlier error. `info` holds
/// the facts [`crate::analysis::analyze`] found in `module`; `sources` is
/// for the help texts that show a barrier reference as it was written.
pub fn check(module: &ir::Module, info: &ModuleInfo, sources: &SourceMap) -> Vec<Diagnostic> {
    let mut found: Vec<BarrierError> = Vec::new();
    divergence::check(module, info, &mut found);
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        kernel(k, ki, sources, &mut found);
    }
    found
        .into_iter()
        .map(BarrierError::into_diagnostic)
        .collect()
}

/// The barrier pass on kernel `k` alone (one that is not in `module`: an
/// instantiation of a kernel with constants, checked on its own), with the
/// module's functions.
pub fn check_kernel(
    module: &ir::Module,
    info: &ModuleInfo,
    k: &Kernel,
    ki: &crate::analysis::KernelInfo,
    sources: &SourceMap,
) -> Vec<Diagnostic> {
    let mut found: Vec<BarrierError> = Vec::new();
    divergence::check_body(module, info, &ki.body, &mut found);
    kernel(k, ki, sources, &mut found);
    found
        .into_iter()
        .map(BarrierError::into_diagnostic)
        .collect()
}

fn kernel(
    k: &Kernel,
    ki: &crate::analysis::KernelInfo,
    sources: &SourceMap,
    found: &mut Vec<BarrierError>,
) {
    let values = &ki.body.values;
    refs::check(k, values, found);
    ops::check(k, values, sources, found);
    arrivals::check(k, &ki.body, found);
    transactions::check(k, values, sources, found);
    stages::check(k, values, sources, found);
    named::check(k, &ki.body, found);
}

/// A barrier reference as the user wrote it (`full[s]`), for help texts; an
/// unindexed reference to a group of several barriers (E0303) reads
/// `full[i]`.
pub fn reference_text(sources: &SourceMap, kernel: &Kernel, r: &BarrierRef) -> String {
    let Some(g) = kernel.barriers.get(r.group.index()) else {
        return String::new();
    };
    match &r.index {
        None if g.count > 1 => format!("{}[i]", g.name),
        None => g.name.clone(),
        Some(_) => {
            let text = sources.slice(r.span);
            if text.is_empty() {
                format!("{}[i]", g.name)
            } else {
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        }
    }
}
