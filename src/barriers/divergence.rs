//! W0320: CTA-wide barriers (`sync_threads()`, `cluster_sync()`, or a call
//! of a function that runs one) in control flow that only some threads of
//! the CTA take, read from the uniformity facts ([`crate::analysis`]).
//!
//! Only the CTA-wide barriers are checked: mbarrier operations are meant to
//! run in some threads (one elected thread arrives with `arrive_expect_tx`,
//! one warp produces), and their arrival counts are W0321's business.
//! A device function's body is checked with its parameters taken as
//! uniform; a call of it in divergent flow is reported where it is made.

use super::error::BarrierError;
use crate::analysis::{BodyInfo, FunctionInfo, ModuleInfo, Sync};
use crate::ir::visit::{self, Visit};
use crate::ir::{Body, Expr, ExprKind, FuncId, Module, Stmt, StmtKind};
use crate::span::Span;
use std::collections::BTreeMap;

pub fn check(module: &Module, info: &ModuleInfo, out: &mut Vec<BarrierError>) {
    let bodies = module
        .functions
        .iter()
        .zip(&info.functions)
        .map(|(f, fi)| (&f.body, &fi.body))
        .chain(
            module
                .kernels
                .iter()
                .zip(&info.kernels)
                .map(|(k, ki)| (&k.body, &ki.body)),
        );
    for (body, facts) in bodies {
        check_body(module, body, facts, &info.functions, out);
    }
}

fn check_body(
    module: &Module,
    body: &Body,
    facts: &BodyInfo,
    functions: &[FunctionInfo],
    out: &mut Vec<BarrierError>,
) {
    struct Barriers<'a> {
        module: &'a Module,
        facts: &'a BodyInfo,
        functions: &'a [FunctionInfo],
        /// By the barrier's span, for a deterministic order.
        found: BTreeMap<(u32, u32, u32), BarrierError>,
    }
    impl Barriers<'_> {
        fn warn(&mut self, op: String, via: Option<Sync>, span: Span, cond: Option<Span>) {
            let Some(cond) = cond else { return };
            let key = (span.file.0, span.start, span.end);
            self.found.entry(key).or_insert(BarrierError::Divergent {
                op,
                span,
                cond,
                via: via.map(Sync::name),
            });
        }

        fn call(&mut self, func: FuncId, span: Span, cond: Option<Span>) {
            let sync = self.functions.get(func.index()).and_then(|f| f.sync);
            if let (Some(sync), Some(f)) = (sync, self.module.functions.get(func.index())) {
                self.warn(f.name.clone(), Some(sync), span, cond);
            }
        }
    }
    impl<'ir> Visit<'ir> for Barriers<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            let cond = || self.facts.divergence(s.id);
            match &s.kind {
                StmtKind::SyncThreads => {
                    self.warn(Sync::Threads.name().into(), None, s.span, cond())
                }
                StmtKind::ClusterSync => {
                    self.warn(Sync::Cluster.name().into(), None, s.span, cond())
                }
                StmtKind::Call { func, .. } => self.call(*func, s.span, cond()),
                _ => {}
            }
            visit::walk_stmt(self, s);
        }

        fn visit_expr(&mut self, e: &'ir Expr) {
            if let ExprKind::Call { func, .. } = &e.kind {
                let cond = self.facts.expr_divergence(e.id);
                self.call(*func, e.span, cond);
            }
            visit::walk_expr(self, e);
        }
    }
    let mut b = Barriers {
        module,
        facts,
        functions,
        found: BTreeMap::new(),
    };
    b.visit_block(&body.block);
    out.extend(b.found.into_values());
}
