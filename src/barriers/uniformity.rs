//! Uniformity analysis and W0320: CTA-wide barriers (`sync_threads()`,
//! `cluster_sync()`) in control flow that only some threads of the CTA take.
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
//! Only the CTA-wide barriers are checked: mbarrier operations are meant to
//! run in some threads (one elected thread arrives with `arrive_expect_tx`,
//! one warp produces), and their arrival counts are W0321's business.
//! Divergence across the CTAs of a cluster (a condition on `cluster_rank`
//! guarding `cluster_sync()`) is not tracked.

use super::error::BarrierError;
use super::walk::{self, stmt_key, Cx, Visitor};
use crate::ir::{
    BinOp, Block, Body, Expr, ExprKind, FuncId, LocalId, Module, Special, Stmt, StmtKind,
};
use crate::span::Span;
use std::collections::{BTreeMap, HashMap};

/// What a caller needs to know about a device function.
#[derive(Clone, Debug)]
pub struct Callee {
    pub name: String,
    /// The result may differ between threads even when the arguments agree.
    pub varying_result: bool,
    /// The CTA-wide barrier it runs (itself or through a callee), if any.
    pub sync: Option<&'static str>,
}

impl Callee {
    /// What is assumed of a function not summarised (yet): nothing good.
    fn unknown() -> Callee {
        Callee {
            name: String::new(),
            varying_result: true,
            sync: None,
        }
    }
}

/// Summarises every device function, callees first, and reports W0320 in
/// their bodies (parameters taken as uniform; calls in divergent control flow
/// are reported where the kernel makes them).
pub fn callees(module: &Module, out: &mut Vec<BarrierError>) -> Vec<Callee> {
    // Not summarised yet: assumed unknown (a call in a cycle of the call
    // graph, already E0114, sees that).
    let mut known: Vec<Callee> = vec![Callee::unknown(); module.functions.len()];
    let mut done = vec![false; module.functions.len()];
    let rest = (0..module.functions.len() as u32).map(FuncId);
    for id in module.function_order.iter().copied().chain(rest) {
        let Some(f) = module.functions.get(id.index()) else {
            continue;
        };
        match done.get_mut(id.index()) {
            Some(d) if !*d => *d = true,
            _ => continue,
        }
        let sync = find_sync(&f.body, &known);
        let a = analyze(&f.body, &known);
        let varying_result = a.varying_return;
        out.extend(a.warnings.into_values());
        if let Some(slot) = known.get_mut(id.index()) {
            *slot = Callee {
                name: f.name.clone(),
                varying_result,
                sync,
            };
        }
    }
    known
}

/// The CTA-wide barrier a body runs, directly or through a call.
fn find_sync(body: &Body, callees: &[Callee]) -> Option<&'static str> {
    struct Find<'c> {
        callees: &'c [Callee],
        found: Option<&'static str>,
    }
    impl<'a> Visitor<'a> for Find<'_> {
        fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
            let found = match &s.kind {
                StmtKind::SyncThreads => Some("sync_threads"),
                StmtKind::ClusterSync => Some("cluster_sync"),
                StmtKind::Call { func, .. } => self.callees.get(func.index()).and_then(|c| c.sync),
                _ => None,
            };
            self.found = self.found.or(found);
        }
        fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
            if let ExprKind::Call { func, .. } = &e.kind {
                self.found = self
                    .found
                    .or(self.callees.get(func.index()).and_then(|c| c.sync));
            }
        }
    }
    let mut f = Find {
        callees,
        found: None,
    };
    walk::body(body, &mut f);
    f.found
}

/// Analyses a kernel body: its W0320 warnings go to `out`; the facts are
/// returned for the other checks.
pub fn kernel<'c>(
    body: &Body,
    callees: &'c [Callee],
    out: &mut Vec<BarrierError>,
) -> Uniformity<'c> {
    let a = analyze(body, callees);
    out.extend(a.warnings.into_values());
    a.facts
}

/// Which locals vary and which statements run in divergent control flow.
pub struct Uniformity<'c> {
    callees: &'c [Callee],
    varying: Vec<bool>,
    /// Statement (by [`stmt_key`]) → the condition that makes it divergent.
    divergent: HashMap<usize, Span>,
}

impl Uniformity<'_> {
    /// The condition under which only some threads run `s`, if any.
    pub fn divergence(&self, s: &Stmt) -> Option<Span> {
        self.divergent.get(&stmt_key(s)).copied()
    }

    fn local(&self, l: LocalId) -> bool {
        self.varying.get(l.index()).copied().unwrap_or(true)
    }

    /// May `e` have different values in different threads of a CTA?
    pub fn varies(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Param(_) => false,
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Special(s) => thread_dependent(*s),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.varies(a),
            ExprKind::Binary(_, a, b) => self.varies(a) || self.varies(b),
            ExprKind::Select(c, a, b) => self.varies(c) || self.varies(a) || self.varies(b),
            // The branches' statements show up in the locals they assign.
            ExprKind::If {
                cond,
                then_value,
                else_value,
                ..
            } => self.varies(cond) || self.varies(then_value) || self.varies(else_value),
            ExprKind::Load(p) => walk::place_exprs(p).into_iter().any(|i| self.varies(i)),
            ExprKind::Call { func, args } => {
                self.callees
                    .get(func.index())
                    .is_none_or(|c| c.varying_result)
                    || args.iter().any(|a| self.varies(a))
            }
            ExprKind::Math(_, args) => args.iter().any(|a| self.varies(a)),
            ExprKind::Atomic { .. } | ExprKind::Warp(..) | ExprKind::BarrierTest { .. } => true,
        }
    }
}

fn thread_dependent(s: Special) -> bool {
    matches!(s, Special::ThreadIdx(_) | Special::LaneId | Special::WarpId)
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

struct Analyzer<'c> {
    facts: Uniformity<'c>,
    /// A local became varying in this round.
    changed: bool,
    /// Keyed by the barrier's span, so that a cause found first is kept.
    warnings: BTreeMap<(u32, u32, u32), BarrierError>,
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
#[derive(Clone, Debug)]
enum Site {
    Stmt(usize),
    /// An assignment to a local.
    Assign(LocalId),
    Return,
    /// A CTA-wide barrier, directly or through a call.
    Barrier {
        op: String,
        via: Option<&'static str>,
        span: Span,
    },
}

fn analyze<'c>(body: &Body, callees: &'c [Callee]) -> Analyzer<'c> {
    let mut a = Analyzer {
        facts: Uniformity {
            callees,
            varying: vec![false; body.locals.len()],
            divergent: HashMap::new(),
        },
        changed: false,
        warnings: BTreeMap::new(),
        varying_return: false,
        pending: Flow::default(),
        convergent: Vec::new(),
    };
    // Each round but the last marks at least one more local.
    for _ in 0..=body.locals.len() {
        a.changed = false;
        a.facts.divergent.clear();
        // Divergence only grows from round to round, so a warning found
        // early stays true; keeping it keeps its first (most direct) cause.
        a.varying_return = false;
        a.pending = Flow::default();
        a.convergent.clear();
        let _ = a.block(&body.block, None);
        if !a.changed {
            break;
        }
    }
    a
}

impl Analyzer<'_> {
    fn mark(&mut self, l: LocalId, varying: bool) {
        if let Some(v) = self.facts.varying.get_mut(l.index()) {
            if varying && !*v {
                *v = true;
                self.changed = true;
            }
        }
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
                Site::Stmt(key) => {
                    self.facts.divergent.insert(key, cond);
                }
                Site::Assign(l) => self.mark(l, true),
                Site::Return => {
                    self.varying_return = true;
                    returns = true;
                }
                Site::Barrier { op, via, span } => self.warn(op, via, span, cond),
            }
        }
        returns
    }

    /// Records `site` when the flow is convergent (`div` is `None`), for
    /// [`Analyzer::diverge`].
    fn convergent_site(&mut self, div: Option<Span>, site: impl FnOnce() -> Site) {
        if div.is_none() {
            self.convergent.push(site());
        }
    }

    fn stmt(&mut self, s: &Stmt, div: Option<Span>) -> Flow {
        match div {
            Some(c) => {
                self.facts.divergent.insert(stmt_key(s), c);
            }
            None => self.convergent.push(Site::Stmt(stmt_key(s))),
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
                self.convergent_site(div, || Site::Assign(*local));
            }
            StmtKind::Store { place, value, .. } => {
                for e in walk::place_exprs(place) {
                    self.effects(e, div);
                }
                self.effects(value, div);
            }
            StmtKind::Expr(e) => {
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
            } => {
                let [vs, ve, vt] = [start, end, step].map(|e| self.effects(e, div));
                let var_varies = vs || vt;
                self.mark(*var, var_varies);
                let own = (var_varies || ve).then_some(start.span.to(end.span));
                flow.ret = self.loop_body(body, div, own);
            }
            StmtKind::Break | StmtKind::Continue => flow.brk = div,
            StmtKind::Return(value) => {
                if let Some(e) = value {
                    self.varying_return |= self.effects(e, div);
                }
                self.varying_return |= div.is_some();
                self.convergent_site(div, || Site::Return);
                flow.ret = div;
            }
            StmtKind::Call { func, args } => {
                for a in args {
                    self.effects(a, div);
                }
                self.call(*func, s.span, div);
            }
            StmtKind::SyncThreads => self.barrier("sync_threads", None, s.span, div),
            StmtKind::ClusterSync => self.barrier("cluster_sync", None, s.span, div),
            StmtKind::Barrier(op) => {
                let operand = walk::op_operand(&op.kind);
                for e in op.barrier.index.as_deref().into_iter().chain(operand) {
                    self.effects(e, div);
                }
            }
            StmtKind::CopyAsync {
                dst,
                src,
                bytes,
                barrier,
            } => {
                let places = walk::place_exprs(dst)
                    .into_iter()
                    .chain(walk::place_exprs(src));
                for e in places.chain([bytes]).chain(barrier.index.as_deref()) {
                    self.effects(e, div);
                }
            }
            StmtKind::CopyAsyncStore { dst, src, bytes } => {
                let places = walk::place_exprs(dst)
                    .into_iter()
                    .chain(walk::place_exprs(src));
                for e in places.chain([bytes]) {
                    self.effects(e, div);
                }
            }
            StmtKind::FenceProxyAsync | StmtKind::CopyAsyncCommit | StmtKind::CopyAsyncWait(_) => {}
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

    /// Walks an expression for what it does (the blocks of `if`
    /// expressions, calls of functions that synchronise) and returns what it
    /// is worth: whether it may differ between threads, as
    /// [`Uniformity::varies`] says, in the same single walk.
    fn effects(&mut self, e: &Expr, div: Option<Span>) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Param(_) => false,
            ExprKind::Local(l) => self.facts.local(*l),
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
            ExprKind::Load(p) => self.all_effects(walk::place_exprs(p), div),
            ExprKind::Call { func, args } => {
                let args_vary = self.all_effects(args.iter(), div);
                self.call(*func, e.span, div);
                args_vary
                    || self
                        .facts
                        .callees
                        .get(func.index())
                        .is_none_or(|c| c.varying_result)
            }
            ExprKind::Math(_, args) => self.all_effects(args.iter(), div),
            ExprKind::Warp(_, args) => {
                self.all_effects(args.iter(), div);
                true
            }
            ExprKind::Atomic { place, args, .. } => {
                self.all_effects(walk::place_exprs(place).into_iter().chain(args), div);
                true
            }
            ExprKind::BarrierTest {
                barrier, parity, ..
            } => {
                let operands = barrier
                    .index
                    .as_deref()
                    .into_iter()
                    .chain(walk::explicit(parity));
                self.all_effects(operands, div);
                true
            }
        }
    }

    /// [`Analyzer::effects`] of each expression; true when any varies.
    fn all_effects<'e>(
        &mut self,
        es: impl IntoIterator<Item = &'e Expr>,
        div: Option<Span>,
    ) -> bool {
        let mut varies = false;
        for e in es {
            varies |= self.effects(e, div);
        }
        varies
    }

    fn call(&mut self, func: FuncId, span: Span, div: Option<Span>) {
        let Some(c) = self.facts.callees.get(func.index()) else {
            return;
        };
        if let Some(sync) = c.sync {
            let name = c.name.clone();
            self.barrier_named(name, Some(sync), span, div);
        }
    }

    fn barrier(
        &mut self,
        op: &'static str,
        via: Option<&'static str>,
        span: Span,
        div: Option<Span>,
    ) {
        self.barrier_named(op.to_string(), via, span, div);
    }

    fn barrier_named(
        &mut self,
        op: String,
        via: Option<&'static str>,
        span: Span,
        div: Option<Span>,
    ) {
        match div {
            Some(cond) => self.warn(op, via, span, cond),
            None => self.convergent.push(Site::Barrier { op, via, span }),
        }
    }

    /// W0320 for a CTA-wide barrier in flow that `cond` made divergent; the
    /// first cause found for a barrier is kept.
    fn warn(&mut self, op: String, via: Option<&'static str>, span: Span, cond: Span) {
        let key = (span.file.0, span.start, span.end);
        self.warnings.entry(key).or_insert(BarrierError::Divergent {
            op,
            span,
            cond,
            via,
        });
    }
}
