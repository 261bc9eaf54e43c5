//! Barrier references and barrier operations (`full[s].wait()`), lowered
//! to IR barrier statements. Only their shape is checked here (E0304, types,
//! argument counts, targets); the barrier pass checks the rest on the IR.

use super::args::Call;
use super::body::{Binding, BodyChecker};
use super::builtins::{self, BarrierMethod, Builtin, Form, Method};
use super::calls::CallResult;
use super::error::CheckError;
use crate::ir::{
    self, BarrierOp, BarrierOpKind, BarrierRef, Expr, ExprKind, Parity, Scope, StmtKind,
};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

impl BarrierMethod {
    /// The operations that only a cluster-scope group allows (E0307).
    pub fn cluster_only(self) -> bool {
        matches!(
            self,
            BarrierMethod::ArriveRemote | BarrierMethod::WaitCluster | BarrierMethod::TestCluster
        )
    }
}

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
        let entry = builtins::method(Form::BarrierMethod, m);
        let op = entry.and_then(|e| match e.builtin {
            Builtin::Method(Method::Barrier(op)) => Some(op),
            _ => None,
        });
        if let Some(op) = op {
            self.note_cluster_op_on_poisoned(receiver, op);
        }
        let barrier = self.barrier_ref(receiver);
        let (Some(entry), Some(op)) = (entry, op) else {
            self.quiet_args(args);
            if barrier.is_some() {
                let methods: Vec<&str> = builtins::names(Form::BarrierMethod).collect();
                self.error(CheckError::NotFound {
                    kind: "barrier operation",
                    name: m.into(),
                    span: method.span,
                    similar: super::body::similar(m, methods.iter().copied()),
                    help: Some(format!(
                        "the barrier operations are {}",
                        methods
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                });
            }
            return None;
        };
        self.builtin_use(method.span, entry);
        let arg = self.in_call(entry.call_note(), args, &[], |c| {
            let [arg] = c.bind_args::<1>(&Call::new(entry, args, &[], span))?.args;
            match arg {
                Some(a) => c.expr_as(a, Scalar::U32).map(Some),
                None => Some(None),
            }
        })?;
        // `arrive(count)` is the one form whose target depends on its
        // arguments (language.md §7); the table says what the others need.
        if op == BarrierMethod::Arrive
            && arg.is_some()
            && !self.require_sm90("`arrive(count)`", span)
        {
            return None;
        }
        if !self.needs(entry, span) {
            return None;
        }
        let barrier = barrier?;
        let parity = |a: Option<Expr>| match a {
            Some(e) => Parity::Explicit(e),
            None => Parity::Tracked,
        };
        let kind = match op {
            BarrierMethod::Arrive => BarrierOpKind::Arrive { count: arg },
            BarrierMethod::ArriveExpectTx => BarrierOpKind::ArriveExpectTx { bytes: arg? },
            BarrierMethod::ExpectTx => BarrierOpKind::ExpectTx { bytes: arg? },
            BarrierMethod::ArriveRemote => BarrierOpKind::ArriveRemote { rank: arg? },
            BarrierMethod::Wait => BarrierOpKind::Wait {
                parity: parity(arg),
            },
            BarrierMethod::WaitCluster => BarrierOpKind::WaitCluster {
                parity: parity(arg),
            },
            BarrierMethod::Test | BarrierMethod::TestCluster => {
                let kind = ExprKind::BarrierTest {
                    barrier: Box::new(barrier),
                    parity: Box::new(parity(arg)),
                    acquire: if op == BarrierMethod::Test {
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
    fn note_cluster_op_on_poisoned(&mut self, receiver: &ast::Expr, method: BarrierMethod) {
        if !method.cluster_only() {
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
