//! Reports of a run that stopped: the deadlock report (every remaining
//! thread blocked), a warp-synchronous mask that can never be satisfied, and
//! no progress within the step budget.

use super::{at, barrier_name, cta, here, ranges, threads, with_decl, Run};
use crate::diagnostics::{agree, noun_for, plural, Diagnostic};
use crate::sim::machine::snapshot::{
    BarrierInfo, Group, MissingWhy, ParityHint, PoolInfo, Snapshot, Wait,
};
use crate::sim::machine::Stop;
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) fn from_stop(p: &Run<'_>, stop: &Stop, max_steps: u64) -> Vec<Diagnostic> {
    match stop {
        Stop::Deadlock(s) => deadlock(p, s),
        Stop::NoProgress(s) => vec![no_progress(p, s, max_steps)],
    }
}

/// What a group of threads waits for, as a verb phrase (`wait on `full[0]`
/// for the phase of parity 0`), with the verb agreeing with `one`.
fn wait_desc(p: &Run<'_>, s: &Snapshot, g: &Group, one: bool) -> String {
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
                .map_or_else(|| "?".to_string(), |b| barrier_name(p.shared, &b.r).0);
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
                "{} at CTA barrier {id}, where {arrived} of {} arrived",
                v("wait"),
                plural(*expected, "thread")
            )
        }
        Wait::Cluster { arrived, live } => {
            format!(
                "{} at the cluster barrier, where {arrived} of {} arrived",
                v("wait"),
                plural(*live, "thread")
            )
        }
        Wait::Warp { mask, .. } => format!("{} for the lanes of mask {mask:#010x}", v("wait")),
        Wait::RegPool { want, held } => format!(
            "{} in `setmaxnreg.inc` for {want} registers per thread, holding {held}",
            v("wait")
        ),
        Wait::Running => {
            if one {
                "is running".to_string()
            } else {
                "are running".to_string()
            }
        }
        Wait::NotStarted => {
            if one {
                "has not started".to_string()
            } else {
                "have not started".to_string()
            }
        }
    }
}

/// The label of a group at its instruction: `128 threads wait here on ...`.
fn group_label(p: &Run<'_>, s: &Snapshot, g: &Group) -> String {
    let n = g.threads.len() as u64;
    if g.wait == Wait::Running {
        return format!("{} running here", plural(n, "thread"));
    }
    let desc = wait_desc(p, s, g, n == 1);
    let (verb, rest) = desc.split_once(' ').unwrap_or((desc.as_str(), ""));
    format!("{} {verb} here {rest}", plural(n, "thread"))
}

/// A group as a note (a label, when the instruction has a span, says where).
fn group_note(d: Diagnostic, p: &Run<'_>, s: &Snapshot, g: &Group, primary: bool) -> Diagnostic {
    let h = here(p, g.pc);
    let who = threads(&g.threads, g.threads.len() as u64);
    let desc = wait_desc(p, s, g, g.threads.len() == 1);
    if g.wait == Wait::NotStarted {
        // Where they would start says nothing.
        return d.note(format!("{who} {desc}"));
    }
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

/// A barrier's state for its note (which CTA's, the note says).
fn barrier_state(b: &BarrierInfo) -> String {
    let arrived = i64::from(b.expected) - b.pending;
    let mut s = format!(
        "phase {} (parity {}) is pending with {arrived} of {}",
        b.phase,
        b.phase & 1,
        plural(b.expected, "arrival")
    );
    if b.tx != 0 || b.inflight_tx != 0 {
        let _ = write!(
            s,
            " and {} still expected",
            plural(b.tx, "transaction byte")
        );
        if b.inflight_tx > 0 {
            let _ = write!(s, " ({} in copies in flight)", b.inflight_tx);
        } else {
            s.push_str(" (no copy in flight will deliver them)");
        }
    }
    s
}

fn deadlock(p: &Run<'_>, s: &Snapshot) -> Vec<Diagnostic> {
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
    let mut rest: Vec<&Group> = rest
        .into_iter()
        .filter(|g| !matches!(g.wait, Wait::Running | Wait::NotStarted))
        .collect();
    // Warps waiting for registers first: a pool that can never serve them
    // holds up everyone else.
    rest.sort_by_key(|g| !matches!(g.wait, Wait::RegPool { .. }));
    if rest.is_empty() {
        return out;
    }
    let mut d = Diagnostic::error("S0001", "deadlock: no thread can make progress");
    // The CTAs of a cluster that wait alike are one group: one label and
    // one note for all of them, not one per CTA.
    let mut merged: Vec<(u32, String, Group)> = Vec::new();
    for g in &rest {
        let desc = wait_desc(p, s, g, false);
        match merged
            .iter_mut()
            .find(|(pc, d, _)| *pc == g.pc && *d == desc)
        {
            Some((_, _, m)) => m.threads.extend(g.threads.iter().copied()),
            None => merged.push((g.pc, desc, (*g).clone())),
        }
    }
    let rest: Vec<&Group> = merged.iter().map(|(_, _, g)| g).collect();
    for (i, g) in rest.iter().enumerate() {
        d = group_note(d, p, s, g, i == 0);
    }
    d = exit_barrier_notes(d, p, s, &rest);
    for h in &s.parity_hints {
        d = d.note(parity_hint(p, s, h));
    }
    if !s.cycle.is_empty() {
        d = d.note(cycle_note(p, s));
    }
    let mut declared = Vec::new();
    // Per (note without its CTA): the CTAs; per (pc, barrier name): the
    // last arrivals there.
    let mut notes: Vec<(String, String, Vec<[u32; 3]>)> = Vec::new();
    let mut arrivals: Vec<LastArrivals> = Vec::new();
    let mut never: Vec<String> = Vec::new();
    for b in &s.barriers {
        let (name, decl) = barrier_name(p.shared, &b.r);
        let rest_of = barrier_state(b);
        match notes
            .iter_mut()
            .find(|(n, r, _)| *n == name && *r == rest_of)
        {
            Some((_, _, ctas)) => ctas.push(b.r.ctaid),
            None => notes.push((name.clone(), rest_of, vec![b.r.ctaid])),
        }
        // Barriers of one array share their declaration: one label.
        if !declared.contains(&decl) {
            declared.push(decl);
            d = with_decl(d, decl, &name);
        }
        for (t, pc, phase) in b.last_arrivals.iter().rev().take(2) {
            match arrivals
                .iter_mut()
                .find(|(at, n, _)| at == pc && *n == name)
            {
                Some((_, _, list)) => list.push((*t, *phase)),
                None => arrivals.push((*pc, name.clone(), vec![(*t, *phase)])),
            }
        }
        if b.last_arrivals.is_empty() && b.arrivals == 0 && b.phase == 0 && !never.contains(&name) {
            never.push(name.clone());
        }
    }
    for (name, state, ctas) in &notes {
        let list: Vec<String> = ctas.iter().map(|&c| cta(c)).collect();
        let of = if list.len() == 1 { "cta" } else { "ctas" };
        d = d.note(format!(
            "barrier `{name}` of {of} {}: {state}",
            list.join(", ")
        ));
        if let Some(i) = never.iter().position(|n| n == name) {
            never.remove(i);
            d = d.note(format!("no thread has arrived on `{name}` yet"));
        }
    }
    for (pc, name, list) in &arrivals {
        let Some(&(t, phase)) = list.first() else {
            continue;
        };
        let others = list.iter().filter(|(o, _)| o.ctaid != t.ctaid).count();
        let mut msg = format!(
            "last arrival on `{name}` here (cta {} thread {}, in phase {phase}",
            cta(t.ctaid),
            t.tid
        );
        if others > 0 {
            let _ = write!(msg, "; likewise in {}", plural(others as u64, "other CTA"));
        }
        msg.push(')');
        d = at(d, p, *pc, &msg, false);
    }
    for pool in &s.pools {
        d = pool_notes(d, pool);
    }
    d = exited_notes(d, p, s);
    for h in deadlock_help(s) {
        d = d.help(h);
    }
    out.push(d);
    out
}

/// The last arrivals at one site on barriers of one name (of several
/// CTAs): the pc, the name, each thread and the phase it arrived in.
type LastArrivals = (
    u32,
    String,
    Vec<(crate::sim::machine::events::ThreadRef, u64)>,
);

/// The cycle of waits: who arrives on each barrier, and where they wait.
fn cycle_note(p: &Run<'_>, s: &Snapshot) -> String {
    let name = |i: usize| {
        s.barriers
            .get(i)
            .map_or_else(String::new, |b| barrier_name(p.shared, &b.r).0)
    };
    let mut steps = Vec::new();
    for (k, (b, who)) in s.cycle.iter().enumerate() {
        let next = s.cycle.get(k + 1).or(s.cycle.first()).map_or(0, |c| c.0);
        steps.push(format!(
            "`{}` is arrived on by {}, which {} on `{}`",
            name(*b),
            threads(who, who.len() as u64),
            agree(who.len() as u64, "waits", "wait"),
            name(next)
        ));
    }
    format!(
        "the waits form a cycle: {}; no thread of the cycle can arrive before another of it does",
        steps.join("; ")
    )
}

/// What a parity wait names, when it is not the phase the thread meant.
fn parity_hint(p: &Run<'_>, s: &Snapshot, h: &ParityHint) -> String {
    let Some(b) = s.barriers.get(h.barrier) else {
        return String::new();
    };
    let (name, _) = barrier_name(p.shared, &b.r);
    let who = format!("cta {} thread {}", cta(h.thread.ctaid), h.thread.tid);
    let k = b.phase;
    match (h.arrived, h.waited) {
        (Some(a), _) => format!(
            "wrong parity: {who} arrived on `{name}` in phase {a}, which has completed, and waits for parity {}: that is the parity of phase {k}, which it never arrived in{}; to wait for phase {a}, wait for parity {}",
            h.parity,
            if b.pending > 0 { " and which still lacks arrivals" } else { "" },
            a & 1
        ),
        (None, w) => {
            let since = w.unwrap_or(0);
            // The first phase of that parity after the thread's previous wait.
            let meant = if since & 1 == h.parity & 1 { since } else { since + 1 };
            let previous = match w {
                Some(w) => format!("its previous wait on it returned when {} had completed", plural(w, "phase")),
                None => "it has not waited on it before".to_string(),
            };
            format!(
                "wrong parity: {who} waits for parity {} of `{name}`; {previous}, so the phase it meant is phase {meant}, which has completed already: parity {} now names the pending phase {k}",
                h.parity,
                h.parity
            )
        }
    }
}

/// Threads waiting at the cluster barrier that ends the kernel (kdslc's
/// implicit exit barrier): what it is, and the branches (a `return`) that
/// took them there.
fn exit_barrier_notes(
    mut d: Diagnostic,
    p: &Run<'_>,
    s: &Snapshot,
    groups: &[&Group],
) -> Diagnostic {
    let at_exit = groups.iter().any(|g| {
        matches!(g.wait, Wait::Cluster { .. })
            && crate::sim::machine::snapshot::exit_barrier(&p.program.code, g.pc)
    });
    if !at_exit {
        return d;
    }
    for &(_, jump, n) in &s.exit_paths {
        d = at(
            d,
            p,
            jump,
            &format!(
                "{} reached the exit barrier through here",
                plural(n, "thread")
            ),
            false,
        );
    }
    d.note("the cluster barrier at the end of the kernel is its exit barrier: kdslc ends a kernel that uses its cluster peers' shared memory with one, so that no CTA's shared memory ceases to exist while a peer may still access it; the threads there have finished (or returned) and wait for all the others to get there")
}

/// The register pool of a CTA whose warps wait in `setmaxnreg.inc`.
fn pool_notes(d: Diagnostic, pool: &PoolInfo) -> Diagnostic {
    let n = pool.groups.len() as u32;
    let mut holds = Vec::new();
    let mut asked = Vec::new();
    for (g, warps) in &pool.groups {
        // The budget a warpgroup asks for: what its waiting warps want,
        // else what it holds.
        let budget = warps
            .iter()
            .map(|&(_, held, want)| want.unwrap_or(held))
            .max()
            .unwrap_or(0);
        asked.push(budget);
        let uniform = warps
            .iter()
            .zip(warps.iter().skip(1))
            .all(|(a, b)| a.1 == b.1 && a.2 == b.2);
        let state = |held: u32, want: Option<u32>, one: bool| match want {
            Some(w) if one => format!("holds {held} and asks for {w}"),
            Some(w) => format!("hold {held} and ask for {w}"),
            None if one => format!("holds {held}"),
            None => format!("hold {held}"),
        };
        match warps.first() {
            Some(&(_, held, want)) if uniform => {
                holds.push(format!("warpgroup {g} {}", state(held, want, true)));
            }
            _ => {
                // Consecutive warps in the same state, together.
                let mut parts: Vec<String> = Vec::new();
                let mut i = 0;
                while let Some(&(first, held, want)) = warps.get(i) {
                    let mut last = first;
                    while warps
                        .get(i + 1)
                        .is_some_and(|&(_, h, w)| h == held && w == want)
                    {
                        i += 1;
                        last = warps.get(i).map_or(last, |x| x.0);
                    }
                    let one = first == last;
                    let who = if one {
                        format!("warp {first}")
                    } else {
                        format!("warps {first}..{last}")
                    };
                    parts.push(format!("{who} {}", state(held, want, one)));
                    i += 1;
                }
                holds.push(format!("warpgroup {g}: {}", parts.join(", ")));
            }
        }
    }
    let total: u32 = asked.iter().sum();
    let asked: Vec<String> = asked.iter().map(u32::to_string).collect();
    d.note(format!(
        "the register pool of cta {}: {} threads with {} registers each at entry ({} registers); per thread, {}",
        cta(pool.ctaid),
        pool.threads,
        pool.entry,
        u64::from(pool.threads) * u64::from(pool.entry),
        holds.join(", ")
    ))
    .help(format!(
        "the warpgroups' budgets add up to {} = {total} registers per thread, more than the {} ({n} × {}) the pool holds: an `.inc` waits until other warps `.dec`, so lower an `.inc` (or raise a `.dec`) until they fit",
        asked.join(" + "),
        n * pool.entry,
        pool.entry
    ))
}

fn exited_notes(mut d: Diagnostic, p: &Run<'_>, s: &Snapshot) -> Diagnostic {
    if s.exited.is_empty() {
        return d.note("no thread has exited");
    }
    for (pc, list) in &s.exited {
        let who = threads(list, list.len() as u64);
        let h = here(p, *pc);
        d = match h.span {
            Some(span) => {
                let n = list.len() as u64;
                let verb = plural(n, "thread");
                d.secondary(span, format!("{verb} exited here"))
                    .note(format!("{who} exited"))
            }
            None => d.note(format!("{who} exited at PTX line {}: `{}`", h.line, h.text)),
        };
    }
    d
}

fn deadlock_help(s: &Snapshot) -> Vec<String> {
    let mut help = Vec::new();
    // Copies that delivered more than a phase expects leave it below zero
    // for good: the cause of everything else.
    for b in &s.barriers {
        if b.tx < 0 && b.inflight_tx <= 0 && b.pending == 0 {
            help.push(format!(
                "the copies completed {} more than the phase expects, and a phase completes only at 0: check `arrive_expect_tx`/`expect_tx` against the copies that complete on the barrier (a tensor copy counts its whole box, also where it lies outside the tensor)",
                plural(-b.tx, "transaction byte")
            ));
        }
    }
    for b in &s.barriers {
        if b.tx > 0 && b.inflight_tx <= 0 && b.pending == 0 {
            help.push(format!(
                "the phase expects {} more {} than its copies deliver: check `arrive_expect_tx`/`expect_tx` against the sizes of the copies that complete on the barrier",
                b.tx,
                noun_for(b.tx, "transaction byte")
            ));
        } else if b.pending > 0 {
            help.push(format!(
                "{} {} needed to complete the phase: check that every thread the barrier counts arrives in every phase",
                plural(b.pending, "more arrival"),
                agree(b.pending, "is", "are")
            ));
        }
    }
    let mut unique: Vec<String> = Vec::new();
    for h in help {
        if !unique.contains(&h) {
            unique.push(h);
        }
    }
    if unique.is_empty() && s.pools.is_empty() {
        unique.push(
            "every remaining thread waits for an event that no running thread will cause"
                .to_string(),
        );
    }
    unique
}

fn warp_report(p: &Run<'_>, s: &Snapshot, g: &Group) -> Diagnostic {
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

fn no_progress(p: &Run<'_>, s: &Snapshot, max_steps: u64) -> Diagnostic {
    let mut d = Diagnostic::error(
        "S0011",
        format!("no progress within {}", plural(max_steps, "step")),
    );
    // The threads that ran first (the primary label is where the steps
    // went), then the blocked ones, then those that have not started.
    let rank = |g: &Group| match g.wait {
        Wait::Running => 0,
        Wait::NotStarted => 2,
        _ => 1,
    };
    let mut groups: Vec<&Group> = s.groups.iter().collect();
    groups.sort_by_key(|g| rank(g));
    for (i, g) in groups.iter().enumerate() {
        d = group_note(d, p, s, g, i == 0);
    }
    d = exited_notes(d, p, s);
    if s.ctas_total > s.cluster_ctas {
        let later = s.ctas_total.saturating_sub(s.ctas_done + s.cluster_ctas);
        let first = s
            .groups
            .iter()
            .flat_map(|g| &g.threads)
            .chain(s.exited.iter().flat_map(|(_, t)| t))
            .map(|t| t.ctaid)
            .min()
            .unwrap_or_default();
        d = d.note(if s.cluster_ctas == 1 {
            format!(
                "the grid's {} run one at a time: {} completed before cta {}, {later} had not started",
                plural(s.ctas_total, "CTA"),
                s.ctas_done,
                cta(first)
            )
        } else {
            format!(
                "the grid's {} run a cluster of {} at a time: {} completed before the cluster of cta {}, {later} had not started",
                plural(s.ctas_total, "CTA"),
                s.cluster_ctas,
                s.ctas_done,
                cta(first)
            )
        });
    }
    let spin = "a thread that spins on memory another thread should change never yields under the in-order schedule; try `--schedule random:SEED`, or wait on a barrier instead of spinning";
    let long = "if the kernel is just long, raise `--max-steps`";
    // Whole clusters completed: the kernel finishes its work, there is
    // just a lot of it.
    if s.ctas_done > 0 {
        d.help(format!("{long} (or launch a smaller grid)"))
            .help(spin)
    } else {
        d.help(spin).help(long)
    }
}
