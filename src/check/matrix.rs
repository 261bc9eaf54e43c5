//! `ldmatrix` and `stmatrix`: `let (a, b, c, d) = ldmatrix_x4(tile[r, c]);`
//! and `stmatrix_x4(tile[r, c], a, b, c, d)` (also `_x1`, `_x2`, and
//! `trans = true`), a warp's load or store of 1, 2 or 4 8 x 8 matrices of
//! 16-bit elements, each lane giving the address of one row (lanes
//! `8i..8i + 7` the rows of matrix `i`); lowered to the vector statements
//! with a [`Matrix`].
//!
//! - E0430: the place is not an element of this CTA's shared memory;
//! - E0431: its elements are not 16 bits (`f16`, `bf16`, `u16`, `i16`);
//! - E0433: the array's innermost dimension is not a multiple of 8, so a
//!   row of 8 elements may run into the next;
//! - E0432 / W0432: a row address known not to be / not proven to be
//!   16-byte aligned (an element index that is a multiple of 8), read
//!   from the analysis' facts like vector alignment ([`super::vector`]);
//! - E0434: an access under a condition that may split a warp, or in a
//!   block whose last warp is partial (`.sync.aligned`), after the
//!   analysis ([`convergence`]);
//! - E0146 for a pattern with the wrong number of names, E0117 for a
//!   `trans` that is not a constant, E0200 for `stmatrix` before sm_90.

use super::args::Call;
use super::body::BodyChecker;
use super::builtins::Function;
use super::error::CheckError;
use crate::analysis::BodyInfo;
use crate::ir::visit::{self, Visit};
use crate::ir::{consteval, Kernel, Matrix, Place, PlaceKind, Stmt, StmtKind, Value};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

/// The number of matrices of a matrix built-in, and whether it loads.
pub fn matrix_op(f: Function) -> Option<(usize, bool)> {
    match f {
        Function::LdMatrix(n) => Some((usize::from(n), true)),
        Function::StMatrix(n) => Some((usize::from(n), false)),
        _ => None,
    }
}

impl BodyChecker<'_> {
    /// The checks of a matrix access's place (E0430, E0431, E0433); the
    /// registers' type when it may be lowered.
    pub fn matrix_place(&mut self, callee: &str, place: &Place, span: Span) -> Option<Scalar> {
        let found = match &place.kind {
            PlaceKind::Shared { .. } => None,
            PlaceKind::Global { .. } => Some("an element of a global array"),
            PlaceKind::Remote { .. } => Some("an element of another CTA's shared memory"),
            PlaceKind::Register { .. } => Some("an element of a register array"),
            PlaceKind::SharedAt { .. } | PlaceKind::Accum { .. } => Some("this place"),
        };
        if let Some(found) = found {
            self.error(CheckError::MatrixPlace {
                callee: callee.to_string(),
                found,
                span,
            });
            return None;
        }
        let Some(reg) = Matrix::register(place.elem) else {
            self.error(CheckError::MatrixElem {
                callee: callee.to_string(),
                elem: place.elem.to_string(),
                span,
            });
            return None;
        };
        if let PlaceKind::Shared { array, .. } = &place.kind {
            let decl = self
                .kernel
                .as_ref()
                .and_then(|k| k.shared.get(array.index()))
                .map(|a| (a.name.clone(), a.dims.last().copied(), a.span));
            if let Some((name, Some(inner), decl)) = decl {
                if inner % u64::from(Matrix::ROW) != 0 {
                    self.error(CheckError::MatrixRows {
                        callee: callee.to_string(),
                        array: name,
                        inner,
                        span,
                        decl,
                    });
                    return None;
                }
            }
        }
        Some(reg)
    }

    /// `trans = e`: a constant `bool` (E0117 otherwise); `false` when left
    /// out.
    pub fn matrix_trans(&mut self, e: Option<&ast::Expr>) -> Option<bool> {
        let Some(e) = e else {
            return Some(false);
        };
        let v = self.expr_as(e, Scalar::Bool)?;
        match consteval::eval(&v) {
            Ok(Value::Bool(b)) => Some(b),
            _ => {
                self.error(CheckError::NotConstant {
                    span: e.span,
                    why: Some(
                        "`trans` chooses the instruction (`.trans`): it must be a constant".into(),
                    ),
                });
                None
            }
        }
    }

    /// `stmatrix_xN(place, values..., trans = t)`.
    pub fn store_matrix_call(&mut self, call: Call<'_>, n: usize) -> Option<StmtKind> {
        let entry = call.entry;
        let (p, values, trans) = match n {
            1 => {
                let [Some(p), Some(a), t] = self.bind_args::<3>(&call)?.args else {
                    return None;
                };
                (p, vec![a], t)
            }
            2 => {
                let [Some(p), Some(a), Some(b), t] = self.bind_args::<4>(&call)?.args else {
                    return None;
                };
                (p, vec![a, b], t)
            }
            _ => {
                let [Some(p), Some(a), Some(b), Some(c), Some(d), t] =
                    self.bind_args::<6>(&call)?.args
                else {
                    return None;
                };
                (p, vec![a, b, c, d], t)
            }
        };
        let place = self.memory_place(p, true);
        let reg = match &place {
            Some((pl, _)) => self.matrix_place(entry.name, pl, p.span),
            None => None,
        };
        let mut lowered = Vec::with_capacity(n);
        let mut ok = true;
        for v in values {
            let e = match reg {
                Some(r) => self.expr_as(v, r),
                None => {
                    self.quiet_uses(v);
                    None
                }
            };
            match e {
                Some(e) => lowered.push(e),
                None => ok = false,
            }
        }
        let trans = self.matrix_trans(trans);
        let needs = self.needs(entry, call.span);
        let (place, _) = place?;
        if !(ok && needs) {
            return None;
        }
        Some(StmtKind::StoreVector {
            place: Box::new(place),
            values: lowered,
            matrix: Some(Matrix { trans: trans? }),
        })
    }
}

/// E0434 for every matrix access of a kernel that not all lanes of a warp
/// may run together: under a condition the analysis finds may split a
/// warp (`crate::analysis::warps`), or anywhere in a block whose thread
/// count is not a multiple of 32.
pub fn convergence(k: &Kernel, info: &BodyInfo) -> Vec<CheckError> {
    struct Find<'a> {
        info: &'a BodyInfo,
        threads: Option<u32>,
        out: Vec<CheckError>,
    }
    impl<'ir> Visit<'ir> for Find<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            let (n, load) = match &s.kind {
                StmtKind::LoadVector {
                    locals,
                    matrix: Some(_),
                    ..
                } => (locals.len(), true),
                StmtKind::StoreVector {
                    values,
                    matrix: Some(_),
                    ..
                } => (values.len(), false),
                _ => return visit::walk_stmt(self, s),
            };
            let callee = format!("{}_x{n}", if load { "ldmatrix" } else { "stmatrix" });
            let partial = self.threads.filter(|t| t % 32 != 0);
            let cond = self.info.warps.split(s.id);
            if partial.is_some() || cond.is_some() {
                self.out.push(CheckError::MatrixDivergent {
                    callee,
                    span: s.span,
                    cond: if partial.is_some() { None } else { cond },
                    threads: partial,
                });
            }
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find {
        info,
        threads: k.block_threads(),
        out: Vec::new(),
    };
    f.visit_block(&k.body.block);
    f.out
}
