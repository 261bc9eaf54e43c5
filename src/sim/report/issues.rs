//! Reports of what happened during a run: invalid accesses, mbarrier
//! protocol violations, masks, traps.

use super::{at, barrier_name, by_threads, cta, near_var, shared_name, threads, with_decl, Run};
use crate::diagnostics::{agree, noun_for, plural, Diagnostic};
use crate::sim::decode::ops::SyncOp;
use crate::sim::machine::events::BarrierRef;
use crate::sim::machine::events::{
    AccessKind, DescWhy, Events, FenceWhy, Issue, Recorded, ShflWhy, TensorWhy,
};
use crate::sim::machine::memory::{Alloc, Fault, Target};

pub(crate) fn from_events(p: &Run<'_>, events: &Events, allocs: &[Alloc]) -> Vec<Diagnostic> {
    let merged = super::checks::merge_by_span(p, &events.list);
    let mut out: Vec<Diagnostic> = merged.iter().map(|r| event(p, r, allocs)).collect();
    if events.dropped > 0 {
        if let Some(last) = out.pop() {
            out.push(last.note(format!("{} further reports were dropped", events.dropped)));
        }
    }
    out
}

/// S0028: a register a wgmma uses, with no `wgmma.fence` since an
/// ordinary access of it (or since the start, or since a wgmma of another
/// shape used it as an accumulator).
fn wgmma_fence(
    p: &Run<'_>,
    r: &Recorded,
    slot: u32,
    acc: bool,
    why: FenceWhy,
    who: &str,
    n: &str,
) -> Diagnostic {
    let name = p
        .code
        .reg_name(slot)
        .unwrap_or_else(|| format!("register {slot}"));
    let what = if acc {
        "accumulator register"
    } else {
        "A-fragment register"
    };
    let d = match why {
        FenceWhy::First => {
            let d = Diagnostic::error("S0028", "no `wgmma.fence` before the first wgmma of a warp");
            at(
                d,
                p,
                r.pc,
                &format!("issued here by {n} that executed no `wgmma.fence`"),
                true,
            )
        }
        FenceWhy::Access { pc, write } => {
            let verb = if write { "written" } else { "read" };
            let d = Diagnostic::error(
                "S0028",
                format!(
                    "{what} `{name}` {verb} and then used by a wgmma with no `wgmma.fence` between"
                ),
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("the wgmma uses `{name}` here, issued by {n}"),
                true,
            );
            at(
                d,
                p,
                pc,
                &format!("`{name}` {verb} here, after the last `wgmma.fence`"),
                false,
            )
        }
        FenceWhy::Shape { pc } => {
            let d = Diagnostic::error(
                "S0028",
                format!("accumulator register `{name}` used by wgmmas of two shapes with no `wgmma.fence` between"),
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("this wgmma uses `{name}`, issued by {n}"),
                true,
            );
            at(d, p, pc, "after this wgmma of another shape", false)
        }
    };
    d.note(format!("by {who}"))
        .note("`wgmma.fence` must come before a warpgroup's first `wgmma.mma_async`, and between a thread's access of a register (read or write) and a `wgmma.mma_async` that uses it as an accumulator or an A-fragment register, except for accumulators across wgmmas of the same shape; otherwise the behavior is undefined (PTX ISA §9.7.15.7.1)")
        .help("execute `wgmma.fence.sync.aligned` in all warps of the warpgroup after the last access of the register and before the wgmma (kdsl's compiler inserts it before each `wgmma` that needs one)")
}

/// S0006, with a help that names what was done: a second
/// `arrive.expect_tx` by the thread in the phase (where `expect_tx` adds
/// bytes without arriving), an `arrive.expect_tx` after the count was
/// made, or arrivals that overshoot the count.
fn underflow(
    p: &Run<'_>,
    r: &Recorded,
    barrier: &BarrierRef,
    (count, pending, phase): (i64, i64, u64),
    earlier: Option<u32>,
    last: Option<u32>,
    who: &str,
) -> Diagnostic {
    let (name, decl) = barrier_name(p.shared, barrier);
    let d = Diagnostic::error(
        "S0006",
        format!("arrival on mbarrier `{name}` takes its pending count below zero"),
    );
    let d = at(
        d,
        p,
        r.pc,
        &format!(
            "{} here, but only {pending} {} pending",
            plural(count, "arrival"),
            agree(pending, "was", "were")
        ),
        true,
    );
    let is_expect = |pc: u32| {
        p.program
            .code
            .code
            .get(pc as usize)
            .and_then(|i| p.program.code.syncs.get(i.aux as usize))
            .is_some_and(|op| matches!(op, SyncOp::MbarArrive { tx: Some(_), .. }))
    };
    let d = with_decl(d, decl, &name).note(format!(
        "in phase {phase} of cta {}; by {who}",
        cta(barrier.ctaid)
    ));
    if is_expect(r.pc) {
        if let Some(e) = earlier.filter(|&e| is_expect(e)) {
            let d = if e == r.pc {
                d
            } else {
                at(
                    d,
                    p,
                    e,
                    "the thread's first `arrive_expect_tx` of the phase",
                    false,
                )
            };
            return d.help(format!(
                "this is the thread's second `arrive_expect_tx` on `{name}` in the phase: each one is an arrival as well as an expectation, and the phase's count was already made; to add the bytes of another copy without arriving, use `expect_tx` (`mbarrier.expect_tx`) for all but one of them"
            ));
        }
        let d = match last {
            Some(l) if l != r.pc => at(d, p, l, "the arrival that made the phase's count", false),
            _ => d,
        };
        return d.help(format!(
            "`arrive_expect_tx` arrives as well as expecting bytes, and the phase's arrivals were already made: to only add transaction bytes to the phase of `{name}`, use `expect_tx` (`mbarrier.expect_tx`)"
        ));
    }
    d.help("the arrivals of a phase must add up to the barrier's arrival count; lower the count of `arrive(n)` or raise the barrier's `arrivals`")
}

fn event(p: &Run<'_>, r: &Recorded, allocs: &[Alloc]) -> Diagnostic {
    let who = threads(&r.threads, r.nthreads);
    let n = by_threads(r);
    match &r.issue {
        Issue::Access { fault, kind, size } => {
            access(p, allocs, r.pc, fault, *kind, *size, &who, &n)
        }
        Issue::MbarUninit { barrier } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let d = Diagnostic::error("S0004", format!("mbarrier `{name}` used before `init`"));
            let d = at(
                d,
                p,
                r.pc,
                &format!("used here by {n} before any `mbarrier.init`"),
                true,
            );
            with_decl(d, decl, &name)
                .note(format!("{who} in cta {}", cta(barrier.ctaid)))
                .help("initialise the barrier (`mbarrier.init`) and make the initialisation visible (`fence.mbarrier_init` + a barrier) before any thread uses it")
        }
        Issue::MbarReinit {
            barrier,
            pending,
            expected,
            tx,
        } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let d = Diagnostic::error(
                "S0005",
                format!("mbarrier `{name}` initialised again while a phase is pending"),
            );
            let d = at(d, p, r.pc, "initialised again here", true);
            with_decl(d, decl, &name).note(format!(
                "its current phase had {} of {} and {tx} pending {}",
                i64::from(*expected) - pending,
                plural(*expected, "arrival"),
                noun_for(*tx, "transaction byte")
            ))
            .help("initialise a barrier once, before any thread uses it; to reuse it, let its phase complete (or `mbarrier.inval` it) first")
        }
        Issue::MbarUnderflow {
            barrier,
            count,
            pending,
            phase,
            earlier,
            last,
        } => underflow(
            p,
            r,
            barrier,
            (*count, *pending, *phase),
            *earlier,
            *last,
            &who,
        ),
        Issue::TxRange { barrier, tx } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let d = Diagnostic::error(
                "S0007",
                format!("transaction count of mbarrier `{name}` out of range"),
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("the pending transaction count becomes {tx}"),
                true,
            );
            with_decl(d, decl, &name)
                .note("the PTX ISA limits an mbarrier's transaction count to the range -(2^20 - 1) ..= 2^20 - 1")
                .help("split the transfer over several phases so that no phase expects 2^20 bytes or more")
        }
        Issue::PhaseBehind {
            barrier,
            phases,
            parity,
        } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let d = Diagnostic::error(
                "S0008",
                format!(
                    "wait on mbarrier `{name}` is {} behind",
                    plural(*phases, "phase")
                ),
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("this wait for parity {parity} comes {} after the thread's previous wait on `{name}`", plural(*phases, "phase")),
                true,
            );
            with_decl(d, decl, &name)
                .note(format!("by {who}"))
                .note("a parity names a phase only among the two most recent ones: after two or more completed phases the wait cannot tell them apart, so it either returns at once for an old phase or waits for one that comes later")
                .help("wait on the barrier in every phase it completes (or track the phase and skip whole pairs of phases)")
        }
        Issue::BulkShape { size, dst, src } => {
            let d = Diagnostic::error(
                "S0012",
                format!(
                    "bulk copy of {} is not a multiple of 16 bytes or not 16-byte aligned",
                    plural(*size, "byte")
                ),
            );
            at(d, p, r.pc, &format!("copy issued here by {n}"), true)
                .note(format!("size {size}, destination {dst:#x}, source {src:#x} ({who})"))
                .help("`cp.async.bulk` needs a size that is a multiple of 16 and 16-byte aligned source and destination addresses")
        }
        Issue::NoComplete { barrier } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let d = Diagnostic::error(
                "S0018",
                format!("`.noComplete` arrival completed a phase of mbarrier `{name}`"),
            );
            with_decl(
                at(d, p, r.pc, "this arrival completed the phase", true),
                decl,
                &name,
            )
            .help("an `arrive.noComplete` must not be the arrival that completes the phase")
        }
        Issue::MaskSelf { mask } => {
            let d = Diagnostic::error(
                "S0009",
                "warp-synchronous mask leaves out the executing thread",
            );
            at(
                d,
                p,
                r.pc,
                &format!("mask {mask:#010x} executed by {n} it does not name"),
                true,
            )
            .note(format!("by {who}"))
            .help("the executing thread must be in `membermask`")
        }
        Issue::ShflSource {
            lane,
            src,
            mask,
            why,
        } => {
            let (title, what) = match why {
                ShflWhy::NotInMask => (
                    format!("shuffle reads lane {src}, which is not in its mask"),
                    format!("lane {src} is not in mask {mask:#010x}"),
                ),
                ShflWhy::Exited => (
                    format!("shuffle reads lane {src}, which has exited"),
                    format!("lane {src} of mask {mask:#010x} has exited"),
                ),
                ShflWhy::NoThread => (
                    format!("shuffle reads lane {src}, which has no thread"),
                    format!("lane {src} of mask {mask:#010x} has no thread (the block is not a multiple of 32)"),
                ),
            };
            let d = Diagnostic::error("S0050", title);
            at(
                d,
                p,
                r.pc,
                &format!(
                    "{} here, the first by lane {lane} of lane {src}",
                    plural(r.count, "undefined read")
                ),
                true,
            )
            .note(format!("{what}; by {who}"))
            .note("the value a shuffle reads from a lane that is not in `membermask` or does not execute it is undefined (PTX ISA, `shfl.sync`); the simulator gives 0")
            .help(match why {
                ShflWhy::NotInMask => "shuffle only from lanes of the mask: with a partial mask (a `ballot` of the lanes in a branch), use offsets that stay inside it, or run the shuffle on the full warp with neutral values in the lanes that do not take part",
                _ => "keep the lanes a shuffle reads alive until after it (guard what comes after the shuffle instead of returning before it), or read only lanes that still run",
            })
        }
        Issue::WgmmaFence { slot, acc, why } => wgmma_fence(p, r, *slot, *acc, *why, &who, &n),
        Issue::Trap => {
            let d = Diagnostic::error("S0016", "a thread executed `trap`");
            at(d, p, r.pc, &format!("executed here by {n}"), true).note(format!("by {who}"))
        }
        Issue::NotTensorMap { addr } => not_a_map(p, r.pc, *addr, &who, &n),
        Issue::Assert(info) => super::runtime::assert_failed(p, r.pc, info, &who, &n),
        Issue::MapaRank { rank, cluster } => {
            super::runtime::mapa_rank(p, r.pc, *rank, *cluster, &who, &n)
        }
        Issue::WgmmaRegister {
            slot,
            write,
            wgmma_pc,
        } => {
            let name = p
                .code
                .reg_name(*slot)
                .unwrap_or_else(|| format!("register {slot}"));
            let is_a = match p
                .code
                .code
                .get(*wgmma_pc as usize)
                .and_then(|i| p.code.syncs.get(i.aux as usize))
            {
                Some(crate::sim::decode::ops::SyncOp::Wgmma(w)) => {
                    !(0..w.nd).any(|i| p.code.lists.get((w.d + i) as usize) == Some(slot))
                }
                _ => false,
            };
            let what = if is_a {
                "A-fragment register"
            } else {
                "accumulator register"
            };
            let verb = if *write { "written" } else { "read" };
            let d = Diagnostic::error(
                "S0023",
                format!("{what} `{name}` {verb} while a wgmma using it is pending"),
            );
            let d = at(d, p, r.pc, &format!("`{name}` {verb} here by {n}"), true);
            let d = at(
                d,
                p,
                *wgmma_pc,
                "by this wgmma, whose group no `wgmma.wait_group` has completed",
                false,
            );
            d.note(format!("by {who}"))
                .note("a wgmma reads and writes its accumulators, and reads the A fragment of an RS wgmma, until a `wgmma.wait_group` of the warp covers its commit group; touching those registers before is undefined (PTX ISA §9.7.15.7.3)")
                .help("complete the group first: `wgmma.commit_group`, then `wgmma.wait_group N` with N the newer groups that may stay pending (kdsl: `wgmma_commit()`, `wgmma_wait(n)`)")
        }
        Issue::WgmmaOverwrite {
            offset,
            wgmma_pc,
            copy,
        } => {
            let (name, decl) = shared_name(p.shared, *offset as u32, 1);
            let how = if *copy { "a copy landing" } else { "a store" };
            let d = Diagnostic::error(
                "S0024",
                "shared memory that a pending wgmma reads is overwritten",
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("{how} from here writes `{name}` (shared offset {offset:#x}), by {n}"),
                true,
            );
            let d = at(d, p, *wgmma_pc, "a wgmma reading it is pending", false);
            let d = match decl {
                Some(s) => d.secondary(s, "declared here"),
                None => d,
            };
            d.note(format!("by {who}"))
                .note("a wgmma reads its shared-memory operands until a `wgmma.wait_group` covers it in every warp of its warpgroup: each warp's part completes at that warp's own wait (the simulator's reading of PTX ISA §9.7.15.7, which speaks of the groups of the executing warp)")
                .help("release a stage (arrive on its `empty` barrier) only after `wgmma.wait_group` in every warp that reads it — one arrival per consumer warp — and refill it only after that")
        }
        Issue::WgmmaDesc { which, desc, why } => {
            let (title, label) = match why {
                DescWhy::Outside { addr } => (
                    format!("wgmma descriptor of {which} reads outside the CTA's shared memory"),
                    format!("descriptor {desc:#018x} of {which} reads shared address {addr:#x}, in no shared variable, for {n}"),
                ),
                DescWhy::BaseOffset => (
                    format!("wgmma descriptor of {which} has a base offset"),
                    format!("descriptor {desc:#018x} of {which} has base offset {} (bits 49-51), for {n}", (desc >> 49) & 7),
                ),
            };
            let fields = format!(
                "the descriptor's start address is {:#x}, leading byte offset {}, stride byte offset {}, swizzle {}",
                (desc & 0x3fff) << 4,
                ((desc >> 16) & 0x3fff) << 4,
                ((desc >> 32) & 0x3fff) << 4,
                ["none", "128B", "64B", "32B"].get(((desc >> 62) & 3) as usize).copied().unwrap_or("?")
            );
            let d = Diagnostic::error("S0025", title);
            let d = at(d, p, r.pc, &label, true)
                .note(fields)
                .note(format!("by {who}"));
            match why {
                DescWhy::Outside { .. } => d.help("the operand's tile (64 rows of A, N rows of B, K columns) must lie in shared memory: check the start address (`(addr & 0x3FFFF) >> 4`), the stride byte offset between 8-row groups and the K step (+2 per 32 bytes)"),
                DescWhy::BaseOffset => d.help("start each swizzled tile on its pattern's repeat (1024 bytes for 128B, 512 for 64B, 256 for 32B) and leave the base offset 0: the simulator takes the swizzle from the absolute address and does not model the base offset"),
            }
        }
        Issue::WgmmaDisagree { warps } => {
            let (title, note) = if *warps {
                ("the warps of a warpgroup disagree on a wgmma", "the n-th wgmma of each warp of a warpgroup must be the same instruction, with the same descriptors and scale-d (`.aligned`; PTX ISA §9.7.15.5.2: the descriptors \"must be same across all the warps in the warpgroup\")")
            } else {
                ("the lanes of a warp disagree on a wgmma", "every lane of a warp must execute the same wgmma with the same descriptors and scale-d")
            };
            let d = Diagnostic::error("S0026", title);
            at(d, p, r.pc, &format!("executed here by {n}"), true)
                .note(format!("by {who}"))
                .note(note)
                .help("compute descriptors and scale-d from warpgroup-uniform values, and issue wgmma under warpgroup-uniform conditions")
        }
        Issue::WgmmaPartial { warps } => {
            let d = Diagnostic::error(
                "S0026",
                format!("wgmma by a warpgroup of {}", plural(*warps, "warp")),
            );
            at(d, p, r.pc, &format!("executed here by {n}"), true)
                .note(format!("by {who}"))
                .note("a warpgroup is 4 consecutive warps (128 threads); a wgmma needs all four, each computing 16 rows of the 64")
                .help("launch a multiple of 128 threads per CTA")
        }
        Issue::SetMaxNregDisagree => {
            let d = Diagnostic::error(
                "S0026",
                "the warps of a warpgroup execute different `setmaxnreg`s",
            );
            at(d, p, r.pc, &format!("executed here by {n}"), true)
                .note(format!("by {who}"))
                .note("\"the same setmaxnreg instruction must be executed by all warps in a warpgroup\" (PTX ISA §9.7.19.5); otherwise the behaviour is undefined")
                .help("execute `setmaxnreg` under a warpgroup-uniform condition (`warp_id / 4`)")
        }
        Issue::SetMaxNregRange { inc, n: count, cur } => {
            let (title, why) = if *inc {
                (
                    format!("`setmaxnreg.inc` to {count} registers, below the warp's {cur}"),
                    "`.inc` must not lower the count",
                )
            } else {
                (
                    format!("`setmaxnreg.dec` to {count} registers, above the warp's {cur}"),
                    "`.dec` must not raise the count",
                )
            };
            let d = Diagnostic::error("S0027", title);
            at(d, p, r.pc, &format!("executed here by {n}"), true)
                .note(format!("by {who}"))
                .note(format!("{why}: otherwise the behaviour is undefined (PTX ISA §9.7.19.5); the simulator leaves the count as it is"))
                .help("use `.inc` to raise a warp's register count and `.dec` to lower it; a warp starts with the kernel's count at entry")
        }
        Issue::TensorAlign { addr } => {
            let d = Diagnostic::error(
                "S0012",
                format!(
                    "tensor copy at shared address {:#x}, which is not 128-byte aligned",
                    addr & 0xff_ffff
                ),
            );
            at(d, p, r.pc, &format!("copy issued here by {n}"), true)
                .note(format!("by {who}"))
                .help("a tensor copy's shared-memory box must start on a 128-byte boundary (a 128B-swizzled one that wgmma reads, on 1024 bytes); align the shared array (`.align 128`) and its stages")
        }
        Issue::TensorCopy { why } => {
            let (title, label) = match why {
                TensorWhy::Rank { given, rank, map } => (
                    format!("`.{given}d` tensor copy on a map of rank {rank}"),
                    format!(
                        "{given} coordinates given here by {n}, and the map `{}` has {rank} dimensions",
                        p.maps.get(*map as usize).map_or("?", |m| m.name.as_str())
                    ),
                ),
                TensorWhy::BoxTooLarge { bytes } => (
                    format!("tensor copy of a {} box, more than shared memory holds", plural(*bytes, "byte")),
                    format!("copy issued here by {n}"),
                ),
                TensorWhy::Reduction { op, elem } => (
                    format!("`.{}` tensor reduction on {elem} elements", op.name()),
                    format!("reduction issued here by {n}, on a map of {elem}"),
                ),
            };
            let d = Diagnostic::error("S0022", title);
            let d = at(d, p, r.pc, &label, true).note(format!("by {who}"));
            match why {
                TensorWhy::Rank { .. } => d.help("a `.Nd` tensor copy takes the N coordinates of a map of rank N"),
                TensorWhy::BoxTooLarge { .. } => d.help("a box must fit in the destination's shared memory, and a phase counts at most 2^20 - 1 transaction bytes"),
                TensorWhy::Reduction { .. } => d.help("`cp.reduce.async.bulk.tensor` adds u32, s32, u64, f32, f16 and bf16; takes the min/max of u32, s32, u64, s64, f16 and bf16; increments and decrements u32; and combines b32/b64 bitwise"),
            }
        }
        Issue::Check(f) => super::checks::finding(p, r, allocs, f, &who, &n),
        Issue::CopyMask { mask, cluster } => {
            let d = Diagnostic::error(
                "S0022",
                format!("multicast mask {mask:#06x} names CTAs outside the cluster of {cluster}"),
            );
            at(d, p, r.pc, &format!("copy issued here by {n}"), true)
                .note(format!("by {who}"))
                .note("bit i of `ctaMask` is the CTA of `%cluster_ctarank` i; the copy lands only in the CTAs the cluster has")
                .help("mask the CTAs of the cluster only: `(1 << cluster size) - 1` at most")
        }
    }
}

/// S0021: a tensor instruction's map operand holds no map.
fn not_a_map(p: &Run<'_>, pc: u32, addr: u64, who: &str, n: &str) -> Diagnostic {
    use crate::sim::decode::ops::Space;
    use crate::sim::machine::memory::generic_space;
    let inst = p.code.inst_text(pc as usize);
    let op = inst.split_whitespace().next().unwrap_or("");
    let d = Diagnostic::error(
        "S0021",
        format!("the map operand of `{op}` is not a tensor map"),
    );
    let d = at(
        d,
        p,
        pc,
        &format!("{n} read no tensor map at address {addr:#x} here"),
        true,
    );
    let where_ = match generic_space(addr) {
        Space::Param => "the kernel's parameter space".to_string(),
        Space::SharedCluster => "shared memory".to_string(),
        Space::Local => "local memory".to_string(),
        _ if addr < 1 << 32 => {
            "no allocation: a `.param` offset used as an address without `cvta.param`?".to_string()
        }
        _ => "global memory".to_string(),
    };
    d.note(format!("the address is in {where_}; by {who}"))
        .note("a tensor map is the 128 bytes a `CUtensorMap` parameter holds (`.param .align 64 .b8 m[128]`, addressed with `mov.u64` + `cvta.param.u64`) or a pointer to such a map in global memory; the simulator's maps are the launch's tensor-map arguments")
        .help("take the map parameter's generic address with `cvta.param.u64` (kdsl does), and give a `.ptx` input's map parameter `--arg N=tmap:TYPE:ARRAY:box=...`")
}

/// S0020: an access that starts in the dynamic shared memory and ends past
/// what the launch gave.
#[allow(clippy::too_many_arguments)]
fn dynamic_overrun(
    p: &Run<'_>,
    pc: u32,
    space: crate::sim::decode::ops::Space,
    addr: u64,
    (rank, off): (u32, u64),
    kind: AccessKind,
    size: u64,
    who: &str,
    n: &str,
) -> Diagnostic {
    let kind_name = kind.name();
    let (base, bytes) = p
        .shared
        .dynamic
        .map_or((0, 0), |d| (u64::from(d.base), u64::from(d.bytes)));
    let (start, end) = (off - base, off - base + size);
    let d = Diagnostic::error(
        "S0020",
        format!("{kind_name} past the end of the launch's dynamic shared memory"),
    );
    let d = at(d, p, pc, &format!("{size}-byte {kind_name} by {n}"), true);
    let given = match bytes {
        0 => "no dynamic shared memory".to_string(),
        b => format!("{} of dynamic shared memory", plural(b, "byte")),
    };
    let d = d
        .note(format!(
            "the launch gives {given}; this {kind_name} is at bytes {start}..{end} of it, in the shared memory of cluster rank {rank}"
        ))
        .note(format!(
            "first at {} address {addr:#x}, by {who}",
            space_name(space)
        ));
    // (kdslc's own kernels are launched with what their layout needs, and
    // the simulator places their declarations apart: an index past one is
    // S0002, naming it.)
    d.help(format!(
        "launch with at least {end} bytes of dynamic shared memory (`kdslc sim`/`kdslc run`: `--shared-bytes {end}` for a .ptx input; host code: the `sharedMemBytes` of the launch), or check the index"
    ))
}

fn space_name(space: crate::sim::decode::ops::Space) -> &'static str {
    space.name()
}

#[allow(clippy::too_many_arguments)]
fn access(
    p: &Run<'_>,
    allocs: &[Alloc],
    pc: u32,
    fault: &Fault,
    kind: AccessKind,
    size: u64,
    who: &str,
    n: &str,
) -> Diagnostic {
    let code = &p.code;
    let kind_name = kind.name();
    match fault {
        Fault::OutOfBounds {
            space,
            addr,
            target: Some((Target::Shared(rank), off)),
        } if !p.shared.named && p.shared.dynamic.is_some_and(|d| d.overrun(*off, size)) => {
            dynamic_overrun(p, pc, *space, *addr, (*rank, *off), kind, size, who, n)
        }
        Fault::OutOfBounds {
            space,
            addr,
            target,
        } => {
            let d = Diagnostic::error(
                "S0002",
                format!("out-of-bounds {kind_name} in {} memory", space_name(*space)),
            );
            let d = at(d, p, pc, &format!("{size}-byte {kind_name} by {n}"), true);
            let d = d.note(format!("first at address {addr:#x}, by {who}"));
            match target {
                Some((Target::Global(i), off)) => match allocs.get(*i) {
                    Some(a) => {
                        let elem = u64::from(a.elem.max(1));
                        let len = a.data.len() as u64;
                        let what = if a.param.is_some() { "the array argument" } else { "the module variable" };
                        d.note(format!(
                            "byte offset {off} (element {}) of {what} `{}`, which has {} of {}",
                            off / elem,
                            a.name,
                            plural(len / elem, "element"),
                            plural(elem, "byte")
                        ))
                    }
                    None => d.note(format!("byte offset {off} of a global allocation")),
                },
                Some((Target::Shared(rank), off)) => d.note(format!(
                    "byte offset {off} of the shared memory of cluster rank {rank}: {}",
                    near_var(&p.shared.vars, *off)
                )),
                Some((Target::Local, off)) => d.note(format!(
                    "byte offset {off} of the thread's local memory: {}",
                    near_var(&code.local, *off)
                )),
                Some((_, off)) => d.note(format!("byte offset {off} of the parameter space")),
                None => d.note(format!("address {addr:#x} is in no allocation")),
            }
            .help("check the index against the array's length (`--arg` arrays must be large enough for what the kernel reads)")
        }
        Fault::Misaligned { space, addr } => {
            let d = Diagnostic::error(
                "S0003",
                format!("misaligned {kind_name} in {} memory", space_name(*space)),
            );
            at(d, p, pc, &format!("{size}-byte {kind_name} by {n}"), true)
                .note(format!("first at address {addr:#x}, which is not a multiple of {size}; by {who}"))
                .help("an access of N bytes (a whole vector for `.v2`/`.v4`) needs an N-byte aligned address")
        }
        Fault::ReadOnly { space, addr, .. } => {
            let d = Diagnostic::error(
                "S0017",
                format!("{kind_name} to read-only {} memory", space_name(*space)),
            );
            at(d, p, pc, &format!("{kind_name} by {n}"), true)
                .note(format!("address {addr:#x}; by {who}"))
        }
        Fault::ExitedPeer { rank, offset } => {
            let (name, decl) = shared_name(p.shared, *offset as u32, 1);
            let d = Diagnostic::error(
                "S0010",
                format!("access to the shared memory of cluster rank {rank}, which has exited"),
            );
            let d = at(
                d,
                p,
                pc,
                &format!("{kind_name} of `{name}` in CTA rank {rank} by {n}"),
                true,
            );
            let d = match decl {
                Some(s) => d.secondary(s, "declared here"),
                None => d,
            };
            d.note(format!("by {who}"))
                .note("a CTA's shared memory ceases to exist when all its threads exit; an access from a cluster peer afterwards is undefined")
                .help("make every CTA wait (`barrier.cluster.arrive` + `barrier.cluster.wait`, kdsl: `cluster_sync()`) before it exits while peers may still access its shared memory")
        }
    }
}
