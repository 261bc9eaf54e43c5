//! Synchronising instructions: the dispatcher, CTA barriers (`bar.sync`)
//! and the cluster barrier (`barrier.cluster.arrive/wait`).

use super::sched::After;
use super::state::Block;
use super::Machine;
use crate::sim::decode::ops::SyncOp;

impl Machine<'_> {
    /// Executes the synchronising instruction at thread `t`'s pc.
    pub(super) fn exec_sync(&mut self, t: u32) -> After {
        let Some(pc) = self.cluster.threads.get(t as usize).map(|th| th.pc) else {
            return After::Continue;
        };
        let prog = self.setup.prog;
        let Some(op) = prog
            .code
            .get(pc as usize)
            .and_then(|inst| prog.syncs.get(inst.aux as usize))
        else {
            self.advance(t);
            return After::Continue;
        };
        match op {
            SyncOp::Bar { id, count, wait } => {
                let id = self.reg(t, *id) as u32;
                let count = count.map(|c| self.reg(t, c) as u32);
                self.bar(t, pc, id, count, *wait)
            }
            SyncOp::ClusterArrive => {
                if let Some(san) = &mut self.checks {
                    san.cluster_arrive(t, prog.sems.get(pc as usize).copied().unwrap_or_default());
                }
                self.cluster_arrive(t);
                self.advance(t);
                After::Continue
            }
            SyncOp::ClusterWait => self.cluster_wait(t),
            SyncOp::MbarInit { .. }
            | SyncOp::MbarInval { .. }
            | SyncOp::MbarArrive { .. }
            | SyncOp::MbarExpectTx { .. }
            | SyncOp::MbarCompleteTx { .. }
            | SyncOp::MbarWait { .. }
            | SyncOp::MbarPendingCount { .. } => self.mbarrier_op(t, pc, op),
            SyncOp::BulkToShared { .. }
            | SyncOp::BulkToGlobal { .. }
            | SyncOp::BulkCommit
            | SyncOp::BulkWait { .. } => {
                self.bulk_op(t, pc, op);
                self.advance(t);
                After::Continue
            }
            SyncOp::Vprintf { .. } | SyncOp::AssertFail { .. } => self.printf_op(t, pc, op),
            SyncOp::CpAsync { .. }
            | SyncOp::CpAsyncCommit
            | SyncOp::CpAsyncWait { .. }
            | SyncOp::CpAsyncArrive { .. } => self.cp_async_op(t, pc, op),
            SyncOp::TensorLoad { .. } | SyncOp::TensorStore { .. } => {
                self.tensor_op(t, pc, op);
                self.advance(t);
                After::Continue
            }
            SyncOp::BarWarpSync { .. }
            | SyncOp::Shfl { .. }
            | SyncOp::Vote { .. }
            | SyncOp::Activemask { .. }
            | SyncOp::Elect { .. }
            | SyncOp::Redux { .. }
            | SyncOp::Match { .. }
            | SyncOp::Wgmma(_)
            | SyncOp::WgmmaCommit
            | SyncOp::WgmmaWait { .. }
            | SyncOp::SetMaxNreg { .. }
            | SyncOp::Matrix { .. } => self.warp_op(t, pc, op),
        }
    }

    pub(super) fn advance(&mut self, t: u32) {
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            th.pc += 1;
        }
    }

    fn rank_of(&self, t: u32) -> u32 {
        self.cluster.threads.get(t as usize).map_or(0, |th| th.rank)
    }

    fn bar(&mut self, t: u32, pc: u32, id: u32, count: Option<u32>, wait: bool) -> After {
        let rank = self.rank_of(t);
        let (warp, lane) = self
            .cluster
            .threads
            .get(t as usize)
            .map_or((0, 0), |th| (th.warp, th.lane));
        self.advance(t);
        self.sched.epoch += 1;
        let id = id % 16;
        if let Some(san) = &mut self.checks {
            let aligned = self
                .setup
                .prog
                .sems
                .get(pc as usize)
                .is_some_and(|s| s.aligned);
            san.bar_arrive(t, rank, id, pc, count.is_some(), aligned);
        }
        if let Some(b) = self
            .cluster
            .ctas
            .get_mut(rank as usize)
            .and_then(|c| c.bars.get_mut(id as usize))
        {
            if count.is_some() {
                b.expected = count;
            }
            if !b.sites.contains(&pc) {
                b.sites.push(pc);
            }
            let arrivals = b.partial.entry(warp).or_default();
            let i = match arrivals.iter().position(|(l, _)| l & (1 << lane) == 0) {
                Some(i) => i,
                None => {
                    arrivals.push_back((0, Vec::new()));
                    arrivals.len() - 1
                }
            };
            if let Some(entry) = arrivals.get_mut(i) {
                entry.0 |= 1 << lane;
                if wait {
                    entry.1.push(t);
                    if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                        th.at_bar = true;
                    }
                }
            }
        }
        self.settle_warp(rank, id, warp);
        // Released by the phase its arrival completed (`check_bar`)?
        let still_waiting = self
            .cluster
            .threads
            .get(t as usize)
            .is_some_and(|th| th.at_bar);
        if !wait || !still_waiting {
            return After::Continue;
        }
        After::Blocked(Block::Bar { id })
    }

    /// Marks warp `warp`'s arrival at barrier `id` of CTA `rank` once every
    /// lane of it that has not exited arrived (its oldest incomplete
    /// arrival first, then any later one that is complete too), completing
    /// the phase whenever that was enough. The threads it releases that
    /// are not blocked yet (the one arriving now) are simply no longer
    /// listed as waiting.
    pub(super) fn settle_warp(&mut self, rank: u32, id: u32, warp: u32) {
        let live = self.live_lanes(warp);
        loop {
            let Some(b) = self
                .cluster
                .ctas
                .get_mut(rank as usize)
                .and_then(|c| c.bars.get_mut(id as usize))
            else {
                return;
            };
            let Some(arrivals) = b.partial.get_mut(&warp) else {
                return;
            };
            let complete = arrivals
                .front()
                .is_some_and(|(lanes, _)| lanes & live == live);
            if !complete {
                if arrivals.is_empty() {
                    b.partial.remove(&warp);
                }
                return;
            }
            let Some((_, waiting)) = arrivals.pop_front() else {
                return;
            };
            if arrivals.is_empty() {
                b.partial.remove(&warp);
            }
            // A barrier with a count counts whole warps (the count is a
            // multiple of 32); one without waits for every live thread.
            b.arrived += if b.expected.is_some() {
                32
            } else {
                live.count_ones()
            };
            b.waiters.extend(waiting);
            self.check_bar(rank, id);
        }
    }

    /// Completes CTA barrier `id` of CTA `rank` if enough threads arrived;
    /// wakes its waiters.
    pub(super) fn check_bar(&mut self, rank: u32, id: u32) -> bool {
        let Some(cta) = self.cluster.ctas.get_mut(rank as usize) else {
            return false;
        };
        let live = cta.live;
        let Some(b) = cta.bars.get_mut(id as usize) else {
            return false;
        };
        if b.arrived == 0 || b.arrived < b.expected.unwrap_or(live) {
            return false;
        }
        let waiters = std::mem::take(&mut b.waiters);
        b.arrived = 0;
        b.expected = None;
        b.sites.clear();
        if let Some(san) = &mut self.checks {
            san.bar_complete(&mut self.events, rank, id, &waiters);
        }
        for w in waiters {
            if let Some(th) = self.cluster.threads.get_mut(w as usize) {
                th.at_bar = false;
            }
            // Released before it blocked: the thread arriving now goes on.
            self.wake(w);
        }
        true
    }

    fn cluster_arrive(&mut self, t: u32) {
        let phase = self.cluster.cbar.phase;
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            if th.cluster_arrived == Some(phase) {
                return;
            }
            th.cluster_arrived = Some(phase);
        }
        self.cluster.cbar.arrived += 1;
        self.sched.epoch += 1;
        self.check_cluster_barrier();
    }

    fn cluster_wait(&mut self, t: u32) -> After {
        let arrived = self
            .cluster
            .threads
            .get(t as usize)
            .and_then(|th| th.cluster_arrived);
        if arrived.is_none() {
            // A wait without an arrival arrives first (the ISA requires the
            // arrival; this keeps the run going and deadlocks if others wait).
            self.cluster_arrive(t);
        }
        let arrived = self
            .cluster
            .threads
            .get(t as usize)
            .and_then(|th| th.cluster_arrived);
        self.advance(t);
        match arrived {
            Some(p) if self.cluster.cbar.phase > p => {
                if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                    th.cluster_arrived = None;
                }
                if let Some(san) = &mut self.checks {
                    san.cluster_acquire(t);
                }
                After::Continue
            }
            _ => {
                self.cluster.cbar.waiters.push(t);
                After::Blocked(Block::Cluster)
            }
        }
    }

    /// Completes the cluster barrier's phase once every live thread arrived.
    pub(super) fn check_cluster_barrier(&mut self) {
        let live: u32 = self.cluster.ctas.iter().map(|c| c.live).sum();
        if self.cluster.cbar.arrived == 0 || self.cluster.cbar.arrived < live {
            return;
        }
        self.cluster.cbar.phase += 1;
        self.cluster.cbar.arrived = 0;
        self.sched.epoch += 1;
        if let Some(san) = &mut self.checks {
            san.cluster_complete();
        }
        let waiters = std::mem::take(&mut self.cluster.cbar.waiters);
        for w in waiters {
            if let Some(th) = self.cluster.threads.get_mut(w as usize) {
                th.cluster_arrived = None;
            }
            if let Some(san) = &mut self.checks {
                san.cluster_acquire(w);
            }
            self.wake(w);
        }
    }
}
