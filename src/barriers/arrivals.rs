//! W0321: a barrier whose expected arrival count differs from the number of
//! threads that arrive on it each phase.
//!
//! Counting arrivals in general needs the phase structure of the kernel, so
//! this warns only in the case it can count exactly: the block size is known
//! and the group is arrived on only by plain `arrive()` that every thread of
//! the CTA runs (under no condition, in no divergent flow, at a uniform
//! index). Each thread then arrives once per phase: m is the CTA's thread
//! count, for a cluster group too (arrivals from other CTAs come through
//! `arrive_remote`, which makes the group uncountable here). Any conditional
//! or counted arrival (`if tid == 0 { full[s].arrive_expect_tx(..) }`) means
//! someone chose the count on purpose, and nothing is said. An `arrive()` in
//! a loop counts once per phase only when that loop also waits on the group;
//! otherwise the loop may arrive several times per phase, and nothing is
//! said either; nor for a group that a statement which failed to check names.

use super::error::BarrierError;
use super::walk::{self, Cx, Visitor};
use crate::analysis::BodyInfo;
use crate::ir::{BarrierId, BarrierOpKind, Block, Expr, ExprKind, Kernel, Stmt, StmtKind};
use crate::span::Span;

pub fn check(kernel: &Kernel, uni: &BodyInfo, out: &mut Vec<BarrierError>) {
    let Some(threads) = kernel.block_threads() else {
        return;
    };
    let mut v = Arrivals {
        uni,
        groups: vec![Seen::default(); kernel.barriers.len()],
    };
    walk::body(&kernel.body, &mut v);
    for (g, seen) in kernel.barriers.iter().zip(&v.groups) {
        let Some(arrive) = seen.every_thread.filter(|_| !g.failed.arrivals) else {
            continue;
        };
        if !seen.other && g.arrivals != threads {
            out.push(BarrierError::ArrivalMismatch {
                name: g.name.clone(),
                expected: g.arrivals,
                arriving: u64::from(threads),
                decl: g.spans.arrivals,
                arrive,
            });
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Seen {
    /// The first `arrive()` that every thread runs once per phase.
    every_thread: Option<Span>,
    /// Some other arrival: counted, conditional, remote, or with a
    /// transaction count.
    other: bool,
}

struct Arrivals<'u> {
    uni: &'u BodyInfo,
    groups: Vec<Seen>,
}

impl<'a> Visitor<'a> for Arrivals<'_> {
    fn stmt(&mut self, s: &'a Stmt, cx: Cx<'a>) {
        // A statement that failed to check may have arrived on its groups
        // in any way: they cannot be counted.
        if let StmtKind::Poisoned { groups, .. } = &s.kind {
            for g in groups {
                if let Some(seen) = self.groups.get_mut(g.index()) {
                    seen.other = true;
                }
            }
            return;
        }
        let StmtKind::Barrier(op) = &s.kind else {
            return;
        };
        let group = op.barrier.group;
        let plain = match &op.kind {
            BarrierOpKind::Arrive { count: None } => true,
            BarrierOpKind::Arrive { count: Some(_) }
            | BarrierOpKind::ArriveExpectTx { .. }
            | BarrierOpKind::ArriveRemote { .. } => false,
            BarrierOpKind::ExpectTx { .. }
            | BarrierOpKind::Wait { .. }
            | BarrierOpKind::WaitCluster { .. } => return,
        };
        let every_thread = plain
            && cx.conditional == 0
            && self.uni.divergence(s.id).is_none()
            && op
                .barrier
                .index
                .as_deref()
                .is_none_or(|i| !self.uni.varies(i.id))
            && cx.loop_body.is_none_or(|b| waits_on(b, group));
        let Some(seen) = self.groups.get_mut(group.index()) else {
            return;
        };
        if every_thread {
            seen.every_thread = seen.every_thread.or(Some(s.span));
        } else {
            seen.other = true;
        }
    }
}

/// Does `b` wait on (or test) a barrier of `group`?
fn waits_on(b: &Block, group: BarrierId) -> bool {
    struct Waits {
        group: BarrierId,
        found: bool,
    }
    impl<'a> Visitor<'a> for Waits {
        fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
            if let StmtKind::Barrier(op) = &s.kind {
                let waits = matches!(
                    op.kind,
                    BarrierOpKind::Wait { .. } | BarrierOpKind::WaitCluster { .. }
                );
                self.found |= waits && op.barrier.group == self.group;
            }
        }
        fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
            if let ExprKind::BarrierTest { barrier, .. } = &e.kind {
                self.found |= barrier.group == self.group;
            }
        }
    }
    let mut w = Waits {
        group,
        found: false,
    };
    walk::block(b, Cx::default(), &mut w);
    w.found
}
