//! Full unrolling of loops with a small constant trip count (pass
//! `unroll`).
//!
//! Two shapes of loop are unrolled, each replaced by one copy of its body
//! per iteration, in order (nothing is reordered or reassociated):
//! - `for v in start..end step s` with constant `end` and `s`, where the
//!   range of `start` ([`crate::analysis::values`]) gives every thread the same trip
//!   count (`for i in thread_idx.x..1024 step 128` in a `block(128)`
//!   kernel: 8). `v` becomes `start + k*s` in copy `k` (a constant when
//!   `start` is one), so addresses get immediate offsets; a non-constant
//!   `start` is evaluated once, into a fresh local, as the loop did;
//! - `while` loops over a local with a constant first value and a
//!   recurrence as the body's last statement (`let mut d = 16u32;`
//!   `while d > 0 { ...; d = d >> 1; }`, the warp shuffle reductions): the local is
//!   a constant in each copy, so shuffle offsets are immediates; its last
//!   value is assigned after the copies.
//!
//! Loops whose body leaves them (`break`, `continue`), or synchronises
//! (barriers, bulk copies, fences, barrier tests), are left alone, as are
//! loops over [`MAX_TRIPS`] iterations or over [`MAX_SIZE`] IR nodes once
//! unrolled. Locals declared in a copied body get fresh locals
//! ([`crate::ir::Body::fresh_local`]). Inner loops are unrolled first.

use super::rewrite;
use crate::analysis::values::{At, Values};
use crate::ir::consteval;
use crate::ir::{
    BinOp, Block, Body, Expr, ExprKind, LocalId, Module, Stmt, StmtKind, Unroll, Value,
};
use crate::types::Scalar;

/// The most iterations a loop may have to be unrolled.
pub const MAX_TRIPS: u128 = 16;

/// The most IR nodes (statements and expressions) the copies of one
/// loop's body may have together.
pub const MAX_SIZE: usize = 512;

/// The most iterations, and IR nodes of all copies, for a loop with
/// `#[unroll]` (or `#[unroll(N)]` with at most `N` iterations).
pub const HINT_MAX_TRIPS: u128 = 1024;
pub const HINT_MAX_SIZE: usize = 16384;

/// How many statements before a `while` loop are searched for its local's
/// first value.
pub const MAX_LOOKBACK: usize = 8;

/// Unrolls every loop of `module` that qualifies; whether any did.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    for k in &mut module.kernels {
        let facts = Values::of_kernel(k);
        changed |= body(&mut k.body, &facts);
    }
    for f in &mut module.functions {
        let facts = Values::of_function(&f.body);
        changed |= body(&mut f.body, &facts);
    }
    changed
}

fn body(body: &mut Body, facts: &Values) -> bool {
    let mut b = std::mem::take(&mut body.block);
    let changed = block(body, &mut b, facts);
    body.block = b;
    changed
}

/// Unrolls the loops of `b` (and of every block nested in it), innermost
/// first.
fn block(body: &mut Body, b: &mut Block, facts: &Values) -> bool {
    let mut changed = false;
    for s in &mut b.stmts {
        changed |= nested(body, s, facts);
    }
    let old = std::mem::take(&mut b.stmts);
    let mut out: Vec<Stmt> = Vec::with_capacity(old.len());
    for s in old {
        let unrolled = match &s.kind {
            StmtKind::For {
                var,
                start,
                end,
                step,
                body: lb,
                unroll,
            } => unroll_for(
                body,
                facts,
                *var,
                [start, end, step],
                lb,
                unroll.map(|h| h.unroll),
            ),
            StmtKind::While { cond, body: lb } => unroll_while(body, &out, cond, lb),
            _ => None,
        };
        match unrolled {
            Some(stmts) => {
                changed = true;
                out.extend(stmts);
            }
            None => out.push(s),
        }
    }
    if changed {
        out.shrink_to_fit();
    }
    b.stmts = out;
    changed
}

/// Unrolls the loops in the blocks nested in `s`.
fn nested(body: &mut Body, s: &mut Stmt, facts: &Values) -> bool {
    match &mut s.kind {
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => {
            let mut c = block(body, then_block, facts);
            if let Some(e) = else_block {
                c |= block(body, e, facts);
            }
            c
        }
        StmtKind::While { body: b, .. } | StmtKind::For { body: b, .. } => block(body, b, facts),
        _ => false,
    }
}

/// Whether a loop body may be copied at all.
fn copyable(b: &Block) -> bool {
    !rewrite::jumps_out(b) && !rewrite::synchronises(b)
}

/// Whether `trips` copies of `b` fit the budget (`(most trips, most
/// nodes)`); only then is `b` walked whole (for [`copyable`]).
fn within_budget(trips: u128, b: &Block, (max_trips, max_size): (u128, usize)) -> bool {
    let Some(t) = usize::try_from(trips).ok().filter(|_| trips <= max_trips) else {
        return false;
    };
    let per_copy = max_size / t.max(1);
    rewrite::size_within(b, per_copy).is_some() && copyable(b)
}

/// Why a loop is not unrolled completely (for a hint the pass cannot
/// honour: `crate::opt::hints`).
pub type NotUnrolled = &'static str;

/// The trip count of `for v in start..end step step { lb }` (at `at`, in
/// the runs of the loops over constant lists around it on the checked IR;
/// [`At::TOP`] once they are unrolled) if this pass unrolls it completely
/// under `hint`, else why not.
pub(crate) fn plan(
    facts: &Values,
    at: At,
    [start, end, step]: [&Expr; 3],
    lb: &Block,
    hint: Option<Unroll>,
) -> Result<u128, NotUnrolled> {
    let Some(limits) = budget(hint) else {
        return Err("`#[unroll(1)]` keeps it");
    };
    if !matches!(start.ty, Scalar::U32 | Scalar::U64) {
        return Err("its loop variable is not `u32` or `u64`");
    }
    let constant = |e: &Expr| {
        facts
            .constant_int(e, at)
            .and_then(|v| u128::try_from(v).ok())
    };
    let (Some(e), Some(s)) = (constant(end), constant(step)) else {
        return Err("its end or step is not a constant");
    };
    if s == 0 {
        return Err("its step is 0");
    }
    let Some((lo, hi)) = facts.range(start, at) else {
        return Err("its start is not known well enough to count its iterations");
    };
    let trips = |v: u128| if v >= e { 0 } else { (e - v).div_ceil(s) };
    let n = trips(lo);
    if n != trips(hi) {
        return Err("its trip count is not the same in every thread");
    }
    if rewrite::jumps_out(lb) {
        return Err("its body has `break` or `continue`");
    }
    if rewrite::synchronises(lb) {
        return Err("its body synchronises (a barrier, bulk copy or fence)");
    }
    if !within_budget(n, lb, limits) {
        return Err("it has too many iterations, or its copies would be too large");
    }
    Ok(n)
}

/// The budget a loop's hint gives it; `None` where the hint keeps the loop
/// (`#[unroll(1)]`). `#[unroll(N)]` unrolls completely only up to `N`
/// iterations (the `stream` pass does the rest).
fn budget(hint: Option<Unroll>) -> Option<(u128, usize)> {
    match hint {
        None => Some((MAX_TRIPS, MAX_SIZE)),
        Some(Unroll::Full) => Some((HINT_MAX_TRIPS, HINT_MAX_SIZE)),
        Some(Unroll::By(1)) => None,
        Some(Unroll::By(n)) => Some((u128::from(n), HINT_MAX_SIZE)),
    }
}

/// The statements that replace `for var in start..end step step { lb }`,
/// if it qualifies.
fn unroll_for(
    body: &mut Body,
    facts: &Values,
    var: LocalId,
    [start, end, step]: [&Expr; 3],
    lb: &Block,
    hint: Option<Unroll>,
) -> Option<Vec<Stmt>> {
    let n = plan(facts, At::TOP, [start, end, step], lb, hint).ok()?;
    let (ty, s) = (start.ty, u128::try_from(consteval::eval_int(step)?).ok()?);
    let mut out = Vec::new();
    // The first value: a constant, or `start` evaluated once (it is pure:
    // its range is known) into a fresh local.
    let first = match consteval::eval_int(start) {
        Some(c) => Base::Const(c),
        None if n == 0 => return Some(out),
        None => {
            let t = body.fresh_local(ty, start.span);
            let mut value = start.clone();
            renumber_expr(body, &mut value);
            out.push(body.stmt(StmtKind::Let { local: t, value }, start.span));
            Base::Local(t)
        }
    };
    for k in 0..n {
        // `start + k*step` never wraps: it is below `end`.
        let off = i128::try_from(k * s).ok()?;
        let value = match first {
            Base::Const(c) => int(c + off, ty, start.span),
            Base::Local(t) => {
                let base = Expr::new(ExprKind::Local(t), ty, start.span);
                if off == 0 {
                    base
                } else {
                    Expr::new(
                        ExprKind::Binary(
                            BinOp::Add,
                            Box::new(base),
                            Box::new(int(off, ty, start.span)),
                        ),
                        ty,
                        start.span,
                    )
                }
            }
        };
        let copy = rewrite::copy_block(body, lb, var, Some(&value));
        out.extend(copy.stmts);
    }
    Some(out)
}

#[derive(Clone, Copy)]
enum Base {
    Const(i128),
    Local(LocalId),
}

/// The statements that replace `while cond { ...; d = f(d); }`, if the
/// loop runs over a local `d` whose value before it is a constant (found
/// in `before`, the statements preceding the loop in its block).
fn unroll_while(body: &mut Body, before: &[Stmt], cond: &Expr, lb: &Block) -> Option<Vec<Stmt>> {
    let (last, rest) = lb.stmts.split_last()?;
    let StmtKind::Assign {
        local: d,
        value: next,
    } = &last.kind
    else {
        return None;
    };
    let d = *d;
    let ty = body.locals.get(d.index())?.ty;
    if !ty.is_int() {
        return None;
    }
    // Cheap tests first: a loop with a large body is never unrolled, and
    // is not copied or walked whole to find that out.
    rewrite::size_within(lb, MAX_SIZE)?;
    let rest = Block {
        stmts: rest.to_vec(),
        span: lb.span,
    };
    if !copyable(&rest) || rewrite::assigns(&rest, d) {
        return None;
    }
    let mut value = initial(before, d)?;
    let mut values = Vec::new();
    loop {
        match eval_with(cond, d, value, ty)? {
            Value::Bool(true) => {}
            Value::Bool(false) => break,
            _ => return None,
        }
        values.push(value);
        if values.len() as u128 > MAX_TRIPS {
            return None;
        }
        value = match eval_with(next, d, value, ty)? {
            Value::Int(v) => v,
            _ => return None,
        };
    }
    if !within_budget(values.len() as u128, &rest, (MAX_TRIPS, MAX_SIZE)) {
        return None;
    }
    let mut out = Vec::new();
    for v in values {
        let c = int(v, ty, cond.span);
        out.extend(rewrite::copy_block(body, &rest, d, Some(&c)).stmts);
    }
    let mut last_value = int(value, ty, last.span);
    renumber_expr(body, &mut last_value);
    out.push(body.stmt(
        StmtKind::Assign {
            local: d,
            value: last_value,
        },
        last.span,
    ));
    Some(out)
}

/// The constant value `d` has after `before`: that of the last statement
/// that gives it one, if that is a constant and no later statement may
/// change it.
fn initial(before: &[Stmt], d: LocalId) -> Option<i128> {
    // Only a few statements back: the constant is normally the one just
    // before (`let mut d = 16u32;`), and a long scan for each loop of a
    // long block would cost its length squared.
    for s in before.iter().rev().take(MAX_LOOKBACK) {
        match &s.kind {
            StmtKind::Let { local, value } | StmtKind::Assign { local, value } if *local == d => {
                return consteval::eval_int(value);
            }
            _ if rewrite::stmt_assigns(s, d) => return None,
            _ => {}
        }
    }
    None
}

/// The value of `e` with `d` reading `v`, if that makes it a constant.
fn eval_with(e: &Expr, d: LocalId, v: i128, ty: Scalar) -> Option<Value> {
    let mut e = e.clone();
    let c = int(v, ty, e.span);
    let mut r = Subst { d, c: &c };
    crate::ir::visit_mut::VisitMut::visit_expr_mut(&mut r, &mut e);
    consteval::eval(&e).ok()
}

struct Subst<'a> {
    d: LocalId,
    c: &'a Expr,
}

impl crate::ir::visit_mut::VisitMut for Subst<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if matches!(e.kind, ExprKind::Local(l) if l == self.d) {
            *e = self.c.clone();
            return;
        }
        crate::ir::visit_mut::walk_expr_mut(self, e);
    }
}

/// An integer constant of type `ty` (wrapped into it).
fn int(v: i128, ty: Scalar, span: crate::span::Span) -> Expr {
    Expr::new(
        ExprKind::Const(Value::Int(consteval::wrap(v, ty))),
        ty,
        span,
    )
}

/// Gives `e` and its subexpressions fresh ids of `body`.
fn renumber_expr(body: &mut Body, e: &mut Expr) {
    let mut b = Block {
        stmts: vec![Stmt::new(StmtKind::Expr(e.clone()), e.span)],
        span: e.span,
    };
    body.renumber_block(&mut b);
    if let Some(Stmt {
        kind: StmtKind::Expr(x),
        ..
    }) = b.stmts.pop()
    {
        *e = x;
    }
}

#[cfg(test)]
mod tests;
