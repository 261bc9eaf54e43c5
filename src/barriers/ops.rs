//! Barrier operations against their group's scope (E0301, E0307) and their
//! constant operands: arrival counts (E0306), transaction sizes (E0309) and
//! wait parities (E0310).

use super::error::BarrierError;
use super::walk::{self, Cx, Visitor};
use crate::ir::{
    consteval, BarrierGroup, BarrierOpKind, BarrierRef, Expr, ExprKind, Kernel, Parity, Scope,
    Stmt, StmtKind,
};
use crate::span::Span;

/// The largest transaction count an mbarrier phase can expect (2^20 - 1).
pub const MAX_TX_BYTES: i128 = (1 << 20) - 1;
/// The largest arrival count of an mbarrier, in `mbarrier.init` and in
/// `mbarrier.arrive`'s count operand (2^20 - 1).
pub const MAX_ARRIVALS: i128 = (1 << 20) - 1;

/// A positive multiple of 16 that an mbarrier's transaction count can hold.
pub fn valid_tx_size(n: i128) -> bool {
    n > 0 && n % 16 == 0 && n <= MAX_TX_BYTES
}

pub fn check(kernel: &Kernel, out: &mut Vec<BarrierError>) {
    let mut v = Ops { kernel, out };
    walk::body(&kernel.body, &mut v);
}

struct Ops<'k, 'o> {
    kernel: &'k Kernel,
    out: &'o mut Vec<BarrierError>,
}

impl Ops<'_, '_> {
    fn group(&self, r: &BarrierRef) -> Option<&BarrierGroup> {
        self.kernel.barriers.get(r.group.index())
    }

    /// E0309 for a constant byte count that is not a valid size.
    fn tx_size(&mut self, bytes: &Expr) {
        let Some(n) = consteval::eval_int(bytes) else {
            return;
        };
        if !valid_tx_size(n) {
            self.out.push(BarrierError::BadTxSize {
                n,
                span: bytes.span,
            });
        }
    }

    /// E0306 for a constant `arrive(count)` outside 1..=2^20-1: ptxas
    /// rejects 0, and the ISA bounds an mbarrier's pending count by 2^20-1
    /// (ptxas does not check the upper bound).
    fn arrive_count(&mut self, count: &Expr) {
        let Some(n) = consteval::eval_int(count) else {
            return;
        };
        if !(1..=MAX_ARRIVALS).contains(&n) {
            self.out.push(BarrierError::ArrivalsOutOfRange {
                n,
                span: count.span,
            });
        }
    }

    fn parity(&mut self, p: &Expr) {
        let Some(n) = consteval::eval_int(p) else {
            return;
        };
        if n != 0 && n != 1 {
            self.out.push(BarrierError::BadParity { n, span: p.span });
        }
    }

    /// E0301 for `wait`/`test` (`call` is the whole call) on a cluster group.
    fn await_cta(
        &mut self,
        op: &'static str,
        r: &BarrierRef,
        call: Span,
        method: Span,
        parity: &Parity,
    ) {
        let Some(g) = self.group(r) else { return };
        if g.scope == Scope::Cluster {
            let scope = g.spans.scope;
            let explicit_parity = matches!(parity, Parity::Explicit(_));
            self.out.push(BarrierError::AwaitNonCta {
                op,
                call,
                scope,
                method,
                explicit_parity,
            });
        }
    }

    /// E0307 for `arrive_remote`/`wait_cluster` on a CTA group.
    fn needs_cluster(&mut self, op: &'static str, r: &BarrierRef, call: Span) {
        let Some(g) = self.group(r) else { return };
        if g.scope == Scope::Cta {
            let scope = g.spans.scope;
            self.out.push(BarrierError::NeedsClusterScope {
                op,
                call,
                scope,
                scope_name: g.scope.name(),
            });
        }
    }
}

impl<'a> Visitor<'a> for Ops<'_, '_> {
    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        match &s.kind {
            StmtKind::Barrier(op) => match &op.kind {
                BarrierOpKind::Wait { parity } => {
                    self.await_cta("wait", &op.barrier, s.span, op.method_span, parity);
                    if let Some(p) = walk::explicit(parity) {
                        self.parity(p);
                    }
                }
                BarrierOpKind::WaitCluster { parity } => {
                    self.needs_cluster("wait_cluster", &op.barrier, s.span);
                    self.parity(parity);
                }
                BarrierOpKind::ArriveRemote { .. } => {
                    self.needs_cluster("arrive_remote", &op.barrier, s.span)
                }
                BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
                    self.tx_size(bytes)
                }
                BarrierOpKind::Arrive { count: Some(count) } => self.arrive_count(count),
                BarrierOpKind::Arrive { count: None } => {}
            },
            StmtKind::CopyAsync { bytes, .. } | StmtKind::CopyAsyncStore { bytes, .. } => {
                self.tx_size(bytes)
            }
            _ => {}
        }
    }

    fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
        if let ExprKind::BarrierTest { barrier, parity } = &e.kind {
            // `test` keeps no method span; its fix (`wait_cluster`) is offered
            // only for `wait`, so the call's span stands in.
            self.await_cta("test", barrier, e.span, e.span, parity);
            if let Some(p) = walk::explicit(parity) {
                self.parity(p);
            }
        }
    }
}
