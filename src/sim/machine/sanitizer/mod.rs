//! The run-time checks (`kdslc sim --checks`), as Miri's are to a Rust
//! interpreter: what a kernel does that a GPU leaves undefined but that
//! does not hang, found in the run that happened.
//!
//! - **Data races** (S0030, S0031): an exact happens-before relation over
//!   vector clocks (`clock.rs`) and a FastTrack-style shadow of every byte
//!   of shared and global memory (`shadow.rs`). Synchronisation: CTA
//!   barriers (`bar.sync`/`bar.arrive`, named, with counts), the cluster
//!   barrier, mbarrier phases (an arrival or a copy's `complete_tx`
//!   happens before the waits that observe the phase), warp-synchronous
//!   instructions among the lanes that meet, atomics and fences with their
//!   orders and scopes (relaxed atomics do not race with each other),
//!   bulk and tensor copies (asynchronous agents, ordered by their
//!   mbarrier or `wait_group`), wgmma (an agent per warpgroup, ordered by
//!   `wgmma.wait_group`), and the async proxy (a generic write read by a
//!   TMA store or a wgmma needs a `fence.proxy.async` between them).
//! - **Uninitialised reads** (S0032): a bit per byte of shared and local
//!   memory, set by every write.
//! - **Transaction overflow** (S0033): more bytes completing in an mbarrier
//!   phase than it expects.
//! - **Barrier divergence** (S0034): a CTA barrier phase that the threads
//!   it counts did not all reach at the same instruction.
//!
//! The machine calls the sanitizer's hooks at the few points where memory
//! is accessed or synchronisation happens; the sanitizer never changes
//! what the kernel computes. This file holds its state; the hooks are in
//! the submodules, by what they check:
//!
//! - `launch.rs`: the sanitizer over a launch, its clusters and the
//!   global state a `--jobs` worker saves and puts back;
//! - `agents.rs`: threads and asynchronous agents, their clocks and names;
//! - `access.rs`: the threads' loads, stores, atomics and fences;
//! - `barriers.rs`: CTA and cluster barriers, warp-synchronous
//!   instructions (and S0034);
//! - `mbarrier.rs`: mbarrier phases and their transaction bytes (S0033);
//! - `copies.rs`: bulk, tensor and `cp.async` copies;
//! - `wgmma.rs`: wgmma's reads of shared memory;
//! - `report.rs`: a race as a finding;
//! - below them: vector clocks (`clock.rs`), the shadow (`shadow.rs`), the
//!   findings (`finding.rs`) and a fast hash map (`fast.rs`).

mod access;
mod agents;
mod barriers;
pub mod clock;
mod copies;
pub mod fast;
pub mod finding;
mod launch;
mod mbarrier;
pub mod reads;
mod report;
pub mod shadow;
mod wgmma;

use crate::sim::checks::Checks;
use crate::sim::decode::sem::Scope;
use clock::{Intervals, Snap, SyncClock, TClock};
use fast::FastMap as HashMap;
use shadow::{Shadow, Slot};

/// The race check's state of some bytes of a global allocation
/// (`Sanitizer::save_global`), for `--jobs`.
#[derive(Clone, Debug)]
pub struct Saved {
    alloc: usize,
    /// Granules `lo..hi`.
    lo: usize,
    hi: usize,
    /// Their shadow (`None`: the allocation has none yet).
    cells: Option<Vec<[Slot; GLOBAL_SLOTS]>>,
    /// The atomic locations among them.
    locs: Vec<(u64, LocSync)>,
}

/// An asynchronous agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AgentKey {
    /// The copies completing on the mbarrier at `off` of the CTA of `rank`
    /// (their writes into that CTA).
    Mbar { rank: u32, off: u32 },
    /// The bulk-group copies of a thread.
    Bulk { thread: u32 },
    /// The Ampere `cp.async` copies of a thread.
    CpAsync { thread: u32 },
    /// The wgmma operations of a warpgroup.
    Wgmma { rank: u32, group: u32 },
}

/// Agent numbers fit 16 bits in a shadow slot.
const MAX_AGENTS: u32 = 1 << 16;

/// Shadow slots per 4-byte granule: of shared memory, of global memory.
pub const SHARED_SLOTS: usize = 4;
pub const GLOBAL_SLOTS: usize = 2;

/// A CTA barrier's state: the releases of the current phase, its
/// completed phases, and its arrivals (for divergence).
#[derive(Clone, Debug, Default)]
struct BarState {
    clock: SyncClock,
    gen: u32,
    /// (pc, thread, aligned) of each arrival in the phase.
    arrivals: Vec<(u32, u32, bool)>,
    counted: bool,
}

/// An mbarrier's clocks and the transaction bytes of its current phase.
#[derive(Clone, Debug, Default)]
struct MbarState {
    cur: SyncClock,
    done: SyncClock,
    expected: i64,
    completed: i64,
}

/// An atomic location's releases, by scope and releasing CTA, and the
/// earlier clusters released into it at gpu scope.
#[derive(Clone, Debug, Default)]
struct LocSync {
    entries: Vec<(Scope, u32, SyncClock)>,
    old: Intervals,
}

/// A copy in flight.
#[derive(Clone, Debug)]
struct CopyCtx {
    snap: Snap,
    issuer: u32,
    pc: u32,
    /// Its agent for reads (and writes into global memory).
    agent: u32,
    /// Per destination CTA: (rank of the data, rank of its mbarrier, the
    /// agent of its writes, their epoch at the landing).
    dests: Vec<(u32, u32, u32, u32)>,
    /// (barrier rank, offset, phase at the issue).
    phases: Vec<(u32, u32, u64)>,
    group: Option<u64>,
    /// An Ampere `cp.async` copy (its group is a `cp.async.commit_group`
    /// group, not a bulk one).
    cp: bool,
    epoch: u32,
}

/// The launch's shape, for naming the threads of earlier clusters.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
}

pub struct Sanitizer {
    pub on: Checks,
    shape: Shape,
    nthreads: u32,
    csize: u32,
    seq: u32,
    ctaids: Vec<[u32; 3]>,
    threads: Vec<TClock>,
    agents: Vec<(AgentKey, u32)>,
    agent_index: HashMap<AgentKey, u32>,
    shared: Vec<Option<Shadow<SHARED_SLOTS>>>,
    shared_init: Vec<Vec<u64>>,
    local_init: Vec<Vec<u64>>,
    shared_bytes: u64,
    /// Byte ranges of shared memory that start initialised.
    preset: Vec<(u64, u64)>,
    local_bytes: u64,
    global: Vec<Option<Shadow<GLOBAL_SLOTS>>>,
    global_len: Vec<u64>,
    bars: Vec<BarState>,
    cbar: SyncClock,
    cbar_done: SyncClock,
    mbars: HashMap<(u32, u32), MbarState>,
    shared_locs: HashMap<(u32, u64), LocSync>,
    global_locs: HashMap<(usize, u64), LocSync>,
    copies: Vec<Option<CopyCtx>>,
    free_copies: Vec<u32>,
    current_copy: Option<u32>,
    /// A copy is landing: the transaction bytes that complete now are a
    /// copy's.
    landing: bool,
    /// The store being checked leaves its bytes as they are (`store`).
    same_store: bool,
    /// Per thread: the generation of each of its CTA's barriers when it
    /// exited, and where.
    exits: Vec<Option<([u32; 16], u32)>>,
    /// Per thread: its landed bulk-group copies (group, epoch).
    bulk_landed: HashMap<u32, Vec<(u64, u32)>>,
    /// Per thread: its landed `cp.async` copies (group, epoch).
    cp_landed: HashMap<u32, Vec<(u64, u32)>>,
    /// wgmma instances: (agent, epoch) of their reads.
    wg_instances: HashMap<u64, (u32, u32)>,
    /// The wgmma reads (agent, epoch) still pending in some warp, and the
    /// warps yet to wait: a write into them is S0024's, not a race.
    wg_pending: HashMap<(u32, u32), u32>,
    /// A worker of `--jobs`: the reads of global memory of the group it
    /// runs (`reads`).
    log: Option<Box<reads::ReadLog>>,
}
