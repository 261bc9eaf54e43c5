//! One shared traversal of the IR, in the style of syn's `visit` module.
//!
//! A pass implements [`Visit`] and overrides only the hooks for the nodes it
//! cares about; each hook defaults to the matching `walk_*` function, which
//! visits the node's children in source order (the order they are evaluated
//! in). An override that still wants the children calls `walk_*` itself,
//! before or after its own work, or visits some children differently (the
//! barrier pass tracks enclosing conditions that way).
//!
//! The order is part of the contract: the PTX writer numbers special
//! registers in the order `analysis::usage` first meets them in this walk.
//! [`super::visit_mut`] is the same walk on mutable nodes.

use super::{
    BarrierOpKind, BarrierRef, Block, Expr, ExprKind, Parity, Place, PlaceKind, Stmt, StmtKind,
};

/// Hooks for each kind of IR node; every default walks the node's children.
pub trait Visit<'ir> {
    fn visit_block(&mut self, b: &'ir Block) {
        walk_block(self, b);
    }

    fn visit_stmt(&mut self, s: &'ir Stmt) {
        walk_stmt(self, s);
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        walk_expr(self, e);
    }

    fn visit_place(&mut self, p: &'ir Place) {
        walk_place(self, p);
    }

    fn visit_barrier_ref(&mut self, r: &'ir BarrierRef) {
        walk_barrier_ref(self, r);
    }

    /// The parity of a `wait` or `test` on `barrier` (a tracked parity is
    /// tracked per barrier, so the hook is told which).
    fn visit_parity(&mut self, barrier: &'ir BarrierRef, p: &'ir Parity) {
        walk_parity(self, barrier, p);
    }
}

pub fn walk_block<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, b: &'ir Block) {
    for s in &b.stmts {
        v.visit_stmt(s);
    }
}

pub fn walk_stmt<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, s: &'ir Stmt) {
    match &s.kind {
        StmtKind::Let { value, .. }
        | StmtKind::Assign { value, .. }
        | StmtKind::Expr(value)
        | StmtKind::SyncWarp(value)
        | StmtKind::Return(Some(value)) => v.visit_expr(value),
        StmtKind::Store { place, value, .. } => {
            v.visit_place(place);
            v.visit_expr(value);
        }
        StmtKind::LoadVector { place, .. } => v.visit_place(place),
        StmtKind::StoreVector { place, values } => {
            v.visit_place(place);
            values.iter().for_each(|e| v.visit_expr(e));
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            v.visit_expr(cond);
            v.visit_block(then_block);
            if let Some(b) = else_block {
                v.visit_block(b);
            }
        }
        StmtKind::While { cond, body } => {
            v.visit_expr(cond);
            v.visit_block(body);
        }
        StmtKind::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            v.visit_expr(start);
            v.visit_expr(end);
            v.visit_expr(step);
            v.visit_block(body);
        }
        StmtKind::Call { args, .. } => args.iter().for_each(|a| v.visit_expr(a)),
        StmtKind::Barrier(op) => {
            v.visit_barrier_ref(&op.barrier);
            match &op.kind {
                BarrierOpKind::Arrive { count: None } => {}
                BarrierOpKind::Arrive { count: Some(e) }
                | BarrierOpKind::ArriveExpectTx { bytes: e }
                | BarrierOpKind::ExpectTx { bytes: e }
                | BarrierOpKind::ArriveRemote { rank: e } => v.visit_expr(e),
                BarrierOpKind::Wait { parity } | BarrierOpKind::WaitCluster { parity } => {
                    v.visit_parity(&op.barrier, parity)
                }
            }
        }
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => {
            v.visit_place(dst);
            v.visit_place(src);
            v.visit_expr(bytes);
            v.visit_barrier_ref(barrier);
        }
        StmtKind::CopyAsyncStore { dst, src, bytes } => {
            v.visit_place(dst);
            v.visit_place(src);
            v.visit_expr(bytes);
        }
        StmtKind::NamedBarrier(op) => {
            if let Some(i) = &op.index {
                v.visit_expr(i);
            }
        }
        StmtKind::Poisoned { blocks, .. } => blocks.iter().for_each(|b| v.visit_block(b)),
        StmtKind::Return(None)
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::SyncThreads
        | StmtKind::ClusterSync
        | StmtKind::FenceProxyAsync
        | StmtKind::Fence(_)
        | StmtKind::CopyAsyncCommit
        | StmtKind::CopyAsyncWait(_) => {}
    }
}

pub fn walk_expr<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, e: &'ir Expr) {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => v.visit_expr(a),
        ExprKind::Binary(_, a, b) => {
            v.visit_expr(a);
            v.visit_expr(b);
        }
        ExprKind::Select(c, a, b) => {
            v.visit_expr(c);
            v.visit_expr(a);
            v.visit_expr(b);
        }
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            v.visit_expr(cond);
            v.visit_block(then_block);
            v.visit_expr(then_value);
            v.visit_block(else_block);
            v.visit_expr(else_value);
        }
        ExprKind::Load(p) | ExprKind::AddrOf(p) => v.visit_place(p),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            args.iter().for_each(|a| v.visit_expr(a))
        }
        ExprKind::Atomic { place, args, .. } => {
            v.visit_place(place);
            args.iter().for_each(|a| v.visit_expr(a));
        }
        ExprKind::BarrierTest {
            barrier, parity, ..
        } => {
            v.visit_barrier_ref(barrier);
            v.visit_parity(barrier, parity);
        }
    }
}

/// The index expressions of a place, and the CTA rank (before the indices)
/// of a remote one.
pub fn walk_place<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, p: &'ir Place) {
    match &p.kind {
        PlaceKind::Global { index, .. } => v.visit_expr(index),
        PlaceKind::Shared { indices, .. } => indices.iter().for_each(|i| v.visit_expr(i)),
        PlaceKind::Remote { rank, indices, .. } => {
            v.visit_expr(rank);
            indices.iter().for_each(|i| v.visit_expr(i));
        }
        PlaceKind::SharedAt { addr, .. } => v.visit_expr(addr),
    }
}

pub fn walk_barrier_ref<'ir, V: Visit<'ir> + ?Sized>(v: &mut V, r: &'ir BarrierRef) {
    if let Some(i) = &r.index {
        v.visit_expr(i);
    }
}

pub fn walk_parity<'ir, V: Visit<'ir> + ?Sized>(
    v: &mut V,
    _barrier: &'ir BarrierRef,
    p: &'ir Parity,
) {
    match p {
        Parity::Explicit(e) => v.visit_expr(e),
        Parity::Tracked => {}
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// True when `b` nests deeper than `limit` levels (each statement and
/// expression counts one). The walk stops `limit` levels down, so it is
/// safe on any stack however deep the block really is.
pub fn deeper_than(b: &Block, limit: u32) -> bool {
    struct Probe {
        depth: u32,
        limit: u32,
        deep: bool,
    }
    impl Probe {
        fn enter(&mut self, f: impl FnOnce(&mut Self)) {
            if self.deep {
                return;
            }
            if self.depth >= self.limit {
                self.deep = true;
                return;
            }
            self.depth += 1;
            f(self);
            self.depth -= 1;
        }
    }
    impl<'ir> Visit<'ir> for Probe {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.enter(|p| walk_stmt(p, s));
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            self.enter(|p| walk_expr(p, e));
        }
    }
    let mut p = Probe {
        depth: 0,
        limit,
        deep: false,
    };
    p.visit_block(b);
    p.deep
}
