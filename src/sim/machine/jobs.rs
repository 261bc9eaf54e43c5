//! `--jobs N`: the groups of a launch (clusters, or CTAs) run on several
//! cores, with results and reports byte-identical to the serial run.
//!
//! Groups share nothing but global memory, so the scheme is the classic
//! deterministic optimistic one. The groups are taken in batches; each
//! group of a batch runs on a worker (a fork of the machine: its own copy
//! of global memory and of the race check's global shadow) from the state
//! at the start of the batch, and records which 4-byte granules of global
//! memory it touched (read or wrote) and which it wrote; with the race
//! check on, the worker's sanitizer also logs the group's reads of global
//! memory (`sanitizer::reads`). Then the groups are committed in the
//! serial order: a group that touched nothing an earlier group of the
//! batch wrote saw exactly what it would have seen in the serial run —
//! the bytes, and, with the race check, every write's shadow record (a
//! read races only with writes; other groups' reads never move a write's
//! record). Its written granules (bytes and shadow), reports, printf
//! output and statistics are merged into the machine, and its logged
//! reads of the granules it did not write are replayed, in its order,
//! onto the shadow the earlier groups' reads left: the serial run's
//! shadow. With the race check on, a group that wrote what an earlier
//! group read conflicts too (its write is checked against that read), and
//! one without a log (past its bound) is merged by copying all it touched,
//! so it conflicts with any earlier group that touched the same. Any
//! group that conflicts runs again, on the machine itself, as in the
//! serial run. So do the groups whose outcome depends on more than their
//! own memory: one that stopped (a deadlock, or `max_steps`: the report
//! gives the steps of the whole run), one that might cross `max_steps`,
//! one whose printf text might not fit the buffer after the earlier
//! groups', one with more distinct reports than a group keeps.

use super::events::Events;
use super::memory::{Alloc, Place, Target};
use super::printf::Fifo;
use super::sanitizer::reads::ReadLog;
use super::sanitizer::{Sanitizer, Saved};
use super::{Counters, Machine, Stop};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A set of 4-byte granules of one allocation: a bitmap, and its words
/// that are not zero (so that a sparse set is cleared and walked cheaply).
#[derive(Clone, Debug, Default)]
pub struct Bits {
    words: Vec<u64>,
    nonzero: Vec<u32>,
}

impl Bits {
    /// Adds granules `lo..hi`.
    fn set(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        let last = ((hi - 1) / 64) as usize;
        if self.words.len() <= last {
            self.words.resize(last + 1, 0);
        }
        for w in (lo / 64) as usize..=last {
            let base = w as u64 * 64;
            let from = lo.max(base) - base;
            let to = hi.min(base + 64) - base;
            let mask = if to - from == 64 {
                u64::MAX
            } else {
                ((1u64 << (to - from)) - 1) << from
            };
            if let Some(word) = self.words.get_mut(w) {
                if *word == 0 {
                    self.nonzero.push(w as u32);
                }
                *word |= mask;
            }
        }
    }

    /// Whether it holds every granule of `lo..hi`.
    fn has_all(&self, lo: u64, hi: u64) -> bool {
        (lo..hi).all(|g| {
            usize::try_from(g / 64)
                .ok()
                .and_then(|w| self.words.get(w))
                .is_some_and(|w| w >> (g % 64) & 1 == 1)
        })
    }

    /// The set as its words that are not zero: (index, bits), by index.
    fn sparse(&self) -> Sparse {
        let mut out: Sparse = self
            .nonzero
            .iter()
            .map(|&w| (w, self.words.get(w as usize).copied().unwrap_or(0)))
            .collect();
        out.sort_unstable_by_key(|e| e.0);
        out
    }

    fn intersects(&self, other: &[(u32, u64)]) -> bool {
        other
            .iter()
            .any(|&(w, b)| self.words.get(w as usize).copied().unwrap_or(0) & b != 0)
    }

    fn union(&mut self, other: &[(u32, u64)]) {
        for &(w, b) in other {
            if self.words.len() <= w as usize {
                self.words.resize(w as usize + 1, 0);
            }
            if let Some(word) = self.words.get_mut(w as usize) {
                if *word == 0 && b != 0 {
                    self.nonzero.push(w);
                }
                *word |= b;
            }
        }
    }

    fn clear(&mut self) {
        for &w in &self.nonzero {
            if let Some(word) = self.words.get_mut(w as usize) {
                *word = 0;
            }
        }
        self.nonzero.clear();
    }
}

/// A set of granules as its words that are not zero: (index, bits), by
/// index.
type Sparse = Vec<(u32, u64)>;

/// Whether the set holds every granule of `lo..hi`.
fn covers(set: &[(u32, u64)], lo: u64, hi: u64) -> bool {
    let mut g = lo;
    while g < hi {
        let w = g / 64;
        let to = hi.min((w + 1) * 64);
        let (from, n) = (g - w * 64, to - g);
        let mask = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << from
        };
        let bits = u32::try_from(w)
            .ok()
            .and_then(|w| set.binary_search_by_key(&w, |e| e.0).ok())
            .and_then(|i| set.get(i))
            .map_or(0, |e| e.1);
        if bits & mask != mask {
            return false;
        }
        g = to;
    }
    true
}

/// The runs of granules of a set, as byte ranges.
fn ranges(set: &[(u32, u64)]) -> impl Iterator<Item = (u64, u64)> + '_ {
    set.iter().flat_map(|&(w, bits)| {
        let base = u64::from(w) * 64;
        (0..64u64)
            .filter(move |i| bits >> i & 1 == 1 && (*i == 0 || bits >> (i - 1) & 1 == 0))
            .map(move |i| {
                let len = u64::from((bits >> i).trailing_ones());
                ((base + i) * 4, (base + i + len) * 4)
            })
    })
}

/// What a group touched and wrote, per allocation.
#[derive(Debug, Default)]
struct Taken {
    /// The race check is on: a read changes the shadow.
    races: bool,
    touched: Vec<Sparse>,
    written: Vec<Sparse>,
}

impl Taken {
    /// What the group changed: with the race check, all it touched (a
    /// read changes the shadow); without, what it wrote.
    fn changed(&self) -> &[Sparse] {
        if self.races {
            &self.touched
        } else {
            &self.written
        }
    }

    /// What a merge of the group's run copies (bytes and shadow): what it
    /// wrote, and, with the race check on and no log of its reads to
    /// replay (`replayed`), what it read as well.
    fn patched(&self, replayed: bool) -> &[Sparse] {
        if self.races && !replayed {
            &self.touched
        } else {
            &self.written
        }
    }

    /// Could the group's run differ from the serial one, after earlier
    /// groups of the batch that wrote `written` and touched `touched`?
    /// Yes when it touched what they wrote, and, with the race check on,
    /// when what its merge copies is something they read (their read
    /// records are in the shadow the serial run's copy would have): a
    /// granule both only read is merged by replaying the group's reads.
    fn conflicts(&self, written: &[Bits], touched: &[Bits], replayed: bool) -> bool {
        self.touched
            .iter()
            .zip(written)
            .any(|(t, w)| w.intersects(t))
            || (self.races
                && self
                    .patched(replayed)
                    .iter()
                    .zip(touched)
                    .any(|(p, t)| t.intersects(p)))
    }
}

/// The granules of global memory a group touched and wrote, per
/// allocation.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// The race check is on: a read changes the shadow.
    races: bool,
    touched: Vec<Bits>,
    written: Vec<Bits>,
}

impl Track {
    pub fn new(races: bool, allocs: usize) -> Track {
        Track {
            races,
            touched: vec![Bits::default(); allocs],
            written: vec![Bits::default(); allocs],
        }
    }

    /// An access of `len` bytes at `place` (noted when it is global).
    #[inline]
    pub fn note(&mut self, place: Place, len: u64, write: bool) {
        if let Target::Global(i) = place.target {
            self.note_global(i, place.offset, len, write);
        }
    }

    pub fn note_global(&mut self, alloc: usize, offset: u64, len: u64, write: bool) {
        let (lo, hi) = (offset / 4, offset.saturating_add(len).div_ceil(4));
        if let Some(b) = self.touched.get_mut(alloc) {
            b.set(lo, hi);
        }
        if write {
            if let Some(b) = self.written.get_mut(alloc) {
                b.set(lo, hi);
            }
        }
    }

    /// Whether the accesses the race check logged are in what the track
    /// saw: its writes in what the group wrote, its reads in what it
    /// touched (the two agree; a log that does not is not replayed).
    fn agrees(&self, log: &ReadLog) -> bool {
        let within = |sets: &[Bits], (a, lo, hi): (usize, u64, u64)| {
            sets.get(a)
                .is_some_and(|s| s.has_all(lo / 4, hi.div_ceil(4)))
        };
        log.writes().iter().all(|&w| within(&self.written, w))
            && log.reads().all(|r| within(&self.touched, r))
    }

    /// What the group touched and wrote; the sets are emptied.
    fn take(&mut self) -> Taken {
        let touched: Vec<Sparse> = self.touched.iter().map(Bits::sparse).collect();
        let written: Vec<Sparse> = self.written.iter().map(Bits::sparse).collect();
        self.touched.iter_mut().for_each(Bits::clear);
        self.written.iter_mut().for_each(Bits::clear);
        Taken {
            races: self.races,
            touched,
            written,
        }
    }
}

/// The bytes of some granules of global memory and the race check's
/// state of them: what a group changed, taken from one machine's memory
/// to be put into another's.
struct Patch(Vec<(usize, u64, Vec<u8>, Option<Saved>)>);

impl Patch {
    fn take(dirty: &[Sparse], allocs: &[Alloc], san: Option<&Sanitizer>) -> Patch {
        let mut out = Vec::new();
        for (i, bits) in dirty.iter().enumerate() {
            let Some(src) = allocs.get(i) else { continue };
            for (lo, hi) in ranges(bits) {
                let hi = hi.min(src.data.len() as u64);
                let bytes = src.data.get(lo as usize..hi as usize).unwrap_or(&[]);
                let saved = san.map(|s| s.save_global(i, lo, hi));
                out.push((i, lo, bytes.to_vec(), saved));
            }
        }
        Patch(out)
    }

    fn apply(&self, allocs: &mut [Alloc], mut san: Option<&mut Sanitizer>) {
        for (i, lo, bytes, saved) in &self.0 {
            let lo = *lo as usize;
            if let Some(d) = allocs
                .get_mut(*i)
                .and_then(|a| a.data.get_mut(lo..lo + bytes.len()))
            {
                d.copy_from_slice(bytes);
            }
            if let (Some(s), Some(saved)) = (san.as_deref_mut(), saved) {
                s.load_global(saved);
            }
        }
    }
}

/// Copies the granules `dirty` of global memory, and the race check's
/// state of them, from one machine's memory to another's.
fn copy_dirty(
    dirty: &[Sparse],
    from: (&[Alloc], Option<&Sanitizer>),
    mut to: (&mut [Alloc], Option<&mut Sanitizer>),
) {
    for (i, bits) in dirty.iter().enumerate() {
        let (Some(src), Some(dst)) = (from.0.get(i), to.0.get_mut(i)) else {
            continue;
        };
        for (lo, hi) in ranges(bits) {
            let hi = hi.min(src.data.len() as u64).min(dst.data.len() as u64);
            let r = lo as usize..hi as usize;
            if let (Some(s), Some(d)) = (src.data.get(r.clone()), dst.data.get_mut(r)) {
                d.copy_from_slice(s);
            }
            if let (Some(fs), Some(ts)) = (from.1, to.1.as_deref_mut()) {
                ts.copy_global(fs, i, lo, hi);
            }
        }
    }
}

/// What a group's speculative run left to merge.
struct Done {
    taken: Taken,
    /// With the race check on, its reads of global memory, to record
    /// again where other groups' reads changed the shadow (`None`: none
    /// kept, or more than the bound).
    log: Option<ReadLog>,
    /// What it changed: the granules [`Taken::patched`] names.
    patch: Patch,
    events: Events,
    printf: Fifo,
    stats: Counters,
    stop: Option<Stop>,
    /// The run was cut at its speculation budget (not the launch's
    /// `max_steps`): the group runs again serially, and later groups of
    /// the batch still run on.
    abandoned: bool,
}

/// The fewest steps a speculative run of a group may take before it is
/// abandoned to the serial run. A group can wait for a later one only in
/// the serial order's past (a flag set by an earlier CTA): run from the
/// batch's start it spins until its budget, so the budget bounds the
/// speculation (see [`Machine::speculation_budget`]).
const MIN_SPECULATION_STEPS: u64 = 1 << 22;

/// Groups per batch per worker: enough to amortise starting the threads,
/// few enough that a conflict is found early.
const BATCH_PER_JOB: usize = 8;

/// The bytes the logs of a batch's reads may hold together (with the
/// race check on): each group's log is bounded by its share of it, and at
/// least [`MIN_LOG_BYTES`]. The logs merged already are kept for the next
/// batch's groups to reuse (at most a batch's), so that logs take at most
/// twice this.
const LOG_BYTES_PER_BATCH: usize = 128 << 20;
const MIN_LOG_BYTES: usize = 1 << 20;

/// The bound of one group's log of reads with `jobs` workers.
fn log_limit(jobs: usize) -> usize {
    (LOG_BYTES_PER_BATCH / jobs.saturating_mul(BATCH_PER_JOB).max(1)).max(MIN_LOG_BYTES)
}

/// The groups of a batch's commit that came before: the granules they
/// wrote and those they touched, per allocation.
struct Before {
    written: Vec<Bits>,
    touched: Vec<Bits>,
}

impl Before {
    fn new(allocs: usize) -> Before {
        Before {
            written: vec![Bits::default(); allocs],
            touched: vec![Bits::default(); allocs],
        }
    }

    fn add(&mut self, t: &Taken) {
        add(&mut self.written, &t.written);
        add(&mut self.touched, &t.touched);
    }

    fn clear(&mut self) {
        self.written.iter_mut().for_each(Bits::clear);
        self.touched.iter_mut().for_each(Bits::clear);
    }

    /// What the batch changed (see [`Taken::changed`]).
    fn changed(&self, races: bool) -> Vec<Sparse> {
        let sets = if races { &self.touched } else { &self.written };
        sets.iter().map(Bits::sparse).collect()
    }
}

/// The bytes of memory copied in about the time one simulated step
/// takes with the checks on (8–20 ns a step; a fresh copy, page faults
/// included, at 2–4 GB/s): what [`Machine::worthwhile`] weighs a
/// worker's copy of memory with.
pub(super) const COPY_BYTES_PER_STEP: u64 = 32;

/// The id of the group at `seq` in the serial order (x fastest).
pub(super) fn group_id(ngroups: [u32; 3], seq: u64) -> [u32; 3] {
    let (nx, ny) = (u64::from(ngroups[0].max(1)), u64::from(ngroups[1].max(1)));
    [seq % nx, (seq / nx) % ny, seq / (nx * ny)].map(|v| v as u32)
}

impl<'p> Machine<'p> {
    /// A worker for speculative runs: this machine's launch, a copy of its
    /// global memory and of the race check's global state.
    fn fork(&self) -> Machine<'p> {
        Machine {
            setup: self.setup.clone(),
            mem: super::Memory {
                allocs: self.mem.allocs.clone(),
                params: self.mem.params.clone(),
                ext: self.mem.ext.clone(),
                maps: self.mem.maps.clone(),
                printf: Fifo::default(),
                grid_workspace: self.mem.grid_workspace,
                track: self.mem.track.clone(),
            },
            cluster: self.cluster.empty(),
            sched: super::Sched {
                queue: Default::default(),
                current: None,
                epoch: 0,
                rng: self.sched.rng.clone(),
            },
            events: Events::default(),
            stats: Counters::new(self.setup.prog.code.len()),
            stop: None,
            checks: self.checks.as_ref().map(|s| Box::new(s.fork())),
            wgregs: self.wgregs.clone(),
        }
    }

    /// Runs group `seq` (at `id`) with the steps `before` taken already,
    /// from this worker's state, which it leaves as `base` has it; its
    /// reads are logged in at most `log_bytes` (in the memory of `spare`,
    /// a log merged already).
    fn speculate(
        &mut self,
        id: [u32; 3],
        before: u64,
        base: &Machine,
        budget: u64,
        log_bytes: usize,
        spare: Option<ReadLog>,
    ) -> Done {
        self.stats = Counters::new(self.setup.prog.code.len());
        self.stats.steps = before;
        let max_steps = self.setup.max_steps;
        let cut = before.saturating_add(budget);
        self.setup.max_steps = max_steps.min(cut);
        if let Some(san) = self.checks.as_deref_mut() {
            san.log_reads(log_bytes, spare);
        }
        self.run_group(id);
        self.finish_cluster();
        let abandoned = self.stop.is_some() && cut < max_steps && self.stats.steps >= cut;
        self.setup.max_steps = max_steps;
        let log = self.checks.as_deref_mut().and_then(|s| s.take_log());
        let log = log.filter(|l| self.mem.track.as_ref().is_some_and(|t| t.agrees(l)));
        let taken = self
            .mem
            .track
            .as_mut()
            .map(|t| t.take())
            .unwrap_or_default();
        let patch = Patch::take(
            taken.patched(log.is_some()),
            &self.mem.allocs,
            self.checks.as_deref(),
        );
        // Back to the batch's state.
        copy_dirty(
            taken.changed(),
            (&base.mem.allocs, base.checks.as_deref()),
            (&mut self.mem.allocs, self.checks.as_deref_mut()),
        );
        let mut stats =
            std::mem::replace(&mut self.stats, Counters::new(self.setup.prog.code.len()));
        stats.steps -= before;
        Done {
            taken,
            log,
            patch,
            events: std::mem::take(&mut self.events),
            printf: std::mem::take(&mut self.mem.printf),
            stats,
            stop: self.stop.take(),
            abandoned,
        }
    }

    /// Steps a speculative run may take: eight times the mean steps of
    /// the groups run so far, and at least [`MIN_SPECULATION_STEPS`].
    fn speculation_budget(&self) -> u64 {
        let mean = self.stats.steps / self.stats.clusters_done.max(1);
        mean.saturating_mul(8).max(MIN_SPECULATION_STEPS)
    }

    /// Merges a group's speculative run, when it is what the serial run
    /// would have done after the groups `before`; false when the group
    /// must run again.
    fn commit(&mut self, done: &Done, before: &Before) -> bool {
        let fits = self.mem.printf.bytes() + done.printf.bytes() <= super::printf::FIFO_BYTES;
        let exact = done.stop.is_none()
            && done.events.dropped == 0
            && done.printf.dropped == 0
            && fits
            && self.stats.steps.saturating_add(done.stats.steps) < self.setup.max_steps
            && !done
                .taken
                .conflicts(&before.written, &before.touched, done.log.is_some());
        if !exact {
            return false;
        }
        done.patch
            .apply(&mut self.mem.allocs, self.checks.as_deref_mut());
        if let (Some(log), Some(san)) = (&done.log, self.checks.as_deref_mut()) {
            // Its reads of what it did not write, recorded again in its
            // order after the earlier groups' (the granules it wrote came
            // with the patch, its reads of them included).
            let written = &done.taken.written;
            san.replay_reads(log, |a, g| {
                written.get(a).is_some_and(|w| covers(w, g, g + 1))
            });
        }
        self.events.merge(&done.events);
        self.mem.printf.merge(&done.printf);
        self.stats.merge(&done.stats);
        true
    }

    /// The workers of `jobs` worth their copies of memory when each group
    /// takes about `per_group` steps and `rest` groups remain: forking a
    /// worker copies global memory (and its shadow, with the race check),
    /// so a launch of big arrays whose groups do little (a `saxpy` over
    /// millions of floats) runs serially rather than spend more copying
    /// than the workers would save. A worker is kept while the copies of
    /// all of them cost at most an eighth of the work they share, a step
    /// counted as the cost of copying [`COPY_BYTES_PER_STEP`] bytes.
    pub(super) fn worthwhile(&self, jobs: usize, per_group: u64, rest: u64) -> usize {
        let copy = self.fork_bytes() / COPY_BYTES_PER_STEP;
        let work = per_group.saturating_mul(rest);
        let worth = work / copy.saturating_mul(8).max(1);
        jobs.min(usize::try_from(worth).unwrap_or(usize::MAX))
            .max(1)
    }

    /// The bytes a worker copies when forked: global memory and, with the
    /// race check on, its shadow.
    fn fork_bytes(&self) -> u64 {
        let races = self.checks.as_ref().is_some_and(|s| s.on.races);
        let per_byte = 1 + if races {
            crate::sim::SHADOW_PER_GLOBAL_BYTE as u64
        } else {
            0
        };
        let bytes: u64 = self.mem.allocs.iter().map(|a| a.data.len() as u64).sum();
        bytes.saturating_mul(per_byte)
    }

    /// The workers of `jobs` the memory available affords: each has a
    /// copy of global memory and, with the race check on, of its shadow;
    /// the logs of reads take at most twice [`LOG_BYTES_PER_BATCH`] (or
    /// [`MIN_LOG_BYTES`] a group).
    pub(super) fn affordable(&self, jobs: usize) -> usize {
        let races = self.checks.as_ref().is_some_and(|s| s.on.races);
        let need = |n: usize| {
            let logs = if races {
                (log_limit(n) as u64).saturating_mul((2 * n * BATCH_PER_JOB) as u64)
            } else {
                0
            };
            self.fork_bytes()
                .saturating_mul(n as u64)
                .saturating_add(logs)
        };
        let mut n = jobs;
        while n > 1 && crate::launch::memory::check(need(n)).is_err() {
            n /= 2;
        }
        n
    }

    /// [`Machine::run`] with `jobs` workers (at least 2) over a grid of
    /// `ngroups` groups.
    pub(super) fn run_parallel(&mut self, ngroups: [u32; 3], jobs: usize, start: u64) {
        let total = ngroups.iter().map(|&n| u64::from(n)).product::<u64>();
        let id = |seq: u64| group_id(ngroups, seq);
        let races = self.checks.as_ref().is_some_and(|s| s.on.races);
        self.mem.track = Some(Box::new(Track::new(races, self.mem.allocs.len())));
        let mut workers: Vec<Machine<'p>> = (0..jobs).map(|_| self.fork()).collect();
        let batch = jobs * BATCH_PER_JOB;
        let log_bytes = log_limit(jobs);
        let mut next = start;
        let mut before = Before::new(self.mem.allocs.len());
        // Logs merged already, whose memory the next groups' logs reuse
        // (at most a batch's).
        let spares: Mutex<Vec<ReadLog>> = Mutex::new(Vec::new());
        while next < total {
            let ids: Vec<[u32; 3]> = (next..(next + batch as u64).min(total)).map(id).collect();
            let ids = ids.as_slice();
            let steps = self.stats.steps;
            let budget = self.speculation_budget();
            let base: &Machine<'p> = self;
            let counter = AtomicUsize::new(0);
            let spares = &spares;
            // The first group that stopped: the serial run ends there (or
            // runs the later groups itself), so none after it starts.
            let stopped = AtomicUsize::new(usize::MAX);
            let results: Vec<(usize, Done)> = std::thread::scope(|s| {
                let handles: Vec<_> = workers
                    .iter_mut()
                    .map(|worker| {
                        let (counter, stopped) = (&counter, &stopped);
                        s.spawn(move || {
                            let mut out = Vec::new();
                            loop {
                                let k = counter.fetch_add(1, Ordering::Relaxed);
                                let Some(&id) = ids.get(k) else { break };
                                if k > stopped.load(Ordering::Relaxed) {
                                    break;
                                }
                                let spare = spares.lock().ok().and_then(|mut v| v.pop());
                                let done =
                                    worker.speculate(id, steps, base, budget, log_bytes, spare);
                                if done.stop.is_some() && !done.abandoned {
                                    stopped.fetch_min(k, Ordering::Relaxed);
                                }
                                out.push((k, done));
                            }
                            out
                        })
                    })
                    .collect();
                // A worker that panicked leaves its groups to the serial
                // run below (which meets the same panic).
                handles
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            let mut done: Vec<Option<Done>> = ids.iter().map(|_| None).collect();
            for (k, d) in results {
                if let Some(slot) = done.get_mut(k) {
                    *slot = Some(d);
                }
            }
            before.clear();
            let mut reruns = 0;
            for (&id, d) in ids.iter().zip(done) {
                if let Some(mut d) = d.filter(|d| self.commit(d, &before)) {
                    before.add(&d.taken);
                    self.stats.groups_parallel += 1;
                    if let (Some(mut log), Ok(mut v)) = (d.log.take(), spares.lock()) {
                        log.clear();
                        v.push(log);
                    }
                } else {
                    // The serial run of the group, on the machine itself.
                    reruns += 1;
                    self.stats.groups_serial += 1;
                    self.run_group(id);
                    self.finish_cluster();
                    if let Some(t) = self.mem.track.as_mut() {
                        before.add(&t.take());
                    }
                    if self.stop.is_some() {
                        self.mem.track = None;
                        return;
                    }
                }
                self.stats.clusters_done += 1;
            }
            next += ids.len() as u64;
            // The workers catch up with what the batch changed.
            let changed = before.changed(races);
            for wk in &mut workers {
                copy_dirty(
                    &changed,
                    (&self.mem.allocs, self.checks.as_deref()),
                    (&mut wk.mem.allocs, wk.checks.as_deref_mut()),
                );
            }
            // Groups that depend on each other (a counter every group
            // increments) run again one after another: the rest of the
            // launch is run serially when most of a batch did.
            if reruns * 2 > ids.len() {
                self.mem.track = None;
                for seq in next..total {
                    self.stats.groups_serial += 1;
                    self.run_group(id(seq));
                    self.finish_cluster();
                    if self.stop.is_some() {
                        return;
                    }
                    self.stats.clusters_done += 1;
                }
                return;
            }
        }
        self.mem.track = None;
    }
}

fn add(to: &mut [Bits], from: &[Sparse]) {
    for (t, f) in to.iter_mut().zip(from) {
        t.union(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granule_sets_intersect_union_and_walk_runs() {
        let mut a = Bits::default();
        a.set(3, 70);
        a.set(200, 201);
        let runs: Vec<_> = ranges(&a.sparse()).collect();
        assert_eq!(runs, vec![(12, 256), (256, 280), (800, 804)]);
        let mut b = Bits::default();
        b.set(70, 100);
        assert!(!a.intersects(&b.sparse()));
        b.set(69, 70);
        assert!(a.intersects(&b.sparse()) && b.intersects(&a.sparse()));
        let mut c = Bits::default();
        c.union(&a.sparse());
        assert_eq!(ranges(&c.sparse()).collect::<Vec<_>>(), runs);
        c.clear();
        assert_eq!(ranges(&c.sparse()).count(), 0);
        assert!(!c.intersects(&a.sparse()));
    }

    #[test]
    fn reads_conflict_with_earlier_reads_only_when_not_replayed() {
        for races in [false, true] {
            let mut t = Track::new(races, 2);
            // Reads granule 2 of allocation 1, writes granule 0 of 0.
            t.note_global(1, 8, 4, false);
            t.note_global(0, 0, 1, true);
            let taken = t.take();
            let changed: usize = taken.changed().iter().map(|b| ranges(b).count()).sum();
            assert_eq!(changed, 1 + usize::from(races));
            let none = vec![Bits::default(); 2];
            let mut read = vec![Bits::default(); 2];
            read[1].set(2, 3);
            // An earlier group read what this one read: replayed, or with
            // no race check, not a conflict; copied (no log), one.
            assert!(!taken.conflicts(&none, &read, true));
            assert_eq!(taken.conflicts(&none, &read, false), races);
            // An earlier group wrote what it read: a conflict.
            assert!(taken.conflicts(&read, &read, true));
            // An earlier group read what it wrote: the race check's
            // conflict (the write is checked against that read).
            let mut read0 = vec![Bits::default(); 2];
            read0[0].set(0, 1);
            assert_eq!(taken.conflicts(&none, &read0, true), races);
            read0[0].clear();
            read0[0].set(1, 2);
            assert!(!taken.conflicts(&read0, &read0, false));
            // Taking empties the sets.
            assert!(t.take().touched.iter().all(Vec::is_empty));
        }
    }

    #[test]
    fn covers_granule_ranges_across_words() {
        let mut a = Bits::default();
        a.set(60, 200);
        a.set(300, 301);
        let s = a.sparse();
        assert!(covers(&s, 60, 200) && covers(&s, 64, 128) && covers(&s, 300, 301));
        assert!(covers(&s, 5, 5));
        assert!(!covers(&s, 59, 61) && !covers(&s, 199, 201) && !covers(&s, 301, 302));
        assert!(!covers(&s, 1 << 40, (1 << 40) + 1));
    }
}
