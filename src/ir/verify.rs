//! The IR verifier: checks the invariants documented in [`crate::ir`] on a
//! whole module, so that a broken invariant is found where it was broken
//! (the checker, a hand-built test module, a pass) instead of as wrong PTX.
//!
//! What it checks, for every body:
//! - every handle names something that exists (locals, parameters, shared
//!   arrays, barrier groups, functions), and every expression and statement
//!   has an id of its body, used once ([`super::Ids`]);
//! - every expression's type is the one its operation gives, and every
//!   operand has the type its operation takes (so no implicit conversion
//!   is left: conversions are explicit `Cast`s); constants hold values of
//!   their type;
//! - `break`/`continue` stand inside loops, a `return` matches the function's
//!   result, stores go through writable parameters marked `written`;
//! - barrier operations stand in kernels and name existing groups, of
//!   counts and arrival counts the hardware allows;
//! - every node has a span (a non-empty source range).
//!
//! A [`Mode::Complete`] module (one without errors: what the PTX writer
//! gets) must also hold no [`super::StmtKind::Poisoned`] statement, name
//! exactly one barrier in every barrier reference, and have a call graph
//! without cycles.
//!
//! The tests run it on every program the test suite compiles and on every
//! hand-built module; `crate::pipeline` runs it after the checker in debug
//! builds, and so will it after each pass that changes the IR.

use super::{
    BarrierOpKind, Block, Body, Expr, ExprKind, FuncId, Kernel, MemOrder, Module, ParamType, Place,
    PlaceKind, Stmt, StmtKind, REGS_MAX, REGS_MIN, REGS_STEP, VECTOR_BYTES,
};
use crate::span::Span;
use crate::types::Scalar;
use std::fmt;

/// How complete the module must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A module without errors, as the PTX writer gets it.
    Complete,
    /// A module the checker found errors in: statements that failed to
    /// check are missing or `Poisoned`, barrier references are not
    /// validated yet, and the call graph may have cycles (E0114).
    Partial,
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The kernel or function it is in (`kernel k`, `fn f`), or `module`.
    pub item: String,
    /// The node it is about (its span may be the broken part).
    pub span: Span,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (at bytes {}..{} of file {})",
            self.item, self.message, self.span.start, self.span.end, self.span.file.0
        )
    }
}

/// The most errors reported: one broken invariant often breaks many nodes.
const MAX_ERRORS: usize = 50;

/// Verifies a whole module; every broken invariant found (up to a limit).
pub fn module(m: &Module, mode: Mode) -> Result<(), Vec<VerifyError>> {
    let mut errors = Vec::new();
    let mut calls: Vec<Vec<FuncId>> = Vec::with_capacity(m.functions.len());
    for f in &m.functions {
        let mut v = Verifier::new(m, None, &f.body, format!("fn {}", f.name), mode);
        v.ret = Some(f.ret);
        v.span(f.span, "the function");
        if f.params as usize > f.body.locals.len() {
            v.error(
                f.span,
                format!("{} parameters but {} locals", f.params, f.body.locals.len()),
            );
        }
        v.body();
        calls.push(std::mem::take(&mut v.calls));
        errors.append(&mut v.errors);
    }
    for k in &m.kernels {
        let mut v = Verifier::new(m, Some(k), &k.body, format!("kernel {}", k.name), mode);
        v.kernel_decls(k);
        v.body();
        errors.append(&mut v.errors);
    }
    if mode == Mode::Complete {
        if let Some(f) = cycle(&calls) {
            let name = m.functions.get(f.index()).map_or("?", |f| f.name.as_str());
            errors.push(VerifyError {
                item: "module".into(),
                span: m
                    .functions
                    .get(f.index())
                    .map_or(Span::default(), |f| f.span),
                message: format!("the call graph has a cycle through `{name}`"),
            });
        }
    }
    errors.truncate(MAX_ERRORS);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// A function on a cycle of the call graph, if there is a cycle.
fn cycle(calls: &[Vec<FuncId>]) -> Option<FuncId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks = vec![Mark::New; calls.len()];
    for root in 0..calls.len() {
        if marks.get(root) != Some(&Mark::New) {
            continue;
        }
        // An explicit stack: (function, index of the next callee to visit).
        let mut stack = vec![(root, 0usize)];
        if let Some(m) = marks.get_mut(root) {
            *m = Mark::Active;
        }
        while let Some((f, next)) = stack.last_mut() {
            let callee = calls.get(*f).and_then(|c| c.get(*next)).map(|c| c.index());
            *next += 1;
            match callee {
                None => {
                    if let Some(m) = marks.get_mut(*f) {
                        *m = Mark::Done;
                    }
                    stack.pop();
                }
                Some(c) => match marks.get(c) {
                    Some(Mark::Active) => return Some(FuncId(c as u32)),
                    Some(Mark::New) => {
                        if let Some(m) = marks.get_mut(c) {
                            *m = Mark::Active;
                        }
                        stack.push((c, 0));
                    }
                    _ => {}
                },
            }
        }
    }
    None
}

struct Verifier<'m> {
    module: &'m Module,
    kernel: Option<&'m Kernel>,
    body: &'m Body,
    item: String,
    mode: Mode,
    /// The function's result type (`Some(None)`: none); `None` in a kernel.
    ret: Option<Option<Scalar>>,
    /// Enclosing loops.
    loops: u32,
    seen_exprs: Vec<bool>,
    seen_stmts: Vec<bool>,
    /// Functions called (for the cycle check).
    calls: Vec<FuncId>,
    errors: Vec<VerifyError>,
}

impl<'m> Verifier<'m> {
    fn new(
        module: &'m Module,
        kernel: Option<&'m Kernel>,
        body: &'m Body,
        item: String,
        mode: Mode,
    ) -> Self {
        Verifier {
            module,
            kernel,
            body,
            item,
            mode,
            ret: None,
            loops: 0,
            seen_exprs: vec![false; body.ids.exprs()],
            seen_stmts: vec![false; body.ids.stmts()],
            calls: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn error(&mut self, span: Span, message: impl Into<String>) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(VerifyError {
                item: self.item.clone(),
                span,
                message: message.into(),
            });
        }
    }

    fn span(&mut self, span: Span, what: &str) {
        if span.start >= span.end {
            self.error(span, format!("{what} has no span"));
        }
    }

    /// `ty` must be `want`.
    fn expect(&mut self, span: Span, what: &str, ty: Scalar, want: Scalar) {
        if ty != want {
            self.error(span, format!("{what} has type {ty}, expected {want}"));
        }
    }

    fn expect_int(&mut self, span: Span, what: &str, ty: Scalar) {
        if !ty.is_int() {
            self.error(span, format!("{what} has type {ty}, expected an integer"));
        }
    }

    fn body(&mut self) {
        let body = self.body;
        for (i, l) in body.locals.iter().enumerate() {
            self.span(l.span, &format!("local {i} (`{}`)", l.name));
        }
        self.block(&body.block);
    }

    fn kernel_decls(&mut self, k: &Kernel) {
        self.span(k.span, "the kernel");
        self.span(k.name_span, "the kernel's name");
        for p in &k.params {
            self.span(p.span, &format!("parameter `{}`", p.name));
            if let ParamType::Global {
                mutable: false,
                written: true,
                ..
            } = p.ty
            {
                self.error(p.span, format!("read-only `{}` is marked written", p.name));
            }
        }
        for a in &k.shared {
            self.span(a.span, &format!("shared array `{}`", a.name));
            if a.dims.is_empty() || a.is_empty() {
                self.error(a.span, format!("shared array `{}` has no elements", a.name));
            }
        }
        self.named_barriers(k);
        for g in &k.barriers {
            self.span(g.spans.decl, &format!("barrier group `{}`", g.name));
            if self.mode == Mode::Complete && g.failed.any() {
                self.error(
                    g.spans.decl,
                    format!("barrier group `{}` whose declaration failed", g.name),
                );
            }
            if !(1..=super::BarrierGroup::MAX_COUNT).contains(&g.count) {
                self.error(
                    g.spans.decl,
                    format!("barrier group `{}` holds {} barriers", g.name, g.count),
                );
            }
            if !(1..=super::BarrierGroup::MAX_ARRIVALS).contains(&g.arrivals) {
                self.error(
                    g.spans.decl,
                    format!("barrier group `{}` expects {} arrivals", g.name, g.arrivals),
                );
            }
        }
    }

    /// Named barriers: each group's ids within `NamedBarrier::IDS`, no id
    /// taken twice, thread counts whole warps within a CTA.
    fn named_barriers(&mut self, k: &Kernel) {
        let mut taken = [false; 16];
        for g in &k.named_barriers {
            self.span(g.spans.decl, &format!("named barrier `{}`", g.name));
            // A failed declaration's ids are placeholders.
            if g.failed.any() {
                if self.mode == Mode::Complete {
                    self.error(
                        g.spans.decl,
                        format!("named barrier `{}` whose declaration failed", g.name),
                    );
                }
                continue;
            }
            let last = g
                .first_id
                .checked_add(g.count)
                .and_then(|e| e.checked_sub(1));
            match last {
                Some(last)
                    if g.count >= 1
                        && super::NamedBarrier::IDS.contains(&g.first_id)
                        && super::NamedBarrier::IDS.contains(&last) =>
                {
                    for id in g.first_id..=last {
                        if let Some(t) = taken.get_mut(id as usize) {
                            if *t {
                                self.error(
                                    g.spans.decl,
                                    format!("named-barrier id {id} is taken twice"),
                                );
                            }
                            *t = true;
                        }
                    }
                }
                _ => self.error(
                    g.spans.decl,
                    format!(
                        "named barrier `{}` has ids {}..{}",
                        g.name,
                        g.first_id,
                        u64::from(g.first_id) + u64::from(g.count)
                    ),
                ),
            }
            if g.threads == 0
                || g.threads % super::NamedBarrier::WARP != 0
                || g.threads > super::NamedBarrier::MAX_THREADS
                || k.block_threads().is_some_and(|b| g.threads > b)
            {
                self.error(
                    g.spans.decl,
                    format!("named barrier `{}` counts {} threads", g.name, g.threads),
                );
            }
        }
    }

    fn block(&mut self, b: &Block) {
        self.span(b.span, "a block");
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn loop_body(&mut self, b: &Block) {
        self.loops += 1;
        self.block(b);
        self.loops -= 1;
    }

    /// The type of local `id`, if it exists.
    /// A scalar local (a register array is reached only through
    /// [`StmtKind::LetArray`] and [`super::PlaceKind::Register`]).
    fn local(&mut self, span: Span, id: super::LocalId) -> Option<&'m super::Local> {
        let l = self.body.locals.get(id.index());
        match l {
            None => self.error(span, format!("local {} does not exist", id.0)),
            Some(a) if a.is_array() => self.error(
                span,
                format!("register array `{}` is used as a scalar", a.name),
            ),
            Some(_) => {}
        }
        l
    }

    /// A register array: a local with dimensions, each at least 1.
    pub(super) fn array(&mut self, span: Span, id: super::LocalId) -> Option<&'m super::Local> {
        let l = self.body.locals.get(id.index());
        match l {
            None => self.error(span, format!("local {} does not exist", id.0)),
            Some(a) if !a.is_array() => {
                self.error(span, format!("local `{}` is not a register array", a.name))
            }
            Some(a) if a.dims.contains(&0) => self.error(
                span,
                format!("register array `{}` has a dimension of 0", a.name),
            ),
            Some(_) => {}
        }
        l
    }

    /// A vector access of `n` elements of `elem`: 2 or 4 of them, at most
    /// [`VECTOR_BYTES`] (what `ld.v2`/`ld.v4` move).
    fn vector(&mut self, span: Span, n: usize, elem: Scalar) {
        if !matches!(n, 2 | 4) {
            self.error(span, format!("a vector access of {n} elements"));
        } else if n as u32 * elem.size() > VECTOR_BYTES {
            self.error(span, format!("a vector access of {n} {elem} elements"));
        }
    }

    /// A matrix access of `n` registers at `place`: 1, 2 or 4 matrices of
    /// 16-bit elements of this CTA's shared memory. The registers' type.
    fn matrix(&mut self, span: Span, n: usize, place: &Place) -> Scalar {
        if !matches!(n, 1 | 2 | 4) {
            self.error(span, format!("a matrix access of {n} matrices"));
        }
        // `SharedAt`: the same element, its address hoisted by `licm`.
        if !matches!(
            place.kind,
            PlaceKind::Shared { .. } | PlaceKind::SharedAt { .. }
        ) {
            self.error(span, "a matrix access outside this CTA's shared memory");
        }
        crate::ir::Matrix::register(place.elem).unwrap_or_else(|| {
            self.error(span, format!("a matrix access of {} elements", place.elem));
            place.elem
        })
    }

    fn stmt(&mut self, s: &Stmt) {
        self.span(s.span, "a statement");
        match self.seen_stmts.get_mut(s.id.index()) {
            Some(seen) if !*seen => *seen = true,
            Some(_) => self.error(s.span, format!("statement id {} is used twice", s.id.0)),
            None => self.error(
                s.span,
                format!("statement id {} is not of this body", s.id.0),
            ),
        }
        match &s.kind {
            StmtKind::Let { local, value } | StmtKind::Assign { local, value } => {
                self.expr(value);
                if let Some(l) = self.local(s.span, *local) {
                    self.expect(value.span, "the value", value.ty, l.ty);
                    if matches!(s.kind, StmtKind::Assign { .. }) && !l.mutable {
                        self.error(s.span, format!("immutable local `{}` is assigned", l.name));
                    }
                }
            }
            StmtKind::LetArray { local, values } => {
                for v in values {
                    self.expr(v);
                }
                if let Some(a) = self.array(s.span, *local) {
                    if values.len() != 1 && values.len() != a.elements() as usize {
                        self.error(
                            s.span,
                            format!(
                                "register array `{}` of {} elements has {} values",
                                a.name,
                                a.elements(),
                                values.len()
                            ),
                        );
                    }
                    for v in values {
                        self.expect(v.span, "an element's value", v.ty, a.ty);
                    }
                }
            }
            StmtKind::LoadVector {
                locals,
                place,
                matrix,
            } => {
                self.place(place, false);
                let want = match matrix {
                    Some(_) => self.matrix(s.span, locals.len(), place),
                    None => {
                        self.vector(s.span, locals.len(), place.elem);
                        place.elem
                    }
                };
                for id in locals {
                    if let Some(l) = self.local(s.span, *id) {
                        self.expect(s.span, "a vector load's local", l.ty, want);
                    }
                }
            }
            StmtKind::StoreVector {
                place,
                values,
                matrix,
            } => {
                self.place(place, true);
                let want = match matrix {
                    Some(_) => self.matrix(s.span, values.len(), place),
                    None => {
                        self.vector(s.span, values.len(), place.elem);
                        place.elem
                    }
                };
                for v in values {
                    self.expr(v);
                    self.expect(v.span, "a stored element", v.ty, want);
                }
            }
            StmtKind::Store { place, op, value } => {
                self.place(place, true);
                self.expr(value);
                match op {
                    None => self.expect(value.span, "the stored value", value.ty, place.elem),
                    Some(op) if op.is_shift() => {
                        self.expect_int(value.span, "the shift amount", value.ty);
                        self.operator(s.span, *op, place.elem);
                    }
                    Some(op) if op.is_comparison() || op.is_logical() => {
                        self.error(s.span, format!("`{}=` is not an operator", op.symbol()))
                    }
                    Some(op) => {
                        self.expect(value.span, "the operand", value.ty, place.elem);
                        self.operator(s.span, *op, place.elem);
                    }
                }
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.expr(cond);
                self.expect(cond.span, "the condition", cond.ty, Scalar::Bool);
                self.block(then_block);
                if let Some(b) = else_block {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.expect(cond.span, "the condition", cond.ty, Scalar::Bool);
                self.loop_body(body);
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                for e in [start, end, step] {
                    self.expr(e);
                }
                if let Some(l) = self.local(s.span, *var) {
                    self.expect_int(s.span, "the loop variable", l.ty);
                    for (e, what) in [(start, "the start"), (end, "the end"), (step, "the step")] {
                        self.expect(e.span, what, e.ty, l.ty);
                    }
                }
                self.loop_body(body);
            }
            StmtKind::ForList { var, items, body } => {
                if items.is_empty() {
                    self.error(s.span, "a loop over an empty list");
                }
                let var_ty = self.local(s.span, *var).map(|l| (l.ty, l.mutable));
                for e in items {
                    self.expr(e);
                    if !matches!(e.kind, ExprKind::Const(_)) {
                        self.error(
                            e.span,
                            "an element of a loop over a list that is not a constant",
                        );
                    }
                    if let Some((ty, _)) = var_ty {
                        self.expect(e.span, "an element", e.ty, ty);
                    }
                }
                if var_ty.is_some_and(|(_, mutable)| mutable) {
                    self.error(s.span, "the variable of a loop over a list is mutable");
                }
                self.block(body);
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    self.error(s.span, "`break`/`continue` outside a loop");
                }
            }
            StmtKind::Return(value) => {
                if let Some(e) = value {
                    self.expr(e);
                }
                match (self.ret, value) {
                    (None | Some(None), None) => {}
                    (Some(Some(ty)), Some(e)) => self.expect(e.span, "the result", e.ty, ty),
                    (None, Some(_)) => self.error(s.span, "a kernel returns a value"),
                    (Some(None), Some(_)) => {
                        self.error(s.span, "a function without a result returns a value")
                    }
                    (Some(Some(_)), None) => {
                        self.error(s.span, "a function with a result returns none")
                    }
                }
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::SyncWarp(mask) => {
                self.expr(mask);
                self.expect(mask.span, "the warp mask", mask.ty, Scalar::U32);
            }
            StmtKind::Call { func, args } => {
                for a in args {
                    self.expr(a);
                }
                if let Some(ret) = self.call(s.span, *func, args) {
                    if ret.is_some() {
                        self.error(s.span, "a call statement of a function with a result");
                    }
                }
            }
            StmtKind::SyncThreads | StmtKind::FenceProxyAsync | StmtKind::CopyAsyncCommit => {}
            StmtKind::Fence(sem) => {
                if !matches!(sem.order, MemOrder::AcqRel | MemOrder::Sc) {
                    self.error(s.span, format!("a fence with order `{}`", sem.order.name()));
                }
            }
            StmtKind::CopyAsyncWait(_) => {}
            StmtKind::Wgmma(w) => {
                self.place(&w.a, false);
                self.place(&w.b, false);
                self.expr(&w.accumulate);
                self.expect(
                    w.accumulate.span,
                    "`accumulate`",
                    w.accumulate.ty,
                    Scalar::Bool,
                );
                if !matches!(w.b.kind, PlaceKind::Shared { .. }) {
                    self.error(w.b.span, "a wgmma operand outside this CTA's shared memory");
                }
                match &w.a.kind {
                    PlaceKind::Shared { .. } => {}
                    PlaceKind::Accum { acc, .. } => {
                        let a = self.kernel.and_then(|k| k.accums.get(acc.index()));
                        if !a.is_some_and(|a| {
                            !a.row && super::Accum::OPERAND_ELEMS.contains(&a.elem)
                        }) || *acc == w.acc
                            || w.trans_a
                        {
                            self.error(
                                w.a.span,
                                "an A operand from registers that is not a 16-bit fragment",
                            );
                        }
                    }
                    _ => self.error(w.a.span, "a wgmma operand outside this CTA's shared memory"),
                }
                if self
                    .kernel
                    .and_then(|k| k.accums.get(w.acc.index()))
                    .is_some_and(|a| a.row)
                {
                    self.error(w.acc_span, "a row vector as a wgmma's accumulator");
                }
                match self.kernel.and_then(|k| k.accums.get(w.acc.index())) {
                    Some(a) => match super::WgmmaForm::of(a.elem, w.a.elem, w.b.elem) {
                        Err(why) => self.error(s.span, format!("a wgmma of no form: {why}")),
                        Ok(f) if (w.trans_a || w.trans_b) && !f.transposable() => {
                            self.error(s.span, "a transposed operand of a form without one");
                        }
                        Ok(_) => {}
                    },
                    None => self.error(s.span, format!("accumulator {} does not exist", w.acc.0)),
                }
            }
            StmtKind::Fragment(f) => {
                if let Some(k) = &f.factor {
                    self.expr(k);
                    self.expect(k.span, "the factor", k.ty, Scalar::F32);
                }
                let get = |a: super::AccumId| self.kernel.and_then(|k| k.accums.get(a.index()));
                match (get(f.dst), get(f.src)) {
                    (Some(d), Some(src)) => {
                        if let Some(why) = super::fragment_mismatch(f.kind, d, src) {
                            self.error(s.span, format!("`{}`: {why}", f.kind.name()));
                        }
                    }
                    _ => self.error(
                        s.span,
                        "a fragment operation on an accumulator that does not exist",
                    ),
                }
            }
            StmtKind::WgmmaCommit => {}
            StmtKind::WgmmaWait(n) => {
                if *n > 7 {
                    self.error(s.span, format!("`wgmma_wait({n})`: more than 7"));
                }
            }
            StmtKind::SetMaxRegs(n) => {
                if !(REGS_MIN..=REGS_MAX).contains(n) || n % REGS_STEP != 0 {
                    self.error(
                        s.span,
                        format!("`set_max_regs({n})`: not a multiple of 8 in 24..=256"),
                    );
                }
                if self.kernel.is_none_or(|k| k.block.is_none()) {
                    self.error(s.span, "`set_max_regs` outside a kernel with `block(...)`");
                }
            }
            StmtKind::ClusterSync => {
                if self.mode == Mode::Complete && self.kernel.is_some_and(|k| k.cluster.is_none()) {
                    self.error(s.span, "`cluster_sync()` in a kernel without a cluster");
                }
            }
            StmtKind::Barrier(op) => {
                self.barrier_ref(&op.barrier);
                self.span(op.method_span, "the barrier method");
                match &op.kind {
                    BarrierOpKind::Arrive { count: None } => {}
                    BarrierOpKind::Arrive { count: Some(e) }
                    | BarrierOpKind::ArriveExpectTx { bytes: e }
                    | BarrierOpKind::ExpectTx { bytes: e }
                    | BarrierOpKind::ArriveRemote { rank: e } => {
                        self.expr(e);
                        self.expect(e.span, "the operand", e.ty, Scalar::U32);
                    }
                    BarrierOpKind::Wait { parity } | BarrierOpKind::WaitCluster { parity } => {
                        self.parity(parity)
                    }
                }
            }
            StmtKind::CopyAsync {
                dst,
                src,
                bytes,
                barrier,
            } => {
                self.place(dst, true);
                self.place(src, false);
                self.expr(bytes);
                self.barrier_ref(barrier);
                self.copy(s.span, dst, src, bytes, true);
            }
            StmtKind::CopyAsyncStore { dst, src, bytes } => {
                self.place(dst, true);
                self.place(src, false);
                self.expr(bytes);
                self.copy(s.span, dst, src, bytes, false);
            }
            StmtKind::TensorCopy(c) => self.tensor_copy(s.span, c),
            StmtKind::NamedBarrier(op) => {
                self.span(op.span, "the named-barrier reference");
                self.span(op.method_span, "the named-barrier method");
                match self
                    .kernel
                    .and_then(|k| k.named_barriers.get(op.group.index()))
                {
                    None => self.error(
                        s.span,
                        format!("named-barrier group {} does not exist", op.group.0),
                    ),
                    Some(g) if g.count > 1 && op.index.is_none() => self.error(
                        s.span,
                        format!("named-barrier group `{}` used without an index", g.name),
                    ),
                    Some(_) => {}
                }
                if let Some(i) = &op.index {
                    self.expr(i);
                    if !i.ty.is_int() {
                        self.error(i.span, format!("a named-barrier index of type {}", i.ty));
                    }
                }
            }
            StmtKind::Poisoned { groups, blocks } => {
                if self.mode == Mode::Complete {
                    self.error(s.span, "a statement that failed to check");
                }
                let count = self.kernel.map_or(0, |k| k.barriers.len());
                for g in groups {
                    if g.index() >= count {
                        self.error(s.span, format!("barrier group {} does not exist", g.0));
                    }
                }
                for b in blocks {
                    self.block(b);
                }
            }
        }
    }

    /// A bulk copy: global → shared (`to_shared`) or shared → global.
    fn copy(&mut self, span: Span, dst: &Place, src: &Place, bytes: &Expr, to_shared: bool) {
        self.expect(bytes.span, "the byte count", bytes.ty, Scalar::U32);
        let (shared, global) = if to_shared { (dst, src) } else { (src, dst) };
        if !matches!(shared.kind, PlaceKind::Shared { .. }) {
            self.error(
                span,
                "a bulk copy's shared side is not a local shared array",
            );
        }
        if !matches!(global.kind, PlaceKind::Global { .. }) {
            self.error(span, "a bulk copy's global side is not a global array");
        }
    }

    /// A tensor copy: a slice of a shared array whose shape and element
    /// type are the map's box, one 32-bit coordinate per dimension of the
    /// map, a writable map for a store or reduction, a `u32` mask.
    fn tensor_copy(&mut self, span: Span, c: &super::TensorCopy) {
        self.span(c.smem.span, "the shared slice");
        self.span(c.box_span, "the box");
        for e in c.smem.indices.iter().chain(&c.coords) {
            self.expr(e);
        }
        for e in &c.smem.indices {
            self.expect_int(e.span, "a slice index", e.ty);
        }
        for e in &c.coords {
            if !matches!(e.ty, Scalar::I32 | Scalar::U32) {
                self.error(e.span, format!("a tensor coordinate of type {}", e.ty));
            }
        }
        let map = match self.kernel.and_then(|k| k.params.get(c.map.index())) {
            Some(p) => match p.ty {
                ParamType::Tensor(m) => Some(m),
                _ => {
                    self.error(span, format!("`{}` is not a tensor map", p.name));
                    None
                }
            },
            None => {
                self.error(span, format!("parameter {} does not exist", c.map.0));
                None
            }
        };
        let array = self.kernel.and_then(|k| k.shared.get(c.smem.array.index()));
        let Some(array) = array else {
            self.error(
                span,
                format!("shared array {} does not exist", c.smem.array.0),
            );
            return;
        };
        let shape = array.dims.get(c.smem.indices.len()..);
        if c.smem.indices.len() >= array.dims.len() {
            self.error(c.smem.span, "a slice with an index for every dimension");
        }
        if let Some(map) = map {
            if c.coords.len() != map.rank() {
                self.error(
                    c.box_span,
                    format!(
                        "{} coordinates for a map of rank {}",
                        c.coords.len(),
                        map.rank()
                    ),
                );
            }
            let boxed: Vec<u64> = map.box_dims().iter().map(|&d| u64::from(d)).collect();
            if shape != Some(&boxed[..]) {
                self.error(span, "a slice whose shape is not the box");
            }
            if array.elem != map.elem {
                self.error(span, "a slice whose elements are not the map's");
            }
            if !matches!(c.kind, super::TensorCopyKind::Load { .. }) && !map.mutable {
                self.error(span, "a tensor store through a read-only map");
            }
        }
        if let super::TensorCopyKind::Load { barrier, mask } = &c.kind {
            self.barrier_ref(barrier);
            if let Some(m) = mask {
                self.expr(m);
                self.expect(m.span, "the CTA mask", m.ty, Scalar::U32);
            }
        }
    }

    /// A call of `func` with `args`: the function's result type, if it
    /// exists.
    fn call(&mut self, span: Span, func: FuncId, args: &[Expr]) -> Option<Option<Scalar>> {
        self.calls.push(func);
        let Some(f) = self.module.functions.get(func.index()) else {
            self.error(span, format!("function {} does not exist", func.0));
            return None;
        };
        if args.len() != f.params as usize {
            self.error(
                span,
                format!(
                    "`{}` takes {} arguments, {} given",
                    f.name,
                    f.params,
                    args.len()
                ),
            );
        }
        for (a, p) in args.iter().zip(&f.body.locals) {
            self.expect(a.span, "an argument", a.ty, p.ty);
        }
        Some(f.ret)
    }
}

mod exprs;

#[cfg(test)]
mod tests;
