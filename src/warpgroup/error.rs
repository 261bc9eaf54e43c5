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
        /// `None`: the kernel has no `block(...)`.
        block: Option<[u32; 3]>,
    },
    /// E0410: a `wgmma` tile that does not lie on whole blocks of its
    /// array.
    TileOutside {
        why: String,
        span: Span,
        decl: Span,
        /// An MN-major tile (`transpose(...)`).
        transposed: bool,
        /// A slice of a fragment (an RS `wgmma`'s A).
        fragment: bool,
    },
    /// E0414: an accumulator touched while a group writing it may be
    /// pending.
    AccumPending {
        name: String,
        access: Span,
        wgmma: Span,
        committed: bool,
    },
    /// E0451: a fragment touched while a group reading it (as an RS
    /// `wgmma`'s A operand) may be pending.
    FragmentPending {
        name: String,
        access: Span,
        wgmma: Span,
        committed: bool,
    },
    /// E0415: a stage released while a group reading it may be pending.
    StageReleased {
        array: String,
        arrive: Span,
        wgmma: Span,
    },
    /// E0416: an accumulator read before anything wrote it.
    AccumUninit {
        name: String,
        access: Span,
        by_wgmma: bool,
        /// Read as an RS `wgmma`'s A slice.
        slice: bool,
    },
    /// E0418: an element index that is not a constant below the elements
    /// (`None`: not a constant).
    AccumIndex {
        name: String,
        index: Option<i128>,
        elements: u32,
        span: Span,
    },
    /// E0423: a warpgroup's accumulators need more registers than its
    /// budget.
    AccumOverBudget {
        accums: Vec<String>,
        regs: u32,
        budget: u32,
        warpgroup: usize,
        set_by: Option<Span>,
        decls: Vec<Span>,
    },
    /// W0425: a budget below what the accumulators and the wgmma around
    /// them need.
    BudgetBelowNeed {
        regs: u32,
        budget: u32,
        need: u32,
        span: Span,
        wgmma: Span,
    },
    /// E0424: a wgmma needs more registers than the count at entry.
    EntryTooSmall {
        shape: String,
        need: u32,
        entry: u32,
        threads: u32,
        span: Span,
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
            WarpgroupError::BlockNotWarpgroups { op, span, kernel, block: None } => Diagnostic::error(
                "E0413",
                format!("`{op}` in a kernel without `block(...)`"),
            )
            .primary(span, "needs whole warpgroups")
            .secondary(kernel, "this kernel has no `block(...)`")
            .note("a warpgroup is 128 consecutive threads: the block must be whole warpgroups, which the compiler knows only from `block(...)`")
            .help("give the block's shape, a multiple of 128 threads in x, for example `block(128)`"),
            WarpgroupError::BlockNotWarpgroups { op, span, kernel, block: Some([x, y, z]) } => {
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
            WarpgroupError::TileOutside { why, span, decl, fragment: true, .. } => Diagnostic::error(
                "E0410",
                "a wgmma operand tile that does not fit its array",
            )
            .primary(span, why)
            .secondary(decl, "declared here")
            .note("a `wgmma` with A from registers reads 64 x 16 of the fragment: columns 16 kk to 16 kk + 15 are this thread's elements 8 kk to 8 kk + 7, four registers; `p[8 * kk]` names them"),
            WarpgroupError::TileOutside { why, span, decl, transposed, .. } => Diagnostic::error(
                "E0410",
                "a wgmma operand tile that does not fit its array",
            )
            .primary(span, why)
            .secondary(decl, "declared here")
            .note(if transposed {
                "a transposed `wgmma` operand is MN-major: its descriptor reads whole spans of rows from the first element of a span (the next span of rows in the next index of the third-to-last dimension) and K from an 8-row boundary, one repeat of the swizzle"
            } else {
                "a `wgmma` reads a tile of whole 8-row blocks (its descriptor counts rows in blocks of 8, each one repeat of the swizzle) and 32 bytes of K from a multiple of 32 bytes within a row"
            }),
            WarpgroupError::AccumPending { name, access, wgmma, committed } => Diagnostic::error(
                "E0414",
                format!("`{name}` is accessed while a wgmma group writing it may be pending"),
            )
            .primary(access, "the accumulator's registers may still be written here")
            .secondary(wgmma, if committed { "this wgmma's group may not be complete" } else { "this wgmma is not even committed" })
            .note("reading or writing an accumulator before a `wgmma.wait_group` that covers the group writing it is undefined (PTX ISA 9.7.15.7.3); ptxas would insert a wait itself (C7517)")
            .help(if committed { "wait for the group first: `wgmma_wait(0)` (or a count that leaves only newer groups pending)" } else { "commit the group and wait for it: `wgmma_commit(); wgmma_wait(0);`" }),
            WarpgroupError::FragmentPending { name, access, wgmma, committed } => Diagnostic::error(
                "E0451",
                format!("`{name}` is accessed while a wgmma group reading it may be pending"),
            )
            .primary(access, "the fragment's registers may still be read by the tensor core here")
            .secondary(wgmma, if committed { "this wgmma reads them, and its group may not be complete" } else { "this wgmma reads them, and is not even committed" })
            .note("accessing the registers of a wgmma's A operand before a `wgmma.wait_group` that covers its group is undefined (PTX ISA 9.7.15.7.3)")
            .help(if committed { "wait for the group first: `wgmma_wait(0)` (or a count that leaves only newer groups pending)" } else { "commit the group and wait for it: `wgmma_commit(); wgmma_wait(0);`" }),
            WarpgroupError::StageReleased { array, arrive, wgmma } => Diagnostic::error(
                "E0415",
                format!("a stage of `{array}` is released while a wgmma group reading it may be pending"),
            )
            .primary(arrive, "this arrival lets the stage be overwritten")
            .secondary(wgmma, "this wgmma may still be reading it")
            .note("a `wgmma` reads its operands from shared memory until its group completes; a copy that lands in the stage before then changes what it reads")
            .help("wait for the group before releasing its stage (`wgmma_wait(0)`), or keep one group in flight with `wgmma_wait(1)` and release the stage of the previous iteration"),
            WarpgroupError::AccumUninit { name, access, slice: true, .. } => Diagnostic::error(
                "E0416",
                format!("`{name}` is read before it is written"),
            )
            .primary(access, "this wgmma reads the slice as its A operand")
            .note("a fragment's registers hold nothing defined until the program writes them: every element of the 16 columns a `wgmma` reads from registers")
            .help("fill the fragment first: `acc_convert(p, s)` writes all of it"),
            WarpgroupError::AccumUninit { name, access, by_wgmma, .. } => Diagnostic::error(
                "E0416",
                format!("`{name}` is read before it is written"),
            )
            .primary(access, if by_wgmma { "this wgmma adds onto the accumulator (`accumulate` is true)" } else { "read here" })
            .note("an accumulator's registers hold nothing defined until a `wgmma` (or the program) writes them")
            .help(if by_wgmma { "let the first `wgmma` write it: `accumulate = false` (for a loop, a condition that is false the first time, `accumulate = k > 0`)" } else { "write every element first, or let a `wgmma` with `accumulate = false` do it" }),
            WarpgroupError::AccumIndex { name, index: None, elements, span } => Diagnostic::error(
                "E0418",
                format!("the element index of `{name}` is not a compile-time constant"),
            )
            .primary(span, "not a constant here")
            .note(format!("each of `{name}`'s {elements} elements per thread is a register, and a register cannot be chosen at run time: the index is a constant, an element of a loop over a constant list, or the variable of a range loop with constant bounds (which the compiler then unrolls, up to 1024 iterations)")),
            WarpgroupError::AccumIndex { name, index: Some(i), elements, span } => Diagnostic::error(
                "E0418",
                format!("element {i} of accumulator `{name}`, which holds {elements} per thread"),
            )
            .primary(span, format!("elements 0 to {}", elements.saturating_sub(1)))
            .note("each of a warpgroup's 128 threads holds 64 * N / 128 = N / 2 elements of a 64 x N accumulator"),
            WarpgroupError::AccumOverBudget { accums, regs, budget, warpgroup, set_by, decls } => {
                let names: Vec<String> = accums.iter().map(|n| format!("`{n}`")).collect();
                let mut d = Diagnostic::error(
                    "E0423",
                    format!("accumulators need {regs} registers in warpgroup {warpgroup}, whose budget is {budget}"),
                );
                d = match set_by {
                    Some(s) => d.primary(s, format!("{budget} registers per thread for warpgroup {warpgroup}")),
                    None => match decls.first() {
                        Some(s) => d.primary(*s, format!("warpgroup {warpgroup} keeps the {budget} it starts with")),
                        None => d,
                    },
                };
                for s in decls.iter().skip(usize::from(set_by.is_none())) {
                    d = d.secondary(*s, "an accumulator of the warpgroup");
                }
                d.note(format!("{} take {regs} registers per thread together; more than the budget, and ptxas spills them to local memory and serialises the wgmma instructions (C7511), silently", names.join(" and ")))
                    .help("hold fewer accumulators at once in the warpgroup (split its tile with another warpgroup), or raise its budget")
            }
            WarpgroupError::BudgetBelowNeed { regs, budget, need, span, wgmma } => Diagnostic::warning(
                "W0425",
                format!("a budget of {budget} registers is below the about {need} that a wgmma it reaches needs"),
            )
            .primary(span, format!("{budget} registers per thread from here"))
            .secondary(wgmma, "the control flow reaches this wgmma with that budget")
            .note(format!("its accumulator takes {regs} registers, and a wgmma needs about {} more; ptxas allocates registers by region of the control flow, whichever warpgroup runs it, and below that it ignores every `set_max_regs` of the kernel (C7507)", need - regs))
            .help(format!("raise the budget to at least {}; `kdslc --emit cubin` reports what ptxas decides", need.div_ceil(8) * 8)),
            WarpgroupError::EntryTooSmall { shape, need, entry, threads, span } => Diagnostic::error(
                "E0424",
                format!("wgmma with a {shape} accumulator needs {need} registers at entry; {threads} threads leave {entry}"),
            )
            .primary(span, format!("needs about {need} registers per thread"))
            .note(format!("one CTA of {threads} threads per SM starts each warp at {entry} registers per thread, and every instruction must compile with that count, whatever `set_max_regs` sets later: ptxas fails otherwise (C7602, NVIDIA/cutlass #2904)"))
            .help("use fewer threads per block (fewer warpgroups), or a narrower accumulator"),
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
