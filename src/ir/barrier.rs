//! Barrier groups (mbarriers and named barriers), their declarations,
//! and the operations on them.

use super::{BarrierId, Expr, NamedBarrierId, SharedId};
use crate::span::Span;

/// The scope of a barrier group: who arrives on it and how waits order memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Cluster,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
        }
    }
}

/// `barrier name[count]: scope(arrivals = n);` — `count` mbarriers (8 bytes
/// each, 8-byte aligned, in shared memory), all with the same scope and
/// arrival count. The compiler initialises them at kernel entry.
#[derive(Clone, Debug)]
pub struct BarrierGroup {
    pub name: String,
    pub scope: Scope,
    pub count: u32,
    pub arrivals: u32,
    pub spans: BarrierSpans,
    /// The parts of its declaration that failed to check (only in a
    /// module with errors).
    pub failed: Failed,
    /// `guards(sa, sb)`: barrier `i` guards slice `i` (along the first
    /// index) of each of these arrays, whose first dimension is the
    /// group's count (E0408). Empty without the clause.
    pub guards: Vec<SharedId>,
}

/// The parts of a barrier group's declaration that failed to check, each
/// then a placeholder (one barrier, scope `cta`, one arrival or 32
/// threads). The group is still declared, so that its uses are checked: a
/// check that needs a failed part says nothing about the group, and every
/// other check goes on (a wait on a `cluster` group is E0301 whatever its
/// arrival count). Only a module with errors has a failed part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failed {
    /// `[count]`.
    pub count: bool,
    /// The scope: not `cta` or `cluster`, or not one this target or this
    /// kernel (without `cluster(...)`) can have.
    pub scope: bool,
    /// `arrivals = n` (`threads = k` for a named-barrier group).
    pub arrivals: bool,
    /// Something no check reads: where it is declared, a named group's
    /// hardware ids.
    pub other: bool,
}

impl Failed {
    pub fn any(self) -> bool {
        self.count || self.scope || self.arrivals || self.other
    }
}

impl BarrierGroup {
    /// The most barriers a group holds (E0311).
    pub const MAX_COUNT: u32 = 64;
    /// The largest arrival count of an mbarrier, in `mbarrier.init` and in
    /// `mbarrier.arrive`'s count operand: 2^20 - 1 (E0306).
    pub const MAX_ARRIVALS: u32 = (1 << 20) - 1;
}

/// `barrier name[count]: named(threads = k);`: `count` of the CTA's 16
/// hardware barriers (`bar.sync`/`bar.arrive`), each completing a phase
/// when `k` threads (a whole number of warps) have arrived. They live in
/// no memory and need no initialisation; the checker gives each group its
/// ids, `first_id..first_id + count`, all within [`NamedBarrier::IDS`] and
/// distinct between groups (id 0 stays `sync_threads`'s).
#[derive(Clone, Debug)]
pub struct NamedBarrier {
    pub name: String,
    pub count: u32,
    /// Threads per phase: a positive multiple of 32, at most 1024 and at
    /// most the block's threads when `block(...)` gives them.
    pub threads: u32,
    /// The hardware id of barrier 0 of the group.
    pub first_id: u32,
    pub spans: NamedBarrierSpans,
    /// The parts of its declaration that failed to check (its scope is
    /// never one of them).
    pub failed: Failed,
}

impl NamedBarrier {
    /// The hardware ids named barriers may take: 1..=15 (`bar.sync 0` is
    /// `sync_threads`'s and the compiler's own).
    pub const IDS: std::ops::RangeInclusive<u32> = 1..=15;
    /// A warp: the unit in which threads arrive at a hardware barrier.
    pub const WARP: u32 = 32;
    /// The most threads a phase can count: a CTA's.
    pub const MAX_THREADS: u32 = 1024;
}

/// Where each part of a named-barrier declaration is.
#[derive(Clone, Copy, Debug)]
pub struct NamedBarrierSpans {
    /// The whole declaration.
    pub decl: Span,
    pub name: Span,
    /// The `[count]` expression, if written.
    pub count: Option<Span>,
    /// The thread-count expression.
    pub threads: Span,
}

/// Where each part of a barrier declaration is, for diagnostics.
#[derive(Clone, Copy, Debug)]
pub struct BarrierSpans {
    /// The whole declaration.
    pub decl: Span,
    pub name: Span,
    /// The `[count]` expression, if written.
    pub count: Option<Span>,
    /// The scope identifier (`cluster` in `cluster(arrivals = 2)`).
    pub scope: Span,
    /// The arrival-count expression.
    pub arrivals: Span,
}

/// A reference to one barrier of a group: `full[s]`, or `done` for a group of
/// one. `index` is `None` when the source wrote no index.
#[derive(Clone, Debug)]
pub struct BarrierRef {
    pub group: BarrierId,
    pub index: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct BarrierOp {
    pub kind: BarrierOpKind,
    pub barrier: BarrierRef,
    /// The span of the method name (`wait` in `full[s].wait()`).
    pub method_span: Span,
}

#[derive(Clone, Debug)]
pub enum BarrierOpKind {
    /// `arrive()` / `arrive(count)`
    Arrive { count: Option<Expr> },
    /// `arrive_expect_tx(bytes)`
    ArriveExpectTx { bytes: Expr },
    /// `expect_tx(bytes)`
    ExpectTx { bytes: Expr },
    /// `arrive_remote(rank)`
    ArriveRemote { rank: Expr },
    /// `wait(parity)` / `wait()`: acquire at CTA scope.
    Wait { parity: Parity },
    /// `wait_cluster(parity)` / `wait_cluster()`: acquire at cluster scope.
    /// A tracked parity is the same bit as `wait()`'s for that barrier.
    WaitCluster { parity: Parity },
}

impl BarrierOpKind {
    /// The method name as written in kdsl.
    pub fn method(&self) -> &'static str {
        match self {
            BarrierOpKind::Arrive { .. } => "arrive",
            BarrierOpKind::ArriveExpectTx { .. } => "arrive_expect_tx",
            BarrierOpKind::ExpectTx { .. } => "expect_tx",
            BarrierOpKind::ArriveRemote { .. } => "arrive_remote",
            BarrierOpKind::Wait { .. } => "wait",
            BarrierOpKind::WaitCluster { .. } => "wait_cluster",
        }
    }
}

/// An operation on one barrier of a named-barrier group: `ready.sync()`,
/// `stage[s].arrive()` (`index` is `None` when the source wrote none; the
/// checker accepts that only for a group of one).
#[derive(Clone, Debug)]
pub struct NamedBarrierOp {
    pub kind: NamedOpKind,
    pub group: NamedBarrierId,
    pub index: Option<Expr>,
    /// The barrier reference (`stage[s]`).
    pub span: Span,
    /// The span of the method name (`sync` in `ready.sync()`).
    pub method_span: Span,
}

/// What a thread does at a named barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedOpKind {
    /// `sync()`: arrive and wait until the phase completes (`bar.sync`).
    Sync,
    /// `arrive()`: arrive and go on (`bar.arrive`).
    Arrive,
}

impl NamedOpKind {
    /// The method name as written in kdsl.
    pub fn method(self) -> &'static str {
        match self {
            NamedOpKind::Sync => "sync",
            NamedOpKind::Arrive => "arrive",
        }
    }
}

/// The parity a wait or test is for.
#[derive(Clone, Debug)]
pub enum Parity {
    /// Written by the user: `wait(0)`, `wait(p)` (a `u32`, 0 or 1).
    Explicit(Expr),
    /// `wait()` / `test()` (and their `_cluster` forms): the compiler tracks
    /// it per barrier, per thread, starting at 0 and flipping after each
    /// completed wait/successful test, whichever form made it.
    Tracked,
}
