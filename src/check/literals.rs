//! Literals: untyped literals take the type their context wants.
//!
//! Whether an expression is an untyped literal expression (`1`, `-2.0`,
//! `(3 + 4)`) is a property of the syntax alone: the parser computes it once
//! per node (`ast::Expr::untyped`, `ast::Block::value`).

use super::body::BodyChecker;
use super::error::CheckError;
use crate::fp::{self, Format};
use crate::ir::{consteval, Expr, Value};
use crate::span::Span;
use crate::syntax::ast::FloatLit;
use crate::types::Scalar;

impl BodyChecker<'_> {
    /// An integer literal, negated when `negative` (so `-2147483648` fits
    /// `i32`).
    pub fn int_literal(
        &mut self,
        value: u64,
        suffix: Option<Scalar>,
        negative: bool,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        let ty = match (suffix, expected) {
            (Some(s), _) => s,
            (None, Some(t)) if t.is_int() || t.is_float() => t,
            _ => Scalar::I32,
        };
        let v = if negative {
            -(value as i128)
        } else {
            value as i128
        };
        if let Some(fmt) = Format::of(ty) {
            // Straight from the integer: one rounding, even above 2^53.
            return self.float_value(fp::from_int(v, fmt), ty, span);
        }
        if negative && !ty.is_signed_int() {
            self.error(CheckError::BadOperand {
                op: "-".into(),
                ty: ty.to_string(),
                span,
                note: Some("unsigned values cannot be negated".into()),
            });
            return None;
        }
        if !consteval::fits(v, ty) {
            // The argument of a call that failed: `i32` was only a guess.
            if suffix.is_none() && expected.is_none() && self.untyped_args > 0 {
                return None;
            }
            self.error(CheckError::LiteralOutOfRange {
                ty: ty.to_string(),
                span,
            });
            return None;
        }
        Some(self.constant(Value::Int(v), ty, span))
    }

    /// An unsuffixed integer literal over `u64::MAX`: a float context
    /// rounds it once to its type, like any integer literal there; no
    /// integer type holds it (E0003 for the type the context wants, `i32`
    /// without one).
    pub fn wide_int_literal(
        &mut self,
        value: FloatLit,
        negative: bool,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        let ty = match expected {
            Some(t) if t.is_int() || t.is_float() => t,
            _ => Scalar::I32,
        };
        let Some(fmt) = Format::of(ty) else {
            // The argument of a call that failed: `i32` was only a guess.
            if expected.is_none() && self.untyped_args > 0 {
                return None;
            }
            self.error(CheckError::LiteralOutOfRange {
                ty: ty.to_string(),
                span,
            });
            return None;
        };
        let f = value.round(fmt);
        self.float_value(if negative { -f } else { f }, ty, span)
    }

    pub fn float_literal(
        &mut self,
        value: FloatLit,
        suffix: Option<Scalar>,
        negative: bool,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        let ty = match (suffix, expected) {
            (Some(s), _) => s,
            (None, Some(t)) if t.is_float() => t,
            (None, Some(t)) if t.is_int() => {
                self.mismatch_text(t.to_string(), "{float}", span);
                return None;
            }
            _ => Scalar::F32,
        };
        let Some(fmt) = Format::of(ty) else {
            self.mismatch_text(ty.to_string(), "{float}", span);
            return None;
        };
        // Rounding is symmetric, so the sign can come after it.
        let f = value.round(fmt);
        self.float_value(if negative { -f } else { f }, ty, span)
    }

    /// A float constant already rounded to `ty`.
    fn float_value(&mut self, f: f64, ty: Scalar, span: Span) -> Option<Expr> {
        // A literal fits when rounding it to its type gives a finite value.
        if !f.is_finite() {
            self.error(CheckError::LiteralOutOfRange {
                ty: ty.to_string(),
                span,
            });
            return None;
        }
        Some(self.constant(Value::Float(f), ty, span))
    }
}
