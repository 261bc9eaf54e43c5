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
use std::collections::HashMap;

pub fn check(kernel: &Kernel, sources: &SourceMap, out: &mut Vec<BarrierError>) {
    let mut v = Tx {
        kernel,
        sources,
        out,
        expects: vec![false; kernel.barriers.len()],
        copies: Vec::new(),
        ops: OpIndex::default(),
        if_exprs: 0,
        blocks: Vec::new(),
        stmts: Vec::new(),
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

/// One walk over the kernel. Each block is judged when the walk leaves it
/// ([`Visitor::block_end`]), from facts gathered on the way down, so that
/// every node is visited once however deeply blocks nest.
struct Tx<'k, 'o, 'a> {
    kernel: &'k Kernel,
    sources: &'k SourceMap,
    out: &'o mut Vec<BarrierError>,
    /// Per group: some `arrive_expect_tx`/`expect_tx` names it.
    expects: Vec<bool>,
    /// Every `copy_async`: its barrier and span.
    copies: Vec<(&'a BarrierRef, Span)>,
    /// Every expect and copy, in walk order: those of a block, nested ones
    /// included, are the ones numbered from the block's start on.
    ops: OpIndex,
    /// `if` expressions seen so far (a statement that holds one ends a
    /// stretch).
    if_exprs: usize,
    /// The blocks being walked, innermost last.
    blocks: Vec<OpenBlock<'a>>,
    /// For each statement being walked, `if_exprs` when it started.
    stmts: Vec<usize>,
}

/// A block being walked: where its operations start, and its statements
/// walked so far with whether each ends a stretch.
struct OpenBlock<'a> {
    first_op: usize,
    stmts: Vec<(&'a Stmt, bool)>,
}

impl<'a> Visitor<'a> for Tx<'_, '_, 'a> {
    fn block(&mut self, _b: &'a Block, _cx: Cx<'a>) {
        self.blocks.push(OpenBlock {
            first_op: self.ops.len(),
            stmts: Vec::new(),
        });
    }

    fn block_end(&mut self, _b: &'a Block, _cx: Cx<'a>) {
        if let Some(block) = self.blocks.pop() {
            stretches(self.kernel, self.sources, &block, &self.ops, self.out);
        }
    }

    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        self.stmts.push(self.if_exprs);
        // A statement that failed to check may expect or copy bytes on any
        // barrier of its groups: W0322 cannot say that they never do, and
        // W0323 cannot pair around it.
        if let StmtKind::Poisoned { groups, .. } = &s.kind {
            for g in groups {
                if let Some(e) = self.expects.get_mut(g.index()) {
                    *e = true;
                }
                self.ops.push(*g, None, s.span);
            }
        }
        let Some(op) = tx_op(s) else { return };
        self.ops.push(
            op.barrier.group,
            const_key(op.barrier.index.as_deref()),
            s.span,
        );
        match op.kind {
            Kind::Expect => {
                if let Some(e) = self.expects.get_mut(op.barrier.group.index()) {
                    *e = true;
                }
            }
            Kind::Copy => self.copies.push((op.barrier, s.span)),
        }
    }

    fn stmt_end(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        let started = self.stmts.pop().unwrap_or(self.if_exprs);
        let boundary = is_control(s) || self.if_exprs != started;
        if let Some(block) = self.blocks.last_mut() {
            block.stmts.push((s, boundary));
        }
    }

    fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
        if matches!(e.kind, ExprKind::If { .. }) {
            self.if_exprs += 1;
        }
    }
}

/// Every expect and copy of a kernel in walk order, indexed so that "how
/// many operations on this group (at this constant index) lie in this
/// range" takes a binary search.
#[derive(Default)]
struct OpIndex {
    len: usize,
    /// Positions of the operations on each group.
    by_group: HashMap<BarrierId, Vec<usize>>,
    /// Positions of the operations on each group at each constant index
    /// (`None`: an index that is not constant).
    by_key: HashMap<(BarrierId, Option<i128>), Vec<usize>>,
    spans: Vec<Span>,
}

impl OpIndex {
    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, group: BarrierId, key: Option<i128>, span: Span) {
        let at = self.len;
        self.by_group.entry(group).or_default().push(at);
        self.by_key.entry((group, key)).or_default().push(at);
        self.spans.push(span);
        self.len += 1;
    }

    /// How many operations from position `from` on are on `group` at an
    /// index that may be `key` (any index when `key` is not constant).
    fn count_from(&self, from: usize, group: BarrierId, key: Option<i128>) -> usize {
        let from_on =
            |v: Option<&Vec<usize>>| v.map_or(0, |v| v.len() - v.partition_point(|&p| p < from));
        match key {
            None => from_on(self.by_group.get(&group)),
            Some(_) => {
                from_on(self.by_key.get(&(group, key))) + from_on(self.by_key.get(&(group, None)))
            }
        }
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

/// The stretches of one block, judged once the walk has left it: `ops` from
/// `block.first_op` on are the block's operations, nested ones included.
fn stretches(
    kernel: &Kernel,
    sources: &SourceMap,
    block: &OpenBlock<'_>,
    ops: &OpIndex,
    out: &mut Vec<BarrierError>,
) {
    let mut open = Stretch::default();
    for &(s, boundary) in &block.stmts {
        if boundary {
            finish(
                kernel,
                sources,
                std::mem::take(&mut open),
                block.first_op,
                ops,
                out,
            );
            continue;
        }
        if let StmtKind::Assign { local, .. } = &s.kind {
            open.assigned(*local);
        }
        let Some(op) = tx_op(s) else { continue };
        let item = (s.span, consteval::eval_u64(op.bytes));
        let at = open.entry(op.barrier);
        let Some(entry) = open.entries.get_mut(at) else {
            continue;
        };
        match op.kind {
            Kind::Expect => {
                entry.expects.push(item);
                entry.expect_ref = entry.expect_ref.or(Some(op.barrier));
            }
            Kind::Copy => entry.copies.push(item),
        }
    }
    finish(kernel, sources, open, block.first_op, ops, out);
}

/// The entries of the stretch being read, indexed so that finding the
/// entry of an operation and closing the entries of an assigned local do
/// not scan them all.
#[derive(Default)]
struct Stretch<'a> {
    entries: Vec<Entry<'a>>,
    /// Open entries whose index is constant, by group and index.
    by_const: HashMap<(BarrierId, i128), usize>,
    /// Open entries whose index is not constant.
    by_value: Vec<usize>,
    /// Entries whose index reads each local.
    readers: HashMap<LocalId, Vec<usize>>,
}

impl<'a> Stretch<'a> {
    /// An assignment to `local`: entries whose index reads it are closed.
    fn assigned(&mut self, local: LocalId) {
        let Some(readers) = self.readers.remove(&local) else {
            return;
        };
        for i in readers {
            if let Some(e) = self.entries.get_mut(i) {
                e.closed = true;
            }
        }
        let entries = &self.entries;
        self.by_value
            .retain(|&i| entries.get(i).is_some_and(|e| !e.closed));
    }

    /// The position of the open entry of the barrier `r`, created if there
    /// is none.
    fn entry(&mut self, r: &'a BarrierRef) -> usize {
        let index = r.index.as_deref();
        let key = const_key(index);
        let found = match key {
            Some(k) => self
                .by_const
                .get(&(r.group, k))
                .copied()
                .filter(|&i| self.entries.get(i).is_some_and(|e| !e.closed)),
            None => self.by_value.iter().copied().find(|&i| {
                self.entries
                    .get(i)
                    .is_some_and(|e| e.group == r.group && same_index(e.index, index))
            }),
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.entries.len();
        self.entries.push(Entry {
            group: r.group,
            index,
            closed: false,
            expects: Vec::new(),
            copies: Vec::new(),
            expect_ref: None,
        });
        match key {
            Some(k) => {
                self.by_const.insert((r.group, k), i);
            }
            None => self.by_value.push(i),
        }
        for l in index.map(locals_read).unwrap_or_default() {
            self.readers.entry(l).or_default().push(i);
        }
        i
    }
}

fn finish(
    kernel: &Kernel,
    sources: &SourceMap,
    stretch: Stretch<'_>,
    first_op: usize,
    ops: &OpIndex,
    out: &mut Vec<BarrierError>,
) {
    for e in stretch.entries {
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
        // Another operation in the block (nested ones included) that may be
        // on the same barrier: the entry's own are all among those counted.
        let own = e.expects.len() + e.copies.len();
        let shared = ops.count_from(first_op, e.group, const_key(e.index)) > own;
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

/// The total of constant byte counts; `None` if one is not constant.
fn sum(items: &[(Span, Option<u64>)]) -> Option<u64> {
    items
        .iter()
        .try_fold(0u64, |acc, (_, n)| acc.checked_add((*n)?))
}

/// Control flow ends a stretch (so does a statement holding an `if`
/// expression, whose blocks may hold statements: see `Tx::stmt_end`).
fn is_control(s: &Stmt) -> bool {
    matches!(
        s.kind,
        StmtKind::If { .. }
            | StmtKind::While { .. }
            | StmtKind::For { .. }
            | StmtKind::Poisoned { .. }
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Return(_)
    )
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

/// The locals an expression reads.
fn locals_read(e: &Expr) -> Vec<LocalId> {
    struct Reads(Vec<LocalId>);
    impl<'a> Visitor<'a> for Reads {
        fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
            if let ExprKind::Local(l) = e.kind {
                if !self.0.contains(&l) {
                    self.0.push(l);
                }
            }
        }
    }
    let mut r = Reads(Vec::new());
    walk::expr(e, Cx::default(), &mut r);
    r.0
}
