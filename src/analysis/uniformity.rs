//! Uniformity analysis: which values differ between the threads of a CTA,
//! and which statements and expressions only some of its threads run. The
//! barrier pass warns from these facts about CTA-wide barriers in divergent
//! control flow (W0320) and counts arrivals only where every thread arrives
//! (W0321); the PTX writer emits `.aligned` cluster barriers only where
//! every thread of a warp runs them.
//!
//! Modelled on naga's `valid/analyzer.rs`, with two values: a value is
//! *uniform* when every thread of a CTA computes the same one, and *varying*
//! otherwise. Varying are the thread-dependent built-ins (`thread_idx`,
//! `lane_id`, `warp_id`), the results of atomics, warp shuffles and votes
//! (votes agree within a warp only, not across the CTA), barrier tests (they
//! depend on timing), loads at a varying address, calls of functions whose
//! result varies, and anything computed from a varying value. `block_idx`,
//! parameters, constants and the cluster built-ins are uniform.
//!
//! Control flow is *divergent* below a varying condition (an `if`, a loop's
//! condition or range, the right operand of `&&`/`||`), after a `return` that
//! only some threads took (the rest never reach what follows), and in a loop
//! some of whose threads `break` or `continue` early. A local assigned a
//! varying value, or assigned at all in divergent control flow, is varying
//! everywhere; since that can make an earlier condition varying (a loop's),
//! the walk repeats until no local changes (each round marks at least one
//! more local, so it ends).
//!
//! A statement's or expression's divergence is the first condition found
//! that splits the threads (divergence only grows from round to round, so
//! a cause found early stays true and is the most direct one). Divergence
//! across the CTAs of a cluster (a condition on `cluster_rank`) is not
//! tracked: such a condition is uniform within each CTA.
//!
//! A device function is analysed with its parameters taken as uniform; its
//! summary ([`Summary`]) tells callers whether its result varies and which
//! CTA-wide barrier it runs.

use super::usage::SyncCall;
use super::{BodyInfo, CtaSync, Divergence, ExprFacts, FunctionInfo};
use crate::ir::{
    BarrierOpKind, BinOp, Block, Body, Expr, ExprId, ExprKind, LocalId, Parity, Place, PlaceKind,
    Special, Stmt, StmtId, StmtKind,
};
use crate::span::Span;
use std::collections::HashMap;

/// What a caller needs to know about a device function.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    /// Some `return` gives a varying value, or returns in divergent flow.
    pub varying_return: bool,
    /// The CTA-wide barrier it runs, itself or through a callee.
    pub sync: Option<CtaSync>,
}

/// Finds the uniformity facts of `body` into `info` (whose usage and flags
/// [`super::usage`] found), given what is known of the functions it calls.
pub fn analyze(body: &Body, info: &mut BodyInfo, callees: &[FunctionInfo]) -> Summary {
    let sync = find_sync(info, callees);
    let mut a = Analyzer {
        info,
        callees,
        cond_ids: HashMap::new(),
        changed: false,
        varying_return: false,
        pending: Flow::default(),
        convergent: Vec::new(),
    };
    // Each round but the last marks at least one more local.
    for _ in 0..=body.locals.len() {
        a.changed = false;
        a.varying_return = false;
        a.pending = Flow::default();
        a.convergent.clear();
        let _ = a.block(&body.block, None);
        if !a.changed {
            break;
        }
    }
    Summary {
        varying_return: a.varying_return,
        sync,
    }
}

/// The CTA-wide barrier a body runs, directly or through a call: the first
/// in source order.
fn find_sync(info: &BodyInfo, callees: &[FunctionInfo]) -> Option<CtaSync> {
    info.usage
        .sync_sites
        .iter()
        .find_map(|site| match site.what {
            SyncCall::Barrier(s) => Some(s),
            SyncCall::Call(f) => callees.get(f.index()).and_then(|c| c.sync),
        })
}

fn thread_dependent(s: Special) -> bool {
    matches!(
        s,
        Special::ThreadIdx(_) | Special::LaneId | Special::WarpId | Special::LaneMask(_)
    )
}

/// How control left a statement early in only some threads: the condition
/// that split them, for a `return` and for a `break`/`continue`.
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    ret: Option<Span>,
    brk: Option<Span>,
}

impl Flow {
    fn merge(&mut self, other: Flow) {
        self.ret = self.ret.or(other.ret);
        self.brk = self.brk.or(other.brk);
    }

    fn any(self) -> Option<Span> {
        self.ret.or(self.brk)
    }
}

struct Analyzer<'i, 'c> {
    info: &'i mut BodyInfo,
    callees: &'c [FunctionInfo],
    /// Each condition's index in `info.conds`.
    cond_ids: HashMap<Span, u32>,
    /// A local became varying in this round.
    changed: bool,
    /// Some `return` gives a varying value, or returns in divergent flow.
    varying_return: bool,
    /// Early exits found inside expressions (`if` expressions' blocks),
    /// handed to the statement that holds them.
    pending: Flow,
    /// What was walked in convergent flow inside the loops being walked:
    /// when a loop turns out to have an early exit that only some threads
    /// take, its whole body is divergent, and the part of this log from the
    /// loop's start is made so ([`Analyzer::diverge`]) instead of walking
    /// the body again (which, for nested loops, would walk the innermost
    /// once per enclosing loop).
    convergent: Vec<Site>,
}

/// Something walked in convergent flow whose meaning changes when the flow
/// turns out to be divergent.
#[derive(Clone, Copy, Debug)]
enum Site {
    Stmt(StmtId),
    Expr(ExprId),
    /// An assignment to a local.
    Assign(LocalId),
    Return,
}

impl Analyzer<'_, '_> {
    fn mark(&mut self, l: LocalId, varying: bool) {
        if let Some(v) = self.info.varying_locals.get_mut(l.index()) {
            if varying && !*v {
                *v = true;
                self.changed = true;
            }
        }
    }

    /// The index (plus one) of condition `c` in the body's table.
    fn divergence(&mut self, c: Span) -> Divergence {
        let conds = &mut self.info.conds;
        let i = *self.cond_ids.entry(c).or_insert_with(|| {
            conds.push(c);
            conds.len() as u32 - 1
        });
        Divergence(i.saturating_add(1))
    }

    /// Statement `id` runs under `cond`, unless an earlier cause was found.
    fn diverge_stmt(&mut self, id: StmtId, cond: Span) {
        if self.info.stmts.get(id.index()) == Some(&Divergence(0)) {
            let d = self.divergence(cond);
            if let Some(slot) = self.info.stmts.get_mut(id.index()) {
                *slot = d;
            }
        }
    }

    /// Expression `id` runs under `cond`, unless an earlier cause was found.
    fn diverge_expr(&mut self, id: ExprId, cond: Span) {
        if self.info.expr_divergence.get(id.index()) == Some(&Divergence(0)) {
            let d = self.divergence(cond);
            if let Some(slot) = self.info.expr_divergence.get_mut(id.index()) {
                *slot = d;
            }
        }
    }

    fn local(&self, l: LocalId) -> bool {
        self.info.local_varies(l)
    }

    fn block(&mut self, b: &Block, mut div: Option<Span>) -> Flow {
        let mut flow = Flow::default();
        for s in &b.stmts {
            let f = self.stmt(s, div);
            // Threads that left early do not run the rest of the block.
            div = div.or(f.any());
            flow.merge(f);
        }
        flow
    }

    /// A loop body; `own` is the loop's condition when it varies. Returns the
    /// divergent `return` it contains, if any (breaks end at the loop).
    fn loop_body(&mut self, body: &Block, div: Option<Span>, own: Option<Span>) -> Option<Span> {
        let inner = div.or(own);
        let from = self.convergent.len();
        let f = self.block(body, inner);
        match (inner, f.any()) {
            // Some threads left early: later iterations run in the others
            // only, so the whole body is divergent.
            (None, Some(c)) => {
                let returns = self.diverge(from, c);
                f.ret.or(returns.then_some(c))
            }
            _ => f.ret,
        }
    }

    /// Makes what was walked in convergent flow since `from` divergent under
    /// `cond`, as walking it again with `cond` would. True when that holds a
    /// `return`.
    fn diverge(&mut self, from: usize, cond: Span) -> bool {
        let mut returns = false;
        let sites: Vec<Site> = self
            .convergent
            .drain(from.min(self.convergent.len())..)
            .collect();
        for site in sites {
            match site {
                Site::Stmt(id) => self.diverge_stmt(id, cond),
                Site::Expr(id) => self.diverge_expr(id, cond),
                Site::Assign(l) => self.mark(l, true),
                Site::Return => {
                    self.varying_return = true;
                    returns = true;
                }
            }
        }
        returns
    }

    /// Records `site` when the flow is convergent (`div` is `None`), for
    /// [`Analyzer::diverge`].
    fn convergent_site(&mut self, div: Option<Span>, site: Site) {
        if div.is_none() {
            self.convergent.push(site);
        }
    }

    fn stmt(&mut self, s: &Stmt, div: Option<Span>) -> Flow {
        match div {
            Some(c) => self.diverge_stmt(s.id, c),
            None => self.convergent.push(Site::Stmt(s.id)),
        }
        let mut flow = Flow::default();
        match &s.kind {
            StmtKind::Let { local, value } => {
                let v = self.effects(value, div);
                self.mark(*local, v);
            }
            StmtKind::Assign { local, value } => {
                let v = self.effects(value, div);
                self.mark(*local, v || div.is_some());
                self.convergent_site(div, Site::Assign(*local));
            }
            // A register array is one local to this analysis: an element
            // written with a varying value, or in divergent flow, makes
            // every element varying.
            StmtKind::LetArray { local, values } => {
                let v = self.all_effects(values, div);
                self.mark(*local, v);
            }
            StmtKind::Store { place, value, .. } => {
                let at = self.place(place, div);
                let v = self.effects(value, div);
                if let PlaceKind::Register { array, .. } = place.kind {
                    self.mark(array, at || v || div.is_some());
                    self.convergent_site(div, Site::Assign(array));
                }
            }
            // Like `let`s of loads of the place (whose values vary with it).
            // A matrix load gives each lane other lanes' rows: it varies.
            StmtKind::LoadVector {
                locals,
                place,
                matrix,
            } => {
                let v = self.place(place, div) || matrix.is_some();
                for l in locals {
                    self.mark(*l, v);
                }
            }
            StmtKind::StoreVector { place, values, .. } => {
                self.place(place, div);
                self.all_effects(values, div);
            }
            StmtKind::Expr(e) | StmtKind::SyncWarp(e) => {
                self.effects(e, div);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let varies = self.effects(cond, div);
                let inner = div.or(varies.then_some(cond.span));
                flow.merge(self.block(then_block, inner));
                if let Some(b) = else_block {
                    flow.merge(self.block(b, inner));
                }
            }
            StmtKind::While { cond, body } => {
                let own = self.effects(cond, div).then_some(cond.span);
                flow.ret = self.loop_body(body, div, own);
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                let [vs, ve, vt] = [start, end, step].map(|e| self.effects(e, div));
                let var_varies = vs || vt;
                self.mark(*var, var_varies);
                let own = (var_varies || ve).then_some(start.span.to(end.span));
                flow.ret = self.loop_body(body, div, own);
            }
            // The element is a constant: the same in every thread. With
            // more than one element, threads that leave early in one run
            // (a `return`) miss the later runs, as in any loop.
            StmtKind::ForList { items, body, .. } => {
                self.all_effects(items, div);
                if items.len() > 1 {
                    flow.ret = self.loop_body(body, div, None);
                } else {
                    flow.merge(self.block(body, div));
                }
            }
            StmtKind::Break | StmtKind::Continue => flow.brk = div,
            StmtKind::Return(value) => {
                if let Some(e) = value {
                    self.varying_return |= self.effects(e, div);
                }
                self.varying_return |= div.is_some();
                self.convergent_site(div, Site::Return);
                flow.ret = div;
            }
            StmtKind::Call { args, .. } => {
                for a in args {
                    self.effects(a, div);
                }
            }
            StmtKind::Barrier(op) => {
                if let Some(i) = &op.barrier.index {
                    self.effects(i, div);
                }
                match &op.kind {
                    BarrierOpKind::Arrive { count: None } => {}
                    BarrierOpKind::Arrive { count: Some(e) }
                    | BarrierOpKind::ArriveExpectTx { bytes: e }
                    | BarrierOpKind::ExpectTx { bytes: e }
                    | BarrierOpKind::ArriveRemote { rank: e }
                    | BarrierOpKind::Wait {
                        parity: Parity::Explicit(e),
                    }
                    | BarrierOpKind::WaitCluster {
                        parity: Parity::Explicit(e),
                    } => {
                        self.effects(e, div);
                    }
                    BarrierOpKind::Wait {
                        parity: Parity::Tracked,
                    }
                    | BarrierOpKind::WaitCluster {
                        parity: Parity::Tracked,
                    } => {}
                }
            }
            StmtKind::CopyAsync {
                dst,
                src,
                bytes,
                barrier,
            } => {
                self.place(dst, div);
                self.place(src, div);
                self.effects(bytes, div);
                if let Some(i) = &barrier.index {
                    self.effects(i, div);
                }
            }
            StmtKind::CopyAsyncStore { dst, src, bytes } => {
                self.place(dst, div);
                self.place(src, div);
                self.effects(bytes, div);
            }
            StmtKind::TensorCopy(c) => {
                self.all_effects(&c.smem.indices, div);
                self.all_effects(&c.coords, div);
                if let crate::ir::TensorCopyKind::Load { barrier, mask } = &c.kind {
                    if let Some(i) = &barrier.index {
                        self.effects(i, div);
                    }
                    if let Some(m) = mask {
                        self.effects(m, div);
                    }
                }
            }
            StmtKind::NamedBarrier(op) => {
                if let Some(i) = &op.index {
                    self.effects(i, div);
                }
            }
            StmtKind::Wgmma(w) => {
                self.place(&w.a, div);
                self.place(&w.b, div);
                self.effects(&w.accumulate, div);
            }
            StmtKind::Fragment(f) => {
                if let Some(k) = &f.factor {
                    self.effects(k, div);
                }
            }
            StmtKind::SyncThreads
            | StmtKind::ClusterSync
            | StmtKind::FenceProxyAsync
            | StmtKind::Fence(_)
            | StmtKind::CopyAsyncCommit
            | StmtKind::CopyAsyncWait(_)
            | StmtKind::WgmmaCommit
            | StmtKind::WgmmaWait(_)
            | StmtKind::SetMaxRegs(_) => {}
            // The condition that failed to check is unknown: its blocks are
            // taken as running in the enclosing control flow, which can
            // only miss a warning, never invent one.
            StmtKind::Poisoned { blocks, .. } => {
                for b in blocks {
                    flow.merge(self.block(b, div));
                }
            }
        }
        flow.merge(std::mem::take(&mut self.pending));
        flow
    }

    /// [`Analyzer::effects`] of the expressions that locate a place; true
    /// when any varies.
    fn place(&mut self, p: &Place, div: Option<Span>) -> bool {
        match &p.kind {
            PlaceKind::Global { index, .. } => self.effects(index, div),
            PlaceKind::Shared { indices, .. } => self.all_effects(indices, div),
            PlaceKind::Remote { rank, indices, .. } => {
                let r = self.effects(rank, div);
                self.all_effects(indices, div) || r
            }
            PlaceKind::SharedAt { addr, .. } => self.effects(addr, div),
            // Each thread holds its own fragment.
            PlaceKind::Accum { index, .. } => {
                self.effects(index, div);
                true
            }
            PlaceKind::Register { array, indices } => {
                let i = self.all_effects(indices, div);
                i || self.local(*array)
            }
        }
    }

    /// Walks an expression for what it does (the blocks of `if`
    /// expressions) and records what it is worth: whether it may differ
    /// between threads, and where only some threads evaluate it.
    fn effects(&mut self, e: &Expr, div: Option<Span>) -> bool {
        match div {
            Some(c) => self.diverge_expr(e.id, c),
            None => self.convergent.push(Site::Expr(e.id)),
        }
        let varies = self.value(e, div);
        if let Some(f) = self.info.expr_flags.get_mut(e.id.index()) {
            // Computed again each round, from the locals known to vary; the
            // last round's is final.
            *f = (*f & !ExprFacts::VARYING) | if varies { ExprFacts::VARYING } else { 0 };
        }
        varies
    }

    /// The children's effects, and whether `e` may differ between threads.
    fn value(&mut self, e: &Expr, div: Option<Span>) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Param(_) => false,
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Special(s) => thread_dependent(*s),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.effects(a, div),
            ExprKind::Binary(op, a, b) => {
                let va = self.effects(a, div);
                let rhs = match op {
                    BinOp::And | BinOp::Or => div.or(va.then_some(a.span)),
                    _ => div,
                };
                let vb = self.effects(b, rhs);
                va || vb
            }
            ExprKind::Select(c, a, b) => {
                let v = [c, a, b].map(|x| self.effects(x, div));
                v.contains(&true)
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                let vc = self.effects(cond, div);
                let inner = div.or(vc.then_some(cond.span));
                let mut varies = vc;
                for (b, v) in [(then_block, then_value), (else_block, else_value)] {
                    let f = self.block(b, inner);
                    varies |= self.effects(v, inner.or(f.any()));
                    self.pending.merge(f);
                }
                varies
            }
            ExprKind::Load(p) | ExprKind::AddrOf(p) => self.place(p, div),
            ExprKind::Call { func, args } => {
                let args_vary = self.all_effects(args, div);
                args_vary
                    || self
                        .callees
                        .get(func.index())
                        .is_none_or(|c| c.varying_result)
            }
            ExprKind::Math(_, args) => self.all_effects(args, div),
            ExprKind::Warp(_, args) => {
                self.all_effects(args, div);
                true
            }
            ExprKind::Atomic { place, args, .. } => {
                self.place(place, div);
                self.all_effects(args, div);
                true
            }
            ExprKind::BarrierTest {
                barrier, parity, ..
            } => {
                if let Some(i) = &barrier.index {
                    self.effects(i, div);
                }
                if let Parity::Explicit(p) = parity.as_ref() {
                    self.effects(p, div);
                }
                true
            }
        }
    }

    /// [`Analyzer::effects`] of each expression; true when any varies.
    fn all_effects(&mut self, es: &[Expr], div: Option<Span>) -> bool {
        let mut varies = false;
        for e in es {
            varies |= self.effects(e, div);
        }
        varies
    }
}
