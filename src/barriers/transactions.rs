//! Transaction bytes of bulk copies: a copy completing on a group that never
//! expects transactions (W0322), and, in one straight-line stretch of code,
//! expected bytes that differ from the bytes the copies complete (W0323;
//! E0406 when a tensor copy is among them).
//!
//! A tensor copy's bytes are its box's, a constant: where a stretch holds
//! one, a mismatch is certain and an error (E0406). A multicast copy
//! (`mask = M`, a constant) completes its box on the barrier of every CTA
//! the mask names; when every CTA of the cluster runs the stretch (no
//! condition or loop around it depends on the CTA: `block_idx`,
//! `cluster_rank`, `cluster_idx`, memory; `cluster_grid_idx` and
//! `cluster_grid_dim`, a persistent cluster's loop over tiles, are the same
//! in every CTA of the cluster), the CTA of rank `r` receives one
//! box from each of the cluster's CTAs if `r` is in `M`, none otherwise, and
//! each CTA's expected bytes are checked against what it receives. Where
//! the senders are not known (a mask that is not constant, a CTA-dependent
//! condition), nothing is said.
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
//!
//! The body of a loop over a constant list is read as it runs, once per
//! element in place of the loop ([`walk::runs`]), with the element as a
//! constant in indices and byte counts: a barrier `full[s]` in the runs for
//! `s = 0` and `s = 1` is two barriers, and a `let` in the body starts a
//! new value in each run.

use super::error::{BarrierError, CtaCount, TxCopy};
use super::ops;
use super::walk::{self, Cx, Once, Visitor};
use crate::analysis::values::{At, Values};
use crate::ir::{
    BarrierId, BarrierOpKind, BarrierRef, Block, Expr, ExprKind, Kernel, LocalId, ParamType,
    Special, Stmt, StmtClass, StmtKind, TensorCopyKind,
};
use crate::source::SourceMap;
use crate::span::Span;
use std::collections::HashMap;

pub fn check(kernel: &Kernel, values: &Values, sources: &SourceMap, out: &mut Vec<BarrierError>) {
    let mut defs = Defs::default();
    walk::body(&kernel.body, &mut defs);
    let mut v = Tx {
        kernel,
        values,
        sources,
        out,
        once: Once::default(),
        expects: vec![false; kernel.barriers.len()],
        copies: Vec::new(),
        ops: OpIndex::default(),
        if_exprs: 0,
        blocks: Vec::new(),
        stmts: Vec::new(),
        cta: CtaDependence {
            defs,
            memo: HashMap::new(),
        },
        dependent: Vec::new(),
    };
    walk::runs(&kernel.body, values, &mut v);
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
    values: &'k Values,
    sources: &'k SourceMap,
    out: &'o mut Vec<BarrierError>,
    /// W0323 by the expect's span: once, however many runs show it.
    once: Once<Span>,
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
    /// What depends on the CTA, for the senders of a multicast.
    cta: CtaDependence<'a>,
    /// For each control statement being walked: whether some CTAs may
    /// skip its blocks (or run them another number of times).
    dependent: Vec<bool>,
}

/// A block being walked: where its operations start, its statements
/// walked so far with whether each ends a stretch and the run it was in,
/// and whether every CTA runs it (as often) when any runs the kernel.
struct OpenBlock<'a> {
    first_op: usize,
    stmts: Vec<(&'a Stmt, bool, At)>,
    every_cta: bool,
}

impl<'a> Visitor<'a> for Tx<'_, '_, 'a> {
    fn block(&mut self, _b: &'a Block, _cx: Cx<'a>) {
        let every_cta = !self.dependent.iter().any(|d| *d);
        self.blocks.push(OpenBlock {
            first_op: self.ops.len(),
            stmts: Vec::new(),
            every_cta,
        });
    }

    fn block_end(&mut self, _b: &'a Block, _cx: Cx<'a>) {
        if let Some(block) = self.blocks.pop() {
            let cx = Judge {
                kernel: self.kernel,
                values: self.values,
                sources: self.sources,
                ops: &self.ops,
            };
            cx.stretches(&block, &mut self.once, self.out);
        }
    }

    fn stmt(&mut self, s: &'a Stmt, cx: Cx<'a>) {
        self.stmts.push(self.if_exprs);
        // The expressions that decide whether (and how often) the blocks
        // of a control statement run.
        let deciders: Vec<&Expr> = match &s.kind {
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => vec![cond],
            StmtKind::For {
                start, end, step, ..
            } => vec![start, end, step],
            StmtKind::ForList { .. } => Vec::new(),
            StmtKind::Poisoned { .. } => {
                self.dependent.push(true);
                vec![]
            }
            _ => vec![],
        };
        if matches!(
            s.kind,
            StmtKind::If { .. }
                | StmtKind::While { .. }
                | StmtKind::For { .. }
                | StmtKind::ForList { .. }
        ) {
            let d = deciders.iter().any(|e| self.cta.depends(e));
            self.dependent.push(d);
        }
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
        let Some(op) = tx_op(self.kernel, s) else {
            return;
        };
        self.ops.push(
            op.barrier.group,
            const_key(self.values, op.barrier.index.as_deref(), cx.at),
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

    fn stmt_end(&mut self, s: &'a Stmt, cx: Cx<'a>) {
        if matches!(
            s.kind,
            StmtKind::If { .. }
                | StmtKind::While { .. }
                | StmtKind::For { .. }
                | StmtKind::ForList { .. }
                | StmtKind::Poisoned { .. }
        ) {
            self.dependent.pop();
        }
        let started = self.stmts.pop().unwrap_or(self.if_exprs);
        let boundary = is_control(s) || self.if_exprs != started;
        if let Some(block) = self.blocks.last_mut() {
            block.stmts.push((s, boundary, cx.at));
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
    /// The run `index` is read in.
    at: At,
    /// An assignment changed a local of `index`: later uses are another entry.
    closed: bool,
    expects: Vec<(Span, Option<u64>)>,
    copies: Vec<CopyItem>,
    /// The barrier as the first expect wrote it, for the message.
    expect_ref: Option<&'a BarrierRef>,
}

/// What judging a block's stretches reads.
struct Judge<'k, 'o> {
    kernel: &'k Kernel,
    values: &'k Values,
    sources: &'k SourceMap,
    ops: &'o OpIndex,
}

impl Judge<'_, '_> {
    /// The stretches of one block, judged once the walk has left it: `ops`
    /// from `block.first_op` on are the block's operations, nested ones
    /// included.
    fn stretches(&self, block: &OpenBlock<'_>, once: &mut Once<Span>, out: &mut Vec<BarrierError>) {
        let mut open = Stretch::default();
        for &(s, boundary, at) in &block.stmts {
            if boundary {
                self.finish(std::mem::take(&mut open), block.first_op, once, out);
                continue;
            }
            // A new value of a local (an assignment, or a `let` run again
            // in the next run of a loop over a list's body).
            if let StmtKind::Assign { local, .. } | StmtKind::Let { local, .. } = &s.kind {
                open.assigned(*local);
            }
            let Some(op) = tx_op(self.kernel, s) else {
                continue;
            };
            let (bytes, tensor) = match op.bytes {
                TxBytes::Expr(e) => (
                    self.values
                        .constant_int(e, at)
                        .and_then(|n| u64::try_from(n).ok()),
                    None,
                ),
                TxBytes::Tensor {
                    box_bytes,
                    mask,
                    label,
                } => {
                    let mask = mask.map(|m| {
                        self.values
                            .constant_int(m, at)
                            .and_then(|c| u32::try_from(c).ok())
                    });
                    (
                        Some(box_bytes),
                        Some(TensorItem {
                            mask,
                            every_cta: block.every_cta,
                            label,
                        }),
                    )
                }
            };
            let at_entry = open.entry(self.values, op.barrier, at);
            let Some(entry) = open.entries.get_mut(at_entry) else {
                continue;
            };
            match op.kind {
                Kind::Expect => {
                    entry.expects.push((s.span, bytes));
                    entry.expect_ref = entry.expect_ref.or(Some(op.barrier));
                }
                Kind::Copy => entry.copies.push(CopyItem {
                    span: s.span,
                    bytes,
                    tensor,
                }),
            }
        }
        self.finish(open, block.first_op, once, out);
    }

    fn finish(
        &self,
        stretch: Stretch<'_>,
        first_op: usize,
        once: &mut Once<Span>,
        out: &mut Vec<BarrierError>,
    ) {
        for e in stretch.entries {
            let Some(&(expect, _)) = e.expects.first() else {
                continue;
            };
            if e.copies.is_empty() {
                continue;
            }
            let Some(expected) = sum(&e.expects) else {
                continue;
            };
            // A size that is already E0309 says nothing about what was meant.
            let sizes = e.expects.iter().map(|(_, n)| *n).chain(
                e.copies
                    .iter()
                    .filter(|c| c.tensor.is_none())
                    .map(|c| c.bytes),
            );
            if sizes.flatten().any(|n| !ops::valid_tx_size(i128::from(n))) {
                continue;
            }
            // Another operation in the block (nested ones included) that may be
            // on the same barrier: the entry's own are all among those counted.
            let own = e.expects.len() + e.copies.len();
            let key = const_key(self.values, e.index, e.at);
            let shared = self.ops.count_from(first_op, e.group, key) > own;
            if shared {
                continue;
            }
            let Some(received) = self.received(&e.copies) else {
                continue;
            };
            let Some((rank, completed)) = received.iter().copied().find(|(_, n)| *n != expected)
            else {
                continue;
            };
            if !once.first(expect) {
                continue;
            }
            let (Some(g), Some(r)) = (self.kernel.barriers.get(e.group.index()), e.expect_ref)
            else {
                continue;
            };
            let reference = super::reference_text(self.sources, self.kernel, r);
            if e.copies.iter().any(|c| c.tensor.is_some()) {
                let copies = e
                    .copies
                    .iter()
                    .map(|c| TxCopy {
                        span: c.span,
                        label: c.label(rank),
                    })
                    .collect();
                let uniform = received.iter().all(|(_, n)| *n == completed);
                let cta = match (received.len() > 1, uniform) {
                    (false, _) => CtaCount::One,
                    (true, true) => CtaCount::Each,
                    (true, false) => CtaCount::Rank(rank),
                };
                out.push(BarrierError::TensorTxMismatch {
                    name: g.name.clone(),
                    reference,
                    expected,
                    completed,
                    cta,
                    expect,
                    copies,
                });
            } else {
                out.push(BarrierError::TxMismatch {
                    name: g.name.clone(),
                    reference,
                    expected,
                    completed,
                    expect,
                    copies: e.copies.iter().map(|c| c.span).collect(),
                });
            }
        }
    }
}

impl Judge<'_, '_> {
    /// The bytes the copies of one barrier in one stretch complete on it,
    /// in each CTA of the cluster (one entry without multicast): `None`
    /// when that is not known.
    fn received(&self, copies: &[CopyItem]) -> Option<Vec<(u32, u64)>> {
        let multicast = copies
            .iter()
            .any(|c| c.tensor.as_ref().is_some_and(|t| t.mask.is_some()));
        let ctas = match (multicast, self.kernel.cluster) {
            (false, _) => 1,
            (true, Some([x, y, z])) => x * y * z,
            (true, None) => return None,
        };
        let mut out = Vec::new();
        for rank in 0..ctas {
            let mut total = 0u64;
            for c in copies {
                let n = match &c.tensor {
                    Some(TensorItem {
                        mask: Some(mask),
                        every_cta,
                        ..
                    }) => {
                        // Every CTA of the cluster sends one box to each
                        // CTA its mask names.
                        let mask = (*mask)?;
                        if !every_cta {
                            return None;
                        }
                        if mask >> rank & 1 == 1 {
                            c.bytes?.checked_mul(u64::from(ctas))?
                        } else {
                            0
                        }
                    }
                    _ => c.bytes?,
                };
                total = total.checked_add(n)?;
            }
            out.push((rank, total));
        }
        Some(out)
    }
}

/// A copy on a barrier in a stretch: its bytes (the box's, for a tensor
/// copy), and for a tensor copy what the message says of it.
struct CopyItem {
    span: Span,
    bytes: Option<u64>,
    tensor: Option<TensorItem>,
}

struct TensorItem {
    /// A multicast's mask: `Some(None)` when it is not constant.
    mask: Option<Option<u32>>,
    /// Every CTA runs the stretch (as often).
    every_cta: bool,
    /// `box of `a`: 128 × 64 bf16 = 16384 bytes`.
    label: String,
}

impl CopyItem {
    /// The label of the copy in E0406, for the CTA of rank `rank`.
    fn label(&self, rank: u32) -> String {
        match &self.tensor {
            Some(TensorItem {
                mask: Some(Some(m)),
                label,
                ..
            }) if m >> rank & 1 == 1 => {
                format!("{label}, multicast by each CTA of the cluster to the CTAs of mask {m:#x}")
            }
            Some(TensorItem {
                mask: Some(Some(m)),
                ..
            }) => format!("multicast to the CTAs of mask {m:#x}, which leaves out rank {rank}"),
            Some(t) => t.label.clone(),
            None => match self.bytes {
                Some(n) => format!("completes {n} bytes here"),
                None => "completes bytes here".to_string(),
            },
        }
    }
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

    /// The position of the open entry of the barrier `r` (read in run
    /// `at`), created if there is none.
    fn entry(&mut self, values: &Values, r: &'a BarrierRef, at: At) -> usize {
        let index = r.index.as_deref();
        let key = const_key(values, index, at);
        let found = match key {
            Some(k) => self
                .by_const
                .get(&(r.group, k))
                .copied()
                .filter(|&i| self.entries.get(i).is_some_and(|e| !e.closed)),
            None => self.by_value.iter().copied().find(|&i| {
                self.entries.get(i).is_some_and(|e| {
                    e.group == r.group && same_index(values, (e.index, e.at), (index, at))
                })
            }),
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.entries.len();
        self.entries.push(Entry {
            group: r.group,
            index,
            at,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Expect,
    Copy,
}

/// A statement that expects or completes transaction bytes on a barrier.
struct TxOp<'a> {
    kind: Kind,
    barrier: &'a BarrierRef,
    bytes: TxBytes<'a>,
}

/// How many bytes an operation expects or completes.
enum TxBytes<'a> {
    /// The value of this expression (an expect, a bulk copy).
    Expr(&'a Expr),
    /// A tensor load's: its box's bytes, on the barrier of each CTA its
    /// multicast mask names (its own, without one).
    Tensor {
        box_bytes: u64,
        mask: Option<&'a Expr>,
        label: String,
    },
}

fn tx_op<'a>(kernel: &Kernel, s: &'a Stmt) -> Option<TxOp<'a>> {
    match &s.kind {
        StmtKind::Barrier(op) => match &op.kind {
            BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
                Some(TxOp {
                    kind: Kind::Expect,
                    barrier: &op.barrier,
                    bytes: TxBytes::Expr(bytes),
                })
            }
            _ => None,
        },
        StmtKind::CopyAsync { bytes, barrier, .. } => Some(TxOp {
            kind: Kind::Copy,
            barrier,
            bytes: TxBytes::Expr(bytes),
        }),
        StmtKind::TensorCopy(c) => {
            let TensorCopyKind::Load { barrier, mask } = &c.kind else {
                // A copy to global memory completes no transactions.
                return None;
            };
            let param = kernel.params.get(c.map.index())?;
            let ParamType::Tensor(map) = param.ty else {
                return None;
            };
            let dims: Vec<String> = map.box_dims().iter().map(u32::to_string).collect();
            Some(TxOp {
                kind: Kind::Copy,
                barrier,
                bytes: TxBytes::Tensor {
                    box_bytes: map.box_bytes(),
                    mask: mask.as_deref(),
                    label: format!(
                        "a box of `{}`: {} {} = {} bytes",
                        param.name,
                        dims.join(" × "),
                        map.elem,
                        map.box_bytes()
                    ),
                },
            })
        }
        // A copy to global memory completes no transactions on a barrier.
        _ => None,
    }
}

/// The total of constant byte counts; `None` if one is not constant.
fn sum(items: &[(Span, Option<u64>)]) -> Option<u64> {
    items
        .iter()
        .try_fold(0u64, |acc, (_, n)| acc.checked_add((*n)?))
}

/// The immutable locals' values and the `for` loops' ranges, for
/// [`CtaDependence`].
#[derive(Default)]
struct Defs<'a> {
    lets: HashMap<LocalId, &'a Expr>,
    loops: HashMap<LocalId, [&'a Expr; 3]>,
    /// Locals assigned after their `let`.
    assigned: std::collections::HashSet<LocalId>,
}

impl<'a> Visitor<'a> for Defs<'a> {
    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        match &s.kind {
            StmtKind::Let { local, value } => {
                self.lets.insert(*local, value);
            }
            StmtKind::Assign { local, .. } => {
                self.assigned.insert(*local);
            }
            StmtKind::LoadVector { locals, .. } => self.assigned.extend(locals.iter().copied()),
            StmtKind::For {
                var,
                start,
                end,
                step,
                ..
            } => {
                self.loops.insert(*var, [start, end, step]);
            }
            _ => {}
        }
    }
}

/// Whether an expression may differ between the CTAs of a cluster: it
/// reads `block_idx`, `cluster_rank`, `cluster_idx`, memory, a call's or an
/// atomic's result, a barrier test, or a local whose value does (a local
/// assigned after its `let` always may). The cluster's own position and
/// the grid's shape in clusters (`cluster_grid_idx`, `cluster_grid_dim`)
/// are the same in all of them.
struct CtaDependence<'a> {
    defs: Defs<'a>,
    memo: HashMap<LocalId, bool>,
}

impl CtaDependence<'_> {
    fn depends(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Param(_) => false,
            ExprKind::Special(s) => matches!(
                s,
                Special::BlockIdx(_) | Special::ClusterRank | Special::ClusterIdx(_)
            ),
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.depends(a),
            ExprKind::Binary(_, a, b) => self.depends(a) || self.depends(b),
            ExprKind::Select(c, a, b) => self.depends(c) || self.depends(a) || self.depends(b),
            ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
                args.iter().any(|a| self.depends(a))
            }
            ExprKind::If { .. }
            | ExprKind::Load(_)
            | ExprKind::AddrOf(_)
            | ExprKind::Call { .. }
            | ExprKind::Atomic { .. }
            | ExprKind::BarrierTest { .. } => true,
        }
    }

    fn local(&mut self, l: LocalId) -> bool {
        if let Some(d) = self.memo.get(&l) {
            return *d;
        }
        // A cycle (none in valid IR) counts as dependent.
        self.memo.insert(l, true);
        let d = if self.defs.assigned.contains(&l) {
            true
        } else if let Some(v) = self.defs.lets.get(&l).copied() {
            self.depends(v)
        } else if let Some(range) = self.defs.loops.get(&l).copied() {
            range.iter().any(|e| self.depends(e))
        } else {
            // A list loop's element: a constant in each run.
            false
        };
        self.memo.insert(l, d);
        d
    }
}

/// Control flow ends a stretch (so does a statement holding an `if`
/// expression, whose blocks may hold statements: see `Tx::stmt_end`).
fn is_control(s: &Stmt) -> bool {
    matches!(
        s.kind.class(),
        StmtClass::Control | StmtClass::Jump | StmtClass::Failed
    )
}

/// A barrier index as a constant (in run `at`): no index is barrier 0 of
/// a group of one.
pub(super) fn const_key(values: &Values, index: Option<&Expr>, at: At) -> Option<i128> {
    match index {
        None => Some(0),
        Some(i) => values.constant_int(i, at),
    }
}

/// Do two indices, each read in its run, name the same barrier (in the
/// same stretch)?
pub(super) fn same_index(
    values: &Values,
    (a, at_a): (Option<&Expr>, At),
    (b, at_b): (Option<&Expr>, At),
) -> bool {
    match (const_key(values, a, at_a), const_key(values, b, at_b)) {
        (Some(x), Some(y)) => x == y,
        _ => matches!((a, b), (Some(x), Some(y)) if same_value(values, (x, at_a), (y, at_b))),
    }
}

/// Structural equality of side-effect-free expressions that read only
/// locals, parameters and built-ins (a constant, such as the element of a
/// loop over a list, compared by its value in each run).
pub(super) fn same_value(values: &Values, (a, at_a): (&Expr, At), (b, at_b): (&Expr, At)) -> bool {
    if let (Some(x), Some(y)) = (values.constant_int(a, at_a), values.constant_int(b, at_b)) {
        return x == y;
    }
    let same = |x: &Expr, y: &Expr| same_value(values, (x, at_a), (y, at_b));
    match (&a.kind, &b.kind) {
        (ExprKind::Local(x), ExprKind::Local(y)) => x == y,
        (ExprKind::Param(x), ExprKind::Param(y)) => x == y,
        (ExprKind::Special(x), ExprKind::Special(y)) => x == y,
        (ExprKind::Unary(o, x), ExprKind::Unary(p, y)) => o == p && same(x, y),
        (ExprKind::Binary(o, x1, y1), ExprKind::Binary(p, x2, y2)) => {
            o == p && same(x1, x2) && same(y1, y2)
        }
        (ExprKind::Cast(x), ExprKind::Cast(y)) => a.ty == b.ty && same(x, y),
        _ => false,
    }
}

/// The locals an expression reads.
pub(super) fn locals_read(e: &Expr) -> Vec<LocalId> {
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
