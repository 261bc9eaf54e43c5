//! Special registers read where they are cheapest (pass `special`).
//!
//! `lane_id` reads `%laneid`, a special register: a long-latency `S2R` in
//! SASS, and a register ptxas keeps live from the top of the kernel. When
//! the block's x extent is a multiple of 32, the linear thread index is
//! `thread_idx.x` plus a multiple of 32, so `lane_id` is `thread_idx.x &
//! 31`; when the block is also one-dimensional, `warp_id` (the linear index
//! over 32) is `thread_idx.x >> 5`. Both are what nvcc writes for CUDA's
//! `threadIdx.x & 31`. The shape is exact (`block(...)` is `.reqntid`), so
//! the values are equal in every thread. Device functions, which may run in
//! any shape, are left alone.

use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{BinOp, Dim, Expr, ExprKind, Module, Special, Value};
use crate::types::Scalar;

/// Rewrites `lane_id` and `warp_id` in every kernel whose shape allows it;
/// whether anything changed.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    for k in &mut module.kernels {
        let Some([x, y, z]) = k.block else {
            continue;
        };
        if x == 0 || x % 32 != 0 {
            continue;
        }
        let mut r = Rewrite {
            one_dim: y == 1 && z == 1,
            changed: false,
        };
        r.visit_block_mut(&mut k.body.block);
        if r.changed {
            // The new nodes were built without ids.
            k.body.renumber();
            changed = true;
        }
    }
    changed
}

struct Rewrite {
    one_dim: bool,
    changed: bool,
}

impl VisitMut for Rewrite {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let op = match e.kind {
            ExprKind::Special(Special::LaneId) => (BinOp::BitAnd, 31),
            ExprKind::Special(Special::WarpId) if self.one_dim => (BinOp::Shr, 5),
            _ => return visit_mut::walk_expr_mut(self, e),
        };
        let tid = Expr::new(
            ExprKind::Special(Special::ThreadIdx(Dim::X)),
            Scalar::U32,
            e.span,
        );
        let c = Expr::new(ExprKind::Const(Value::Int(op.1)), Scalar::U32, e.span);
        e.kind = ExprKind::Binary(op.0, Box::new(tid), Box::new(c));
        self.changed = true;
    }
}
