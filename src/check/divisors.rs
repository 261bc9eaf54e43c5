//! E0117 for an integer `/` or `%` (or `/=`, `%=`) whose divisor is a
//! constant zero, in two steps that keep the cost linear:
//!
//! - while lowering, the checker looks at each divisor only when it is a
//!   small constant tree (at most [`QUICK`] nodes, [`quick_value`]), so
//!   that a common `x / 0` fails right there and silences what follows;
//! - when a body is lowered, [`zero_divisors`] asks about every divisor of
//!   the finished IR, each node evaluated once ([`consteval::Memo`]).
//!
//! Evaluating every divisor in full as it is built cost quadratic time in
//! a chain of divisions nested in divisors, `a / (b / (c / ...))`: the
//! divisor at each level holds all the levels below it.

use super::error::CheckError;
use crate::ir::visit::{walk_expr, walk_stmt, Visit};
use crate::ir::{consteval, BinOp, Block, Expr, ExprKind, Stmt, StmtKind, Value};

/// The largest divisor, in nodes, that the checker evaluates as it goes.
pub const QUICK: u32 = 32;

/// The value of a divisor small enough to evaluate while lowering.
pub fn quick_value(divisor: &Expr) -> Option<Value> {
    match &divisor.kind {
        ExprKind::Const(v) => Some(*v),
        _ => consteval::fold(divisor, QUICK),
    }
}

/// Every zero divisor in a finished body.
pub fn zero_divisors(block: &Block) -> Vec<CheckError> {
    let mut finder = Finder {
        memo: consteval::Memo::default(),
        found: Vec::new(),
    };
    finder.visit_block(block);
    finder.found
}

struct Finder<'ir> {
    memo: consteval::Memo<'ir>,
    found: Vec<CheckError>,
}

impl<'ir> Finder<'ir> {
    fn divisor(&mut self, op: BinOp, d: &'ir Expr) {
        if matches!(op, BinOp::Div | BinOp::Rem)
            && d.ty.is_int()
            && self.memo.eval(d) == Ok(Value::Int(0))
        {
            self.found.push(CheckError::DivisionByZero {
                op: op.symbol(),
                span: d.span,
            });
        }
    }
}

impl<'ir> Visit<'ir> for Finder<'ir> {
    fn visit_expr(&mut self, e: &'ir Expr) {
        if let ExprKind::Binary(op, _, d) = &e.kind {
            self.divisor(*op, d);
        }
        walk_expr(self, e);
    }

    fn visit_stmt(&mut self, s: &'ir Stmt) {
        if let StmtKind::Store {
            op: Some(op),
            value,
            ..
        } = &s.kind
        {
            self.divisor(*op, value);
        }
        walk_stmt(self, s);
    }
}
