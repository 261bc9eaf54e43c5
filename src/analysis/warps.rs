//! Which named-barrier operations every lane of a warp reaches together:
//! the fact behind W0324 (`crate::barriers::named`) and the PTX writer's
//! choice of `bar.sync` (`.aligned`) over `barrier.sync`.
//!
//! A condition is uniform in each warp when it is built from `warp_id`,
//! values uniform in the CTA (constants, parameters, `block_idx`, uniform
//! locals) and immutable locals bound to such values; with a block whose x
//! extent is a multiple of 32 also from `thread_idx.y`/`z` and from
//! `thread_idx.x >> 5` (what the `special` pass makes of `warp_id`),
//! `thread_idx.x / 32k` and comparisons of `thread_idx.x` that split at a
//! warp boundary (`thread_idx.x < 64`). An operation whose
//! enclosing conditions (`if`, loop conditions and ranges, the left operand
//! of `&&`/`||`) are all uniform in each warp, in a kernel without
//! `return`, `break` or `continue`, runs in whole warps.

use super::BodyInfo;
use crate::ir::visit::{self, Visit};
use crate::ir::{
    consteval, BinOp, Dim, Expr, ExprKind, Kernel, LocalId, Special, Stmt, StmtId, StmtKind,
};
use crate::span::Span;
use std::collections::{HashMap, HashSet};

/// The named-barrier operations of a kernel, each with the innermost
/// enclosing condition that may split a warp (`None`: none), and whether
/// the kernel jumps (`return`, `break`, `continue`) anywhere.
#[derive(Clone, Debug, Default)]
pub struct NamedSites {
    /// Keyed by the operation's statement: each of the writer's and the
    /// barrier pass's lookups is then constant time, however many named-
    /// barrier operations a kernel has.
    pub sites: HashMap<StmtId, Option<Span>>,
    pub jumps: bool,
}

impl NamedSites {
    /// Whether every lane of a warp runs statement `s` together.
    pub fn converged(&self, s: StmtId) -> bool {
        !self.jumps && self.sites.get(&s).is_some_and(Option::is_none)
    }

    /// The innermost condition around operation `s` that may split a warp.
    pub fn split(&self, s: StmtId) -> Option<Span> {
        self.sites.get(&s).copied().flatten()
    }
}

pub fn of_kernel(k: &Kernel, info: &BodyInfo) -> NamedSites {
    let mut w = Walk {
        k,
        info,
        conds: Vec::new(),
        uniform_lets: HashSet::new(),
        out: NamedSites::default(),
    };
    w.visit_block(&k.body.block);
    w.out
}

struct Walk<'a, 'ir> {
    k: &'ir Kernel,
    info: &'a BodyInfo,
    /// The conditions enclosing the node being visited, outermost first.
    conds: Vec<&'ir Expr>,
    /// Immutable locals bound to a warp-uniform value (`let w = warp_id;`).
    uniform_lets: HashSet<LocalId>,
    out: NamedSites,
}

impl Walk<'_, '_> {
    /// Whether every thread of a warp computes the same `e`.
    fn warp_uniform(&self, e: &Expr) -> bool {
        if !self.info.varies(e.id) {
            return true;
        }
        // Rows of whole warps: `thread_idx.x` over a multiple of 32 (the
        // `special` pass writes `warp_id` as `thread_idx.x >> 5`), and the
        // other dimensions, are the same in every lane of a warp.
        let rows = self.k.block.is_some_and(|[x, _, _]| x != 0 && x % 32 == 0);
        let tid_x = |a: &Expr| matches!(a.kind, ExprKind::Special(Special::ThreadIdx(Dim::X)));
        match &e.kind {
            ExprKind::Special(Special::WarpId) => true,
            ExprKind::Special(Special::ThreadIdx(Dim::Y | Dim::Z)) => rows,
            ExprKind::Binary(BinOp::Shr, a, b) if rows && tid_x(a) => {
                consteval::eval_int(b).is_some_and(|c| (5..32).contains(&c))
            }
            ExprKind::Binary(BinOp::Div, a, b) if rows && tid_x(a) => {
                consteval::eval_int(b).is_some_and(|d| d > 0 && d % 32 == 0)
            }
            // `thread_idx.x < 64`: a split at a warp boundary.
            ExprKind::Binary(op @ (BinOp::Lt | BinOp::Ge | BinOp::Le | BinOp::Gt), a, b)
                if rows && tid_x(a) =>
            {
                let edge = if matches!(op, BinOp::Lt | BinOp::Ge) {
                    0
                } else {
                    31
                };
                consteval::eval_int(b).is_some_and(|c| c.rem_euclid(32) == edge)
            }
            ExprKind::Const(_) | ExprKind::Param(_) => true,
            ExprKind::Local(l) => !self.info.local_varies(*l) || self.uniform_lets.contains(l),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.warp_uniform(a),
            ExprKind::Binary(_, a, b) => self.warp_uniform(a) && self.warp_uniform(b),
            ExprKind::Select(c, a, b) => {
                self.warp_uniform(c) && self.warp_uniform(a) && self.warp_uniform(b)
            }
            _ => false,
        }
    }
}

impl<'ir> Visit<'ir> for Walk<'_, 'ir> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        match &s.kind {
            StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue => {
                self.out.jumps = true;
                visit::walk_stmt(self, s);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.visit_expr(cond);
                self.conds.push(cond);
                self.visit_block(then_block);
                if let Some(b) = else_block {
                    self.visit_block(b);
                }
                self.conds.pop();
            }
            StmtKind::While { cond, body } => {
                self.visit_expr(cond);
                self.conds.push(cond);
                self.visit_block(body);
                self.conds.pop();
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                for e in [start, end, step] {
                    self.visit_expr(e);
                }
                self.conds.extend([&**start, &**end, &**step]);
                self.visit_block(body);
                self.conds.truncate(self.conds.len().saturating_sub(3));
            }
            StmtKind::Let { local, value } => {
                let immutable = self
                    .k
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                if immutable && self.warp_uniform(value) {
                    self.uniform_lets.insert(*local);
                }
                visit::walk_stmt(self, s);
            }
            StmtKind::NamedBarrier(_) => {
                let split = self
                    .conds
                    .iter()
                    .rev()
                    .find(|c| !self.warp_uniform(c))
                    .map(|c| c.span);
                self.out.sites.insert(s.id, split);
                visit::walk_stmt(self, s);
            }
            _ => visit::walk_stmt(self, s),
        }
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        // The right operand of `&&`/`||` runs only where the left allows.
        if let ExprKind::Binary(BinOp::And | BinOp::Or, a, b) = &e.kind {
            self.visit_expr(a);
            self.conds.push(a);
            self.visit_expr(b);
            self.conds.pop();
            return;
        }
        visit::walk_expr(self, e);
    }
}
