//! Questions about blocks and the rewrites the passes share: what a block
//! assigns, whether it jumps or synchronises, and copying a block with a
//! local replaced by an expression and its own locals renamed.

use crate::ir::visit::{self, Visit};
use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{Block, Body, Expr, ExprKind, LocalId, MemOrder, Stmt, StmtClass, StmtKind};
use std::collections::HashMap;

/// Whether some statement of `b` (at any depth) gives `local` a value: an
/// assignment, a declaration, or a loop variable.
pub fn assigns(b: &Block, local: LocalId) -> bool {
    let mut f = FindAssign {
        local,
        found: false,
    };
    f.visit_block(b);
    f.found
}

/// Whether `s` (or a statement nested in it) gives `local` a value.
pub fn stmt_assigns(s: &Stmt, local: LocalId) -> bool {
    let mut f = FindAssign {
        local,
        found: false,
    };
    f.visit_stmt(s);
    f.found
}

struct FindAssign {
    local: LocalId,
    found: bool,
}

impl<'ir> Visit<'ir> for FindAssign {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        if gives_value(&s.kind).contains(&self.local) {
            self.found = true;
        }
        visit::walk_stmt(self, s);
    }
}

/// The locals statement `s` itself (not a statement nested in it) gives a
/// value: declares (`let`, a loop's variable, a vector load's names) or
/// assigns. Every question here about what a block assigns reads this one
/// list.
fn gives_value(s: &StmtKind) -> &[LocalId] {
    match s {
        StmtKind::Let { local, .. } | StmtKind::Assign { local, .. } => std::slice::from_ref(local),
        StmtKind::For { var, .. } | StmtKind::ForList { var, .. } => std::slice::from_ref(var),
        StmtKind::LoadVector { locals, .. } => locals,
        _ => &[],
    }
}

/// [`gives_value`] without the assignments: the locals `s` declares.
fn declares(s: &StmtKind) -> &[LocalId] {
    match s {
        StmtKind::Assign { .. } => &[],
        _ => gives_value(s),
    }
}

/// [`gives_value`], to rename them.
fn gives_value_mut(s: &mut StmtKind) -> &mut [LocalId] {
    match s {
        StmtKind::Let { local, .. } | StmtKind::Assign { local, .. } => std::slice::from_mut(local),
        StmtKind::For { var, .. } | StmtKind::ForList { var, .. } => std::slice::from_mut(var),
        StmtKind::LoadVector { locals, .. } => locals,
        _ => &mut [],
    }
}

/// Whether `b` holds a `break` or `continue` of the loop it is the body of
/// (not those of loops nested in it).
pub fn jumps_out(b: &Block) -> bool {
    struct Find {
        depth: u32,
        found: bool,
    }
    impl<'ir> Visit<'ir> for Find {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            match &s.kind {
                StmtKind::Break | StmtKind::Continue if self.depth == 0 => self.found = true,
                StmtKind::While { .. } | StmtKind::For { .. } => {
                    self.depth += 1;
                    visit::walk_stmt(self, s);
                    self.depth -= 1;
                    return;
                }
                // A loop over a list is not one `break` can leave (E0160):
                // its body's jumps are those of the loop around it.
                _ => {}
            }
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find {
        depth: 0,
        found: false,
    };
    f.visit_block(b);
    f.found
}

/// Whether `b` synchronises or orders memory in any way the passes leave
/// alone: barriers of every kind, bulk copies, fences, barrier tests,
/// atomics with an order other than `relaxed` (and statements that failed
/// to check, which never reach a pass).
pub fn synchronises(b: &Block) -> bool {
    struct Find {
        found: bool,
    }
    impl<'ir> Visit<'ir> for Find {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            // By its class (`ir::StmtClass`): a new kind of statement that
            // synchronises is classified there.
            match s.kind.class() {
                StmtClass::CtaBarrier(_) | StmtClass::Sync(_) | StmtClass::Failed => {
                    self.found = true
                }
                StmtClass::Compute | StmtClass::Control | StmtClass::Jump | StmtClass::Call(_) => {}
            }
            visit::walk_stmt(self, s);
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            match &e.kind {
                ExprKind::BarrierTest { .. } => self.found = true,
                ExprKind::Atomic { sem, .. } if sem.order != MemOrder::Relaxed => self.found = true,
                _ => {}
            }
            visit::walk_expr(self, e);
        }
    }
    let mut f = Find { found: false };
    f.visit_block(b);
    f.found
}

/// The number of statements and expressions in `b` (the measure of code
/// size the passes' budgets are in), if at most `limit`: the walk stops
/// past the limit, so that asking about every loop of a deep nest costs
/// each loop at most `limit` steps, not its whole subtree.
pub fn size_within(b: &Block, limit: usize) -> Option<usize> {
    struct Count {
        n: usize,
        limit: usize,
    }
    impl<'ir> Visit<'ir> for Count {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.n += 1;
            if self.n <= self.limit {
                visit::walk_stmt(self, s);
            }
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            self.n += 1;
            if self.n <= self.limit {
                visit::walk_expr(self, e);
            }
        }
    }
    let mut c = Count { n: 0, limit };
    for s in &b.stmts {
        c.visit_stmt(s);
        if c.n > limit {
            return None;
        }
    }
    Some(c.n)
}

/// Every local `b` gives a value (assigns, declares, or counts with): the
/// locals whose value may differ between iterations of a loop over `b`.
pub fn assigned_locals(b: &Block) -> Vec<LocalId> {
    struct Find(Vec<LocalId>);
    impl<'ir> Visit<'ir> for Find {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.0.extend_from_slice(gives_value(&s.kind));
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(Vec::new());
    f.visit_block(b);
    f.0
}

/// Whether `e` has the same value in every iteration of a loop that
/// changes the locals `assigned` (and `var`): arithmetic over constants,
/// special registers, scalar parameters and other locals; no loads, calls
/// or anything else that reads memory.
pub fn invariant(e: &Expr, assigned: &[LocalId], var: Option<LocalId>) -> bool {
    let inv = |x: &Expr| invariant(x, assigned, var);
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Param(_) | ExprKind::Special(_) => true,
        ExprKind::Local(l) => Some(*l) != var && !assigned.contains(l),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => inv(a),
        ExprKind::Binary(_, a, b) => inv(a) && inv(b),
        ExprKind::Select(c, a, b) => inv(c) && inv(a) && inv(b),
        _ => false,
    }
}

/// Whether two invariant expressions (see [`invariant`]) are the same
/// computation, whatever their ids and spans.
pub fn same(a: &Expr, b: &Expr) -> bool {
    a.ty == b.ty
        && match (&a.kind, &b.kind) {
            (ExprKind::Const(x), ExprKind::Const(y)) => x == y,
            (ExprKind::Param(x), ExprKind::Param(y)) => x == y,
            (ExprKind::Special(x), ExprKind::Special(y)) => x == y,
            (ExprKind::Local(x), ExprKind::Local(y)) => x == y,
            (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && same(x, y),
            (ExprKind::Cast(x), ExprKind::Cast(y)) => same(x, y),
            (ExprKind::Binary(o, x1, x2), ExprKind::Binary(p, y1, y2)) => {
                o == p && same(x1, y1) && same(x2, y2)
            }
            (ExprKind::Select(c, x1, x2), ExprKind::Select(d, y1, y2)) => {
                same(c, d) && same(x1, y1) && same(x2, y2)
            }
            _ => false,
        }
}

/// A copy of `b`, for `body`, with every read of `local` replaced by
/// `value` (when given), every local declared in `b` (by `let` or as a
/// loop variable) replaced by a fresh one of `body`, and fresh ids: a copy
/// that can stand next to the original and to other copies.
pub fn copy_block(body: &mut Body, b: &Block, local: LocalId, value: Option<&Expr>) -> Block {
    match value {
        Some(v) => copy_block_with(body, b, &[(local, v)]),
        None => copy_block_with(body, b, &[]),
    }
}

/// [`copy_block`] with several locals replaced, each by its expression.
pub fn copy_block_with(body: &mut Body, b: &Block, subst: &[(LocalId, &Expr)]) -> Block {
    let mut copy = b.clone();
    let mut declared = Vec::new();
    collect_declared(&copy, &mut declared);
    let mut renames = HashMap::new();
    for old in declared {
        if renames.contains_key(&old) {
            continue;
        }
        let Some(l) = body.locals.get(old.index()) else {
            continue;
        };
        let (ty, span, mutable) = (l.ty, l.span, l.mutable);
        let fresh = body.fresh_local(ty, span);
        // As mutable as the original: value ranges trust immutable locals.
        if let Some(f) = body.locals.get_mut(fresh.index()) {
            f.mutable = mutable;
        }
        renames.insert(old, fresh);
    }
    let mut r = Rewrite {
        renames: &renames,
        subst,
    };
    r.visit_block_mut(&mut copy);
    body.renumber_block(&mut copy);
    copy
}

fn collect_declared(b: &Block, out: &mut Vec<LocalId>) {
    struct Decls<'a>(&'a mut Vec<LocalId>);
    impl<'ir> Visit<'ir> for Decls<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.0.extend_from_slice(declares(&s.kind));
            visit::walk_stmt(self, s);
        }
    }
    Decls(out).visit_block(b);
}

struct Rewrite<'a> {
    renames: &'a HashMap<LocalId, LocalId>,
    subst: &'a [(LocalId, &'a Expr)],
}

impl Rewrite<'_> {
    fn rename(&self, l: &mut LocalId) {
        if let Some(n) = self.renames.get(l) {
            *l = *n;
        }
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        for l in gives_value_mut(&mut s.kind) {
            self.rename(l);
        }
        visit_mut::walk_stmt_mut(self, s);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Local(l) = &mut e.kind {
            if let Some((_, v)) = self.subst.iter().find(|(s, _)| s == l) {
                let span = e.span;
                *e = (*v).clone();
                // The copy stands where the read was.
                e.span = span;
                return;
            }
            self.rename(l);
            return;
        }
        visit_mut::walk_expr_mut(self, e);
    }
}
