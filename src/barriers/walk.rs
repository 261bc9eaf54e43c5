//! A pre-order walk over a body's statements and expressions, shared by every
//! check of the barrier pass.
//!
//! A check implements [`Visitor`] for the nodes it cares about; the walk
//! visits every block, statement, expression and barrier reference once, in
//! source order, and tells each node where it stands ([`Cx`]): how many
//! conditions and loops enclose it, and the innermost loop's body.

use crate::ir::{
    BarrierOp, BarrierOpKind, BarrierRef, BinOp, Block, Body, Expr, ExprKind, Parity, Place,
    PlaceKind, Stmt, StmtKind,
};

/// Where a node stands in its body.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cx<'a> {
    /// How many conditions guard it: `if` statements and expressions, and
    /// the right operand of `&&`/`||` (evaluated only sometimes).
    pub conditional: u32,
    /// How many loops enclose it.
    pub loops: u32,
    /// The body of the innermost enclosing loop.
    pub loop_body: Option<&'a Block>,
}

impl<'a> Cx<'a> {
    fn conditional(self) -> Self {
        Cx {
            conditional: self.conditional + 1,
            ..self
        }
    }

    fn looped(self, body: &'a Block) -> Self {
        Cx {
            loops: self.loops + 1,
            loop_body: Some(body),
            ..self
        }
    }
}

/// Hooks called before a node's children are walked. All default to nothing.
pub trait Visitor<'a> {
    fn block(&mut self, _b: &'a Block, _cx: Cx<'a>) {}
    fn stmt(&mut self, _s: &'a Stmt, _cx: Cx<'a>) {}
    fn expr(&mut self, _e: &'a Expr, _cx: Cx<'a>) {}
    fn barrier_ref(&mut self, _r: &'a BarrierRef, _cx: Cx<'a>) {}
}

pub fn body<'a>(b: &'a Body, v: &mut impl Visitor<'a>) {
    block(&b.block, Cx::default(), v);
}

pub fn block<'a>(b: &'a Block, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    v.block(b, cx);
    for s in &b.stmts {
        stmt(s, cx, v);
    }
}

pub fn stmt<'a>(s: &'a Stmt, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    v.stmt(s, cx);
    match &s.kind {
        StmtKind::Let { value, .. } | StmtKind::Assign { value, .. } | StmtKind::Expr(value) => {
            expr(value, cx, v)
        }
        StmtKind::Return(value) => {
            if let Some(e) = value {
                expr(e, cx, v);
            }
        }
        StmtKind::Store {
            place: p, value, ..
        } => {
            place(p, cx, v);
            expr(value, cx, v);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            expr(cond, cx, v);
            block(then_block, cx.conditional(), v);
            if let Some(e) = else_block {
                block(e, cx.conditional(), v);
            }
        }
        StmtKind::While { cond, body } => {
            // The condition runs before every iteration, so it is in the loop.
            expr(cond, cx.looped(body), v);
            block(body, cx.looped(body), v);
        }
        StmtKind::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            for e in [start, end, step] {
                expr(e, cx, v);
            }
            block(body, cx.looped(body), v);
        }
        StmtKind::Call { args, .. } => {
            for a in args {
                expr(a, cx, v);
            }
        }
        StmtKind::Barrier(op) => barrier_op(op, cx, v),
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => {
            place(dst, cx, v);
            place(src, cx, v);
            expr(bytes, cx, v);
            barrier_ref(barrier, cx, v);
        }
        StmtKind::CopyAsyncStore { dst, src, bytes } => {
            place(dst, cx, v);
            place(src, cx, v);
            expr(bytes, cx, v);
        }
        StmtKind::Break
        | StmtKind::Continue
        | StmtKind::SyncThreads
        | StmtKind::ClusterSync
        | StmtKind::FenceProxyAsync
        | StmtKind::CopyAsyncCommit
        | StmtKind::CopyAsyncWait(_) => {}
    }
}

fn barrier_op<'a>(op: &'a BarrierOp, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    barrier_ref(&op.barrier, cx, v);
    if let Some(e) = op_operand(&op.kind) {
        expr(e, cx, v);
    }
}

/// The one operand of a barrier operation, if it has one.
pub fn op_operand(kind: &BarrierOpKind) -> Option<&Expr> {
    match kind {
        BarrierOpKind::Arrive { count } => count.as_ref(),
        BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => Some(bytes),
        BarrierOpKind::ArriveRemote { rank } => Some(rank),
        BarrierOpKind::Wait { parity } => explicit(parity),
        BarrierOpKind::WaitCluster { parity } => Some(parity),
    }
}

/// The parity expression the user wrote, if any.
pub fn explicit(p: &Parity) -> Option<&Expr> {
    match p {
        Parity::Explicit(e) => Some(e),
        Parity::Tracked => None,
    }
}

pub fn barrier_ref<'a>(r: &'a BarrierRef, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    v.barrier_ref(r, cx);
    if let Some(i) = &r.index {
        expr(i, cx, v);
    }
}

pub fn place<'a>(p: &'a Place, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    for e in place_exprs(p) {
        expr(e, cx, v);
    }
}

/// The expressions that locate a memory element: indices, and the CTA rank
/// of a remote place.
pub fn place_exprs(p: &Place) -> Vec<&Expr> {
    match &p.kind {
        PlaceKind::Global { index, .. } => vec![index],
        PlaceKind::Shared { indices, .. } => indices.iter().collect(),
        PlaceKind::Remote { rank, indices, .. } => std::iter::once(rank).chain(indices).collect(),
    }
}

pub fn expr<'a>(e: &'a Expr, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    v.expr(e, cx);
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr(a, cx, v),
        ExprKind::Binary(op, a, b) => {
            expr(a, cx, v);
            let rhs = if matches!(op, BinOp::And | BinOp::Or) {
                cx.conditional()
            } else {
                cx
            };
            expr(b, rhs, v);
        }
        ExprKind::Select(c, a, b) => {
            for x in [c, a, b] {
                expr(x, cx, v);
            }
        }
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            expr(cond, cx, v);
            block(then_block, cx.conditional(), v);
            expr(then_value, cx.conditional(), v);
            block(else_block, cx.conditional(), v);
            expr(else_value, cx.conditional(), v);
        }
        ExprKind::Load(p) => place(p, cx, v),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            for a in args {
                expr(a, cx, v);
            }
        }
        ExprKind::Atomic { place: p, args, .. } => {
            place(p, cx, v);
            for a in args {
                expr(a, cx, v);
            }
        }
        ExprKind::BarrierTest { barrier, parity } => {
            barrier_ref(barrier, cx, v);
            if let Some(p) = explicit(parity) {
                expr(p, cx, v);
            }
        }
    }
}

/// The address of a statement, a key for per-statement facts that stays
/// valid while the module is borrowed.
pub fn stmt_key(s: &Stmt) -> usize {
    std::ptr::from_ref(s) as usize
}
