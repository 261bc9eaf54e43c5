//! The barrier pass: checks the barrier groups and operations of a checked
//! IR module (E0301, E0303, E0305, E0307, E0309, E0310, W0320–W0323).
//!
//! The checker reports what it sees while lowering (E0302, E0304, E0306,
//! E0308, E0311: see `check::kernel` and `check::barrier_ops`); everything
//! that needs the lowered operations, constant folding or a view of the
//! whole kernel is here, one module per concern, all walking the IR with
//! [`walk`]:
//!
//! - [`refs`]: references to barriers (E0303, E0305);
//! - [`ops`]: operations against their group's scope (E0301, E0307) and
//!   their constant operands (E0309, E0310);
//! - [`uniformity`]: which values and statements differ between threads, and
//!   CTA-wide barriers in divergent control flow (W0320);
//! - [`arrivals`]: expected against actual arrivals per phase (W0321);
//! - [`transactions`]: bulk-copy transaction bytes (W0322, W0323).

pub mod arrivals;
pub mod error;
pub mod ops;
pub mod refs;
pub mod transactions;
pub mod uniformity;
pub mod walk;

use crate::diagnostics::Diagnostic;
use crate::ir;
use crate::target::Target;
use error::BarrierError;

/// Runs every barrier check on a module that checked without errors. The
/// target is not consulted: what a target lacks was reported by the checker.
pub fn check(module: &ir::Module, _target: Target) -> Vec<Diagnostic> {
    let mut found: Vec<BarrierError> = Vec::new();
    let callees = uniformity::callees(module, &mut found);
    for k in &module.kernels {
        refs::check(k, &mut found);
        ops::check(k, &mut found);
        let uni = uniformity::kernel(&k.body, &callees, &mut found);
        arrivals::check(k, &uni, &mut found);
        transactions::check(k, &mut found);
    }
    found
        .into_iter()
        .map(BarrierError::into_diagnostic)
        .collect()
}
