//! The mutable twin of [`super::visit`], in the style of syn's `visit_mut`:
//! the traversal a pass that rewrites the IR in place builds on.
//!
//! Hooks and walks are those of [`super::visit::Visit`], with `&mut`
//! nodes, and visit children in the same order (the order they are
//! evaluated in), so a pass that numbers or records nodes here sees them
//! as every read-only pass does. A hook may replace its node (or change its
//! children) before or after walking it; a node it adds needs an id from
//! the body ([`super::Body::expr`], [`super::Body::stmt`], or
//! [`super::Body::renumber_block`] for a copied subtree).

use super::{
    BarrierOpKind, BarrierRef, Block, Expr, ExprKind, Ids, Parity, Place, PlaceKind, Stmt, StmtKind,
};

/// Hooks for each kind of IR node, on mutable nodes; every default walks
/// the node's children.
pub trait VisitMut {
    fn visit_block_mut(&mut self, b: &mut Block) {
        walk_block_mut(self, b);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        walk_stmt_mut(self, s);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        walk_expr_mut(self, e);
    }

    fn visit_place_mut(&mut self, p: &mut Place) {
        walk_place_mut(self, p);
    }

    fn visit_barrier_ref_mut(&mut self, r: &mut BarrierRef) {
        walk_barrier_ref_mut(self, r);
    }

    /// The parity of a `wait` or `test` (the barrier it is for is visited
    /// just before, by [`VisitMut::visit_barrier_ref_mut`]).
    fn visit_parity_mut(&mut self, p: &mut Parity) {
        walk_parity_mut(self, p);
    }
}

pub fn walk_block_mut<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    for s in &mut b.stmts {
        v.visit_stmt_mut(s);
    }
}

pub fn walk_stmt_mut<V: VisitMut + ?Sized>(v: &mut V, s: &mut Stmt) {
    match &mut s.kind {
        StmtKind::Let { value, .. }
        | StmtKind::Assign { value, .. }
        | StmtKind::Expr(value)
        | StmtKind::SyncWarp(value)
        | StmtKind::Return(Some(value)) => v.visit_expr_mut(value),
        StmtKind::Store { place, value, .. } => {
            v.visit_place_mut(place);
            v.visit_expr_mut(value);
        }
        StmtKind::LoadVector { place, .. } => v.visit_place_mut(place),
        StmtKind::StoreVector { place, values } => {
            v.visit_place_mut(place);
            values.iter_mut().for_each(|e| v.visit_expr_mut(e));
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            v.visit_expr_mut(cond);
            v.visit_block_mut(then_block);
            if let Some(b) = else_block {
                v.visit_block_mut(b);
            }
        }
        StmtKind::While { cond, body } => {
            v.visit_expr_mut(cond);
            v.visit_block_mut(body);
        }
        StmtKind::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            v.visit_expr_mut(start);
            v.visit_expr_mut(end);
            v.visit_expr_mut(step);
            v.visit_block_mut(body);
        }
        StmtKind::Call { args, .. } => args.iter_mut().for_each(|a| v.visit_expr_mut(a)),
        StmtKind::Barrier(op) => {
            v.visit_barrier_ref_mut(&mut op.barrier);
            match &mut op.kind {
                BarrierOpKind::Arrive { count: None } => {}
                BarrierOpKind::Arrive { count: Some(e) }
                | BarrierOpKind::ArriveExpectTx { bytes: e }
                | BarrierOpKind::ExpectTx { bytes: e }
                | BarrierOpKind::ArriveRemote { rank: e } => v.visit_expr_mut(e),
                BarrierOpKind::Wait { parity } | BarrierOpKind::WaitCluster { parity } => {
                    v.visit_parity_mut(parity)
                }
            }
        }
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => {
            v.visit_place_mut(dst);
            v.visit_place_mut(src);
            v.visit_expr_mut(bytes);
            v.visit_barrier_ref_mut(barrier);
        }
        StmtKind::CopyAsyncStore { dst, src, bytes } => {
            v.visit_place_mut(dst);
            v.visit_place_mut(src);
            v.visit_expr_mut(bytes);
        }
        StmtKind::NamedBarrier(op) => {
            if let Some(i) = &mut op.index {
                v.visit_expr_mut(i);
            }
        }
        StmtKind::Poisoned { blocks, .. } => blocks.iter_mut().for_each(|b| v.visit_block_mut(b)),
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

pub fn walk_expr_mut<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    match &mut e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => v.visit_expr_mut(a),
        ExprKind::Binary(_, a, b) => {
            v.visit_expr_mut(a);
            v.visit_expr_mut(b);
        }
        ExprKind::Select(c, a, b) => {
            v.visit_expr_mut(c);
            v.visit_expr_mut(a);
            v.visit_expr_mut(b);
        }
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            v.visit_expr_mut(cond);
            v.visit_block_mut(then_block);
            v.visit_expr_mut(then_value);
            v.visit_block_mut(else_block);
            v.visit_expr_mut(else_value);
        }
        ExprKind::Load(p) | ExprKind::AddrOf(p) => v.visit_place_mut(p),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            args.iter_mut().for_each(|a| v.visit_expr_mut(a))
        }
        ExprKind::Atomic { place, args, .. } => {
            v.visit_place_mut(place);
            args.iter_mut().for_each(|a| v.visit_expr_mut(a));
        }
        ExprKind::BarrierTest {
            barrier, parity, ..
        } => {
            v.visit_barrier_ref_mut(barrier);
            v.visit_parity_mut(parity);
        }
    }
}

/// The index expressions of a place, and the CTA rank (before the indices)
/// of a remote one.
pub fn walk_place_mut<V: VisitMut + ?Sized>(v: &mut V, p: &mut Place) {
    match &mut p.kind {
        PlaceKind::Global { index, .. } => v.visit_expr_mut(index),
        PlaceKind::Shared { indices, .. } => indices.iter_mut().for_each(|i| v.visit_expr_mut(i)),
        PlaceKind::Remote { rank, indices, .. } => {
            v.visit_expr_mut(rank);
            indices.iter_mut().for_each(|i| v.visit_expr_mut(i));
        }
        PlaceKind::SharedAt { addr, .. } => v.visit_expr_mut(addr),
    }
}

pub fn walk_barrier_ref_mut<V: VisitMut + ?Sized>(v: &mut V, r: &mut BarrierRef) {
    if let Some(i) = &mut r.index {
        v.visit_expr_mut(i);
    }
}

pub fn walk_parity_mut<V: VisitMut + ?Sized>(v: &mut V, p: &mut Parity) {
    match p {
        Parity::Explicit(e) => v.visit_expr_mut(e),
        Parity::Tracked => {}
    }
}

/// Gives each node a fresh id from `ids`, in visit order (each node before
/// its children).
pub(super) struct Renumber {
    pub(super) ids: Ids,
}

impl VisitMut for Renumber {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        s.id = self.ids.stmt();
        walk_stmt_mut(self, s);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        e.id = self.ids.expr();
        walk_expr_mut(self, e);
    }
}

#[cfg(test)]
mod tests;
