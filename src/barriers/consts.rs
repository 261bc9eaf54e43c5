//! Immutable locals bound to constants. `let s = 5;` makes `full[s]` as
//! constant as `full[5]` for the checks that need a constant operand: barrier
//! indices (E0305), transaction sizes (E0309) and parities (E0310).
//!
//! An immutable local has exactly one value, from its `let` (an assignment
//! to it is an error and is not lowered), so when that value is constant so
//! is every use. Parameters and loop variables have no `let` and never count.

use super::walk::{self, Cx, Visitor};
use crate::ir::{consteval, Body, Expr, ExprKind, Stmt, StmtKind, Value};

/// The constant value of each immutable local of one body, where it has one.
#[derive(Debug, Default)]
pub struct Consts {
    values: Vec<Option<Value>>,
    /// Some local has a value: only then is an expression that does not
    /// fold as it stands worth substituting (a flag, not a scan of
    /// `values`, which made every `let` cost the body's number of locals).
    any: bool,
}

impl Consts {
    /// Finds the locals of `body` bound to constants. A `let` can only use
    /// locals declared before it, which the pre-order walk has seen.
    pub fn of(body: &Body) -> Consts {
        struct Lets<'b> {
            body: &'b Body,
            consts: Consts,
        }
        impl<'a> Visitor<'a> for Lets<'_> {
            fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
                let StmtKind::Let { local, value } = &s.kind else {
                    return;
                };
                let immutable = self
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                if !immutable {
                    return;
                }
                let v = self.consts.value(value);
                self.consts.any |= v.is_some();
                if let Some(slot) = self.consts.values.get_mut(local.index()) {
                    *slot = v;
                }
            }
        }
        let mut lets = Lets {
            body,
            consts: Consts {
                values: vec![None; body.locals.len()],
                any: false,
            },
        };
        walk::body(body, &mut lets);
        lets.consts
    }

    /// The value of `e`, reading constant locals as their values.
    pub fn value(&self, e: &Expr) -> Option<Value> {
        match consteval::eval(e) {
            Ok(v) => Some(v),
            Err(_) if self.any => consteval::eval(&self.substitute(e)?).ok(),
            Err(_) => None,
        }
    }

    /// The value of `e` as an integer, if it is a constant integer.
    pub fn int(&self, e: &Expr) -> Option<i128> {
        match self.value(e)? {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// `e` with every constant local replaced by its value; `None` as soon
    /// as it holds something constant folding cannot look into (so a large
    /// run-time expression is given up on without being copied).
    fn substitute(&self, e: &Expr) -> Option<Expr> {
        let sub = |x: &Expr| self.substitute(x).map(Box::new);
        let kind = match &e.kind {
            ExprKind::Const(v) => ExprKind::Const(*v),
            ExprKind::Local(l) => ExprKind::Const(self.values.get(l.index()).copied().flatten()?),
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, sub(a)?),
            ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, sub(a)?, sub(b)?),
            ExprKind::Cast(a) => ExprKind::Cast(sub(a)?),
            ExprKind::Select(c, a, b) => ExprKind::Select(sub(c)?, sub(a)?, sub(b)?),
            ExprKind::Math(f, args) => ExprKind::Math(
                *f,
                args.iter()
                    .map(|a| self.substitute(a))
                    .collect::<Option<_>>()?,
            ),
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } if then_block.stmts.is_empty() && else_block.stmts.is_empty() => ExprKind::If {
                cond: sub(cond)?,
                then_block: then_block.clone(),
                then_value: sub(then_value)?,
                else_block: else_block.clone(),
                else_value: sub(else_value)?,
            },
            _ => return None,
        };
        // A copy for constant evaluation only, never part of the IR: it
        // keeps the ids of the nodes it copies.
        Some(Expr {
            kind,
            ty: e.ty,
            span: e.span,
            id: e.id,
        })
    }
}
