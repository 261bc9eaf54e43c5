//! A pre-order walk over a body's statements and expressions, shared by every
//! check of the barrier pass.
//!
//! A check implements [`Visitor`] for the nodes it cares about; the walk
//! visits every block, statement, expression and barrier reference in
//! source order, and tells each node where it stands ([`Cx`]): how many
//! conditions and loops enclose it, the innermost loop's body, and which
//! run of the loops over constant lists around it is being walked.
//!
//! [`body`] visits each node once, a loop over a constant list's body as a
//! nested block. [`runs`] walks the body as it runs, for the checks whose
//! facts differ between the elements of such a loop: the body once per
//! element, its statements as if they stood in the enclosing block in
//! place of the loop (the loop itself is not visited), each with the run
//! in `Cx::at`. A check on [`runs`] sees a node once per run and reports
//! it once ([`Once`]).

use crate::analysis::values::{At, Values};
use crate::ir::visit::{self, Visit};
use crate::ir::{BarrierRef, BinOp, Block, Body, Expr, ExprKind, Parity, Place, Stmt, StmtKind};
use std::collections::HashSet;
use std::hash::Hash;

/// Where a node stands in its body.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cx<'a> {
    /// The run of the loops over constant lists around it ([`runs`]; the
    /// top level's in [`body`]).
    pub at: At,
    /// How many conditions guard it: `if` statements and expressions, and
    /// the right operand of `&&`/`||` (evaluated only sometimes).
    pub conditional: u32,
    /// How many loops enclose it.
    pub loops: u32,
    /// The body of the innermost enclosing loop.
    pub loop_body: Option<&'a Block>,
}

impl<'a> Cx<'a> {
    fn conditional(self) -> Self {
        Cx {
            conditional: self.conditional + 1,
            ..self
        }
    }

    fn looped(self, body: &'a Block) -> Self {
        Cx {
            loops: self.loops + 1,
            loop_body: Some(body),
            ..self
        }
    }
}

/// Hooks called before a node's children are walked (and, for blocks and
/// statements, after). All default to nothing.
pub trait Visitor<'a> {
    fn block(&mut self, _b: &'a Block, _cx: Cx<'a>) {}
    /// After the block's statements were walked.
    fn block_end(&mut self, _b: &'a Block, _cx: Cx<'a>) {}
    fn stmt(&mut self, _s: &'a Stmt, _cx: Cx<'a>) {}
    /// After the statement's children were walked.
    fn stmt_end(&mut self, _s: &'a Stmt, _cx: Cx<'a>) {}
    fn expr(&mut self, _e: &'a Expr, _cx: Cx<'a>) {}
    fn barrier_ref(&mut self, _r: &'a BarrierRef, _cx: Cx<'a>) {}
}

/// Each node once.
pub fn body<'a>(b: &'a Body, v: &mut impl Visitor<'a>) {
    block(&b.block, Cx::default(), v);
}

/// The body as it runs: a loop over a constant list's body once per
/// element (see the module's comment), with `values` the body's facts.
pub fn runs<'a>(b: &'a Body, values: &Values, v: &mut impl Visitor<'a>) {
    Cursor {
        v,
        cx: Cx::default(),
        runs: Some(values),
    }
    .visit_block(&b.block);
}

pub fn block<'a>(b: &'a Block, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    Cursor { v, cx, runs: None }.visit_block(b);
}

pub fn stmt<'a>(s: &'a Stmt, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    Cursor { v, cx, runs: None }.visit_stmt(s);
}

pub fn expr<'a>(e: &'a Expr, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    Cursor { v, cx, runs: None }.visit_expr(e);
}

pub fn barrier_ref<'a>(r: &'a BarrierRef, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    Cursor { v, cx, runs: None }.visit_barrier_ref(r);
}

pub fn place<'a>(p: &'a Place, cx: Cx<'a>, v: &mut impl Visitor<'a>) {
    Cursor { v, cx, runs: None }.visit_place(p);
}

/// The nodes a check on [`runs`] has reported, so that each is reported
/// once however many runs reach it: in the first run that shows the
/// problem.
pub struct Once<K>(HashSet<K>);

impl<K: Hash + Eq> Default for Once<K> {
    fn default() -> Self {
        Once(HashSet::new())
    }
}

impl<K: Hash + Eq> Once<K> {
    /// True the first time `key` is asked about.
    pub fn first(&mut self, key: K) -> bool {
        self.0.insert(key)
    }
}

/// The shared IR walk, carrying the context of the node it is at: it calls
/// the [`Visitor`]'s hook and lets [`ir::visit`](crate::ir::visit) walk the
/// children, except where a child stands in a different context (a branch,
/// a loop, the right side of `&&`/`||`, a run of a loop over a list).
struct Cursor<'a, 'v, 'f, V> {
    v: &'v mut V,
    cx: Cx<'a>,
    /// The facts to walk runs with ([`runs`]); `None`: each node once.
    runs: Option<&'f Values>,
}

impl<'a, V: Visitor<'a>> Cursor<'a, '_, '_, V> {
    /// Runs `f` with the context set to `cx`, then restores it.
    fn under(&mut self, cx: Cx<'a>, f: impl FnOnce(&mut Self)) {
        let outer = std::mem::replace(&mut self.cx, cx);
        f(self);
        self.cx = outer;
    }
}

impl<'a, V: Visitor<'a>> Visit<'a> for Cursor<'a, '_, '_, V> {
    fn visit_block(&mut self, b: &'a Block) {
        let cx = self.cx;
        self.v.block(b, cx);
        visit::walk_block(self, b);
        self.v.block_end(b, cx);
    }

    fn visit_stmt(&mut self, s: &'a Stmt) {
        let cx = self.cx;
        if let (StmtKind::ForList { body, .. }, Some(values)) = (&s.kind, self.runs) {
            // In place of the loop: its body's statements, once per run.
            for at in values.runs(cx.at, s.id) {
                self.under(Cx { at, ..cx }, |w| {
                    for s in &body.stmts {
                        w.visit_stmt(s);
                    }
                });
            }
            return;
        }
        self.v.stmt(s, cx);
        match &s.kind {
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.visit_expr(cond);
                self.under(cx.conditional(), |w| {
                    w.visit_block(then_block);
                    if let Some(e) = else_block {
                        w.visit_block(e);
                    }
                });
            }
            // The condition runs before every iteration, so it is in the loop.
            StmtKind::While { cond, body } => self.under(cx.looped(body), |w| {
                w.visit_expr(cond);
                w.visit_block(body);
            }),
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
                self.under(cx.looped(body), |w| w.visit_block(body));
            }
            // What failed may have been a condition or a loop: its blocks
            // may run any number of times, or not at all.
            StmtKind::Poisoned { blocks, .. } => self.under(cx.conditional(), |w| {
                for b in blocks {
                    w.visit_block(b);
                }
            }),
            // Walked once here ([`body`]): its body runs in the context of
            // the loop, at least once, its runs one after the other.
            StmtKind::ForList { .. } => visit::walk_stmt(self, s),
            // No block of their own: the context of their children is theirs.
            _ => visit::walk_stmt(self, s),
        }
        self.v.stmt_end(s, cx);
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        let cx = self.cx;
        self.v.expr(e, cx);
        match &e.kind {
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.visit_expr(a);
                self.under(cx.conditional(), |w| w.visit_expr(b));
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                self.visit_expr(cond);
                self.under(cx.conditional(), |w| {
                    w.visit_block(then_block);
                    w.visit_expr(then_value);
                    w.visit_block(else_block);
                    w.visit_expr(else_value);
                });
            }
            _ => visit::walk_expr(self, e),
        }
    }

    fn visit_barrier_ref(&mut self, r: &'a BarrierRef) {
        self.v.barrier_ref(r, self.cx);
        visit::walk_barrier_ref(self, r);
    }
}

/// The parity expression the user wrote, if any.
pub fn explicit(p: &Parity) -> Option<&Expr> {
    match p {
        Parity::Explicit(e) => Some(e),
        Parity::Tracked => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Value;

    /// Records every integer constant with the context it was visited in.
    #[derive(Default)]
    struct Consts(Vec<(i128, u32, u32, bool)>);

    impl<'a> Visitor<'a> for Consts {
        fn expr(&mut self, e: &'a Expr, cx: Cx<'a>) {
            if let ExprKind::Const(Value::Int(v)) = e.kind {
                self.0
                    .push((v, cx.conditional, cx.loops, cx.loop_body.is_some()));
            }
        }
    }

    #[test]
    fn context_of_each_node() {
        let src = "kernel k(out: global mut [u32], n: u32) block(128) {
    let a = n + 1;
    if n > 2 { out[3] = 4; } else { out[5] = 6; }
    while n > 7 { out[8] = 9; }
    for i in 10..n step 11 { out[i] = 12; }
    out[13] = select(n > 14 && n > 15, 16, 17);
    out[18] = if n > 19 { 20 } else { 21 };
}";
        let opts = crate::Options {
            check_only: true,
            ..crate::Options::default()
        };
        let c = crate::compile_str("t.kdsl", src, &opts);
        let Some(k) = c.module.as_ref().and_then(|m| m.kernels.first()) else {
            panic!("no kernel: {:#?}", c.diagnostics);
        };
        let mut v = Consts::default();
        body(&k.body, &mut v);
        let (plain, cond, looped) = ((0, 0, false), (1, 0, false), (0, 1, true));
        let want: Vec<(i128, u32, u32, bool)> = [
            (1, plain),
            (2, plain),
            (3, cond),
            (4, cond),
            (5, cond),
            (6, cond),
            (7, looped),
            (8, looped),
            (9, looped),
            (10, plain),
            (11, plain),
            (12, looped),
            (13, plain),
            (14, plain),
            (15, cond),
            (16, plain),
            (17, plain),
            (18, plain),
            (19, plain),
            (20, cond),
            (21, cond),
        ]
        .into_iter()
        .map(|(n, (c, l, b))| (n, c, l, b))
        .collect();
        assert_eq!(v.0, want);
    }
}
