//! Barrier operations against their group's scope (E0301, E0307) and their
//! constant operands: arrival counts (E0306), transaction sizes (E0309) and
//! wait parities (E0310).
//!
//! Each scope error offers the fixes that make the operation right: the
//! operation's other spelling (`wait` ↔ `wait_cluster`, `test` ↔
//! `test_cluster`) and the other scope for the group. A fix must not lead
//! into another error, so the scope fix is offered only when nothing else in
//! the kernel needs the group's present scope: no cluster-only operation
//! (`arrive_remote`, `wait_cluster`, `test_cluster`) for `cta`, no CTA
//! acquire (`wait`, `test`) for `cluster`, no statement that failed to check
//! naming the group, and, for `cluster`, a kernel with `cluster(...)`.

use super::error::{BarrierError, Blocker, ScopeFix};
use super::walk::{self, Cx, Once, Visitor};
use crate::analysis::values::{At, Values};
use crate::ir::{
    BarrierGroup, BarrierId, BarrierOpKind, BarrierRef, Expr, ExprKind, Kernel, Parity, Scope,
    Stmt, StmtKind,
};
use crate::source::SourceMap;
use crate::span::Span;

/// The largest transaction count an mbarrier phase can expect (2^20 - 1).
pub const MAX_TX_BYTES: i128 = (1 << 20) - 1;

/// A positive multiple of 16 that an mbarrier's transaction count can hold.
pub fn valid_tx_size(n: i128) -> bool {
    n > 0 && n % 16 == 0 && n <= MAX_TX_BYTES
}

pub fn check(kernel: &Kernel, values: &Values, sources: &SourceMap, out: &mut Vec<BarrierError>) {
    let mut needs = Needs {
        cta: vec![Need::No; kernel.barriers.len()],
        cluster: vec![Need::No; kernel.barriers.len()],
    };
    walk::body(&kernel.body, &mut needs);
    let mut v = Ops {
        kernel,
        values,
        sources,
        needs,
        once: Once::default(),
        out,
    };
    walk::runs(&kernel.body, values, &mut v);
}

/// Whether something in the kernel needs a group to have one scope.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Need {
    No,
    /// The first operation that needs it.
    Op(&'static str, Span),
    /// A statement that failed to check names the group.
    Unknown,
}

/// Per group: what needs scope `cta` (a CTA acquire), and what needs scope
/// `cluster` (a cluster-only operation).
struct Needs {
    cta: Vec<Need>,
    cluster: Vec<Need>,
}

impl Needs {
    fn mark(&mut self, g: BarrierId, scope: Scope, need: Need) {
        let list = match scope {
            Scope::Cta => &mut self.cta,
            Scope::Cluster => &mut self.cluster,
        };
        if let Some(n) = list.get_mut(g.index()) {
            // The first known operation is the one worth pointing at; an
            // unknown need only replaces "none".
            match (*n, need) {
                (Need::No, _) | (Need::Unknown, Need::Op(..)) => *n = need,
                _ => {}
            }
        }
    }
}

impl<'a> Visitor<'a> for Needs {
    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        match &s.kind {
            StmtKind::Barrier(op) => {
                let scope = match op.kind {
                    BarrierOpKind::Wait { .. } => Scope::Cta,
                    BarrierOpKind::WaitCluster { .. } | BarrierOpKind::ArriveRemote { .. } => {
                        Scope::Cluster
                    }
                    _ => return,
                };
                self.mark(
                    op.barrier.group,
                    scope,
                    Need::Op(op.kind.method(), op.method_span),
                );
            }
            StmtKind::Poisoned { groups, .. } => {
                for g in groups {
                    self.mark(*g, Scope::Cta, Need::Unknown);
                    self.mark(*g, Scope::Cluster, Need::Unknown);
                }
            }
            _ => {}
        }
    }

    fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
        if let ExprKind::BarrierTest {
            barrier,
            acquire,
            method_span,
            ..
        } = &e.kind
        {
            let op = test_name(*acquire);
            self.mark(barrier.group, *acquire, Need::Op(op, *method_span));
        }
    }
}

fn test_name(acquire: Scope) -> &'static str {
    match acquire {
        Scope::Cta => "test",
        Scope::Cluster => "test_cluster",
    }
}

struct Ops<'k, 'o> {
    kernel: &'k Kernel,
    values: &'k Values,
    sources: &'k SourceMap,
    needs: Needs,
    /// By the span of the operand or operation reported: each reported in
    /// the first run that shows it.
    once: Once<Span>,
    out: &'o mut Vec<BarrierError>,
}

impl Ops<'_, '_> {
    fn group(&self, r: &BarrierRef) -> Option<&BarrierGroup> {
        self.kernel.barriers.get(r.group.index())
    }

    /// E0309 for a constant byte count that is not a valid size.
    fn tx_size(&mut self, bytes: &Expr, at: At) {
        let Some(n) = self.values.int(bytes, at) else {
            return;
        };
        if !valid_tx_size(n) && self.once.first(bytes.span) {
            self.out.push(BarrierError::BadTxSize {
                n,
                span: bytes.span,
            });
        }
    }

    /// E0306 for a constant `arrive(count)` outside 1..=2^20-1: ptxas
    /// rejects 0, and the ISA bounds an mbarrier's pending count by 2^20-1
    /// (ptxas does not check the upper bound).
    fn arrive_count(&mut self, count: &Expr, at: At) {
        let Some(n) = self.values.int(count, at) else {
            return;
        };
        if !(1..=i128::from(BarrierGroup::MAX_ARRIVALS)).contains(&n) && self.once.first(count.span)
        {
            self.out.push(BarrierError::ArrivalsOutOfRange {
                n,
                span: count.span,
            });
        }
    }

    /// E0310 for a constant parity other than 0 or 1.
    fn parity(&mut self, op: &'static str, r: &BarrierRef, p: &Parity, at: At) {
        let Some(p) = walk::explicit(p) else {
            return;
        };
        let Some(n) = self.values.int(p, at) else {
            return;
        };
        if n != 0 && n != 1 && self.once.first(p.span) {
            self.out.push(BarrierError::BadParity {
                n,
                span: p.span,
                reference: super::reference_text(self.sources, self.kernel, r),
                op,
            });
        }
    }

    /// What would stand in the way of re-declaring `r`'s group with `scope`.
    fn blocker(&self, r: &BarrierRef, scope: Scope) -> Option<Blocker> {
        let (other, other_scope) = match scope {
            Scope::Cta => (&self.needs.cluster, Scope::Cluster),
            Scope::Cluster => (&self.needs.cta, Scope::Cta),
        };
        match other.get(r.group.index()).copied().unwrap_or(Need::Unknown) {
            Need::Op(op, span) => {
                return Some(Blocker::Op {
                    op,
                    span,
                    scope: other_scope.name(),
                })
            }
            Need::Unknown => return Some(Blocker::Unknown),
            Need::No => {}
        }
        if scope == Scope::Cluster && self.kernel.cluster.is_none() {
            return Some(Blocker::NoCluster {
                kernel: self.kernel.name_span,
            });
        }
        None
    }

    /// E0301 for `wait`/`test` (`call` is the whole call) on a cluster
    /// group, E0307 for `wait_cluster`/`test_cluster`/`arrive_remote` on a
    /// cta group. `need` is the scope the operation needs.
    fn scope(&mut self, op: &'static str, r: &BarrierRef, call: Span, method: Span, need: Scope) {
        let Some(g) = self.group(r) else { return };
        // A scope that failed to check (a placeholder) says nothing.
        if g.scope == need || g.failed.scope {
            return;
        }
        let scope_span = g.spans.scope;
        if !self.once.first(call) {
            return;
        }
        let fix = ScopeFix {
            scope: scope_span,
            method,
            blocker: self.blocker(r, need),
        };
        self.out.push(match need {
            Scope::Cta => BarrierError::AwaitNonCta { op, call, fix },
            Scope::Cluster => BarrierError::NeedsClusterScope { op, call, fix },
        });
    }
}

impl<'a> Visitor<'a> for Ops<'_, '_> {
    fn stmt(&mut self, s: &'a Stmt, cx: Cx<'a>) {
        let at = cx.at;
        match &s.kind {
            StmtKind::Barrier(op) => {
                let (r, m) = (&op.barrier, op.method_span);
                match &op.kind {
                    BarrierOpKind::Wait { parity } => {
                        self.scope("wait", r, s.span, m, Scope::Cta);
                        self.parity("wait", r, parity, at);
                    }
                    BarrierOpKind::WaitCluster { parity } => {
                        self.scope("wait_cluster", r, s.span, m, Scope::Cluster);
                        self.parity("wait_cluster", r, parity, at);
                    }
                    BarrierOpKind::ArriveRemote { .. } => {
                        self.scope("arrive_remote", r, s.span, m, Scope::Cluster)
                    }
                    BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
                        self.tx_size(bytes, at)
                    }
                    BarrierOpKind::Arrive { count: Some(count) } => self.arrive_count(count, at),
                    BarrierOpKind::Arrive { count: None } => {}
                }
            }
            StmtKind::CopyAsync { bytes, .. } | StmtKind::CopyAsyncStore { bytes, .. } => {
                self.tx_size(bytes, at)
            }
            _ => {}
        }
    }

    fn expr(&mut self, e: &'a Expr, cx: Cx<'a>) {
        if let ExprKind::BarrierTest {
            barrier,
            parity,
            acquire,
            method_span,
        } = &e.kind
        {
            let op = test_name(*acquire);
            self.scope(op, barrier, e.span, *method_span, *acquire);
            self.parity(op, barrier, parity, cx.at);
        }
    }
}
