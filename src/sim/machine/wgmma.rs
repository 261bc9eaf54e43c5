//! Warpgroup matrix multiply (`wgmma`, PTX ISA §9.7.15) and register
//! budgets (`setmaxnreg`, §9.7.19.5): the warp-collective instructions of
//! Hopper's tensor cores, executed when the 32 lanes of a warp have
//! arrived (`warp.rs`).
//!
//! **wgmma.** Each warp issues its part of a warpgroup operation: the 16
//! rows `16w..16w+15` of D (w its warp in the warpgroup), from the same rows
//! of A and all of B. The first warp of its warpgroup to issue the n-th
//! wgmma makes the *instance*: the descriptors decoded (§9.7.15.5.1.2),
//! the operands read from shared memory once and converted exactly to f64
//! (tf32 truncated to its 10 fraction bits, the 8-bit floats decoded), the
//! 16-byte chunks it reads watched; the other warps must issue the same
//! instruction with the same descriptors and scale-d (else S0026). A
//! warp's operations are pending until a `wgmma.wait_group` of that warp
//! covers their commit group: then (and only then, per warp) each output
//! element becomes `round(D + Σ_k A·B)` — the K products summed in f64 and
//! D added, then rounded once to the accumulator type (integers exactly,
//! wrapping or with `.satfinite` saturating). Until then its accumulator
//! and A-fragment registers may not be touched (S0023) and the shared
//! memory it reads may not be written (S0024).
//!
//! **setmaxnreg.** A CTA's register pool holds `E` registers per thread,
//! `E` the count at entry; each warp starts with `E`. `.dec` returns
//! registers to the pool, `.inc` blocks until the pool has them. A
//! kernel that does not pin its entry count has its `setmaxnreg` dropped
//! by ptxas (C7508): then they do nothing here either.

use super::events::{DescWhy, FenceWhy, Issue};
use super::fence::Before;
use super::sanitizer::fast::FastMap as HashMap;
use super::sched::After;
use super::state::{Block, PoolWait, RegPool, Rendezvous, ThreadState};
use super::{Machine, Setup};
use crate::fp8::Fp8;
use crate::sim::decode::ops::{SyncOp, WgA, WgIn, WgOut, Wgmma};
use crate::sim::machine::float;

/// The most wgmma operations a warp may have pending: issuing more
/// completes the oldest first (the hardware may complete an operation any
/// time after its issue), so a loop that never waits runs in bounded
/// memory.
const MAX_PENDING: usize = 256;

/// The wgmma operations of the cluster being run.
#[derive(Clone, Debug, Default)]
pub struct WgState {
    pub ops: HashMap<u64, WgOp>,
    pub instances: HashMap<u64, Instance>,
    pub next: u64,
}

/// One warp's part of a wgmma.
#[derive(Clone, Debug)]
pub struct WgOp {
    pub instance: u64,
    pub pc: u32,
    /// The A fragment of an RS wgmma: 4 registers of each of the 32 lanes.
    pub a_regs: Vec<u32>,
}

/// A warpgroup's wgmma: its operands, read once.
#[derive(Clone, Debug)]
pub struct Instance {
    pub pc: u32,
    pub rank: u32,
    pub desc_a: Option<u64>,
    pub desc_b: u64,
    pub scale_d: bool,
    /// A (64 rows of K, SS only) and B (N rows of K), scaled.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    /// The 16-byte chunks of shared memory read.
    pub chunks: Vec<u32>,
    /// Warps of the warpgroup, and those that issued and completed it.
    pub warps: u32,
    pub issued: u32,
    pub done: u32,
}

impl Setup<'_> {
    /// The register pool of a CTA of `threads` threads.
    pub fn pool(&self, threads: u32) -> RegPool {
        let a = &self.kernel.attrs;
        let per_sm = a.minnctapersm.unwrap_or(1).max(1);
        let budget = 65536 / (threads.max(1).saturating_mul(per_sm));
        let mut entry = 255.min(budget / 8 * 8);
        if let Some(r) = a.maxnreg {
            entry = entry.min(r / 8 * 8);
        }
        // ptxas lowers the entry count to the largest `setmaxnreg` below
        // the launch's bound (hopper.md §4.3).
        let largest = self
            .prog
            .syncs
            .iter()
            .filter_map(|s| match s {
                SyncOp::SetMaxNreg { n, .. } => Some(*n),
                _ => None,
            })
            .max();
        if let Some(n) = largest {
            entry = entry.min(n);
        }
        let pinned = a.maxnreg.is_some()
            || ((a.reqntid.is_some() || a.maxntid.is_some()) && a.minnctapersm.is_some());
        RegPool {
            enabled: pinned && largest.is_some(),
            entry,
            free: 0,
            waiting: Vec::new(),
        }
    }
}

/// An element of an operand, exactly.
fn element(ty: WgIn, bytes: &[u8]) -> f64 {
    let b = |i: usize| bytes.get(i).copied().unwrap_or(0);
    match ty {
        WgIn::F16 => f64::from(float::f16_to_f32(u16::from_le_bytes([b(0), b(1)]))),
        WgIn::BF16 => f64::from(float::bf16_to_f32(u16::from_le_bytes([b(0), b(1)]))),
        WgIn::TF32 => {
            // "The instruction will truncate lower 13 bits of the .tf32 inputs."
            let w = u32::from_le_bytes([b(0), b(1), b(2), b(3)]) & !0x1fff;
            f64::from(f32::from_bits(w))
        }
        WgIn::E4M3 => Fp8::E4M3.decode(b(0)),
        WgIn::E5M2 => Fp8::E5M2.decode(b(0)),
        WgIn::S8 => f64::from(b(0) as i8),
        WgIn::U8 => f64::from(b(0)),
    }
}

/// A decoded shared-memory matrix descriptor (PTX ISA §9.7.15.5.1.2.2).
#[derive(Clone, Copy, Debug)]
struct Desc {
    start: u64,
    lbo: u64,
    sbo: u64,
    base_offset: u64,
    /// 16-byte chunks in a swizzle row: 1 (none), 2, 4, 8.
    w: u64,
}

impl Desc {
    fn of(d: u64) -> Desc {
        Desc {
            start: (d & 0x3fff) << 4,
            lbo: ((d >> 16) & 0x3fff) << 4,
            sbo: ((d >> 32) & 0x3fff) << 4,
            base_offset: (d >> 49) & 7,
            w: match (d >> 62) & 3 {
                1 => 8,
                2 => 4,
                3 => 2,
                _ => 1,
            },
        }
    }

    /// The shared address of element `(r, k)` (r along M or N, k along K)
    /// of a matrix of `es`-byte elements, K-major or MN-major, in the
    /// canonical layouts of §9.7.15.5.1.2.1; then swizzled.
    fn addr(&self, r: u64, k: u64, es: u64, mn_major: bool) -> u64 {
        let t = 16 / es;
        let w = self.w;
        let a = match (mn_major, w) {
            (false, 1) => {
                self.start + (r % 8) * 16 + (r / 8) * self.sbo + (k / t) * self.lbo + (k % t) * es
            }
            (false, _) => {
                self.start + (r % 8) * 16 * w + (r / 8) * self.sbo + (k / t) * 16 + (k % t) * es
            }
            (true, 1) => {
                self.start + (r % t) * es + (r / t) * self.sbo + (k % 8) * 16 + (k / 8) * self.lbo
            }
            (true, _) => {
                self.start
                    + (r % t) * es
                    + ((r / t) % w) * 16
                    + (r / (t * w)) * self.lbo
                    + (k % 8) * 16 * w
                    + (k / 8) * self.sbo
            }
        };
        a ^ (((a >> 7) & (w - 1)) << 4)
    }
}

impl Machine<'_> {
    /// The operation of a warp-collective rendezvous whose 32 lanes have
    /// arrived: `t` is the last to arrive (already advanced); the others
    /// are woken here unless the warp blocks (`setmaxnreg.inc`).
    pub(super) fn complete_collective(&mut self, t: u32, warp: u32, r: &Rendezvous) -> After {
        let prog = self.setup.prog;
        let Some(&(_, pc)) = r.members.first() else {
            return After::Continue;
        };
        let op = prog
            .code
            .get(pc as usize)
            .and_then(|i| prog.syncs.get(i.aux as usize));
        let mut after = After::Continue;
        match op {
            Some(SyncOp::Wgmma(w)) => self.wg_issue(warp, pc, w, r),
            Some(SyncOp::WgmmaCommit) => {
                if let Some(wp) = self.cluster.warps.get_mut(warp as usize) {
                    let g = std::mem::take(&mut wp.wg.uncommitted);
                    wp.wg.groups.push_back(g);
                }
            }
            Some(SyncOp::WgmmaWait { n }) => {
                self.wg_wait(warp, *n as usize);
            }
            Some(SyncOp::SetMaxNreg { inc, n }) if !self.setmaxnreg(warp, pc, *inc, *n, r) => {
                after = After::Blocked(Block::RegPool);
            }
            Some(SyncOp::Matrix { .. }) => self.matrix(warp, pc, r),
            _ => {}
        }
        self.sched.epoch += 1;
        if after == After::Continue {
            for &(m, _) in &r.members {
                if m != t {
                    self.wake(m);
                }
            }
        }
        after
    }

    /// The warpgroup of warp `warp` (its index among the CTA's warps / 4)
    /// and its rank and place in it.
    fn warpgroup(&self, warp: u32) -> (u32, u32, u32) {
        let Some(w) = self.cluster.warps.get(warp as usize) else {
            return (0, 0, 0);
        };
        let Some(th) = self.cluster.threads.get(w.first_thread as usize) else {
            return (0, 0, 0);
        };
        let in_cta = th.tid / 32;
        (th.rank, in_cta / 4, in_cta % 4)
    }

    /// Warps of the CTA in warpgroup `g`.
    fn warps_in_group(&self, g: u32) -> u32 {
        let b = self.setup.block;
        let warps = (b[0] * b[1] * b[2]).div_ceil(32);
        warps.saturating_sub(4 * g).min(4)
    }

    /// Records a register issue once per warp, at its first lane.
    fn record_warp(&mut self, r: &Rendezvous, pc: u32, issue: Issue) {
        if let Some(&(t, _)) = r.members.first() {
            self.record(t, pc, issue);
        }
    }

    fn wg_issue(&mut self, warp: u32, pc: u32, w: &Wgmma, r: &Rendezvous) {
        let prog = self.setup.prog;
        let lists = &prog.lists;
        // Every lane of the warp at the same instruction with the same
        // descriptors and scale-d.
        let value = |m: &Machine, t: u32, slot: u32| m.reg(t, slot);
        let (t0, _) = r.members.first().copied().unwrap_or((0, 0));
        let desc_a = match w.a {
            WgA::Desc(s) => Some(value(self, t0, s)),
            WgA::Regs(_) => None,
        };
        let desc_b = value(self, t0, w.b);
        let scale_of = |m: &Machine, t: u32| {
            let (slot, neg) = w.scale_d;
            (m.reg(t, slot) != 0) != neg
        };
        let scale_d = scale_of(self, t0);
        let lanes_agree = r.members.iter().all(|&(t, p)| {
            p == pc
                && desc_a
                    == (match w.a {
                        WgA::Desc(s) => Some(value(self, t, s)),
                        WgA::Regs(_) => None,
                    })
                && value(self, t, w.b) == desc_b
                && scale_of(self, t) == scale_d
        });
        if !lanes_agree {
            self.record_warp(r, pc, Issue::WgmmaDisagree { warps: false });
        }
        self.check_fence(r, pc, w);
        let (rank, group, _) = self.warpgroup(warp);
        let seq = match self.cluster.warps.get_mut(warp as usize) {
            Some(wp) => {
                wp.wg.issued += 1;
                wp.wg.issued - 1
            }
            None => return,
        };
        let existing = self
            .cluster
            .ctas
            .get(rank as usize)
            .and_then(|c| c.wg_seq.get(&(group, seq)))
            .copied();
        let id = match existing {
            Some(id) => {
                let same = self.cluster.wg.instances.get(&id).is_some_and(|i| {
                    i.pc == pc && i.desc_a == desc_a && i.desc_b == desc_b && i.scale_d == scale_d
                });
                if !same {
                    self.record_warp(r, pc, Issue::WgmmaDisagree { warps: true });
                }
                id
            }
            None => {
                let warps = self.warps_in_group(group);
                if warps < 4 {
                    self.record_warp(r, pc, Issue::WgmmaPartial { warps });
                }
                let inst = self.make_instance(r, pc, rank, w, desc_a, desc_b, scale_d, warps);
                let id = self.cluster.wg.next;
                self.cluster.wg.next += 1;
                if let Some(san) = &mut self.checks {
                    let lanes: Vec<u32> = r.members.iter().map(|m| m.0).collect();
                    san.wgmma_read(
                        &mut self.events,
                        id,
                        &lanes,
                        rank,
                        group,
                        warps,
                        pc,
                        &inst.chunks,
                    );
                }
                if let Some(c) = self.cluster.ctas.get_mut(rank as usize) {
                    for &ch in &inst.chunks {
                        let e = c.watch.entry(ch).or_insert((0, pc));
                        e.0 += 1;
                        e.1 = pc;
                    }
                    c.wg_seq.insert((group, seq), id);
                }
                self.cluster.wg.instances.insert(id, inst);
                id
            }
        };
        if let Some(i) = self.cluster.wg.instances.get_mut(&id) {
            i.issued += 1;
        }
        // The A fragment of an RS wgmma, read now: lane by lane.
        let mut a_regs = Vec::new();
        if let WgA::Regs(list) = w.a {
            let mut by_lane = [0u32; 32];
            for (lane, slot) in by_lane.iter_mut().enumerate() {
                *slot = lane as u32;
            }
            let first = self
                .cluster
                .warps
                .get(warp as usize)
                .map_or(0, |wp| wp.first_thread);
            for lane in 0..32u32 {
                for j in 0..4 {
                    let slot = lists.get(list as usize + j).copied().unwrap_or(0);
                    a_regs.push(self.reg(first + lane, slot) as u32);
                }
            }
        }
        let op_id = self.cluster.wg.next;
        self.cluster.wg.next += 1;
        self.cluster.wg.ops.insert(
            op_id,
            WgOp {
                instance: id,
                pc,
                a_regs,
            },
        );
        let pending = match self.cluster.warps.get_mut(warp as usize) {
            Some(wp) => {
                wp.wg.uncommitted.push(op_id);
                wp.wg.uncommitted.len() + wp.wg.groups.iter().map(Vec::len).sum::<usize>()
            }
            None => 0,
        };
        if pending > MAX_PENDING {
            self.complete_oldest(warp);
        }
        self.relock(warp);
    }

    /// The `wgmma.fence` rule (`fence.rs`, S0028), lane by lane: no lane
    /// may have accessed a register the wgmma uses since its last fence
    /// (nor a wgmma of another shape an accumulator); a lane found so is
    /// reported once and then counted as fenced. Then the wgmma's own
    /// uses are recorded.
    fn check_fence(&mut self, r: &Rendezvous, pc: u32, w: &Wgmma) {
        let prog = self.setup.prog;
        if self.wgregs.count == 0 {
            return;
        }
        let slots = |at: u32, n: u32| {
            prog.lists
                .get(at as usize..at.saturating_add(n) as usize)
                .unwrap_or(&[])
        };
        let acc = slots(w.d, w.nd);
        let a = match w.a {
            WgA::Regs(l) => slots(l, 4),
            WgA::Desc(_) => &[],
        };
        let shape = |at: u32| match prog
            .code
            .get(at as usize)
            .and_then(|i| prog.syncs.get(i.aux as usize))
        {
            Some(SyncOp::Wgmma(o)) => (o.n, o.k),
            _ => (w.n, w.k),
        };
        for &(t, _) in &r.members {
            let mut found = None;
            // The A fragment first: the registers an RS wgmma reads are
            // the ones a conversion wrote just before.
            for (&slot, is_acc) in a
                .iter()
                .map(|s| (s, false))
                .chain(acc.iter().map(|s| (s, true)))
            {
                let Some(number) = self.wgregs.number(slot) else {
                    continue;
                };
                let why = match self.cluster.fence.before(t, number) {
                    Before::Clean => None,
                    Before::NoFence => Some(FenceWhy::First),
                    Before::Access { pc, write } => Some(FenceWhy::Access { pc, write }),
                    Before::Wgmma { pc: other } => (is_acc && shape(other) != (w.n, w.k))
                        .then_some(FenceWhy::Shape { pc: other }),
                };
                if let Some(why) = why {
                    found = Some((slot, is_acc, why));
                    break;
                }
            }
            if let Some((slot, acc, why)) = found {
                self.record(t, pc, Issue::WgmmaFence { slot, acc, why });
                // One report per missing fence: the lane goes on as if
                // the fence were there.
                self.cluster.fence.assume_fenced(t);
            }
            for (&slot, is_acc) in acc
                .iter()
                .map(|s| (s, true))
                .chain(a.iter().map(|s| (s, false)))
            {
                if let Some(number) = self.wgregs.number(slot) {
                    self.cluster.fence.used(t, number, pc, is_acc);
                }
            }
        }
    }

    /// Decodes the operands of a new instance (recording a descriptor
    /// that is not a valid one).
    #[allow(clippy::too_many_arguments)]
    fn make_instance(
        &mut self,
        r: &Rendezvous,
        pc: u32,
        rank: u32,
        w: &Wgmma,
        desc_a: Option<u64>,
        desc_b: u64,
        scale_d: bool,
        warps: u32,
    ) -> Instance {
        let mut chunks = Vec::new();
        let k = u64::from(w.k);
        let a = match desc_a {
            Some(d) => self.read_operand(
                r,
                pc,
                rank,
                d,
                64,
                k,
                w.a_ty,
                w.trans_a,
                w.neg_a,
                &mut chunks,
                'A',
            ),
            None => Vec::new(),
        };
        let b = self.read_operand(
            r,
            pc,
            rank,
            desc_b,
            u64::from(w.n),
            k,
            w.b_ty,
            w.trans_b,
            w.neg_b,
            &mut chunks,
            'B',
        );
        chunks.sort_unstable();
        chunks.dedup();
        Instance {
            pc,
            rank,
            desc_a,
            desc_b,
            scale_d,
            a,
            b,
            chunks,
            warps,
            issued: 0,
            done: 0,
        }
    }

    /// `rows × k` elements of an operand through its descriptor, row-major
    /// in (r, k), negated when `neg`; the chunks read go to `chunks`.
    #[allow(clippy::too_many_arguments)]
    fn read_operand(
        &mut self,
        r: &Rendezvous,
        pc: u32,
        rank: u32,
        desc: u64,
        rows: u64,
        k: u64,
        ty: WgIn,
        mn_major: bool,
        neg: bool,
        chunks: &mut Vec<u32>,
        which: char,
    ) -> Vec<f64> {
        let d = Desc::of(desc);
        if d.base_offset != 0 {
            self.record_warp(
                r,
                pc,
                Issue::WgmmaDesc {
                    which,
                    desc,
                    why: DescWhy::BaseOffset,
                },
            );
        }
        let es = u64::from(ty.bytes());
        let owner = &self.mem.ext.shared_owner;
        let mem = self.cluster.ctas.get(rank as usize).map(|c| &c.shared);
        let mut out = Vec::with_capacity((rows * k) as usize);
        let mut bad: Option<u64> = None;
        for row in 0..rows {
            for kk in 0..k {
                let a = d.addr(row, kk, es, mn_major);
                let first = owner.get(a as usize).copied().unwrap_or(0);
                let last = owner.get((a + es - 1) as usize).copied().unwrap_or(0);
                if first == 0 || first != last {
                    bad.get_or_insert(a);
                    out.push(0.0);
                    continue;
                }
                chunks.push((a / 16) as u32);
                let bytes = mem
                    .and_then(|m| m.get(a as usize..(a + es) as usize))
                    .unwrap_or(&[]);
                let v = element(ty, bytes);
                out.push(if neg { -v } else { v });
            }
        }
        if let Some(addr) = bad {
            self.record_warp(
                r,
                pc,
                Issue::WgmmaDesc {
                    which,
                    desc,
                    why: DescWhy::Outside { addr },
                },
            );
        }
        out
    }

    /// The locked registers of a warp: those of its pending operations.
    fn relock(&mut self, warp: u32) {
        let prog = self.setup.prog;
        let Some(wp) = self.cluster.warps.get(warp as usize) else {
            return;
        };
        let mut locked = Vec::new();
        for id in wp
            .wg
            .uncommitted
            .iter()
            .chain(wp.wg.groups.iter().flatten())
        {
            let Some(op) = self.cluster.wg.ops.get(id) else {
                continue;
            };
            let Some(SyncOp::Wgmma(w)) = prog
                .code
                .get(op.pc as usize)
                .and_then(|i| prog.syncs.get(i.aux as usize))
            else {
                continue;
            };
            for i in 0..w.nd {
                if let Some(&s) = prog.lists.get((w.d + i) as usize) {
                    locked.push((s, op.pc));
                }
            }
            if let WgA::Regs(list) = w.a {
                for j in 0..4 {
                    if let Some(&s) = prog.lists.get((list + j) as usize) {
                        locked.push((s, op.pc));
                    }
                }
            }
        }
        locked.sort_unstable();
        locked.dedup_by_key(|e| e.0);
        if let Some(wp) = self.cluster.warps.get_mut(warp as usize) {
            wp.wg.locked = locked;
        }
    }

    /// `wgmma.wait_group n`: the warp's committed groups but the newest
    /// `n` complete, oldest first.
    fn wg_wait(&mut self, warp: u32, n: usize) {
        loop {
            let group = match self.cluster.warps.get_mut(warp as usize) {
                Some(wp) if wp.wg.groups.len() > n => wp.wg.groups.pop_front(),
                _ => None,
            };
            let Some(group) = group else { break };
            for id in group {
                let instance = self.cluster.wg.ops.get(&id).map(|op| op.instance);
                self.complete_op(warp, id);
                if let (Some(san), Some(instance)) = (&mut self.checks, instance) {
                    let lanes = self
                        .cluster
                        .warps
                        .get(warp as usize)
                        .map_or(0..0, |w| w.first_thread..w.first_thread + w.lanes);
                    let lanes: Vec<u32> = lanes.collect();
                    san.wgmma_done(&lanes, instance);
                }
            }
        }
        self.relock(warp);
    }

    /// Completes the warp's oldest pending operation.
    fn complete_oldest(&mut self, warp: u32) {
        let id = match self.cluster.warps.get_mut(warp as usize) {
            Some(wp) => match wp.wg.groups.front_mut() {
                Some(g) if !g.is_empty() => Some(g.remove(0)),
                _ if !wp.wg.uncommitted.is_empty() => Some(wp.wg.uncommitted.remove(0)),
                _ => None,
            },
            None => None,
        };
        if let Some(id) = id {
            self.complete_op(warp, id);
        }
    }

    /// Computes the warp's 16 rows of D for operation `id` and writes its
    /// lanes' accumulator registers.
    fn complete_op(&mut self, warp: u32, id: u64) {
        let prog = self.setup.prog;
        let Some(op) = self.cluster.wg.ops.remove(&id) else {
            return;
        };
        let Some(SyncOp::Wgmma(w)) = prog
            .code
            .get(op.pc as usize)
            .and_then(|i| prog.syncs.get(i.aux as usize))
        else {
            return;
        };
        let (_, _, wq) = self.warpgroup(warp);
        let first = self
            .cluster
            .warps
            .get(warp as usize)
            .map_or(0, |wp| wp.first_thread);
        let Some(inst) = self.cluster.wg.instances.get_mut(&op.instance) else {
            return;
        };
        let (n, k) = (w.n as usize, w.k as usize);
        // This warp's 16 rows of A.
        let a: Vec<f64> = if op.a_regs.is_empty() {
            let from = 16 * wq as usize * k;
            inst.a
                .get(from..from + 16 * k)
                .map_or_else(|| vec![0.0; 16 * k], <[f64]>::to_vec)
        } else {
            rs_fragment(&op.a_regs, w.a_ty, k, w.neg_a)
        };
        // sum[r][c] = Σ_k a[r][k]·b[c][k], exactly in f64 for the data the
        // types allow (hopper.md §3.7).
        let mut sum = vec![0.0f64; 16 * n];
        for (row, out) in sum.chunks_exact_mut(n).enumerate() {
            let ar = a.get(row * k..row * k + k).unwrap_or(&[]);
            for (c, o) in out.iter_mut().enumerate() {
                let br = inst.b.get(c * k..c * k + k).unwrap_or(&[]);
                let mut s = 0.0;
                for (x, y) in ar.iter().zip(br) {
                    s += x * y;
                }
                *o = s;
            }
        }
        let scale_d = inst.scale_d;
        inst.done += 1;
        let finished = inst.done >= inst.warps;
        // The accumulators, lane by lane (CUTLASS `CLayout_64xN`): element
        // i of lane l is row l/4 + 8·((i>>1)&1), column 8·(i>>2) + 2·(l%4) + (i&1).
        let lists = &prog.lists;
        let per_reg = if w.out == WgOut::F16 { 2 } else { 1 };
        for lane in 0..32u32 {
            let t = first + lane;
            for j in 0..w.nd {
                let Some(&slot) = lists.get((w.d + j) as usize) else {
                    continue;
                };
                let old = self.reg(t, slot);
                let mut new = 0u64;
                for h in 0..per_reg {
                    let i = (j * per_reg + h) as usize;
                    let row = (lane / 4) as usize + 8 * ((i >> 1) & 1);
                    let col = 8 * (i >> 2) + 2 * (lane % 4) as usize + (i & 1);
                    let s = sum.get(row * n + col).copied().unwrap_or(0.0);
                    let bits = match w.out {
                        WgOut::F32 => {
                            let d = if scale_d {
                                f64::from(f32::from_bits(old as u32))
                            } else {
                                0.0
                            };
                            let x = d + s;
                            if x.is_nan() {
                                0x7fff_ffff
                            } else {
                                u64::from((x as f32).to_bits())
                            }
                        }
                        WgOut::F16 => {
                            let half = (old >> (16 * h)) as u16;
                            let d = if scale_d {
                                f64::from(float::f16_to_f32(half))
                            } else {
                                0.0
                            };
                            float::round_f64(d + s, 0.0, float::F16, float::Dir::NearestEven)
                        }
                        WgOut::S32 => {
                            let d = if scale_d {
                                i64::from(old as u32 as i32)
                            } else {
                                0
                            };
                            let x = d + s as i64;
                            let x = if w.satfinite {
                                x.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                            } else {
                                x
                            };
                            u64::from(x as i32 as u32)
                        }
                    };
                    new |= bits << (16 * h);
                }
                self.set_reg(t, slot, new);
            }
        }
        if finished {
            if let Some(inst) = self.cluster.wg.instances.remove(&op.instance) {
                if let Some(c) = self.cluster.ctas.get_mut(inst.rank as usize) {
                    for ch in &inst.chunks {
                        if let Some(e) = c.watch.get_mut(ch) {
                            e.0 -= 1;
                            if e.0 == 0 {
                                c.watch.remove(ch);
                            }
                        }
                    }
                }
            }
        }
    }

    /// `setmaxnreg`: false when the warp blocks (an `.inc` the pool cannot
    /// serve yet).
    fn setmaxnreg(&mut self, warp: u32, pc: u32, inc: bool, n: u32, r: &Rendezvous) -> bool {
        let (rank, group, _) = self.warpgroup(warp);
        let seq = match self.cluster.warps.get_mut(warp as usize) {
            Some(wp) => {
                wp.wg.setmax += 1;
                wp.wg.setmax - 1
            }
            None => return true,
        };
        if let Some(c) = self.cluster.ctas.get_mut(rank as usize) {
            let e = *c.setmax_seq.entry((group, seq)).or_insert((pc, inc, n));
            if e != (pc, inc, n) {
                self.record_warp(r, pc, Issue::SetMaxNregDisagree);
            }
        }
        let enabled = self
            .cluster
            .ctas
            .get(rank as usize)
            .is_some_and(|c| c.pool.enabled);
        if !enabled {
            return true;
        }
        let (cur, lanes) = self
            .cluster
            .warps
            .get(warp as usize)
            .map_or((0, 32), |wp| (wp.wg.regs, wp.lanes));
        if inc && n < cur || !inc && n > cur {
            self.record_warp(r, pc, Issue::SetMaxNregRange { inc, n, cur });
            return true;
        }
        let delta = (i64::from(n) - i64::from(cur)) * i64::from(lanes);
        let Some(c) = self.cluster.ctas.get_mut(rank as usize) else {
            return true;
        };
        if !inc {
            c.pool.free -= delta;
            if let Some(wp) = self.cluster.warps.get_mut(warp as usize) {
                wp.wg.regs = n;
            }
            self.serve_pool(rank);
            return true;
        }
        if c.pool.free >= delta {
            c.pool.free -= delta;
            if let Some(wp) = self.cluster.warps.get_mut(warp as usize) {
                wp.wg.regs = n;
            }
            return true;
        }
        let threads: Vec<u32> = r.members.iter().map(|&(t, _)| t).collect();
        c.pool.waiting.push(PoolWait {
            warp,
            want: n,
            threads: threads.clone(),
        });
        for t in threads {
            if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                if th.state != ThreadState::Exited {
                    th.state = ThreadState::Blocked(Block::RegPool);
                }
            }
        }
        false
    }

    /// Serves the warps waiting in `setmaxnreg.inc` that the pool now can,
    /// in arrival order.
    fn serve_pool(&mut self, rank: u32) {
        loop {
            let Some(c) = self.cluster.ctas.get(rank as usize) else {
                return;
            };
            let found = c.pool.waiting.iter().position(|pw| {
                let cur = self
                    .cluster
                    .warps
                    .get(pw.warp as usize)
                    .map_or((0, 32), |wp| (wp.wg.regs, wp.lanes));
                c.pool.free >= (i64::from(pw.want) - i64::from(cur.0)) * i64::from(cur.1)
            });
            let Some(i) = found else { return };
            let Some(c) = self.cluster.ctas.get_mut(rank as usize) else {
                return;
            };
            let pw = c.pool.waiting.remove(i);
            let (cur, lanes) = self
                .cluster
                .warps
                .get(pw.warp as usize)
                .map_or((0, 32), |wp| (wp.wg.regs, wp.lanes));
            c.pool.free -= (i64::from(pw.want) - i64::from(cur)) * i64::from(lanes);
            if let Some(wp) = self.cluster.warps.get_mut(pw.warp as usize) {
                wp.wg.regs = pw.want;
            }
            self.sched.epoch += 1;
            for t in pw.threads {
                self.wake(t);
            }
        }
    }

    /// The pending-wgmma watch: records a write of `len` bytes at `off` of
    /// the shared memory of the CTA of `rank` into bytes a pending wgmma
    /// reads.
    pub(super) fn check_watch(
        &mut self,
        t: u32,
        pc: u32,
        rank: u32,
        off: u64,
        len: u64,
        copy: bool,
    ) {
        let Some(c) = self.cluster.ctas.get(rank as usize) else {
            return;
        };
        if c.watch.is_empty() || len == 0 {
            return;
        }
        let hit = (off / 16..=(off + len - 1) / 16)
            .find_map(|ch| c.watch.get(&(ch as u32)).map(|&(_, wpc)| (ch, wpc)));
        if let Some((ch, wgmma_pc)) = hit {
            self.record(
                t,
                pc,
                Issue::WgmmaOverwrite {
                    offset: (ch * 16).max(off),
                    wgmma_pc,
                    copy,
                },
            );
        }
    }
}

/// The 16 rows of A of an RS wgmma from its lanes' registers (CUTLASS
/// `ALayout_64x16`/`_64x8`/`_64x32`): register j of lane l holds elements
/// `e` of row `l/4 + 8·(j&1)`, column `(l%4)·epr + e + (j>>1)·K/2` (epr
/// elements per register).
fn rs_fragment(regs: &[u32], ty: WgIn, k: usize, neg: bool) -> Vec<f64> {
    let es = ty.bytes() as usize;
    let epr = 4 / es;
    let mut a = vec![0.0f64; 16 * k];
    for lane in 0..32usize {
        for j in 0..4usize {
            let v = regs.get(lane * 4 + j).copied().unwrap_or(0).to_le_bytes();
            for e in 0..epr {
                let row = lane / 4 + 8 * (j & 1);
                let col = (lane % 4) * epr + e + (j >> 1) * (k / 2);
                let x = element(ty, v.get(e * es..e * es + es).unwrap_or(&[]));
                if let Some(slot) = a.get_mut(row * k + col) {
                    *slot = if neg { -x } else { x };
                }
            }
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptor decode reproduces what a TMA box `{64, rows}` with
    /// 128B swizzle wrote (hopper.md §3.4: `(r%8)·128 + (r/8)·1024 +
    /// (k/8)·16 + (k%8)·2 = r·128 + 2k` before the swizzle).
    #[test]
    fn k_major_128b_matches_the_tma_box() {
        let start = 1024u64;
        let desc = ((start & 0x3ffff) >> 4) | (1 << 16) | ((1024 >> 4) << 32) | (1 << 62);
        let d = Desc::of(desc);
        for r in 0..64u64 {
            for k in 0..16u64 {
                let linear = start + r * 128 + 2 * k;
                let swz = linear ^ (((linear >> 7) & 7) << 4);
                assert_eq!(d.addr(r, k, 2, false), swz, "r {r} k {k}");
            }
        }
        // The K slice kk starts 32 bytes further (descriptor + 2).
        let d2 = Desc::of(desc + 2);
        assert_eq!(d2.addr(0, 0, 2, false), start + 32);
    }

    #[test]
    fn rs_fragment_layout() {
        // bf16: lane l, register j, half e: row l/4 + 8(j&1), column
        // 2(l%4) + e + 8(j>>1).
        let mut regs = vec![0u32; 128];
        // Lane 5, register 3, upper half: row 1 + 8, column 2 + 1 + 8.
        regs[5 * 4 + 3] = 0x3f80_0000; // bf16 1.0 in the upper half
        let a = rs_fragment(&regs, WgIn::BF16, 16, false);
        assert_eq!(a[9 * 16 + 11], 1.0);
        assert_eq!(a.iter().filter(|&&x| x != 0.0).count(), 1);
    }
}
