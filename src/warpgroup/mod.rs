//! The warpgroup pass: register budgets (E0413, E0421, E0422) from the
//! warpgroup facts of [`crate::analysis::warpgroups`], on a module that may
//! be partial (every check concludes only from what checked).
//!
//! The checker reports what it sees while lowering a `set_max_regs` (the
//! target, E0200; the count, E0420; a kernel without `block(...)` or a
//! device function, E0421); everything that needs the whole kernel is
//! here:
//!
//! - E0413: a `set_max_regs` under a condition that may split a warpgroup,
//!   or in a kernel whose block's x extent is not a multiple of 128;
//! - E0421: two `set_max_regs` of one warpgroup with no synchronisation
//!   between them, one in a `while`/`for` loop, or one that increases the
//!   count on one path and decreases it on another;
//! - E0422: the warpgroups' budgets add up to more than the CTA's pool,
//!   so an `.inc` waits forever.

pub mod error;

use crate::analysis::warpgroups::WarpgroupFacts;
use crate::analysis::ModuleInfo;
use crate::diagnostics::Diagnostic;
use crate::ir::{self, Kernel};
use crate::span::Span;
use error::WarpgroupError;

/// Runs every warpgroup check on `module` (which may be partial).
pub fn check(module: &ir::Module, info: &ModuleInfo) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        registers(k, &ki.body.warpgroups, &mut found);
    }
    found
        .into_iter()
        .map(WarpgroupError::into_diagnostic)
        .collect()
}

/// The `set_max_regs` of kernel `k`.
fn registers(k: &Kernel, facts: &WarpgroupFacts, found: &mut Vec<WarpgroupError>) {
    let mut sites: Vec<(ir::StmtId, Span, u32)> = facts
        .regs
        .iter()
        .map(|(id, c)| (*id, c.span, c.n))
        .collect();
    sites.sort_by_key(|(id, span, _)| (span.file, span.start, id.0));
    let Some(&(_, first, _)) = sites.first() else {
        return;
    };
    if let Some([x, y, z]) = k.block.filter(|[x, _, _]| x % ir::WARPGROUP != 0) {
        found.push(WarpgroupError::BlockNotWarpgroups {
            op: "set_max_regs",
            span: first,
            kernel: k.name_span,
            block: [x, y, z],
        });
    }
    let entry = facts.entry.unwrap_or(0);
    for &(id, span, n) in &sites {
        if let Some(split) = facts.split.get(&id) {
            found.push(WarpgroupError::NotWarpgroupUniform {
                op: "set_max_regs",
                span,
                cond: split.cond,
                jump: split.jump,
            });
        }
        if let Some(change) = facts.regs.get(&id) {
            if change.increase(entry).is_none() {
                let counts: Vec<u32> = change.from.values(entry).collect();
                found.push(WarpgroupError::MixedChange { n, span, counts });
            }
        }
    }
    for &(span, lp) in &facts.in_loop {
        found.push(WarpgroupError::RegistersInLoop { span, lp });
    }
    for u in &facts.unsynced {
        found.push(WarpgroupError::Unsynced {
            second: u.second,
            first: u.first,
        });
    }
    if let (Some(budgets), Some(e), Some(w)) = (&facts.budgets, facts.entry, facts.warpgroups) {
        let total: u32 = budgets.iter().map(|b| b.regs).sum();
        if total > w * e {
            found.push(WarpgroupError::PoolExceeded {
                budgets: budgets.clone(),
                entry: e,
                threads: k.block_threads().unwrap_or(0),
            });
        }
    }
}
