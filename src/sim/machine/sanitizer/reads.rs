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
    /// An empty log bounded by `limit`, in the memory of `spare` (a log
    /// merged already) when there is one.
    fn new(limit: usize, spare: Option<ReadLog>) -> ReadLog {
        let mut log = spare.unwrap_or_default();
        log.clear();
        log.limit = limit;
        log
    }

    /// Empties it, keeping its memory (counted against its bound).
    pub fn clear(&mut self) {
        self.reads.clear();
        self.views.clear();
        self.writes.clear();
        self.over = false;
        self.bytes = self.reads.capacity() * std::mem::size_of::<Read>()
            + self.views.capacity() * std::mem::size_of::<Snap>()
            + self.writes.capacity() * std::mem::size_of::<(usize, u64, u64)>();
    }

    /// The byte ranges the group wrote: (allocation, start, end).
    pub fn writes(&self) -> &[(usize, u64, u64)] {
        &self.writes
    }

    /// The byte ranges it read: (allocation, start, end).
    pub fn reads(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.reads
            .iter()
            .map(|r| (r.alloc as usize, r.off, r.off.saturating_add(r.size)))
    }

    /// Counts `bytes` more against the bound (the whole log is dropped
    /// past it); whether it is still kept.
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
            let cost = growth(&self.views) + vector + snap.old.ranges() * 8;
            if !self.charge(cost) {
                return;
            }
            self.views.push(snap);
        }
        if !self.charge(growth(&self.reads)) {
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
        if self.charge(growth(&self.writes)) {
            self.writes.push((alloc, off, end));
        }
    }
}

/// The bytes a push onto `v` may allocate (a vector doubles when full).
fn growth<T>(v: &Vec<T>) -> usize {
    if v.len() == v.capacity() {
        v.capacity().max(4) * std::mem::size_of::<T>()
    } else {
        0
    }
}

impl Sanitizer {
    /// Logs the reads of global memory from now on, in at most `limit`
    /// bytes (a worker of `--jobs`, before it runs a group), reusing the
    /// memory of `spare`.
    pub fn log_reads(&mut self, limit: usize, spare: Option<ReadLog>) {
        self.log = if self.on.races {
            Some(Box::new(ReadLog::new(limit, spare)))
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

#[cfg(test)]
mod tests {
    use super::super::Shape;
    use super::*;
    use crate::sim::checks::Checks;
    use crate::sim::decode::sem::{Order, Sem};
    use crate::sim::machine::events::{AccessKind, Events};
    use crate::sim::machine::memory::{Place, Target};

    fn sanitizer() -> Sanitizer {
        let shape = Shape {
            grid: [4, 1, 1],
            block: [64, 1, 1],
            cluster: [1, 1, 1],
        };
        // `x` (64 bytes) and a flag.
        Sanitizer::new(Checks::all(), shape, &[64, 4], 0, 0)
    }

    fn at(alloc: usize, offset: u64) -> Place {
        Place {
            target: Target::Global(alloc),
            offset,
        }
    }

    const RELEASE: Sem = Sem {
        order: Order::Release,
        scope: Scope::Gpu,
        fence: None,
        aligned: false,
    };
    const ACQUIRE: Sem = Sem {
        order: Order::Acquire,
        scope: Scope::Gpu,
        fence: None,
        aligned: false,
    };

    /// Group `seq` of 64 threads: thread 0 releases the flag (`publish`)
    /// or acquires it and then reads words 8..16 of `x` (`acquire`: those
    /// reads supersede the reads of the group that published, ordered
    /// before them); each thread reads word 0 of `x` (its two slots fill
    /// and forget), another word (of 0..16 in group 0, of 0..8 in the
    /// others, so that group 0's records of 8..16 stay) and a 2-byte half
    /// of word 1; threads 0 and 1 read word 15, and after a barrier of
    /// the first 32 threads, thread 5 reads it (superseding their reads)
    /// and the 32 read words 0 and 1 again.
    fn group(san: &mut Sanitizer, seq: u32, publish: bool, acquire: bool) {
        let mut ev = Events::default();
        san.begin_cluster(seq, vec![[seq, 0, 0]]);
        let load = AccessKind::Load;
        let plain = Sem::default();
        if acquire {
            san.access(&mut ev, 0, 1, at(1, 0), 4, load, ACQUIRE);
            for w in 8..16 {
                san.access(&mut ev, 0, 2, at(0, w * 4), 4, load, plain);
            }
        }
        let span = if seq == 0 { 16 } else { 8 };
        for t in 0..64u32 {
            let pc = 10 + t % 3;
            san.access(&mut ev, t, pc, at(0, 0), 4, load, plain);
            let word = u64::from((t + seq) % span) * 4;
            san.access(&mut ev, t, pc, at(0, word), 4, load, plain);
            san.access(&mut ev, t, pc, at(0, 6), 2, load, plain);
        }
        for t in 0..2 {
            san.access(&mut ev, t, 14, at(0, 60), 4, load, plain);
        }
        for t in 0..32 {
            san.bar_arrive(t, 0, 1, 20, true, false);
        }
        let waiters: Vec<u32> = (0..32).collect();
        san.bar_complete(&mut ev, 0, 1, &waiters);
        san.access(&mut ev, 5, 25, at(0, 60), 4, load, plain);
        for t in 0..32u32 {
            san.access(&mut ev, t, 30, at(0, 0), 8, load, plain);
        }
        if publish {
            san.access(&mut ev, 0, 40, at(1, 0), 4, AccessKind::Store, RELEASE);
        }
        san.end_cluster();
    }

    fn shadow_of(san: &Sanitizer) -> String {
        format!("{:?}", san.save_global(0, 0, 64))
    }

    /// Groups 1, 2 and 3 run from the state after group 0, each on a
    /// fork, their reads logged; replayed in order onto that state they
    /// give the shadow of the serial run — slots forgotten, superseded
    /// (by the group's own later reads, and by group 3's reads of group
    /// 0's, which it acquired through the flag) — where merging their
    /// shadows as they left them would not.
    #[test]
    fn replayed_reads_give_the_serial_shadow() {
        let mut serial = sanitizer();
        group(&mut serial, 0, true, false);
        let base = serial.fork();
        let runs = [(1, false), (2, false), (3, true)];
        for &(seq, acquire) in &runs {
            group(&mut serial, seq, false, acquire);
        }
        let mut merged = base.fork();
        let mut last = String::new();
        for &(seq, acquire) in &runs {
            let mut worker = base.fork();
            worker.log_reads(1 << 20, None);
            group(&mut worker, seq, false, acquire);
            let log = worker.take_log().expect("a log within its bound");
            assert!(log.writes().is_empty());
            merged.replay_reads(&log, |_, _| false);
            last = shadow_of(&worker);
        }
        assert_eq!(shadow_of(&merged), shadow_of(&serial));
        assert_ne!(last, shadow_of(&serial), "the groups' reads interact");
        // Skipped granules are left as they are.
        let mut worker = base.fork();
        worker.log_reads(1 << 20, None);
        group(&mut worker, 1, false, false);
        let log = worker.take_log().expect("a log");
        let mut skipped = base.fork();
        skipped.replay_reads(&log, |_, _| true);
        assert_eq!(shadow_of(&skipped), shadow_of(&base));
    }

    /// A log past its bound is dropped: the group merges as before logs.
    #[test]
    fn a_log_past_its_bound_is_dropped() {
        let mut w = sanitizer();
        w.log_reads(4096, None);
        group(&mut w, 0, true, false);
        assert!(w.take_log().is_none());
        w.log_reads(1 << 20, None);
        group(&mut w, 1, true, false);
        let log = w.take_log().expect("within the bound");
        assert_eq!(log.writes(), &[(1, 0, 4)]);
        assert!(log.bytes <= 1 << 20 && log.reads.len() == 64 * 3 + 2 + 1 + 32);
        // Not logging after the take; nothing without the race check.
        group(&mut w, 2, false, false);
        assert!(w.take_log().is_none());
        let mut off = Sanitizer::new(Checks::none(), w.shape, &[64, 4], 0, 0);
        off.log_reads(1 << 20, None);
        assert!(off.take_log().is_none());
    }
}
