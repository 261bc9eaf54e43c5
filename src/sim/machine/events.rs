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
    pub pc: u32,
    /// The first threads (at most [`MAX_THREADS`]).
    pub threads: Vec<ThreadRef>,
    pub count: u64,
}

/// Threads kept per report.
pub const MAX_THREADS: usize = 4096;
/// Distinct reports kept.
const MAX_REPORTS: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct Events {
    pub list: Vec<Recorded>,
    index: HashMap<(u32, u8, u64), usize>,
    pub dropped: u64,
}

impl Events {
    pub fn record(&mut self, pc: u32, thread: ThreadRef, issue: Issue) {
        let (k, sub) = issue.key();
        let key = (pc, k, sub);
        if let Some(&i) = self.index.get(&key) {
            if let Some(r) = self.list.get_mut(i) {
                r.count += 1;
                if r.threads.len() < MAX_THREADS {
                    r.threads.push(thread);
                }
            }
            return;
        }
        if self.list.len() >= MAX_REPORTS {
            self.dropped += 1;
            return;
        }
        self.index.insert(key, self.list.len());
        self.list.push(Recorded {
            issue,
            pc,
            threads: vec![thread],
            count: 1,
        });
    }
}
