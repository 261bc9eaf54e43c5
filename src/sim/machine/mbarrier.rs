//! mbarrier objects: `init`, `arrive` (with count, `arrive_drop`,
//! `expect_tx`), `expect_tx`, `complete_tx`, `test_wait`/`try_wait` by
//! parity or state token — and the protocol violations the ISA makes
//! undefined, reported as they happen.
//!
//! A phase completes when its pending arrival count and its transaction
//! count are both zero; the phase count then advances, the arrival count
//! reloads and every waiter re-checks. A parity wait for `P` succeeds when
//! the current phase's parity differs from `P`; a token wait when the phase
//! of the token (the phase count at the arrival) has completed.

use super::events::{AccessKind, BarrierRef, Issue};
use super::memory::{self, Fault};
use super::sched::After;
use super::state::{Block, MBarrier};
use super::Machine;
use crate::sim::decode::ops::{Addr, Space, SyncOp};

/// The largest transaction count magnitude (2^20 - 1).
const TX_LIMIT: i64 = (1 << 20) - 1;
/// The largest arrival count of `init` (2^20 - 1).
const COUNT_LIMIT: u32 = (1 << 20) - 1;

impl Machine<'_> {
    /// The CTA rank and shared offset of the mbarrier an operand names, or
    /// `None` (recorded as a fault) when it is not an aligned object in
    /// shared memory.
    pub(super) fn mbar_at(&mut self, t: u32, pc: u32, addr: &Addr) -> Option<(u32, u32)> {
        let value = self.reg(t, addr.base).wrapping_add(addr.off as u64);
        self.mbar_addr(t, pc, value, addr.space)
    }

    pub(super) fn mbar_addr(
        &mut self,
        t: u32,
        pc: u32,
        value: u64,
        space: Space,
    ) -> Option<(u32, u32)> {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let space = match space {
            Space::Generic if memory::generic_space(value) != Space::SharedCluster => {
                self.record(
                    t,
                    pc,
                    Issue::Access {
                        fault: Fault::OutOfBounds {
                            space: memory::generic_space(value),
                            addr: value,
                            target: None,
                        },
                        kind: AccessKind::Barrier,
                        size: 8,
                    },
                );
                return None;
            }
            Space::Generic => Space::SharedCluster,
            s => s,
        };
        match memory::resolve(space, value, 8, 8, own, &self.mem.ext, &self.mem.allocs) {
            Ok(p) => {
                let memory::Target::Shared(rank) = p.target else {
                    return None;
                };
                if self.cluster.exited_peer(rank, own) {
                    self.record(
                        t,
                        pc,
                        Issue::Access {
                            fault: Fault::ExitedPeer {
                                rank,
                                offset: p.offset,
                            },
                            kind: AccessKind::Barrier,
                            size: 8,
                        },
                    );
                }
                Some((rank, p.offset as u32))
            }
            Err(fault) => {
                self.record(
                    t,
                    pc,
                    Issue::Access {
                        fault,
                        kind: AccessKind::Barrier,
                        size: 8,
                    },
                );
                None
            }
        }
    }

    pub(super) fn bref(&self, rank: u32, offset: u32) -> BarrierRef {
        BarrierRef {
            ctaid: self
                .cluster
                .ctas
                .get(rank as usize)
                .map_or([0; 3], |c| c.ctaid),
            offset,
        }
    }

    pub(super) fn mbar(&mut self, rank: u32, offset: u32) -> Option<&mut MBarrier> {
        self.cluster
            .ctas
            .get_mut(rank as usize)?
            .mbars
            .get_mut(&offset)
    }

    pub(super) fn mbarrier_op(&mut self, t: u32, pc: u32, op: &SyncOp) -> After {
        match op {
            SyncOp::MbarWait {
                addr,
                arg,
                parity,
                blocking,
                d,
            } => {
                let arg = self.reg(t, *arg);
                return self.mbar_wait(t, pc, addr, arg, *parity, *blocking, *d);
            }
            SyncOp::MbarInit { addr, count } => {
                let count = self.reg(t, *count) as u32;
                if let Some((rank, off)) = self.mbar_at(t, pc, addr) {
                    self.mbar_init(t, pc, rank, off, count);
                }
            }
            SyncOp::MbarInval { addr } => {
                if let Some((rank, off)) = self.mbar_at(t, pc, addr) {
                    if let Some(cta) = self.cluster.ctas.get_mut(rank as usize) {
                        cta.mbars.remove(&off);
                    }
                }
            }
            SyncOp::MbarArrive {
                addr,
                count,
                tx,
                kind,
                d,
            } => {
                let count = count.map_or(1, |c| i64::from(self.reg(t, c) as u32));
                let tx = tx.map(|x| i64::from(self.reg(t, x) as u32));
                let token = match self.mbar_at(t, pc, addr) {
                    Some((rank, off)) => {
                        if let Some(tx) = tx {
                            self.mbar_tx(t, pc, rank, off, tx);
                        }
                        self.mbar_arrive(t, pc, rank, off, count, kind.drop, kind.no_complete)
                    }
                    None => 0,
                };
                self.set_reg(t, *d, token);
            }
            SyncOp::MbarExpectTx { addr, tx } => {
                let tx = i64::from(self.reg(t, *tx) as u32);
                if let Some((rank, off)) = self.mbar_at(t, pc, addr) {
                    self.mbar_tx(t, pc, rank, off, tx);
                }
            }
            SyncOp::MbarCompleteTx { addr, tx } => {
                let tx = i64::from(self.reg(t, *tx) as u32);
                if let Some((rank, off)) = self.mbar_at(t, pc, addr) {
                    self.mbar_tx(t, pc, rank, off, -tx);
                    self.check_phase(rank, off);
                }
            }
            SyncOp::MbarPendingCount { d, .. } => self.set_reg(t, *d, 0),
            _ => {}
        }
        self.advance(t);
        After::Continue
    }

    fn mbar_init(&mut self, t: u32, pc: u32, rank: u32, off: u32, count: u32) {
        let bref = self.bref(rank, off);
        let mut waiters = Vec::new();
        if let Some(old) = self.mbar(rank, off) {
            let busy =
                old.pending != i64::from(old.expected) || old.tx != 0 || !old.waiters.is_empty();
            let (pending, expected, tx) = (old.pending, old.expected, old.tx);
            waiters = std::mem::take(&mut old.waiters);
            if busy {
                self.record(
                    t,
                    pc,
                    Issue::MbarReinit {
                        barrier: bref,
                        pending,
                        expected,
                        tx,
                    },
                );
            }
        }
        let mut b = MBarrier::new(count.clamp(1, COUNT_LIMIT), pc);
        b.waiters = waiters;
        if let Some(cta) = self.cluster.ctas.get_mut(rank as usize) {
            cta.mbars.insert(off, b);
        }
        self.sched.epoch += 1;
    }

    /// Adds `tx` (negative: completes) transaction bytes.
    pub(super) fn mbar_tx(&mut self, t: u32, pc: u32, rank: u32, off: u32, tx: i64) {
        let bref = self.bref(rank, off);
        let Some(b) = self.mbar(rank, off) else {
            self.record(t, pc, Issue::MbarUninit { barrier: bref });
            return;
        };
        b.tx += tx;
        let now = b.tx;
        self.sched.epoch += 1;
        if now.abs() > TX_LIMIT {
            self.record(
                t,
                pc,
                Issue::TxRange {
                    barrier: bref,
                    tx: now,
                },
            );
        }
    }

    /// Arrives `count` times; returns the state token (the phase count
    /// before the arrival).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mbar_arrive(
        &mut self,
        t: u32,
        pc: u32,
        rank: u32,
        off: u32,
        count: i64,
        drop: bool,
        no_complete: bool,
    ) -> u64 {
        let bref = self.bref(rank, off);
        let Some(b) = self.mbar(rank, off) else {
            self.record(t, pc, Issue::MbarUninit { barrier: bref });
            return 0;
        };
        let token = b.phase;
        let (pending, phase) = (b.pending, b.phase);
        let under = count > pending;
        b.pending = (b.pending - count).max(0);
        b.arrivals_this_phase += count as u32;
        b.note_arrival(t, pc);
        if drop {
            b.expected = b.expected.saturating_sub(1);
        }
        let completes = b.pending == 0 && b.tx == 0;
        self.sched.epoch += 1;
        if under {
            self.record(
                t,
                pc,
                Issue::MbarUnderflow {
                    barrier: bref,
                    count,
                    pending,
                    phase,
                },
            );
        }
        if completes && no_complete {
            self.record(t, pc, Issue::NoComplete { barrier: bref });
        }
        self.check_phase(rank, off);
        token
    }

    /// Completes the current phase if nothing is pending; wakes the waiters.
    pub(super) fn check_phase(&mut self, rank: u32, off: u32) {
        let Some(b) = self.mbar(rank, off) else {
            return;
        };
        if b.pending > 0 || b.tx != 0 {
            return;
        }
        b.phase += 1;
        b.pending = i64::from(b.expected);
        b.arrivals_this_phase = 0;
        let waiters = std::mem::take(&mut b.waiters);
        self.sched.epoch += 1;
        for w in waiters {
            self.wake(w);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mbar_wait(
        &mut self,
        t: u32,
        pc: u32,
        addr: &Addr,
        arg: u64,
        parity: bool,
        blocking: bool,
        d: u32,
    ) -> After {
        let Some((rank, off)) = self.mbar_at(t, pc, addr) else {
            self.set_reg(t, d, 1);
            self.advance(t);
            return After::Continue;
        };
        let bref = self.bref(rank, off);
        let (rewait, reported) = self
            .cluster
            .threads
            .get(t as usize)
            .map_or((false, false), |th| (th.rewait, th.behind_reported));
        let Some(b) = self.mbar(rank, off) else {
            self.record(t, pc, Issue::MbarUninit { barrier: bref });
            self.set_reg(t, d, 1);
            self.advance(t);
            return After::Continue;
        };
        let done = if parity {
            b.parity_done(arg)
        } else {
            b.phase > arg
        };
        let phase = b.phase;
        let last = b.last_wait.get(&t).copied().unwrap_or(0);
        if done {
            b.last_wait.insert(t, phase);
        }
        // Judged at every evaluation: a waiter may fall behind while it is
        // blocked, when the barrier completes two phases before it runs.
        if parity && !reported && phase.saturating_sub(last) >= 2 {
            if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                th.behind_reported = true;
            }
            self.record(
                t,
                pc,
                Issue::PhaseBehind {
                    barrier: bref,
                    phases: phase - last,
                    parity: arg & 1,
                },
            );
        }
        if done {
            if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                th.rewait = false;
                th.behind_reported = false;
                th.poll = None;
                th.poll_seen = None;
            }
            self.set_reg(t, d, 1);
            self.advance(t);
            return After::Continue;
        }
        if !rewait {
            self.stats.blocking_waits += 1;
        }
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            th.rewait = true;
        }
        if blocking {
            if let Some(b) = self.mbar(rank, off) {
                if !b.waiters.contains(&t) {
                    b.waiters.push(t);
                }
            }
            return After::Blocked(Block::Mbar { rank, offset: off });
        }
        // A failed `test_wait` returns false and the thread goes on; failing
        // at the same wait again with nothing changed in between means it
        // spins, and it yields to the others (and counts as blocked when all
        // threads are such pollers).
        let epoch = self.sched.epoch;
        let spinning = self
            .cluster
            .threads
            .get(t as usize)
            .is_some_and(|th| th.poll.map(|p| p.0) == Some(pc) && th.poll_seen == Some(epoch));
        if let Some(th) = self.cluster.threads.get_mut(t as usize) {
            th.poll = Some((pc, rank, off));
            th.poll_seen = Some(epoch);
        }
        self.set_reg(t, d, 0);
        self.advance(t);
        if spinning {
            After::Poll
        } else {
            After::Continue
        }
    }
}
