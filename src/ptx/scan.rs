//! Facts about a body that the prologue needs before the body is written:
//! which special registers it reads, whether it touches another CTA's shared
//! memory, uses bulk copies, tracks barrier parities, calls functions.

use crate::ir::visit::{self, Visit};
use crate::ir::{
    BarrierOpKind, BarrierRef, Block, Dim, Expr, ExprKind, FuncId, Parity, Place, PlaceKind,
    Special, Stmt, StmtKind,
};
use std::collections::HashSet;

#[derive(Debug, Default)]
pub(super) struct Usage {
    /// Special registers read, in first-use order.
    pub(super) specials: Vec<Special>,
    /// `remote(...)` places or `arrive_remote`: the kernel must synchronise
    /// its cluster before exiting.
    pub(super) remote: bool,
    /// `copy_async` / `copy_async_store`.
    pub(super) bulk: bool,
    /// Barrier groups (by index) with a tracked-parity `wait()`/`test()`
    /// (or `wait_cluster()`/`test_cluster()`).
    pub(super) tracked: Vec<usize>,
    /// Functions called directly.
    pub(super) calls: Vec<FuncId>,
    /// Shared arrays (by index) addressed with a run-time index.
    pub(super) dyn_shared: Vec<usize>,
    /// Barrier groups (by index) referenced with a run-time index.
    pub(super) dyn_barriers: Vec<usize>,
    /// Everything in the lists above, so that adding is constant time.
    seen: HashSet<Seen>,
}

/// An entry of one of [`Usage`]'s lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Seen {
    Special(Special),
    Call(FuncId),
    Tracked(usize),
    DynShared(usize),
    DynBarrier(usize),
}

impl Usage {
    /// Appends `x` to `list` (the list `seen` wraps it for) unless it is
    /// there already.
    fn add<T>(&mut self, seen: Seen, x: T, list: impl FnOnce(&mut Usage) -> &mut Vec<T>) {
        if self.seen.insert(seen) {
            list(self).push(x);
        }
    }

    fn add_special(&mut self, s: Special) {
        self.add(Seen::Special(s), s, |u| &mut u.specials);
    }

    fn add_call(&mut self, f: FuncId) {
        self.add(Seen::Call(f), f, |u| &mut u.calls);
    }
}

fn is_dynamic(e: &Expr) -> bool {
    crate::ir::consteval::eval_int(e).is_none()
}

impl Usage {
    pub(super) fn of_block(b: &Block) -> Usage {
        let mut u = Usage::default();
        u.visit_block(b);
        u
    }
}

// Each hook records its node's facts before walking the children, so
// `specials` (which numbers the special registers) keeps first-use order.
impl<'ir> Visit<'ir> for Usage {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        match &s.kind {
            StmtKind::Call { func, .. } => self.add_call(*func),
            StmtKind::Barrier(op) if matches!(op.kind, BarrierOpKind::ArriveRemote { .. }) => {
                self.remote = true
            }
            StmtKind::CopyAsync { .. } | StmtKind::CopyAsyncStore { .. } => self.bulk = true,
            _ => {}
        }
        visit::walk_stmt(self, s);
    }

    fn visit_barrier_ref(&mut self, r: &'ir BarrierRef) {
        if r.index.as_deref().is_some_and(is_dynamic) {
            let g = r.group.index();
            self.add(Seen::DynBarrier(g), g, |u| &mut u.dyn_barriers);
        }
        visit::walk_barrier_ref(self, r);
    }

    fn visit_parity(&mut self, r: &'ir BarrierRef, p: &'ir Parity) {
        if let Parity::Tracked = p {
            let g = r.group.index();
            self.add(Seen::Tracked(g), g, |u| &mut u.tracked);
        }
        visit::walk_parity(self, r, p);
    }

    fn visit_place(&mut self, p: &'ir Place) {
        match &p.kind {
            PlaceKind::Global { .. } => {}
            PlaceKind::Shared { array, indices } => {
                if indices.iter().any(is_dynamic) {
                    let a = array.index();
                    self.add(Seen::DynShared(a), a, |u| &mut u.dyn_shared);
                }
            }
            PlaceKind::Remote { array, .. } => {
                self.remote = true;
                let a = array.index();
                self.add(Seen::DynShared(a), a, |u| &mut u.dyn_shared);
            }
        }
        visit::walk_place(self, p);
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        match &e.kind {
            ExprKind::Special(s) => {
                if *s == Special::WarpId {
                    // Computed from the thread index and block shape.
                    for d in [Dim::X, Dim::Y, Dim::Z] {
                        self.add_special(Special::ThreadIdx(d));
                    }
                    self.add_special(Special::BlockDim(Dim::X));
                    self.add_special(Special::BlockDim(Dim::Y));
                }
                self.add_special(*s);
            }
            ExprKind::Call { func, .. } => self.add_call(*func),
            _ => {}
        }
        visit::walk_expr(self, e);
    }
}

/// True when evaluating `e` may run statements that assign locals (an `if`
/// expression with statements in a branch): an operand already read from a
/// local's register must then be copied first.
pub(super) fn may_assign(e: &Expr) -> bool {
    let mut v = MayAssign(false);
    v.visit_expr(e);
    v.0
}

/// Set once an `if` expression with statements is found.
struct MayAssign(bool);

impl<'ir> Visit<'ir> for MayAssign {
    fn visit_expr(&mut self, e: &'ir Expr) {
        if self.0 {
            return;
        }
        match &e.kind {
            ExprKind::If {
                then_block,
                else_block,
                ..
            } if !then_block.stmts.is_empty() || !else_block.stmts.is_empty() => self.0 = true,
            _ => visit::walk_expr(self, e),
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
