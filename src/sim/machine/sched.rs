//! Which thread runs next.
//!
//! In order (the default), a thread runs until it blocks or exits, then the
//! longest-waiting runnable thread runs: every run of a kernel is the same.
//! At random, threads also switch at memory operations (decided in the
//! inner loop), the next thread is drawn at random and bulk copies complete
//! at random points. A bulk copy completes when its issuing thread next
//! blocks (in order) or at a random later point — never at the issue.

use super::events::Issue;
use super::exec::SliceEnd;
use super::snapshot::Snapshot;
use super::state::{Block, ThreadState};
use super::{Machine, Stop};

/// What executing a synchronising instruction did to its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum After {
    /// Go on with the next instruction (the pc was advanced).
    Continue,
    /// The thread blocked.
    Blocked(Block),
    /// A failed `test_wait`: the thread yields and polls again later.
    Poll,
}

impl Machine<'_> {
    pub(super) fn run_cluster(&mut self) {
        loop {
            if self.setup.random && !self.cluster.copies.is_empty() && self.sched.rng.below(4) == 0
            {
                let i = self.sched.rng.below(self.cluster.copies.len() as u64) as usize;
                self.complete_copy_anywhere(i);
            }
            let Some(t) = self.pick() else {
                if !self.cluster.copies.is_empty() {
                    self.complete_all_copies();
                    continue;
                }
                if self
                    .cluster
                    .threads
                    .iter()
                    .all(|t| t.state == ThreadState::Exited)
                {
                    return;
                }
                let snap = Snapshot::take(self, false);
                self.stop = Some(Stop::Deadlock(snap));
                return;
            };
            if self.stats.steps >= self.setup.max_steps {
                self.sched.current = Some(t);
                let snap = Snapshot::take(self, true);
                self.stop = Some(Stop::NoProgress(snap));
                return;
            }
            let budget = self.setup.max_steps - self.stats.steps;
            if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                th.poll_epoch = None;
            }
            match self.run_slice(t, budget) {
                SliceEnd::Budget => {
                    self.sched.current = Some(t);
                }
                SliceEnd::Exit => self.exit(t),
                SliceEnd::Trap => {
                    let pc = self.cluster.threads.get(t as usize).map_or(0, |th| th.pc);
                    self.record(t, pc, Issue::Trap);
                    self.exit(t);
                }
                SliceEnd::Yield => self.yield_thread(t),
                SliceEnd::Sync => {
                    self.stats.steps += 1;
                    if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                        th.executed += 1;
                        if let Some(c) = self.stats.counts.get_mut(th.pc as usize) {
                            *c += 1;
                        }
                    }
                    match self.exec_sync(t) {
                        After::Continue => {
                            self.sched.current = Some(t);
                            if self.setup.random && self.sched.rng.below(8) == 0 {
                                self.yield_thread(t);
                            }
                        }
                        After::Blocked(b) => self.block(t, b),
                        After::Poll => {
                            let epoch = self.sched.epoch;
                            if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                                th.poll_epoch = Some(epoch);
                            }
                            self.yield_thread(t);
                        }
                    }
                }
            }
        }
    }

    /// The next thread to run, or `None` when no thread can make progress.
    fn pick(&mut self) -> Option<u32> {
        if let Some(c) = self.sched.current.take() {
            if self.state(c) == ThreadState::Runnable {
                return Some(c);
            }
        }
        loop {
            let t = if self.setup.random {
                let n = self.sched.queue.len() as u64;
                if n == 0 {
                    return None;
                }
                let i = self.sched.rng.below(n) as usize;
                self.sched.queue.swap_remove_back(i)?
            } else {
                self.sched.queue.pop_front()?
            };
            if self.state(t) != ThreadState::Runnable {
                continue;
            }
            let stale = self
                .cluster
                .threads
                .get(t as usize)
                .is_some_and(|th| th.poll_epoch == Some(self.sched.epoch));
            if stale && self.only_stale_pollers() {
                // Every runnable thread polls a barrier that nothing can
                // change any more: no progress is possible.
                self.sched.queue.push_back(t);
                return None;
            }
            return Some(t);
        }
    }

    fn only_stale_pollers(&self) -> bool {
        self.sched.queue.iter().all(|&q| {
            self.cluster.threads.get(q as usize).is_some_and(|th| {
                th.state != ThreadState::Runnable || th.poll_epoch == Some(self.sched.epoch)
            })
        })
    }

    pub fn state(&self, t: u32) -> ThreadState {
        self.cluster
            .threads
            .get(t as usize)
            .map_or(ThreadState::Exited, |th| th.state)
    }

    fn yield_thread(&mut self, t: u32) {
        if !self.setup.random {
            self.complete_copies_of(t);
        }
        self.sched.current = None;
        self.sched.queue.push_back(t);
    }

    pub(super) fn block(&mut self, t: u32, b: Block) {
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            th.state = ThreadState::Blocked(b);
        }
        self.sched.current = None;
        if !self.setup.random {
            self.complete_copies_of(t);
        }
    }

    /// Makes a blocked thread runnable again.
    pub(super) fn wake(&mut self, t: u32) {
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            if matches!(th.state, ThreadState::Blocked(_)) {
                th.state = ThreadState::Runnable;
                self.sched.queue.push_back(t);
            }
        }
    }

    pub(super) fn exit(&mut self, t: u32) {
        let Some(th) = self.cluster.threads.get_mut(t as usize) else {
            return;
        };
        if th.state == ThreadState::Exited {
            return;
        }
        th.state = ThreadState::Exited;
        th.exit_pc = th.pc;
        let rank = th.rank;
        if th.cluster_arrived == Some(self.cluster.cbar.phase) {
            // An exited thread no longer counts, arrived or not.
            self.cluster.cbar.arrived = self.cluster.cbar.arrived.saturating_sub(1);
        }
        self.sched.current = None;
        self.sched.epoch += 1;
        self.complete_copies_of(t);
        if let Some(cta) = self.cluster.ctas.get_mut(rank as usize) {
            cta.live = cta.live.saturating_sub(1);
        }
        // Barriers that counted on this thread may complete without it:
        // its warp's other lanes may now have all arrived.
        let warp = self.cluster.threads.get(t as usize).map_or(0, |th| th.warp);
        for id in 0..16 {
            self.settle_warp(rank, id, warp);
            self.check_bar(rank, id);
        }
        self.check_cluster_barrier();
    }
}
