//! Literals: untyped literals take the type their context wants.

use super::body::BodyChecker;
use super::error::CheckError;
use crate::fp::{self, Format};
use crate::ir::{consteval, Expr, ExprKind, Value};
use crate::span::Span;
use crate::syntax::ast::{self, FloatLit};
use crate::types::Scalar;

impl BodyChecker<'_> {
    /// True for an expression made only of unsuffixed literals (`1`, `-2.0`,
    /// `(3 + 4)`, `if c { 1 } else { 2 }`): its type comes from the other
    /// operand or the context. Memoised per node, so checking a long chain
    /// of operators stays linear.
    pub fn is_untyped(&mut self, e: &ast::Expr) -> bool {
        let key = e as *const ast::Expr as usize;
        if let Some(&v) = self.untyped_memo.get(&key) {
            return v;
        }
        let v = match &e.kind {
            ast::ExprKind::Int { suffix: None, .. } | ast::ExprKind::Float { suffix: None, .. } => {
                true
            }
            ast::ExprKind::Paren(inner) => self.is_untyped(inner),
            ast::ExprKind::Unary {
                op: ast::UnaryOp::Neg,
                operand,
            } => self.is_untyped(operand),
            ast::ExprKind::Binary { op, lhs, rhs, .. }
                if !op.is_comparison() && !op.is_logical() =>
            {
                self.is_untyped(rhs) && self.is_untyped(lhs)
            }
            ast::ExprKind::If {
                then_block,
                else_block,
                ..
            } => self.tail_is_untyped(then_block) && self.tail_is_untyped(else_block),
            _ => false,
        };
        self.untyped_memo.insert(key, v);
        v
    }

    /// True when a block's value is an untyped literal expression.
    pub fn tail_is_untyped(&mut self, b: &ast::Block) -> bool {
        match b.tail.as_deref() {
            Some(t) => self.is_untyped(t),
            None => false,
        }
    }

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
            self.error(CheckError::LiteralOutOfRange {
                ty: ty.to_string(),
                span,
            });
            return None;
        }
        Some(Expr {
            kind: ExprKind::Const(Value::Int(v)),
            ty,
            span,
        })
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
        Some(Expr {
            kind: ExprKind::Const(Value::Float(f)),
            ty,
            span,
        })
    }
}
