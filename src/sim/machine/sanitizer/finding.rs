//! What the checks found: the payload of `events::Issue::Check`, turned
//! into diagnostics by `report::checks`.

use crate::sim::machine::events::{BarrierRef, ThreadRef};

/// Where in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    /// The shared memory of the CTA of cluster rank `rank`, at `offset`.
    Shared { rank: u32, offset: u64 },
    /// Global allocation `alloc`, at `offset`.
    Global { alloc: usize, offset: u64 },
    /// The thread's local memory, at `offset`.
    Local { offset: u64 },
}

/// What an access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    /// An atomic (or a load or store with `.relaxed`/`.acquire`/`.release`).
    AtomicRead,
    AtomicWrite,
    Atomic,
    /// A bulk, tensor or `cp.async` copy reading its source.
    CopyRead,
    /// A bulk, tensor or `cp.async` copy writing its destination.
    CopyWrite,
    /// A wgmma reading its shared-memory operands.
    WgmmaRead,
}

impl Kind {
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::AtomicRead => "atomic read",
            Kind::AtomicWrite => "atomic write",
            Kind::Atomic => "atomic read-modify-write",
            Kind::CopyRead => "copy read",
            Kind::CopyWrite => "copy write",
            Kind::WgmmaRead => "wgmma read",
        }
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            Kind::Write | Kind::AtomicWrite | Kind::Atomic | Kind::CopyWrite
        )
    }
}

/// Who made an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// A thread of the cluster being run, or of an earlier one (`old`).
    Thread { who: ThreadRef, old: bool },
    /// The copies completing on an mbarrier (their issue is the access's
    /// pc).
    Copy { barrier: BarrierRef },
    /// The bulk-group copies (TMA stores, bulk copies to global memory) of
    /// a thread.
    BulkGroup { issuer: ThreadRef },
    /// The Ampere `cp.async` copies of a thread.
    CpAsync { issuer: ThreadRef },
    /// The wgmma operations of a warpgroup.
    Wgmma { ctaid: [u32; 3], warpgroup: u32 },
}

/// One side of a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub kind: Kind,
    pub actor: Actor,
    pub pc: u32,
    pub size: u64,
}

/// How the two sides of a race relate, for the synchronisation the
/// report says is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Two lanes of one warp.
    SameWarp,
    /// Two threads of one CTA.
    SameCta,
    /// Two CTAs of one cluster.
    SameCluster,
    /// CTAs of different clusters.
    OtherCluster,
    /// One side is asynchronous (a copy, a wgmma).
    Async,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Race {
    pub mem: Mem,
    pub now: Side,
    pub prior: Side,
    /// Ordered for the generic proxy, but no `fence.proxy.async` orders the
    /// generic write before the async-proxy read.
    pub proxy: bool,
    pub relation: Relation,
}

/// A CTA barrier phase that not every thread it counts reached.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    pub ctaid: [u32; 3],
    pub id: u32,
    /// The barrier instructions the phase's threads arrived at: (pc,
    /// threads).
    pub sites: Vec<(u32, Vec<u32>)>,
    /// The threads that exited in the phase without arriving: (exit pc,
    /// threads).
    pub exited: Vec<(u32, Vec<u32>)>,
    pub threads: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    Race(Box<Race>),
    /// A read of bytes nothing wrote.
    Uninit {
        mem: Mem,
        size: u64,
        kind: Kind,
    },
    /// More transaction bytes completed in a phase than it expected:
    /// `late` when a copy's bytes land after the phase it was issued in
    /// completed without them.
    TxOverflow {
        barrier: BarrierRef,
        phase: u64,
        expected: i64,
        completed: i64,
        bytes: u64,
        late: bool,
        copy: bool,
    },
    Divergence(Box<Divergence>),
}

impl Finding {
    /// What makes two findings at the same pc one report.
    pub fn key(&self) -> (u8, u64) {
        match self {
            Finding::Race(r) => race_key(r.proxy, r.relation, r.now.kind),
            Finding::Uninit { kind, mem, .. } => uninit_key(*mem, *kind),
            Finding::TxOverflow { late, .. } => tx_key(*late),
            Finding::Divergence(d) => divergence_key(d.id),
        }
    }
}

/// Races at one instruction are one report per kind of access and
/// relation between the two sides (lanes of a warp, threads of a CTA, ...):
/// each with the synchronisation it lacks.
pub fn race_key(proxy: bool, relation: Relation, now: Kind) -> (u8, u64) {
    (u8::from(proxy), (relation as u64) << 8 | now as u64)
}

pub fn uninit_key(mem: Mem, kind: Kind) -> (u8, u64) {
    let space = match mem {
        Mem::Shared { .. } => 0,
        Mem::Global { .. } => 1,
        Mem::Local { .. } => 2,
    };
    (2, kind as u64 | space << 8)
}

pub fn tx_key(late: bool) -> (u8, u64) {
    (3, u64::from(late))
}

pub fn divergence_key(id: u32) -> (u8, u64) {
    (4, u64::from(id))
}
