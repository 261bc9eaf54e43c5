//! Reports of the run-time checks (`machine::sanitizer`): data races
//! (S0030, S0031), uninitialised reads (S0032), transaction overflow
//! (S0033), barrier divergence (S0034). Each names both sides of what went
//! wrong — threads, addresses, allocations, the source span of each — and
//! the synchronisation that was missing where it can be said.

use super::{at, barrier_name, cta, source_name, with_decl, Run};
use crate::diagnostics::{plural, Diagnostic};
use crate::sim::decode::MemVar;
use crate::sim::machine::events::{Issue, Recorded};
use crate::sim::machine::memory::Alloc;
use crate::sim::machine::sanitizer::finding::*;
use crate::span::Span;

pub(crate) fn finding(
    p: &Run<'_>,
    r: &Recorded,
    allocs: &[Alloc],
    f: &Finding,
    who: &str,
    n: &str,
) -> Diagnostic {
    match f {
        Finding::Race(race) => race_report(p, r, allocs, race, who, n),
        Finding::Uninit { mem, size, kind } => uninit(p, r, allocs, *mem, *size, *kind, who, n),
        Finding::TxOverflow {
            barrier,
            phase,
            expected,
            completed,
            bytes,
            late,
            copy,
        } => {
            let (name, decl) = barrier_name(p.shared, barrier);
            let what = if *copy {
                "this copy's"
            } else {
                "this `complete_tx`'s"
            };
            let d = if *late {
                let d = Diagnostic::error(
                    "S0033",
                    format!(
                        "mbarrier `{name}` completed phase {phase} before a copy's {} landed",
                        plural(*bytes, "byte")
                    ),
                );
                at(
                    d,
                    p,
                    r.pc,
                    &format!(
                        "{} of {what} bytes were sent in phase {phase} and count towards phase {}",
                        bytes,
                        phase + 1
                    ),
                    true,
                )
                .note(format!(
                    "phase {phase} of `{name}` expected fewer transaction bytes than the copies issued for it deliver: it completed early, so its waiters went on before these bytes landed, and the next phase starts with bytes it does not expect"
                ))
            } else {
                let d = Diagnostic::error(
                    "S0033",
                    format!(
                        "more transaction bytes complete in phase {phase} of mbarrier `{name}` than it expects"
                    ),
                );
                at(
                    d,
                    p,
                    r.pc,
                    &format!(
                        "{what} {} take the phase to {completed} completed bytes of {expected} expected",
                        plural(*bytes, "byte")
                    ),
                    true,
                )
                .note(format!(
                    "every arrival of the phase is in and its transaction count is {}: the phase cannot complete, and its waiters wait forever",
                    expected - completed
                ))
            };
            with_decl(d, decl, &name)
                .note(format!("by {who}"))
                .help("make the bytes a phase expects (`expect_tx`, `arrive.expect_tx`) equal to the bytes of the copies that complete on it in that phase: count every box in full, also at the edges of the tensor, and expect each copy once")
        }
        Finding::Divergence(dv) => divergence(p, r, dv, who),
    }
}

/// The checks' findings of one kind at instructions of one source span (the
/// copies of an unrolled loop, the parts of a vector access) are one
/// report: the first one's, with every thread and the sum of the counts.
/// Other reports stay as they are.
pub(crate) fn merge_by_span(p: &Run<'_>, list: &[Recorded]) -> Vec<Recorded> {
    let mut out: Vec<Recorded> = Vec::with_capacity(list.len());
    let mut seen: Vec<(crate::span::Span, (u8, u64), usize)> = Vec::new();
    for r in list {
        let Issue::Check(f) = &r.issue else {
            out.push(r.clone());
            continue;
        };
        let span = p.code.sites.get(r.pc as usize).and_then(|s| s.span);
        let key = f.key();
        let found = span.and_then(|sp| {
            seen.iter()
                .find(|(s2, k2, _)| *s2 == sp && *k2 == key)
                .map(|e| e.2)
        });
        match found.and_then(|i| out.get_mut(i)) {
            Some(first) => first.absorb(r),
            None => {
                if let Some(sp) = span {
                    seen.push((sp, key, out.len()));
                }
                out.push(r.clone());
            }
        }
    }
    out
}

/// The variable holding `offset` among `vars`, and the offset in it.
fn var_of(vars: &[MemVar], offset: u64) -> Option<(&MemVar, u64)> {
    vars.iter()
        .filter(|v| {
            u64::from(v.offset) <= offset && offset < u64::from(v.offset) + u64::from(v.size.max(1))
        })
        .max_by_key(|v| v.offset)
        .map(|v| (v, offset - u64::from(v.offset)))
}

/// A memory location for a title (`shared memory `tile``), its
/// declaration, and a note with the byte offset and element.
fn place(p: &Run<'_>, allocs: &[Alloc], mem: Mem) -> (String, Option<Span>, String) {
    let element = |off: u64, elem: u32| {
        if elem > 1 {
            format!(" (element {})", off / u64::from(elem))
        } else {
            String::new()
        }
    };
    match mem {
        Mem::Shared { rank, offset } => match var_of(&p.shared.vars, offset) {
            Some((v, off)) => {
                let name = source_name(v);
                (
                    format!("shared memory `{name}`"),
                    v.decl.span,
                    format!(
                        "first at byte offset {off}{} of `{name}`, in the shared memory of cluster rank {rank}",
                        element(off, v.elem)
                    ),
                )
            }
            None => (
                "shared memory".to_string(),
                None,
                format!("first at shared offset {offset:#x} of cluster rank {rank}"),
            ),
        },
        Mem::Local { offset } => match var_of(&p.code.local, offset) {
            Some((v, off)) => {
                let name = source_name(v);
                (
                    format!("local memory `{name}`"),
                    v.decl.span,
                    format!(
                        "first at byte offset {off}{} of `{name}`",
                        element(off, v.elem)
                    ),
                )
            }
            None => (
                "local memory".to_string(),
                None,
                format!("first at local offset {offset:#x}"),
            ),
        },
        Mem::Global { alloc, offset } => match allocs.get(alloc) {
            Some(a) => {
                let what = if a.param.is_some() {
                    "array"
                } else {
                    "variable"
                };
                (
                    format!("global memory (the {what} `{}`)", a.name),
                    None,
                    format!(
                        "first at byte offset {offset}{} of `{}`",
                        element(offset, a.elem),
                        a.name
                    ),
                )
            }
            None => (
                "global memory".to_string(),
                None,
                format!("first at byte offset {offset} of a global allocation"),
            ),
        },
    }
}

fn thread(t: &crate::sim::machine::events::ThreadRef) -> String {
    format!("cta {} thread {}", cta(t.ctaid), t.tid)
}

/// Who made an access, for a label.
fn actor(p: &Run<'_>, a: &Actor) -> String {
    match a {
        Actor::Thread { who, old: false } => thread(who),
        Actor::Thread { who, old: true } => format!("{} (of an earlier cluster)", thread(who)),
        Actor::Copy { barrier } => {
            let (name, _) = barrier_name(p.shared, barrier);
            format!(
                "the copy (completing on `{name}` of cta {})",
                cta(barrier.ctaid)
            )
        }
        Actor::BulkGroup { issuer } => format!("the bulk copy (of {})", thread(issuer)),
        Actor::CpAsync { issuer } => format!("the cp.async copy (of {})", thread(issuer)),
        Actor::Wgmma { ctaid, warpgroup } => {
            format!(
                "the wgmma (of warpgroup {warpgroup} of cta {})",
                cta(*ctaid)
            )
        }
    }
}

fn race_report(
    p: &Run<'_>,
    r: &Recorded,
    allocs: &[Alloc],
    race: &Race,
    who: &str,
    n: &str,
) -> Diagnostic {
    let (what, decl, offset_note) = place(p, allocs, race.mem);
    let now = &race.now;
    let prior = &race.prior;
    let verb = |k: Kind| if k.writes() { "writes" } else { "reads" };
    let now_label = match now.actor {
        Actor::Thread { .. } => format!(
            "{} of {} here by {n}",
            now.kind.noun(),
            plural(now.size, "byte")
        ),
        _ => format!(
            "{} issued here {} these bytes",
            actor(p, &now.actor),
            verb(now.kind)
        ),
    };
    let prior_label = match prior.actor {
        Actor::Thread { .. } => format!(
            "conflicting {} here by {}, not ordered before it",
            prior.kind.noun(),
            actor(p, &prior.actor)
        ),
        _ => format!(
            "{} issued here {} these bytes, not ordered before it",
            actor(p, &prior.actor),
            verb(prior.kind)
        ),
    };
    let (code, title) = if race.proxy {
        (
            "S0031",
            format!("{what} written by the generic proxy and read by the async proxy without `fence.proxy.async`"),
        )
    } else {
        ("S0030", format!("data race on {what}"))
    };
    let d = Diagnostic::error(code, title);
    let d = at(d, p, r.pc, &now_label, true);
    let d = if prior.pc == r.pc {
        d.note(format!("{prior_label} (the same instruction)"))
    } else {
        at(d, p, prior.pc, &prior_label, false)
    };
    let d = match decl {
        Some(s) => d.secondary(s, "declared here"),
        None => d,
    };
    let d = d
        .note(format!("{offset_note}; by {who}"))
        .note(format!(
            "the {} here and the earlier {} by {} touch the same bytes, at least one of them writes, and no synchronisation orders them",
            now.kind.noun(),
            prior.kind.noun(),
            actor(p, &prior.actor)
        ));
    if race.proxy {
        return d
            .note("TMA copies and wgmma access shared memory through the async proxy; a generic-proxy write is visible to them only after a `fence.proxy.async` ordered between the write and the async operation (PTX ISA, memory consistency model: proxies)")
            .help("execute `fence.proxy.async.shared::cta` after the writes and before the synchronisation that hands the data to the thread issuing the copy or wgmma (CUTLASS: `fence_view_async_shared()`)");
    }
    let (why, help) = missing(race);
    d.note(why)
        .note("a data race is a bug whether or not it changed a value in this run: a GPU may order the two accesses either way")
        .help(help)
}

/// What the two sides of a race lacked: a note, and the help.
fn missing(race: &Race) -> (&'static str, &'static str) {
    let (now, prior) = (&race.now.actor, &race.prior.actor);
    match race.relation {
        Relation::SameWarp => (
            "the two threads are lanes of one warp; the lanes of a warp do not run in lockstep (independent thread scheduling, since Volta), so nothing orders their accesses without a warp barrier",
            "separate the accesses with `__syncwarp()` (kdsl: `sync_warp(mask)`, PTX `bar.warp.sync`); `volatile` does not order the lanes of a warp",
        ),
        Relation::SameCta => (
            "no CTA barrier, mbarrier phase or release–acquire pair orders the two accesses",
            "put a barrier between them (`__syncthreads()`, kdsl `sync_threads()`, PTX `bar.sync 0`), or hand the data over with an mbarrier: arrive after the write, wait before the read",
        ),
        Relation::SameCluster => (
            "the threads are in different CTAs of the cluster: only the cluster barrier, an mbarrier arrival at cluster scope, or a release–acquire pair at cluster scope orders their accesses",
            "synchronise the cluster between the accesses (`cluster_sync()`, PTX `barrier.cluster.arrive` + `barrier.cluster.wait`), or hand over with a remote mbarrier arrival (`.release.cluster`) and a wait",
        ),
        Relation::OtherCluster => (
            "the threads are in CTAs of different clusters, which synchronise only through gpu-scope atomics with release and acquire semantics (or fences around relaxed atomics)",
            "publish with a release (an atomic with `.release`/`.acq_rel`, or `__threadfence()` before a relaxed atomic) and read only after an acquire of the same location that observes it; or give each CTA its own part of the array",
        ),
        Relation::Async => match (now, prior) {
            (_, Actor::Copy { .. }) => (
                "a copy's bytes land asynchronously: only a wait that observes the mbarrier phase the copy completes orders them before a thread's accesses",
                "wait on the copy's mbarrier for the phase it completes (`try_wait.parity`) before touching its destination, and do not write the destination while the copy is in flight",
            ),
            (Actor::Copy { .. }, _) => (
                "the copy writes bytes that another access may still touch: that access is not ordered before the copy's issue",
                "release the buffer after its last read (arrive on an `empty` barrier) and let the thread that issues the next copy into it wait for that release first",
            ),
            (_, Actor::CpAsync { .. }) | (Actor::CpAsync { .. }, _) => (
                "a `cp.async` copy reads its source and writes its destination asynchronously, after its issue and before its issuer's `cp.async.wait_group` (or `wait_all`) that covers its group; another thread is ordered after it only through a barrier after that wait",
                "wait for the copy (`cp.async.commit_group`, then `cp.async.wait_group 0`, `__pipeline_wait_prior(0)`, `cuda::memcpy_async`'s wait) and then `__syncthreads()` before other threads touch its destination; do not touch the destination while the copy is in flight",
            ),
            (_, Actor::Wgmma { .. }) | (Actor::Wgmma { .. }, _) => (
                "a wgmma reads its shared-memory operands until a `wgmma.wait_group` of its warps covers it; the other access is not ordered with that",
                "complete the wgmma (`wgmma.commit_group`, `wgmma.wait_group`) before the operands are overwritten, and order their writes (with `fence.proxy.async`) before the wgmma's issue",
            ),
            _ => (
                "a bulk copy reads its source and writes its destination asynchronously, until its issuer's `cp.async.bulk.wait_group` covers it",
                "wait for the copy (`cp.async.bulk.commit_group`, then `cp.async.bulk.wait_group.read 0`) before writing its source again, and order the source's writes before the copy's issue",
            ),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn uninit(
    p: &Run<'_>,
    r: &Recorded,
    allocs: &[Alloc],
    mem: Mem,
    size: u64,
    kind: Kind,
    who: &str,
    n: &str,
) -> Diagnostic {
    let (what, decl, offset_note) = place(p, allocs, mem);
    let d = Diagnostic::error("S0032", format!("read of uninitialised {what}"));
    let label = match kind {
        Kind::CopyRead => format!("a copy issued here by {n} reads bytes that nothing wrote"),
        Kind::WgmmaRead => format!("a wgmma here reads operand bytes that nothing wrote, for {n}"),
        k => format!(
            "{} of {} here by {n}, which nothing wrote",
            k.noun(),
            plural(size, "byte")
        ),
    };
    let d = at(d, p, r.pc, &label, true);
    let d = match decl {
        Some(s) => d.secondary(s, "declared here"),
        None => d,
    };
    let space = if matches!(mem, Mem::Local { .. }) {
        "local"
    } else {
        "shared"
    };
    d.note(format!("{offset_note}; by {who}"))
        .note(format!(
            "{space} memory starts undefined on a GPU; the simulator reads it as zeros, so this run may look right where a GPU returns garbage"
        ))
        .help("write every byte before any thread reads it, and order the write before the read (a barrier, or an mbarrier hand-over); arrays given to the kernel are initialised, shared and local memory are not")
}

fn divergence(p: &Run<'_>, r: &Recorded, dv: &Divergence, who: &str) -> Diagnostic {
    let count = |v: &[(u32, Vec<u32>)]| v.iter().map(|(_, t)| t.len()).sum::<usize>();
    let waiting = count(&dv.sites);
    let exited = count(&dv.exited);
    let id = dv.id;
    let title = if dv.sites.len() > 1 {
        format!(
            "threads reach CTA barrier {id} at {} different instructions",
            dv.sites.len()
        )
    } else {
        format!(
            "CTA barrier {id} completed without {} that exited",
            plural(exited, "thread")
        )
    };
    let mut d = Diagnostic::error("S0034", title);
    for (i, (pc, tids)) in dv.sites.iter().enumerate() {
        d = at(
            d,
            p,
            *pc,
            &format!(
                "{} {} here at CTA barrier {id}",
                plural(tids.len(), "thread"),
                if tids.len() == 1 { "arrives" } else { "arrive" }
            ),
            i == 0 && *pc == r.pc,
        );
    }
    for (pc, tids) in &dv.exited {
        d = at(
            d,
            p,
            *pc,
            &format!(
                "{} exited here without reaching it",
                plural(tids.len(), "thread")
            ),
            false,
        );
    }
    let mut d = d.note(format!(
        "in cta {}: {} of its {} arrived{}",
        cta(dv.ctaid),
        plural(waiting, "thread"),
        dv.threads,
        if exited > 0 {
            format!(", {exited} exited in the phase")
        } else {
            String::new()
        }
    ));
    let _ = who;
    if dv.sites.len() > 1 {
        d = d.note("`bar.sync` (`__syncthreads()`, kdsl's `sync_threads()`) is `.aligned`: every thread of the CTA must execute the same barrier instruction; threads in different branches, each at its own `sync_threads()`, are undefined behaviour (they meet by the barrier's number on recent GPUs, which hides the divergence)");
    } else {
        d = d.note("a barrier without a thread count waits for every thread of the CTA; a thread that exits instead releases it (PTX ISA, `exit`) but did not do what the others wait for — a `sync_threads()` inside a branch that part of the CTA skips, or an early `return` before it (CUDA requires `__syncthreads()` to be reached by every thread of the block)");
    }
    d.help("let every thread of the CTA reach the same barrier: move it out of the branch (or the branch's work into a condition around the work only), and instead of returning early, skip the work and fall through to the barrier")
}
