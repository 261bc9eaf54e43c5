//! Warp-synchronous instructions as rendezvous: a thread that executes one
//! waits until every lane its mask names has arrived at one of the same
//! kind with the same `membermask` (the PTX ISA's rule: "executed
//! shfl.sync with the same qualifiers and same membermask value"; a lane
//! inside `if lane_id < 16` syncing on 0xFFFF does not meet one outside
//! syncing on the whole warp); then every participant's result is computed
//! at once. Lanes that exited, or that the block lacks, count as arrived
//! (Volta and later); a shuffle that reads one, or a lane outside its
//! mask, gets an undefined value: 0 and an S0050 report. A mask that names
//! a lane which waits elsewhere for good leaves its threads blocked, which
//! the deadlock report explains lane by lane.
//!
//! Convergence: the threads of a warp run one at a time, so which lanes
//! execute an instruction *together* is decided at `activemask` (what
//! `__activemask()` and `coalesced_threads()` compile to): the lanes that
//! reach the same `activemask` instruction meet there, and it completes
//! with them once no other lane of the warp can come — every live lane
//! waits at a warp-synchronous instruction, or no thread of the cluster
//! can run at all (the others wait at a barrier, exited or spin). Lanes
//! inside a branch thus get the branch's lanes, and lanes after the branch
//! the whole warp, in every schedule.

use super::events::{Issue, ShflWhy};
use super::sched::After;
use super::state::{Block, Rendezvous, ThreadState};
use super::Machine;
use crate::sim::decode::ops::*;

fn kind_of(op: &SyncOp) -> u8 {
    match op {
        SyncOp::Shfl { .. } => 0,
        SyncOp::Vote { .. } => 1,
        SyncOp::BarWarpSync { .. } => 2,
        SyncOp::Elect { .. } => 3,
        SyncOp::Wgmma(_) => 5,
        SyncOp::WgmmaCommit => 6,
        SyncOp::WgmmaWait { .. } => 7,
        SyncOp::SetMaxNreg { .. } => 8,
        SyncOp::Matrix { .. } => 9,
        SyncOp::Match { .. } => 10,
        _ => 4,
    }
}

/// The warp-collective `.sync.aligned` instructions (`wgmma`,
/// `setmaxnreg`, `ldmatrix`/`stmatrix`): every lane of the warp takes part,
/// and the warp's operation is done once all have arrived (`wgmma.rs`).
pub fn is_collective(op: &SyncOp) -> bool {
    matches!(
        op,
        SyncOp::Wgmma(_)
            | SyncOp::WgmmaCommit
            | SyncOp::WgmmaWait { .. }
            | SyncOp::SetMaxNreg { .. }
            | SyncOp::Matrix { .. }
    )
}

/// The `membermask` operand of a warp-synchronous instruction.
pub fn mask_slot(op: &SyncOp) -> Option<u32> {
    match op {
        SyncOp::Shfl { mask, .. }
        | SyncOp::Vote { mask, .. }
        | SyncOp::BarWarpSync { mask }
        | SyncOp::Elect { mask, .. }
        | SyncOp::Redux { mask, .. }
        | SyncOp::Match { mask, .. } => Some(*mask),
        _ => None,
    }
}

/// The kind of an `activemask` rendezvous.
const ACTIVEMASK: u8 = 10;

/// Whether a rendezvous of `kind` is of a warp-collective instruction.
fn kind_collective(kind: u8) -> bool {
    (5..=9).contains(&kind)
}

impl Machine<'_> {
    pub(super) fn warp_op(&mut self, t: u32, pc: u32, op: &SyncOp) -> After {
        let Some((lane, warp)) = self
            .cluster
            .threads
            .get(t as usize)
            .map(|th| (th.lane, th.warp))
        else {
            return After::Continue;
        };
        self.advance(t);
        if let SyncOp::Activemask { .. } = op {
            // The lanes that reach this `activemask` together execute it
            // together: it waits for the warp's other lanes (module doc);
            // blocking settles it (`settle_rendezvous`).
            self.join(warp, ACTIVEMASK, 0, Some(pc), t, pc, lane);
            return After::Blocked(Block::Warp);
        }
        let collective = is_collective(op);
        let mut mask = self.rendezvous_mask(t, warp, op);
        if !collective && mask & (1 << lane) == 0 {
            self.record(t, pc, Issue::MaskSelf { mask });
            mask |= 1 << lane;
        }
        let kind = kind_of(op);
        let Some(i) = self.join(warp, kind, mask, None, t, pc, lane) else {
            return After::Continue;
        };
        if !self.ready(warp, i) {
            return After::Blocked(Block::Warp);
        }
        if collective {
            let Some(r) = self.take_rendezvous(warp, i) else {
                return After::Continue;
            };
            return self.complete_collective(t, warp, &r);
        }
        self.finish(warp, i);
        After::Continue
    }

    /// Adds lane `lane` (thread `t` at `pc`) to the warp's pending
    /// rendezvous of `kind` with membermask `mask` (at `site`, for
    /// `activemask`), making one if there is none; its index.
    #[allow(clippy::too_many_arguments)]
    fn join(
        &mut self,
        warp: u32,
        kind: u8,
        mask: u32,
        site: Option<u32>,
        t: u32,
        pc: u32,
        lane: u32,
    ) -> Option<usize> {
        let w = self.cluster.warps.get_mut(warp as usize)?;
        let i = match w.pending.iter().position(|r| {
            r.kind == kind && r.wanted == mask && r.site == site && r.arrived & (1 << lane) == 0
        }) {
            Some(i) => i,
            None => {
                w.pending.push(Rendezvous {
                    kind,
                    arrived: 0,
                    wanted: mask,
                    members: Vec::new(),
                    site,
                });
                w.pending.len() - 1
            }
        };
        let r = w.pending.get_mut(i)?;
        r.arrived |= 1 << lane;
        r.members.push((t, pc));
        Some(i)
    }

    /// Whether pending rendezvous `i` of `warp` (not an `activemask`) can
    /// complete: a warp-collective one when every lane of the warp
    /// arrived; another when every lane of its mask arrived or exited
    /// (lanes that exited, or that the block lacks, count as arrived).
    fn ready(&self, warp: u32, i: usize) -> bool {
        let live = self.live_lanes(warp);
        let Some(r) = self
            .cluster
            .warps
            .get(warp as usize)
            .and_then(|w| w.pending.get(i))
        else {
            return false;
        };
        if r.site.is_some() {
            return false;
        }
        if kind_collective(r.kind) {
            return r.arrived & r.wanted == r.wanted;
        }
        r.arrived & r.wanted & live == r.wanted & live
    }

    /// Removes pending rendezvous `i` of `warp` to complete it; a
    /// warp-synchronous instruction (not `activemask`, which orders
    /// nothing) synchronises its members for the race check.
    fn take_rendezvous(&mut self, warp: u32, i: usize) -> Option<Rendezvous> {
        let w = self.cluster.warps.get_mut(warp as usize)?;
        let r = (i < w.pending.len()).then(|| w.pending.remove(i))?;
        if let (Some(san), None) = (&mut self.checks, r.site) {
            let members: Vec<u32> = r.members.iter().map(|m| m.0).collect();
            san.warp_sync(&members);
        }
        Some(r)
    }

    /// Completes pending rendezvous `i` of `warp` (not a collective one):
    /// every member gets its result and goes on.
    fn finish(&mut self, warp: u32, i: usize) {
        let Some(r) = self.take_rendezvous(warp, i) else {
            return;
        };
        if r.site.is_some() {
            let mask = r.arrived & self.live_lanes(warp);
            let prog = self.setup.prog;
            for &(m, pc) in &r.members {
                let op = prog
                    .code
                    .get(pc as usize)
                    .and_then(|inst| prog.syncs.get(inst.aux as usize));
                if let Some(SyncOp::Activemask { d }) = op {
                    self.set_reg(m, *d, u64::from(mask));
                }
            }
        } else {
            self.complete_rendezvous(&r);
        }
        self.sched.epoch += 1;
        for &(m, _) in &r.members {
            self.wake(m);
        }
    }

    /// Completes the rendezvous of `warp` that a lane's exit or blocking
    /// made ready. An `activemask` completes, with the lanes that reached
    /// it, once every live lane of the warp waits at a warp-synchronous
    /// instruction (none can move before one of them completes) or, with
    /// `stalled`, once no thread of the cluster can run; of several, the
    /// one earliest in the program first (the branch's, before the one
    /// where the branch's lanes join the others). Whether one completed.
    pub(super) fn settle_rendezvous(&mut self, warp: u32, stalled: bool) -> bool {
        let mut any = false;
        loop {
            let n = self
                .cluster
                .warps
                .get(warp as usize)
                .map_or(0, |w| w.pending.len());
            let Some(i) = (0..n).find(|&i| {
                let collective = self
                    .cluster
                    .warps
                    .get(warp as usize)
                    .and_then(|w| w.pending.get(i))
                    .is_none_or(|r| kind_collective(r.kind));
                !collective && self.ready(warp, i)
            }) else {
                break;
            };
            self.finish(warp, i);
            any = true;
        }
        let Some(w) = self.cluster.warps.get(warp as usize) else {
            return any;
        };
        let Some((i, _)) = w
            .pending
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.site.map(|s| (i, s)))
            .min_by_key(|&(_, s)| s)
        else {
            return any;
        };
        let live = self.live_lanes(warp);
        let first = w.first_thread;
        let all_wait = (0..32u32)
            .filter(|l| live & (1 << l) != 0)
            .all(|l| self.state(first + l) == ThreadState::Blocked(Block::Warp));
        if stalled || all_wait {
            self.finish(warp, i);
            any = true;
        }
        any
    }

    /// When no thread of the cluster can run: completes the earliest
    /// pending `activemask` of each warp with the lanes that reached it;
    /// whether there was one.
    pub(super) fn settle_stalled(&mut self) -> bool {
        let mut any = false;
        for warp in 0..self.cluster.warps.len() as u32 {
            let has = self
                .cluster
                .warps
                .get(warp as usize)
                .is_some_and(|w| w.pending.iter().any(|r| r.site.is_some()));
            if has {
                any |= self.settle_rendezvous(warp, true);
            }
        }
        any
    }

    /// The lanes a rendezvous of `op` by thread `t` of warp `warp` waits
    /// for: its `membermask`, or every lane of the warp for a collective.
    pub fn rendezvous_mask(&self, t: u32, warp: u32, op: &SyncOp) -> u32 {
        if is_collective(op) {
            let lanes = self
                .cluster
                .warps
                .get(warp as usize)
                .map_or(32, |w| w.lanes);
            return if lanes >= 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            };
        }
        mask_slot(op).map_or(0, |m| self.reg(t, m) as u32)
    }

    /// Lanes of a warp whose threads exist and have not exited.
    pub fn live_lanes(&self, warp: u32) -> u32 {
        let Some(w) = self.cluster.warps.get(warp as usize) else {
            return 0;
        };
        let lanes = if w.lanes >= 32 {
            u32::MAX
        } else {
            (1u32 << w.lanes) - 1
        };
        lanes & !w.exited
    }

    /// Computes every member's result from all members' operands.
    fn complete_rendezvous(&mut self, r: &Rendezvous) {
        let prog = self.setup.prog;
        // Per lane: (thread, its sync op).
        let mut lanes: [Option<(u32, &SyncOp)>; 32] = [None; 32];
        for &(t, pc) in &r.members {
            let lane = self.cluster.threads.get(t as usize).map_or(0, |th| th.lane);
            let op = prog
                .code
                .get(pc as usize)
                .and_then(|i| prog.syncs.get(i.aux as usize));
            if let (Some(slot), Some(op)) = (lanes.get_mut(lane as usize), op) {
                *slot = Some((t, op));
            }
        }
        let mut results: Vec<(u32, u32, u64)> = Vec::new();
        let mut issues: Vec<(u32, u32, Issue)> = Vec::new();
        // Lanes `exists..32` have no thread (a partial last warp).
        let exists = r
            .members
            .first()
            .and_then(|&(t, _)| self.cluster.threads.get(t as usize))
            .and_then(|th| self.cluster.warps.get(th.warp as usize))
            .map_or(32, |w| w.lanes);
        for (lane, entry) in lanes.iter().enumerate() {
            let Some((t, op)) = entry else { continue };
            let lane = lane as u32;
            let raw = mask_slot(op).map(|m| self.reg(*t, m) as u32);
            // A lane its own mask leaves out is S0009's (reported as it
            // joined): what it reads is undefined for that reason, not
            // reported again as a read from outside the mask.
            let left_out = raw.is_some_and(|m| m & (1 << lane) == 0);
            let mask = raw.unwrap_or(0) | (1 << lane);
            match op {
                SyncOp::Shfl {
                    mode, d, p, b, c, ..
                } => {
                    let (bv, cv) = (self.reg(*t, *b) as u32, self.reg(*t, *c) as u32);
                    let (src, ok) = shfl_source(*mode, lane, bv, cv);
                    let value = if !ok {
                        // Out of range: the lane's own value (PTX ISA).
                        match op {
                            SyncOp::Shfl { a, .. } => self.reg(*t, *a),
                            _ => 0,
                        }
                    } else {
                        match lanes.get(src as usize).copied().flatten() {
                            Some((st, SyncOp::Shfl { a, .. })) if mask & (1 << src) != 0 => {
                                self.reg(st, *a)
                            }
                            _ => {
                                // A lane outside the mask, or one that
                                // exited or does not exist: undefined.
                                let why = if mask & (1 << src) == 0 {
                                    ShflWhy::NotInMask
                                } else if src >= exists {
                                    ShflWhy::NoThread
                                } else {
                                    ShflWhy::Exited
                                };
                                let pc = r
                                    .members
                                    .iter()
                                    .find(|&&(m, _)| m == *t)
                                    .map_or(0, |&(_, pc)| pc);
                                if !left_out {
                                    issues.push((
                                        *t,
                                        pc,
                                        Issue::ShflSource {
                                            lane,
                                            src,
                                            mask,
                                            why,
                                        },
                                    ));
                                }
                                0
                            }
                        }
                    };
                    results.push((*t, *d, value & 0xffff_ffff));
                    results.push((*t, *p, u64::from(ok)));
                }
                SyncOp::Vote { mode, d, .. } => {
                    let mut ballot = 0u32;
                    let mut members = 0u32;
                    for (l, e) in lanes.iter().enumerate() {
                        if mask & (1 << l) == 0 {
                            continue;
                        }
                        if let Some((lt, SyncOp::Vote { a, negate, .. })) = e {
                            members |= 1 << l;
                            if (self.reg(*lt, *a) != 0) != *negate {
                                ballot |= 1 << l;
                            }
                        }
                    }
                    let v = match mode {
                        VoteMode::Ballot => u64::from(ballot),
                        VoteMode::All => u64::from(ballot == members),
                        VoteMode::Any => u64::from(ballot != 0),
                        VoteMode::Uni => u64::from(ballot == 0 || ballot == members),
                    };
                    results.push((*t, *d, v));
                }
                SyncOp::Elect { d, p, .. } => {
                    let leader = (mask & r.arrived).trailing_zeros();
                    results.push((*t, *d, u64::from(leader)));
                    results.push((*t, *p, u64::from(leader == lane)));
                }
                SyncOp::Redux { op: rop, ty, d, .. } => {
                    let mut acc: Option<u64> = None;
                    for (l, e) in lanes.iter().enumerate() {
                        if mask & (1 << l) == 0 {
                            continue;
                        }
                        if let Some((lt, SyncOp::Redux { a, .. })) = e {
                            let v = self.reg(*lt, *a) & 0xffff_ffff;
                            acc = Some(match acc {
                                None => v,
                                Some(x) => redux(*rop, *ty, x, v),
                            });
                        }
                    }
                    results.push((*t, *d, acc.unwrap_or(0)));
                }
                SyncOp::Match { .. } => {
                    let value = |lt: u32, op: &SyncOp| self.match_value(lt, op);
                    results.extend(super::matching::results(&lanes, *t, op, mask, value));
                }
                _ => {}
            }
        }
        for (t, slot, v) in results {
            self.set_reg(t, slot, v);
        }
        for (t, pc, issue) in issues {
            self.record(t, pc, issue);
        }
    }
}

fn redux(op: ReduxOp, ty: Ty, x: u64, y: u64) -> u64 {
    use crate::sim::machine::arith::int_bin;
    match op {
        ReduxOp::Add => (x.wrapping_add(y)) & 0xffff_ffff,
        ReduxOp::Min => int_bin(IntOp::Min, ty, x, y),
        ReduxOp::Max => int_bin(IntOp::Max, ty, x, y),
        ReduxOp::And => x & y,
        ReduxOp::Or => x | y,
        ReduxOp::Xor => x ^ y,
    }
}

/// The source lane of `shfl.sync` for `lane` and whether it is in range
/// (PTX ISA: `c` packs the clamp value and the segment mask).
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let segmask = (c >> 8) & 0x1f;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j.max(0) as u32, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = lane + bval;
            (j, j <= max_lane)
        }
        ShflMode::Bfly => {
            let j = lane ^ bval;
            (j, j <= max_lane)
        }
        ShflMode::Idx => {
            let j = min_lane | (bval & !segmask);
            (j, j <= max_lane)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_lanes() {
        assert_eq!(shfl_source(ShflMode::Down, 3, 16, 0x1f), (19, true));
        assert_eq!(shfl_source(ShflMode::Down, 20, 16, 0x1f), (36, false));
        assert_eq!(shfl_source(ShflMode::Up, 3, 4, 0), (0, false));
        assert_eq!(shfl_source(ShflMode::Up, 5, 4, 0), (1, true));
        assert_eq!(shfl_source(ShflMode::Bfly, 5, 1, 0x1f), (4, true));
        assert_eq!(shfl_source(ShflMode::Idx, 9, 2, 0x1f), (2, true));
        // Width-8 segments: c = ((32 - 8) << 8) | 0x1f.
        assert_eq!(
            shfl_source(ShflMode::Idx, 9, 2, (24 << 8) | 0x1f),
            (10, true)
        );
        assert_eq!(
            shfl_source(ShflMode::Down, 14, 4, (24 << 8) | 0x1f),
            (18, false)
        );
    }
}
