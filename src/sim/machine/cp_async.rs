//! Ampere's asynchronous copies (`cp.async`, PTX ISA §9.7.9.25): each
//! thread's copies from global to shared memory wait in its own queue, in
//! the groups its `commit_group`s close, and land — the source read then,
//! the bytes past the source size zero-filled — when the thread waits for
//! them (`wait_group N`: every committed group but the newest N;
//! `wait_all`: all) or asks for an mbarrier arrival after them
//! (`cp.async.mbarrier.arrive`): the latest a GPU may land them, so that a
//! read of the destination before the wait sees the old bytes. A copy's
//! addresses are checked at its issue (bounds, and alignment to its size).
//! At most [`MAX_PENDING`] copies wait per thread: one more lands the
//! oldest first (a GPU may land a copy any time after its issue).

use super::events::{AccessKind, Issue};
use super::memory;
use super::sanitizer::fast::FastMap as HashMap;
use super::sched::After;
use super::Machine;
use crate::sim::decode::ops::{Space, SyncOp};
use std::collections::VecDeque;

/// The most `cp.async` copies one thread keeps in flight.
const MAX_PENDING: usize = 4096;

/// The copies in flight of the cluster's threads.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    threads: HashMap<u32, Queue>,
}

#[derive(Clone, Debug, Default)]
struct Queue {
    /// The thread's `commit_group`s so far: a copy issued after `g` of them
    /// belongs to group `g`, committed once there are more.
    commits: u64,
    copies: VecDeque<AsyncCopy>,
}

#[derive(Clone, Debug)]
struct AsyncCopy {
    group: u64,
    pc: u32,
    /// The global source address and how many bytes come from it.
    src: u64,
    from_src: u32,
    size: u32,
    /// The destination: the CTA's rank and its shared offset.
    rank: u32,
    dst: u64,
    /// Its number in the run-time checks (`u32::MAX`: unchecked).
    check: u32,
}

impl Machine<'_> {
    pub(super) fn cp_async_op(&mut self, t: u32, pc: u32, op: &SyncOp) -> After {
        match op {
            SyncOp::CpAsync {
                dst,
                src,
                size,
                src_size,
                ignore,
            } => {
                let d = self.reg(t, dst.base).wrapping_add(dst.off as u64);
                let s = self.reg(t, src.base).wrapping_add(src.off as u64);
                let ignored = ignore.is_some_and(|(p, neg)| (self.reg(t, p) != 0) != neg);
                let from_src = if ignored {
                    0
                } else {
                    src_size.map_or(*size, |slot| (self.reg(t, slot) as u32).min(*size))
                };
                self.cp_async_issue(t, pc, d, s, *size, from_src);
            }
            SyncOp::CpAsyncCommit => {
                self.cluster.cp.threads.entry(t).or_default().commits += 1;
            }
            SyncOp::CpAsyncWait { n } => {
                let q = self.cluster.cp.threads.entry(t).or_default();
                let before = match n {
                    Some(n) => q.commits.saturating_sub(u64::from(*n)),
                    None => u64::MAX,
                };
                self.cp_async_land(t, before);
                if let Some(san) = &mut self.checks {
                    san.cp_wait(t, before);
                }
            }
            SyncOp::CpAsyncArrive { mbar, noinc } => {
                self.cp_async_land(t, u64::MAX);
                if let Some((rank, off)) = self.mbar_at(t, pc, mbar) {
                    if let Some(san) = &mut self.checks {
                        san.cp_arrive(t, rank, off);
                    }
                    if *noinc {
                        self.mbar_arrive(t, pc, rank, off, 1, false, false);
                    } else {
                        // The pending count is raised by one before the
                        // arrival: no change, but the object must be one.
                        self.mbar_tx(t, pc, rank, off, 0);
                    }
                }
            }
            _ => {}
        }
        self.advance(t);
        After::Continue
    }

    fn cp_async_issue(&mut self, t: u32, pc: u32, dst: u64, src: u64, size: u32, from_src: u32) {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let (ext, allocs) = (&self.mem.ext, &self.mem.allocs);
        let size64 = u64::from(size);
        let place = memory::resolve(Space::Shared, dst, size64, size64, own, ext, allocs);
        let mut faults = Vec::new();
        let dst = match place {
            Ok(p) => Some(p),
            Err(f) => {
                faults.push((f, AccessKind::CopyWrite, size64));
                None
            }
        };
        if from_src > 0 {
            let from = u64::from(from_src);
            if let Err(f) = memory::resolve(Space::Global, src, from, size64, own, ext, allocs) {
                faults.push((f, AccessKind::CopyRead, from));
            }
        }
        let ok = faults.is_empty();
        for (fault, kind, size) in faults {
            self.record(t, pc, Issue::Access { fault, kind, size });
        }
        let (Some(dst), true) = (dst, ok) else {
            return;
        };
        let memory::Target::Shared(rank) = dst.target else {
            return;
        };
        if self
            .cluster
            .cp
            .threads
            .get(&t)
            .is_some_and(|q| q.copies.len() >= MAX_PENDING)
        {
            self.cp_async_land_oldest(t);
        }
        let group = self.cluster.cp.threads.get(&t).map_or(0, |q| q.commits);
        let check = match &mut self.checks {
            Some(san) => san.cp_issue(t, pc, group),
            None => u32::MAX,
        };
        let q = self.cluster.cp.threads.entry(t).or_default();
        q.copies.push_back(AsyncCopy {
            group,
            pc,
            src,
            from_src,
            size,
            rank,
            dst: dst.offset,
            check,
        });
    }

    /// Lands thread `t`'s copies of the groups before `before` (and, for
    /// `u64::MAX`, those not committed yet), oldest first.
    fn cp_async_land(&mut self, t: u32, before: u64) {
        loop {
            let next = self
                .cluster
                .cp
                .threads
                .get(&t)
                .and_then(|q| q.copies.front())
                .is_some_and(|c| before == u64::MAX || c.group < before);
            if !next {
                return;
            }
            self.cp_async_land_oldest(t);
        }
    }

    fn cp_async_land_oldest(&mut self, t: u32) {
        let Some(c) = self
            .cluster
            .cp
            .threads
            .get_mut(&t)
            .and_then(|q| q.copies.pop_front())
        else {
            return;
        };
        // The checks see the copy's read and write as its agent's.
        if let Some(san) = &mut self.checks {
            san.copy_begin(c.check);
        }
        let data = if c.from_src > 0 {
            self.read_bytes(t, c.pc, Space::Global, c.src, u64::from(c.from_src))
        } else {
            Some(Vec::new())
        };
        if let Some(mut data) = data {
            data.resize(c.size as usize, 0);
            self.sched.epoch += 1;
            self.write_bytes(t, c.pc, memory::cluster_addr(c.rank, c.dst), &data);
        }
        if let Some(san) = &mut self.checks {
            let name = |_: u32, offset: u32| super::events::BarrierRef {
                ctaid: [0; 3],
                offset,
            };
            san.copy_end(&mut self.events, c.check, c.size, |_, _| None, name);
            san.copy_finished();
        }
    }
}
