//! A walk over every node of an IR body that hover can describe:
//! expressions, memory places and barrier references.

use crate::ir::{
    BarrierOp, BarrierOpKind, BarrierRef, Block, Body, Expr, ExprKind, Function, Kernel, Module,
    Parity, Place, PlaceKind, Stmt, StmtKind,
};

/// The kernel or function a node is in (for its locals, parameters, shared
/// arrays and barrier groups).
#[derive(Clone, Copy)]
pub enum Owner<'m> {
    Kernel(&'m Kernel),
    Function(&'m Function),
}

impl<'m> Owner<'m> {
    pub fn body(self) -> &'m Body {
        match self {
            Owner::Kernel(k) => &k.body,
            Owner::Function(f) => &f.body,
        }
    }

    pub fn kernel(self) -> Option<&'m Kernel> {
        match self {
            Owner::Kernel(k) => Some(k),
            Owner::Function(_) => None,
        }
    }
}

#[derive(Clone, Copy)]
pub enum Node<'m> {
    Expr(&'m Expr),
    Place(&'m Place),
    Barrier(&'m BarrierRef),
}

/// Calls `f` on every node of every kernel and function of `module`.
pub fn module<'m>(module: &'m Module, f: &mut dyn FnMut(Owner<'m>, Node<'m>)) {
    for k in &module.kernels {
        let owner = Owner::Kernel(k);
        block(&k.body.block, &mut |n| f(owner, n));
    }
    for func in &module.functions {
        let owner = Owner::Function(func);
        block(&func.body.block, &mut |n| f(owner, n));
    }
}

fn block<'m>(b: &'m Block, f: &mut dyn FnMut(Node<'m>)) {
    for s in &b.stmts {
        stmt(s, f);
    }
}

fn stmt<'m>(s: &'m Stmt, f: &mut dyn FnMut(Node<'m>)) {
    match &s.kind {
        StmtKind::Let { value, .. } | StmtKind::Assign { value, .. } => expr(value, f),
        StmtKind::Store {
            place: p, value, ..
        } => {
            place(p, f);
            expr(value, f);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            expr(cond, f);
            block(then_block, f);
            if let Some(b) = else_block {
                block(b, f);
            }
        }
        StmtKind::While { cond, body } => {
            expr(cond, f);
            block(body, f);
        }
        StmtKind::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            expr(start, f);
            expr(end, f);
            expr(step, f);
            block(body, f);
        }
        StmtKind::Return(value) => {
            if let Some(v) = value {
                expr(v, f);
            }
        }
        StmtKind::Expr(e) => expr(e, f),
        StmtKind::Call { args, .. } => args.iter().for_each(|a| expr(a, f)),
        StmtKind::Barrier(op) => barrier_op(op, f),
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => {
            place(dst, f);
            place(src, f);
            expr(bytes, f);
            barrier_ref(barrier, f);
        }
        StmtKind::CopyAsyncStore { dst, src, bytes } => {
            place(dst, f);
            place(src, f);
            expr(bytes, f);
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

fn barrier_op<'m>(op: &'m BarrierOp, f: &mut dyn FnMut(Node<'m>)) {
    barrier_ref(&op.barrier, f);
    match &op.kind {
        BarrierOpKind::Arrive { count } => {
            if let Some(c) = count {
                expr(c, f);
            }
        }
        BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
            expr(bytes, f)
        }
        BarrierOpKind::ArriveRemote { rank } => expr(rank, f),
        BarrierOpKind::Wait { parity: p } => parity(p, f),
        BarrierOpKind::WaitCluster { parity } => expr(parity, f),
    }
}

fn barrier_ref<'m>(r: &'m BarrierRef, f: &mut dyn FnMut(Node<'m>)) {
    f(Node::Barrier(r));
    if let Some(i) = &r.index {
        expr(i, f);
    }
}

fn parity<'m>(p: &'m Parity, f: &mut dyn FnMut(Node<'m>)) {
    match p {
        Parity::Explicit(e) => expr(e, f),
        Parity::Tracked => {}
    }
}

fn place<'m>(p: &'m Place, f: &mut dyn FnMut(Node<'m>)) {
    f(Node::Place(p));
    match &p.kind {
        PlaceKind::Global { index, .. } => expr(index, f),
        PlaceKind::Shared { indices, .. } => indices.iter().for_each(|i| expr(i, f)),
        PlaceKind::Remote { rank, indices, .. } => {
            expr(rank, f);
            indices.iter().for_each(|i| expr(i, f));
        }
    }
}

fn expr<'m>(e: &'m Expr, f: &mut dyn FnMut(Node<'m>)) {
    f(Node::Expr(e));
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr(a, f),
        ExprKind::Binary(_, a, b) => {
            expr(a, f);
            expr(b, f);
        }
        ExprKind::Select(a, b, c) => {
            expr(a, f);
            expr(b, f);
            expr(c, f);
        }
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            expr(cond, f);
            block(then_block, f);
            expr(then_value, f);
            block(else_block, f);
            expr(else_value, f);
        }
        ExprKind::Load(p) => place(p, f),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            args.iter().for_each(|a| expr(a, f))
        }
        ExprKind::Atomic { place: p, args, .. } => {
            place(p, f);
            args.iter().for_each(|a| expr(a, f));
        }
        ExprKind::BarrierTest { barrier, parity: p } => {
            barrier_ref(barrier, f);
            parity(p, f);
        }
    }
}
