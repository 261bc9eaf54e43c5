//! The machine that runs a decoded kernel: every thread of every CTA of a
//! cluster, clusters one after another.
//!
//! - `exec`: the interpreter's inner loop (one thread until it reaches a
//!   synchronising instruction, exits or runs out of steps);
//! - `sync`: CTA and cluster barriers; `mbarrier`: mbarrier objects;
//!   `warp`: warp-synchronous rendezvous; `bulk`: bulk copies in flight;
//! - `sched`: which thread runs next, blocking and waking;
//! - `memory`, `arith`, `farith`, `float`: address spaces and value semantics;
//! - `events`, `snapshot`: what the reports are made of;
//! - `sanitizer`: the run-time checks (races, uninitialised reads,
//!   transaction overflow, barrier divergence), called at the points where
//!   memory is accessed or threads synchronise.

pub mod arith;
mod bulk;
mod cp_async;
pub mod events;
mod exec;
pub mod farith;
mod fence;
pub mod float;
pub mod jobs;
mod matching;
mod matrix;
mod mbarrier;
pub mod memory;
pub mod printf;
pub mod sanitizer;
mod sched;
pub mod snapshot;
pub mod state;
mod sync;
mod tensor;
mod warp;
pub(crate) mod wgmma;

use super::decode::specials::{self, ThreadIds};
use super::decode::{Kernel, Program};
use super::{Schedule, SimOptions};
use events::{Events, Issue, ThreadRef};
use memory::{Alloc, Extents};
use state::*;
use std::collections::VecDeque;

/// A small deterministic generator (SplitMix64) for `Schedule::Random`.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The generator of group `seq` of a run with seed `seed`: the seed's
    /// own for the first group (a launch of one group draws as it did
    /// before groups had their own), one drawn from both for the others.
    pub fn for_group(seed: u64, seq: u32) -> Rng {
        if seq == 0 {
            return Rng::new(seed);
        }
        let mut mix = Rng::new(seed ^ u64::from(seq).wrapping_mul(0xd1b5_4a32_d192_ed03));
        Rng::new(mix.next_u64())
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// How a run ended early.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// Every remaining thread is blocked.
    Deadlock(snapshot::Snapshot),
    /// `max_steps` were executed.
    NoProgress(snapshot::Snapshot),
}

/// The machine, in parts (as Miri's machine is): what is being run, the
/// memory that outlives a cluster, the cluster being run, the scheduler,
/// what the reports are made of and the statistics. Each part is owned by
/// the files that change it (`exec` the registers and memory, `sched` the
/// scheduler, `sync`/`mbarrier`/`warp`/`bulk` the cluster's
/// synchronisation state).
pub struct Machine<'p> {
    pub setup: Setup<'p>,
    pub mem: Memory,
    pub cluster: Cluster,
    pub sched: Sched,
    pub events: Events,
    pub stats: Counters,
    /// How the run ended early, if it did.
    pub stop: Option<Stop>,
    /// The run-time checks, when any is on.
    pub checks: Option<Box<sanitizer::Sanitizer>>,
    /// The registers the program's wgmma instructions use, and which of
    /// them each instruction accesses (the `wgmma.fence` rule, S0028).
    pub wgregs: fence::WgRegs,
}

/// What is run, and how: fixed for the whole run.
#[derive(Clone)]
pub struct Setup<'p> {
    pub prog: &'p Program,
    pub kernel: &'p Kernel,
    /// `Schedule::Random`, and its seed.
    pub random: bool,
    pub seed: u64,
    /// Groups run at once (`SimOptions::jobs`, resolved).
    pub jobs: usize,
    pub max_steps: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
    /// The CTAs resident and run together: the cluster, or the whole
    /// grid in a cooperative launch ([`Machine::cooperative`]). The
    /// machine's "cluster" state holds one such group.
    pub group: [u32; 3],
    /// The launch's dynamic shared memory per CTA (`%dynamic_smem_size`).
    pub dynamic_shared: u32,
}

impl Setup<'_> {
    /// The groups of the grid along each dimension: clusters, or the one
    /// group of a cooperative launch.
    pub fn ngroups(&self) -> [u32; 3] {
        let mut n = [0; 3];
        for ((n, g), c) in n.iter_mut().zip(self.grid).zip(self.group) {
            *n = g / c.max(1);
        }
        n
    }
}

/// The memory every cluster shares: global allocations (module variables,
/// then the array arguments), the kernel's parameters, and the extent of
/// each space.
pub struct Memory {
    pub allocs: Vec<Alloc>,
    pub params: Vec<u8>,
    pub ext: Extents,
    /// The launch's tensor maps (`sim::tmap`).
    pub maps: Vec<crate::sim::tmap::MapRecord>,
    /// The launch's printf buffer.
    pub printf: printf::Fifo,
    /// The global address of a cooperative launch's grid workspace
    /// (`%envreg1`/`%envreg2`), 0 otherwise.
    pub grid_workspace: u64,
    /// Under `--jobs`, the granules of global memory the group being run
    /// touches (`jobs`).
    pub track: Option<Box<jobs::Track>>,
}

/// The cluster being run: its CTAs, threads, registers and warps, the bulk
/// copies in flight and the cluster barrier. Set up afresh per cluster.
pub struct Cluster {
    /// `%clusterid`.
    pub id: [u32; 3],
    pub ctas: Vec<Cta>,
    pub threads: Vec<Thread>,
    pub regs: Registers,
    pub warps: Vec<Warp>,
    /// Oldest first; at most [`bulk::MAX_IN_FLIGHT`].
    pub copies: VecDeque<Copy>,
    pub cbar: ClusterBarrier,
    /// The wgmma operations in flight.
    pub wg: wgmma::WgState,
    /// The threads' Ampere `cp.async` copies in flight.
    pub cp: cp_async::Pending,
    /// Per thread, the wgmma registers accessed since its last
    /// `wgmma.fence`.
    pub fence: fence::Touch,
}

/// Every thread's registers, `stride` slots each, thread after thread.
pub struct Registers {
    pub values: Vec<u64>,
    /// Slots per thread (the program's register template).
    pub stride: usize,
}

/// Which thread runs next.
pub struct Sched {
    /// Runnable threads, in the order they became runnable.
    pub queue: VecDeque<u32>,
    /// The thread running, when it may go on.
    pub current: Option<u32>,
    /// Bumped by every synchronisation event; a poller that failed at the
    /// current epoch cannot succeed before something else happens.
    pub epoch: u64,
    pub rng: Rng,
}

/// The statistics of the run (`sim::Stats`).
pub struct Counters {
    /// Executions per instruction.
    pub counts: Vec<u64>,
    /// Generic accesses by the space they resolved to (global, shared, local, param).
    pub generic: [u64; 4],
    pub steps: u64,
    /// Clusters run to completion.
    pub clusters_done: u64,
    pub longest: Option<(u64, ThreadRef)>,
    pub blocking_waits: u64,
    /// Under `--jobs`: groups whose speculative run was merged, and groups
    /// run on the machine itself (again, or after the rest of the launch
    /// went serial).
    pub groups_parallel: u64,
    pub groups_serial: u64,
}

impl<'p> Machine<'p> {
    pub(crate) fn new(
        prog: &'p Program,
        kernel: &'p Kernel,
        opts: &SimOptions,
        shape: ([u32; 3], [u32; 3], [u32; 3]),
        allocs: Vec<Alloc>,
        params: Vec<u8>,
        shared: &crate::sim::shared::SharedMap,
    ) -> Machine<'p> {
        let (grid, block, cluster) = shape;
        let (random, seed) = match opts.schedule {
            Schedule::InOrder => (false, 0),
            Schedule::Random(s) => (true, s),
        };
        let checks = opts.checks.any().then(|| {
            let lens: Vec<u64> = allocs.iter().map(|a| a.data.len() as u64).collect();
            // The reserved shared memory (where cooperative groups keep
            // their multi-warp barriers and scratch) comes initialised: on
            // sm_80+ CUDA's headers use it without writing it first.
            let preset: Vec<(u64, u64)> = shared
                .vars
                .iter()
                .filter(|v| v.name == crate::sim::decode::specials::RESERVED_NAME)
                .map(|v| (u64::from(v.offset), u64::from(v.size)))
                .collect();
            let mut san = Box::new(sanitizer::Sanitizer::new(
                opts.checks,
                sanitizer::Shape {
                    grid,
                    block,
                    cluster,
                },
                &lens,
                u64::from(shared.size),
                u64::from(prog.local_size),
            ));
            san.preset_shared(preset);
            san
        });
        Machine {
            setup: Setup {
                prog,
                kernel,
                random,
                seed,
                jobs: opts.jobs(),
                max_steps: opts.max_steps,
                grid,
                block,
                cluster,
                group: cluster,
                dynamic_shared: shared.dynamic.map_or(0, |d| d.bytes),
            },
            mem: Memory {
                ext: Extents {
                    shared: u64::from(shared.size),
                    local: u64::from(prog.local_size),
                    fparam: u64::from(prog.fparam_size),
                    param: params.len() as u64,
                    cluster_size: cluster[0] * cluster[1] * cluster[2],
                    shared_owner: shared.owner.clone(),
                    local_owner: prog.local_owner.clone(),
                },
                allocs,
                params,
                maps: Vec::new(),
                printf: Default::default(),
                grid_workspace: 0,
                track: None,
            },
            cluster: Cluster::with_stride(prog.template.len()),
            sched: Sched {
                queue: VecDeque::new(),
                current: None,
                epoch: 0,
                rng: Rng::new(seed),
            },
            events: Events::default(),
            stats: Counters::new(prog.code.len()),
            stop: None,
            checks,
            wgregs: fence::WgRegs::of(prog),
        }
    }

    /// A cooperative launch (of CTAs without clusters): the whole grid is
    /// one group, resident at once, and `workspace` is the global address
    /// of cooperative groups' grid workspace (`%envreg1`/`%envreg2`).
    pub fn cooperative(&mut self, workspace: u64) {
        self.setup.group = self.setup.grid;
        self.mem.ext.cluster_size = self.setup.grid.iter().product();
        self.mem.grid_workspace = workspace;
        if let Some(san) = &mut self.checks {
            san.set_group_size(self.mem.ext.cluster_size);
        }
    }

    /// Runs every group (cluster) of the grid, stopping at the first
    /// deadlock or when `max_steps` is exhausted: one after another, or
    /// several at once under `--jobs` (`jobs`), with the same outcome.
    pub fn run(&mut self) {
        let ngroups = self.setup.ngroups();
        let total = u64::from(ngroups[0]) * u64::from(ngroups[1]) * u64::from(ngroups[2]);
        let jobs = self
            .setup
            .jobs
            .min(usize::try_from(total).unwrap_or(usize::MAX));
        let mut next = 0;
        if jobs > 1 {
            // The first group runs on the machine itself, first as in the
            // serial order: its steps estimate the work the workers would
            // share, which decides how many are worth their copies of
            // memory (`Machine::worthwhile`).
            let steps = self.stats.steps;
            if !self.run_serial(ngroups, 0, 1, true) {
                return;
            }
            next = 1;
            let per_group = self.stats.steps - steps;
            let jobs = self.worthwhile(self.affordable(jobs), per_group, total - 1);
            if jobs > 1 {
                self.run_parallel(ngroups, jobs, next);
                return;
            }
        }
        self.run_serial(ngroups, next, total, jobs > 1);
    }

    /// Runs the groups `from..to` of the serial order (x fastest) on the
    /// machine itself, `counted` in `JobStats::serial` (under `--jobs`);
    /// false when the run stopped.
    fn run_serial(&mut self, ngroups: [u32; 3], from: u64, to: u64, counted: bool) -> bool {
        for seq in from..to {
            if counted {
                self.stats.groups_serial += 1;
            }
            self.run_group(jobs::group_id(ngroups, seq));
            self.finish_cluster();
            if self.stop.is_some() {
                return false;
            }
            self.stats.clusters_done += 1;
        }
        true
    }

    /// Sets up and runs group `groupid` (not yet finished).
    fn run_group(&mut self, groupid: [u32; 3]) {
        self.setup_cluster(groupid);
        self.run_cluster();
    }

    /// Sets up the CTAs of group `groupid` (a cluster, or the grid).
    fn setup_cluster(&mut self, groupid: [u32; 3]) {
        let Setup {
            prog,
            kernel,
            grid,
            block,
            cluster: shape,
            group,
            dynamic_shared,
            ..
        } = self.setup;
        let nthreads = block[0] * block[1] * block[2];
        let csize = self.mem.ext.cluster_size;
        let nclusters = [
            grid[0] / shape[0].max(1),
            grid[1] / shape[1].max(1),
            grid[2] / shape[2].max(1),
        ];
        let explicit = kernel.attrs.explicitcluster
            || kernel.attrs.reqnctapercluster.is_some()
            || shape.iter().product::<u32>() > 1;
        let entry = prog.funcs.get(kernel.func as usize).map_or(0, |f| f.entry);
        self.sched.queue.clear();
        self.sched.current = None;
        // Nothing of a group's progress epochs outlives it.
        self.sched.epoch = 0;
        let c = &mut self.cluster;
        c.id = groupid;
        c.ctas.clear();
        c.threads.clear();
        c.warps.clear();
        c.copies.clear();
        c.cbar = ClusterBarrier::default();
        c.wg = Default::default();
        c.cp = Default::default();
        let total = (csize * nthreads) as usize;
        c.fence = fence::Touch::new(total, self.wgregs.count);
        c.regs.values.clear();
        c.regs.values.reserve(total * c.regs.stride);
        let warps_per_cta = nthreads.div_ceil(32);
        for rank in 0..csize {
            let at = [
                rank % group[0],
                (rank / group[0]) % group[1],
                rank / (group[0] * group[1]),
            ];
            let ctaid = [
                groupid[0] * group[0] + at[0],
                groupid[1] * group[1] + at[1],
                groupid[2] * group[2] + at[2],
            ];
            // The CTA's place in its cluster (the group, unless the launch
            // is cooperative).
            let cc = [
                ctaid[0] % shape[0].max(1),
                ctaid[1] % shape[1].max(1),
                ctaid[2] % shape[2].max(1),
            ];
            let clusterid = [
                ctaid[0] / shape[0].max(1),
                ctaid[1] / shape[1].max(1),
                ctaid[2] / shape[2].max(1),
            ];
            let first = rank * nthreads;
            c.ctas.push(Cta {
                shared: vec![0; self.mem.ext.shared as usize],
                ctaid,
                live: nthreads,
                bars: vec![NamedBar::default(); 16],
                mbars: Default::default(),
                watch: Default::default(),
                pool: self.setup.pool(nthreads),
                wg_seq: Default::default(),
                setmax_seq: Default::default(),
            });
            for w in 0..warps_per_cta {
                c.warps.push(Warp {
                    first_thread: first + w * 32,
                    lanes: (nthreads - w * 32).min(32),
                    pending: Vec::new(),
                    exited: 0,
                    wg: state::WarpWg {
                        regs: self.setup.pool(nthreads).entry,
                        ..Default::default()
                    },
                });
            }
            for tid in 0..nthreads {
                let ids = ThreadIds {
                    tid: [
                        tid % block[0],
                        (tid / block[0]) % block[1],
                        tid / (block[0] * block[1]),
                    ],
                    ntid: block,
                    ctaid,
                    nctaid: grid,
                    cluster_ctaid: cc,
                    cluster_nctaid: shape,
                    clusterid,
                    nclusterid: nclusters,
                    explicit_cluster: explicit,
                    smem: prog.gpu_static_shared,
                    dynamic_smem: dynamic_shared,
                    grid_workspace: self.mem.grid_workspace,
                };
                let at = c.regs.values.len();
                c.regs.values.extend_from_slice(&prog.template);
                if let Some(slice) = c.regs.values.get_mut(at..) {
                    specials::fill(slice, &ids);
                }
                let index = c.threads.len() as u32;
                c.threads.push(Thread {
                    pc: entry,
                    state: ThreadState::Runnable,
                    rank,
                    tid,
                    lane: tid % 32,
                    warp: rank * warps_per_cta + tid / 32,
                    local: vec![0; prog.local_size as usize],
                    fparam: vec![0; prog.fparam_size as usize],
                    calls: Vec::new(),
                    executed: 0,
                    exit_pc: 0,
                    cluster_arrived: None,
                    rewait: false,
                    behind_reported: false,
                    poll_epoch: None,
                    poll: None,
                    poll_seen: None,
                    bulk_commits: 0,
                    last_jump: u32::MAX,
                    at_bar: false,
                });
                self.sched.queue.push_back(index);
            }
        }
        // The group's place in the grid's order of groups (clusters, or
        // the one group of a cooperative launch).
        let ngroups = self.setup.ngroups();
        let seq = groupid[0] + ngroups[0] * (groupid[1] + ngroups[1] * groupid[2]);
        if let Some(san) = &mut self.checks {
            san.begin_cluster(seq, c.ctas.iter().map(|cta| cta.ctaid).collect());
        }
        // Each group's random schedule is drawn from its own generator, so
        // that groups run in any order (`--jobs`) draw the same.
        self.sched.rng = Rng::for_group(self.setup.seed, seq);
    }

    fn finish_cluster(&mut self) {
        if let Some(san) = &mut self.checks {
            san.end_cluster();
        }
        self.events.end_cluster();
        for t in &self.cluster.threads {
            let r = self.thread_ref(t);
            if self.stats.longest.is_none_or(|(n, _)| t.executed > n) {
                self.stats.longest = Some((t.executed, r));
            }
        }
    }

    pub fn thread_ref(&self, t: &Thread) -> ThreadRef {
        ThreadRef {
            ctaid: self
                .cluster
                .ctas
                .get(t.rank as usize)
                .map_or([0; 3], |c| c.ctaid),
            tid: t.tid,
        }
    }

    pub fn tref(&self, t: u32) -> ThreadRef {
        match self.cluster.threads.get(t as usize) {
            Some(th) => self.thread_ref(th),
            None => ThreadRef {
                ctaid: [0; 3],
                tid: t,
            },
        }
    }

    pub fn record(&mut self, t: u32, pc: u32, issue: Issue) {
        let r = self.tref(t);
        self.events.record(pc, r, issue);
    }

    pub fn reg(&self, t: u32, slot: u32) -> u64 {
        self.cluster.regs.get(t, slot)
    }

    pub fn set_reg(&mut self, t: u32, slot: u32, value: u64) {
        self.cluster.regs.set(t, slot, value);
    }
}

impl Counters {
    pub fn new(instructions: usize) -> Counters {
        Counters {
            counts: vec![0; instructions],
            generic: [0; 4],
            steps: 0,
            clusters_done: 0,
            longest: None,
            blocking_waits: 0,
            groups_parallel: 0,
            groups_serial: 0,
        }
    }

    /// Adds the counters of a group run after the ones counted (a longest
    /// thread replaces the one kept only when it is longer, as in the
    /// serial run).
    pub fn merge(&mut self, later: &Counters) {
        for (c, l) in self.counts.iter_mut().zip(&later.counts) {
            *c += l;
        }
        for (g, l) in self.generic.iter_mut().zip(later.generic) {
            *g += l;
        }
        self.steps += later.steps;
        self.clusters_done += later.clusters_done;
        self.blocking_waits += later.blocking_waits;
        self.groups_parallel += later.groups_parallel;
        self.groups_serial += later.groups_serial;
        if let Some((n, r)) = later.longest {
            if self.longest.is_none_or(|(m, _)| n > m) {
                self.longest = Some((n, r));
            }
        }
    }
}

impl Cluster {
    /// A cluster with nothing set up, with this one's register stride.
    pub fn empty(&self) -> Cluster {
        Cluster::with_stride(self.regs.stride)
    }

    /// A cluster with nothing set up, registers `stride` slots a thread.
    pub fn with_stride(stride: usize) -> Cluster {
        Cluster {
            id: [0; 3],
            ctas: Vec::new(),
            threads: Vec::new(),
            regs: Registers {
                values: Vec::new(),
                stride,
            },
            warps: Vec::new(),
            copies: VecDeque::new(),
            cbar: ClusterBarrier::default(),
            wg: Default::default(),
            cp: Default::default(),
            fence: Default::default(),
        }
    }

    /// Whether the CTA of `rank`, a peer of the CTA of `own`, has exited
    /// (its shared memory is kept, but an access to it is S0010).
    pub fn exited_peer(&self, rank: u32, own: u32) -> bool {
        rank != own && self.ctas.get(rank as usize).is_some_and(|c| c.exited())
    }
}

impl Registers {
    /// Register `slot` of thread `t`.
    pub fn get(&self, t: u32, slot: u32) -> u64 {
        self.values
            .get(t as usize * self.stride + slot as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Sets register `slot` of thread `t` (not the sink slot `NO_DEST`).
    pub fn set(&mut self, t: u32, slot: u32, value: u64) {
        if slot == crate::sim::decode::ops::NO_DEST {
            return;
        }
        let i = t as usize * self.stride + slot as usize;
        if let Some(r) = self.values.get_mut(i) {
            *r = value;
        }
    }

    /// The registers of thread `t`.
    pub fn of_mut(&mut self, t: u32) -> Option<&mut [u64]> {
        let base = t as usize * self.stride;
        self.values.get_mut(base..base + self.stride)
    }
}
