//! W0324: a named-barrier operation (`b.sync()`, `b.arrive()`) under a
//! condition that can split the threads of a warp.
//!
//! The hardware counts arrivals at a named barrier a warp at a time, and
//! roles in a warp-specialised kernel are whole warps (`if warp_id == 0`).
//! A condition that is uniform in each warp (built from `warp_id`,
//! constants, parameters, `block_idx`, uniform locals and immutable locals
//! bound to such values) is fine; one on
//! `thread_idx`, `lane_id`, loads or anything else that varies within a
//! warp is reported, on the innermost such condition around the operation.
//!
//! W0326: when `block(...)` gives the block shape and every condition
//! around each operation on a barrier is a test of `warp_id` against
//! constants (`<`, `<=`, `>`, `>=`, `==`, `!=`, `&&`, `||`, `!`), the warps
//! that can reach that barrier are known; their threads must be the
//! barrier's count. Anything else (another condition, a run-time index, a
//! `return`, `break` or `continue` anywhere in the kernel) says nothing.
//!
//! Both are read from the facts of [`crate::analysis::warps`]. Divergence
//! that comes from elsewhere (a `return` or `break` some threads took) is
//! not reported here: the analysis does not say whether it splits warps.
//! Either way the PTX writer uses the non-`.aligned` forms wherever the
//! threads may diverge.

use super::error::BarrierError;
use super::walk::{self, Cx, Visitor};
use crate::analysis::BodyInfo;
use crate::ir::{Kernel, Stmt, StmtKind};

pub fn check(k: &Kernel, info: &BodyInfo, out: &mut Vec<BarrierError>) {
    // W0324 once per operation, in source order.
    struct Ops<'a> {
        k: &'a Kernel,
        info: &'a BodyInfo,
        out: &'a mut Vec<BarrierError>,
    }
    impl<'s> Visitor<'s> for Ops<'_> {
        fn stmt(&mut self, s: &'s Stmt, _cx: Cx<'s>) {
            let StmtKind::NamedBarrier(op) = &s.kind else {
                return;
            };
            let cond = self.info.warps.split(s.id);
            if let (Some(cond), Some(g)) = (cond, self.k.named_barriers.get(op.group.index())) {
                self.out.push(BarrierError::NamedDivergent {
                    name: g.name.clone(),
                    op: op.kind.method(),
                    span: s.span,
                    cond,
                });
            }
        }
    }
    walk::body(&k.body, &mut Ops { k, info, out });
    let Some(threads) = k.block_threads() else {
        return;
    };
    for (&(group, index), reach) in &info.warps.reach {
        let Some(g) = k.named_barriers.get(group as usize) else {
            continue;
        };
        // A count or thread count that failed to check says nothing.
        if g.failed.count || g.failed.arrivals {
            continue;
        }
        // The threads of the warps in `mask`; the last warp may be partial.
        let n: u32 = (0..32u32)
            .filter(|w| reach.warps & (1 << w) != 0)
            .map(|w| threads.saturating_sub(32 * w).min(32))
            .sum();
        if n != g.threads {
            out.push(BarrierError::NamedReach {
                name: if g.count > 1 {
                    format!("{}[{index}]", g.name)
                } else {
                    g.name.clone()
                },
                expected: g.threads,
                reaching: n,
                decl: g.spans.decl,
                first: reach.first,
            });
        }
    }
}
