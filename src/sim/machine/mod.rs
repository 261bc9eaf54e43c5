//! The machine that runs a decoded kernel: every thread of every CTA of a
//! cluster, clusters one after another.
//!
//! - `exec`: the interpreter's inner loop (one thread until it reaches a
//!   synchronising instruction, exits or runs out of steps);
//! - `sync`: CTA and cluster barriers; `mbarrier`: mbarrier objects;
//!   `warp`: warp-synchronous rendezvous; `bulk`: bulk copies in flight;
//! - `sched`: which thread runs next, blocking and waking;
//! - `memory`, `arith`, `farith`, `float`: address spaces and value semantics;
//! - `events`, `snapshot`: what the reports are made of.

pub mod arith;
mod bulk;
pub mod events;
mod exec;
pub mod farith;
pub mod float;
mod mbarrier;
pub mod memory;
mod sched;
pub mod snapshot;
pub mod state;
mod sync;
mod warp;

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

pub struct Machine<'p> {
    pub prog: &'p Program,
    pub kernel: &'p Kernel,
    pub random: bool,
    pub max_steps: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub cluster: [u32; 3],
    pub allocs: Vec<Alloc>,
    pub params: Vec<u8>,
    pub ext: Extents,
    /// The launch's dynamic shared memory per CTA (`%dynamic_smem_size`).
    pub dynamic_shared: u32,
    pub stride: usize,
    pub clusterid: [u32; 3],
    pub ctas: Vec<Cta>,
    pub threads: Vec<Thread>,
    pub regs: Vec<u64>,
    pub warps: Vec<Warp>,
    pub queue: VecDeque<u32>,
    pub current: Option<u32>,
    pub copies: Vec<Copy>,
    pub next_copy: u64,
    pub cbar: ClusterBarrier,
    /// Bumped by every synchronisation event; a poller that failed at the
    /// current epoch cannot succeed before something else happens.
    pub epoch: u64,
    pub rng: Rng,
    pub events: Events,
    /// Executions per instruction.
    pub counts: Vec<u64>,
    /// Generic accesses by the space they resolved to (global, shared, local, param).
    pub generic: [u64; 4],
    pub steps: u64,
    /// Clusters run to completion.
    pub clusters_done: u64,
    pub longest: Option<(u64, ThreadRef)>,
    pub blocking_waits: u64,
    pub stop: Option<Stop>,
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
        Machine {
            prog,
            kernel,
            random,
            max_steps: opts.max_steps,
            grid,
            block,
            cluster,
            ext: Extents {
                shared: u64::from(shared.size),
                local: u64::from(prog.local_size),
                fparam: u64::from(prog.fparam_size),
                param: params.len() as u64,
                cluster_size: cluster[0] * cluster[1] * cluster[2],
                shared_owner: shared.owner.clone(),
                local_owner: prog.local_owner.clone(),
            },
            dynamic_shared: shared.dynamic.map_or(0, |d| d.bytes),
            allocs,
            params,
            stride: prog.template.len(),
            clusterid: [0; 3],
            ctas: Vec::new(),
            threads: Vec::new(),
            regs: Vec::new(),
            warps: Vec::new(),
            queue: VecDeque::new(),
            current: None,
            copies: Vec::new(),
            next_copy: 0,
            cbar: ClusterBarrier::default(),
            epoch: 0,
            rng: Rng::new(seed),
            events: Events::default(),
            counts: vec![0; prog.code.len()],
            generic: [0; 4],
            steps: 0,
            clusters_done: 0,
            longest: None,
            blocking_waits: 0,
            stop: None,
        }
    }

    /// Runs every cluster of the grid, stopping at the first deadlock or
    /// when `max_steps` is exhausted.
    pub fn run(&mut self) {
        let nclusters = [
            self.grid[0] / self.cluster[0].max(1),
            self.grid[1] / self.cluster[1].max(1),
            self.grid[2] / self.cluster[2].max(1),
        ];
        for z in 0..nclusters[2] {
            for y in 0..nclusters[1] {
                for x in 0..nclusters[0] {
                    self.setup_cluster([x, y, z], nclusters);
                    self.run_cluster();
                    self.finish_cluster();
                    if self.stop.is_some() {
                        return;
                    }
                    self.clusters_done += 1;
                }
            }
        }
    }

    fn setup_cluster(&mut self, clusterid: [u32; 3], nclusters: [u32; 3]) {
        let nthreads = self.block[0] * self.block[1] * self.block[2];
        let csize = self.ext.cluster_size;
        let explicit = self.kernel.attrs.explicitcluster
            || self.kernel.attrs.reqnctapercluster.is_some()
            || csize > 1;
        self.clusterid = clusterid;
        self.ctas.clear();
        self.threads.clear();
        self.warps.clear();
        self.queue.clear();
        self.current = None;
        self.copies.clear();
        self.cbar = ClusterBarrier::default();
        let total = (csize * nthreads) as usize;
        self.regs.clear();
        self.regs.reserve(total * self.stride);
        let warps_per_cta = nthreads.div_ceil(32);
        for rank in 0..csize {
            let cc = [
                rank % self.cluster[0],
                (rank / self.cluster[0]) % self.cluster[1],
                rank / (self.cluster[0] * self.cluster[1]),
            ];
            let ctaid = [
                clusterid[0] * self.cluster[0] + cc[0],
                clusterid[1] * self.cluster[1] + cc[1],
                clusterid[2] * self.cluster[2] + cc[2],
            ];
            let first = rank * nthreads;
            self.ctas.push(Cta {
                shared: vec![0; self.ext.shared as usize],
                ctaid,
                live: nthreads,
                bars: vec![NamedBar::default(); 16],
                mbars: Default::default(),
            });
            for w in 0..warps_per_cta {
                self.warps.push(Warp {
                    first_thread: first + w * 32,
                    lanes: (nthreads - w * 32).min(32),
                    pending: Vec::new(),
                });
            }
            for tid in 0..nthreads {
                let ids = ThreadIds {
                    tid: [
                        tid % self.block[0],
                        (tid / self.block[0]) % self.block[1],
                        tid / (self.block[0] * self.block[1]),
                    ],
                    ntid: self.block,
                    ctaid,
                    nctaid: self.grid,
                    cluster_ctaid: cc,
                    cluster_nctaid: self.cluster,
                    clusterid,
                    nclusterid: nclusters,
                    explicit_cluster: explicit,
                    smem: self.prog.shared_size,
                    dynamic_smem: self.dynamic_shared,
                };
                let at = self.regs.len();
                self.regs.extend_from_slice(&self.prog.template);
                if let Some(slice) = self.regs.get_mut(at..) {
                    specials::fill(slice, &ids);
                }
                let index = self.threads.len() as u32;
                self.threads.push(Thread {
                    pc: self
                        .prog
                        .funcs
                        .get(self.kernel.func as usize)
                        .map_or(0, |f| f.entry),
                    state: ThreadState::Runnable,
                    rank,
                    tid,
                    lane: tid % 32,
                    warp: rank * warps_per_cta + tid / 32,
                    local: vec![0; self.prog.local_size as usize],
                    fparam: vec![0; self.prog.fparam_size as usize],
                    calls: Vec::new(),
                    executed: 0,
                    exit_pc: 0,
                    cluster_arrived: None,
                    rewait: false,
                    behind_reported: false,
                    poll_epoch: None,
                    poll: None,
                    poll_seen: None,
                    bulk_open: Vec::new(),
                    bulk_groups: VecDeque::new(),
                });
                self.queue.push_back(index);
            }
        }
    }

    fn finish_cluster(&mut self) {
        for t in &self.threads {
            let r = self.thread_ref(t);
            if self.longest.is_none_or(|(n, _)| t.executed > n) {
                self.longest = Some((t.executed, r));
            }
        }
    }

    pub fn thread_ref(&self, t: &Thread) -> ThreadRef {
        ThreadRef {
            ctaid: self.ctas.get(t.rank as usize).map_or([0; 3], |c| c.ctaid),
            tid: t.tid,
        }
    }

    pub fn tref(&self, t: u32) -> ThreadRef {
        match self.threads.get(t as usize) {
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
        self.regs
            .get(t as usize * self.stride + slot as usize)
            .copied()
            .unwrap_or(0)
    }

    pub fn set_reg(&mut self, t: u32, slot: u32, value: u64) {
        if slot == crate::sim::decode::ops::NO_DEST {
            return;
        }
        let i = t as usize * self.stride + slot as usize;
        if let Some(r) = self.regs.get_mut(i) {
            *r = value;
        }
    }
}
