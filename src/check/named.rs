//! Named barriers: `barrier b[count]: named(threads = k);` declarations
//! (hardware ids handed out in declaration order from 1, E0144, E0145, E0149) and
//! their operations `b.sync()`, `b[i].arrive()`, lowered to
//! [`StmtKind::NamedBarrier`].

use super::args::Call;
use super::body::{Binding, BodyChecker};
use super::builtins::{self, Builtin, Form, Method};
use super::calls::CallResult;
use super::error::CheckError;
use crate::barriers::error::BarrierError;
use crate::ir::{self, NamedBarrier, NamedBarrierId, NamedBarrierOp, StmtKind};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

impl BodyChecker<'_> {
    /// `barrier name[count]: named(threads = k);` (the scope word was
    /// `named`).
    pub fn named_barrier_decl(&mut self, d: &ast::BarrierDecl, span: Span) {
        // What failed is a placeholder (see `ir::Failed`).
        let mut failed = ir::Failed {
            other: !self.at_kernel_top_level("barrier group", span),
            ..ir::Failed::default()
        };
        let count = match &d.count {
            Some(e) => match self.const_size(e, None) {
                Some(n) if (1..=15).contains(&n) => n as u32,
                Some(n) => {
                    self.error(CheckError::NamedCount {
                        name: d.name.name.to_string(),
                        n,
                        span: e.span,
                    });
                    failed.count = true;
                    1
                }
                None => {
                    failed.count = true;
                    1
                }
            },
            None => 1,
        };
        if &*d.arg_name.name != "threads" {
            self.error(CheckError::ExpectedWord {
                expected: "threads",
                found: d.arg_name.name.to_string(),
                span: d.arg_name.span,
            });
            failed.arrivals = true;
        }
        let block = self
            .kernel
            .as_ref()
            .and_then(|k| k.block)
            .and_then(|[x, y, z]| x.checked_mul(y)?.checked_mul(z));
        let threads = match self.const_size(&d.arrivals, None) {
            Some(n)
                if n > 0
                    && n % i128::from(NamedBarrier::WARP) == 0
                    && n <= i128::from(NamedBarrier::MAX_THREADS) =>
            {
                match block {
                    Some(b) if n > i128::from(b) => {
                        self.error(CheckError::NamedThreadsOverBlock {
                            name: d.name.name.to_string(),
                            n,
                            block: b,
                            span: d.arrivals.span,
                        });
                        failed.arrivals = true;
                    }
                    _ => {}
                }
                n as u32
            }
            Some(n) => {
                self.error(CheckError::NamedThreads {
                    name: d.name.name.to_string(),
                    n,
                    span: d.arrivals.span,
                });
                failed.arrivals = true;
                32
            }
            None => {
                failed.arrivals = true;
                32
            }
        };
        // Ids in declaration order, taken by the groups declared without
        // errors; a group past the 15th id is E0149.
        let first_id = self.kernel.as_ref().map_or(1, |k| {
            k.named_barriers
                .iter()
                .rev()
                .find(|g| !g.failed.any())
                .map_or(1, |g| g.first_id.saturating_add(g.count))
        });
        if !failed.any() && first_id.saturating_add(count - 1) > *NamedBarrier::IDS.end() {
            let used: Vec<String> = self
                .kernel
                .as_ref()
                .map(|k| {
                    k.named_barriers
                        .iter()
                        .map(|g| format!("`{}` ({})", g.name, g.count))
                        .collect()
                })
                .unwrap_or_default();
            self.error(CheckError::TooManyNamed {
                needed: first_id - 1 + count,
                span,
                others: used,
            });
            failed.other = true;
        }
        if self.already_defined(&d.name, d.name.span) {
            return;
        }
        if self.kernel.is_none() {
            // Outside a kernel (E0121) there is no group to declare.
            return self.poison(&d.name.name);
        }
        let group = NamedBarrier {
            name: d.name.name.to_string(),
            count,
            threads,
            first_id,
            spans: ir::NamedBarrierSpans {
                decl: span,
                name: d.name.span,
                count: d.count.as_ref().map(|c| c.span),
                threads: d.arrivals.span,
            },
            failed,
        };
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = NamedBarrierId(k.named_barriers.len() as u32);
        k.named_barriers.push(group);
        self.bind(&d.name.name, Binding::Named(id));
    }

    /// The named-barrier group `receiver` names (`b` or `b[i]`), if any.
    pub fn named_receiver(&self, receiver: &ast::Expr) -> Option<NamedBarrierId> {
        let name = match &receiver.kind {
            ast::ExprKind::Name(n) => n,
            ast::ExprKind::Index { base, .. } => match &base.kind {
                ast::ExprKind::Name(n) => n,
                _ => return None,
            },
            _ => return None,
        };
        match self.lookup(&name.name) {
            Some(Binding::Named(id)) => Some(id),
            _ => None,
        }
    }

    /// `b.sync()`, `b[i].arrive()` on named-barrier group `group`.
    pub fn named_method_call(
        &mut self,
        group: NamedBarrierId,
        receiver: &ast::Expr,
        method: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<CallResult> {
        let (name, count, count_failed, decl, def) = {
            let g = self.kernel.as_ref()?.named_barriers.get(group.index())?;
            (
                g.name.clone(),
                g.count,
                g.failed.count,
                g.spans.decl,
                g.spans.name,
            )
        };
        let (name_span, indices) = match &receiver.kind {
            ast::ExprKind::Name(n) => (n.span, None),
            ast::ExprKind::Index { base, indices, .. } => (base.span, Some(indices)),
            _ => return None,
        };
        self.reference(name_span, def);
        let index = match indices.map(|v| v.as_slice()) {
            None => None,
            Some([ast::IndexArg::Expr(i)]) => {
                let idx = self.expr(i, Some(Scalar::U32))?;
                if !idx.ty.is_int() {
                    self.mismatch_text("integer", idx.ty.to_string(), i.span);
                    return None;
                }
                Some(idx)
            }
            Some(_) => {
                self.push_diag(
                    CheckError::NotSingleBarrier {
                        name,
                        shape: "(?,)".into(),
                        span: receiver.span,
                        decl,
                    }
                    .into_diagnostic(),
                );
                return None;
            }
        };
        let entry = builtins::method(Form::NamedMethod, &method.name);
        let Some((entry, Builtin::Method(Method::Named(kind)))) = entry.map(|e| (e, e.builtin))
        else {
            self.quiet_args(args);
            let methods: Vec<&str> = builtins::names(Form::NamedMethod).collect();
            self.error(CheckError::NotFound {
                kind: "named-barrier operation",
                name: method.name.to_string(),
                span: method.span,
                similar: super::body::similar(&method.name, methods.iter().copied()),
                help: Some(format!(
                    "the named-barrier operations are {}",
                    super::error::word_list(&methods)
                )),
            });
            return None;
        };
        self.builtin_use(method.span, entry);
        self.bind_args::<0>(&Call::new(entry, args, &[], span))?;
        // A constant index outside the group is the barrier pass's E0305
        // (it knows immutable locals and the elements of loops over lists).
        if index.is_none() && count > 1 && !count_failed {
            self.push_diag(
                BarrierError::Unindexed {
                    name,
                    count,
                    span: receiver.span,
                    decl,
                }
                .into_diagnostic(),
            );
            return None;
        }
        Some(CallResult::Effect(Box::new(StmtKind::NamedBarrier(
            Box::new(NamedBarrierOp {
                kind,
                group,
                index,
                span: receiver.span,
                method_span: method.span,
            }),
        ))))
    }
}
