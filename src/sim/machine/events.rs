//! What the machine observed that deserves a report, aggregated by kind and
//! instruction so that a fault in every thread of a grid is one report
//! with a thread count, not a million.

use super::memory::Fault;
use std::collections::HashMap;

/// A thread of the grid: its CTA and linear id in the CTA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadRef {
    pub ctaid: [u32; 3],
    pub tid: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
    /// A bulk copy reading its source.
    CopyRead,
    /// A bulk copy writing its destination.
    CopyWrite,
    /// An mbarrier operation on its object.
    Barrier,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
            AccessKind::CopyRead => "bulk-copy read",
            AccessKind::CopyWrite => "bulk-copy write",
            AccessKind::Barrier => "mbarrier access",
        }
    }
}

/// An mbarrier of a CTA: the CTA's id and the object's shared offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarrierRef {
    pub ctaid: [u32; 3],
    pub offset: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Issue {
    Access {
        fault: Fault,
        kind: AccessKind,
        size: u64,
    },
    MbarUninit {
        barrier: BarrierRef,
    },
    MbarReinit {
        barrier: BarrierRef,
        pending: i64,
        expected: u32,
        tx: i64,
    },
    MbarUnderflow {
        barrier: BarrierRef,
        count: i64,
        pending: i64,
        phase: u64,
        /// The pc of the same thread's earlier arrival in this phase.
        earlier: Option<u32>,
        /// The pc of the arrival that completed the phase's count (the
        /// latest before this one), when another.
        last: Option<u32>,
    },
    TxRange {
        barrier: BarrierRef,
        tx: i64,
    },
    PhaseBehind {
        barrier: BarrierRef,
        phases: u64,
        parity: u64,
    },
    BulkShape {
        size: u64,
        dst: u64,
        src: u64,
    },
    /// `arrive.noComplete` that completed the phase.
    NoComplete {
        barrier: BarrierRef,
    },
    /// A warp-synchronous instruction whose mask leaves out the thread itself.
    MaskSelf {
        mask: u32,
    },
    Trap,
    /// A shuffle by `lane` whose source lane `src` is not in its `mask`,
    /// or exited, or does not exist: the value it reads is undefined.
    ShflSource {
        lane: u32,
        src: u32,
        mask: u32,
        why: ShflWhy,
    },
    /// A tensor instruction whose map operand (a generic address) holds no
    /// tensor map of the launch.
    NotTensorMap {
        addr: u64,
    },
    /// A tensor copy's shared-memory address is not 128-byte aligned.
    TensorAlign {
        addr: u64,
    },
    /// A tensor copy that does not fit its map.
    TensorCopy {
        why: TensorWhy,
    },
    /// A multicast copy's CTA mask names CTAs outside the cluster.
    CopyMask {
        mask: u16,
        cluster: u32,
    },
    /// An accumulator or A-fragment register of a pending wgmma read or
    /// written (`write`) by another instruction.
    WgmmaRegister {
        slot: u32,
        write: bool,
        wgmma_pc: u32,
    },
    /// A register a wgmma uses (`slot`; an accumulator when `acc`, else
    /// an A-fragment register) with no `wgmma.fence` since `why`.
    WgmmaFence {
        slot: u32,
        acc: bool,
        why: FenceWhy,
    },
    /// Shared memory a pending wgmma reads written (by a copy landing, or
    /// by a store).
    WgmmaOverwrite {
        offset: u64,
        wgmma_pc: u32,
        copy: bool,
    },
    /// A descriptor that is not a valid one: `which` is `A` or `B`.
    WgmmaDesc {
        which: char,
        desc: u64,
        why: DescWhy,
    },
    /// The lanes of a warp (`warps` false) or the warps of a warpgroup
    /// disagree on a wgmma: instruction, descriptors or scale-d.
    WgmmaDisagree {
        warps: bool,
    },
    /// A wgmma by a warpgroup of fewer than 4 warps.
    WgmmaPartial {
        warps: u32,
    },
    /// The warps of a warpgroup execute different `setmaxnreg`s.
    SetMaxNregDisagree,
    /// `setmaxnreg.inc` below, or `.dec` above, the warp's count.
    SetMaxNregRange {
        inc: bool,
        n: u32,
        cur: u32,
    },
    /// A failed `assert` (`__assertfail`).
    Assert(Box<super::printf::AssertInfo>),
    /// `mapa` to a CTA rank the cluster (of `cluster` CTAs) lacks.
    MapaRank {
        rank: u32,
        cluster: u32,
    },
    /// What the run-time checks found (`sanitizer`).
    Check(Box<super::sanitizer::finding::Finding>),
}

/// Why the source lane of a shuffle gives no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflWhy {
    /// Not in the shuffle's `membermask`.
    NotInMask,
    /// In the mask, but its thread exited.
    Exited,
    /// In the mask, but the block has no thread there (a partial warp).
    NoThread,
}

/// What a wgmma's register has no `wgmma.fence` after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceWhy {
    /// The thread executed no `wgmma.fence` before its first wgmma.
    First,
    /// An ordinary instruction at `pc` read or wrote the register.
    Access { pc: u32, write: bool },
    /// The wgmma at `pc`, of another shape, used the accumulator.
    Shape { pc: u32 },
}

/// What is wrong with a wgmma descriptor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DescWhy {
    /// A base offset other than 0 (not modelled: the swizzle is taken from
    /// the absolute address).
    BaseOffset,
    /// An element at `addr` outside the CTA's shared variables.
    Outside { addr: u64 },
}

/// How a tensor copy does not fit its map.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TensorWhy {
    /// `.Nd` with `given` coordinates, a map of another rank.
    Rank { given: u8, rank: u8, map: u32 },
    /// A box larger than any shared memory.
    BoxTooLarge { bytes: u64 },
    /// A reduction the ISA does not define on the map's element type.
    Reduction {
        op: crate::sim::decode::ops::TensorRed,
        elem: crate::launch::TensorElem,
    },
}

impl Issue {
    /// What makes two issues at the same pc the same report.
    fn key(&self) -> (u8, u64) {
        match self {
            Issue::Access { fault, kind, .. } => {
                let f = match fault {
                    Fault::OutOfBounds { target, .. } => {
                        1 + target.map_or(0, |(t, _)| target_key(t))
                    }
                    Fault::Misaligned { .. } => 100,
                    Fault::ReadOnly { .. } => 101,
                    Fault::ExitedPeer { rank, .. } => 200 + u64::from(*rank),
                };
                (0, f * 8 + *kind as u64)
            }
            Issue::MbarUninit { barrier } => (1, bkey(barrier)),
            Issue::MbarReinit { barrier, .. } => (2, bkey(barrier)),
            Issue::MbarUnderflow { barrier, .. } => (3, bkey(barrier)),
            Issue::TxRange { barrier, .. } => (4, bkey(barrier)),
            Issue::PhaseBehind { barrier, .. } => (5, bkey(barrier)),
            Issue::BulkShape { .. } => (6, 0),
            Issue::NoComplete { barrier } => (7, bkey(barrier)),
            Issue::MaskSelf { .. } => (8, 0),
            Issue::Trap => (9, 0),
            Issue::NotTensorMap { .. } => (10, 0),
            Issue::TensorAlign { .. } => (11, 0),
            Issue::TensorCopy { why } => (
                12,
                match why {
                    TensorWhy::Rank { .. } => 0,
                    TensorWhy::BoxTooLarge { .. } => 1,
                    TensorWhy::Reduction { .. } => 2,
                },
            ),
            Issue::CopyMask { .. } => (13, 0),
            Issue::WgmmaRegister { slot, write, .. } => {
                (14, u64::from(*slot) * 2 + u64::from(*write))
            }
            Issue::WgmmaOverwrite { .. } => (15, 0),
            Issue::WgmmaDesc { which, why, .. } => (
                16,
                u64::from(*which == 'B') * 2 + u64::from(matches!(why, DescWhy::Outside { .. })),
            ),
            Issue::WgmmaDisagree { warps } => (17, u64::from(*warps)),
            Issue::WgmmaPartial { .. } => (18, 0),
            Issue::SetMaxNregDisagree => (19, 0),
            Issue::SetMaxNregRange { .. } => (20, 0),
            Issue::Assert(_) => (21, 0),
            Issue::MapaRank { .. } => (22, 0),
            Issue::Check(f) => {
                let (k, sub) = f.key();
                (64 + k, sub)
            }
            Issue::ShflSource { why, .. } => (23, *why as u64),
            Issue::WgmmaFence { why, .. } => (
                24,
                match why {
                    FenceWhy::First => 0,
                    FenceWhy::Access { .. } => 1,
                    FenceWhy::Shape { .. } => 2,
                },
            ),
        }
    }
}

fn target_key(t: super::memory::Target) -> u64 {
    use super::memory::Target;
    match t {
        Target::Global(i) => 10 + i as u64,
        Target::Shared(r) => 2 + u64::from(r.min(5)),
        Target::Local => 8,
        Target::Param | Target::FuncParam => 9,
    }
}

/// Reports of barriers are per barrier object, not per CTA: the offset.
fn bkey(b: &BarrierRef) -> u64 {
    u64::from(b.offset)
}

/// One aggregated report.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub issue: Issue,
    /// What makes it one report (with `pc`).
    key: (u8, u64),
    pub pc: u32,
    /// The first distinct threads (at most [`MAX_THREADS`]).
    pub threads: Vec<ThreadRef>,
    /// How many distinct threads it happened in.
    pub nthreads: u64,
    /// How many times it happened (a thread in a loop counts each time).
    pub count: u64,
    /// The threads of the cluster being run that it happened in (a
    /// thread's events all happen while its cluster runs, so the set is
    /// emptied when the cluster ends: bounded by a cluster's threads).
    seen: std::collections::HashSet<ThreadRef, super::sanitizer::fast::Build>,
}

impl Recorded {
    /// A report of one event of `thread`.
    pub fn new(issue: Issue, key: (u8, u64), pc: u32, thread: ThreadRef) -> Recorded {
        let mut seen = std::collections::HashSet::default();
        seen.insert(thread);
        Recorded {
            issue,
            key,
            pc,
            threads: vec![thread],
            nthreads: 1,
            count: 1,
            seen,
        }
    }

    /// One more event of `thread`.
    pub fn add(&mut self, thread: ThreadRef) {
        self.count += 1;
        if self.seen.insert(thread) {
            self.nthreads += 1;
            if self.threads.len() < MAX_THREADS {
                self.threads.push(thread);
            }
        }
    }

    /// Takes in `o`, a report of the same finding at another instruction
    /// of the same source span: the counts add up, the threads are the
    /// union (exact while both lists are complete; past [`MAX_THREADS`]
    /// the larger of the two, for the copies of one statement run by the
    /// same threads).
    pub fn absorb(&mut self, o: &Recorded) {
        self.count += o.count;
        let complete =
            self.threads.len() as u64 == self.nthreads && o.threads.len() as u64 == o.nthreads;
        let mut union = self.threads.len() as u64;
        for t in &o.threads {
            if !self.threads.contains(t) {
                union += 1;
                if self.threads.len() < MAX_THREADS {
                    self.threads.push(*t);
                }
            }
        }
        self.nthreads = if complete {
            union
        } else {
            self.nthreads.max(o.nthreads).max(union)
        };
    }
}

/// Threads kept per report.
pub const MAX_THREADS: usize = 4096;
/// Distinct reports kept.
const MAX_REPORTS: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct Events {
    pub list: Vec<Recorded>,
    index: HashMap<(u32, u8, u64), usize, super::sanitizer::fast::Build>,
    pub dropped: u64,
}

impl Events {
    pub fn record(&mut self, pc: u32, thread: ThreadRef, issue: Issue) {
        let (k, sub) = issue.key();
        self.record_keyed(pc, thread, (k, sub), || issue);
    }

    /// [`Events::record`] of the issue `make` gives, made only when it is
    /// the first of its key (the run-time checks find the same thing at
    /// the same instruction millions of times).
    pub fn record_check(
        &mut self,
        pc: u32,
        thread: ThreadRef,
        key: (u8, u64),
        make: impl FnOnce() -> super::sanitizer::finding::Finding,
    ) {
        self.record_keyed(pc, thread, (64 + key.0, key.1), || {
            Issue::Check(Box::new(make()))
        });
    }

    /// Adds what a later part of the run recorded (`--jobs`: a group run
    /// on its own), as if its issues had been recorded here in turn.
    /// `later` must have dropped nothing.
    pub fn merge(&mut self, later: &Events) {
        for r in &later.list {
            let key = (r.pc, r.key.0, r.key.1);
            if let Some(&i) = self.index.get(&key) {
                if let Some(mine) = self.list.get_mut(i) {
                    // A later group's threads are other CTAs': distinct
                    // from every thread counted so far.
                    mine.count += r.count;
                    mine.nthreads += r.nthreads;
                    let room = MAX_THREADS.saturating_sub(mine.threads.len());
                    mine.threads.extend(r.threads.iter().take(room));
                }
                continue;
            }
            if self.list.len() >= MAX_REPORTS {
                self.dropped += r.count;
                continue;
            }
            self.index.insert(key, self.list.len());
            self.list.push(r.clone());
        }
    }

    fn record_keyed(
        &mut self,
        pc: u32,
        thread: ThreadRef,
        (k, sub): (u8, u64),
        issue: impl FnOnce() -> Issue,
    ) {
        let key = (pc, k, sub);
        if let Some(&i) = self.index.get(&key) {
            if let Some(r) = self.list.get_mut(i) {
                r.add(thread);
            }
            return;
        }
        if self.list.len() >= MAX_REPORTS {
            self.dropped += 1;
            return;
        }
        self.index.insert(key, self.list.len());
        self.list.push(Recorded::new(issue(), (k, sub), pc, thread));
    }

    /// The cluster being run is done: its threads make no more events.
    pub fn end_cluster(&mut self) {
        for r in &mut self.list {
            r.seen = Default::default();
        }
    }
}
