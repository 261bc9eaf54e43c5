//! Statements and blocks.

use super::body::{Binding, BodyChecker};
use super::error::{CheckError, Suggestion};
use super::globals::FnInfo;
use super::values::split_value;
use crate::ir::{self, Expr, ExprKind, StmtKind, Value};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};

/// What unrolling the loops over constant lists inside one (or inside a
/// body) makes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unrolled {
    /// Statements and expressions added by the copies.
    pub added: u64,
    /// One of them is too large (E0162): none is unrolled.
    pub failed: bool,
}

/// The most copies `#[unroll(N)]` may ask for.
pub const MAX_UNROLL: u32 = 64;

/// The most statements and expressions that unrolling the loops over
/// constant lists of one function or kernel may make (E0162): each
/// element is a copy of the body, and nested lists multiply, so a small
/// source can ask for more than any kernel holds (four nested lists of 64
/// elements: 16.7 million copies).
pub const MAX_UNROLLED: u64 = 1 << 18;

impl BodyChecker<'_> {
    /// A block in statement context (its own scope). A tail expression
    /// must be a call that returns nothing (`{ sync_threads() }`).
    pub fn block(&mut self, b: &ast::Block) -> ir::Block {
        self.push_scope();
        self.block_depth += 1;
        let out = self.block_in_scope(b);
        self.block_depth -= 1;
        self.pop_scope();
        out
    }

    /// The statements of a block in the current scope (a kernel body's top
    /// level, where declarations are allowed).
    pub fn block_in_scope(&mut self, b: &ast::Block) -> ir::Block {
        // Most statements lower to one: no doubling slack in every block.
        let mut stmts = Vec::with_capacity(b.stmts.len() + usize::from(b.tail.is_some()));
        for s in &b.stmts {
            self.stmt(s, &mut stmts);
        }
        if let Some(tail) = &b.tail {
            let marks = self.marks();
            let kind = self.effect(tail, true);
            self.lowered(kind, tail.span, marks, &mut stmts);
        }
        ir::Block {
            stmts,
            span: b.span,
        }
    }

    /// A function's body: the tail (if any) is the returned value.
    pub fn function_body(&mut self, b: &ast::Block, info: &FnInfo) -> ir::Block {
        let mut stmts = Vec::with_capacity(b.stmts.len() + usize::from(b.tail.is_some()));
        let Some(ty) = info.ret else {
            // No return type: a block in statement context.
            for s in &b.stmts {
                self.stmt(s, &mut stmts);
            }
            if let Some(tail) = b.tail.as_deref() {
                let marks = self.marks();
                let kind = self.effect(tail, true);
                self.lowered(kind, tail.span, marks, &mut stmts);
            }
            return ir::Block {
                stmts,
                span: b.span,
            };
        };
        let (body, value) = split_value(b);
        for s in body {
            self.stmt(s, &mut stmts);
        }
        match value {
            Some(value) => {
                let marks = self.marks();
                let kind = self
                    .block_value_as(value, ty)
                    .map(|v| StmtKind::Return(Some(v)));
                self.lowered(kind, value.span(), marks, &mut stmts);
            }
            None if !info.bad_ret && !always_returns(&stmts) => {
                let ret_span = info.ast.ret.as_ref().map_or(info.ast.name.span, |t| t.span);
                self.error(CheckError::MissingReturn {
                    name: info.ast.name.name.to_string(),
                    span: b.span,
                    ret: ret_span,
                });
            }
            None => {}
        }
        ir::Block {
            stmts,
            span: b.span,
        }
    }

    /// Where the lists of named groups and orphaned blocks stand before a
    /// statement is checked.
    fn marks(&self) -> (usize, usize) {
        (self.named_groups.len(), self.orphans.len())
    }

    /// Adds a checked statement to `out`. One that failed to check becomes
    /// [`StmtKind::Poisoned`] when it named barrier groups or holds blocks
    /// that checked (see `ir::StmtKind::Poisoned`); otherwise it is left out.
    fn lowered(
        &mut self,
        kind: Option<StmtKind>,
        span: Span,
        (groups_mark, orphans_mark): (usize, usize),
        out: &mut Vec<ir::Stmt>,
    ) {
        let mut groups = self
            .named_groups
            .split_off(groups_mark.min(self.named_groups.len()));
        let blocks = self.orphans.split_off(orphans_mark.min(self.orphans.len()));
        let kind = match kind {
            Some(kind) => {
                out.push(ir::Stmt {
                    kind,
                    span,
                    id: self.ids.stmt(),
                });
                if blocks.is_empty() {
                    return;
                }
                groups.clear();
                StmtKind::Poisoned { groups, blocks }
            }
            None if groups.is_empty() && blocks.is_empty() => return,
            None => {
                groups.sort_unstable();
                groups.dedup();
                StmtKind::Poisoned { groups, blocks }
            }
        };
        out.push(ir::Stmt {
            kind,
            span,
            id: self.ids.stmt(),
        });
    }

    pub fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<ir::Stmt>) {
        if let ast::StmtKind::ForList {
            var,
            items,
            items_span,
            body,
        } = &s.kind
        {
            return self.for_list(var, items, *items_span, body, s.span, out);
        }
        if let ast::StmtKind::For {
            var,
            start,
            end,
            step,
            body,
            hint,
        } = &s.kind
        {
            let accum = self
                .kernel
                .as_ref()
                .is_some_and(|k| k.accum_loops.contains(&s.span))
                || self.array_loops.contains(&s.span);
            if accum {
                let h = hint.as_deref();
                return self.accum_for(var, start, end, step.as_deref(), body, h, s.span, out);
            }
        }
        let marks = self.marks();
        let kind = match &s.kind {
            ast::StmtKind::Let {
                mutable,
                name,
                ty,
                init,
            } => self.let_stmt(*mutable, name, ty.as_deref(), init, s.span),
            ast::StmtKind::LetArray {
                mutable,
                name,
                ty,
                init,
            } => self.let_array(*mutable, name, ty.as_deref(), init.as_deref(), s.span),
            ast::StmtKind::LetTuple {
                names,
                pattern,
                init,
            } => self.let_tuple(names, *pattern, init),
            ast::StmtKind::Assign {
                place,
                op,
                op_span,
                value,
            } => self.assign(place, *op, *op_span, value, s.span),
            ast::StmtKind::If {
                cond,
                then_block,
                else_branch,
            } => self.if_stmt(cond, then_block, else_branch.as_ref()),
            ast::StmtKind::While { cond, body } => {
                let cond = self.expr_as(cond, Scalar::Bool);
                let body = self.loop_body(body);
                match cond {
                    Some(cond) => Some(StmtKind::While {
                        cond: Box::new(cond),
                        body,
                    }),
                    None => {
                        self.orphan(body);
                        None
                    }
                }
            }
            ast::StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                hint,
            } => self.for_stmt(var, start, end, step.as_deref(), body, hint.as_deref()),
            // Lowered before this match.
            ast::StmtKind::ForList { .. } => None,
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let (keyword, kind) = match s.kind {
                    ast::StmtKind::Break => ("break", StmtKind::Break),
                    _ => ("continue", StmtKind::Continue),
                };
                if self.list_loop.is_some_and(|d| d == self.loop_depth) {
                    self.error(CheckError::ListLoopJump {
                        keyword,
                        span: s.span,
                    });
                    None
                } else if self.loop_depth == 0 {
                    self.error(CheckError::OutsideLoop {
                        keyword,
                        span: s.span,
                    });
                    None
                } else {
                    Some(kind)
                }
            }
            ast::StmtKind::Return(value) => self.return_stmt(value.as_deref(), s.span),
            ast::StmtKind::Expr(e) => self.effect(e, false),
            ast::StmtKind::Shared {
                name,
                elem,
                dims,
                clauses,
            } => {
                self.shared_decl(name, elem, dims, clauses, s.span);
                None
            }
            ast::StmtKind::Barrier(decl) => {
                self.barrier_decl(decl, s.span);
                None
            }
            ast::StmtKind::Accum { name, elem, dims } => {
                self.accum_decl(name, elem, dims, s.span);
                None
            }
            ast::StmtKind::Error => None,
        };
        // An expression statement is the expression, without its `;`.
        let span = match &s.kind {
            ast::StmtKind::Expr(e) => e.span,
            _ => s.span,
        };
        self.lowered(kind, span, marks, out);
    }

    fn let_stmt(
        &mut self,
        mutable: bool,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        init: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        if let Some(t) = ty.filter(|t| matches!(t.kind, ast::TypeExprKind::Array { .. })) {
            return self.array_given_scalar(name, t, init);
        }
        let declared = match ty {
            Some(t) => match self.resolve_type(t) {
                Some(Type::Scalar(s)) => Some(Some(s)),
                Some(_) => {
                    self.error(CheckError::GlobalOutsideParams { span: t.span });
                    Some(None)
                }
                None => Some(None),
            },
            None => None,
        };
        let value = match declared {
            Some(Some(t)) => self.expr_as(init, t),
            Some(None) => {
                let _ = self.expr(init, None);
                None
            }
            None => self.expr(init, None),
        };
        // A `let` with a syntax error in it was misread (`let v = c @ 1;`
        // is `let v = c`): its variable's type is no news, nor anything
        // about its uses.
        if self.diags.misread(span) {
            self.poison(&name.name);
            return None;
        }
        // Declared even when the initialiser failed, so later uses of the
        // name do not report "cannot find".
        let Some(ty) = value.as_ref().map(|v| v.ty).or(declared.flatten()) else {
            self.poison(&name.name);
            return None;
        };
        let local = self.declare_local(name, ty, mutable, "a variable");
        if value.is_none() {
            self.mark_used(local);
        }
        value.map(|value| StmtKind::Let { local, value })
    }

    fn assign(
        &mut self,
        place: &ast::Expr,
        op: Option<ir::BinOp>,
        op_span: Span,
        value: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        let mut target = place;
        while let ast::ExprKind::Paren(inner) = &target.kind {
            target = inner;
        }
        if let ast::ExprKind::Name(name) = &target.kind {
            return self.assign_name(name, op, op_span, value, span);
        }
        let (place, _) = self.place(target, true)?;
        let value = match op {
            Some(op) if op.is_shift() => self.shift_amount(value)?,
            Some(op) => {
                let v = self.expr_as(value, place.elem)?;
                self.check_operator(op, place.elem, op_span)?;
                self.check_divisor(op, &v)?;
                v
            }
            None => self.expr_as(value, place.elem)?,
        };
        if op.is_some_and(|o| o.is_shift()) {
            self.check_operator(ir::BinOp::Shl, place.elem, op_span)?;
        }
        Some(StmtKind::Store {
            place: Box::new(place),
            op,
            value,
        })
    }

    fn assign_name(
        &mut self,
        name: &ast::Ident,
        op: Option<ir::BinOp>,
        op_span: Span,
        value: &ast::Expr,
        span: Span,
    ) -> Option<StmtKind> {
        let array = self.array_binding(self.lookup(&name.name));
        let Some(Binding::Local(local)) = self.lookup(&name.name).filter(|_| array.is_none())
        else {
            if matches!(self.lookup(&name.name), Some(Binding::Poisoned)) {
                let _ = self.expr(value, None);
                return None;
            }
            // Not a local: say why it cannot be assigned.
            if self.lookup(&name.name).is_some() || self.is_const(&name.name) {
                let (what, decl) = match self.lookup(&name.name) {
                    Some(Binding::Param(p)) => (
                        "a kernel parameter",
                        self.kernel
                            .as_ref()
                            .and_then(|k| k.params.get(p.index()))
                            .map(|p| p.span),
                    ),
                    Some(Binding::Shared(_)) => {
                        ("a shared array (index it to store an element)", None)
                    }
                    Some(Binding::Barrier(_)) | Some(Binding::Named(_)) => {
                        ("a barrier group", None)
                    }
                    Some(Binding::Accum(_)) => {
                        ("an accumulator (index it to store an element)", None)
                    }
                    Some(Binding::Local(l)) => (
                        "a register array (index it to store an element)",
                        self.local(l).map(|l| l.span),
                    ),
                    _ => ("a constant", self.const_decl(&name.name)),
                };
                self.error(CheckError::AssignImmutable {
                    name: name.name.to_string(),
                    span,
                    decl,
                    what,
                    fix: None,
                });
            } else {
                let _ = self.name_value(name);
            }
            let _ = self.expr(value, None);
            return None;
        };
        let (ty, mutable, decl) = self.local(local).map(|l| (l.ty, l.mutable, l.span))?;
        self.reference(name.span, decl);
        let rhs = match op {
            Some(op) if op.is_shift() => self.shift_amount(value),
            _ => self.expr_as(value, ty),
        };
        if !mutable {
            let kind = self.local_kind(local);
            let fix = (kind == "a variable").then(|| Suggestion {
                message: format!("make this binding mutable: `mut {}`", name.name),
                span: Span {
                    end: decl.start,
                    ..decl
                },
                replacement: "mut ".to_string(),
            });
            self.error(CheckError::AssignImmutable {
                name: name.name.to_string(),
                span,
                decl: Some(decl),
                what: kind,
                fix,
            });
            return None;
        }
        let rhs = rhs?;
        let value = match op {
            None => rhs,
            Some(op) => {
                self.check_operator(op, ty, op_span)?;
                self.check_divisor(op, &rhs)?;
                let current = Expr {
                    kind: ExprKind::Local(local),
                    ty,
                    span: name.span,
                    id: self.ids.expr(),
                };
                self.mark_used(local);
                Expr {
                    kind: ExprKind::Binary(op, Box::new(current), Box::new(rhs)),
                    ty,
                    span,
                    id: self.ids.expr(),
                }
            }
        };
        Some(StmtKind::Assign { local, value })
    }

    fn if_stmt(
        &mut self,
        cond: &ast::Expr,
        then_block: &ast::Block,
        else_branch: Option<&ast::ElseBranch>,
    ) -> Option<StmtKind> {
        let cond = self.expr_as(cond, Scalar::Bool);
        let then_block = self.block(then_block);
        let else_block = else_branch.map(|e| match e {
            ast::ElseBranch::Block(b) => self.block(b),
            ast::ElseBranch::If(s) => {
                self.block_depth += 1;
                let mut stmts = Vec::new();
                self.stmt(s, &mut stmts);
                self.block_depth -= 1;
                ir::Block {
                    stmts,
                    span: s.span,
                }
            }
        });
        let Some(cond) = cond else {
            self.orphan(then_block);
            if let Some(b) = else_block {
                self.orphan(b);
            }
            return None;
        };
        Some(StmtKind::If {
            cond: Box::new(cond),
            then_block,
            else_block,
        })
    }

    /// `for var in [c0, c1, ...] { body }`: the body is checked once, with
    /// `var` an immutable local of the elements' type (they unify like a
    /// range's bounds: an untyped literal takes the type of a typed
    /// element), and stays one loop ([`StmtKind::ForList`]) that the
    /// optimiser unrolls, whatever passes run, so each run sees its
    /// constant as an immediate. An empty list's loop runs nothing and is
    /// left out. Unrolling is bounded ([`MAX_UNROLLED`], E0162).
    fn for_list(
        &mut self,
        var: &ast::Ident,
        items: &[ast::Expr],
        items_span: Span,
        body: &ast::Block,
        span: Span,
        out: &mut Vec<ir::Stmt>,
    ) {
        let marks = self.marks();
        self.unrolled.push(Unrolled::default());
        // The first typed element types the others.
        let lead = items.iter().position(|e| !e.untyped).unwrap_or(0);
        let mut lead_expr = items.get(lead).and_then(|e| self.expr(e, None));
        let ty = lead_expr.as_ref().map(|e| e.ty);
        let mut values = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let e = match (i == lead, ty) {
                (true, _) => lead_expr.take(),
                (false, Some(t)) => self.expr_as(item, t),
                (false, None) => self.expr(item, None),
            };
            let v = e.as_ref().and_then(|e| ir::consteval::eval(e).ok());
            if e.is_some() && v.is_none() {
                self.error(CheckError::NotConstant {
                    span: item.span,
                    why: Some(
                        "a loop over a list is unrolled at compile time, so its elements must be constants"
                            .into(),
                    ),
                });
            }
            values.push(v.zip(e.map(|e| e.span)));
        }
        if let Some(t) = ty.filter(|t| *t == Scalar::Bool) {
            self.error(CheckError::Mismatch {
                expected: "a number".into(),
                found: t.to_string(),
                span: items_span,
                note: Some("a loop over a constant list takes integers or floats".into()),
                fix: None,
            });
        }
        let ty_ok = ty.filter(|t| *t != Scalar::Bool);
        let list = List {
            ty: ty_ok,
            empty: items.is_empty(),
            values,
            items_span,
        };
        self.list_body(var, list, body, span, marks, out);
    }

    /// The body of a loop over a constant list (or of a range loop over
    /// constants that is unrolled like one), with its variable, and the
    /// loop itself: [`StmtKind::ForList`] when everything checked.
    fn list_body(
        &mut self,
        var: &ast::Ident,
        list: List,
        body: &ast::Block,
        span: Span,
        marks: (usize, usize),
        out: &mut Vec<ir::Stmt>,
    ) {
        let List {
            ty: ty_ok,
            empty,
            values,
            items_span,
        } = list;
        self.push_scope();
        let local = self.declare_local(var, ty_ok.unwrap_or(Scalar::U32), false, "a loop variable");
        if ty_ok.is_none() && !empty {
            self.mark_used(local);
            self.poison(&var.name);
        }
        let saved = self.list_loop.replace(self.loop_depth);
        let built_before = self.built();
        let block = self.block(body);
        self.list_loop = saved;
        self.pop_scope();
        let inner = self.unrolled.pop().unwrap_or_default();
        let t = ty_ok.or(empty.then_some(Scalar::I32));
        let (Some(t), true) = (t, values.iter().all(Option::is_some)) else {
            self.orphan(block);
            return self.lowered(None, span, marks, out);
        };
        if values.is_empty() {
            // Nothing runs; the body was checked.
            return self.lowered(None, span, marks, out);
        }
        if !self.within_unrolling(built_before, inner, values.len(), items_span) {
            self.orphan(block);
            return self.lowered(None, span, marks, out);
        }
        let items = values
            .into_iter()
            .flatten()
            .map(|(value, item_span)| self.constant(value, t, item_span))
            .collect();
        let kind = StmtKind::ForList {
            var: local,
            items,
            body: block,
        };
        self.lowered(Some(kind), span, marks, out);
    }

    /// The statements and expressions built so far in this body.
    fn built(&self) -> u64 {
        (self.ids.exprs() as u64)
            .saturating_add(self.ids.stmts() as u64)
            .saturating_add(self.array_elements)
    }

    /// Whether a loop over `n` elements whose body (built since
    /// `built_before`) grows by `inner` when its own lists are unrolled
    /// stays within [`MAX_UNROLLED`], alone and with the rest of the
    /// function's lists; E0162 otherwise. What it adds counts for the loops
    /// around it. A loop around one that failed fails too, silently: it is
    /// not unrolled either, and says nothing more.
    fn within_unrolling(
        &mut self,
        built_before: u64,
        inner: Unrolled,
        n: usize,
        span: Span,
    ) -> bool {
        if inner.failed {
            self.unrolled_failed();
            return false;
        }
        // As written, and once its own lists are unrolled.
        let raw = self.built().saturating_sub(built_before);
        let body = raw.saturating_add(inner.added);
        let unrolled = body.saturating_mul(n as u64);
        // What unrolling adds to the body as written.
        let added = unrolled.saturating_sub(raw);
        let outer = self.unrolled.len() == 1;
        let total = match self.unrolled.last() {
            Some(t) if outer => t.added.saturating_add(added),
            _ => added,
        };
        if unrolled > MAX_UNROLLED || total > MAX_UNROLLED {
            self.unrolled_failed();
            self.error(CheckError::UnrolledTooLarge {
                span,
                elements: n,
                size: unrolled.max(total),
                whole: unrolled <= MAX_UNROLLED,
                limit: MAX_UNROLLED,
            });
            return false;
        }
        if let Some(t) = self.unrolled.last_mut() {
            t.added = t.added.saturating_add(added);
        }
        true
    }

    /// A loop over a list inside the one being checked is not unrolled.
    fn unrolled_failed(&mut self) {
        if self.unrolled.len() > 1 {
            if let Some(t) = self.unrolled.last_mut() {
                t.failed = true;
            }
        }
    }

    /// `#[unroll]` (every iteration) or `#[unroll(N)]`, `N` a constant
    /// in 1..=[`MAX_UNROLL`]; anything else is E0161 (or E0117 for a count
    /// that is not constant), and the loop keeps no hint.
    fn loop_hint(&mut self, h: &ast::LoopAttr) -> Option<ir::LoopHint> {
        let span = h.span;
        self.loop_unroll(h)
            .map(|unroll| ir::LoopHint { unroll, span })
    }

    fn loop_unroll(&mut self, h: &ast::LoopAttr) -> Option<ir::Unroll> {
        if &*h.name.name != "unroll" {
            if let Some(a) = &h.arg {
                let _ = self.expr(a, None);
            }
            self.error(CheckError::BadLoopAttr {
                why: format!("unknown attribute `{}`", h.name.name),
                span: h.name.span,
                fix: Some((h.name.span, "unroll".to_string())),
            });
            return None;
        }
        let Some(arg) = &h.arg else {
            return Some(ir::Unroll::Full);
        };
        let e = self.expr_as(arg, Scalar::U32)?;
        let Some(n) = ir::consteval::eval_int(&e) else {
            self.error(CheckError::NotConstant {
                span: arg.span,
                why: Some("an unrolling count is a constant".into()),
            });
            return None;
        };
        match u32::try_from(n) {
            Ok(n @ 1..=MAX_UNROLL) => Some(ir::Unroll::By(n)),
            _ => {
                self.error(CheckError::BadLoopAttr {
                    why: format!("`#[unroll({n})]` is not a count of 1 to {MAX_UNROLL} copies"),
                    span: arg.span,
                    fix: None,
                });
                None
            }
        }
    }

    fn loop_body(&mut self, body: &ast::Block) -> ir::Block {
        self.loop_depth += 1;
        let b = self.block(body);
        self.loop_depth -= 1;
        b
    }

    fn for_stmt(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        step: Option<&ast::Expr>,
        body: &ast::Block,
        hint: Option<&ast::LoopAttr>,
    ) -> Option<StmtKind> {
        let bounds = self.for_bounds(var, start, end, step, hint);
        self.for_rest(var, bounds, body)
    }

    /// A range `for` loop whose body indexes an accumulator (`acc[i]`):
    /// with constant bounds and at most [`MAX_ACCUM_TRIPS`] iterations it
    /// is a loop over the list of its values, unrolled at compile time
    /// whatever `--passes` says, so that each element it names is a
    /// register; otherwise an ordinary loop (whose indices the warpgroup
    /// pass then finds are not constants, E0418). A hint on it is moot.
    #[allow(clippy::too_many_arguments)]
    fn accum_for(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        step: Option<&ast::Expr>,
        body: &ast::Block,
        hint: Option<&ast::LoopAttr>,
        span: Span,
        out: &mut Vec<ir::Stmt>,
    ) {
        let marks = self.marks();
        let bounds = self.for_bounds(var, start, end, step, hint);
        let values = match (&bounds.start, &bounds.end, &bounds.step, bounds.ty) {
            (Some(a), Some(b), Some(s), Some(t)) => constant_range(a, b, s, t),
            _ => None,
        };
        let Some(values) = values else {
            let kind = self.for_rest(var, bounds, body);
            return self.lowered(kind, span, marks, out);
        };
        self.unrolled.push(Unrolled::default());
        let list = List {
            ty: bounds.ty,
            empty: values.is_empty(),
            values: values.into_iter().map(|v| Some((v, var.span))).collect(),
            items_span: start.span.to(end.span),
        };
        self.list_body(var, list, body, span, marks, out);
    }

    /// A range loop's bounds, step and hint, checked.
    fn for_bounds(
        &mut self,
        var: &ast::Ident,
        start: &ast::Expr,
        end: &ast::Expr,
        step: Option<&ast::Expr>,
        hint: Option<&ast::LoopAttr>,
    ) -> Bounds {
        let unroll = hint.and_then(|h| self.loop_hint(h));
        let (start_ir, end_ir) = self.unify_pair(start, end, None);
        let ty = start_ir.as_ref().or(end_ir.as_ref()).map(|e| e.ty);
        if let Some(t) = ty {
            if !t.is_int() {
                let span = start.span.to(end.span);
                self.error(CheckError::Mismatch {
                    expected: "integer".into(),
                    found: t.to_string(),
                    span,
                    note: Some("`for` loops count over integers".into()),
                    fix: None,
                });
            }
        }
        let ty_ok = ty.filter(|t| t.is_int());
        let step_ir = match (step, ty_ok) {
            (Some(s), Some(t)) => self.expr_as(s, t),
            (Some(s), None) => {
                let _ = self.expr(s, None);
                None
            }
            (None, Some(t)) => Some(self.constant(Value::Int(1), t, var.span)),
            (None, None) => None,
        };
        if let (Some(s), Some(step_expr)) = (step, &step_ir) {
            if let Some(v) = ir::consteval::eval_int(step_expr) {
                if v <= 0 {
                    self.error(CheckError::Mismatch {
                        expected: "a positive step".into(),
                        found: v.to_string(),
                        span: s.span,
                        note: Some("a `for` loop's step must be greater than zero".into()),
                        fix: None,
                    });
                }
            }
        }
        Bounds {
            start: start_ir,
            end: end_ir,
            step: step_ir,
            ty: ty_ok,
            unroll,
        }
    }

    /// A range loop's body, and the loop.
    fn for_rest(&mut self, var: &ast::Ident, b: Bounds, body: &ast::Block) -> Option<StmtKind> {
        let Bounds {
            start: start_ir,
            end: end_ir,
            step: step_ir,
            ty: ty_ok,
            unroll,
        } = b;
        self.push_scope();
        let local = self.declare_local(var, ty_ok.unwrap_or(Scalar::U32), false, "a loop variable");
        if ty_ok.is_none() {
            self.mark_used(local);
            self.poison(&var.name);
        }
        let body = self.loop_body(body);
        self.pop_scope();
        match (start_ir, end_ir, step_ir) {
            (Some(start), Some(end), Some(step)) => Some(StmtKind::For {
                var: local,
                start: Box::new(start),
                end: Box::new(end),
                step: Box::new(step),
                body,
                unroll,
            }),
            _ => {
                self.orphan(body);
                None
            }
        }
    }

    fn return_stmt(&mut self, value: Option<&ast::Expr>, span: Span) -> Option<StmtKind> {
        let ret = self.func.map(|(_, r)| r).unwrap_or(None);
        let bad_ret = self.func.is_some_and(|(f, _)| f.bad_ret);
        match (value, ret) {
            (Some(v), Some(t)) => Some(StmtKind::Return(Some(self.expr_as(v, t)?))),
            (Some(v), None) => {
                let e = self.expr(v, None)?;
                if !bad_ret {
                    let note = if self.kernel.is_some() {
                        "kernels return nothing"
                    } else {
                        "this function has no return type"
                    };
                    self.error(CheckError::Mismatch {
                        expected: "()".into(),
                        found: e.ty.to_string(),
                        span: v.span,
                        note: Some(note.into()),
                        fix: None,
                    });
                }
                None
            }
            (None, Some(t)) => {
                self.mismatch_text(t.to_string(), "()", span);
                None
            }
            (None, None) => Some(StmtKind::Return(None)),
        }
    }

    /// An expression statement: a call or barrier operation for its effect.
    /// `tail` is true for a block's final expression without `;`.
    fn effect(&mut self, e: &ast::Expr, tail: bool) -> Option<StmtKind> {
        match &e.kind {
            ast::ExprKind::Call {
                callee,
                args,
                named,
            } => match self.call(callee, args, ast::named_args(named), e.span, None) {
                Some(super::calls::CallResult::Effect(kind)) => Some(*kind),
                Some(super::calls::CallResult::Value(v)) => Some(StmtKind::Expr(v)),
                None => None,
            },
            ast::ExprKind::MethodCall {
                receiver,
                method,
                args,
            } => match self.method_call(receiver, method, args, e.span) {
                Some(super::calls::CallResult::Effect(kind)) => Some(*kind),
                Some(super::calls::CallResult::Value(v)) => Some(StmtKind::Expr(v)),
                None => None,
            },
            ast::ExprKind::Error => None,
            _ => {
                let v = self.expr(e, None);
                if let Some(v) = v {
                    let note = if tail {
                        "a block's final expression is its value, and this block's value is unused; add `;` or use the value"
                    } else {
                        "only calls and barrier operations can stand alone as statements"
                    };
                    self.error(CheckError::Mismatch {
                        expected: "()".into(),
                        found: v.ty.to_string(),
                        span: e.span,
                        note: Some(note.into()),
                        fix: None,
                    });
                }
                None
            }
        }
    }
}

/// The most iterations of a range loop that indexes an accumulator that
/// are unrolled (an accumulator has at most 128 elements per thread).
pub const MAX_ACCUM_TRIPS: i128 = 1024;

/// A loop over a list's elements, checked: their type (`None`: it failed),
/// whether there are none, each value where it checked.
struct List {
    ty: Option<Scalar>,
    empty: bool,
    values: Vec<Option<(Value, Span)>>,
    items_span: Span,
}

/// A range loop's parts, checked.
struct Bounds {
    start: Option<Expr>,
    end: Option<Expr>,
    step: Option<Expr>,
    /// The loop variable's type, an integer (`None`: it failed).
    ty: Option<Scalar>,
    unroll: Option<ir::LoopHint>,
}

/// The values `for v in start..end step step` takes, when all three are
/// constants and there are at most [`MAX_ACCUM_TRIPS`]: counting in `ty`,
/// it stops before the next value would reach `end` or pass the type's
/// largest value (language.md §5.5).
fn constant_range(start: &Expr, end: &Expr, step: &Expr, ty: Scalar) -> Option<Vec<Value>> {
    let (a, b, s) = (
        ir::consteval::eval_int(start)?,
        ir::consteval::eval_int(end)?,
        ir::consteval::eval_int(step)?,
    );
    if s <= 0 {
        return None;
    }
    let bits = ty.size() * 8;
    let max: i128 = if ty.is_signed_int() {
        (1i128 << (bits - 1)) - 1
    } else {
        (1i128 << bits) - 1
    };
    let trips = if b > a { (b - a + s - 1) / s } else { 0 };
    if trips > MAX_ACCUM_TRIPS {
        return None;
    }
    let mut out = Vec::new();
    let mut v = a;
    while v < b && v <= max {
        out.push(Value::Int(v));
        v += s;
    }
    Some(out)
}

/// True when control cannot fall off the end of these statements.
pub fn always_returns(stmts: &[ir::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If {
            then_block,
            else_block: Some(e),
            ..
        } => always_returns(&then_block.stmts) && always_returns(&e.stmts),
        StmtKind::While { cond, body } => {
            // `while true { ... }` without a `break` never falls through.
            matches!(cond.kind, ExprKind::Const(Value::Bool(true))) && !breaks(&body.stmts)
        }
        _ => false,
    })
}

fn breaks(stmts: &[ir::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Break => true,
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => breaks(&then_block.stmts) || else_block.as_ref().is_some_and(|b| breaks(&b.stmts)),
        _ => false,
    })
}
