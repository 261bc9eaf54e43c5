//! `--jobs` with the race check: the reads of global memory a group made,
//! kept so that they can be recorded again, in the serial order, on the
//! shadow another group's reads changed.
//!
//! A read changes the shadow of global memory (it is recorded in one of
//! the granule's slots, superseding the reads ordered before it, or
//! forgetting one when the slots are full), so two groups that read the
//! same granule leave the serial run's shadow only when their records are
//! made in the serial order. What a read *finds* does not depend on the
//! other reads: it races only with writes, and a read never moves or
//! drops a write's slot. So a group that only read what an earlier group
//! of its batch read saw exactly what the serial run shows it, and its
//! run is merged by replaying its reads of those granules, in its order,
//! with the clocks it had ([`Sanitizer::replay_reads`]) — each is
//! `shadow::one` again, with the same inputs.
//!
//! The log is bounded (`limit` bytes, its clocks' vectors counted): past
//! it the log is dropped and the group is merged only when no earlier
//! group of the batch touched what it read (as before reads were logged).

use super::clock::Snap;
use super::shadow::{Acc, Ctx, View};
use super::Sanitizer;
use crate::sim::decode::sem::Scope;

/// One read: the access [`super::shadow::Shadow::access`] recorded.
#[derive(Clone, Copy, Debug)]
struct Read {
    alloc: u32,
    /// Its clocks: an index into [`ReadLog::views`].
    view: u32,
    off: u64,
    size: u64,
    /// The shadow's count at its first granule.
    tick: usize,
    agent: u32,
    clock: u32,
    pc: u32,
    rank: u32,
    atomic: bool,
    thread: bool,
    async_proxy: bool,
    scope: Scope,
}

/// The reads of global memory of one group, in its order.
#[derive(Debug, Default)]
pub struct ReadLog {
    /// The group's cluster sequence number.
    seq: u32,
    reads: Vec<Read>,
    /// The readers' clocks, shared by consecutive reads with the same.
    views: Vec<Snap>,
    /// The byte ranges of global memory the group's accesses wrote, per
    /// allocation (coalesced when adjacent): the granules they cover are
    /// merged as bytes and shadow, never replayed.
    writes: Vec<(usize, u64, u64)>,
    /// Bytes held, an upper bound.
    bytes: usize,
    limit: usize,
    over: bool,
}

impl ReadLog {
    fn new(limit: usize) -> ReadLog {
        ReadLog {
            limit,
            ..ReadLog::default()
        }
    }

    /// The byte ranges the group wrote: (allocation, start, end).
    pub fn writes(&self) -> &[(usize, u64, u64)] {
        &self.writes
    }

    fn charge(&mut self, bytes: usize) -> bool {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.limit {
            self.over = true;
            self.reads = Vec::new();
            self.views = Vec::new();
            self.writes = Vec::new();
        }
        !self.over
    }

    /// Notes a read of `size` bytes at `off` of allocation `alloc`, made
    /// with `acc`, its first granule at the shadow's count `tick`.
    pub(super) fn read(&mut self, alloc: usize, off: u64, size: u64, acc: &Acc, tick: usize) {
        if self.over || acc.write {
            return;
        }
        let same = self.views.last().is_some_and(|v| match acc.view {
            View::Thread(c, me) => {
                v.me == me && v.own == c.own && v.base.same(&c.base) && v.old == c.old
            }
            View::Snapshot(s) => {
                v.me == s.me && v.own == s.own && v.base.same(&s.base) && v.old == s.old
            }
        });
        if !same {
            let snap = match acc.view {
                View::Thread(c, me) => Snap {
                    me,
                    base: c.base.clone(),
                    own: c.own,
                    old: c.old.clone(),
                    ..Snap::default()
                },
                View::Snapshot(s) => Snap {
                    me: s.me,
                    base: s.base.clone(),
                    own: s.own,
                    old: s.old.clone(),
                    ..Snap::default()
                },
            };
            // A vector shared with the previous view is counted once.
            let vector = match self.views.last() {
                Some(v) if v.base.same(&snap.base) => 0,
                _ => snap.base.entries() * 4,
            };
            let cost = std::mem::size_of::<Snap>() + vector + snap.old.ranges() * 8;
            if !self.charge(cost) {
                return;
            }
            self.views.push(snap);
        }
        if !self.charge(std::mem::size_of::<Read>()) {
            return;
        }
        let view = self.views.len().saturating_sub(1) as u32;
        self.reads.push(Read {
            alloc: alloc as u32,
            view,
            off,
            size,
            tick,
            agent: acc.agent,
            clock: acc.clock,
            pc: acc.pc,
            rank: acc.rank,
            atomic: acc.atomic,
            thread: acc.thread,
            async_proxy: acc.async_proxy,
            scope: acc.scope,
        });
    }

    /// Notes a write of `size` bytes at `off` of allocation `alloc`.
    pub(super) fn write(&mut self, alloc: usize, off: u64, size: u64) {
        if self.over {
            return;
        }
        let end = off.saturating_add(size);
        if let Some(last) = self.writes.last_mut() {
            if last.0 == alloc && off <= last.2 && end >= last.1 {
                last.1 = last.1.min(off);
                last.2 = last.2.max(end);
                return;
            }
        }
        if self.charge(std::mem::size_of::<(usize, u64, u64)>()) {
            self.writes.push((alloc, off, end));
        }
    }
}

impl Sanitizer {
    /// Logs the reads of global memory from now on, in at most `limit`
    /// bytes (a worker of `--jobs`, before it runs a group).
    pub fn log_reads(&mut self, limit: usize) {
        self.log = if self.on.races {
            Some(Box::new(ReadLog::new(limit)))
        } else {
            None
        };
    }

    /// The log of the group just run, and no more logging; `None` when
    /// none was kept or it outgrew its bound.
    pub fn take_log(&mut self) -> Option<ReadLog> {
        let log = self.log.take()?;
        if log.over {
            return None;
        }
        let mut log = *log;
        log.seq = self.seq;
        Some(log)
    }

    /// Records the reads of `log` again, in its order, on this shadow of
    /// global memory, except on the granules `skip` names (allocation,
    /// granule): the shadow becomes what it would be had the group run
    /// here.
    pub fn replay_reads(&mut self, log: &ReadLog, skip: impl Fn(usize, u64) -> bool) {
        let ctx = Ctx {
            seq: log.seq,
            nthreads: self.nthreads,
        };
        for r in &log.reads {
            let Some(view) = log.views.get(r.view as usize) else {
                continue;
            };
            let acc = Acc {
                agent: r.agent,
                clock: r.clock,
                pc: r.pc,
                write: false,
                atomic: r.atomic,
                scope: r.scope,
                async_proxy: r.async_proxy,
                thread: r.thread,
                rank: r.rank,
                same_store: false,
                view: View::Snapshot(view),
            };
            let alloc = r.alloc as usize;
            if let Some(sh) = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc) {
                sh.replay(r.off, r.size, &acc, ctx, r.tick, |g| !skip(alloc, g));
            }
        }
    }
}
