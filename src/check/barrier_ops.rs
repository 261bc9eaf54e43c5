//! Barrier references and barrier operations (`full[s].wait()`), lowered
//! to IR barrier statements. Only their shape is checked here (E0304, types,
//! argument counts, targets); the barrier pass checks the rest on the IR.

use super::body::{Binding, BodyChecker};
use super::calls::CallResult;
use super::error::CheckError;
use crate::ir::{
    self, BarrierOp, BarrierOpKind, BarrierRef, Expr, ExprKind, Parity, Scope, StmtKind,
};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

const METHODS: &[&str] = &[
    "arrive",
    "arrive_expect_tx",
    "expect_tx",
    "arrive_remote",
    "wait",
    "test",
    "wait_cluster",
    "test_cluster",
];

/// The operations that only a cluster-scope group allows (E0307).
pub const CLUSTER_ONLY: &[&str] = &["arrive_remote", "wait_cluster", "test_cluster"];

impl BodyChecker<'_> {
    /// `receiver.method(args)`: a barrier operation.
    pub fn method_call(
        &mut self,
        receiver: &ast::Expr,
        method: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<CallResult> {
        if let Some(group) = self.named_receiver(receiver) {
            return self.named_method_call(group, receiver, method, args, span);
        }
        let m = &*method.name;
        self.note_cluster_op_on_poisoned(receiver, m);
        let barrier = self.barrier_ref(receiver);
        if !METHODS.contains(&m) {
            for a in args {
                let _ = self.expr(a, None);
            }
            if barrier.is_some() {
                self.error(CheckError::NotFound {
                    kind: "barrier operation",
                    name: m.into(),
                    span: method.span,
                    similar: super::body::similar(m, METHODS.iter().copied()),
                    help: Some(format!(
                        "the barrier operations are {}",
                        METHODS
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                });
            }
            return None;
        }
        let sig = match m {
            "arrive" => "arrive() or arrive(count: u32)",
            "arrive_expect_tx" => "arrive_expect_tx(bytes: u32)",
            "expect_tx" => "expect_tx(bytes: u32)",
            "arrive_remote" => "arrive_remote(rank: u32)",
            "wait" => "wait() or wait(parity: u32)",
            "test" => "test() or test(parity: u32) -> bool",
            "wait_cluster" => "wait_cluster() or wait_cluster(parity: u32)",
            _ => "test_cluster() or test_cluster(parity: u32) -> bool",
        };
        let optional = matches!(
            m,
            "arrive" | "wait" | "test" | "wait_cluster" | "test_cluster"
        );
        if args.len() > 1 || (args.is_empty() && !optional) {
            let expected = if optional { "0 or 1" } else { "1" };
            return self.wrong_arg_count(m, args, span, expected.into(), sig);
        }
        let arg = match args.first() {
            Some(a) => Some(self.expr_as(a, Scalar::U32)?),
            None => None,
        };
        // Operations that sm_80 lacks (language.md §7).
        let sm90_only = match m {
            "arrive" => arg.is_some().then_some("`arrive(count)`"),
            "arrive_expect_tx" => Some("`arrive_expect_tx`"),
            "expect_tx" => Some("`expect_tx`"),
            "arrive_remote" => Some("`arrive_remote`"),
            "wait_cluster" => Some("`wait_cluster`"),
            "test_cluster" => Some("`test_cluster`"),
            _ => None,
        };
        if let Some(feature) = sm90_only {
            if !self.require_sm90(feature, span) {
                return None;
            }
        }
        let barrier = barrier?;
        if m == "arrive_remote" && !self.require_cluster("`arrive_remote`", span) {
            return None;
        }
        let parity = |a: Option<Expr>| match a {
            Some(e) => Parity::Explicit(e),
            None => Parity::Tracked,
        };
        let kind = match m {
            "arrive" => BarrierOpKind::Arrive { count: arg },
            "arrive_expect_tx" => BarrierOpKind::ArriveExpectTx { bytes: arg? },
            "expect_tx" => BarrierOpKind::ExpectTx { bytes: arg? },
            "arrive_remote" => BarrierOpKind::ArriveRemote { rank: arg? },
            "wait" => BarrierOpKind::Wait {
                parity: parity(arg),
            },
            "wait_cluster" => BarrierOpKind::WaitCluster {
                parity: parity(arg),
            },
            _ => {
                let kind = ExprKind::BarrierTest {
                    barrier: Box::new(barrier),
                    parity: Box::new(parity(arg)),
                    acquire: if m == "test" {
                        Scope::Cta
                    } else {
                        Scope::Cluster
                    },
                    method_span: method.span,
                };
                return Some(CallResult::Value(Expr {
                    kind,
                    ty: Scalar::Bool,
                    span,
                    id: self.ids.expr(),
                }));
            }
        };
        Some(CallResult::Effect(Box::new(StmtKind::Barrier(Box::new(
            BarrierOp {
                kind,
                barrier,
                method_span: method.span,
            },
        )))))
    }

    /// Records a cluster-only operation on a group whose declaration (its
    /// scope) failed, so that the declaration's error (E0308) offers no fix
    /// to scope `cta` that would lead into E0307.
    fn note_cluster_op_on_poisoned(&mut self, receiver: &ast::Expr, method: &str) {
        if !CLUSTER_ONLY.contains(&method) {
            return;
        }
        let name = match &receiver.kind {
            ast::ExprKind::Name(n) => n,
            ast::ExprKind::Index { base, .. } => match &base.kind {
                ast::ExprKind::Name(n) => n,
                _ => return,
            },
            _ => return,
        };
        let failed = match self.lookup(&name.name) {
            Some(Binding::Poisoned) => true,
            Some(Binding::Barrier(b)) => self
                .kernel
                .as_ref()
                .and_then(|k| k.barriers.get(b.index()))
                .is_some_and(|g| g.failed.scope),
            _ => false,
        };
        if failed {
            if let Some(k) = self.kernel.as_mut() {
                k.cluster_ops_on_poisoned.insert(name.name.to_string());
            }
        }
    }

    /// A wait on group `id` as a help text shows it: `done.wait()`,
    /// `full[i].wait()` for a group of several, `ready.wait_cluster()` for a
    /// cluster-scope group.
    pub fn wait_example(&self, id: ir::BarrierId) -> String {
        let Some(g) = self
            .kernel
            .as_ref()
            .and_then(|k| k.barriers.get(id.index()))
        else {
            return "done.wait()".to_string();
        };
        let index = if g.count > 1 { "[i]" } else { "" };
        let wait = match g.scope {
            Scope::Cta => "wait",
            Scope::Cluster => "wait_cluster",
        };
        format!("{}{index}.{wait}()", g.name)
    }

    /// A reference to one barrier: `done` or `full[s]`.
    pub fn barrier_ref(&mut self, e: &ast::Expr) -> Option<BarrierRef> {
        let (name, indices) = match &e.kind {
            ast::ExprKind::Name(n) => (n, None),
            ast::ExprKind::Index { base, indices, .. } => match &base.kind {
                ast::ExprKind::Name(n) => (n, Some(indices)),
                _ => {
                    let _ = self.expr(e, None);
                    self.error(CheckError::NotA {
                        name: self.text(base.span).to_string(),
                        what: "a barrier group",
                        span: base.span,
                        decl: None,
                    });
                    return None;
                }
            },
            _ => {
                if self.expr(e, None).is_some() {
                    self.error(CheckError::NotA {
                        name: self.text(e.span).to_string(),
                        what: "a barrier group",
                        span: e.span,
                        decl: None,
                    });
                }
                return None;
            }
        };
        let group = match self.lookup(&name.name) {
            Some(Binding::Barrier(b)) => b,
            Some(Binding::Poisoned) => return None,
            Some(_) => {
                self.error(CheckError::NotA {
                    name: name.name.to_string(),
                    what: "a barrier group",
                    span: name.span,
                    decl: None,
                });
                return None;
            }
            None => {
                let groups: Vec<String> = self
                    .kernel
                    .as_ref()
                    .map(|k| k.barriers.iter().map(|b| b.name.clone()).collect())
                    .unwrap_or_default();
                let similar = super::body::similar(&name.name, groups.iter().map(String::as_str));
                self.error(CheckError::NotFound {
                    kind: "barrier group",
                    name: name.name.to_string(),
                    span: name.span,
                    similar,
                    help: None,
                });
                return None;
            }
        };
        let (count, decl, def) = {
            let g = self.kernel.as_ref()?.barriers.get(group.index())?;
            (g.count, g.spans.decl, g.spans.name)
        };
        self.reference(name.span, def);
        self.named_groups.push(group);
        let Some(indices) = indices else {
            return Some(BarrierRef {
                group,
                index: None,
                span: e.span,
            });
        };
        match indices.as_slice() {
            [ast::IndexArg::Expr(i)] => {
                let idx = self.expr(i, Some(Scalar::U32))?;
                if !idx.ty.is_int() {
                    self.mismatch_text("integer", idx.ty.to_string(), i.span);
                    return None;
                }
                Some(BarrierRef {
                    group,
                    index: Some(Box::new(idx)),
                    span: e.span,
                })
            }
            _ => {
                let shape = self.reference_shape(indices, count);
                self.push_diag(
                    CheckError::NotSingleBarrier {
                        name: name.name.to_string(),
                        shape,
                        span: e.span,
                        decl,
                    }
                    .into_diagnostic(),
                );
                None
            }
        }
    }

    /// The shape a multi-barrier reference names, as the error shows it:
    /// `(2,)` for `full[0..2]`, `(?,)` when a bound is not constant.
    fn reference_shape(&mut self, indices: &[ast::IndexArg], count: u32) -> String {
        let dims: Vec<String> = indices
            .iter()
            .map(|i| match i {
                ast::IndexArg::Range { lo, hi, .. } => {
                    let lo = lo.as_ref().map_or(Some(0), |e| self.const_index(e));
                    let hi = hi
                        .as_ref()
                        .map_or(Some(count as i128), |e| self.const_index(e));
                    match (lo, hi) {
                        (Some(l), Some(h)) => (h - l).max(0).to_string(),
                        _ => "?".to_string(),
                    }
                }
                ast::IndexArg::Expr(_) => "1".to_string(),
            })
            .collect();
        if dims.len() == 1 {
            format!("({},)", dims.join(""))
        } else {
            format!("({})", dims.join(", "))
        }
    }

    fn const_index(&mut self, e: &ast::Expr) -> Option<i128> {
        let v = self.expr(e, Some(Scalar::U32))?;
        ir::consteval::eval_int(&v)
    }
}
