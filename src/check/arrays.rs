//! Register arrays (language.md §5.8): `let mut acc: [f32; 8, 8] = [0.0;
//! 8, 8];`, their elements `acc[i, j]`, and what makes each element a
//! register:
//!
//! - while lowering, the declaration (E0442 for a value that does not fit
//!   the type, E0443 for an array no thread's registers hold, E0444 for an
//!   array type anywhere but a `let`), the places `acc[i, j]` (E0112,
//!   E0102), and [`array_loops`], the range `for` loops whose variable an
//!   index depends on, which the checker unrolls like loops over constant
//!   lists when their bounds are constants (`super::stmts`);
//! - once the body is lowered and analysed, [`register_indices`]: every
//!   index is a constant where it runs, in each run of the loops over
//!   lists around it (E0440), and within its dimension (E0441).
//!
//! The optimiser then gives each element a local of its own
//! (`crate::opt::registers`), before any pass.

use super::body::{Binding, BodyChecker};
use super::error::{CheckError, Suggestion};
use crate::analysis::values::{walk_runs, At, RunVisit, Values};
use crate::ir::{self, Body, Expr, ExprId, ExprKind, LocalId, Place, PlaceKind, Stmt, StmtKind};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;
use std::collections::{HashMap, HashSet};

/// The most register-array elements one function or kernel declares (its
/// arrays together, as written; what loops over lists copy counts toward
/// E0162 as well): each element becomes a local and a statement.
pub const MAX_BODY_ELEMENTS: u64 = 1 << 18;

/// The 32-bit registers an element of type `t` takes.
pub fn registers_of(t: Scalar) -> u64 {
    if t.size() == 8 {
        2
    } else {
        1
    }
}

/// A shape as written in kdsl: `8, 8`.
fn dims_text(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    parts.join(", ")
}

impl BodyChecker<'_> {
    /// `let mut? name (: [T; d0, ...])? = [v; d0, ...];` or `= [a, b, ...];`
    /// (or with no value, E0442): declares the register array.
    pub(super) fn let_array(
        &mut self,
        mutable: bool,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        init: Option<&ast::ArrayValue>,
        span: Span,
    ) -> Option<StmtKind> {
        // The written type's element type and dimensions (each `None`
        // where it failed), or `None` without a type.
        let written = ty.map(|t| self.written_array(name, t, init));
        let Some(init) = init else {
            self.missing_array_value(name, ty, written.as_ref());
            self.poison(&name.name);
            return None;
        };
        let elem = written.as_ref().and_then(|w| w.elem);
        let (values, value_dims, value_elem) = self.array_value(init, elem, written.is_some());
        if self.diags.misread(span) {
            self.poison(&name.name);
            return None;
        }
        let elem = match &written {
            Some(w) => w.elem,
            None => value_elem,
        };
        // The shape: the type's; without one, the value's.
        let dims = match (&written, &value_dims) {
            (Some(w), _) => w.dims.clone(),
            (None, ValueDims::Repeat(d)) => d.clone(),
            (None, ValueDims::List(n)) => Some(vec![*n as u64]),
        };
        let (Some(elem), Some(dims)) = (elem, dims) else {
            self.poison(&name.name);
            return None;
        };
        let mut ok = values.iter().all(Option::is_some);
        if let Some(w) = &written {
            ok &= self.value_fits(name, w, &dims, &value_dims, init, elem);
        }
        let Some(dims) = self.array_size(name, &dims, elem, init.span) else {
            self.poison(&name.name);
            return None;
        };
        let local = self.declare_local(name, elem, mutable, "a register array");
        if let Some(l) = self.locals.get_mut(local.index()) {
            l.dims = dims;
        }
        if !ok {
            self.mark_used(local);
            return None;
        }
        let values = values.into_iter().flatten().collect();
        Some(StmtKind::LetArray { local, values })
    }

    /// The element type and dimensions of the type `t` written for array
    /// `name` (E0442 for a scalar type given an array value, E0444 for
    /// an array of arrays).
    fn written_array(
        &mut self,
        name: &ast::Ident,
        t: &ast::TypeExpr,
        init: Option<&ast::ArrayValue>,
    ) -> Written {
        let ast::TypeExprKind::Array { elem, dims } = &t.kind else {
            // A scalar type (or `global`, which says so itself) and an
            // array value.
            let scalar = self.scalar_type(t);
            if let (Some(s), Some(v)) = (scalar, init) {
                let shape = match &v.kind {
                    ast::ArrayValueKind::List(items) => items.len().to_string(),
                    ast::ArrayValueKind::Repeat { dims, .. } => {
                        let parts: Vec<&str> = dims.iter().map(|d| self.text(d.span)).collect();
                        parts.join(", ")
                    }
                };
                let replacement = format!("[{s}; {shape}]");
                self.error(CheckError::ArrayValue {
                    name: name.name.to_string(),
                    why: format!("an array value for a variable of type `{s}`"),
                    label: "an array value".into(),
                    span: v.span,
                    ty: Some((t.span, "a scalar type")),
                    help: None,
                    fix: Some(Suggestion {
                        message: format!("declare a register array: `{replacement}`"),
                        span: t.span,
                        replacement,
                    }),
                });
            }
            return Written {
                elem: None,
                dims: None,
                span: t.span,
            };
        };
        let elem_ty = if let ast::TypeExprKind::Array {
            elem: inner,
            dims: inner_dims,
        } = &elem.kind
        {
            // `[[f32; 8]; 4]`, Rust's array of arrays: kdsl writes the
            // dimensions in one list, outermost first.
            let all: Vec<&str> = dims
                .iter()
                .chain(inner_dims)
                .map(|d| self.text(d.span))
                .collect();
            let replacement = format!("[{}; {}]", self.text(inner.span), all.join(", "));
            self.error(CheckError::ArrayTypeHere {
                span: elem.span,
                note: "a register array's elements are scalars; an array of several dimensions is written with them in one list, `[f32; 4, 8]`, and indexed `a[i, j]`".into(),
                fix: Some(Suggestion {
                    message: format!("write the dimensions in one list: `{replacement}`"),
                    span: t.span,
                    replacement,
                }),
            });
            None
        } else {
            self.scalar_type(elem)
        };
        let dims = self.array_dims(dims);
        Written {
            elem: elem_ty,
            dims,
            span: t.span,
        }
    }

    /// Constant dimensions, `u32`s (E0117 otherwise): `None` when one
    /// failed.
    fn array_dims(&mut self, dims: &[ast::Expr]) -> Option<Vec<u64>> {
        let mut out = Vec::with_capacity(dims.len());
        let mut ok = true;
        for d in dims {
            match self.const_size(d, Some(Scalar::U32)) {
                Some(v) => out.push(u64::try_from(v).unwrap_or(u64::MAX)),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// The values of an array value, checked against the element type
    /// `elem` where known: one for `[v; d0, ...]`, one per element for a
    /// list (each `None` where it failed), its shape, and the element type
    /// its values give (the first typed one's, as a list loop's elements
    /// unify; without a type and context, `i32` and `f32`).
    fn array_value(
        &mut self,
        v: &ast::ArrayValue,
        elem: Option<Scalar>,
        typed: bool,
    ) -> (Vec<Option<Expr>>, ValueDims, Option<Scalar>) {
        match &v.kind {
            ast::ArrayValueKind::Repeat { value, dims } => {
                let e = match elem {
                    Some(t) => self.expr_as(value, t),
                    None if typed => {
                        let _ = self.expr(value, None);
                        None
                    }
                    None => self.expr(value, None),
                };
                let ty = e.as_ref().map(|e| e.ty);
                let dims = self.array_dims(dims);
                (vec![e], ValueDims::Repeat(dims), ty)
            }
            ast::ArrayValueKind::List(items) => {
                let mut out: Vec<Option<Expr>> = Vec::with_capacity(items.len());
                let ty = match elem {
                    Some(t) => {
                        for i in items {
                            out.push(self.expr_as(i, t));
                        }
                        Some(t)
                    }
                    None if typed => {
                        for i in items {
                            let _ = self.expr(i, None);
                            out.push(None);
                        }
                        None
                    }
                    None => {
                        let lead = items.iter().position(|e| !e.untyped).unwrap_or(0);
                        let mut lead_expr = items.get(lead).and_then(|e| self.expr(e, None));
                        let ty = lead_expr.as_ref().map(|e| e.ty);
                        for (i, item) in items.iter().enumerate() {
                            out.push(match (i == lead, ty) {
                                (true, _) => lead_expr.take(),
                                (false, Some(t)) => self.expr_as(item, t),
                                (false, None) => self.expr(item, None),
                            });
                        }
                        ty
                    }
                };
                (out, ValueDims::List(items.len()), ty)
            }
        }
    }

    /// Whether the value's shape is the type's (E0442 otherwise).
    fn value_fits(
        &mut self,
        name: &ast::Ident,
        w: &Written,
        dims: &[u64],
        value: &ValueDims,
        init: &ast::ArrayValue,
        elem: Scalar,
    ) -> bool {
        let elements = dims
            .iter()
            .fold(1u128, |n, &d| n.saturating_mul(u128::from(d)));
        let (why, label, help) = match value {
            ValueDims::Repeat(Some(d)) if d.as_slice() != dims => (
                format!(
                    "a value of shape `[{elem}; {}]` for an array of type `[{elem}; {}]`",
                    dims_text(d),
                    dims_text(dims)
                ),
                format!("`[{elem}; {}]`", dims_text(d)),
                Some(format!(
                    "`[v; {}]` gives every element the value `v`",
                    dims_text(dims)
                )),
            ),
            ValueDims::List(n) if (*n as u128) != elements => (
                format!(
                    "{n} {} for {elements} {}",
                    if *n == 1 { "value" } else { "values" },
                    if elements == 1 { "element" } else { "elements" }
                ),
                format!("{n} {}", if *n == 1 { "value" } else { "values" }),
                Some(if dims.len() > 1 {
                    format!(
                        "a list gives every element of `[{elem}; {}]`, row-major (the last index varies fastest); `[v; {}]` gives them all one value",
                        dims_text(dims),
                        dims_text(dims)
                    )
                } else {
                    format!(
                        "a list gives every element; `[v; {}]` gives them all one value",
                        dims_text(dims)
                    )
                }),
            ),
            _ => return true,
        };
        self.error(CheckError::ArrayValue {
            name: name.name.to_string(),
            why,
            label,
            span: init.span,
            ty: Some((w.span, "the array's type")),
            help,
            fix: None,
        });
        false
    }

    /// `let acc: [f32; 8];` without a value (E0442, with a fix that gives
    /// every element 0).
    fn missing_array_value(
        &mut self,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        written: Option<&Written>,
    ) {
        let Some(t) = ty else {
            return;
        };
        let zero = match written.and_then(|w| w.elem) {
            Some(Scalar::Bool) => "false",
            _ => "0",
        };
        let dims: Vec<&str> = match &t.kind {
            ast::TypeExprKind::Array { dims, .. } => {
                dims.iter().map(|d| self.text(d.span)).collect()
            }
            _ => Vec::new(),
        };
        let replacement = format!(" = [{zero}; {}]", dims.join(", "));
        self.error(CheckError::ArrayValue {
            name: name.name.to_string(),
            why: "declared without a value".into(),
            label: "a `let` has a value".into(),
            span: t.span,
            ty: None,
            help: None,
            fix: Some(Suggestion {
                message: format!(
                    "give every element a first value: `{}`",
                    replacement.trim_start()
                ),
                span: Span {
                    start: t.span.end,
                    ..t.span
                },
                replacement,
            }),
        });
    }

    /// The dimensions as `u32`s when the array fits a thread's registers
    /// (E0443 otherwise: a dimension of 0, more than
    /// [`ir::REGS_PER_THREAD`] registers, or past the body's
    /// [`MAX_BODY_ELEMENTS`]).
    fn array_size(
        &mut self,
        name: &ast::Ident,
        dims: &[u64],
        elem: Scalar,
        span: Span,
    ) -> Option<Vec<u32>> {
        let elements = dims
            .iter()
            .fold(1u128, |n, &d| n.saturating_mul(u128::from(d)));
        let regs = elements.saturating_mul(u128::from(registers_of(elem)));
        let error = |why: String, label: String| CheckError::ArraySize {
            name: name.name.to_string(),
            why,
            label,
            span,
        };
        if dims.contains(&0) {
            self.error(error(
                "has no elements".into(),
                format!("`[{elem}; {}]` has a dimension of 0", dims_text(dims)),
            ));
            return None;
        }
        if regs > u128::from(ir::REGS_PER_THREAD) {
            let what = if registers_of(elem) == 2 {
                format!("{elements} elements of `{elem}`, two registers each")
            } else {
                format!("{elements} elements")
            };
            self.error(error(
                format!(
                    "needs {regs} registers, more than the {} a thread has",
                    ir::REGS_PER_THREAD
                ),
                what,
            ));
            return None;
        }
        let total = self.array_elements.saturating_add(elements as u64);
        if total > MAX_BODY_ELEMENTS {
            self.error(error(
                format!(
                    "makes this function's register arrays hold {total} elements, more than {MAX_BODY_ELEMENTS}"
                ),
                format!("{elements} more elements"),
            ));
            return None;
        }
        self.array_elements = total;
        Some(dims.iter().map(|&d| d as u32).collect())
    }

    /// `acc[i, j]`, an element of register array `l`: one integer index
    /// per dimension (E0112); written only when the array is `mut`
    /// (E0102). Whether each index is a constant within its dimension is
    /// [`register_indices`]'s question.
    pub(super) fn register_place(
        &mut self,
        l: LocalId,
        name: &ast::Ident,
        indices: &[ast::IndexArg],
        index_span: Span,
        span: Span,
        for_write: bool,
    ) -> Option<(Place, Span)> {
        let (elem, dims, mutable, decl) = {
            let a = self.local(l)?;
            (a.ty, a.dims.len(), a.mutable, a.span)
        };
        self.reference(name.span, decl);
        self.mark_used(l);
        let idx = self.indices(indices);
        if indices.len() != dims {
            self.error(CheckError::IndexCount {
                name: name.name.to_string(),
                dims,
                found: indices.len(),
                span: index_span,
                decl: Some(decl),
            });
            return None;
        }
        if for_write && !mutable {
            self.error(CheckError::AssignImmutable {
                name: name.name.to_string(),
                span,
                decl: Some(decl),
                what: "a register array declared without `mut`",
                fix: Some(Suggestion {
                    message: format!("make this array mutable: `mut {}`", name.name),
                    span: Span {
                        end: decl.start,
                        ..decl
                    },
                    replacement: "mut ".to_string(),
                }),
            });
            return None;
        }
        Some((
            Place {
                kind: PlaceKind::Register {
                    array: l,
                    indices: idx?,
                },
                elem,
                span,
            },
            name.span,
        ))
    }

    /// `let acc: [f32; 4] = x;`: an array type with a scalar value
    /// (E0442). The name is poisoned: its uses say nothing more.
    pub(super) fn array_given_scalar(
        &mut self,
        name: &ast::Ident,
        t: &ast::TypeExpr,
        init: &ast::Expr,
    ) -> Option<StmtKind> {
        let w = self.written_array(name, t, None);
        let v = match w.elem {
            Some(e) => self.expr_as(init, e),
            None => self.expr(init, None),
        };
        if v.is_some() && !self.diags.misread(init.span) {
            let (dims, fix) = match &t.kind {
                ast::TypeExprKind::Array { dims, .. } => {
                    let parts: Vec<&str> = dims.iter().map(|d| self.text(d.span)).collect();
                    let dims = parts.join(", ");
                    let fix = Suggestion {
                        message: format!(
                            "give every element this value: `[{}; {dims}]`",
                            self.text(init.span)
                        ),
                        span: init.span,
                        replacement: format!("[{}; {dims}]", self.text(init.span)),
                    };
                    (dims, Some(fix))
                }
                _ => (String::new(), None),
            };
            self.error(CheckError::ArrayValue {
                name: name.name.to_string(),
                why: "a scalar value for an array".into(),
                label: "a scalar, not an array value".into(),
                span: init.span,
                ty: Some((t.span, "the array's type")),
                help: Some(format!(
                    "an array's value is `[v; {dims}]` (every element `v`) or a list of every element, `[a, b, ...]`"
                )),
                fix,
            });
        }
        self.poison(&name.name);
        None
    }

    /// Whether `l` is a register array.
    pub(super) fn is_array(&self, l: LocalId) -> bool {
        self.local(l).is_some_and(ir::Local::is_array)
    }

    /// `acc` alone, where a value is wanted: E0112, as for a shared array.
    pub(super) fn array_as_value(&mut self, l: LocalId, name: &ast::Ident) {
        let Some((dims, decl)) = self.local(l).map(|a| (a.dims.len(), a.span)) else {
            return;
        };
        self.mark_used(l);
        self.reference(name.span, decl);
        self.error(CheckError::IndexCount {
            name: name.name.to_string(),
            dims,
            found: 0,
            span: name.span,
            decl: Some(decl),
        });
    }

    /// A binding's register array, if it is one.
    pub(super) fn array_binding(&self, b: Option<Binding>) -> Option<LocalId> {
        match b {
            Some(Binding::Local(l)) if self.is_array(l) => Some(l),
            _ => None,
        }
    }
}

/// A written array type, checked.
struct Written {
    elem: Option<Scalar>,
    dims: Option<Vec<u64>>,
    span: Span,
}

/// The shape an array value gives: a repeat's dimensions (`None` where
/// one failed), or a list's length.
enum ValueDims {
    Repeat(Option<Vec<u64>>),
    List(usize),
}

// ---- the range loops a register index depends on -------------------------

/// The range `for` loops of a body (by span) whose variable an index of a
/// register array depends on: directly (`acc[i]`), or through immutable
/// variables bound to expressions of it (`let r = 2 * i; acc[r]`). The
/// checker unrolls such a loop at compile time when its bounds are
/// constants, as it does a loop over a constant list, so that each index
/// is a constant in each copy. One walk of the body, with its scopes.
pub fn array_loops(body: &ast::Block) -> HashSet<Span> {
    let mut w = Loops::default();
    w.block(body);
    w.found
}

/// What a name in scope is, to this walk.
#[derive(Clone, Debug)]
enum Name {
    Array,
    /// A loop variable, or an immutable variable computed from some: the
    /// loops (by span) whose variables it depends on.
    Loops(Vec<Span>),
    Other,
}

#[derive(Default)]
struct Loops {
    /// Each name's meanings, innermost last.
    names: HashMap<String, Vec<Name>>,
    /// The names each open scope bound.
    scopes: Vec<Vec<String>>,
    found: HashSet<Span>,
}

impl Loops {
    fn bind(&mut self, name: &str, n: Name) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_string());
            self.names.entry(name.to_string()).or_default().push(n);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Name> {
        self.names.get(name).and_then(|v| v.last())
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(Vec::new());
        f(self);
        for name in self.scopes.pop().unwrap_or_default() {
            if let Some(v) = self.names.get_mut(&name) {
                v.pop();
            }
        }
    }

    fn block(&mut self, b: &ast::Block) {
        self.scoped(|w| {
            for s in &b.stmts {
                w.stmt(s);
            }
            if let Some(t) = &b.tail {
                w.expr(t);
            }
        });
    }

    /// The loops the names in `e` depend on.
    fn depends(&self, e: &ast::Expr, out: &mut Vec<Span>) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            use ast::ExprKind as E;
            match &e.kind {
                E::Name(n) => {
                    if let Some(Name::Loops(l)) = self.lookup(&n.name) {
                        out.extend(l.iter().copied());
                    }
                }
                E::Field { base, .. } => stack.push(base),
                E::Index { base, indices, .. } => {
                    stack.push(base);
                    for i in indices {
                        if let ast::IndexArg::Expr(x) = i {
                            stack.push(x);
                        }
                    }
                }
                E::Call { args, named, .. } => {
                    stack.extend(args.iter());
                    stack.extend(ast::named_args(named).iter().map(|n| &n.value));
                }
                E::MethodCall { receiver, args, .. } => {
                    stack.push(receiver);
                    stack.extend(args.iter());
                }
                E::Unary { operand, .. } => stack.push(operand),
                E::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                E::Cast { expr, .. } | E::Paren(expr) => stack.push(expr),
                E::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    stack.push(cond);
                    stack.extend(then_block.tail.as_deref());
                    stack.extend(else_block.tail.as_deref());
                }
                E::Int { .. } | E::WideInt(_) | E::Float { .. } | E::Bool(_) | E::Error => {}
            }
        }
    }

    fn stmt(&mut self, s: &ast::Stmt) {
        use ast::StmtKind as S;
        match &s.kind {
            S::Let {
                mutable,
                name,
                init,
                ..
            } => {
                self.expr(init);
                let mut loops = Vec::new();
                if !mutable {
                    self.depends(init, &mut loops);
                }
                let n = if loops.is_empty() {
                    Name::Other
                } else {
                    Name::Loops(loops)
                };
                self.bind(&name.name, n);
            }
            S::LetArray { name, init, .. } => {
                match init.as_ref().map(|v| &v.kind) {
                    Some(ast::ArrayValueKind::List(items)) => {
                        items.iter().for_each(|x| self.expr(x))
                    }
                    Some(ast::ArrayValueKind::Repeat { value, .. }) => self.expr(value),
                    None => {}
                }
                self.bind(&name.name, Name::Array);
            }
            S::LetTuple { names, init, .. } => {
                self.expr(init);
                for n in names {
                    self.bind(&n.name.name, Name::Other);
                }
            }
            S::Assign { place, value, .. } => {
                self.expr(place);
                self.expr(value);
            }
            S::If {
                cond,
                then_block,
                else_branch,
            } => {
                self.expr(cond);
                self.block(then_block);
                match else_branch {
                    Some(ast::ElseBranch::Block(b)) => self.block(b),
                    Some(ast::ElseBranch::If(s)) => self.scoped(|w| w.stmt(s)),
                    None => {}
                }
            }
            S::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            S::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                self.expr(start);
                self.expr(end);
                if let Some(st) = step {
                    self.expr(st);
                }
                let span = s.span;
                self.scoped(|w| {
                    w.bind(&var.name, Name::Loops(vec![span]));
                    w.block(body);
                });
            }
            S::ForList {
                var, items, body, ..
            } => {
                items.iter().for_each(|x| self.expr(x));
                self.scoped(|w| {
                    w.bind(&var.name, Name::Other);
                    w.block(body);
                });
            }
            S::Return(Some(e)) | S::Expr(e) => self.expr(e),
            S::Shared { name, .. } | S::Accum { name, .. } => self.bind(&name.name, Name::Other),
            S::Barrier(b) => self.bind(&b.name.name, Name::Other),
            S::Return(None) | S::Break | S::Continue | S::Error => {}
        }
    }

    /// Finds the register indices in `e` (and in the blocks of its `if`s).
    fn expr(&mut self, e: &ast::Expr) {
        use ast::ExprKind as E;
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match &e.kind {
                E::Index { base, indices, .. } => {
                    let array = matches!(&base.kind, E::Name(n) if matches!(self.lookup(&n.name), Some(Name::Array)));
                    if array {
                        let mut loops = Vec::new();
                        for i in indices {
                            if let ast::IndexArg::Expr(x) = i {
                                self.depends(x, &mut loops);
                            }
                        }
                        self.found.extend(loops);
                    }
                    stack.push(base);
                    for i in indices {
                        match i {
                            ast::IndexArg::Expr(x) => stack.push(x),
                            ast::IndexArg::Range { lo, hi, .. } => {
                                stack.extend(lo.iter().chain(hi));
                            }
                        }
                    }
                }
                E::Field { base, .. } => stack.push(base),
                E::Call { args, named, .. } => {
                    stack.extend(args.iter());
                    stack.extend(ast::named_args(named).iter().map(|n| &n.value));
                }
                E::MethodCall { receiver, args, .. } => {
                    stack.push(receiver);
                    stack.extend(args.iter());
                }
                E::Unary { operand, .. } => stack.push(operand),
                E::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                E::Cast { expr, .. } | E::Paren(expr) => stack.push(expr),
                E::If {
                    cond,
                    then_block,
                    else_block,
                } => {
                    stack.push(cond);
                    self.block(then_block);
                    self.block(else_block);
                }
                E::Int { .. }
                | E::WideInt(_)
                | E::Float { .. }
                | E::Bool(_)
                | E::Name(_)
                | E::Error => {}
            }
        }
    }
}

// ---- after the analysis: every index a constant within its dimension ------

/// E0440 for each index of a register array that is not a compile-time
/// constant where it runs, E0441 for one outside its dimension: in each
/// run of the loops over constant lists around it (a range loop the
/// checker unrolled is one), with the values of immutable locals that the
/// analysis knows (what the optimiser reads once the lists are unrolled,
/// `crate::opt::registers`). Each index is reported once.
pub fn register_indices(body: &Body, values: &Values) -> Vec<CheckError> {
    let mut f = Indices {
        body,
        values,
        reported: HashSet::new(),
        found: Vec::new(),
    };
    walk_runs(body, values, &mut f);
    f.found
}

struct Indices<'ir, 'v> {
    body: &'ir Body,
    values: &'v Values,
    reported: HashSet<ExprId>,
    found: Vec<CheckError>,
}

impl Indices<'_, '_> {
    fn place(&mut self, p: &Place, at: At) {
        let PlaceKind::Register { array, indices } = &p.kind else {
            return;
        };
        let Some(a) = self.body.locals.get(array.index()) else {
            return;
        };
        for (d, (i, &len)) in indices.iter().zip(&a.dims).enumerate() {
            if self.reported.contains(&i.id) {
                continue;
            }
            let e = match self.values.int(i, at) {
                None => CheckError::ArrayIndexNotConstant {
                    name: a.name.clone(),
                    span: i.span,
                    decl: a.span,
                },
                Some(v) if !(0..i128::from(len)).contains(&v) => {
                    CheckError::ArrayIndexOutOfBounds {
                        name: a.name.clone(),
                        index: v,
                        dim: d,
                        len,
                        dims: a.dims.len(),
                        span: i.span,
                        decl: a.span,
                    }
                }
                Some(_) => continue,
            };
            self.reported.insert(i.id);
            self.found.push(e);
        }
    }
}

impl<'ir> RunVisit<'ir> for Indices<'ir, '_> {
    fn expr(&mut self, e: &'ir Expr, at: At) {
        if let ExprKind::Load(p) = &e.kind {
            self.place(p, at);
        }
    }

    fn stmt(&mut self, s: &'ir Stmt, at: At) {
        if let StmtKind::Store { place, .. } = &s.kind {
            self.place(place, at);
        }
    }
}
