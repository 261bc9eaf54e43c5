//! The loops whose `#[unroll]`/`#[unroll(N)]` hint the passes cannot
//! honour (W0330), found on the checked IR with the same tests the passes
//! make (`unroll::plan`, `stream::hint_plan`), so that `kdslc check`, the
//! language server and a build all report them, whatever `--passes` says.

use super::{stream, unroll};
use crate::analysis::values::{walk_runs, At, RunVisit, Values};
use crate::analysis::ModuleInfo;
use crate::diagnostics::Diagnostic;
use crate::ir::{Body, LoopHint, Module, Stmt, StmtKind, Unroll};
use crate::span::Span;
use std::collections::HashSet;

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
/// within each body, with the facts `info` has of it. A loop in the body of
/// a loop over a constant list is judged in each run (its trip count may
/// be the element), and reported once, for the first run that fails.
pub fn unhonoured(module: &Module, info: &ModuleInfo) -> Vec<Unhonoured> {
    let mut out = Vec::new();
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        find(&k.body, &ki.body.values, &mut out);
    }
    for (f, fi) in module.functions.iter().zip(&info.functions) {
        find(&f.body, &fi.body.values, &mut out);
    }
    out
}

/// [`unhonoured`] in one kernel.
pub fn unhonoured_kernel(
    k: &crate::ir::Kernel,
    ki: &crate::analysis::KernelInfo,
) -> Vec<Unhonoured> {
    let mut out = Vec::new();
    find(&k.body, &ki.body.values, &mut out);
    out
}

fn find(body: &Body, values: &Values, out: &mut Vec<Unhonoured>) {
    struct Find<'a> {
        body: &'a Body,
        values: &'a Values,
        reported: HashSet<crate::ir::StmtId>,
        out: &'a mut Vec<Unhonoured>,
    }
    impl<'ir> RunVisit<'ir> for Find<'_> {
        fn stmt(&mut self, s: &'ir Stmt, at: At) {
            let StmtKind::For {
                var,
                start,
                end,
                step,
                body: lb,
                unroll: Some(LoopHint { unroll: hint, span }),
            } = &s.kind
            else {
                return;
            };
            if self.reported.contains(&s.id) {
                return;
            }
            let full = unroll::plan(self.values, at, [start, end, step], lb, Some(*hint));
            let why = match (*hint, full) {
                (_, Ok(_)) | (Unroll::By(1), _) => None,
                (Unroll::Full, Err(why)) => Some(why),
                (Unroll::By(n), Err(_)) => stream::hint_plan(self.body, *var, lb, n).err(),
            };
            if let Some(why) = why {
                self.reported.insert(s.id);
                self.out.push(Unhonoured {
                    span: *span,
                    hint: *hint,
                    why,
                });
            }
        }
    }
    walk_runs(
        body,
        values,
        &mut Find {
            body,
            values,
            reported: HashSet::new(),
            out,
        },
    );
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
