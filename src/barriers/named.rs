//! W0324: a named-barrier operation (`b.sync()`, `b.arrive()`) under a
//! condition that can split the threads of a warp.
//!
//! The hardware counts arrivals at a named barrier a warp at a time, and
//! roles in a warp-specialised kernel are whole warps (`if warp_id == 0`).
//! A condition that is uniform in each warp (built from `warp_id`,
//! constants, parameters, `block_idx`, uniform locals and immutable locals
//! bound to such values) is fine; one on
//! `thread_idx`, `lane_id`, loads or anything else that varies within a
//! warp is reported, on the innermost such condition around the operation.
//! Divergence that comes from elsewhere (a `return` or `break` some threads
//! took) is not reported here: the analysis does not say whether it splits
//! warps. Either way the PTX writer uses the non-`.aligned` forms wherever
//! the threads may diverge.

use super::error::BarrierError;
use crate::analysis::BodyInfo;
use crate::ir::visit::{self, Visit};
use crate::ir::{BinOp, Expr, ExprKind, Kernel, LocalId, Special, Stmt, StmtKind};
use std::collections::HashSet;

pub fn check(k: &Kernel, info: &BodyInfo, out: &mut Vec<BarrierError>) {
    let mut w = Walk {
        k,
        info,
        conds: Vec::new(),
        uniform_lets: HashSet::new(),
        out,
    };
    w.visit_block(&k.body.block);
}

struct Walk<'a, 'ir> {
    k: &'ir Kernel,
    info: &'a BodyInfo,
    /// The conditions enclosing the node being visited, outermost first.
    conds: Vec<&'ir Expr>,
    /// Immutable locals bound to a warp-uniform value (`let w = warp_id;`).
    uniform_lets: HashSet<LocalId>,
    out: &'a mut Vec<BarrierError>,
}

impl Walk<'_, '_> {
    /// Whether every thread of a warp computes the same `e`.
    fn warp_uniform(&self, e: &Expr) -> bool {
        if !self.info.varies(e.id) {
            return true;
        }
        match &e.kind {
            ExprKind::Special(Special::WarpId) => true,
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
                self.conds.truncate(self.conds.len() - 3);
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
            StmtKind::NamedBarrier(op) => {
                let cond = self
                    .conds
                    .iter()
                    .rev()
                    .find(|c| !self.warp_uniform(c))
                    .map(|c| c.span);
                if let (Some(cond), Some(g)) = (cond, self.k.named_barriers.get(op.group.index())) {
                    self.out.push(BarrierError::NamedDivergent {
                        name: g.name.clone(),
                        op: op.kind.method(),
                        span: s.span,
                        cond,
                    });
                }
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
