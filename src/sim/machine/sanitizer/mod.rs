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
//! The machine calls the hooks below at the few points where memory is
//! accessed or synchronisation happens; the sanitizer never changes what
//! the kernel computes.

pub mod clock;
pub mod fast;
pub mod finding;
pub mod reads;
pub mod shadow;

use super::events::{AccessKind, BarrierRef, Events, ThreadRef};
use super::memory::{Place, Target};
use crate::sim::checks::Checks;
use crate::sim::decode::sem::{Fence, Order, Scope, Sem};
use clock::{Intervals, Snap, SyncClock, TClock, VClock};
use fast::FastMap as HashMap;
use finding::*;
use shadow::{Acc, Ctx, Shadow, Slot, View};

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

/// The kind of a finding's access, from the machine's.
fn kind_of(kind: AccessKind, sem: Sem) -> Kind {
    let atomic = sem.order.atomic();
    match kind {
        AccessKind::Load if atomic => Kind::AtomicRead,
        AccessKind::Load => Kind::Read,
        AccessKind::Store if atomic => Kind::AtomicWrite,
        AccessKind::Store => Kind::Write,
        AccessKind::Atomic => Kind::Atomic,
        AccessKind::CopyRead => Kind::CopyRead,
        AccessKind::CopyWrite => Kind::CopyWrite,
        AccessKind::Barrier => Kind::Read,
    }
}

fn kind_of_slot(s: &Slot) -> Kind {
    let m = shadow::slot_meta(s);
    let (w, a, y) = (
        m & shadow::WRITE != 0,
        m & shadow::ATOMIC != 0,
        m & shadow::ASYNC != 0,
    );
    match (w, a, y) {
        (true, true, _) => Kind::Atomic,
        (false, true, _) => Kind::AtomicRead,
        (true, false, true) => Kind::CopyWrite,
        (false, false, true) => Kind::CopyRead,
        (true, false, false) => Kind::Write,
        (false, false, false) => Kind::Read,
    }
}

impl Sanitizer {
    /// The checks `on` for a launch of this shape, with allocations of
    /// these lengths, shared and local memories of these sizes.
    pub fn new(on: Checks, shape: Shape, allocs: &[u64], shared: u64, local: u64) -> Sanitizer {
        let nthreads = shape.block[0] * shape.block[1] * shape.block[2];
        let csize = shape.cluster[0] * shape.cluster[1] * shape.cluster[2];
        Sanitizer {
            on,
            shape,
            nthreads: nthreads.max(1),
            csize: csize.max(1),
            seq: 0,
            ctaids: Vec::new(),
            threads: Vec::new(),
            agents: Vec::new(),
            agent_index: HashMap::default(),
            shared: Vec::new(),
            shared_init: Vec::new(),
            local_init: Vec::new(),
            shared_bytes: shared,
            preset: Vec::new(),
            local_bytes: local,
            global: allocs.iter().map(|_| None).collect(),
            global_len: allocs.to_vec(),
            bars: Vec::new(),
            cbar: SyncClock::default(),
            cbar_done: SyncClock::default(),
            mbars: HashMap::default(),
            shared_locs: HashMap::default(),
            global_locs: HashMap::default(),
            copies: Vec::new(),
            free_copies: Vec::new(),
            current_copy: None,
            landing: false,
            same_store: false,
            exits: Vec::new(),
            bulk_landed: HashMap::default(),
            cp_landed: HashMap::default(),
            wg_instances: HashMap::default(),
            wg_pending: HashMap::default(),
            log: None,
        }
    }

    /// A new cluster starts: `seq` counts clusters from 0, `ctaids` are
    /// its CTAs by rank.
    /// A cooperative launch runs the whole grid as one group: its CTAs
    /// are the group's ranks, as a cluster's are.
    pub fn set_group_size(&mut self, ctas: u32) {
        self.csize = ctas.max(1);
    }

    /// Shared memory `(offset, size)` ranges that every CTA starts with
    /// initialised (the reserved shared memory).
    pub fn preset_shared(&mut self, ranges: Vec<(u64, u64)>) {
        self.preset = ranges;
    }

    pub fn begin_cluster(&mut self, seq: u32, ctaids: Vec<[u32; 3]>) {
        self.seq = seq;
        for s in self.global.iter_mut().flatten() {
            s.restart();
        }
        let n = (self.nthreads * self.csize) as usize;
        self.threads.clear();
        self.threads.resize(n, TClock::new());
        self.agents.clear();
        self.agent_index.clear();
        let ranks = ctaids.len();
        self.ctaids = ctaids;
        self.shared.clear();
        self.shared_init.clear();
        for _ in 0..ranks {
            self.shared.push(if self.on.races {
                Shadow::new(self.shared_bytes)
            } else {
                None
            });
            self.shared_init.push(if self.on.uninit {
                vec![0u64; self.shared_bytes.div_ceil(64) as usize]
            } else {
                Vec::new()
            });
        }
        if self.on.uninit {
            for r in 0..ranks as u32 {
                for &(off, size) in &self.preset.clone() {
                    self.initialise(
                        0,
                        Mem::Shared {
                            rank: r,
                            offset: off,
                        },
                        size,
                    );
                }
            }
        }
        self.local_init.clear();
        if self.on.uninit && self.local_bytes > 0 {
            self.local_init
                .resize(n, vec![0u64; self.local_bytes.div_ceil(64) as usize]);
        }
        self.bars.clear();
        self.bars.resize(ranks * 16, BarState::default());
        self.cbar = SyncClock::default();
        self.cbar_done = SyncClock::default();
        self.mbars.clear();
        self.shared_locs.clear();
        self.copies.clear();
        self.free_copies.clear();
        self.current_copy = None;
        self.exits.clear();
        self.exits.resize(n, None);
        self.bulk_landed.clear();
        self.cp_landed.clear();
        self.wg_instances.clear();
        self.wg_pending.clear();
    }

    /// A sanitizer for the same launch with the same global state (the
    /// shadow of global memory and its atomic locations), for a worker of
    /// `--jobs`.
    pub fn fork(&self) -> Sanitizer {
        let mut s = Sanitizer::new(self.on, self.shape, &self.global_len, 0, 0);
        s.nthreads = self.nthreads;
        s.csize = self.csize;
        s.shared_bytes = self.shared_bytes;
        s.local_bytes = self.local_bytes;
        s.global = self.global.clone();
        s.global_locs = self.global_locs.clone();
        s
    }

    /// The global state of bytes `lo..hi` (whole granules) of allocation
    /// `alloc`.
    pub fn save_global(&self, alloc: usize, lo: u64, hi: u64) -> Saved {
        let (lo, hi) = ((lo / 4) as usize, hi.div_ceil(4) as usize);
        let cells = self
            .global
            .get(alloc)
            .and_then(Option::as_ref)
            .and_then(|s| s.cells(lo, hi))
            .map(<[_]>::to_vec);
        let locs = self
            .global_locs
            .iter()
            .filter(|((a, off), _)| *a == alloc && (lo..hi).contains(&((off / 4) as usize)))
            .map(|((_, off), l)| (*off, l.clone()))
            .collect();
        Saved {
            alloc,
            lo,
            hi,
            cells,
            locs,
        }
    }

    /// Puts back what [`Sanitizer::save_global`] saved (of another
    /// sanitizer of the launch).
    pub fn load_global(&mut self, saved: &Saved) {
        let Saved { alloc, lo, hi, .. } = *saved;
        match &saved.cells {
            Some(cells) => {
                if let Some(s) = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc)
                {
                    s.set_cells(lo, hi, Some(cells));
                }
            }
            None => {
                if let Some(s) = self.global.get_mut(alloc).and_then(Option::as_mut) {
                    s.set_cells(lo, hi, None);
                }
            }
        }
        if self.global_locs.is_empty() && saved.locs.is_empty() {
            return;
        }
        self.global_locs
            .retain(|(a, off), _| *a != alloc || !(lo..hi).contains(&((off / 4) as usize)));
        for (off, l) in &saved.locs {
            self.global_locs.insert((alloc, *off), l.clone());
        }
    }

    /// Copies the global state of bytes `lo..hi` (whole granules) of
    /// allocation `alloc` from another sanitizer of the launch: what
    /// [`Sanitizer::save_global`] and [`Sanitizer::load_global`] do,
    /// without the copy in between.
    pub fn copy_global(&mut self, from: &Sanitizer, alloc: usize, lo: u64, hi: u64) {
        let (glo, ghi) = ((lo / 4) as usize, hi.div_ceil(4) as usize);
        match from
            .global
            .get(alloc)
            .and_then(Option::as_ref)
            .and_then(|s| s.cells(glo, ghi))
        {
            Some(cells) => {
                if let Some(s) = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc)
                {
                    s.set_cells(glo, ghi, Some(cells));
                }
            }
            None => {
                if let Some(s) = self.global.get_mut(alloc).and_then(Option::as_mut) {
                    s.set_cells(glo, ghi, None);
                }
            }
        }
        if self.global_locs.is_empty() && from.global_locs.is_empty() {
            return;
        }
        let within = |a: usize, off: u64| a == alloc && (glo..ghi).contains(&((off / 4) as usize));
        self.global_locs.retain(|(a, off), _| !within(*a, *off));
        for ((a, off), l) in &from.global_locs {
            if within(*a, *off) {
                self.global_locs.insert((*a, *off), l.clone());
            }
        }
    }

    /// The cluster is done: what it released at gpu scope into atomic
    /// locations of global memory is kept as "cluster `seq`" for later
    /// clusters to acquire.
    pub fn end_cluster(&mut self) {
        let seq = self.seq;
        for loc in self.global_locs.values_mut() {
            if loc
                .entries
                .iter()
                .any(|(s, _, c)| *s >= Scope::Gpu && !c.is_empty())
            {
                loc.old.insert(seq);
            }
            for (s, _, c) in std::mem::take(&mut loc.entries) {
                if s >= Scope::Gpu {
                    loc.old.union(&c.old);
                }
            }
        }
        self.global_locs.retain(|_, l| !l.old.is_empty());
    }

    fn ctx(&self) -> Ctx {
        Ctx {
            seq: self.seq,
            nthreads: self.nthreads,
        }
    }

    fn tref(&self, t: u32) -> ThreadRef {
        ThreadRef {
            ctaid: self
                .ctaids
                .get((t / self.nthreads) as usize)
                .copied()
                .unwrap_or([0; 3]),
            tid: t % self.nthreads,
        }
    }

    /// The thread of agent `a` of cluster `seq` (an earlier one when it
    /// is not the current).
    fn old_tref(&self, seq: u32, a: u32) -> ThreadRef {
        let s = self.shape;
        let n = [
            (s.grid[0] / s.cluster[0].max(1)).max(1),
            (s.grid[1] / s.cluster[1].max(1)).max(1),
            (s.grid[2] / s.cluster[2].max(1)).max(1),
        ];
        let cl = [seq % n[0], (seq / n[0]) % n[1], seq / (n[0] * n[1])];
        let rank = a / self.nthreads;
        let cc = [
            rank % s.cluster[0].max(1),
            (rank / s.cluster[0].max(1)) % s.cluster[1].max(1),
            rank / (s.cluster[0] * s.cluster[1]).max(1),
        ];
        ThreadRef {
            ctaid: [
                cl[0] * s.cluster[0] + cc[0],
                cl[1] * s.cluster[1] + cc[1],
                cl[2] * s.cluster[2] + cc[2],
            ],
            tid: a % self.nthreads,
        }
    }

    fn nthreads_cluster(&self) -> u32 {
        self.threads.len() as u32
    }

    /// The agent number of an asynchronous agent (made on first use).
    fn agent(&mut self, key: AgentKey) -> u32 {
        if let Some(&a) = self.agent_index.get(&key) {
            return a;
        }
        let base = self.nthreads_cluster();
        let a = base + self.agents.len() as u32;
        if a >= MAX_AGENTS {
            // Past 2^16 agents they share the last number (which can only
            // hide races, never invent one: a shared number orders more).
            return MAX_AGENTS - 1;
        }
        self.agents.push((key, 0));
        self.agent_index.insert(key, a);
        a
    }

    /// Advances an asynchronous agent's clock: the epoch of its next access.
    fn tick(&mut self, agent: u32) -> u32 {
        let base = self.nthreads_cluster();
        match self.agents.get_mut(agent.saturating_sub(base) as usize) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => 1,
        }
    }

    fn actor_of(&self, s: &Slot) -> Actor {
        let a = shadow::slot_agent(s);
        if s[0] != self.seq {
            return Actor::Thread {
                who: self.old_tref(s[0], a),
                old: true,
            };
        }
        if a < self.nthreads_cluster() {
            return Actor::Thread {
                who: self.tref(a),
                old: false,
            };
        }
        match self
            .agents
            .get((a - self.nthreads_cluster()) as usize)
            .map(|x| x.0)
        {
            Some(AgentKey::Mbar { rank, off }) => Actor::Copy {
                barrier: BarrierRef {
                    ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
                    offset: off,
                },
            },
            Some(AgentKey::Bulk { thread }) => Actor::BulkGroup {
                issuer: self.tref(thread),
            },
            Some(AgentKey::CpAsync { thread }) => Actor::CpAsync {
                issuer: self.tref(thread),
            },
            Some(AgentKey::Wgmma { rank, group }) => Actor::Wgmma {
                ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
                warpgroup: group,
            },
            None => Actor::Thread {
                who: self.tref(0),
                old: false,
            },
        }
    }

    // ----- memory accesses -----------------------------------------------

    /// A plain or atomic store of `size` bytes by thread `t` at `pc`;
    /// `unchanged`: the bytes already hold the value it writes (for
    /// `shadow::warp_wide_store`).
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        place: Place,
        size: u64,
        sem: Sem,
        unchanged: bool,
    ) {
        self.same_store = unchanged;
        self.access(ev, t, pc, place, size, AccessKind::Store, sem);
    }

    /// A load, store or atomic of `size` bytes by thread `t` at `pc`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn access(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        place: Place,
        size: u64,
        kind: AccessKind,
        sem: Sem,
    ) {
        let same_store = std::mem::take(&mut self.same_store);
        let mem = match place.target {
            Target::Shared(rank) => Mem::Shared {
                rank,
                offset: place.offset,
            },
            Target::Global(alloc) => Mem::Global {
                alloc,
                offset: place.offset,
            },
            Target::Local => Mem::Local {
                offset: place.offset,
            },
            Target::Param | Target::FuncParam => return,
        };
        let reads = kind != AccessKind::Store;
        let writes = kind != AccessKind::Load;
        if self.on.uninit {
            if reads && !self.initialised(t, mem, size) {
                let who = self.tref(t);
                let kind = kind_of(kind, sem);
                ev.record_check(pc, who, uninit_key(mem, kind), || Finding::Uninit {
                    mem,
                    size,
                    kind,
                });
            }
            if writes {
                self.initialise(t, mem, size);
            }
        }
        if !self.on.races || matches!(mem, Mem::Local { .. }) {
            return;
        }
        let atomic = kind == AccessKind::Atomic || sem.order.atomic();
        let rank = t / self.nthreads;
        let ctx = self.ctx();
        let conflict = {
            let Some(th) = self.threads.get(t as usize) else {
                return;
            };
            let acc = Acc {
                agent: t,
                clock: th.own,
                pc,
                write: writes,
                atomic,
                scope: sem.scope,
                async_proxy: false,
                thread: true,
                rank,
                same_store: same_store && kind == AccessKind::Store,
                view: View::Thread(th, t),
            };
            match mem {
                Mem::Shared { rank, offset } => self
                    .shared
                    .get_mut(rank as usize)
                    .and_then(Option::as_mut)
                    .and_then(|s| s.access(offset, size, &acc, ctx)),
                Mem::Global { alloc, offset } => {
                    let sh = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc);
                    if let (Some(log), Some(sh)) = (self.log.as_deref_mut(), sh.as_deref()) {
                        if writes {
                            log.write(alloc, offset, size);
                        } else {
                            log.read(alloc, offset, size, &acc, sh.tick());
                        }
                    }
                    sh.and_then(|s| s.access(offset, size, &acc, ctx))
                }
                Mem::Local { .. } => None,
            }
        };
        if let Some(c) = conflict {
            let who = self.tref(t);
            self.report_race(
                ev,
                t,
                pc,
                mem,
                kind_of(kind, sem),
                size,
                true,
                || Actor::Thread { who, old: false },
                c,
            );
        }
        if atomic {
            self.atomic_sync(t, mem, reads, writes, sem);
        }
    }

    fn global_shadow<'a>(
        global: &'a mut [Option<Shadow<GLOBAL_SLOTS>>],
        lens: &[u64],
        alloc: usize,
    ) -> Option<&'a mut Shadow<GLOBAL_SLOTS>> {
        let slot = global.get_mut(alloc)?;
        if slot.is_none() {
            // An array whose shadow cannot be allocated goes unchecked
            // (an empty shadow, so that the allocation is not retried at
            // every access): the checks never abort a run.
            *slot = Shadow::new(lens.get(alloc).copied().unwrap_or(0)).or_else(|| Shadow::new(0));
        }
        slot.as_mut()
    }

    /// How the access of thread `t` (`thread`: by the thread itself, not
    /// an agent it issued) relates to the one in slot `s`.
    fn relation_of(&self, t: u32, thread: bool, s: &Slot) -> Relation {
        let a = shadow::slot_agent(s);
        if !thread || (s[0] == self.seq && a >= self.nthreads_cluster()) {
            return Relation::Async;
        }
        if s[0] != self.seq {
            return Relation::OtherCluster;
        }
        let n = self.nthreads;
        if a / n != t / n {
            Relation::SameCluster
        } else if (a % n) / 32 == (t % n) / 32 {
            Relation::SameWarp
        } else {
            Relation::SameCta
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn report_race(
        &self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        mem: Mem,
        kind: Kind,
        size: u64,
        thread_now: bool,
        actor: impl FnOnce() -> Actor,
        c: shadow::Conflict,
    ) {
        let agent = shadow::slot_agent(&c.slot);
        if c.slot[0] == self.seq && self.wg_pending.contains_key(&(agent, c.slot[1])) {
            // A write into the operands of a wgmma still pending: S0024.
            return;
        }
        let who = self.tref(t);
        let relation = self.relation_of(t, thread_now, &c.slot);
        let key = race_key(c.proxy, relation, kind);
        ev.record_check(pc, who, key, || {
            let now = Side {
                kind,
                actor: actor(),
                pc,
                size,
            };
            let prior_actor = self.actor_of(&c.slot);
            let offset = c.granule.max(mem_offset(mem));
            let mem = match mem {
                Mem::Shared { rank, .. } => Mem::Shared { rank, offset },
                Mem::Global { alloc, .. } => Mem::Global { alloc, offset },
                m => m,
            };
            Finding::Race(Box::new(Race {
                mem,
                now,
                prior: Side {
                    kind: kind_of_slot(&c.slot),
                    actor: prior_actor,
                    pc: c.slot[2],
                    size: 0,
                },
                proxy: c.proxy,
                relation,
            }))
        });
    }

    fn init_bits(&mut self, t: u32, mem: Mem) -> Option<(&mut Vec<u64>, u64)> {
        match mem {
            Mem::Shared { rank, offset } => {
                self.shared_init.get_mut(rank as usize).map(|b| (b, offset))
            }
            Mem::Local { offset } => self.local_init.get_mut(t as usize).map(|b| (b, offset)),
            Mem::Global { .. } => None,
        }
    }

    fn initialised(&mut self, t: u32, mem: Mem, size: u64) -> bool {
        let Some((bits, off)) = self.init_bits(t, mem) else {
            return true;
        };
        if bits.is_empty() {
            return true;
        }
        (off..off + size).all(|b| {
            bits.get((b / 64) as usize)
                .is_some_and(|w| w >> (b % 64) & 1 == 1)
        })
    }

    fn initialise(&mut self, t: u32, mem: Mem, size: u64) {
        let Some((bits, off)) = self.init_bits(t, mem) else {
            return;
        };
        for b in off..off + size {
            if let Some(w) = bits.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
    }

    /// The release and acquire sides of an atomic access.
    fn atomic_sync(&mut self, t: u32, mem: Mem, reads: bool, writes: bool, sem: Sem) {
        let rank = t / self.nthreads;
        let Some(loc) = (match mem {
            Mem::Shared { rank, offset } => {
                Some(self.shared_locs.entry((rank, offset)).or_default())
            }
            Mem::Global { alloc, offset } => {
                Some(self.global_locs.entry((alloc, offset)).or_default())
            }
            Mem::Local { .. } => None,
        }) else {
            return;
        };
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        if reads {
            let mut vis = visible(loc, rank, sem.scope);
            if sem.order.acquires() {
                th.acquire(&mut vis);
            } else if !vis.is_empty() {
                th.fence_acq.absorb(&vis);
            }
        }
        if writes {
            if sem.order.releases() {
                if let Some(e) = entry(loc, sem.scope, rank) {
                    th.release_into(t, e);
                }
            } else if let Some((rel, fscope)) = &th.fence_rel {
                if let Some(e) = entry(loc, sem.scope.min(*fscope), rank) {
                    e.absorb(rel);
                }
            }
        }
    }

    /// A fence by thread `t`.
    pub fn fence(&mut self, t: u32, sem: Sem) {
        if !self.on.races {
            return;
        }
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        match sem.fence {
            Some(Fence::ProxyAsync) => {
                th.avc = th.base.clone();
                th.avc_own = th.own;
            }
            Some(Fence::Sync) => {
                if sem.order.acquires() {
                    let mut acq = std::mem::take(&mut th.fence_acq);
                    th.acquire(&mut acq);
                }
                if sem.order.releases() {
                    th.fence_rel = Some((th.snapshot(t), sem.scope));
                    th.own += 1;
                }
            }
            Some(Fence::MbarInit) | None => {}
        }
    }

    // ----- CTA and cluster barriers --------------------------------------

    /// Thread `t` arrives at barrier `id` of its CTA (`counted`: with a
    /// thread count; `aligned`: `bar.sync`/`.aligned`).
    pub fn bar_arrive(
        &mut self,
        t: u32,
        rank: u32,
        id: u32,
        pc: u32,
        counted: bool,
        aligned: bool,
    ) {
        let Some(st) = self.bars.get_mut((rank * 16 + id % 16) as usize) else {
            return;
        };
        if self.on.races {
            if let Some(th) = self.threads.get_mut(t as usize) {
                th.release_into(t, &mut st.clock);
            }
        }
        if self.on.barriers {
            st.arrivals.push((pc, t, aligned));
            st.counted |= counted;
        }
    }

    /// Barrier `id` of the CTA of `rank` completes a phase; `waiters` go on.
    pub fn bar_complete(&mut self, ev: &mut Events, rank: u32, id: u32, waiters: &[u32]) {
        let Some(st) = self.bars.get_mut((rank * 16 + id % 16) as usize) else {
            return;
        };
        let mut st = std::mem::take(st);
        if self.on.barriers && !st.counted {
            self.divergence(ev, rank, id, &st);
        }
        if self.on.races {
            for &w in waiters {
                if let Some(th) = self.threads.get_mut(w as usize) {
                    th.acquire_superset(&mut st.clock);
                }
            }
        }
        if let Some(s) = self.bars.get_mut((rank * 16 + id % 16) as usize) {
            s.gen = st.gen + 1;
        }
    }

    /// S0034: an all-thread barrier phase whose threads arrived at
    /// different `.aligned` instructions, or that threads skipped by
    /// exiting.
    fn divergence(&mut self, ev: &mut Events, rank: u32, id: u32, st: &BarState) {
        let Some(&(pc0, t0, _)) = st.arrivals.first() else {
            return;
        };
        let mut sites: Vec<(u32, Vec<u32>)> = Vec::new();
        for &(pc, t, _) in &st.arrivals {
            let tid = t % self.nthreads;
            match sites.iter_mut().find(|(p, _)| *p == pc) {
                Some((_, v)) => v.push(tid),
                None => sites.push((pc, vec![tid])),
            }
        }
        let aligned = st.arrivals.iter().all(|a| a.2);
        let split = aligned && sites.len() > 1;
        let first = rank * self.nthreads;
        let mut arrived = vec![false; self.nthreads as usize];
        for &(_, t, _) in &st.arrivals {
            if let Some(a) = arrived.get_mut((t - first.min(t)) as usize) {
                *a = true;
            }
        }
        let mut exited: Vec<(u32, Vec<u32>)> = Vec::new();
        for tid in 0..self.nthreads {
            let t = first + tid;
            if arrived.get(tid as usize).copied().unwrap_or(true) {
                continue;
            }
            let Some(Some((gens, pc))) = self.exits.get(t as usize) else {
                continue;
            };
            if gens.get((id % 16) as usize) != Some(&st.gen) {
                continue;
            }
            match exited.iter_mut().find(|(p, _)| p == pc) {
                Some((_, v)) => v.push(tid),
                None => exited.push((*pc, vec![tid])),
            }
        }
        if !split && exited.is_empty() {
            return;
        }
        let d = Divergence {
            ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
            id,
            sites,
            exited,
            threads: self.nthreads,
        };
        let who = self.tref(t0);
        ev.record_check(pc0, who, divergence_key(id), || {
            Finding::Divergence(Box::new(d))
        });
    }

    /// Thread `t` exits at `pc`.
    pub fn thread_exit(&mut self, t: u32, pc: u32) {
        let rank = t / self.nthreads;
        let mut gens = [0u32; 16];
        for (id, g) in gens.iter_mut().enumerate() {
            *g = self.bars.get(rank as usize * 16 + id).map_or(0, |b| b.gen);
        }
        if let Some(e) = self.exits.get_mut(t as usize) {
            *e = Some((gens, pc));
        }
    }

    /// `barrier.cluster.arrive` (a release unless `.relaxed`).
    pub fn cluster_arrive(&mut self, t: u32, sem: Sem) {
        if !self.on.races || sem.order == Order::Relaxed {
            return;
        }
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.release_into(t, &mut self.cbar);
        }
    }

    /// The cluster barrier completes a phase.
    pub fn cluster_complete(&mut self) {
        if !self.on.races {
            return;
        }
        let cur = std::mem::take(&mut self.cbar);
        self.cbar_done.absorb(&cur);
    }

    /// `barrier.cluster.wait` of thread `t` returns.
    pub fn cluster_acquire(&mut self, t: u32) {
        if !self.on.races {
            return;
        }
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.acquire(&mut self.cbar_done);
        }
    }

    // ----- warp-synchronous instructions -----------------------------------

    /// The lanes `members` meet at a warp-synchronous instruction.
    pub fn warp_sync(&mut self, members: &[u32]) {
        if !self.on.races || members.len() < 2 {
            return;
        }
        let mut s = SyncClock::default();
        for &m in members {
            if let Some(th) = self.threads.get_mut(m as usize) {
                th.release_into(m, &mut s);
            }
        }
        for &m in members {
            if let Some(th) = self.threads.get_mut(m as usize) {
                th.acquire_superset(&mut s);
            }
        }
    }

    // ----- mbarriers -------------------------------------------------------

    pub fn mbar_init(&mut self, rank: u32, off: u32) {
        self.mbars.remove(&(rank, off));
    }

    /// An arrival (or `complete_tx`) by thread `t`: a release unless
    /// `.relaxed`.
    pub fn mbar_release(&mut self, t: u32, rank: u32, off: u32, sem: Sem) {
        if !self.on.races || !sem.order.releases() {
            return;
        }
        let st = self.mbars.entry((rank, off)).or_default();
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.release_into(t, &mut st.cur);
        }
    }

    /// The current phase completes.
    pub fn mbar_phase_done(&mut self, rank: u32, off: u32) {
        let st = self.mbars.entry((rank, off)).or_default();
        let cur = std::mem::take(&mut st.cur);
        if !cur.is_empty() {
            st.done.absorb(&cur);
        }
        st.expected = 0;
        st.completed = 0;
    }

    /// A wait of thread `t` observed a completed phase: it acquires every
    /// release of the phases completed so far (unless `.relaxed`).
    pub fn mbar_acquire(&mut self, t: u32, rank: u32, off: u32, sem: Sem) {
        if !self.on.races || !sem.order.acquires() {
            return;
        }
        let Some(st) = self.mbars.get_mut(&(rank, off)) else {
            return;
        };
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.acquire(&mut st.done);
        }
    }

    /// `tx` transaction bytes were added (expected) or, negative,
    /// completed on the mbarrier at `off` of the CTA of `rank`, by thread
    /// `t` at `pc`, leaving `pending` arrivals and `left` bytes in phase
    /// `phase`: S0033 when the phase's arrivals are all in and it has
    /// received more bytes than it expects.
    #[allow(clippy::too_many_arguments)]
    pub fn mbar_tx(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        barrier: BarrierRef,
        rank: u32,
        tx: i64,
        pending: i64,
        left: i64,
        phase: u64,
    ) {
        if !self.on.tx {
            return;
        }
        let copy = self.landing;
        let st = self.mbars.entry((rank, barrier.offset)).or_default();
        if tx > 0 {
            st.expected += tx;
            return;
        }
        st.completed -= tx;
        if pending == 0 && left < 0 {
            let (expected, completed) = (st.expected, st.completed);
            let who = self.tref(t);
            ev.record_check(pc, who, tx_key(false), || Finding::TxOverflow {
                barrier,
                phase,
                expected,
                completed,
                bytes: (-tx) as u64,
                late: false,
                copy,
            });
        }
    }

    // ----- bulk and tensor copies --------------------------------------------

    /// Thread `t` issues a copy at `pc`: into shared memory (completing on
    /// the mbarriers `phases`: (rank, offset, phase now)), or, with
    /// `group`, in its bulk group. Returns the copy's number.
    pub fn copy_issue(
        &mut self,
        t: u32,
        pc: u32,
        group: Option<u64>,
        dests: &[(u32, u32)],
        mbar_off: u32,
        phases: Vec<(u32, u32, u64)>,
    ) -> u32 {
        self.new_copy(t, pc, group, false, dests, mbar_off, phases)
    }

    /// Thread `t` issues an Ampere `cp.async` at `pc` in its (not yet
    /// committed) `cp.async` group `group`: an asynchronous agent of the
    /// thread (one per thread, its copies landing in issue order) reads
    /// the global source and writes the shared destination, ordered after
    /// the issue and before the thread's `cp.async.wait_group` or
    /// `wait_all` that covers the group (`cp_wait`), or the phase of a
    /// `cp.async.mbarrier.arrive` after it (`cp_arrive`). Returns the
    /// copy's number, for `copy_begin`/`copy_end` at its landing.
    pub fn cp_issue(&mut self, t: u32, pc: u32, group: u64) -> u32 {
        self.new_copy(t, pc, Some(group), true, &[], 0, Vec::new())
    }

    #[allow(clippy::too_many_arguments)]
    fn new_copy(
        &mut self,
        t: u32,
        pc: u32,
        group: Option<u64>,
        cp: bool,
        dests: &[(u32, u32)],
        mbar_off: u32,
        phases: Vec<(u32, u32, u64)>,
    ) -> u32 {
        if !self.on.races && !self.on.tx && !self.on.uninit {
            return u32::MAX;
        }
        let snap = match self.threads.get_mut(t as usize) {
            Some(th) if self.on.races => {
                let s = th.snap(t);
                th.own += 1;
                s
            }
            _ => Snap::default(),
        };
        let agent = match group {
            Some(_) if cp => self.agent(AgentKey::CpAsync { thread: t }),
            Some(_) => self.agent(AgentKey::Bulk { thread: t }),
            None => {
                let mr = dests.first().map_or(0, |d| d.1);
                self.agent(AgentKey::Mbar {
                    rank: mr,
                    off: mbar_off,
                })
            }
        };
        let dests = dests
            .iter()
            .map(|&(r, mr)| {
                let a = self.agent(AgentKey::Mbar {
                    rank: mr,
                    off: mbar_off,
                });
                (r, mr, a, 0)
            })
            .collect();
        let ctx = CopyCtx {
            snap,
            issuer: t,
            pc,
            agent,
            dests,
            phases,
            group,
            cp,
            epoch: 0,
        };
        match self.free_copies.pop() {
            Some(i) => {
                if let Some(s) = self.copies.get_mut(i as usize) {
                    *s = Some(ctx);
                }
                i
            }
            None => {
                self.copies.push(Some(ctx));
                self.copies.len() as u32 - 1
            }
        }
    }

    /// Copy `id` lands now: its accesses follow (`copy_access`), until
    /// `copy_end` (or `copy_finished`). Only then are accesses a copy's:
    /// the copy landing is always the one named here, never an earlier
    /// one's leftover.
    pub fn copy_begin(&mut self, id: u32) {
        self.landing = true;
        self.current_copy = None;
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let agent = c.agent;
        let dests: Vec<u32> = c.dests.iter().map(|d| d.2).collect();
        let epoch = self.tick(agent);
        let mut epochs = Vec::new();
        for a in dests {
            epochs.push(if a == agent { epoch } else { self.tick(a) });
        }
        if let Some(Some(c)) = self.copies.get_mut(id as usize) {
            c.epoch = epoch;
            for (d, e) in c.dests.iter_mut().zip(epochs) {
                d.3 = e;
            }
        }
        self.current_copy = Some(id);
        self.landing = true;
    }

    /// The landed copy's transaction bytes have been counted.
    pub fn copy_finished(&mut self) {
        self.landing = false;
        self.current_copy = None;
    }

    /// The landing copy reads (or writes) `size` bytes of `mem`.
    pub fn copy_access(&mut self, ev: &mut Events, mem: Mem, size: u64, write: bool, atomic: bool) {
        let Some(id) = self.current_copy else {
            return;
        };
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let (issuer, pc) = (c.issuer, c.pc);
        let kind = if write {
            Kind::CopyWrite
        } else {
            Kind::CopyRead
        };
        if self.on.uninit {
            if !write && !self.initialised(issuer, mem, size) {
                let who = self.tref(issuer);
                ev.record_check(pc, who, uninit_key(mem, kind), || Finding::Uninit {
                    mem,
                    size,
                    kind,
                });
            }
            if write {
                self.initialise(issuer, mem, size);
            }
        }
        if !self.on.races {
            return;
        }
        let ctx = self.ctx();
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let (agent, epoch) = match mem {
            Mem::Shared { rank, .. } if write => c
                .dests
                .iter()
                .find(|d| d.0 == rank)
                .map_or((c.agent, c.epoch), |d| (d.2, d.3)),
            _ => (c.agent, c.epoch),
        };
        let shared = matches!(mem, Mem::Shared { .. });
        let acc = Acc {
            agent,
            clock: epoch,
            pc,
            write,
            atomic,
            scope: Scope::Gpu,
            async_proxy: shared,
            thread: false,
            rank: issuer / self.nthreads,
            same_store: false,
            view: View::Snapshot(&c.snap),
        };
        let conflict = match mem {
            Mem::Shared { rank, offset } => self
                .shared
                .get_mut(rank as usize)
                .and_then(Option::as_mut)
                .and_then(|s| s.access(offset, size, &acc, ctx)),
            Mem::Global { alloc, offset } => {
                let sh = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc);
                if let (Some(log), Some(sh)) = (self.log.as_deref_mut(), sh.as_deref()) {
                    if write {
                        log.write(alloc, offset, size);
                    } else {
                        log.read(alloc, offset, size, &acc, sh.tick());
                    }
                }
                sh.and_then(|s| s.access(offset, size, &acc, ctx))
            }
            Mem::Local { .. } => None,
        };
        if let Some(cf) = conflict {
            let actor = self.actor_of(&[self.seq, epoch, pc, agent << 16]);
            self.report_race(ev, issuer, pc, mem, kind, size, false, || actor, cf);
        }
    }

    /// The landing copy's accesses are done: a copy into shared memory
    /// releases into its mbarriers (before they count its bytes), a
    /// bulk-group copy is remembered for its issuer's `wait_group`. A copy
    /// whose barrier completed a phase since its issue (`phase_now`) is
    /// S0033: that phase received fewer bytes than were sent for it.
    pub fn copy_end(
        &mut self,
        ev: &mut Events,
        id: u32,
        size: u32,
        phase_now: impl Fn(u32, u32) -> Option<u64>,
        name: impl Fn(u32, u32) -> BarrierRef,
    ) {
        self.current_copy = None;
        let Some(c) = self.copies.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.free_copies.push(id);
        if self.on.tx {
            for &(rank, off, p) in &c.phases {
                if let Some(now) = phase_now(rank, off) {
                    if now > p {
                        let who = self.tref(c.issuer);
                        ev.record_check(c.pc, who, tx_key(true), || Finding::TxOverflow {
                            barrier: name(rank, off),
                            phase: p,
                            expected: 0,
                            completed: 0,
                            bytes: u64::from(size),
                            late: true,
                            copy: true,
                        });
                    }
                }
            }
        }
        if !self.on.races {
            return;
        }
        if let Some(g) = c.group {
            let landed = if c.cp {
                &mut self.cp_landed
            } else {
                &mut self.bulk_landed
            };
            let list = landed.entry(c.issuer).or_default();
            match list.last_mut() {
                Some(last) if last.0 == g => last.1 = last.1.max(c.epoch),
                _ => list.push((g, c.epoch)),
            }
            // Bounded: past 64 groups not waited for, the oldest two
            // merge (a wait for the older then also acquires the newer,
            // which can only hide a race).
            if list.len() > 64 {
                let (g1, e1) = list.remove(0);
                if let Some(next) = list.first_mut() {
                    *next = (g1, next.1.max(e1));
                }
            }
            return;
        }
        for &(rank, off, _) in &c.phases {
            let (agent, epoch) = c
                .dests
                .iter()
                .find(|d| d.1 == rank)
                .map_or((c.agent, c.epoch), |d| (d.2, d.3));
            let st = self.mbars.entry((rank, off)).or_default();
            c.snap.release_into(&mut st.cur, agent, epoch);
        }
    }

    /// `cp.async.bulk.wait_group` of thread `t`: the copies of its groups
    /// before `before` have landed; it acquires them.
    pub fn bulk_wait(&mut self, t: u32, before: u64) {
        if !self.on.races {
            return;
        }
        let Some(list) = self.bulk_landed.get_mut(&t) else {
            return;
        };
        let mut max = 0;
        list.retain(|&(g, e)| {
            if g < before {
                max = max.max(e);
                false
            } else {
                true
            }
        });
        if max == 0 {
            return;
        }
        let agent = self.agent(AgentKey::Bulk { thread: t });
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.base.raise(agent, max);
        }
    }

    /// `cp.async.wait_group`/`wait_all` of thread `t`: its `cp.async`
    /// copies of the groups before `before` have landed; it acquires them
    /// (their reads and writes happen before what the thread does next,
    /// and, through a barrier after the wait, before the other threads').
    pub fn cp_wait(&mut self, t: u32, before: u64) {
        if !self.on.races {
            return;
        }
        let Some(list) = self.cp_landed.get_mut(&t) else {
            return;
        };
        let mut max = 0;
        list.retain(|&(g, e)| {
            if g < before {
                max = max.max(e);
                false
            } else {
                true
            }
        });
        if max == 0 {
            return;
        }
        let agent = self.agent(AgentKey::CpAsync { thread: t });
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.base.raise(agent, max);
        }
    }

    /// `cp.async.mbarrier.arrive` of thread `t` on the mbarrier at `off`
    /// of the CTA of `rank`, after all its `cp.async` copies landed: the
    /// arrival-on is triggered by their completion, so the phase it
    /// counts in releases their accesses to the waits that observe it.
    /// The thread itself is not ordered after them (it did not wait).
    pub fn cp_arrive(&mut self, t: u32, rank: u32, off: u32) {
        if !self.on.races {
            return;
        }
        // Every copy of the thread has landed: the agent's clock now is
        // the latest landing's epoch.
        let Some(&agent) = self.agent_index.get(&AgentKey::CpAsync { thread: t }) else {
            return;
        };
        let base = self.nthreads_cluster();
        let Some(&(_, epoch)) = self.agents.get(agent.saturating_sub(base) as usize) else {
            return;
        };
        if epoch == 0 {
            return;
        }
        let st = self.mbars.entry((rank, off)).or_default();
        st.cur.raise(agent, epoch);
    }

    // ----- wgmma -------------------------------------------------------------

    /// A wgmma instance of warpgroup `group` of the CTA of `rank`, made by
    /// the warp whose lanes are `lanes` at `pc`, reads the 16-byte chunks
    /// `chunks` of that CTA's shared memory.
    #[allow(clippy::too_many_arguments)]
    pub fn wgmma_read(
        &mut self,
        ev: &mut Events,
        instance: u64,
        lanes: &[u32],
        rank: u32,
        group: u32,
        warps: u32,
        pc: u32,
        chunks: &[u32],
    ) {
        let Some(&t0) = lanes.first() else { return };
        if self.on.uninit {
            let mut bad = None;
            for &ch in chunks {
                let mem = Mem::Shared {
                    rank,
                    offset: u64::from(ch) * 16,
                };
                if !self.initialised(t0, mem, 16) {
                    bad = Some(mem);
                    break;
                }
            }
            if let Some(mem) = bad {
                let who = self.tref(t0);
                ev.record_check(pc, who, uninit_key(mem, Kind::WgmmaRead), || {
                    Finding::Uninit {
                        mem,
                        size: 16,
                        kind: Kind::WgmmaRead,
                    }
                });
            }
        }
        if !self.on.races {
            return;
        }
        let agent = self.agent(AgentKey::Wgmma { rank, group });
        let epoch = self.tick(agent);
        self.wg_instances.insert(instance, (agent, epoch));
        self.wg_pending.insert((agent, epoch), warps);
        let Some(th) = self.threads.get(t0 as usize) else {
            return;
        };
        let snap = th.snap(t0);
        let ctx = self.ctx();
        let acc = Acc {
            agent,
            clock: epoch,
            pc,
            write: false,
            atomic: false,
            scope: Scope::Gpu,
            async_proxy: true,
            thread: false,
            rank,
            same_store: false,
            view: View::Snapshot(&snap),
        };
        let mut conflict = None;
        if let Some(Some(sh)) = self.shared.get_mut(rank as usize) {
            for &ch in chunks {
                let c = sh.access(u64::from(ch) * 16, 16, &acc, ctx);
                if conflict.is_none() {
                    conflict = c;
                }
            }
        }
        if let Some(cf) = conflict {
            let ctaid = self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]);
            let mem = Mem::Shared {
                rank,
                offset: cf.granule,
            };
            let actor = || Actor::Wgmma {
                ctaid,
                warpgroup: group,
            };
            self.report_race(ev, t0, pc, mem, Kind::WgmmaRead, 16, false, actor, cf);
        }
    }

    /// `wgmma.wait_group` completed wgmma `instance` for the warp whose
    /// lanes are `lanes`: they acquire its reads.
    pub fn wgmma_done(&mut self, lanes: &[u32], instance: u64) {
        if !self.on.races {
            return;
        }
        let Some(&(agent, epoch)) = self.wg_instances.get(&instance) else {
            return;
        };
        if let Some(left) = self.wg_pending.get_mut(&(agent, epoch)) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.wg_pending.remove(&(agent, epoch));
                self.wg_instances.remove(&instance);
            }
        }
        let mut shared: Option<(VClock, VClock)> = None;
        for &l in lanes {
            let Some(th) = self.threads.get_mut(l as usize) else {
                continue;
            };
            match &shared {
                Some((from, to)) if th.base.same(from) => th.base = to.clone(),
                _ => {
                    let from = th.base.clone();
                    th.base.raise(agent, epoch);
                    shared = Some((from, th.base.clone()));
                }
            }
        }
    }
}

fn mem_offset(m: Mem) -> u64 {
    match m {
        Mem::Shared { offset, .. } | Mem::Global { offset, .. } | Mem::Local { offset } => offset,
    }
}

/// The releases of an atomic location that an acquire by a thread of CTA
/// `rank` at `scope` synchronises with: both scopes must include both
/// threads.
fn visible(loc: &LocSync, rank: u32, scope: Scope) -> SyncClock {
    let mut s = SyncClock::default();
    for (es, er, c) in &loc.entries {
        let same = *er == rank;
        let theirs = *es >= Scope::Cluster || same;
        let mine = scope >= Scope::Cluster || same;
        if theirs && mine {
            s.absorb(c);
        }
    }
    if scope >= Scope::Gpu {
        s.old.union(&loc.old);
    }
    s
}

fn entry(loc: &mut LocSync, scope: Scope, rank: u32) -> Option<&mut SyncClock> {
    let here = |e: &(Scope, u32, SyncClock)| e.0 == scope && e.1 == rank;
    if !loc.entries.iter().any(here) {
        loc.entries.push((scope, rank, SyncClock::default()));
    }
    loc.entries.iter_mut().find(|e| here(e)).map(|e| &mut e.2)
}
