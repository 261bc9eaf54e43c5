//! Transaction bytes of bulk copies: a copy completing on a group that never
//! expects transactions (W0322), and, in one straight-line stretch of code,
//! expected bytes that differ from the bytes the copies complete (W0323).
//!
//! W0323 compares only what it can pair with certainty. A stretch is a run of
//! statements of one block with no control flow between them (`if`, loops,
//! `break`, `continue`, `return`, `if` expressions). In it, the expects and
//! copies on one barrier are those on the same group at the same index: both
//! the same constant, or the same expression of the same locals (`full[s]`
//! and `full[s]`, with no assignment to `s` between). Nothing is said when
//! a byte count is not constant (or is already E0309), when the stretch has
//! no copy on that barrier, or when the same block (nested blocks included)
//! has another expect or copy on the group that might be the same barrier:
//! the copies for one expect may then be spread over a loop or a branch. A
//! statement that failed to check counts as an expect and a copy of unknown
//! size on every group it names.

use super::error::BarrierError;
use super::ops;
use super::walk::{self, Cx, Visitor};
use crate::ir::{
    consteval, BarrierId, BarrierOpKind, BarrierRef, Block, Expr, ExprKind, Kernel, LocalId, Stmt,
    StmtKind,
};
use crate::source::SourceMap;
use crate::span::Span;

pub fn check(kernel: &Kernel, sources: &SourceMap, out: &mut Vec<BarrierError>) {
    let mut v = Tx {
        kernel,
        sources,
        out,
        expects: vec![false; kernel.barriers.len()],
        copies: Vec::new(),
    };
    walk::body(&kernel.body, &mut v);
    // W0322, once per group, at its first copy.
    let mut warned = vec![false; kernel.barriers.len()];
    for (r, copy) in std::mem::take(&mut v.copies) {
        let group = r.group;
        let expects = v.expects.get(group.index()).copied().unwrap_or(true);
        let Some(w) = warned.get_mut(group.index()) else {
            continue;
        };
        let Some(g) = kernel.barriers.get(group.index()) else {
            continue;
        };
        if !expects && !*w {
            *w = true;
            v.out.push(BarrierError::NoExpectTx {
                name: g.name.clone(),
                reference: super::reference_text(sources, kernel, r),
                copy,
                decl: g.spans.decl,
            });
        }
    }
}

struct Tx<'k, 'o> {
    kernel: &'k Kernel,
    sources: &'k SourceMap,
    out: &'o mut Vec<BarrierError>,
    /// Per group: some `arrive_expect_tx`/`expect_tx` names it.
    expects: Vec<bool>,
    /// Every `copy_async`: its barrier and span.
    copies: Vec<(&'k BarrierRef, Span)>,
}

impl<'k> Visitor<'k> for Tx<'k, '_> {
    fn block(&mut self, b: &'k Block, _cx: Cx<'k>) {
        stretches(self.kernel, self.sources, b, self.out);
    }

    fn stmt(&mut self, s: &'k Stmt, _cx: Cx<'k>) {
        // A statement that failed to check may have expected bytes on its
        // groups: W0322 cannot say that they never do.
        if let StmtKind::Poisoned { groups, .. } = &s.kind {
            for g in groups {
                if let Some(e) = self.expects.get_mut(g.index()) {
                    *e = true;
                }
            }
        }
        match tx_op(s) {
            Some(TxOp {
                kind: Kind::Expect,
                barrier,
                ..
            }) => {
                if let Some(e) = self.expects.get_mut(barrier.group.index()) {
                    *e = true;
                }
            }
            Some(TxOp {
                kind: Kind::Copy,
                barrier,
                ..
            }) => self.copies.push((barrier, s.span)),
            None => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Expect,
    Copy,
}

/// A statement that expects or completes transaction bytes on a barrier.
struct TxOp<'a> {
    kind: Kind,
    barrier: &'a BarrierRef,
    bytes: &'a Expr,
}

fn tx_op(s: &Stmt) -> Option<TxOp<'_>> {
    match &s.kind {
        StmtKind::Barrier(op) => match &op.kind {
            BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
                Some(TxOp {
                    kind: Kind::Expect,
                    barrier: &op.barrier,
                    bytes,
                })
            }
            _ => None,
        },
        StmtKind::CopyAsync { bytes, barrier, .. } => Some(TxOp {
            kind: Kind::Copy,
            barrier,
            bytes,
        }),
        _ => None,
    }
}

/// The expects and copies on one barrier in one stretch.
struct Entry<'a> {
    group: BarrierId,
    index: Option<&'a Expr>,
    /// An assignment changed a local of `index`: later uses are another entry.
    closed: bool,
    expects: Vec<(Span, Option<u64>)>,
    copies: Vec<(Span, Option<u64>)>,
    /// The barrier as the first expect wrote it, for the message.
    expect_ref: Option<&'a BarrierRef>,
}

fn stretches(kernel: &Kernel, sources: &SourceMap, b: &Block, out: &mut Vec<BarrierError>) {
    // Every expect and copy in the block, nested ones included, to tell
    // whether an entry has the barrier to itself.
    let mut all = AllOps(Vec::new());
    for s in &b.stmts {
        walk::stmt(s, Cx::default(), &mut all);
    }
    let mut open: Vec<Entry<'_>> = Vec::new();
    for s in &b.stmts {
        if is_boundary(s) {
            finish(kernel, sources, std::mem::take(&mut open), &all.0, out);
            continue;
        }
        if let StmtKind::Assign { local, .. } = &s.kind {
            for e in open
                .iter_mut()
                .filter(|e| e.index.is_some_and(|i| mentions(i, *local)))
            {
                e.closed = true;
            }
        }
        let Some(op) = tx_op(s) else { continue };
        let index = op.barrier.index.as_deref();
        let pos = open
            .iter()
            .position(|e| !e.closed && e.group == op.barrier.group && same_index(e.index, index));
        let entry = match pos.and_then(|p| open.get_mut(p)) {
            Some(e) => e,
            None => {
                open.push(Entry {
                    group: op.barrier.group,
                    index,
                    closed: false,
                    expects: Vec::new(),
                    copies: Vec::new(),
                    expect_ref: None,
                });
                let Some(e) = open.last_mut() else { continue };
                e
            }
        };
        let item = (s.span, consteval::eval_u64(op.bytes));
        match op.kind {
            Kind::Expect => {
                entry.expects.push(item);
                entry.expect_ref = entry.expect_ref.or(Some(op.barrier));
            }
            Kind::Copy => entry.copies.push(item),
        }
    }
    finish(kernel, sources, open, &all.0, out);
}

fn finish(
    kernel: &Kernel,
    sources: &SourceMap,
    entries: Vec<Entry<'_>>,
    all: &[(BarrierId, Option<i128>, Span)],
    out: &mut Vec<BarrierError>,
) {
    for e in entries {
        let Some(&(expect, _)) = e.expects.first() else {
            continue;
        };
        if e.copies.is_empty() {
            continue;
        }
        let (Some(expected), Some(completed)) = (sum(&e.expects), sum(&e.copies)) else {
            continue;
        };
        // A size that is already E0309 says nothing about what was meant.
        let sizes = e.expects.iter().chain(&e.copies);
        if sizes
            .filter_map(|(_, n)| *n)
            .any(|n| !ops::valid_tx_size(i128::from(n)))
        {
            continue;
        }
        let own = |span: Span| e.expects.iter().chain(&e.copies).any(|(s, _)| *s == span);
        let key = const_key(e.index);
        let shared = all.iter().any(|(group, k, span)| {
            let distinct = matches!((key, k), (Some(a), Some(b)) if a != *b);
            *group == e.group && !own(*span) && !distinct
        });
        if !shared && expected != completed {
            let copies = e.copies.iter().map(|(s, _)| *s).collect();
            let (Some(g), Some(r)) = (kernel.barriers.get(e.group.index()), e.expect_ref) else {
                continue;
            };
            out.push(BarrierError::TxMismatch {
                name: g.name.clone(),
                reference: super::reference_text(sources, kernel, r),
                expected,
                completed,
                expect,
                copies,
            });
        }
    }
}

/// The total of constant byte counts; `None` if one is not constant.
fn sum(items: &[(Span, Option<u64>)]) -> Option<u64> {
    items
        .iter()
        .try_fold(0u64, |acc, (_, n)| acc.checked_add((*n)?))
}

struct AllOps(Vec<(BarrierId, Option<i128>, Span)>);

impl<'a> Visitor<'a> for AllOps {
    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        // A statement that failed to check may expect or copy bytes on any
        // barrier of its groups.
        if let StmtKind::Poisoned { groups, .. } = &s.kind {
            self.0.extend(groups.iter().map(|g| (*g, None, s.span)));
        }
        if let Some(op) = tx_op(s) {
            self.0.push((
                op.barrier.group,
                const_key(op.barrier.index.as_deref()),
                s.span,
            ));
        }
    }
}

/// Control flow ends a stretch: so does an `if` expression, whose blocks
/// may hold statements.
fn is_boundary(s: &Stmt) -> bool {
    struct HasBlocks(bool);
    impl<'a> Visitor<'a> for HasBlocks {
        fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
            self.0 |= matches!(e.kind, ExprKind::If { .. });
        }
    }
    match &s.kind {
        StmtKind::If { .. }
        | StmtKind::While { .. }
        | StmtKind::For { .. }
        | StmtKind::Poisoned { .. }
        | StmtKind::Break
        | StmtKind::Continue
        | StmtKind::Return(_) => true,
        _ => {
            let mut h = HasBlocks(false);
            walk::stmt(s, Cx::default(), &mut h);
            h.0
        }
    }
}

/// A barrier index as a constant: no index is barrier 0 of a group of one.
fn const_key(index: Option<&Expr>) -> Option<i128> {
    match index {
        None => Some(0),
        Some(i) => consteval::eval_int(i),
    }
}

/// Do two indices name the same barrier (in the same stretch)?
fn same_index(a: Option<&Expr>, b: Option<&Expr>) -> bool {
    match (const_key(a), const_key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => matches!((a, b), (Some(x), Some(y)) if same_value(x, y)),
    }
}

/// Structural equality of side-effect-free expressions that read only
/// locals, parameters and built-ins.
fn same_value(a: &Expr, b: &Expr) -> bool {
    if let (Some(x), Some(y)) = (consteval::eval_int(a), consteval::eval_int(b)) {
        return x == y;
    }
    match (&a.kind, &b.kind) {
        (ExprKind::Local(x), ExprKind::Local(y)) => x == y,
        (ExprKind::Param(x), ExprKind::Param(y)) => x == y,
        (ExprKind::Special(x), ExprKind::Special(y)) => x == y,
        (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && same_value(x, y),
        (ExprKind::Binary(o, x1, y1), ExprKind::Binary(p, x2, y2)) => {
            o == p && same_value(x1, x2) && same_value(y1, y2)
        }
        (ExprKind::Cast(x), ExprKind::Cast(y)) => a.ty == b.ty && same_value(x, y),
        _ => false,
    }
}

fn mentions(e: &Expr, local: LocalId) -> bool {
    struct Mentions(LocalId, bool);
    impl<'a> Visitor<'a> for Mentions {
        fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
            self.1 |= matches!(e.kind, ExprKind::Local(l) if l == self.0);
        }
    }
    let mut m = Mentions(local, false);
    walk::expr(e, Cx::default(), &mut m);
    m.1
}
