//! Where every thread is when a run stops: the material of the deadlock
//! and no-progress reports. Threads are grouped by the instruction they
//! wait at and what they wait for.

use super::events::{BarrierRef, ThreadRef};
use super::state::{Block, ThreadState};
use super::Machine;
use crate::sim::decode::ops::SyncOp;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub groups: Vec<Group>,
    pub barriers: Vec<BarrierInfo>,
    /// Exited threads by the pc they exited at.
    pub exited: Vec<(u32, Vec<ThreadRef>)>,
    pub steps: u64,
    /// The CTAs of the clusters that completed before the one stopped in
    /// (clusters run one after another), and of the whole grid.
    pub ctas_done: u64,
    pub ctas_total: u64,
    /// The CTAs of a cluster (1 without clusters).
    pub cluster_ctas: u64,
    /// The register pools of CTAs with warps waiting in `setmaxnreg.inc`.
    pub pools: Vec<PoolInfo>,
    /// Threads waiting at a cluster barrier just before the kernel's exit
    /// (`barrier.cluster.arrive; barrier.cluster.wait; ret`, kdslc's
    /// implicit exit barrier): per (wait pc, the branch that jumped to the
    /// barrier), their count.
    pub exit_paths: Vec<(u32, u32, u64)>,
    /// Parity waits that name a phase other than the one the thread
    /// meant, one per (site, barrier).
    pub parity_hints: Vec<ParityHint>,
    /// A cycle of waits, when there is one: each step a barrier (index
    /// into `barriers`) and the threads that arrived on it before, which
    /// now all wait on the next step's barrier (the last's on the first's).
    pub cycle: Vec<(usize, Vec<ThreadRef>)>,
}

/// A thread blocked in a parity wait for the pending phase of its barrier
/// although the phase it last arrived in, or last waited for, is another.
#[derive(Clone, Debug, PartialEq)]
pub struct ParityHint {
    pub pc: u32,
    /// Index into `Snapshot::barriers`.
    pub barrier: usize,
    pub thread: ThreadRef,
    pub parity: u64,
    /// The phase of the thread's latest arrival on the barrier.
    pub arrived: Option<u64>,
    /// The phases completed when its previous wait on it succeeded.
    pub waited: Option<u64>,
}

/// A CTA's register pool, for a deadlock in `setmaxnreg.inc`.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolInfo {
    pub ctaid: [u32; 3],
    /// Registers per thread at entry, and threads.
    pub entry: u32,
    pub threads: u32,
    /// Per warpgroup, its warps.
    pub groups: Vec<(u32, Vec<WarpRegs>)>,
}

/// A warp (its index in the CTA), the registers per thread it holds, and
/// what it asks for if it waits.
pub type WarpRegs = (u32, u32, Option<u32>);

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub pc: u32,
    pub wait: Wait,
    pub threads: Vec<ThreadRef>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wait {
    /// An mbarrier wait; `barrier` indexes `Snapshot::barriers`.
    Mbar {
        barrier: usize,
        parity: Option<u64>,
        token: Option<u64>,
        poll: bool,
    },
    Bar {
        id: u32,
        arrived: u32,
        expected: u32,
    },
    Cluster {
        arrived: u32,
        live: u32,
    },
    /// A warp-synchronous instruction missing the lanes `missing`.
    Warp {
        mask: u32,
        missing: Vec<Missing>,
    },
    /// `setmaxnreg.inc` to `want` registers per thread, holding `held`.
    RegPool {
        want: u32,
        held: u32,
    },
    /// Runnable (no-progress reports only).
    Running,
    /// Runnable and not one instruction executed yet (no-progress reports).
    NotStarted,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Missing {
    pub lane: u32,
    pub why: MissingWhy,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MissingWhy {
    /// The block has no thread for this lane.
    NoThread,
    Exited {
        pc: u32,
    },
    /// Blocked elsewhere (at `pc`).
    Elsewhere {
        pc: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct BarrierInfo {
    pub r: BarrierRef,
    pub phase: u64,
    pub pending: i64,
    pub expected: u32,
    pub arrivals: u32,
    pub tx: i64,
    pub inflight_tx: i64,
    pub init_pc: u32,
    /// Recent arrivals: the thread, the pc and the phase it arrived in.
    pub last_arrivals: Vec<(ThreadRef, u32, u64)>,
}

impl Snapshot {
    pub fn take(m: &Machine, no_progress: bool) -> Snapshot {
        let mut barriers: Vec<BarrierInfo> = Vec::new();
        let mut groups: BTreeMap<(u32, Wait), Vec<ThreadRef>> = BTreeMap::new();
        let mut exited: BTreeMap<u32, Vec<ThreadRef>> = BTreeMap::new();
        let mut pools_of: Vec<u32> = Vec::new();
        let mut hints: Vec<ParityHint> = Vec::new();
        let mut waits_on: std::collections::HashMap<u32, usize> = Default::default();
        for (i, th) in m.cluster.threads.iter().enumerate() {
            let t = i as u32;
            let r = m.thread_ref(th);
            let (pc, wait) = match th.state {
                ThreadState::Exited => {
                    exited.entry(th.exit_pc).or_default().push(r);
                    continue;
                }
                ThreadState::Blocked(Block::Mbar { rank, offset }) => {
                    let b = barrier_index(m, &mut barriers, rank, offset);
                    let (parity, token) = wait_arg(m, t, th.pc);
                    waits_on.insert(t, b);
                    if let Some(par) = parity {
                        let hint = parity_hint(m, t, rank, offset, (th.pc, b, r, par));
                        if let Some(h) = hint.filter(|h| {
                            !hints
                                .iter()
                                .any(|o: &ParityHint| o.pc == h.pc && o.barrier == h.barrier)
                        }) {
                            hints.push(h);
                        }
                    }
                    (
                        th.pc,
                        Wait::Mbar {
                            barrier: b,
                            parity,
                            token,
                            poll: false,
                        },
                    )
                }
                ThreadState::Runnable if th.poll.is_some() && !no_progress => {
                    let (pc, rank, offset) = th.poll.unwrap_or_default();
                    let b = barrier_index(m, &mut barriers, rank, offset);
                    let (parity, token) = wait_arg(m, t, pc);
                    (
                        pc,
                        Wait::Mbar {
                            barrier: b,
                            parity,
                            token,
                            poll: true,
                        },
                    )
                }
                ThreadState::Blocked(Block::Bar { id }) => {
                    let cta = m.cluster.ctas.get(th.rank as usize);
                    let bar = cta.and_then(|c| c.bars.get(id as usize));
                    // Whole warps counted, plus the lanes of warps whose
                    // other lanes have not arrived yet.
                    let arrived = bar.map_or(0, |b| {
                        b.partial
                            .values()
                            .flatten()
                            .map(|(lanes, _)| lanes.count_ones())
                            .fold(b.arrived, u32::saturating_add)
                    });
                    let expected = bar
                        .and_then(|b| b.expected)
                        .unwrap_or_else(|| cta.map_or(0, |c| c.live));
                    (
                        th.pc.saturating_sub(1),
                        Wait::Bar {
                            id,
                            arrived,
                            expected,
                        },
                    )
                }
                ThreadState::Blocked(Block::Cluster) => {
                    let live = m.cluster.ctas.iter().map(|c| c.live).sum();
                    (
                        th.pc.saturating_sub(1),
                        Wait::Cluster {
                            arrived: m.cluster.cbar.arrived,
                            live,
                        },
                    )
                }
                ThreadState::Blocked(Block::RegPool) => {
                    let want = m
                        .cluster
                        .ctas
                        .get(th.rank as usize)
                        .and_then(|c| c.pool.waiting.iter().find(|w| w.warp == th.warp))
                        .map_or(0, |w| w.want);
                    let held = m
                        .cluster
                        .warps
                        .get(th.warp as usize)
                        .map_or(0, |w| w.wg.regs);
                    if !pools_of.contains(&th.rank) {
                        pools_of.push(th.rank);
                    }
                    (th.pc.saturating_sub(1), Wait::RegPool { want, held })
                }
                ThreadState::Blocked(Block::Warp) => {
                    let pc = th.pc.saturating_sub(1);
                    let (mask, missing) = warp_missing(m, t, pc);
                    (pc, Wait::Warp { mask, missing })
                }
                ThreadState::Runnable if th.executed == 0 => (th.pc, Wait::NotStarted),
                ThreadState::Runnable => (th.pc, Wait::Running),
            };
            groups.entry((pc, wait)).or_default().push(r);
        }
        let cycle = wait_cycle(m, &barriers, &waits_on);
        Snapshot {
            groups: groups
                .into_iter()
                .map(|((pc, wait), threads)| Group { pc, wait, threads })
                .collect(),
            barriers,
            exited: exited.into_iter().collect(),
            steps: m.stats.steps,
            ctas_done: m.stats.clusters_done * u64::from(m.mem.ext.cluster_size),
            ctas_total: m.setup.grid.iter().map(|&d| u64::from(d)).product(),
            cluster_ctas: u64::from(m.mem.ext.cluster_size),
            pools: pools_of.iter().map(|&r| pool_info(m, r)).collect(),
            exit_paths: exit_paths(m),
            parity_hints: hints,
            cycle,
        }
    }
}

fn pool_info(m: &Machine, rank: u32) -> PoolInfo {
    let b = m.setup.block;
    let threads = b[0] * b[1] * b[2];
    let cta = m.cluster.ctas.get(rank as usize);
    let mut groups: BTreeMap<u32, Vec<WarpRegs>> = BTreeMap::new();
    let warps = threads.div_ceil(32);
    for w in 0..warps {
        let index = (rank * warps + w) as usize;
        let Some(wp) = m.cluster.warps.get(index) else {
            continue;
        };
        let want = cta
            .and_then(|c| c.pool.waiting.iter().find(|pw| pw.warp as usize == index))
            .map(|pw| pw.want);
        groups.entry(w / 4).or_default().push((w, wp.wg.regs, want));
    }
    PoolInfo {
        ctaid: cta.map_or([0; 3], |c| c.ctaid),
        entry: cta.map_or(0, |c| c.pool.entry),
        threads,
        groups: groups.into_iter().collect(),
    }
}

fn barrier_index(m: &Machine, barriers: &mut Vec<BarrierInfo>, rank: u32, offset: u32) -> usize {
    let r = BarrierRef {
        ctaid: m
            .cluster
            .ctas
            .get(rank as usize)
            .map_or([0; 3], |c| c.ctaid),
        offset,
    };
    if let Some(i) = barriers.iter().position(|b| b.r == r) {
        return i;
    }
    let b = m
        .cluster
        .ctas
        .get(rank as usize)
        .and_then(|c| c.mbars.get(&offset));
    barriers.push(BarrierInfo {
        r,
        phase: b.map_or(0, |b| b.phase),
        pending: b.map_or(0, |b| b.pending),
        expected: b.map_or(0, |b| b.expected),
        arrivals: b.map_or(0, |b| b.arrivals_this_phase),
        tx: b.map_or(0, |b| b.tx),
        inflight_tx: b.map_or(0, |b| b.inflight_tx),
        init_pc: b.map_or(0, |b| b.init_pc),
        last_arrivals: b.map_or(Vec::new(), |b| {
            b.last_arrivals
                .iter()
                .map(|&(t, pc, phase)| (m.tref(t), pc, phase))
                .collect()
        }),
    });
    barriers.len() - 1
}

/// The parity or token a thread waits with at the wait instruction `pc`.
fn wait_arg(m: &Machine, t: u32, pc: u32) -> (Option<u64>, Option<u64>) {
    let op = m
        .setup
        .prog
        .code
        .get(pc as usize)
        .and_then(|i| m.setup.prog.syncs.get(i.aux as usize));
    match op {
        Some(SyncOp::MbarWait {
            arg, parity: true, ..
        }) => (Some(m.reg(t, *arg) & 1), None),
        Some(SyncOp::MbarWait { arg, .. }) => (None, Some(m.reg(t, *arg))),
        _ => (None, None),
    }
}

/// The mask of a blocked warp-synchronous instruction and why each lane it
/// names has not arrived.
fn warp_missing(m: &Machine, t: u32, pc: u32) -> (u32, Vec<Missing>) {
    let op = m
        .setup
        .prog
        .code
        .get(pc as usize)
        .and_then(|i| m.setup.prog.syncs.get(i.aux as usize));
    let Some(th) = m.cluster.threads.get(t as usize) else {
        return (0, Vec::new());
    };
    let mask = op.map_or(0, |op| m.rendezvous_mask(t, th.warp, op));
    let Some(w) = m.cluster.warps.get(th.warp as usize) else {
        return (mask, Vec::new());
    };
    let arrived = w
        .pending
        .iter()
        .filter(|r| r.members.iter().any(|&(mt, _)| mt == t))
        .map(|r| r.arrived)
        .fold(0, |a, b| a | b);
    // Lanes that exited or do not exist count as arrived, except at a
    // warp-collective instruction, which needs the whole warp.
    let collective = op.is_some_and(super::warp::is_collective);
    let absent = if collective {
        0
    } else {
        !m.live_lanes(th.warp)
    };
    let mut missing = Vec::new();
    for lane in 0..32u32 {
        if mask & (1 << lane) == 0 || (arrived | absent) & (1 << lane) != 0 {
            continue;
        }
        let why = if lane >= w.lanes {
            MissingWhy::NoThread
        } else {
            let other = w.first_thread + lane;
            match m.cluster.threads.get(other as usize) {
                Some(o) if o.state == ThreadState::Exited => MissingWhy::Exited { pc: o.exit_pc },
                Some(o) => MissingWhy::Elsewhere {
                    pc: match o.state {
                        ThreadState::Blocked(Block::Mbar { .. }) | ThreadState::Runnable => o.pc,
                        _ => o.pc.saturating_sub(1),
                    },
                },
                None => MissingWhy::NoThread,
            }
        };
        missing.push(Missing { lane, why });
    }
    (mask, missing)
}

/// Whether the cluster barrier wait at `pc` ends the kernel: the arrival
/// before it, a return or exit after it.
pub fn exit_barrier(prog: &crate::sim::decode::Program, pc: u32) -> bool {
    use crate::sim::decode::ops::{Op, SyncOp};
    let sync = |pc: u32| {
        prog.code
            .get(pc as usize)
            .filter(|i| i.op == Op::Sync)
            .and_then(|i| prog.syncs.get(i.aux as usize))
    };
    matches!(sync(pc), Some(SyncOp::ClusterWait))
        && pc > 0
        && matches!(sync(pc - 1), Some(SyncOp::ClusterArrive))
        && prog
            .code
            .get(pc as usize + 1)
            .is_some_and(|i| matches!(i.op, Op::Ret | Op::Exit))
}

/// The threads waiting at the kernel's exit barrier that jumped to it
/// (its arrival) directly, by the unguarded branch they took.
fn exit_paths(m: &Machine) -> Vec<(u32, u32, u64)> {
    let prog = m.setup.prog;
    let mut paths: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for th in &m.cluster.threads {
        if th.state != ThreadState::Blocked(Block::Cluster) {
            continue;
        }
        let wait = th.pc.saturating_sub(1);
        if !exit_barrier(prog, wait) {
            continue;
        }
        // An unguarded branch (a `return`; a guarded one skips a branch
        // of an `if` that happens to end the kernel).
        let jumped_to = prog
            .code
            .get(th.last_jump as usize)
            .filter(|i| i.guard == 0)
            .map(|i| i.off as u32);
        if jumped_to == Some(wait - 1) {
            *paths.entry((wait, th.last_jump)).or_default() += 1;
        }
    }
    paths.into_iter().map(|((w, j), n)| (w, j, n)).collect()
}

/// Why thread `t`'s parity wait on the barrier at `offset` of CTA `rank`
/// is for a phase it does not seem to mean: it arrived in an earlier
/// phase, now complete (the pending phase is one it never arrived in), or
/// its previous wait was two or more phases ago (the parity names the
/// pending phase, not the one it meant).
fn parity_hint(
    m: &Machine,
    t: u32,
    rank: u32,
    offset: u32,
    (pc, barrier, thread, parity): (u32, usize, ThreadRef, u64),
) -> Option<ParityHint> {
    let b = m.cluster.ctas.get(rank as usize)?.mbars.get(&offset)?;
    let arrived = b.arrived_in.get(&t).copied();
    let waited = b.last_wait.get(&t).copied();
    // Arrived in an earlier phase and not waited for it since (a loop
    // that waits before it arrives has waited for that phase).
    let early_arrival = arrived.is_some_and(|a| a < b.phase && waited.is_none_or(|w| w <= a));
    let behind = b.phase >= waited.unwrap_or(0) + 2;
    (early_arrival || behind).then_some(ParityHint {
        pc,
        barrier,
        thread,
        parity,
        arrived: arrived.filter(|_| early_arrival),
        waited: waited.filter(|_| !early_arrival),
    })
}

/// A cycle among the barriers threads wait on: barrier A leads to barrier
/// B when no thread arrived on A in its pending phase and every thread
/// that arrived on A before and has not exited now waits on B (A's next
/// arrival can only come from threads stuck at B).
/// The shortest cycle found from the first barrier on, or none.
fn wait_cycle(
    m: &Machine,
    barriers: &[BarrierInfo],
    waits_on: &std::collections::HashMap<u32, usize>,
) -> Vec<(usize, Vec<ThreadRef>)> {
    // Per barrier: the one its past arrivers all wait on, and who they are.
    let mut next: Vec<Option<(usize, Vec<u32>)>> = Vec::with_capacity(barriers.len());
    for b in barriers {
        let rank = m.cluster.ctas.iter().position(|c| c.ctaid == b.r.ctaid);
        let mb = rank.and_then(|r| m.cluster.ctas.get(r)?.mbars.get(&b.r.offset));
        // Threads that arrived in the pending phase have done their part.
        let done_now = mb.is_some_and(|mb| mb.arrived_in.values().any(|&ph| ph == mb.phase));
        let mut arrivers: Vec<u32> = mb.map_or(Vec::new(), |mb| {
            mb.arrived_in
                .keys()
                .copied()
                .filter(|&t| m.state(t) != ThreadState::Exited)
                .collect()
        });
        if done_now {
            arrivers.clear();
        }
        arrivers.sort_unstable();
        let targets: Vec<Option<usize>> =
            arrivers.iter().map(|t| waits_on.get(t).copied()).collect();
        let step = match targets.first() {
            Some(&Some(first)) if targets.iter().all(|&x| x == Some(first)) => {
                Some((first, arrivers))
            }
            _ => None,
        };
        next.push(step);
    }
    for start in 0..barriers.len() {
        let mut path = vec![start];
        let mut at = start;
        while let Some(Some((to, _))) = next.get(at) {
            // A barrier whose arrivers wait on it again is no cycle of
            // barriers (the other reports explain it).
            if *to == at {
                break;
            }
            if *to == start {
                return path
                    .iter()
                    .map(|&i| {
                        let who = next
                            .get(i)
                            .and_then(|n| n.as_ref())
                            .map_or(Vec::new(), |(_, ts)| {
                                ts.iter().map(|&t| m.tref(t)).collect()
                            });
                        (i, who)
                    })
                    .collect();
            }
            if path.contains(to) || path.len() > barriers.len() {
                break;
            }
            path.push(*to);
            at = *to;
        }
    }
    Vec::new()
}
