//! The loops whose `#[unroll]`/`#[unroll(N)]` hint the passes cannot
//! honour (W0330), found on the checked IR with the same tests the passes
//! make (`unroll::plan`, `stream::hint_plan`), so that `kdslc check`, the
//! language server and a build all report them, whatever `--passes` says.

use super::ranges::Facts;
use super::{stream, unroll};
use crate::diagnostics::Diagnostic;
use crate::ir::visit::{self, Visit};
use crate::ir::{Body, LoopHint, Module, Stmt, StmtKind, Unroll};
use crate::span::Span;

/// A loop whose hint cannot be honoured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhonoured {
    /// The hint.
    pub span: Span,
    pub hint: Unroll,
    /// Why, as a clause: "its body has a loop".
    pub why: &'static str,
}

/// Every loop of `module` whose hint cannot be honoured, in source order
/// within each body.
pub fn unhonoured(module: &Module) -> Vec<Unhonoured> {
    let mut out = Vec::new();
    for k in &module.kernels {
        find(&k.body, &Facts::of_kernel(k), &mut out);
    }
    for f in &module.functions {
        find(&f.body, &Facts::of_function(&f.body), &mut out);
    }
    // A hinted loop inside a loop over a constant list is in the IR once
    // per element, from one place in the source: one warning.
    let mut seen = std::collections::HashSet::new();
    out.retain(|u| seen.insert((u.span, u.why)));
    out
}

fn find(body: &Body, facts: &Facts, out: &mut Vec<Unhonoured>) {
    struct Find<'a> {
        body: &'a Body,
        facts: &'a Facts,
        out: &'a mut Vec<Unhonoured>,
    }
    impl<'ir> Visit<'ir> for Find<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if let StmtKind::For {
                var,
                start,
                end,
                step,
                body: lb,
                unroll: Some(LoopHint { unroll: hint, span }),
            } = &s.kind
            {
                let full = unroll::plan(self.facts, [start, end, step], lb, Some(*hint));
                let why = match (*hint, full) {
                    (_, Ok(_)) | (Unroll::By(1), _) => None,
                    (Unroll::Full, Err(why)) => Some(why),
                    (Unroll::By(n), Err(_)) => stream::hint_plan(self.body, *var, lb, n).err(),
                };
                if let Some(why) = why {
                    self.out.push(Unhonoured {
                        span: *span,
                        hint: *hint,
                        why,
                    });
                }
            }
            visit::walk_stmt(self, s);
        }
    }
    Find { body, facts, out }.visit_block(&body.block);
}

impl Unhonoured {
    /// W0330, on the loop.
    pub fn to_diagnostic(&self) -> Diagnostic {
        let hint = match self.hint {
            Unroll::Full => "#[unroll]".to_string(),
            Unroll::By(n) => format!("#[unroll({n})]"),
        };
        Diagnostic::warning("W0330", format!("`{hint}` cannot be honoured: {}", self.why))
            .primary(self.span, "the loop after this hint stays a loop")
            .note("the hint asks the optimiser to unroll the loop (`kdslc --passes`); it does only what keeps the loop's meaning, and leaves this one as written")
            .help("remove the hint, or `#[unroll(1)]` to keep the loop on purpose")
    }
}
