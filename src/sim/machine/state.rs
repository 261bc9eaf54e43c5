//! The state of the threads, CTAs and barriers of the cluster being run.

// The machine's tables are keyed by small integers and looked up at
// every synchronisation: the fast hash, not SipHash.
use super::sanitizer::fast::FastMap as HashMap;

/// What a blocked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// `bar.sync id` (the thread has arrived; it resumes after the barrier).
    Bar { id: u32 },
    /// `barrier.cluster.wait`.
    Cluster,
    /// `mbarrier.try_wait` on the barrier at `offset` in the CTA of `rank`;
    /// the thread re-executes the wait when the phase completes.
    Mbar { rank: u32, offset: u32 },
    /// A warp-synchronous instruction, until the threads of its mask arrive.
    Warp,
    /// `setmaxnreg.inc`, until the CTA's register pool has the registers.
    RegPool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    Runnable,
    Blocked(Block),
    Exited,
}

#[derive(Clone, Debug)]
pub struct Thread {
    pub pc: u32,
    pub state: ThreadState,
    /// The CTA's rank in the cluster (its index in `Machine::ctas`).
    pub rank: u32,
    /// Linear thread id in the CTA.
    pub tid: u32,
    pub lane: u32,
    /// Index of the warp in `Machine::warps`.
    pub warp: u32,
    pub local: Vec<u8>,
    pub fparam: Vec<u8>,
    /// Return pcs and the call each belongs to.
    pub calls: Vec<(u32, u32)>,
    pub executed: u64,
    /// Where the thread exited.
    pub exit_pc: u32,
    /// The cluster-barrier phase the thread arrived at, until it waits.
    pub cluster_arrived: Option<u64>,
    /// Blocked in `try_wait` before: the wait is being re-executed.
    pub rewait: bool,
    /// The current wait was already reported as phases behind.
    pub behind_reported: bool,
    /// A failed `test_wait` at this progress epoch (a spinning poller).
    pub poll_epoch: Option<u64>,
    /// The `test_wait` a poller failed: (pc, barrier rank, barrier offset).
    pub poll: Option<(u32, u32, u32)>,
    /// The progress epoch of that failure: failing there again in the same
    /// epoch means the thread spins without anything changing.
    pub poll_seen: Option<u64>,
    /// The bulk async-groups the thread has committed (`commit_group`),
    /// which is also the number of the group being filled ([`Copy::group`]).
    pub bulk_commits: u64,
    /// The pc of the last branch the thread took.
    pub last_jump: u32,
    /// Waiting at a CTA barrier (`bar.sync`): set at its arrival, cleared
    /// when the barrier's phase completes (so the arrival need not search
    /// the barrier's waiters).
    pub at_bar: bool,
}

/// A CTA barrier (`bar.sync` id 0..15). Threads arrive a warp at a time
/// (the PTX ISA: a thread waits for the other non-exited threads of its
/// warp, then the warp's arrival is marked): `partial` holds the lanes of
/// warps not all of whose live lanes have arrived yet, and the threads of
/// those lanes that wait.
#[derive(Clone, Debug, Default)]
pub struct NamedBar {
    /// Threads counted in the current phase: 32 per warp for a barrier with
    /// a count, the warp's live threads for one without.
    pub arrived: u32,
    /// Per warp (`Machine::warps` index), oldest first, each arrival of
    /// the warp not complete yet: the lanes that arrived and the threads
    /// among them that wait. A lane that arrives again before the others
    /// (its `bar.sync` after its own `bar.arrive`, the others still
    /// behind) is in the warp's next arrival, not this one.
    pub partial: std::collections::BTreeMap<u32, std::collections::VecDeque<(u32, Vec<u32>)>>,
    /// The thread count of the current phase (`None`: all live threads).
    pub expected: Option<u32>,
    pub waiters: Vec<u32>,
    /// The pcs the arrivals of this phase came from.
    pub sites: Vec<u32>,
}

/// An mbarrier object: the state the 64-bit word in shared memory encodes.
#[derive(Clone, Debug)]
pub struct MBarrier {
    /// Arrivals expected per phase (`init`'s count, lowered by `arrive_drop`).
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: i64,
    /// Transaction bytes still expected in the current phase.
    pub tx: i64,
    /// Completed phases; the current phase's parity is `phase & 1`.
    pub phase: u64,
    pub init_pc: u32,
    pub waiters: Vec<u32>,
    /// Recent arrivals (thread, pc, the phase they arrived in), newest
    /// last, one per pc.
    pub last_arrivals: Vec<(u32, u32, u64)>,
    pub arrivals_this_phase: u32,
    /// Per thread: the phase count when its last wait on this barrier succeeded.
    pub last_wait: HashMap<u32, u64>,
    /// The copies that will complete bytes on this barrier.
    pub inflight_tx: i64,
    /// Per thread: the phase of its latest arrival on this barrier.
    pub arrived_in: HashMap<u32, u64>,
}

impl MBarrier {
    pub fn new(count: u32, init_pc: u32) -> MBarrier {
        MBarrier {
            expected: count,
            pending: i64::from(count),
            tx: 0,
            phase: 0,
            init_pc,
            waiters: Vec::new(),
            last_arrivals: Vec::new(),
            arrivals_this_phase: 0,
            last_wait: HashMap::default(),
            inflight_tx: 0,
            arrived_in: HashMap::default(),
        }
    }

    /// Has the phase with `parity` completed (the current phase's parity
    /// differs)?
    pub fn parity_done(&self, parity: u64) -> bool {
        (self.phase & 1) != (parity & 1)
    }

    pub fn note_arrival(&mut self, thread: u32, pc: u32) {
        self.arrived_in.insert(thread, self.phase);
        self.last_arrivals.retain(|&(_, p, _)| p != pc);
        self.last_arrivals.push((thread, pc, self.phase));
        if self.last_arrivals.len() > 4 {
            self.last_arrivals.remove(0);
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cta {
    pub shared: Vec<u8>,
    pub ctaid: [u32; 3],
    pub live: u32,
    pub bars: Vec<NamedBar>,
    pub mbars: HashMap<u32, MBarrier>,
    /// The 16-byte chunks of shared memory that pending wgmma operations
    /// read: chunk → (operations reading it, the pc of the latest).
    pub watch: HashMap<u32, (u32, u32)>,
    /// The CTA's register pool (`setmaxnreg`).
    pub pool: RegPool,
    /// The wgmma instances of the CTA's warpgroups: (warpgroup, sequence
    /// number) → the instance the warps' n-th wgmma belong to.
    pub wg_seq: HashMap<(u32, u64), u64>,
    /// The n-th `setmaxnreg` of each warpgroup: (warpgroup, n) → (pc, inc,
    /// count), for the agreement of its warps.
    pub setmax_seq: HashMap<(u32, u64), (u32, bool, u32)>,
}

/// The register pool of a CTA (`setmaxnreg`, PTX ISA §9.7.19.5).
#[derive(Clone, Debug, Default)]
pub struct RegPool {
    /// The kernel pins its registers at entry (`.maxnreg`, or a thread
    /// count with `.minnctapersm`); otherwise ptxas drops `setmaxnreg` and
    /// it has no effect.
    pub enabled: bool,
    /// Registers per thread at entry.
    pub entry: u32,
    /// Registers of the pool no warp holds.
    pub free: i64,
    /// Warps waiting in `setmaxnreg.inc`, in arrival order.
    pub waiting: Vec<PoolWait>,
}

/// A warp blocked in `setmaxnreg.inc`.
#[derive(Clone, Debug)]
pub struct PoolWait {
    pub warp: u32,
    pub want: u32,
    pub threads: Vec<u32>,
}

impl Cta {
    pub fn exited(&self) -> bool {
        self.live == 0
    }
}

/// A rendezvous of a warp-synchronous instruction.
#[derive(Clone, Debug)]
pub struct Rendezvous {
    /// The sync op (index into `Program::syncs`) kind it gathers.
    pub kind: u8,
    /// Lanes that arrived.
    pub arrived: u32,
    /// The `membermask` every arrived lane gave (its own lane added): the
    /// lanes it waits for.
    pub wanted: u32,
    /// Per arrived lane: (thread, pc of its instruction).
    pub members: Vec<(u32, u32)>,
    /// For `activemask`: the instruction its lanes meet at (lanes execute
    /// it together when they reach the same one, `warp.rs`).
    pub site: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Warp {
    pub first_thread: u32,
    /// Lanes that exist (a partial last warp has fewer).
    pub lanes: u32,
    pub pending: Vec<Rendezvous>,
    /// Lanes whose threads exited.
    pub exited: u32,
    /// Its wgmma operations and register count.
    pub wg: WarpWg,
}

/// A warp's part of its warpgroup's wgmma operations (`wgmma.rs`).
#[derive(Clone, Debug, Default)]
pub struct WarpWg {
    /// Operations issued since the last `commit_group` (ids).
    pub uncommitted: Vec<u64>,
    /// Committed groups, oldest first.
    pub groups: std::collections::VecDeque<Vec<u64>>,
    /// The wgmma instructions it issued (its sequence number).
    pub issued: u64,
    /// The `setmaxnreg` instructions it executed.
    pub setmax: u64,
    /// The registers of its pending operations (accumulators, and A
    /// fragments): (slot, pc of the wgmma), sorted by slot.
    pub locked: Vec<(u32, u32)>,
    /// Registers per thread it holds (`setmaxnreg`).
    pub regs: u32,
}

/// `barrier.cluster` state.
#[derive(Clone, Debug, Default)]
pub struct ClusterBarrier {
    pub phase: u64,
    pub arrived: u32,
    pub waiters: Vec<u32>,
}

/// A bulk copy in flight.
#[derive(Clone, Debug)]
pub struct Copy {
    pub issuer: u32,
    /// For a copy to global memory (`.bulk_group`), the issuer's group it
    /// belongs to: the number of `commit_group`s the issuer had executed
    /// before it (the group is committed once that count has grown past
    /// it). A copy into shared memory completes on its mbarrier and is in
    /// no group.
    pub group: Option<u64>,
    pub pc: u32,
    pub size: u32,
    pub kind: CopyKind,
    /// The copy's number for the run-time checks (`sanitizer`).
    pub check: u32,
}

#[derive(Clone, Debug)]
pub enum CopyKind {
    /// Global (`src_global`) or shared (`src_shared` = (rank, offset)) to
    /// shared memory at `dst_off`, completing on the mbarrier at
    /// `mbar_off`: in each destination CTA (`dsts`: (rank of the data,
    /// rank of the mbarrier); several under `.multicast::cluster`).
    ToShared {
        src_global: Option<u64>,
        src_shared: Option<(u32, u64)>,
        dsts: Vec<(u32, u32)>,
        dst_off: u64,
        mbar_off: u32,
    },
    /// The issuer's shared memory at `src_off` to global `dst`.
    ToGlobal { dst: u64, src_off: u64 },
    /// The box at `coords` (innermost first) of tensor map `map` (an index
    /// into `Memory::maps`) into shared memory, as `ToShared`.
    TensorToShared {
        map: usize,
        coords: [i64; 5],
        dsts: Vec<(u32, u32)>,
        dst_off: u64,
        mbar_off: u32,
    },
    /// The issuer's shared memory at `src_off` into the box at `coords` of
    /// tensor map `map`, stored or combined by `red`.
    TensorToGlobal {
        map: usize,
        coords: [i64; 5],
        src_off: u64,
        red: Option<crate::sim::decode::ops::TensorRed>,
    },
}
