//! Unrolling of streaming loops ×4 with a remainder loop (pass `stream`).
//!
//! A `for i in start..end step s` over `u32` whose trip count is not known
//! (grid-stride and row loops) and whose small body reads global memory
//! becomes
//!
//! ```text
//! let $a = start; let $e = end; let $s = step;      // once, in that order
//! let $lim = if u64($e) + u64($s) <= 2^32 && u64($e) > 3*u64($s)
//!            { $e - 3*$s } else { 0 };
//! let mut $i = $a;
//! while $i < $lim { body[i := $i]; body[i := $i + $s];
//!                   body[i := $i + 2*$s]; body[i := $i + 3*$s];
//!                   $i = $i + 4*$s; }
//! for i in $i..$e step $s { body }                 // the remainder
//! ```
//!
//! `$i < $lim` means `$i + 3s < end` exactly, so the four copies run the
//! same iterations, in the same order, as the loop did; the first test of
//! `$lim` makes sure `$i + 4s` cannot wrap around (else the remainder loop
//! does all the work). The four copies' loads do not wait for one
//! another's loop test, so ptxas issues them together: four loads in
//! flight where the loop had one. Nothing is reordered or reassociated.
//!
//! Left alone: loops whose body leaves them, synchronises (see
//! [`super::rewrite::synchronises`]), reads no global memory, or has more
//! than [`MAX_BODY`] IR nodes; loops other passes unrolled completely are
//! gone already.

use super::rewrite;
use crate::ir::consteval;
use crate::ir::visit::{self, Visit};
use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{
    BinOp, Block, Body, Expr, ExprKind, LocalId, LoopHint, Module, PlaceKind, Stmt, StmtKind,
    Unroll, Value,
};
use crate::span::Span;
use crate::types::Scalar;

/// Copies of the body per iteration of the unrolled loop.
pub const FACTOR: u32 = 4;

/// The most IR nodes a body may have to be copied.
pub const MAX_BODY: usize = 64;

/// The most IR nodes the copies an `#[unroll(N)]` hint asks for may have
/// together.
pub const HINT_BUDGET: usize = 4096;

/// Unrolls every streaming loop of `module`; whether any was.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    for k in &mut module.kernels {
        changed |= body(&mut k.body);
    }
    for f in &mut module.functions {
        changed |= body(&mut f.body);
    }
    changed
}

fn body(body: &mut Body) -> bool {
    let mut b = std::mem::take(&mut body.block);
    let changed = block(body, &mut b);
    body.block = b;
    changed
}

fn block(body: &mut Body, b: &mut Block) -> bool {
    let mut changed = false;
    let old = std::mem::take(&mut b.stmts);
    b.stmts.reserve_exact(old.len());
    for mut s in old {
        // Innermost loops only: a loop with a loop inside is not streaming.
        changed |= nested(body, &mut s);
        let out = match &s.kind {
            StmtKind::For {
                var,
                start,
                end,
                step,
                body: lb,
                unroll: None,
            } if qualifies(body, *var, lb) => {
                Some(unroll(body, *var, [start, end, step], lb, s.span, FACTOR))
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body: lb,
                unroll:
                    Some(LoopHint {
                        unroll: Unroll::By(n),
                        ..
                    }),
            } if *n >= 2 && hint_plan(body, *var, lb, *n).is_ok() => {
                Some(unroll(body, *var, [start, end, step], lb, s.span, *n))
            }
            _ => None,
        };
        match out {
            Some(stmts) => {
                changed = true;
                b.stmts.extend(stmts);
            }
            None => b.stmts.push(s),
        }
    }
    if changed {
        b.stmts.shrink_to_fit();
    }
    changed
}

fn nested(body: &mut Body, s: &mut Stmt) -> bool {
    match &mut s.kind {
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => {
            let mut c = block(body, then_block);
            if let Some(e) = else_block {
                c |= block(body, e);
            }
            c
        }
        StmtKind::While { body: b, .. } | StmtKind::For { body: b, .. } => block(body, b),
        _ => false,
    }
}

/// Whether the pass unrolls this loop on its own: a small body (at most
/// [`MAX_BODY`] nodes) that reads global memory.
fn qualifies(body: &Body, var: LocalId, lb: &Block) -> bool {
    copyable(body, var, lb, MAX_BODY).is_ok() && reads_global(lb)
}

/// Whether `#[unroll(n)]` can be honoured here, or why not (also for
/// `crate::opt::hints`): as [`qualifies`], but whatever the body reads,
/// within [`HINT_BUDGET`] nodes for all copies.
pub(crate) fn hint_plan(body: &Body, var: LocalId, lb: &Block, n: u32) -> Result<(), &'static str> {
    let per_copy = HINT_BUDGET / usize::try_from(n).unwrap_or(usize::MAX).max(1);
    copyable(body, var, lb, per_copy)
}

/// Whether copies of `lb` (each at most `per_copy` nodes) may replace the
/// loop over `var`, or why not. The size comes before the walks: it stops
/// early, and bounds them.
fn copyable(body: &Body, var: LocalId, lb: &Block, per_copy: usize) -> Result<(), &'static str> {
    if !body
        .locals
        .get(var.index())
        .is_some_and(|l| l.ty == Scalar::U32)
    {
        return Err("only `u32` loops run several copies per test");
    }
    if rewrite::size_within(lb, per_copy).is_none() {
        return Err("its body is too large to copy that many times");
    }
    if rewrite::jumps_out(lb) {
        return Err("its body has `break` or `continue`");
    }
    if rewrite::synchronises(lb) {
        return Err("its body synchronises (a barrier, bulk copy or fence)");
    }
    if has_loop(lb) {
        return Err("its body has a loop");
    }
    Ok(())
}

fn has_loop(b: &Block) -> bool {
    struct Find(bool);
    impl<'ir> Visit<'ir> for Find {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if matches!(s.kind, StmtKind::While { .. } | StmtKind::For { .. }) {
                self.0 = true;
            }
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(false);
    f.visit_block(b);
    f.0
}

fn reads_global(b: &Block) -> bool {
    struct Find(bool);
    impl<'ir> Visit<'ir> for Find {
        fn visit_expr(&mut self, e: &'ir Expr) {
            if let ExprKind::Load(p) = &e.kind {
                if matches!(p.kind, PlaceKind::Global { .. }) {
                    self.0 = true;
                }
            }
            visit::walk_expr(self, e);
        }
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if let StmtKind::LoadVector { place, .. } = &s.kind {
                if matches!(place.kind, PlaceKind::Global { .. }) {
                    self.0 = true;
                }
            }
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(false);
    f.visit_block(b);
    f.0
}

/// The body with each `base + var` (`base` invariant in the loop and not
/// a constant, a `u32` sum) replaced by a placeholder local, and each
/// placeholder with its `base` (one per distinct `base`).
fn rebase(body: &mut Body, lb: &Block, var: LocalId) -> (Block, Vec<(LocalId, Expr)>) {
    struct Rebase<'a> {
        body: &'a mut Body,
        assigned: Vec<LocalId>,
        var: LocalId,
        sums: Vec<(LocalId, Expr)>,
    }
    impl VisitMut for Rebase<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let ExprKind::Binary(BinOp::Add, a, b) = &e.kind {
                let is_var = |x: &Expr| matches!(x.kind, ExprKind::Local(l) if l == self.var);
                let base = match (is_var(a), is_var(b)) {
                    (false, true) => Some(&**a),
                    (true, false) => Some(&**b),
                    _ => None,
                };
                let qualifies = |x: &Expr| {
                    e.ty == Scalar::U32
                        && consteval::eval_int(x).is_none()
                        && rewrite::invariant(x, &self.assigned, Some(self.var))
                };
                if let Some(base) = base.filter(|x| qualifies(x)) {
                    let found = self
                        .sums
                        .iter()
                        .find(|(_, b)| rewrite::same(b, base))
                        .map(|(p, _)| *p);
                    let p = match found {
                        Some(p) => p,
                        None => {
                            let p = self.body.fresh_local(Scalar::U32, e.span);
                            self.sums.push((p, base.clone()));
                            p
                        }
                    };
                    *e = Expr::new(ExprKind::Local(p), Scalar::U32, e.span);
                    return;
                }
            }
            visit_mut::walk_expr_mut(self, e);
        }
    }
    let mut template = lb.clone();
    let mut r = Rebase {
        body,
        assigned: rewrite::assigned_locals(lb),
        var,
        sums: Vec::new(),
    };
    r.visit_block_mut(&mut template);
    (template, r.sums)
}

/// A bound of the loop: a constant, or the local it was evaluated into.
#[derive(Clone, Copy)]
enum Operand {
    Const(i128),
    Local(LocalId),
}

/// Builds expressions of one type at one span.
struct Build {
    span: Span,
}

impl Build {
    fn local(&self, l: LocalId, ty: Scalar) -> Expr {
        Expr::new(ExprKind::Local(l), ty, self.span)
    }
    fn int(&self, v: i128, ty: Scalar) -> Expr {
        Expr::new(ExprKind::Const(Value::Int(v)), ty, self.span)
    }
    fn bin(&self, op: BinOp, a: Expr, b: Expr, ty: Scalar) -> Expr {
        Expr::new(
            ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
            self.span,
        )
    }
    fn wide(&self, e: Expr) -> Expr {
        Expr::new(ExprKind::Cast(Box::new(e)), Scalar::U64, self.span)
    }
}

/// The statements that replace the loop: `factor` copies of the body per
/// test ([`FACTOR`], or an `#[unroll(N)]` hint's `N`), then the remainder.
fn unroll(
    body: &mut Body,
    var: LocalId,
    [start, end, step]: [&Expr; 3],
    lb: &Block,
    span: Span,
    factor: u32,
) -> Vec<Stmt> {
    let last = i128::from(factor.max(1) - 1);
    let u = Scalar::U32;
    let x = Build { span };
    let mut out = Vec::new();
    // Each bound once, in the loop's order: a constant as itself, anything
    // else into a fresh local.
    let mut bind = |body: &mut Body, value: &Expr| match consteval::eval_int(value) {
        Some(c) => Operand::Const(c),
        None => {
            let l = body.fresh_local(value.ty, value.span);
            out.push(Stmt::new(
                StmtKind::Let {
                    local: l,
                    value: value.clone(),
                },
                span,
            ));
            Operand::Local(l)
        }
    };
    let a = bind(body, start);
    let e = bind(body, end);
    let s = bind(body, step);
    let get = |o: Operand| match o {
        Operand::Const(c) => x.int(c, u),
        Operand::Local(l) => x.local(l, u),
    };
    // `k * step`, folded when the step is a constant.
    let times = |k: i128| match s {
        Operand::Const(c) => x.int(consteval::wrap(c * k, u), u),
        Operand::Local(l) => x.bin(BinOp::Mul, x.local(l, u), x.int(k, u), u),
    };
    // $lim: see the module's documentation; 64-bit arithmetic, once.
    let (we, ws) = (x.wide(get(e)), x.wide(get(s)));
    let no_wrap = x.bin(
        BinOp::Le,
        x.bin(BinOp::Add, we.clone(), ws.clone(), Scalar::U64),
        x.int(1 << 32, Scalar::U64),
        Scalar::Bool,
    );
    let last_s = x.bin(BinOp::Mul, ws, x.int(last, Scalar::U64), Scalar::U64);
    let room = x.bin(BinOp::Gt, we, last_s, Scalar::Bool);
    let cond = x.bin(BinOp::And, no_wrap, room, Scalar::Bool);
    let left = x.bin(BinOp::Sub, get(e), times(last), u);
    let lim_value = Expr::new(
        ExprKind::Select(Box::new(cond), Box::new(left), Box::new(x.int(0, u))),
        u,
        span,
    );
    let lim = body.fresh_local(u, span);
    out.push(Stmt::new(
        StmtKind::Let {
            local: lim,
            value: lim_value,
        },
        span,
    ));
    let i = body.fresh_local(u, span);
    out.push(Stmt::new(
        StmtKind::Let {
            local: i,
            value: get(a),
        },
        span,
    ));
    // `base + i` with an invariant `base` (a row's start): computed once
    // an iteration into `$q = base + $i`, each copy adding its constant
    // `k * step` to it (u32 addition wraps: `base + ($i + ks)` is exactly
    // `($i + base) + ks`), as nvcc keeps a second induction variable.
    let (template, sums) = rebase(body, lb, var);
    let mut main = Vec::new();
    let mut firsts = Vec::new();
    for (p, base) in &sums {
        let q = body.fresh_local(u, span);
        let value = x.bin(BinOp::Add, base.clone(), x.local(i, u), u);
        main.push(Stmt::new(StmtKind::Let { local: q, value }, span));
        firsts.push((*p, q));
    }
    for k in 0..factor {
        let plus = |l: LocalId| {
            if k == 0 {
                x.local(l, u)
            } else {
                x.bin(BinOp::Add, x.local(l, u), times(i128::from(k)), u)
            }
        };
        let value = plus(i);
        let sums: Vec<(LocalId, Expr)> = firsts.iter().map(|(p, q)| (*p, plus(*q))).collect();
        let mut subst: Vec<(LocalId, &Expr)> = vec![(var, &value)];
        subst.extend(sums.iter().map(|(p, e)| (*p, e)));
        main.extend(rewrite::copy_block_with(body, &template, &subst).stmts);
    }
    main.push(Stmt::new(
        StmtKind::Assign {
            local: i,
            value: x.bin(BinOp::Add, x.local(i, u), times(i128::from(factor)), u),
        },
        span,
    ));
    out.push(Stmt::new(
        StmtKind::While {
            cond: Box::new(x.bin(BinOp::Lt, x.local(i, u), x.local(lim, u), Scalar::Bool)),
            body: Block {
                stmts: main,
                span: lb.span,
            },
        },
        span,
    ));
    // The remainder: the loop itself, from where the copies stopped.
    out.push(Stmt::new(
        StmtKind::For {
            var,
            start: Box::new(x.local(i, u)),
            end: Box::new(get(e)),
            step: Box::new(get(s)),
            body: lb.clone(),
            unroll: None,
        },
        span,
    ));
    let mut wrapped = Block { stmts: out, span };
    body.renumber_block(&mut wrapped);
    wrapped.stmts
}

#[cfg(test)]
mod tests;
