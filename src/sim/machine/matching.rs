//! `match.any.sync` and `match.all.sync`: computed when their rendezvous
//! (`warp.rs`) is complete, from every member's operand.

use super::Machine;
use crate::sim::decode::ops::{SyncOp, NO_DEST};

impl Machine<'_> {
    /// The operand of a `match.sync` of thread `t`, cut to its width.
    pub(super) fn match_value(&self, t: u32, op: &SyncOp) -> u64 {
        match op {
            SyncOp::Match { a, wide, .. } => {
                let v = self.reg(t, *a);
                if *wide {
                    v
                } else {
                    v & 0xffff_ffff
                }
            }
            _ => 0,
        }
    }
}

/// The results of thread `t`'s `match.sync` (`op`, `mask` its membermask
/// with its own lane), given every lane's member (thread and op) and how
/// to read a member's operand: `(thread, slot, value)` for its
/// destinations. `.any`: the lanes of the mask whose operand equals the
/// thread's; `.all`: the mask when every lane of it has the same operand
/// (and the predicate true), else 0 (and false).
pub(super) fn results(
    lanes: &[Option<(u32, &SyncOp)>; 32],
    t: u32,
    op: &SyncOp,
    mask: u32,
    value: impl Fn(u32, &SyncOp) -> u64,
) -> Vec<(u32, u32, u64)> {
    let SyncOp::Match { all, d, p, .. } = op else {
        return Vec::new();
    };
    let mine = value(t, op);
    let mut same = 0u32;
    let mut members = 0u32;
    for (l, e) in lanes.iter().enumerate() {
        if mask & (1 << l) == 0 {
            continue;
        }
        if let Some((lt, lop @ SyncOp::Match { .. })) = e {
            members |= 1 << l;
            if value(*lt, lop) == mine {
                same |= 1 << l;
            }
        }
    }
    if !*all {
        return vec![(t, *d, u64::from(same))];
    }
    let uniform = same == members;
    let mut out = vec![(t, *d, if uniform { u64::from(mask) } else { 0 })];
    if *p != NO_DEST {
        out.push((t, *p, u64::from(uniform)));
    }
    out
}
