//! Reports of what happened during a run: invalid accesses, mbarrier
//! protocol violations, masks, traps.

use super::{at, barrier_name, cta, near_var, shared_name, threads, with_decl, Run};
use crate::diagnostics::{agree, noun_for, plural, Diagnostic};
use crate::sim::machine::events::{AccessKind, Events, Issue, Recorded};
use crate::sim::machine::memory::{Alloc, Fault, Target};

pub(crate) fn from_events(p: &Run<'_>, events: &Events, allocs: &[Alloc]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = events.list.iter().map(|r| event(p, r, allocs)).collect();
    if events.dropped > 0 {
        if let Some(last) = out.pop() {
            out.push(last.note(format!("{} further reports were dropped", events.dropped)));
        }
    }
    out
}

fn event(p: &Run<'_>, r: &Recorded, allocs: &[Alloc]) -> Diagnostic {
    let who = threads(&r.threads, r.count);
    let n = plural(r.count, "thread");
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
        } => {
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
                    plural(*count, "arrival"),
                    agree(*pending, "was", "were")
                ),
                true,
            );
            with_decl(d, decl, &name)
                .note(format!("in phase {phase} of cta {}; by {who}", cta(barrier.ctaid)))
                .help("the arrivals of a phase must add up to the barrier's arrival count; lower the count of `arrive(n)` or raise the barrier's `arrivals`")
        }
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
        Issue::Trap => {
            let d = Diagnostic::error("S0016", "a thread executed `trap`");
            at(d, p, r.pc, &format!("executed here by {n}"), true).note(format!("by {who}"))
        }
    }
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
