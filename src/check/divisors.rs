//! E0117 for an integer `/` or `%` (or `/=`, `%=`) whose divisor is a
//! constant zero, in two steps that keep the cost linear:
//!
//! - while lowering, the checker looks at each divisor only when it is a
//!   small constant tree (at most [`QUICK`] nodes, [`quick_value`]), so
//!   that a common `x / 0` fails right there and silences what follows;
//! - once a body is lowered and analysed, [`zero_divisors`] asks about
//!   every divisor of the IR, each node evaluated once ([`consteval::Memo`]),
//!   with the element of each loop over a constant list as the constant it
//!   is in each run of the loop's body.
//!
//! Evaluating every divisor in full as it is built cost quadratic time in
//! a chain of divisions nested in divisors, `a / (b / (c / ...))`: the
//! divisor at each level holds all the levels below it.

use super::error::CheckError;
use crate::analysis::values::{walk_runs, At, RunVisit, Values};
use crate::ir::{consteval, BinOp, Body, Expr, ExprId, ExprKind, Stmt, StmtKind, Value};
use std::collections::HashSet;

/// The largest divisor, in nodes, that the checker evaluates as it goes.
pub const QUICK: u32 = 32;

/// The value of a divisor small enough to evaluate while lowering.
pub fn quick_value(divisor: &Expr) -> Option<Value> {
    match &divisor.kind {
        ExprKind::Const(v) => Some(*v),
        _ => consteval::fold(divisor, QUICK),
    }
}

/// Every zero divisor in a lowered body, with the elements of the loops
/// over constant lists around it as constants (in each run of such a
/// loop's body; each divisor reported once, in the first run whose value
/// is zero), each node evaluated once per run ([`consteval::Memo`]).
pub fn zero_divisors(body: &Body, values: &Values) -> Vec<CheckError> {
    let mut finder = Finder {
        values,
        memo: consteval::Memo::default(),
        memo_at: At::TOP,
        reported: HashSet::new(),
        found: Vec::new(),
    };
    walk_runs(body, values, &mut finder);
    finder.found
}

struct Finder<'ir, 'v> {
    values: &'v Values,
    /// The values of the run `memo_at` (a memo serves one run).
    memo: consteval::Memo<'ir>,
    memo_at: At,
    reported: HashSet<ExprId>,
    found: Vec<CheckError>,
}

impl<'ir> Finder<'ir, '_> {
    fn divisor(&mut self, op: BinOp, d: &'ir Expr, at: At) {
        if !matches!(op, BinOp::Div | BinOp::Rem) || !d.ty.is_int() {
            return;
        }
        if at != self.memo_at {
            self.memo = consteval::Memo::default();
            self.memo_at = at;
        }
        let values = self.values;
        let v = self.memo.eval_with(d, &|l| values.element(l, at));
        if v == Ok(Value::Int(0)) && self.reported.insert(d.id) {
            self.found.push(CheckError::DivisionByZero {
                op: op.symbol(),
                span: d.span,
            });
        }
    }
}

impl<'ir> RunVisit<'ir> for Finder<'ir, '_> {
    fn expr(&mut self, e: &'ir Expr, at: At) {
        if let ExprKind::Binary(op, _, d) = &e.kind {
            self.divisor(*op, d, at);
        }
    }

    fn stmt(&mut self, s: &'ir Stmt, at: At) {
        if let StmtKind::Store {
            op: Some(op),
            value,
            ..
        } = &s.kind
        {
            self.divisor(*op, value, at);
        }
    }
}
