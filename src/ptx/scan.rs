//! Facts about a body that the prologue needs before the body is written:
//! which special registers it reads, whether it touches another CTA's shared
//! memory, uses bulk copies, tracks barrier parities, calls functions.

use crate::ir::{
    BarrierOpKind, BarrierRef, Block, Expr, ExprKind, FuncId, Parity, Place, PlaceKind, Special,
    Stmt, StmtKind,
};

#[derive(Debug, Default)]
pub(super) struct Usage {
    /// Special registers read, in first-use order.
    pub(super) specials: Vec<Special>,
    /// `remote(...)` places or `arrive_remote`: the kernel must synchronise
    /// its cluster before exiting.
    pub(super) remote: bool,
    /// `copy_async` / `copy_async_store`.
    pub(super) bulk: bool,
    /// Barrier groups (by index) with a tracked-parity `wait()`/`test()`.
    pub(super) tracked: Vec<usize>,
    /// Functions called directly.
    pub(super) calls: Vec<FuncId>,
    /// Shared arrays (by index) addressed with a run-time index.
    pub(super) dyn_shared: Vec<usize>,
    /// Barrier groups (by index) referenced with a run-time index.
    pub(super) dyn_barriers: Vec<usize>,
}

fn add(list: &mut Vec<usize>, i: usize) {
    if !list.contains(&i) {
        list.push(i);
    }
}

fn is_dynamic(e: &Expr) -> bool {
    crate::ir::consteval::eval_int(e).is_none()
}

impl Usage {
    pub(super) fn of_block(b: &Block) -> Usage {
        let mut u = Usage::default();
        u.block(b);
        u
    }

    fn special(&mut self, s: Special) {
        if !self.specials.contains(&s) {
            self.specials.push(s);
        }
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { value, .. } | StmtKind::Assign { value, .. } => self.expr(value),
            StmtKind::Store { place, value, .. } => {
                self.place(place);
                self.expr(value);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.expr(cond);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                self.expr(start);
                self.expr(end);
                self.expr(step);
                self.block(body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e),
            StmtKind::Call { func, args } => {
                self.call(*func);
                args.iter().for_each(|a| self.expr(a));
            }
            StmtKind::Barrier(op) => {
                self.barrier(&op.barrier);
                match &op.kind {
                    BarrierOpKind::Arrive { count } => {
                        if let Some(c) = count {
                            self.expr(c);
                        }
                    }
                    BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
                        self.expr(bytes)
                    }
                    BarrierOpKind::ArriveRemote { rank } => {
                        self.remote = true;
                        self.expr(rank);
                    }
                    BarrierOpKind::Wait { parity } => self.parity(&op.barrier, parity),
                    BarrierOpKind::WaitCluster { parity } => self.expr(parity),
                }
            }
            StmtKind::CopyAsync {
                dst,
                src,
                bytes,
                barrier,
            } => {
                self.bulk = true;
                self.place(dst);
                self.place(src);
                self.expr(bytes);
                self.barrier(barrier);
            }
            StmtKind::CopyAsyncStore { dst, src, bytes } => {
                self.bulk = true;
                self.place(dst);
                self.place(src);
                self.expr(bytes);
            }
            StmtKind::Return(None)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::SyncThreads
            | StmtKind::ClusterSync
            | StmtKind::FenceProxyAsync
            | StmtKind::CopyAsyncCommit
            | StmtKind::CopyAsyncWait(_) => {}
        }
    }

    fn call(&mut self, f: FuncId) {
        if !self.calls.contains(&f) {
            self.calls.push(f);
        }
    }

    fn barrier(&mut self, r: &BarrierRef) {
        if let Some(i) = &r.index {
            if is_dynamic(i) {
                add(&mut self.dyn_barriers, r.group.index());
            }
            self.expr(i);
        }
    }

    fn parity(&mut self, r: &BarrierRef, p: &Parity) {
        match p {
            Parity::Explicit(e) => self.expr(e),
            Parity::Tracked => {
                add(&mut self.tracked, r.group.index());
            }
        }
    }

    fn place(&mut self, p: &Place) {
        match &p.kind {
            PlaceKind::Global { index, .. } => self.expr(index),
            PlaceKind::Shared { array, indices } => {
                if indices.iter().any(is_dynamic) {
                    add(&mut self.dyn_shared, array.index());
                }
                indices.iter().for_each(|i| self.expr(i));
            }
            PlaceKind::Remote {
                array,
                rank,
                indices,
            } => {
                self.remote = true;
                add(&mut self.dyn_shared, array.index());
                self.expr(rank);
                indices.iter().for_each(|i| self.expr(i));
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) => {}
            ExprKind::Special(s) => {
                if *s == Special::WarpId {
                    // Computed from the thread index and block shape.
                    for d in [crate::ir::Dim::X, crate::ir::Dim::Y, crate::ir::Dim::Z] {
                        self.special(Special::ThreadIdx(d));
                    }
                    self.special(Special::BlockDim(crate::ir::Dim::X));
                    self.special(Special::BlockDim(crate::ir::Dim::Y));
                }
                self.special(*s);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Select(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                self.expr(cond);
                self.block(then_block);
                self.expr(then_value);
                self.block(else_block);
                self.expr(else_value);
            }
            ExprKind::Load(p) => self.place(p),
            ExprKind::Call { func, args } => {
                self.call(*func);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
                args.iter().for_each(|a| self.expr(a))
            }
            ExprKind::Atomic { place, args, .. } => {
                self.place(place);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::BarrierTest { barrier, parity } => {
                self.barrier(barrier);
                self.parity(barrier, parity);
            }
        }
    }
}

/// True when evaluating `e` may run statements that assign locals (an `if`
/// expression with statements in a branch): an operand already read from a
/// local's register must then be copied first.
pub(super) fn may_assign(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            !then_block.stmts.is_empty()
                || !else_block.stmts.is_empty()
                || may_assign(cond)
                || may_assign(then_value)
                || may_assign(else_value)
        }
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {
            false
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => may_assign(a),
        ExprKind::Binary(_, a, b) => may_assign(a) || may_assign(b),
        ExprKind::Select(c, a, b) => may_assign(c) || may_assign(a) || may_assign(b),
        ExprKind::Load(p) => place_may_assign(p),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            args.iter().any(may_assign)
        }
        ExprKind::Atomic { place, args, .. } => {
            place_may_assign(place) || args.iter().any(may_assign)
        }
        ExprKind::BarrierTest { barrier, parity } => {
            barrier.index.as_deref().is_some_and(may_assign)
                || matches!(&**parity, Parity::Explicit(e) if may_assign(e))
        }
    }
}

fn place_may_assign(p: &Place) -> bool {
    match &p.kind {
        PlaceKind::Global { index, .. } => may_assign(index),
        PlaceKind::Shared { indices, .. } => indices.iter().any(may_assign),
        PlaceKind::Remote { rank, indices, .. } => {
            may_assign(rank) || indices.iter().any(may_assign)
        }
    }
}

/// True when `e` can be evaluated even where the source would not evaluate
/// it (the right side of `&&`/`||`): no memory access, call, warp or
/// barrier operation, and no nested branches.
pub(super) fn speculatable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => true,
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => speculatable(a),
        ExprKind::Binary(_, a, b) => speculatable(a) && speculatable(b),
        ExprKind::Select(c, a, b) => speculatable(c) && speculatable(a) && speculatable(b),
        ExprKind::Math(_, args) => args.iter().all(speculatable),
        ExprKind::If { .. }
        | ExprKind::Load(_)
        | ExprKind::Call { .. }
        | ExprKind::Atomic { .. }
        | ExprKind::Warp(..)
        | ExprKind::BarrierTest { .. } => false,
    }
}
