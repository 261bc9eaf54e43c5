//! The warpgroup pass: register budgets and tensor cores, from the
//! warpgroup facts of [`crate::analysis::warpgroups`] and the wgmma facts
//! of [`crate::analysis::wgmma`], on a module that may be partial (every
//! check concludes only from what checked).
//!
//! The checker reports what it sees while lowering (the target, E0200;
//! a register count, E0420; `set_max_regs` without `block(...)` or in a
//! device function, E0421; accumulator shapes, E0412; operand types,
//! E0411; operand arrays, E0410; wait counts, E0417; wgmma operations in
//! a device function, E0419); everything that needs the whole kernel is
//! here:
//!
//! - E0413: a warpgroup operation (`set_max_regs`, `wgmma`,
//!   `wgmma_commit`, `wgmma_wait`) under a condition that may split a
//!   warpgroup, or in a kernel whose block's x extent is not a multiple of
//!   128 (or, for the wgmma operations, without `block(...)`);
//! - E0410 ([`tiles`]): a `wgmma` tile off its array's 8-row blocks or K
//!   slices, or past its end; E0418: an accumulator's element index that
//!   is not a constant below its elements;
//! - E0414: an accumulator touched while a group writing it may be
//!   pending; E0416: read before written;
//! - E0423: a warpgroup's accumulators past its budget; W0425: a budget
//!   below what its wgmma needs; E0424: a wgmma that needs more registers
//!   than the count at entry;
//! - E0421: two `set_max_regs` of one warpgroup with no synchronisation
//!   between them, one in a `while`/`for` loop, or one that increases the
//!   count on one path and decreases it on another;
//! - E0422: the warpgroups' budgets add up to more than the CTA's pool,
//!   so an `.inc` waits forever.

pub mod error;
mod tiles;

use crate::analysis::warpgroups::WarpgroupFacts;
use crate::analysis::{BodyInfo, ModuleInfo};
use crate::diagnostics::Diagnostic;
use crate::ir::{self, Kernel};
use crate::span::Span;
use error::WarpgroupError;

/// The registers ptxas needs beside a `wgmma`'s accumulators to compile it
/// (descriptors, addresses): 154 for `m64n256k16` with 128 accumulator
/// registers (`shared/design/hopper.md` §4.3, C7602). A heuristic from
/// that kernel; under `--emit cubin` ptxas's own advisories are exact.
pub const WGMMA_OVERHEAD: u32 = 26;

/// Runs every warpgroup check on `module` (which may be partial).
pub fn check(module: &ir::Module, info: &ModuleInfo) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        kernel(k, ki, &mut found);
    }
    found
        .into_iter()
        .map(WarpgroupError::into_diagnostic)
        .collect()
}

/// The warpgroup pass on one kernel.
pub fn check_kernel(k: &Kernel, ki: &crate::analysis::KernelInfo) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    kernel(k, ki, &mut found);
    found
        .into_iter()
        .map(WarpgroupError::into_diagnostic)
        .collect()
}

fn kernel(k: &Kernel, ki: &crate::analysis::KernelInfo, found: &mut Vec<WarpgroupError>) {
    registers(k, &ki.body.warpgroups, found);
    operations(k, &ki.body.warpgroups, found);
    wgmma(k, &ki.body, found);
    tiles::check(k, &ki.body.values, found);
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
    let _ = first;
    let entry = facts.entry.unwrap_or(0);
    for &(id, span, n) in &sites {
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

/// Every warpgroup operation of kernel `k` in whole warpgroups (E0413):
/// under conditions that are the same in each, in a block of rows of whole
/// warpgroups (`block(...)` given, for the `wgmma` operations too).
fn operations(k: &Kernel, facts: &WarpgroupFacts, found: &mut Vec<WarpgroupError>) {
    let mut ops = facts.ops.clone();
    ops.sort_by_key(|o| (o.span.file, o.span.start, o.id.0));
    let Some((op, first)) = ops.first().map(|o| (o.name, o.span)) else {
        return;
    };
    match k.block {
        Some([x, _, _]) if x % ir::WARPGROUP == 0 => {}
        // `set_max_regs` without `block(...)` is the checker's E0421.
        None if op == "set_max_regs" => {}
        block => found.push(WarpgroupError::BlockNotWarpgroups {
            op,
            span: first,
            kernel: k.name_span,
            block,
        }),
    }
    for o in ops {
        if let Some(split) = facts.split.get(&o.id) {
            found.push(WarpgroupError::NotWarpgroupUniform {
                op: o.name,
                span: o.span,
                cond: split.cond,
                jump: split.jump,
            });
        }
    }
}

/// The accumulators of kernel `k`: touched while a group writing them may
/// be pending (E0414), read before written (E0416), and their registers
/// against each warpgroup's budget (E0423, W0425) and the count at entry
/// (E0424).
fn wgmma(k: &Kernel, info: &BodyInfo, found: &mut Vec<WarpgroupError>) {
    let name = |a: ir::AccumId| {
        k.accums
            .get(a.index())
            .map_or_else(String::new, |x| x.name.clone())
    };
    for p in info.wgmma.pending.values() {
        found.push(if p.reads {
            WarpgroupError::FragmentPending {
                name: name(p.acc),
                access: p.access,
                wgmma: p.wgmma,
                committed: p.committed,
            }
        } else {
            WarpgroupError::AccumPending {
                name: name(p.acc),
                access: p.access,
                wgmma: p.wgmma,
                committed: p.committed,
            }
        });
    }
    for r in info.wgmma.released.values() {
        found.push(WarpgroupError::StageReleased {
            array: k
                .shared
                .get(r.array.index())
                .map_or_else(String::new, |a| a.name.clone()),
            arrive: r.arrive,
            wgmma: r.wgmma,
        });
    }
    for u in info.wgmma.uninit.values() {
        found.push(WarpgroupError::AccumUninit {
            name: name(u.acc),
            access: u.access,
            by_wgmma: u.by_wgmma,
            slice: u.slice,
        });
    }
    let facts = &info.warpgroups;
    // E0424: each accumulator a wgmma writes, against the count at entry.
    // The launch's count, not lowered to the largest budget: ptxas drops a
    // budget below what the code needs (C7507, W0425) and compiles with it.
    let launch = k.block_threads().and_then(|t| ir::entry_registers(t, None));
    if let (Some(e), Some(threads)) = (launch, k.block_threads()) {
        let mut seen = std::collections::HashSet::new();
        let mut ops = facts.ops.clone();
        ops.sort_by_key(|o| (o.span.file, o.span.start, o.id.0));
        for o in ops {
            let (Some(acc), span) = (o.acc, o.span) else {
                continue;
            };
            let Some(a) = k.accums.get(acc.index()) else {
                continue;
            };
            let need = a.registers() + WGMMA_OVERHEAD;
            if need > e && seen.insert(acc) {
                found.push(WarpgroupError::EntryTooSmall {
                    shape: format!("64 x {} {}", a.n, a.elem),
                    need,
                    entry: e,
                    threads,
                    span,
                });
            }
        }
    }
    // W0425: a wgmma the control flow reaches with a budget below what it
    // needs (ptxas allocates registers by region, whichever warpgroup
    // runs it).
    let mut low: Vec<_> = facts.low.clone();
    low.sort_by_key(|l| (l.set_by.file, l.set_by.start, l.wgmma.start));
    let mut warned = std::collections::HashSet::new();
    for l in low {
        let Some(a) = k.accums.get(l.acc.index()) else {
            continue;
        };
        let need = a.registers() + WGMMA_OVERHEAD;
        if l.budget < need && warned.insert((l.set_by.start, l.set_by.end)) {
            found.push(WarpgroupError::BudgetBelowNeed {
                regs: a.registers(),
                budget: l.budget,
                need,
                span: l.set_by,
                wgmma: l.wgmma,
            });
        }
    }
    // E0423: each warpgroup's accumulators against its budget.
    let (Some(budgets), Some(uses)) = (&facts.budgets, &facts.uses) else {
        return;
    };
    let mut reported = std::collections::HashSet::new();
    for (w, (b, used)) in budgets.iter().zip(uses).enumerate() {
        let accs: Vec<&ir::Accum> = k
            .accums
            .iter()
            .enumerate()
            .filter(|(i, _)| used & (1 << (*i).min(63)) != 0)
            .map(|(_, a)| a)
            .collect();
        if accs.is_empty() {
            continue;
        }
        let regs: u32 = accs.iter().map(|a| a.registers()).sum();
        let names: Vec<String> = accs.iter().map(|a| a.name.clone()).collect();
        let key = (b.set_by.map(|s| (s.start, s.end)), regs);
        if regs > b.regs && reported.insert(key) {
            found.push(WarpgroupError::AccumOverBudget {
                accums: names,
                regs,
                budget: b.regs,
                warpgroup: w,
                set_by: b.set_by,
                decls: accs.iter().map(|a| a.span).collect(),
            });
        }
    }
}
