//! The warpgroup pass's errors and warnings, and the one place they become
//! diagnostics (E0413, E0421, E0422). What the checker finds while
//! lowering (E0200, E0420, E0421 for a kernel without `block(...)`) is its
//! own (`check::error`).

use crate::analysis::warpgroups::Budget;
use crate::diagnostics::Diagnostic;
use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum WarpgroupError {
    /// E0413: a warpgroup operation under a condition that may split a
    /// warpgroup.
    NotWarpgroupUniform {
        op: &'static str,
        span: Span,
        cond: Span,
        /// The early exit under `cond`, when that is what splits.
        jump: Option<Span>,
    },
    /// E0413: a warpgroup operation in a kernel whose block's x extent is
    /// not a multiple of 128.
    BlockNotWarpgroups {
        op: &'static str,
        span: Span,
        kernel: Span,
        block: [u32; 3],
    },
    /// E0421: a second `set_max_regs` with no synchronisation since the
    /// first.
    Unsynced { second: Span, first: Span },
    /// E0421: a `set_max_regs` in a `while` or `for` loop.
    RegistersInLoop { span: Span, lp: Span },
    /// E0421: a `set_max_regs(n)` reached with counts on both sides of `n`.
    MixedChange {
        n: u32,
        span: Span,
        counts: Vec<u32>,
    },
    /// E0422: the budgets add up to more than the pool.
    PoolExceeded {
        budgets: Vec<Budget>,
        entry: u32,
        threads: u32,
    },
}

/// `0`, `1 and 2`, `0, 1 and 3`.
fn list(items: &[usize]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(usize::to_string).collect();
            format!("{} and {last}", init.join(", "))
        }
    }
}

/// `warpgroup 0`, `warpgroups 1 and 2`.
fn warpgroups(ws: &[usize]) -> String {
    if ws.len() == 1 {
        format!("warpgroup {}", list(ws))
    } else {
        format!("warpgroups {}", list(ws))
    }
}

impl WarpgroupError {
    pub fn into_diagnostic(self) -> Diagnostic {
        match self {
            WarpgroupError::NotWarpgroupUniform { op, span, cond, jump } => {
                let d = Diagnostic::error(
                    "E0413",
                    format!("`{op}` under a condition that may split a warpgroup"),
                )
                .primary(span, "every thread of a warpgroup must run this together")
                .secondary(cond, "this condition may differ between the threads of one warpgroup");
                let d = match jump {
                    Some(j) => d.secondary(j, "so only some threads of a warpgroup may leave here, and the rest go on alone"),
                    None => d,
                };
                d.note("a warpgroup is four consecutive warps (128 threads, the first warp's index a multiple of 4); its instructions are `.sync.aligned` over all of them")
            .help("give roles to whole warpgroups: test `warp_id / 4` (or `thread_idx.x / 128`) against constants, and keep per-warp or per-thread conditions (`warp_id == 0`, `elect_one()`) inside the role")
            }
            WarpgroupError::BlockNotWarpgroups { op, span, kernel, block: [x, y, z] } => {
                let shape = match (y, z) {
                    (1, 1) => format!("block({x})"),
                    (_, 1) => format!("block({x}, {y})"),
                    _ => format!("block({x}, {y}, {z})"),
                };
                Diagnostic::error(
                    "E0413",
                    format!("`{op}` in a kernel whose block's x extent, {x}, is not a multiple of 128"),
                )
                .primary(span, "needs whole warpgroups")
                .secondary(kernel, format!("this kernel has `{shape}`"))
                .note("a warpgroup is 128 consecutive threads; the compiler follows roles through `warp_id` and `thread_idx.x` only when every row of the block is whole warpgroups")
                .help(format!("make the x extent a multiple of 128, for example `block({})`", x.div_ceil(128) * 128))
            }
            WarpgroupError::Unsynced { second, first } => Diagnostic::error(
                "E0421",
                "`set_max_regs` again with no synchronisation since the last one",
            )
            .primary(second, "a second `set_max_regs` in this warpgroup")
            .secondary(first, "the first one")
            .note("after a `setmaxnreg`, all warps of the warpgroup must synchronise before the next (PTX ISA 9.7.19.5); otherwise the behaviour is undefined")
            .help("put `sync_threads()` (or a named barrier's `sync()`) between them, or set each role's budget once"),
            WarpgroupError::RegistersInLoop { span, lp } => Diagnostic::error(
                "E0421",
                "`set_max_regs` in a loop",
            )
            .primary(span, "runs again in each iteration")
            .secondary(lp, "this loop")
            .note("each `setmaxnreg` after the first needs the warpgroup synchronised before it (PTX ISA 9.7.19.5), and a budget is a role's, not an iteration's")
            .help("set the role's budget once, before its loop"),
            WarpgroupError::MixedChange { n, span, counts } => {
                let counts: Vec<String> = counts.iter().map(u32::to_string).collect();
                Diagnostic::error(
                    "E0421",
                    format!("`set_max_regs({n})` increases the count on one path and decreases it on another"),
                )
                .primary(span, format!("the count before it may be {}", counts.join(" or ")))
                .note("`setmaxnreg.inc` must start from a count no larger than its operand and `.dec` from one no smaller (PTX ISA 9.7.19.5); one instruction cannot be both")
                .help("give each role its own `set_max_regs`, in the branch that only that role runs")
            }
            WarpgroupError::PoolExceeded { budgets, entry, threads } => pool(&budgets, entry, threads),
        }
    }
}

/// E0422: the budgets, grouped by the `set_max_regs` that sets them.
fn pool(budgets: &[Budget], entry: u32, threads: u32) -> Diagnostic {
    let w = budgets.len() as u32;
    let total: u32 = budgets.iter().map(|b| b.regs).sum();
    let terms: Vec<String> = budgets.iter().map(|b| b.regs.to_string()).collect();
    let mut d = Diagnostic::error(
        "E0422",
        format!(
            "warpgroups request {} = {total} registers per thread; the pool holds {w} × {entry} = {}",
            terms.join(" + "),
            w * entry
        ),
    );
    // The largest request is the `.inc` that waits: the primary label.
    let largest = budgets.iter().map(|b| b.regs).max().unwrap_or(0);
    let mut groups: Vec<(Option<Span>, u32, Vec<usize>)> = Vec::new();
    for (i, b) in budgets.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|(s, r, _)| *s == b.set_by && *r == b.regs)
        {
            Some((_, _, ws)) => ws.push(i),
            None => groups.push((b.set_by, b.regs, vec![i])),
        }
    }
    let mut primary = false;
    let mut keep = Vec::new();
    for (span, regs, ws) in &groups {
        let who = warpgroups(ws);
        let asks = if ws.len() == 1 { "asks" } else { "ask" };
        match span {
            Some(s) if *regs == largest && !primary => {
                primary = true;
                d = d.primary(*s, format!("{who} {asks} for {regs}: this `.inc` can never be served, and waits forever"));
            }
            Some(s) => d = d.secondary(*s, format!("{who} {asks} for {regs}")),
            None if ws.len() == 1 => keep.push(format!("{who} keeps the {regs} it starts with")),
            None => keep.push(format!("{who} keep the {regs} they start with")),
        }
    }
    for k in keep {
        d = d.note(k);
    }
    d = d.note(format!(
        "one CTA of {threads} threads per SM starts every warp at {entry} registers per thread; `setmaxnreg.inc` blocks until the CTA's pool has the registers it asks for (PTX ISA 9.7.19.5), and ptxas accepts the kernel"
    ));
    // Lower the largest requests, equally, to what fits.
    let surplus = total - w * entry;
    let top: Vec<usize> = budgets
        .iter()
        .enumerate()
        .filter(|(_, b)| b.regs == largest && b.set_by.is_some())
        .map(|(i, _)| i)
        .collect();
    if !top.is_empty() {
        let cut = (surplus.div_ceil(top.len() as u32)).div_ceil(8) * 8;
        let fixed: Vec<String> = budgets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if top.contains(&i) {
                    b.regs.saturating_sub(cut)
                } else {
                    b.regs
                }
                .to_string()
            })
            .collect();
        d = d.help(format!(
            "lower the budgets to fit, for example {} ≤ {}",
            fixed.join(" + "),
            w * entry
        ));
    }
    d
}
