//! Warp-synchronous instructions as rendezvous: a thread that executes one
//! waits until every lane its mask names has arrived at one of the same
//! kind with the same `membermask` (the PTX ISA's rule: "executed
//! shfl.sync with the same qualifiers and same membermask value"; a lane
//! inside `if lane_id < 16` syncing on 0xFFFF does not meet one outside
//! syncing on the whole warp); then every participant's result is computed
//! at once. A mask that names a lane which exited or never arrives leaves
//! its threads blocked, which the deadlock report explains lane by lane.

use super::events::Issue;
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
        if let SyncOp::Activemask { d } = op {
            let mask = self.live_lanes(warp);
            self.set_reg(t, *d, u64::from(mask));
            self.advance(t);
            return After::Continue;
        }
        let collective = is_collective(op);
        let mut mask = self.rendezvous_mask(t, warp, op);
        if !collective && mask & (1 << lane) == 0 {
            self.record(t, pc, Issue::MaskSelf { mask });
            mask |= 1 << lane;
        }
        let kind = kind_of(op);
        let Some(w) = self.cluster.warps.get_mut(warp as usize) else {
            return After::Continue;
        };
        let i = match w
            .pending
            .iter()
            .position(|r| r.kind == kind && r.wanted == mask && r.arrived & (1 << lane) == 0)
        {
            Some(i) => i,
            None => {
                w.pending.push(Rendezvous {
                    kind,
                    arrived: 0,
                    wanted: mask,
                    members: Vec::new(),
                });
                w.pending.len() - 1
            }
        };
        let Some(r) = w.pending.get_mut(i) else {
            return After::Continue;
        };
        r.arrived |= 1 << lane;
        r.members.push((t, pc));
        if r.arrived & r.wanted != r.wanted {
            self.advance(t);
            return After::Blocked(Block::Warp);
        }
        let r = w.pending.remove(i);
        self.advance(t);
        if collective {
            return self.complete_collective(t, warp, &r);
        }
        self.complete_rendezvous(&r);
        self.sched.epoch += 1;
        for &(m, _) in &r.members {
            if m != t {
                self.wake(m);
            }
        }
        After::Continue
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

    /// Lanes of a warp whose threads have not exited.
    pub fn live_lanes(&self, warp: u32) -> u32 {
        let Some(w) = self.cluster.warps.get(warp as usize) else {
            return 0;
        };
        let mut mask = 0;
        for lane in 0..w.lanes {
            if self.state(w.first_thread + lane) != ThreadState::Exited {
                mask |= 1 << lane;
            }
        }
        mask
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
        for (lane, entry) in lanes.iter().enumerate() {
            let Some((t, op)) = entry else { continue };
            let lane = lane as u32;
            let mask = mask_slot(op).map_or(0, |m| self.reg(*t, m) as u32) | (1 << lane);
            match op {
                SyncOp::Shfl {
                    mode, d, p, b, c, ..
                } => {
                    let (bv, cv) = (self.reg(*t, *b) as u32, self.reg(*t, *c) as u32);
                    let (src, ok) = shfl_source(*mode, lane, bv, cv);
                    let from = if ok { src } else { lane };
                    let value = match lanes.get(from as usize).copied().flatten() {
                        Some((st, SyncOp::Shfl { a, .. })) => self.reg(st, *a),
                        _ => match op {
                            SyncOp::Shfl { a, .. } => self.reg(*t, *a),
                            _ => 0,
                        },
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
