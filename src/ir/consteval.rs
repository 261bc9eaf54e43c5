//! Compile-time evaluation of IR expressions: `const` items, launch bounds,
//! array sizes, barrier counts, and the constant operands that the barrier
//! pass inspects (indices, parities, byte counts).
//!
//! Integer arithmetic wraps in the expression's type, as PTX does.

use super::{BinOp, Expr, ExprKind, MathFn, UnaryOp, Value};
use crate::types::Scalar;

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum NotConst {
    /// It reads something only known at run time.
    Runtime,
    /// Division or remainder by zero.
    DivideByZero,
}

/// The value of `e`, if it is a compile-time constant.
pub fn eval(e: &Expr) -> Result<Value, NotConst> {
    match &e.kind {
        ExprKind::Const(v) => Ok(*v),
        ExprKind::Unary(op, a) => unary(*op, eval(a)?, e.ty),
        ExprKind::Binary(op, a, b) => {
            let a_val = eval(a)?;
            // `&&`/`||` are lazy here too, so `false && x` is constant.
            match (op, a_val) {
                (BinOp::And, Value::Bool(false)) => return Ok(Value::Bool(false)),
                (BinOp::Or, Value::Bool(true)) => return Ok(Value::Bool(true)),
                _ => {}
            }
            binary(*op, a_val, eval(b)?, a.ty)
        }
        ExprKind::Cast(a) => Ok(cast(eval(a)?, e.ty)),
        ExprKind::Select(c, a, b) => match eval(c)? {
            Value::Bool(true) => eval(a),
            _ => eval(b),
        },
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } if then_block.stmts.is_empty() && else_block.stmts.is_empty() => match eval(cond)? {
            Value::Bool(true) => eval(then_value),
            _ => eval(else_value),
        },
        ExprKind::Math(f, args) => {
            let vals = args.iter().map(eval).collect::<Result<Vec<_>, _>>()?;
            math(*f, &vals, e.ty)
        }
        _ => Err(NotConst::Runtime),
    }
}

/// The value of `e` as an unsigned integer, if it is a constant integer.
pub fn eval_u64(e: &Expr) -> Option<u64> {
    match eval(e).ok()? {
        Value::Int(v) => u64::try_from(v).ok(),
        _ => None,
    }
}

/// The value of `e` as a (possibly negative) integer, if constant.
pub fn eval_int(e: &Expr) -> Option<i128> {
    match eval(e).ok()? {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

/// Wraps an integer into the range of `ty` (two's complement).
pub fn wrap(v: i128, ty: Scalar) -> i128 {
    match ty {
        Scalar::I32 => v as i32 as i128,
        Scalar::U32 => v as u32 as i128,
        Scalar::I64 => v as i64 as i128,
        Scalar::U64 => v as u64 as i128,
        _ => v,
    }
}

/// True when `v` is representable in the integer type `ty` without wrapping.
pub fn fits(v: i128, ty: Scalar) -> bool {
    wrap(v, ty) == v
}

fn unary(op: UnaryOp, v: Value, ty: Scalar) -> Result<Value, NotConst> {
    Ok(match (op, v) {
        (UnaryOp::Neg, Value::Int(i)) => Value::Int(wrap(i.wrapping_neg(), ty)),
        (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
        (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnaryOp::Not, Value::Int(i)) => Value::Int(wrap(!i, ty)),
        _ => return Err(NotConst::Runtime),
    })
}

fn binary(op: BinOp, a: Value, b: Value, ty: Scalar) -> Result<Value, NotConst> {
    use BinOp::*;
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => match op {
            Add => Value::Int(wrap(x.wrapping_add(y), ty)),
            Sub => Value::Int(wrap(x.wrapping_sub(y), ty)),
            Mul => Value::Int(wrap(x.wrapping_mul(y), ty)),
            Div | Rem if y == 0 => return Err(NotConst::DivideByZero),
            Div => Value::Int(wrap(x.wrapping_div(y), ty)),
            Rem => Value::Int(wrap(x.wrapping_rem(y), ty)),
            BitAnd => Value::Int(wrap(x & y, ty)),
            BitOr => Value::Int(wrap(x | y, ty)),
            BitXor => Value::Int(wrap(x ^ y, ty)),
            // PTX clamps shift amounts to the width; so do we.
            Shl => {
                let s = y.clamp(0, ty.bits() as i128) as u32;
                Value::Int(if s >= ty.bits() { 0 } else { wrap(x << s, ty) })
            }
            Shr => {
                let s = y.clamp(0, ty.bits() as i128) as u32;
                let s = s.min(ty.bits() - 1 + u32::from(!ty.is_signed_int()));
                Value::Int(if s >= 127 { 0 } else { wrap(x >> s, ty) })
            }
            Eq => Value::Bool(x == y),
            Ne => Value::Bool(x != y),
            Lt => Value::Bool(x < y),
            Le => Value::Bool(x <= y),
            Gt => Value::Bool(x > y),
            Ge => Value::Bool(x >= y),
            And | Or => return Err(NotConst::Runtime),
        },
        (Value::Float(x), Value::Float(y)) => match op {
            Add => Value::Float(x + y),
            Sub => Value::Float(x - y),
            Mul => Value::Float(x * y),
            Div => Value::Float(x / y),
            Rem => Value::Float(x % y),
            Eq => Value::Bool(x == y),
            Ne => Value::Bool(x != y),
            Lt => Value::Bool(x < y),
            Le => Value::Bool(x <= y),
            Gt => Value::Bool(x > y),
            Ge => Value::Bool(x >= y),
            _ => return Err(NotConst::Runtime),
        },
        (Value::Bool(x), Value::Bool(y)) => match op {
            And | BitAnd => Value::Bool(x && y),
            Or | BitOr => Value::Bool(x || y),
            BitXor | Ne => Value::Bool(x != y),
            Eq => Value::Bool(x == y),
            _ => return Err(NotConst::Runtime),
        },
        _ => return Err(NotConst::Runtime),
    })
}

/// Converts a constant to `ty` with `as` semantics (float → int truncates
/// toward zero and saturates; NaN becomes 0, as PTX `cvt.rzi` does).
pub fn cast(v: Value, ty: Scalar) -> Value {
    match (v, ty) {
        (Value::Bool(b), Scalar::Bool) => Value::Bool(b),
        (Value::Bool(b), t) if t.is_float() => Value::Float(if b { 1.0 } else { 0.0 }),
        (Value::Bool(b), _) => Value::Int(i128::from(b)),
        (Value::Int(i), Scalar::Bool) => Value::Bool(i != 0),
        (Value::Int(i), t) if t.is_float() => Value::Float(i as f64),
        (Value::Int(i), t) => Value::Int(wrap(i, t)),
        (Value::Float(f), Scalar::Bool) => Value::Bool(f != 0.0),
        (Value::Float(f), t) if t.is_float() => {
            Value::Float(if t == Scalar::F32 { f as f32 as f64 } else { f })
        }
        (Value::Float(f), t) => {
            let (lo, hi) = int_range(t);
            let i = if f.is_nan() {
                0
            } else {
                (f.trunc() as i128).clamp(lo, hi)
            };
            Value::Int(i)
        }
    }
}

fn int_range(t: Scalar) -> (i128, i128) {
    match t {
        Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
        Scalar::U32 => (0, u32::MAX as i128),
        Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
        _ => (0, u64::MAX as i128),
    }
}

fn math(f: MathFn, args: &[Value], ty: Scalar) -> Result<Value, NotConst> {
    Ok(match (f, args) {
        (MathFn::Min, [Value::Int(a), Value::Int(b)]) => Value::Int(*a.min(b)),
        (MathFn::Max, [Value::Int(a), Value::Int(b)]) => Value::Int(*a.max(b)),
        (MathFn::Min, [Value::Float(a), Value::Float(b)]) => Value::Float(a.min(*b)),
        (MathFn::Max, [Value::Float(a), Value::Float(b)]) => Value::Float(a.max(*b)),
        (MathFn::Abs, [Value::Int(a)]) => Value::Int(wrap(a.abs(), ty)),
        (MathFn::Abs, [Value::Float(a)]) => Value::Float(a.abs()),
        _ => return Err(NotConst::Runtime),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn int(v: i128, ty: Scalar) -> Expr {
        Expr {
            kind: ExprKind::Const(Value::Int(v)),
            ty,
            span: Span::default(),
        }
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        let ty = if op.is_comparison() {
            Scalar::Bool
        } else {
            a.ty
        };
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
            span: Span::default(),
        }
    }

    #[test]
    fn arithmetic_wraps_in_its_type() {
        let e = bin(
            BinOp::Add,
            int(u32::MAX as i128, Scalar::U32),
            int(1, Scalar::U32),
        );
        assert_eq!(eval(&e), Ok(Value::Int(0)));
        let e = bin(BinOp::Mul, int(1024, Scalar::U32), int(4, Scalar::U32));
        assert_eq!(eval_u64(&e), Some(4096));
    }

    #[test]
    fn division_by_zero_is_reported() {
        let e = bin(BinOp::Div, int(1, Scalar::I32), int(0, Scalar::I32));
        assert_eq!(eval(&e), Err(NotConst::DivideByZero));
    }

    #[test]
    fn casts_saturate_and_truncate() {
        assert_eq!(cast(Value::Float(-1.5), Scalar::U32), Value::Int(0));
        assert_eq!(
            cast(Value::Float(1e20), Scalar::I32),
            Value::Int(i32::MAX as i128)
        );
        assert_eq!(cast(Value::Float(-2.7), Scalar::I32), Value::Int(-2));
        assert_eq!(
            cast(Value::Int(-1), Scalar::U32),
            Value::Int(u32::MAX as i128)
        );
    }
}
