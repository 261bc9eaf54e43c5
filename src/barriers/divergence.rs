//! W0320: CTA-wide barriers (`sync_threads()`, `cluster_sync()`, or a call
//! of a function that runs one) in control flow that only some threads of
//! the CTA take, read from the uniformity facts ([`crate::analysis`]).
//!
//! Only the CTA-wide barriers are checked: mbarrier operations are meant to
//! run in some threads (one elected thread arrives with `arrive_expect_tx`,
//! one warp produces), and their arrival counts are W0321's business.
//! A device function's body is checked with its parameters taken as
//! uniform; a call of it in divergent flow is reported where it is made.
//!
//! A barrier in a branch of a warp partition whose every branch runs the
//! same barriers (`if warp_id == 0 { cluster_sync(); } else {
//! cluster_sync(); }`, `crate::analysis::warps`) is reached by every thread
//! that reaches the `if`: it is reported only when the `if` itself is in
//! divergent flow.

use super::error::BarrierError;
use crate::analysis::usage::{Node, SyncCall};
use crate::analysis::ModuleInfo;
use crate::ir::Module;
use crate::span::Span;
use std::collections::BTreeMap;

/// Every divergent site the analysis recorded (`Usage::sync_sites`) that
/// runs a CTA-wide barrier, in every function and kernel.
pub fn check(module: &Module, info: &ModuleInfo, out: &mut Vec<BarrierError>) {
    let bodies = info.functions.iter().map(|f| &f.body);
    let bodies = bodies.chain(info.kernels.iter().map(|k| &k.body));
    for facts in bodies {
        check_body(module, info, facts, out);
    }
}

/// [`check`] of one body's facts.
pub fn check_body(
    module: &Module,
    info: &ModuleInfo,
    facts: &crate::analysis::BodyInfo,
    out: &mut Vec<BarrierError>,
) {
    // By the barrier's span, for a deterministic order.
    let mut found: BTreeMap<(u32, u32, u32), BarrierError> = BTreeMap::new();
    for site in &facts.usage.sync_sites {
        // A barrier inside a partition is as divergent as the
        // partition: every thread reaching it reaches this barrier or
        // its twin in another branch.
        let cond = match site.node {
            Node::Stmt(id) => match facts.warps.partition.get(&id) {
                Some(p) => facts.divergence(*p),
                None => facts.divergence(id),
            },
            Node::Expr(id) => facts.expr_divergence(id),
        };
        let Some(cond) = cond else { continue };
        let (op, via) = match site.what {
            SyncCall::Barrier(s) => (s.name().to_string(), None),
            SyncCall::Call(f) => {
                let sync = info.functions.get(f.index()).and_then(|fi| fi.sync);
                match (sync, module.functions.get(f.index())) {
                    (Some(s), Some(func)) => (func.name.clone(), Some(s.name())),
                    _ => continue,
                }
            }
        };
        let span: Span = site.span;
        found
            .entry((span.file.0, span.start, span.end))
            .or_insert(BarrierError::Divergent {
                op,
                span,
                cond,
                via,
            });
    }
    out.extend(found.into_values());
}
