//! Immediates: how constants are spelled in PTX.
//!
//! Floats are written as their bits (`0f3F800000`, `0d3FF0000000000000`):
//! PTX rejects an integer literal where a float is expected, and hex bits are
//! exact. A constant already holds a value of its type (the checker and
//! constant evaluation round into it), so encoding rounds nothing; `f16` and
//! `bf16` constants are moved into a `.b16` register as bits by the caller.

use crate::fp::{self, Format};
use crate::ir::consteval;
use crate::ir::Value;
use crate::types::Scalar;

/// The integer value of `v` as the bits of `ty` (sign- or zero-extended).
pub(super) fn int_value(v: Value, ty: Scalar) -> i128 {
    let raw = match v {
        Value::Int(i) => i,
        Value::Bool(b) => i128::from(b),
        // Not produced by a checked module; converted as an f64 would be.
        Value::Float(f) => match consteval::cast(Value::Float(f), Scalar::F64, ty) {
            Value::Int(i) => i,
            _ => 0,
        },
    };
    consteval::wrap(raw, ty)
}

/// An integer immediate of type `ty`: decimal, or hex for large unsigned
/// values (PTX integer literals are 64-bit; hex above `i64::MAX` is unsigned).
pub(super) fn int_imm(v: i128, ty: Scalar) -> String {
    let v = consteval::wrap(v, ty);
    if ty.is_signed_int() || (0..=i32::MAX as i128).contains(&v) {
        v.to_string()
    } else {
        format!("0x{:X}", v as u64)
    }
}

/// The value of an integer immediate written by [`int_imm`].
pub(super) fn parse_int(op: &super::writer::Operand) -> Option<i128> {
    let super::writer::Operand::Imm(text) = op else {
        return None;
    };
    match text.strip_prefix("0x") {
        Some(hex) => i128::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The value of `v` as a float of `fmt` (integers and bools converted as
/// `as` converts them).
fn float_value(v: Value, fmt: Format) -> f64 {
    match v {
        Value::Float(f) => f,
        Value::Int(i) => fp::from_int(i, fmt),
        Value::Bool(b) => f64::from(u8::from(b)),
    }
}

/// `0f…`: the bits of `x` as an `f32` (rounded once if it is not one).
pub(super) fn f32_imm(x: f64) -> String {
    format!("0f{:08X}", fp::to_bits(x, Format::F32))
}

/// `0d…`: the bits of `x` as an `f64`.
pub(super) fn f64_imm(x: f64) -> String {
    format!("0d{:016X}", fp::to_bits(x, Format::F64))
}

/// `0x…`: the bits of `x` as an `f16` or `bf16`, for a `mov.b16`.
pub(super) fn half_imm(x: f64, fmt: Format) -> String {
    format!("0x{:04X}", fp::to_bits(x, fmt))
}

/// The immediate spelling of a constant of type `ty` (not for `bool` and
/// halves, which the caller moves into registers).
pub(super) fn scalar_imm(v: Value, ty: Scalar) -> String {
    match (ty, Format::of(ty)) {
        (Scalar::F32, _) => f32_imm(float_value(v, Format::F32)),
        (Scalar::F64, _) => f64_imm(float_value(v, Format::F64)),
        (_, Some(fmt)) => half_imm(float_value(v, fmt), fmt),
        (Scalar::Bool, None) => match v {
            Value::Bool(b) => u8::from(b).to_string(),
            Value::Int(i) => u8::from(i != 0).to_string(),
            Value::Float(f) => u8::from(f != 0.0).to_string(),
        },
        _ => int_imm(int_value(v, ty), ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediates() {
        assert_eq!(scalar_imm(Value::Float(1.0), Scalar::F32), "0f3F800000");
        assert_eq!(
            scalar_imm(Value::Float(1.0), Scalar::F64),
            "0d3FF0000000000000"
        );
        assert_eq!(scalar_imm(Value::Int(-5), Scalar::I32), "-5");
        assert_eq!(
            scalar_imm(Value::Int(u32::MAX as i128), Scalar::U32),
            "0xFFFFFFFF"
        );
        assert_eq!(
            scalar_imm(Value::Int(u64::MAX as i128), Scalar::U64),
            "0xFFFFFFFFFFFFFFFF"
        );
        assert_eq!(scalar_imm(Value::Int(7), Scalar::U64), "7");
        assert_eq!(scalar_imm(Value::Float(1.0), Scalar::F16), "0x3C00");
        assert_eq!(scalar_imm(Value::Float(-1.5), Scalar::BF16), "0xBFC0");
        assert_eq!(scalar_imm(Value::Int(0), Scalar::F16), "0x0000");
        // NaNs are written as the canonical NaN of their type.
        assert_eq!(
            scalar_imm(Value::Float(f64::NAN), Scalar::F32),
            "0f7FFFFFFF"
        );
        assert_eq!(scalar_imm(Value::Float(-f64::NAN), Scalar::F16), "0x7FFF");
        assert_eq!(scalar_imm(Value::Float(-0.0), Scalar::F32), "0f80000000");
    }
}
