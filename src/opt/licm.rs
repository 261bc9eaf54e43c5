//! Loop-invariant shared-memory addresses (pass `licm`).
//!
//! `tb[ty, tx] = v` in a loop where `ty` and `tx` do not change computes
//! the same address (`base + (ty * 16 + tx) * 4`) in every iteration, and
//! ptxas does not always hoist it (sgemm_tiled's tile store). This pass
//! computes it once, before the outermost loop it is invariant in, as
//! `let $a = &tb[ty, tx]` ([`ExprKind::AddrOf`]), and reads or writes the
//! element through `tb@[$a]` ([`PlaceKind::SharedAt`]). Only the address
//! moves: the access stays where it was, so no load, store, barrier, bulk
//! copy or fence moves relative to another, and computing an address has no
//! effect even when the loop runs zero times. Swizzled arrays are left
//! alone: their elements' addresses are not a base plus constants.
//!
//! An index is invariant when it is built from constants, special
//! registers, scalar parameters and locals the loop never assigns, with
//! arithmetic only (no loads or calls). Places whose indices are all
//! constants are left alone (their address is an immediate already), as
//! are atomics and bulk copies, and loops over [`MAX_BODY`] IR nodes.

use super::rewrite;
use crate::ir::consteval;
use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{
    BinOp, Block, Body, Expr, ExprKind, LocalId, Module, Place, PlaceKind, SharedArray, SharedId,
    Stmt, StmtKind, Value,
};
use crate::span::Span;
use crate::types::Scalar;

/// The most IR nodes a loop's body may have for its addresses to be
/// hoisted (each loop's body is walked whole: this keeps a deep nest of
/// loops linear).
pub const MAX_BODY: usize = 2048;

/// Hoists every invariant shared address of `module`'s kernels; whether
/// any was.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    for k in &mut module.kernels {
        let mut b = std::mem::take(&mut k.body.block);
        let c = block(&k.shared, &mut k.body, &mut b);
        k.body.block = b;
        if c {
            // The addresses and their reads were built without ids.
            k.body.renumber();
            changed = true;
        }
    }
    changed
}

/// Hoists out of each loop of `b` (outermost first), recursively.
fn block(shared: &[SharedArray], body: &mut Body, b: &mut Block) -> bool {
    let mut changed = false;
    let old = std::mem::take(&mut b.stmts);
    b.stmts.reserve_exact(old.len());
    for mut s in old {
        let mut hoisted = Vec::new();
        if let StmtKind::For { body: lb, .. } | StmtKind::While { body: lb, .. } = &s.kind {
            if rewrite::size_within(lb, MAX_BODY).is_some() {
                hoisted = hoist(shared, body, &mut s);
            }
        }
        changed |= !hoisted.is_empty();
        changed |= nested(shared, body, &mut s);
        b.stmts.extend(hoisted);
        b.stmts.push(s);
    }
    // Exact size again: every block of the program passes through here.
    b.stmts.shrink_to_fit();
    changed
}

fn nested(shared: &[SharedArray], body: &mut Body, s: &mut Stmt) -> bool {
    match &mut s.kind {
        StmtKind::If {
            then_block,
            else_block,
            ..
        } => {
            let mut c = block(shared, body, then_block);
            if let Some(e) = else_block {
                c |= block(shared, body, e);
            }
            c
        }
        StmtKind::While { body: b, .. } | StmtKind::For { body: b, .. } => block(shared, body, b),
        _ => false,
    }
}

/// The `let $a = &array[...]` statements to put before the loop `s`, whose
/// body now uses them.
fn hoist(shared: &[SharedArray], body: &mut Body, s: &mut Stmt) -> Vec<Stmt> {
    let (lb, var) = match &mut s.kind {
        StmtKind::For { var, body, .. } => (body, Some(*var)),
        StmtKind::While { body, .. } => (body, None),
        _ => return Vec::new(),
    };
    // The locals the loop changes (or declares: a fresh value each
    // iteration); the rewrite adds no assignments.
    let assigned = rewrite::assigned_locals(lb);
    let mut found = Vec::new();
    let mut r = Rewrite {
        shared,
        assigned: &assigned,
        var,
        hoisted: &mut found,
        body,
    };
    r.visit_block_mut(lb);
    found
        .into_iter()
        .map(|(local, place)| {
            let span = place.span;
            let value = Expr::new(ExprKind::AddrOf(Box::new(place)), Scalar::U32, span);
            Stmt::new(StmtKind::Let { local, value }, span)
        })
        .collect()
}

struct Rewrite<'a> {
    shared: &'a [SharedArray],
    assigned: &'a [LocalId],
    var: Option<LocalId>,
    hoisted: &'a mut Vec<(LocalId, Place)>,
    body: &'a mut Body,
}

impl Rewrite<'_> {
    fn invariant(&self, e: &Expr) -> bool {
        rewrite::invariant(e, self.assigned, self.var)
    }

    /// `tb@[$a + c]` for `tb[indices]`, `$a` holding the address of the
    /// place with the constant addends of its indices taken out (so that
    /// `tb[j, tx]` for `j = 0..16` shares one `$a` and differs in the
    /// immediate offset `c`), hoisted once per distinct base; `None` when
    /// the place does not qualify.
    fn address(&mut self, array: SharedId, indices: &[Expr], span: Span) -> Option<Expr> {
        let dims = self.shared.get(array.index())?;
        // A swizzled element's address is not the base's plus a constant.
        if dims.swizzle != crate::ir::Swizzle::None {
            return None;
        }
        let (elem, dims) = (dims.elem, dims.dims.clone());
        if dims.len() != indices.len() {
            return None;
        }
        let mut base_indices = Vec::with_capacity(indices.len());
        let mut off: i128 = 0;
        let mut variable = false;
        for (k, index) in indices.iter().enumerate() {
            let (var, c) = split(index);
            let stride: i128 = dims.iter().skip(k + 1).map(|&d| i128::from(d)).product();
            off = off.wrapping_add(c.wrapping_mul(stride)) & 0xffff_ffff;
            match var {
                Some(v) if self.invariant(v) => {
                    variable = true;
                    base_indices.push(v.clone());
                }
                Some(_) => return None,
                None => base_indices.push(Expr::new(
                    ExprKind::Const(Value::Int(0)),
                    index.ty,
                    index.span,
                )),
            }
        }
        if !variable {
            return None;
        }
        let bytes = off.wrapping_mul(i128::from(elem.size())) & 0xffff_ffff;
        let local = match self.hoisted.iter().find(|(_, q)| match &q.kind {
            PlaceKind::Shared {
                array: qa,
                indices: qi,
            } => {
                *qa == array
                    && qi
                        .iter()
                        .zip(&base_indices)
                        .all(|(a, b)| rewrite::same(a, b))
            }
            _ => false,
        }) {
            Some((l, _)) => *l,
            None => {
                let l = self.body.fresh_local(Scalar::U32, span);
                let place = Place {
                    kind: PlaceKind::Shared {
                        array,
                        indices: base_indices,
                    },
                    elem,
                    span,
                };
                self.hoisted.push((l, place));
                l
            }
        };
        let a = Expr::new(ExprKind::Local(local), Scalar::U32, span);
        Some(if bytes == 0 {
            a
        } else {
            let c = Expr::new(ExprKind::Const(Value::Int(bytes)), Scalar::U32, span);
            Expr::new(
                ExprKind::Binary(BinOp::Add, Box::new(a), Box::new(c)),
                Scalar::U32,
                span,
            )
        })
    }

    fn place(&mut self, p: &mut Place) {
        let PlaceKind::Shared { array, indices } = &p.kind else {
            return;
        };
        let array = *array;
        if let Some(addr) = self.address(array, indices, p.span) {
            p.kind = PlaceKind::SharedAt { array, addr };
        }
    }
}

/// An index as its variable part and constant addend: `c` is `(None, c)`,
/// `x + c` and `c + x` are `(x, c)`, `x - c` is `(x, -c)`, anything else is
/// `(x, 0)`. (Index arithmetic wraps like the 32-bit address it feeds.)
fn split(e: &Expr) -> (Option<&Expr>, i128) {
    if let Some(c) = consteval::eval_int(e) {
        return (None, c);
    }
    if let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = &e.kind {
        if let Some(c) = consteval::eval_int(b) {
            return (
                Some(a),
                if *op == BinOp::Add {
                    c
                } else {
                    c.wrapping_neg()
                },
            );
        }
        if let (BinOp::Add, Some(c)) = (op, consteval::eval_int(a)) {
            return (Some(b), c);
        }
    }
    (Some(e), 0)
}

impl VisitMut for Rewrite<'_> {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let StmtKind::Store { place, .. }
        | StmtKind::LoadVector { place, .. }
        | StmtKind::StoreVector { place, .. } = &mut s.kind
        {
            self.place(place);
        }
        visit_mut::walk_stmt_mut(self, s);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let ExprKind::Load(p) = &mut e.kind {
            self.place(p);
        }
        visit_mut::walk_expr_mut(self, e);
    }
}

#[cfg(test)]
mod tests;
