//! Float multiply-add contraction: which `a * b + c` are one fused
//! multiply-add (`fma.rn`, rounded once).
//!
//! kdslc contracts explicitly and deterministically, as CUDA's default
//! `-fmad=true` would: inside one expression, an `f32` or `f64` `a * b + c`,
//! `c + a * b`, `a * b - c` or `c - a * b` is fused. Every other float add,
//! subtract and multiply is emitted with `.rn`, which ptxas never fuses, so
//! this function alone decides. The PTX writer emits exactly these as
//! `fma.rn` and constant evaluation folds exactly these with one rounding,
//! so folded and executed values agree by construction. A statement
//! boundary opts out (`let t = a * b; t + c` is two roundings), and so does
//! an `f16`/`bf16` expression, whose every operation rounds to its type.

use super::{BinOp, Expr, ExprKind};
use crate::types::Scalar;

/// `a × b + c` as one rounding, with the signs the source asked for: `c -
/// a * b` is `(-a) × b + c`, `a * b - c` is `a × b + (-c)` (negation is
/// exact, so these are still single roundings of the written value).
#[derive(Clone, Copy, Debug)]
pub struct Fused<'e> {
    pub a: &'e Expr,
    pub b: &'e Expr,
    pub c: &'e Expr,
    pub negate_product: bool,
    pub negate_addend: bool,
    /// True when the product comes first in the source: operands are
    /// evaluated in source order, `a, b, c` or `c, a, b`.
    pub product_first: bool,
}

/// The fused form of `lhs op rhs`, when it contracts.
pub fn fused<'e>(op: BinOp, lhs: &'e Expr, rhs: &'e Expr) -> Option<Fused<'e>> {
    if !matches!(op, BinOp::Add | BinOp::Sub) || !contracts(lhs.ty) || lhs.ty != rhs.ty {
        return None;
    }
    let subtract = op == BinOp::Sub;
    if let Some((a, b)) = product(lhs) {
        return Some(Fused {
            a,
            b,
            c: rhs,
            negate_product: false,
            negate_addend: subtract,
            product_first: true,
        });
    }
    let (a, b) = product(rhs)?;
    Some(Fused {
        a,
        b,
        c: lhs,
        negate_product: subtract,
        negate_addend: false,
        product_first: false,
    })
}

/// The factors of `e` when it is a float product that may fuse.
pub fn product(e: &Expr) -> Option<(&Expr, &Expr)> {
    match &e.kind {
        ExprKind::Binary(BinOp::Mul, a, b) if contracts(e.ty) => Some((a, b)),
        _ => None,
    }
}

/// The types whose `a * b + c` contracts.
pub fn contracts(ty: Scalar) -> bool {
    matches!(ty, Scalar::F32 | Scalar::F64)
}
