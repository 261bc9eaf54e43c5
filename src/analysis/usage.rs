//! What a body uses, which the PTX writer's prologue needs before the body
//! is written (which special registers it reads, whether it touches
//! another CTA's shared memory, uses bulk copies, tracks barrier parities,
//! calls functions), which `while` loops a `return` leaves, and two facts
//! per expression, computed bottom-up in the same walk: whether evaluating
//! it may assign a local, and whether it may be evaluated speculatively.

use super::{BodyInfo, CtaSync, ExprFacts};
use crate::ir::visit::{self, Visit};
use crate::ir::{
    BarrierId, BarrierOpKind, BarrierRef, Body, Dim, Expr, ExprId, ExprKind, FuncId, Parity, Place,
    PlaceKind, SharedId, Special, Stmt, StmtId, StmtKind,
};
use crate::ir::{StmtClass, SyncOp};
use crate::span::Span;
use std::collections::HashSet;

#[derive(Clone, Debug, Default)]
pub struct Usage {
    /// Special registers read, in first-use order (the writer numbers
    /// their registers in this order). `warp_id` brings the thread index
    /// and block shape it is computed from.
    pub specials: Vec<Special>,
    /// `remote(...)` places or `arrive_remote`: the kernel must synchronise
    /// its cluster before exiting.
    pub remote: bool,
    /// `copy_async` / `copy_async_store`.
    pub bulk: bool,
    /// Barrier groups with a tracked-parity `wait()`/`test()` (or
    /// `wait_cluster()`/`test_cluster()`), in first-use order.
    pub tracked: Vec<BarrierId>,
    /// Functions called directly, in first-call order.
    pub calls: Vec<FuncId>,
    /// Shared arrays addressed with a run-time index (or remotely).
    pub dyn_shared: Vec<SharedId>,
    /// Barrier groups referenced with a run-time index.
    pub dyn_barriers: Vec<BarrierId>,
    /// Where the body may run a CTA-wide barrier, in source order: each
    /// `sync_threads()`, `cluster_sync()` and call of a function (which
    /// runs one when its callee does, `FunctionInfo::sync`).
    pub sync_sites: Vec<SyncSite>,
    /// The `while` loops with a `return` in their body (at any depth):
    /// the PTX writer gives them a guarded shape that ptxas 13.5 assembles
    /// (`Writer::while_stmt`, docs/architecture.md, "ptxas workarounds").
    pub returning_whiles: HashSet<StmtId>,
    /// The largest `set_max_regs(n)`, if the body has one: the kernel is
    /// launched with one CTA per SM (`.minnctapersm 1`), and its count at
    /// entry is at most this ([`crate::ir::entry_registers`]).
    pub max_regs: Option<u32>,
    /// The shared arrays `wgmma` reads, each with whether it is read
    /// MN-major (`transpose(...)`), in first-use order: the writer's
    /// prologue computes the base of their matrix descriptors once.
    pub wgmma_operands: Vec<(SharedId, bool)>,
}

/// A node that may run a CTA-wide barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncSite {
    pub node: Node,
    pub span: Span,
    pub what: SyncCall,
}

/// A statement or an expression of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Stmt(StmtId),
    Expr(ExprId),
}

/// What a [`SyncSite`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncCall {
    Barrier(CtaSync),
    Call(FuncId),
}

/// An entry of one of [`Usage`]'s lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Seen {
    Special(Special),
    Call(FuncId),
    Tracked(BarrierId),
    DynShared(SharedId),
    DynBarrier(BarrierId),
    WgmmaOperand(SharedId, bool),
}

/// The usage of `body` and its expressions' flags, in a [`BodyInfo`] whose
/// other facts are still to be found.
pub fn of_body(body: &Body) -> BodyInfo {
    let mut w = Walk {
        info: BodyInfo::for_body(body),
        seen: HashSet::new(),
        open_whiles: Vec::new(),
    };
    w.visit_block(&body.block);
    w.info
}

struct Walk {
    info: BodyInfo,
    /// Everything in the usage lists, so that adding is constant time.
    seen: HashSet<Seen>,
    /// Per `while` loop being walked, innermost last: whether a `return`
    /// was found in it (passed to the enclosing loop when it is left, so
    /// the walk stays linear).
    open_whiles: Vec<bool>,
}

impl Walk {
    /// Appends `x` to `list` unless `seen` says it is there already.
    fn add<T>(&mut self, seen: Seen, x: T, list: impl FnOnce(&mut Usage) -> &mut Vec<T>) {
        if self.seen.insert(seen) {
            list(&mut self.info.usage).push(x);
        }
    }

    fn add_special(&mut self, s: Special) {
        self.add(Seen::Special(s), s, |u| &mut u.specials);
    }

    /// Statement `s` may run a CTA-wide barrier.
    fn sync_site(&mut self, s: &Stmt, what: SyncCall) {
        self.info.usage.sync_sites.push(SyncSite {
            node: Node::Stmt(s.id),
            span: s.span,
            what,
        });
    }

    fn add_call(&mut self, f: FuncId) {
        self.add(Seen::Call(f), f, |u| &mut u.calls);
    }

    /// The flags of expression `e`, from its children's (already set: the
    /// walk sets a node's after its children's).
    fn flags(&self, e: &Expr) -> u8 {
        let child = |x: &Expr, flag: u8| self.info.has(x.id, flag);
        let mut may_assign = false;
        let mut speculatable = true;
        for_each_child(e, &mut |x| {
            may_assign |= child(x, ExprFacts::MAY_ASSIGN);
            speculatable &= child(x, ExprFacts::SPECULATABLE);
        });
        match &e.kind {
            ExprKind::If {
                then_block,
                else_block,
                ..
            } => {
                may_assign |= !then_block.stmts.is_empty() || !else_block.stmts.is_empty();
                speculatable = false;
            }
            // An address is computed, not read: `AddrOf` may be hoisted.
            ExprKind::AddrOf(_) => {}
            ExprKind::Load(_)
            | ExprKind::Call { .. }
            | ExprKind::Atomic { .. }
            | ExprKind::Warp(..)
            | ExprKind::BarrierTest { .. } => speculatable = false,
            ExprKind::Const(_)
            | ExprKind::Local(_)
            | ExprKind::Param(_)
            | ExprKind::Special(_)
            | ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Select(..)
            | ExprKind::Math(..) => {}
        }
        let mut flags = 0;
        if may_assign {
            flags |= ExprFacts::MAY_ASSIGN;
        }
        if speculatable {
            flags |= ExprFacts::SPECULATABLE;
        }
        flags
    }
}

/// Calls `f` on each expression directly inside `e`: operands, indices of
/// its place, the index and parity of a barrier test, and an `if`
/// expression's condition and values (not the statements of its blocks).
pub fn for_each_child(e: &Expr, f: &mut impl FnMut(&Expr)) {
    let place = |p: &Place, f: &mut dyn FnMut(&Expr)| match &p.kind {
        PlaceKind::Global { index, .. } => f(index),
        PlaceKind::Shared { indices, .. } => indices.iter().for_each(f),
        PlaceKind::Remote { rank, indices, .. } => {
            f(rank);
            indices.iter().for_each(f);
        }
        PlaceKind::SharedAt { addr, .. } => f(addr),
        PlaceKind::Accum { index, .. } => f(index),
        PlaceKind::Register { indices, .. } => indices.iter().for_each(f),
    };
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => f(a),
        ExprKind::Binary(_, a, b) => {
            f(a);
            f(b);
        }
        ExprKind::Select(c, a, b) => {
            f(c);
            f(a);
            f(b);
        }
        ExprKind::If {
            cond,
            then_value,
            else_value,
            ..
        } => {
            f(cond);
            f(then_value);
            f(else_value);
        }
        ExprKind::Load(p) | ExprKind::AddrOf(p) => place(p, f),
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
            args.iter().for_each(f)
        }
        ExprKind::Atomic { place: p, args, .. } => {
            place(p, f);
            args.iter().for_each(f);
        }
        ExprKind::BarrierTest {
            barrier, parity, ..
        } => {
            if let Some(i) = &barrier.index {
                f(i);
            }
            if let Parity::Explicit(p) = parity.as_ref() {
                f(p);
            }
        }
    }
}

fn is_dynamic(e: &Expr) -> bool {
    crate::ir::consteval::eval_int(e).is_none()
}

// Each hook records its node's usage before walking the children, so
// `specials` keeps first-use order; an expression's flags are set after
// its children's.
impl<'ir> Visit<'ir> for Walk {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        // By the statement's class (`ir::StmtClass`): a new kind of
        // statement that synchronises is classified there, and met here.
        match s.kind.class() {
            StmtClass::CtaBarrier(b) => self.sync_site(s, SyncCall::Barrier(b)),
            StmtClass::Call(f) => {
                self.sync_site(s, SyncCall::Call(f));
                self.add_call(f);
            }
            StmtClass::Sync(SyncOp::BulkCopy) => self.info.usage.bulk = true,
            // A remote place is found below, where the places are walked.
            StmtClass::Sync(SyncOp::Mbarrier) => {
                self.info.usage.remote |= matches!(
                    &s.kind,
                    StmtKind::Barrier(op) if matches!(op.kind, BarrierOpKind::ArriveRemote { .. })
                )
            }
            StmtClass::Sync(SyncOp::Warpgroup) => match &s.kind {
                StmtKind::SetMaxRegs(n) => {
                    let u = &mut self.info.usage;
                    u.max_regs = Some(u.max_regs.map_or(*n, |m| m.max(*n)));
                }
                StmtKind::Wgmma(w) => {
                    for (p, trans) in [(&w.a, w.trans_a), (&w.b, w.trans_b)] {
                        if let PlaceKind::Shared { array, .. } = &p.kind {
                            let key = (*array, trans);
                            self.add(Seen::WgmmaOperand(key.0, trans), key, |u| {
                                &mut u.wgmma_operands
                            });
                        }
                    }
                }
                _ => {}
            },
            StmtClass::Sync(SyncOp::Warp | SyncOp::Fence | SyncOp::Named | SyncOp::BulkGroup)
            | StmtClass::Compute
            | StmtClass::Control
            | StmtClass::Jump
            | StmtClass::Failed => {}
        }
        let is_while = matches!(s.kind, StmtKind::While { .. });
        if is_while {
            self.open_whiles.push(false);
        }
        if matches!(s.kind, StmtKind::Return(_)) {
            if let Some(returns) = self.open_whiles.last_mut() {
                *returns = true;
            }
        }
        visit::walk_stmt(self, s);
        if is_while && self.open_whiles.pop() == Some(true) {
            self.info.usage.returning_whiles.insert(s.id);
            if let Some(outer) = self.open_whiles.last_mut() {
                *outer = true;
            }
        }
    }

    fn visit_barrier_ref(&mut self, r: &'ir BarrierRef) {
        if r.index.as_deref().is_some_and(is_dynamic) {
            self.add(Seen::DynBarrier(r.group), r.group, |u| &mut u.dyn_barriers);
        }
        visit::walk_barrier_ref(self, r);
    }

    fn visit_parity(&mut self, r: &'ir BarrierRef, p: &'ir Parity) {
        if let Parity::Tracked = p {
            self.add(Seen::Tracked(r.group), r.group, |u| &mut u.tracked);
        }
        visit::walk_parity(self, r, p);
    }

    fn visit_place(&mut self, p: &'ir Place) {
        match &p.kind {
            PlaceKind::Global { .. } => {}
            PlaceKind::Shared { array, indices } => {
                if indices.iter().any(is_dynamic) {
                    self.add(Seen::DynShared(*array), *array, |u| &mut u.dyn_shared);
                }
            }
            PlaceKind::Remote { array, .. } => {
                self.info.usage.remote = true;
                self.add(Seen::DynShared(*array), *array, |u| &mut u.dyn_shared);
            }
            // The address is a value already: no base register needed; an
            // accumulator and a register array are registers.
            PlaceKind::SharedAt { .. } | PlaceKind::Accum { .. } | PlaceKind::Register { .. } => {}
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
            ExprKind::Call { func, .. } => {
                self.add_call(*func);
                self.info.usage.sync_sites.push(SyncSite {
                    node: Node::Expr(e.id),
                    span: e.span,
                    what: SyncCall::Call(*func),
                });
            }
            _ => {}
        }
        visit::walk_expr(self, e);
        let flags = self.flags(e);
        if let Some(f) = self.info.expr_flags.get_mut(e.id.index()) {
            // Uniformity is not known yet: varying until it is found.
            *f = flags | ExprFacts::VARYING;
        }
    }
}
