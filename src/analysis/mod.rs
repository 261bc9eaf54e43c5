//! Facts about the IR, computed once and read by every later stage, the way
//! naga's validator hands its `ModuleInfo` to the back ends: the barrier
//! pass reports from them (W0320, W0321), the PTX writer chooses from them
//! (the prologue's special registers, `.aligned` barriers, which operands
//! to copy, which `&&`/`||` to evaluate eagerly), and no stage after this
//! one walks the IR to re-derive them.
//!
//! [`analyze`] runs on any module, a partial one (with errors) included,
//! and returns a [`ModuleInfo`]: per function and kernel a [`BodyInfo`]
//! whose tables are indexed by the ids of the body's statements and
//! expressions ([`ir::StmtId`], [`ir::ExprId`]), never by addresses. Facts
//! describe the module they were computed from; a pass that changes the IR
//! computes them again (linear in the module's size).
//!
//! - [`usage`]: what a body uses (special registers in first-use order,
//!   functions called, remote shared memory, bulk copies, tracked
//!   parities, run-time indices), and per expression whether evaluating it
//!   may assign a local or may be done speculatively;
//! - [`uniformity`]: which values differ between the threads of a CTA and
//!   which statements and expressions run in divergent control flow;
//! - [`values`]: what is known of the value of each immutable local (its
//!   constant value, its range, its low bits), per element of the loops
//!   over constant lists around it;
//! - [`warps`]: what the threads of a warp do together (named-barrier
//!   operations in whole warps, the warps that reach each named barrier);
//! - [`warpgroups`]: what the threads of a warpgroup do together
//!   (operations under warpgroup-uniform conditions) and with their
//!   registers (`set_max_regs`: increases and decreases, budgets);
//! - [`wgmma`]: what a kernel's `wgmma` groups may be doing at each point
//!   (where `wgmma.fence` goes, accumulators touched while pending or
//!   read before written);
//! - [`calls`]: the order functions are written in, callees first.

pub mod calls;
pub mod uniformity;
pub mod usage;
pub mod values;
pub mod warpgroups;
pub mod warps;
pub mod wgmma;

use crate::ir::{self, ExprId, FuncId, LocalId, StmtId};
use crate::span::Span;
pub use usage::Usage;

/// The facts about a whole module.
#[derive(Clone, Debug, Default)]
pub struct ModuleInfo {
    /// Indexed by [`FuncId`].
    pub functions: Vec<FunctionInfo>,
    /// In the order of `Module::kernels`.
    pub kernels: Vec<KernelInfo>,
    /// The functions the kernels reach, each after every function it calls
    /// (the call graph of a module without errors has no cycles): the
    /// order the PTX writer emits them in.
    pub call_order: Vec<FuncId>,
}

/// The facts about a device function.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub body: BodyInfo,
    /// Its result may differ between threads even when its arguments agree.
    pub varying_result: bool,
    /// The CTA-wide barrier it runs, itself or through a callee.
    pub sync: Option<CtaSync>,
}

/// What is assumed of a function not analysed yet (a call on a cycle of
/// the call graph, E0114, sees it): nothing good.
impl Default for FunctionInfo {
    fn default() -> FunctionInfo {
        FunctionInfo {
            body: BodyInfo::default(),
            varying_result: true,
            sync: None,
        }
    }
}

/// The facts about a kernel.
#[derive(Clone, Debug, Default)]
pub struct KernelInfo {
    pub body: BodyInfo,
}

/// A CTA-wide barrier: what every thread of the CTA (or cluster) must reach.
pub use crate::ir::CtaBarrier as CtaSync;

/// The facts about one body, by statement and expression id.
#[derive(Clone, Debug, Default)]
pub struct BodyInfo {
    /// What the body uses.
    pub usage: Usage,
    stmts: Vec<Divergence>,
    /// Per expression: [`ExprFacts`] flags.
    expr_flags: Vec<u8>,
    /// Per expression: where it is evaluated (two tables rather than one
    /// of pairs: 5 bytes an expression instead of 8).
    expr_divergence: Vec<Divergence>,
    /// The conditions that make control flow divergent, which
    /// [`Divergence`] refers to by index (a 4-byte fact instead of a span).
    conds: Vec<Span>,
    /// Per local: may differ between threads.
    varying_locals: Vec<bool>,
    /// What its warps do together ([`warps`]): named-barrier operations
    /// and the conditions that may split a warp around them (none in a
    /// function), the partitions of its CTA-wide barriers.
    pub warps: warps::WarpFacts,
    /// What is known of the values of its immutable locals ([`values`]).
    pub values: values::Values,
    /// What its warpgroups do together and with their registers
    /// ([`warpgroups`]; none in a function).
    pub warpgroups: warpgroups::WarpgroupFacts,
    /// What its `wgmma` groups may be doing ([`wgmma`]; none in a
    /// function).
    pub wgmma: wgmma::WgmmaFacts,
}

/// Where only some threads run a node: the index in [`BodyInfo::conds`]
/// of the first condition found that splits them, plus one (0: every
/// thread that reaches the enclosing body runs it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Divergence(u32);

/// The flags of an expression.
struct ExprFacts;

impl ExprFacts {
    /// Its value may differ between the threads of a CTA.
    const VARYING: u8 = 1;
    /// Evaluating it may run statements that assign locals (an `if`
    /// expression with statements in a branch).
    const MAY_ASSIGN: u8 = 2;
    /// It can be evaluated where the source would not evaluate it: no
    /// memory access, call, warp or barrier operation, no branch.
    const SPECULATABLE: u8 = 4;

    /// What is assumed of an expression the analyses did not see: nothing
    /// good (varying, may assign, not speculatable).
    const UNKNOWN: u8 = ExprFacts::VARYING | ExprFacts::MAY_ASSIGN;
}

impl BodyInfo {
    /// Empty tables for `body`, every expression [`ExprFacts::UNKNOWN`]
    /// until the analyses fill them in.
    fn for_body(body: &ir::Body) -> BodyInfo {
        BodyInfo {
            usage: Usage::default(),
            stmts: vec![Divergence(0); body.ids.stmts()],
            expr_flags: vec![ExprFacts::UNKNOWN; body.ids.exprs()],
            expr_divergence: vec![Divergence(0); body.ids.exprs()],
            conds: Vec::new(),
            varying_locals: vec![false; body.locals.len()],
            warps: warps::WarpFacts::default(),
            values: values::Values::default(),
            warpgroups: warpgroups::WarpgroupFacts::default(),
            wgmma: wgmma::WgmmaFacts::default(),
        }
    }

    /// True when the tables are sized for `body`'s ids and locals (facts
    /// computed from this body, not from an earlier version of it).
    pub fn fits(&self, body: &ir::Body) -> bool {
        self.stmts.len() == body.ids.stmts()
            && self.expr_flags.len() == body.ids.exprs()
            && self.expr_divergence.len() == body.ids.exprs()
            && self.varying_locals.len() == body.locals.len()
    }

    fn cond(&self, d: Divergence) -> Option<Span> {
        d.0.checked_sub(1)
            .and_then(|i| self.conds.get(i as usize))
            .copied()
    }

    /// Whether expression `e` has `flag` (unknown expressions: the
    /// pessimistic [`ExprFacts::UNKNOWN`]).
    fn has(&self, e: ExprId, flag: u8) -> bool {
        let flags = self.expr_flags.get(e.index()).copied();
        flags.unwrap_or(ExprFacts::UNKNOWN) & flag != 0
    }

    /// The condition under which only some threads of a CTA run statement
    /// `s` (the first cause found), or `None` when every thread that runs
    /// the body runs it. Unknown statements count as divergent at the
    /// body's start.
    pub fn divergence(&self, s: StmtId) -> Option<Span> {
        match self.stmts.get(s.index()) {
            Some(d) => self.cond(*d),
            None => Some(Span::default()),
        }
    }

    /// [`BodyInfo::divergence`] for an expression: its statement's, or a
    /// condition inside the statement (the left side of `&&`/`||`, an `if`
    /// expression's condition).
    pub fn expr_divergence(&self, e: ExprId) -> Option<Span> {
        match self.expr_divergence.get(e.index()) {
            Some(d) => self.cond(*d),
            None => Some(Span::default()),
        }
    }

    /// May the value of `e` differ between the threads of a CTA?
    pub fn varies(&self, e: ExprId) -> bool {
        self.has(e, ExprFacts::VARYING)
    }

    /// May local `l` hold different values in different threads?
    pub fn local_varies(&self, l: LocalId) -> bool {
        self.varying_locals.get(l.index()).copied().unwrap_or(true)
    }

    /// May evaluating `e` assign a local (run statements)?
    pub fn may_assign(&self, e: ExprId) -> bool {
        self.has(e, ExprFacts::MAY_ASSIGN)
    }

    /// Can `e` be evaluated where the source would not evaluate it?
    pub fn speculatable(&self, e: ExprId) -> bool {
        self.has(e, ExprFacts::SPECULATABLE)
    }
}

/// Computes every fact about `module` (which may be partial).
pub fn analyze(module: &ir::Module) -> ModuleInfo {
    let mut info = ModuleInfo {
        functions: module
            .functions
            .iter()
            .map(|f| FunctionInfo {
                body: usage::of_body(&f.body),
                varying_result: true,
                sync: None,
            })
            .collect(),
        kernels: module
            .kernels
            .iter()
            .map(|k| KernelInfo {
                body: usage::of_body(&k.body),
            })
            .collect(),
        call_order: Vec::new(),
    };
    let order = calls::order(&info);
    // Callees before callers: each function's summary is known where it is
    // called (a call on a cycle, E0114, sees the pessimistic default).
    for id in &order.all {
        let (Some(f), Some(slot)) = (
            module.functions.get(id.index()),
            info.functions.get_mut(id.index()),
        ) else {
            continue;
        };
        // Taken out while its body is analysed; a call of itself (E0114)
        // sees the pessimistic default meanwhile.
        let mut fi = std::mem::take(slot);
        let summary = uniformity::analyze(&f.body, &mut fi.body, &info.functions);
        fi.body.values = values::Values::of_function(&f.body);
        fi.body.warps = warps::of_function(&f.body, &fi.body, &info.functions);
        fi.varying_result = summary.varying_return;
        fi.sync = summary.sync;
        if let Some(slot) = info.functions.get_mut(id.index()) {
            *slot = fi;
        }
    }
    for (k, ki) in module.kernels.iter().zip(&mut info.kernels) {
        uniformity::analyze(&k.body, &mut ki.body, &info.functions);
        ki.body.values = values::Values::of_kernel(k);
        ki.body.warps = warps::of_kernel(k, &ki.body, &info.functions);
        ki.body.warpgroups = warpgroups::of_kernel(k, &ki.body, &info.functions);
        ki.body.wgmma = wgmma::of_kernel(k, &ki.body.values);
    }
    info.call_order = order.reached;
    info
}

#[cfg(test)]
mod tests;
