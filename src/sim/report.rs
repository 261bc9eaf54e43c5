//! The simulator's reports: what the machine observed, turned into
//! diagnostics (codes `S0001`…, in the catalogue) with source spans.
//!
//! Every report names threads as `cta (x,y,z) threads a..b` (linear thread
//! ids in the CTA, ranges inclusive), barriers by their source name (kdslc
//! names an mbarrier group `NAME` as the PTX symbol `$b_NAME`) and index,
//! and points at the instruction's span. Where an instruction has no span
//! (kdslc PTX whose line the writer did not attribute) the PTX line and
//! text are given in a note instead.

use super::decode::{LoadErrorKind, Program as Code};
use super::machine::events::{AccessKind, BarrierRef, Events, Issue, Recorded, ThreadRef};
use super::machine::memory::{Alloc, Fault, Target};
use super::machine::snapshot::{BarrierInfo, Group, MissingWhy, Snapshot, Wait};
use super::machine::Stop;
use super::ptx::ast::Pos;
use super::{Program, SpanResolver};
use crate::diagnostics::Diagnostic;
use crate::span::Span;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A load-time error: an instruction outside the subset, or text that is
/// not PTX.
pub(crate) fn load_error(
    r: &mut SpanResolver,
    ptx: &str,
    pos: Pos,
    kind: LoadErrorKind,
    message: &str,
) -> Diagnostic {
    let line_text = ptx
        .lines()
        .nth((pos.line as usize).saturating_sub(1))
        .unwrap_or("")
        .trim();
    let mut d = match kind {
        LoadErrorKind::Unsupported => {
            let name = message
                .strip_prefix('`')
                .and_then(|m| m.split('`').next())
                .unwrap_or(message);
            Diagnostic::error(
                "S0013",
                format!("PTX instruction `{name}` is outside the simulator's subset"),
            )
            .note(format!("{message} (PTX line {})", pos.line))
            .help("docs/simulator.md lists the supported PTX subset")
        }
        _ => Diagnostic::error("S0014", format!("cannot load the PTX module: {message}"))
            .note(format!("at PTX line {}", pos.line)),
    };
    match r.ptx_span(pos) {
        Some(span) => d = d.primary(span, "here"),
        None => d = d.note(format!("PTX line {}: `{line_text}`", pos.line)),
    }
    d
}

pub(crate) fn bad_launch(kernel: &str, why: &str) -> Diagnostic {
    Diagnostic::error(
        "S0015",
        format!("launch does not fit kernel `{kernel}`: {why}"),
    )
}

/// `(x,y,z)`.
fn cta(c: [u32; 3]) -> String {
    format!("({},{},{})", c[0], c[1], c[2])
}

/// `thread 5` / `threads 0..31, 64..95` (inclusive ranges).
fn ranges(tids: &[u32]) -> String {
    let mut tids = tids.to_vec();
    tids.sort_unstable();
    tids.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while let Some(&start) = tids.get(i) {
        let mut end = start;
        while tids.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}..{end}")
        });
        i += 1;
    }
    let word = if tids.len() == 1 { "thread" } else { "threads" };
    format!("{word} {}", parts.join(", "))
}

/// `cta (0,0,0) threads 32..127; cta (1,0,0) thread 0`.
pub fn threads(list: &[ThreadRef], total: u64) -> String {
    let mut by: BTreeMap<[u32; 3], Vec<u32>> = BTreeMap::new();
    for t in list {
        by.entry(t.ctaid).or_default().push(t.tid);
    }
    let shown = 4;
    let mut parts: Vec<String> = by
        .iter()
        .take(shown)
        .map(|(c, tids)| format!("cta {} {}", cta(*c), ranges(tids)))
        .collect();
    if by.len() > shown {
        parts.push(format!("{} more CTAs", by.len() - shown));
    }
    let mut s = parts.join("; ");
    if total > list.len() as u64 {
        let _ = write!(s, " ({total} threads in all)");
    }
    s
}

fn count_word(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Where an instruction is, for labels and notes.
struct Here<'a> {
    span: Option<Span>,
    line: u32,
    text: &'a str,
}

fn here(p: &Program, pc: u32) -> Here<'_> {
    let site = p.code.sites.get(pc as usize);
    Here {
        span: site.and_then(|s| s.span),
        line: site.map_or(0, |s| s.pos.line),
        text: p.code.inst_text(pc as usize),
    }
}

/// A label at the instruction, or a note with its PTX line when it has no span.
fn at(d: Diagnostic, p: &Program, pc: u32, message: &str, primary: bool) -> Diagnostic {
    let h = here(p, pc);
    match h.span {
        Some(span) if primary => d.primary(span, message),
        Some(span) => d.secondary(span, message),
        None => d.note(format!("{message}: PTX line {}: `{}`", h.line, h.text)),
    }
}

/// A mangled C++ local static (`_ZZ12pipeline_sumE4full`) → `full`.
fn demangle_local(sym: &str) -> Option<String> {
    let rest = sym.strip_prefix("_ZZ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: usize = digits.parse().ok()?;
    let rest = rest.get(digits.len() + n..)?.strip_prefix('E')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: usize = digits.parse().ok()?;
    rest.get(digits.len()..digits.len() + n).map(str::to_string)
}

/// The source name of the shared variable holding `offset`: with an index
/// when it is an array of `elem`-byte objects (barriers), else with the
/// byte offset into it.
fn shared_name(code: &Code, offset: u32, elem: u32) -> (String, Option<Span>) {
    let Some(v) = code.shared_var_at(offset) else {
        return (format!("<shared+{offset}>"), None);
    };
    let base = v
        .name
        .strip_prefix("$b_")
        .or_else(|| v.name.strip_prefix("$s_"))
        .map(str::to_string)
        .or_else(|| demangle_local(&v.name))
        .unwrap_or_else(|| v.name.clone());
    let index = (offset - v.offset) / elem.max(1);
    let name = if elem > 1 && v.size > elem {
        format!("{base}[{index}]")
    } else if offset != v.offset {
        format!("{base}` at byte offset `{}", offset - v.offset)
    } else {
        base
    };
    (name, v.decl.span)
}

fn barrier_name(code: &Code, b: &BarrierRef) -> (String, Option<Span>) {
    shared_name(code, b.offset, 8)
}

/// Adds the barrier's declaration as a secondary label.
fn with_decl(d: Diagnostic, decl: Option<Span>, name: &str) -> Diagnostic {
    let base = name.split('[').next().unwrap_or(name);
    match decl {
        Some(span) => d.secondary(span, format!("`{base}` declared here")),
        None => d,
    }
}

pub(crate) fn from_events(p: &Program, events: &Events, allocs: &[Alloc]) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = events.list.iter().map(|r| event(p, r, allocs)).collect();
    if events.dropped > 0 {
        if let Some(last) = out.pop() {
            out.push(last.note(format!("{} further reports were dropped", events.dropped)));
        }
    }
    out
}

fn event(p: &Program, r: &Recorded, allocs: &[Alloc]) -> Diagnostic {
    let who = threads(&r.threads, r.count);
    let n = count_word(r.count, "thread", "threads");
    let code = &p.code;
    match &r.issue {
        Issue::Access { fault, kind, size } => {
            access(p, allocs, r.pc, fault, *kind, *size, &who, &n)
        }
        Issue::MbarUninit { barrier } => {
            let (name, decl) = barrier_name(code, barrier);
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
            let (name, decl) = barrier_name(code, barrier);
            let d = Diagnostic::error(
                "S0005",
                format!("mbarrier `{name}` initialised again while a phase is pending"),
            );
            let d = at(d, p, r.pc, "initialised again here", true);
            with_decl(d, decl, &name).note(format!(
                "its current phase had {} of {expected} arrivals and {tx} pending transaction bytes",
                i64::from(*expected) - pending
            ))
            .help("initialise a barrier once, before any thread uses it; to reuse it, let its phase complete (or `mbarrier.inval` it) first")
        }
        Issue::MbarUnderflow {
            barrier,
            count,
            pending,
            phase,
        } => {
            let (name, decl) = barrier_name(code, barrier);
            let d = Diagnostic::error(
                "S0006",
                format!("arrival on mbarrier `{name}` takes its pending count below zero"),
            );
            let was = if *pending == 1 { "was" } else { "were" };
            let d = at(
                d,
                p,
                r.pc,
                &format!("{count} arrivals here, but only {pending} {was} pending"),
                true,
            );
            with_decl(d, decl, &name)
                .note(format!("in phase {phase} of cta {}; by {who}", cta(barrier.ctaid)))
                .help("the arrivals of a phase must add up to the barrier's arrival count; lower the count of `arrive(n)` or raise the barrier's `arrivals`")
        }
        Issue::TxRange { barrier, tx } => {
            let (name, decl) = barrier_name(code, barrier);
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
            let (name, decl) = barrier_name(code, barrier);
            let d = Diagnostic::error(
                "S0008",
                format!("wait on mbarrier `{name}` is {phases} phases behind"),
            );
            let d = at(
                d,
                p,
                r.pc,
                &format!("this wait for parity {parity} comes {phases} phases after the thread's previous wait on `{name}`"),
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
                format!("bulk copy of {size} bytes is not a multiple of 16 bytes or not 16-byte aligned"),
            );
            at(d, p, r.pc, &format!("copy issued here by {n}"), true)
                .note(format!("size {size}, destination {dst:#x}, source {src:#x} ({who})"))
                .help("`cp.async.bulk` needs a size that is a multiple of 16 and 16-byte aligned source and destination addresses")
        }
        Issue::NoComplete { barrier } => {
            let (name, decl) = barrier_name(code, barrier);
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

/// Where a shared or local offset is relative to the variables.
fn near_var(vars: &[crate::sim::decode::MemVar], off: u64) -> String {
    let source_name = |v: &crate::sim::decode::MemVar| {
        v.name
            .strip_prefix("$s_")
            .or_else(|| v.name.strip_prefix("$b_"))
            .map(str::to_string)
            .or_else(|| demangle_local(&v.name))
            .unwrap_or_else(|| v.name.clone())
    };
    let below = vars
        .iter()
        .filter(|v| u64::from(v.offset) <= off)
        .max_by_key(|v| v.offset);
    match below {
        Some(v) if off < u64::from(v.offset) + u64::from(v.size) => format!(
            "the access runs past the end of `{}` ({} bytes at offset {})",
            source_name(v),
            v.size,
            v.offset
        ),
        Some(v) => {
            let gap = off - u64::from(v.offset) - u64::from(v.size);
            let elem = u64::from(v.elem.max(1));
            let what = if elem == 1 {
                format!(
                    "`{}` ({} bytes at offset {})",
                    source_name(v),
                    v.size,
                    v.offset
                )
            } else {
                format!(
                    "`{}` ({} elements of {elem} bytes at offset {}; this is element {})",
                    source_name(v),
                    u64::from(v.size) / elem,
                    v.offset,
                    (off - u64::from(v.offset)) / elem
                )
            };
            if gap == 0 {
                format!("just past the end of {what}")
            } else {
                format!("{gap} bytes past the end of {what}")
            }
        }
        None => "before the first variable".to_string(),
    }
}

fn space_name(space: crate::sim::decode::ops::Space) -> &'static str {
    space.name()
}

#[allow(clippy::too_many_arguments)]
fn access(
    p: &Program,
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
                            "byte offset {off} (element {}) of {what} `{}`, which has {} elements of {elem} bytes",
                            off / elem,
                            a.name,
                            len / elem
                        ))
                    }
                    None => d.note(format!("byte offset {off} of a global allocation")),
                },
                Some((Target::Shared(rank), off)) => d.note(format!(
                    "byte offset {off} of the shared memory of cluster rank {rank}: {}",
                    near_var(&code.shared, *off)
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
            let (name, decl) = shared_name(code, *offset as u32, 1);
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

pub(crate) fn from_stop(p: &Program, stop: &Stop, max_steps: u64) -> Vec<Diagnostic> {
    match stop {
        Stop::Deadlock(s) => deadlock(p, s),
        Stop::NoProgress(s) => vec![no_progress(p, s, max_steps)],
    }
}

/// What a group of threads waits for, as a verb phrase (`wait on `full[0]`
/// for the phase of parity 0`), with the verb agreeing with `one`.
fn wait_desc(p: &Program, s: &Snapshot, g: &Group, one: bool) -> String {
    let v = |base: &str| {
        if one {
            format!("{base}s")
        } else {
            base.to_string()
        }
    };
    match &g.wait {
        Wait::Mbar {
            barrier,
            parity,
            token,
            poll,
        } => {
            let name = s
                .barriers
                .get(*barrier)
                .map_or_else(|| "?".to_string(), |b| barrier_name(&p.code, &b.r).0);
            let verb = v(if *poll { "poll" } else { "wait" });
            match (parity, token) {
                (Some(par), _) => format!("{verb} on `{name}` for the phase of parity {par}"),
                (None, Some(tok)) => format!("{verb} on `{name}` for phase {tok} to complete"),
                _ => format!("{verb} on `{name}`"),
            }
        }
        Wait::Bar {
            id,
            arrived,
            expected,
        } => {
            format!(
                "{} at CTA barrier {id}, where {arrived} of {expected} threads arrived",
                v("wait")
            )
        }
        Wait::Cluster { arrived, live } => {
            format!(
                "{} at the cluster barrier, where {arrived} of {live} threads arrived",
                v("wait")
            )
        }
        Wait::Warp { mask, .. } => format!("{} for the lanes of mask {mask:#010x}", v("wait")),
        Wait::Running => {
            if one {
                "is running".to_string()
            } else {
                "are running".to_string()
            }
        }
    }
}

/// The label of a group at its instruction: `128 threads wait here on ...`.
fn group_label(p: &Program, s: &Snapshot, g: &Group) -> String {
    let n = g.threads.len() as u64;
    let desc = wait_desc(p, s, g, n == 1);
    let (verb, rest) = desc.split_once(' ').unwrap_or((desc.as_str(), ""));
    format!("{} {verb} here {rest}", count_word(n, "thread", "threads"))
}

/// A group as a note (a label, when the instruction has a span, says where).
fn group_note(d: Diagnostic, p: &Program, s: &Snapshot, g: &Group, primary: bool) -> Diagnostic {
    let h = here(p, g.pc);
    let who = threads(&g.threads, g.threads.len() as u64);
    let desc = wait_desc(p, s, g, g.threads.len() == 1);
    match h.span {
        Some(span) => {
            let label = group_label(p, s, g);
            let d = if primary {
                d.primary(span, label)
            } else {
                d.secondary(span, label)
            };
            d.note(format!("{who} {desc}"))
        }
        None => d.note(format!("{who} {desc} at PTX line {}: `{}`", h.line, h.text)),
    }
}

fn barrier_note(p: &Program, b: &BarrierInfo) -> String {
    let (name, _) = barrier_name(&p.code, &b.r);
    let arrived = i64::from(b.expected) - b.pending;
    let mut s = format!(
        "barrier `{name}` of cta {}: phase {} (parity {}) is pending with {arrived} of {} arrivals",
        cta(b.r.ctaid),
        b.phase,
        b.phase & 1,
        b.expected
    );
    if b.tx != 0 || b.inflight_tx != 0 {
        let _ = write!(s, " and {} transaction bytes still expected", b.tx);
        if b.inflight_tx > 0 {
            let _ = write!(s, " ({} in copies in flight)", b.inflight_tx);
        } else {
            s.push_str(" (no copy in flight will deliver them)");
        }
    }
    s
}

fn deadlock(p: &Program, s: &Snapshot) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Warp-synchronous waits on lanes that can never arrive are their own
    // report: the mask is the mistake.
    let (warp_dead, rest): (Vec<&Group>, Vec<&Group>) = s.groups.iter().partition(|g| {
        matches!(&g.wait, Wait::Warp { missing, .. }
            if missing.iter().any(|m| matches!(m.why, MissingWhy::Exited { .. } | MissingWhy::NoThread)))
    });
    for g in warp_dead {
        out.push(warp_report(p, s, g));
    }
    let rest: Vec<&Group> = rest
        .into_iter()
        .filter(|g| g.wait != Wait::Running)
        .collect();
    if rest.is_empty() {
        return out;
    }
    let mut d = Diagnostic::error("S0001", "deadlock: no thread can make progress");
    for (i, g) in rest.iter().enumerate() {
        d = group_note(d, p, s, g, i == 0);
    }
    for b in &s.barriers {
        d = d.note(barrier_note(p, b));
        let (name, decl) = barrier_name(&p.code, &b.r);
        d = with_decl(d, decl, &name);
        for (t, pc) in b.last_arrivals.iter().rev().take(2) {
            let msg = format!(
                "last arrival on `{name}` here (cta {} thread {})",
                cta(t.ctaid),
                t.tid
            );
            d = at(d, p, *pc, &msg, false);
        }
        if b.last_arrivals.is_empty() && b.arrivals == 0 && b.phase == 0 {
            d = d.note(format!("no thread has arrived on `{name}` yet"));
        }
    }
    d = exited_notes(d, p, s);
    for h in deadlock_help(s) {
        d = d.help(h);
    }
    out.push(d);
    out
}

fn exited_notes(mut d: Diagnostic, p: &Program, s: &Snapshot) -> Diagnostic {
    if s.exited.is_empty() {
        return d.note("no thread has exited");
    }
    for (pc, list) in &s.exited {
        let h = here(p, *pc);
        d = d.note(format!(
            "{} exited (PTX line {})",
            threads(list, list.len() as u64),
            h.line
        ));
    }
    d
}

fn deadlock_help(s: &Snapshot) -> Vec<String> {
    let mut help = Vec::new();
    for b in &s.barriers {
        if b.tx > 0 && b.inflight_tx <= 0 && b.pending == 0 {
            help.push(format!(
                "the phase expects {} more transaction bytes than its copies deliver: check `arrive_expect_tx`/`expect_tx` against the sizes of the copies that complete on the barrier",
                b.tx
            ));
        } else if b.pending > 0 {
            help.push(format!(
                "{} needed to complete the phase: check that every thread the barrier counts arrives in every phase",
                count_word(b.pending as u64, "more arrival is", "more arrivals are")
            ));
        }
    }
    if help.is_empty() {
        help.push(
            "every remaining thread waits for an event that no running thread will cause"
                .to_string(),
        );
    }
    help
}

fn warp_report(p: &Program, s: &Snapshot, g: &Group) -> Diagnostic {
    let Wait::Warp { missing, .. } = &g.wait else {
        return Diagnostic::error(
            "S0009",
            "warp-synchronous mask names threads that never arrive",
        );
    };
    let mut d = Diagnostic::error(
        "S0009",
        "warp-synchronous mask names threads that never arrive",
    );
    d = group_note(d, p, s, g, true);
    let lanes = |pred: &dyn Fn(&MissingWhy) -> bool| -> Vec<u32> {
        missing
            .iter()
            .filter(|m| pred(&m.why))
            .map(|m| m.lane)
            .collect()
    };
    let none = lanes(&|w| matches!(w, MissingWhy::NoThread));
    if !none.is_empty() {
        d = d.note(format!(
            "{} of the warp have no thread (the block is not a multiple of 32)",
            lane_list(&none)
        ));
    }
    let mut exit_pcs: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for m in missing {
        if let MissingWhy::Exited { pc } = m.why {
            exit_pcs.entry(pc).or_default().push(m.lane);
        }
    }
    for (pc, ls) in exit_pcs {
        d = at(d, p, pc, &format!("{} exited here", lane_list(&ls)), false);
    }
    let mut else_pcs: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for m in missing {
        if let MissingWhy::Elsewhere { pc } = m.why {
            else_pcs.entry(pc).or_default().push(m.lane);
        }
    }
    for (pc, ls) in else_pcs {
        d = at(
            d,
            p,
            pc,
            &format!("{} blocked here instead", lane_list(&ls)),
            false,
        );
    }
    d.help("every lane that `membermask` names must execute the same warp-synchronous instruction; pass the mask of the lanes that do (`__activemask()` before they diverge), or keep the exited lanes alive until after it")
}

/// `lane 31` / `lanes 0..3, 7`.
fn lane_list(lanes: &[u32]) -> String {
    let r = ranges(lanes);
    match r.strip_prefix("threads ") {
        Some(rest) => format!("lanes {rest}"),
        None => r.replacen("thread ", "lane ", 1),
    }
}

fn no_progress(p: &Program, s: &Snapshot, max_steps: u64) -> Diagnostic {
    let mut d = Diagnostic::error("S0011", format!("no progress within {max_steps} steps"));
    for (i, g) in s.groups.iter().enumerate() {
        d = group_note(d, p, s, g, i == 0);
    }
    d = exited_notes(d, p, s);
    d.help("a thread that spins on memory another thread should change never yields under the in-order schedule; try `--schedule random:SEED`, or wait on a barrier instead of spinning")
        .help("if the kernel is just long, raise `--max-steps`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ranges_compress() {
        let refs: Vec<ThreadRef> = (32..128)
            .chain([3])
            .map(|tid| ThreadRef {
                ctaid: [0, 0, 0],
                tid,
            })
            .chain([ThreadRef {
                ctaid: [1, 0, 0],
                tid: 0,
            }])
            .collect();
        assert_eq!(
            threads(&refs, refs.len() as u64),
            "cta (0,0,0) threads 3, 32..127; cta (1,0,0) thread 0"
        );
        assert_eq!(
            demangle_local("_ZZ12pipeline_sumE4full").as_deref(),
            Some("full")
        );
    }
}
