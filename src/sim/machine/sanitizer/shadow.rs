//! Shadow memory for the race check: per 4-byte granule of simulated
//! memory, `K` slots, each one access not yet superseded — its agent,
//! clock, cluster, pc, the bytes of the granule it touched, and whether it
//! wrote, was atomic (with its scope) or came from the async proxy.
//!
//! An access is checked against every slot it overlaps (FastTrack's
//! comparisons: a conflicting access whose epoch the accessor's clock does
//! not cover is a race), then recorded: a write supersedes the slots it
//! covers (they are ordered before it, or were just reported), a read
//! supersedes the reads ordered before it (what races with them races with
//! it too), and what remains are the last write and the reads not ordered
//! with each other. When more than `K` such accesses overlap, a read is
//! forgotten — which can hide a race with it, never invent one. Each slot
//! is 16 bytes: `K = 4` for shared memory (16 bytes of shadow per byte),
//! `K = 2` for global memory (8 per byte).

use super::clock::{Intervals, Snap, TClock};
use crate::sim::decode::sem::Scope;

/// Slot word 3: `agent << 16 | meta`; meta bits:
const MASK: u32 = 0xf;
pub const WRITE: u32 = 1 << 4;
pub const ATOMIC: u32 = 1 << 5;
pub const ASYNC: u32 = 1 << 6;
const SCOPE_SHIFT: u32 = 7;

/// A slot: `[cluster sequence number, clock, pc, agent << 16 | meta]`.
pub type Slot = [u32; 4];

pub fn slot_agent(s: &Slot) -> u32 {
    s[3] >> 16
}

pub fn slot_meta(s: &Slot) -> u32 {
    s[3] & 0xffff
}

pub fn scope_bits(s: Scope) -> u32 {
    (s as u32) << SCOPE_SHIFT
}

pub fn slot_scope(s: &Slot) -> Scope {
    match (slot_meta(s) >> SCOPE_SHIFT) & 3 {
        0 => Scope::Cta,
        1 => Scope::Cluster,
        2 => Scope::Gpu,
        _ => Scope::Sys,
    }
}

/// Whose clocks an access is judged by.
pub enum View<'a> {
    /// A thread (agent `me`).
    Thread(&'a TClock, u32),
    /// An asynchronous agent: the clocks its issuer had at the issue.
    Snapshot(&'a Snap),
}

impl View<'_> {
    #[inline]
    fn vc(&self, u: u32) -> u32 {
        match self {
            View::Thread(c, me) => c.view(*me, u),
            View::Snapshot(s) => s.vc(u),
        }
    }

    #[inline]
    fn avc(&self, u: u32) -> u32 {
        match self {
            View::Thread(c, me) => c.async_view(*me, u),
            View::Snapshot(s) => s.avc(u),
        }
    }

    #[inline]
    fn old(&self) -> &Intervals {
        match self {
            View::Thread(c, _) => &c.old,
            View::Snapshot(s) => &s.old,
        }
    }
}

/// One access to check and record.
pub struct Acc<'a> {
    pub agent: u32,
    /// The epoch it is recorded with.
    pub clock: u32,
    pub pc: u32,
    /// Writes (stores, read-modify-writes, copies' destinations); else a
    /// read.
    pub write: bool,
    pub atomic: bool,
    pub scope: Scope,
    pub async_proxy: bool,
    /// The agent is a thread (program order orders its accesses).
    pub thread: bool,
    /// The CTA rank of a thread (atomic scopes).
    pub rank: u32,
    /// A plain store that leaves the bytes as they are (it writes the
    /// value they hold): with an earlier plain store of the same bytes by
    /// another lane of its warp at the same instruction it makes one
    /// warp-wide store, not a race (see [`warp_wide_store`]).
    pub same_store: bool,
    pub view: View<'a>,
}

/// Two plain stores of the same value to the same bytes by lanes of one
/// warp at one instruction are one warp-wide store: CUDA defines what a
/// warp's non-atomic instruction does when several of its threads write
/// one location (the location is written, by an unspecified one of them)
/// and PTX's memory model gives a racing read one of the values written,
/// which are equal. So they are not reported as a race with each other
/// (cooperative groups' multi-warp collectives have every lane of a warp
/// store the warp's result into its slot). Stores of different values,
/// or at different instructions, or by lanes of different warps, are
/// races as ever: a warp's lanes are not in lockstep.
#[inline]
fn warp_wide_store(acc: &Acc, s: &Slot, ctx: Ctx) -> bool {
    let meta = slot_meta(s);
    let (a, me, n) = (slot_agent(s), acc.agent, ctx.nthreads.max(1));
    acc.same_store
        && acc.thread
        && meta & WRITE != 0
        && meta & (ATOMIC | ASYNC) == 0
        && s[0] == ctx.seq
        && s[2] == acc.pc
        && a != me
        && a / n == me / n
        && (a % n) / 32 == (me % n) / 32
}

/// The cluster being run.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub seq: u32,
    /// Threads per CTA (a thread agent's rank is `agent / nthreads`).
    pub nthreads: u32,
}

/// An access the checked one races with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub slot: Slot,
    /// Ordered, but not for the async proxy: `fence.proxy.async` missing.
    pub proxy: bool,
    /// The byte offset of the granule where it was found.
    pub granule: u64,
}

impl Acc<'_> {
    #[inline]
    fn ordered(&self, s: &Slot, ctx: Ctx, proxy: bool) -> bool {
        let (seq, clock, agent) = (s[0], s[1], slot_agent(s));
        if seq != ctx.seq {
            return self.view.old().contains(seq);
        }
        if self.thread && agent == self.agent {
            return true;
        }
        let v = if proxy {
            self.view.avc(agent)
        } else {
            self.view.vc(agent)
        };
        clock <= v
    }

    /// Two atomic accesses that may not race: each one's scope includes
    /// the other's thread.
    fn strong(&self, s: &Slot, ctx: Ctx) -> bool {
        let ss = slot_scope(s);
        if s[0] != ctx.seq {
            return ss >= Scope::Gpu && self.scope >= Scope::Gpu;
        }
        let same_cta = ctx.nthreads > 0 && slot_agent(s) / ctx.nthreads == self.rank;
        same_cta || (ss >= Scope::Cluster && self.scope >= Scope::Cluster)
    }

    fn meta(&self, mask: u32) -> u32 {
        let mut m = mask;
        if self.write {
            m |= WRITE;
        }
        if self.atomic {
            m |= ATOMIC | scope_bits(self.scope);
        }
        if self.async_proxy {
            m |= ASYNC;
        }
        m
    }
}

/// The shadow of one memory (a CTA's shared memory, a global allocation).
#[derive(Clone, Debug)]
pub struct Shadow<const K: usize> {
    cells: Vec<[Slot; K]>,
    tick: usize,
}

impl<const K: usize> Shadow<K> {
    /// The shadow of `bytes` bytes (`None` when it cannot be allocated).
    pub fn new(bytes: u64) -> Option<Shadow<K>> {
        let n = usize::try_from(bytes.div_ceil(4)).ok()?;
        let mut cells = Vec::new();
        cells.try_reserve_exact(n).ok()?;
        cells.resize(n, [[0u32; 4]; K]);
        Some(Shadow { cells, tick: 0 })
    }

    /// Restarts the count that picks which read a full granule forgets
    /// (each cluster counts its own, so that clusters run in any order
    /// forget the same).
    pub fn restart(&mut self) {
        self.tick = 0;
    }

    /// The slots of granules `lo..hi`.
    pub fn cells(&self, lo: usize, hi: usize) -> Option<&[[Slot; K]]> {
        self.cells.get(lo..hi)
    }

    /// Sets the slots of the granules from `lo` (empty ones for `None`).
    pub fn set_cells(&mut self, lo: usize, hi: usize, cells: Option<&[[Slot; K]]>) {
        let Some(dst) = self.cells.get_mut(lo..hi) else {
            return;
        };
        match cells {
            Some(src) if src.len() == dst.len() => dst.copy_from_slice(src),
            _ => dst.fill([[0; 4]; K]),
        }
    }

    /// Bytes of shadow per simulated byte.
    pub const BYTES_PER_BYTE: usize = K * 16 / 4;

    /// The count that picks which read a full granule forgets, as the
    /// next access's first granule takes it.
    pub fn tick(&self) -> usize {
        self.tick
    }

    /// Records again a read that [`Shadow::access`] recorded elsewhere
    /// (`--jobs`: a group's reads of granules other groups read too,
    /// merged in the serial order), its first granule at count `tick`, on
    /// the granules `keep` names: the cells change as they would have had
    /// the read happened here. What it races with is not looked for (it
    /// was, where it ran: a read races only with writes, which the cells
    /// it is replayed onto have as they were there).
    pub fn replay(
        &mut self,
        off: u64,
        size: u64,
        acc: &Acc,
        ctx: Ctx,
        tick: usize,
        keep: impl Fn(u64) -> bool,
    ) {
        if size == 0 || acc.write {
            return;
        }
        let end = off.saturating_add(size);
        let first = off / 4;
        for g in first..=(end - 1) / 4 {
            if !keep(g) {
                continue;
            }
            let lo = off.max(g * 4) - g * 4;
            let hi = end.min(g * 4 + 4) - g * 4;
            let m = ((1u32 << hi) - 1) & !((1u32 << lo) - 1);
            let t = tick.wrapping_add((g - first) as usize);
            if let Some(cell) = self.cells.get_mut(g as usize) {
                one(cell, m, acc, ctx, t);
            }
        }
    }

    /// Checks and records an access of `size` bytes at `off`; the first
    /// access it races with.
    pub fn access(&mut self, off: u64, size: u64, acc: &Acc, ctx: Ctx) -> Option<Conflict> {
        if size == 0 {
            return None;
        }
        let end = off.saturating_add(size);
        let mut found = None;
        let first = off / 4;
        let last = (end - 1) / 4;
        for g in first..=last {
            let lo = off.max(g * 4) - g * 4;
            let hi = end.min(g * 4 + 4) - g * 4;
            let m = ((1u32 << hi) - 1) & !((1u32 << lo) - 1);
            let tick = self.tick;
            self.tick = self.tick.wrapping_add(1);
            let Some(cell) = self.cells.get_mut(g as usize) else {
                continue;
            };
            if let Some(c) = one(cell, m, acc, ctx, tick) {
                if found.is_none() {
                    found = Some(Conflict {
                        granule: g * 4,
                        ..c
                    });
                }
            }
        }
        found
    }
}

/// Checks and records an access to the bytes `m` of one granule.
#[inline]
fn one<const K: usize>(
    cell: &mut [Slot; K],
    m: u32,
    acc: &Acc,
    ctx: Ctx,
    tick: usize,
) -> Option<Conflict> {
    let mut found = None;
    let mut ord = [true; K];
    for (i, s) in cell.iter().enumerate() {
        let meta = slot_meta(s);
        if meta & MASK & m == 0 {
            continue;
        }
        let o = acc.ordered(s, ctx, false);
        if let Some(x) = ord.get_mut(i) {
            *x = o;
        }
        let sw = meta & WRITE != 0;
        if !sw && !acc.write {
            continue;
        }
        if meta & ATOMIC != 0 && acc.atomic && acc.strong(s, ctx) {
            continue;
        }
        if found.is_some() || warp_wide_store(acc, s, ctx) {
            continue;
        }
        if !o {
            found = Some(Conflict {
                slot: *s,
                proxy: false,
                granule: 0,
            });
        } else if acc.async_proxy
            && !acc.write
            && sw
            && meta & ASYNC == 0
            && !acc.ordered(s, ctx, true)
        {
            found = Some(Conflict {
                slot: *s,
                proxy: true,
                granule: 0,
            });
        }
    }
    // Supersede.
    for (i, s) in cell.iter_mut().enumerate() {
        let meta = slot_meta(s);
        let sm = meta & MASK;
        if sm & m == 0 {
            continue;
        }
        let o = ord.get(i).copied().unwrap_or(true);
        let sw = meta & WRITE != 0;
        let drop = if acc.write && !acc.atomic {
            true
        } else if acc.write {
            o || meta & ATOMIC == 0
        } else {
            !sw && o
        };
        if drop {
            let rest = sm & !m;
            if rest == 0 {
                *s = [0; 4];
            } else {
                s[3] = (s[3] & !MASK) | rest;
            }
        }
    }
    // Record.
    let new: Slot = [ctx.seq, acc.clock, acc.pc, (acc.agent << 16) | acc.meta(m)];
    if let Some(s) = cell.iter_mut().find(|s| slot_meta(s) & MASK == 0) {
        *s = new;
        return found;
    }
    let start = tick % K;
    let victim = (0..K)
        .map(|k| (start + k) % K)
        .find(|&i| cell.get(i).is_some_and(|s| slot_meta(s) & WRITE == 0))
        .or(if acc.write { Some(start) } else { None });
    if let Some(s) = victim.and_then(|v| cell.get_mut(v)) {
        *s = new;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::machine::sanitizer::clock::SyncClock;

    fn acc(c: &TClock, me: u32, write: bool) -> Acc<'_> {
        Acc {
            agent: me,
            clock: c.own,
            pc: me,
            write,
            atomic: false,
            scope: Scope::Gpu,
            async_proxy: false,
            thread: true,
            rank: 0,
            same_store: false,
            view: View::Thread(c, me),
        }
    }

    #[test]
    fn a_warp_wide_store_of_one_value_is_not_a_race() {
        let ctx = Ctx {
            seq: 0,
            nthreads: 64,
        };
        let mut sh: Shadow<4> = Shadow::new(64).expect("shadow");
        let (t0, t1, t40) = (TClock::new(), TClock::new(), TClock::new());
        let store = |c, me, same| Acc {
            pc: 9,
            same_store: same,
            ..acc(c, me, true)
        };
        // Lanes 0 and 1 store at pc 9: the same value is one store.
        assert_eq!(sh.access(0, 4, &store(&t0, 0, false), ctx), None);
        assert_eq!(sh.access(0, 4, &store(&t1, 1, true), ctx), None);
        // A different value at the same pc is a race.
        assert!(sh.access(0, 4, &store(&t0, 0, false), ctx).is_some());
        // So is the same value from another warp (lane 40).
        assert!(sh.access(0, 4, &store(&t40, 40, true), ctx).is_some());
        // And the same value at another instruction.
        assert_eq!(sh.access(8, 4, &store(&t0, 0, false), ctx), None);
        let other = Acc {
            pc: 10,
            ..store(&t1, 1, true)
        };
        assert!(sh.access(8, 4, &other, ctx).is_some());
    }

    #[test]
    fn write_then_unordered_read_races_and_a_barrier_orders_it() {
        let ctx = Ctx {
            seq: 0,
            nthreads: 64,
        };
        let mut sh: Shadow<4> = Shadow::new(64).expect("shadow");
        let mut t0 = TClock::new();
        let mut t1 = TClock::new();
        assert_eq!(sh.access(8, 4, &acc(&t0, 0, true), ctx), None);
        let c = sh.access(8, 4, &acc(&t1, 1, false), ctx).expect("a race");
        assert_eq!(slot_agent(&c.slot), 0);
        // Byte-exact: a neighbour's bytes do not conflict.
        assert_eq!(sh.access(12, 4, &acc(&t1, 1, true), ctx), None);
        let mut bar = SyncClock::default();
        t0.release_into(0, &mut bar);
        t1.release_into(1, &mut bar);
        t0.acquire_superset(&mut bar);
        t1.acquire_superset(&mut bar);
        // After the barrier, t0 overwrites what t1 read: ordered.
        assert_eq!(sh.access(8, 4, &acc(&t0, 0, true), ctx), None);
        assert_eq!(sh.access(8, 4, &acc(&t0, 0, false), ctx), None);
        // t1 reads t0's new write without a barrier: a race.
        assert!(sh.access(8, 4, &acc(&t1, 1, false), ctx).is_some());
    }

    #[test]
    fn concurrent_reads_then_a_write() {
        let ctx = Ctx {
            seq: 0,
            nthreads: 64,
        };
        let mut sh: Shadow<4> = Shadow::new(16).expect("shadow");
        let clocks: Vec<TClock> = (0..3).map(|_| TClock::new()).collect();
        for (i, c) in clocks.iter().enumerate() {
            assert_eq!(sh.access(0, 4, &acc(c, i as u32, false), ctx), None);
        }
        let w = TClock::new();
        let c = sh.access(0, 4, &acc(&w, 7, true), ctx).expect("war");
        assert_ne!(slot_agent(&c.slot), 7);
    }
}
