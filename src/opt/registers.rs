//! Register arrays made registers (language.md §5.8): like the unrolling
//! of loops over constant lists ([`super::lists`]), not a pass that
//! `--passes` can switch off but what a register array means, so
//! [`super::run`] does it right after the lists, before any pass, and no
//! pass and no writer sees a register array.
//!
//! Each element of each array becomes a scalar local of its own
//! (`acc[1, 2]` in `--emit ir`), which the PTX writer gives a register:
//! the array's `let` becomes one `let` per element (a value given to every
//! element is evaluated once, into the first, and the others copy it,
//! unless it is a constant), a read of an element is a read of its local,
//! and a store (`acc[i, j] += a * b`) an assignment (`x = x + a * b`,
//! which the writer contracts to one `fma` as it does for any variable).
//! Every index is a constant by now: the checker made sure of it in each
//! run of the loops over lists (E0440, E0441), which are unrolled, so the
//! values of immutable locals ([`Values`], at the top level) give each.

use crate::analysis::values::{At, Values};
use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{
    Block, Body, Expr, ExprKind, Local, LocalId, Module, Place, PlaceKind, Stmt, StmtKind,
};
use crate::span::Span;

/// Makes every register array of `module` registers; whether there was
/// one.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    for k in &mut module.kernels {
        if k.body.locals.iter().any(Local::is_array) {
            let values = Values::of_kernel(k);
            changed |= lower(&mut k.body, &values);
        }
    }
    for f in &mut module.functions {
        if f.body.locals.iter().any(Local::is_array) {
            let values = Values::of_function(&f.body);
            changed |= lower(&mut f.body, &values);
        }
    }
    changed
}

/// Gives each array of `body` its element locals and rewrites the body to
/// use them.
fn lower(body: &mut Body, values: &Values) -> bool {
    let mut elements: Vec<Vec<LocalId>> = vec![Vec::new(); body.locals.len()];
    for a in 0..body.locals.len() {
        let Some(l) = body.locals.get(a).filter(|l| l.is_array()).cloned() else {
            continue;
        };
        let n = l.elements();
        let mut out = Vec::with_capacity(n as usize);
        for flat in 0..n {
            let id = body.fresh_local(l.ty, l.span);
            if let Some(e) = body.locals.get_mut(id.index()) {
                e.mutable = l.mutable;
                e.name = element_name(&l, flat);
            }
            out.push(id);
        }
        if let Some(slot) = elements.get_mut(a) {
            *slot = out;
        }
    }
    let mut block = std::mem::take(&mut body.block);
    let mut r = Lower {
        body,
        values,
        elements: &elements,
    };
    r.visit_block_mut(&mut block);
    body.block = block;
    true
}

/// `acc[1, 2]`: the name of element `flat` (row-major) of array `a`.
fn element_name(a: &Local, flat: u32) -> String {
    let mut idx = vec![0u32; a.dims.len()];
    let mut rest = flat;
    for (i, d) in a.dims.iter().enumerate().rev() {
        if let Some(slot) = idx.get_mut(i) {
            *slot = rest % d.max(&1);
        }
        rest /= d.max(&1);
    }
    let parts: Vec<String> = idx.iter().map(u32::to_string).collect();
    format!("{}[{}]", a.name, parts.join(", "))
}

struct Lower<'a> {
    body: &'a mut Body,
    values: &'a Values,
    /// The element locals of each array, by the array's local.
    elements: &'a [Vec<LocalId>],
}

impl Lower<'_> {
    /// The local of the element a register place names, when its indices
    /// are known (always, in a checked module).
    fn element(&self, p: &Place) -> Option<LocalId> {
        let PlaceKind::Register { array, indices } = &p.kind else {
            return None;
        };
        let a = self.body.locals.get(array.index())?;
        let idx: Option<Vec<i128>> = indices
            .iter()
            .map(|i| self.values.int(i, At::TOP))
            .collect();
        let flat = a.flat_index(&idx?)?;
        self.elements
            .get(array.index())?
            .get(flat as usize)
            .copied()
    }

    fn read(&mut self, local: LocalId, like: &Expr) -> Expr {
        let ty = self
            .body
            .locals
            .get(local.index())
            .map_or(like.ty, |l| l.ty);
        self.body.expr(ExprKind::Local(local), ty, like.span)
    }

    /// The statements a register array's `let` becomes.
    fn let_array(&mut self, local: LocalId, values: Vec<Expr>, span: Span, out: &mut Vec<Stmt>) {
        let elems = self
            .elements
            .get(local.index())
            .cloned()
            .unwrap_or_default();
        if values.len() == elems.len() {
            for (l, v) in elems.into_iter().zip(values) {
                out.push(self.body.stmt(StmtKind::Let { local: l, value: v }, span));
            }
            return;
        }
        let Some(value) = values.into_iter().next() else {
            return;
        };
        let constant = matches!(value.kind, ExprKind::Const(_));
        let mut first: Option<LocalId> = None;
        for (k, l) in elems.into_iter().enumerate() {
            let v = match (k, first) {
                (0, _) => value.clone(),
                _ if constant => self.body.ids.copy_expr(&value),
                (_, Some(f)) => self.read(f, &value),
                (_, None) => self.body.ids.copy_expr(&value),
            };
            first.get_or_insert(l);
            out.push(self.body.stmt(StmtKind::Let { local: l, value: v }, span));
        }
    }
}

impl VisitMut for Lower<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let old = std::mem::take(&mut b.stmts);
        let mut out: Vec<Stmt> = Vec::with_capacity(old.len());
        for mut s in old {
            visit_mut::walk_stmt_mut(self, &mut s);
            match s.kind {
                StmtKind::LetArray { local, values } => {
                    self.let_array(local, values, s.span, &mut out);
                }
                StmtKind::Store { place, op, value } => match self.element(&place) {
                    Some(l) => {
                        let value = match op {
                            None => value,
                            Some(op) => {
                                let current = self.read(l, &value);
                                let ty = current.ty;
                                let span = s.span;
                                self.body.expr(
                                    ExprKind::Binary(op, Box::new(current), Box::new(value)),
                                    ty,
                                    span,
                                )
                            }
                        };
                        out.push(Stmt {
                            kind: StmtKind::Assign { local: l, value },
                            ..s
                        });
                    }
                    None => out.push(Stmt {
                        kind: StmtKind::Store { place, op, value },
                        ..s
                    }),
                },
                kind => out.push(Stmt { kind, ..s }),
            }
        }
        b.stmts = out;
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::walk_expr_mut(self, e);
        if let ExprKind::Load(p) = &e.kind {
            if let Some(l) = self.element(p) {
                e.kind = ExprKind::Local(l);
            }
        }
    }
}
