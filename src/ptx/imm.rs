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

/// The immediate spelling of a constant of type `ty` (for `bool` and
/// halves, the caller moves it into a register), or `None` when `v` is not
/// a value of `ty` (broken IR: the verifier rejects it too).
pub(super) fn scalar_imm(v: Value, ty: Scalar) -> Option<String> {
    Some(match (v, ty, Format::of(ty)) {
        (Value::Bool(b), Scalar::Bool, _) => u8::from(b).to_string(),
        (Value::Int(i), _, _) if ty.is_int() => int_imm(i, ty),
        (Value::Float(f), Scalar::F32, _) => f32_imm(f),
        (Value::Float(f), Scalar::F64, _) => f64_imm(f),
        (Value::Float(f), _, Some(fmt)) => half_imm(f, fmt),
        // `e4m3`, `e5m2`: the byte; `tf32`: the `f32` bits.
        (Value::Float(f), _, None) => format!("0x{:X}", fp::storage_bits(f, ty)?),
        (Value::Pair(lo, hi), _, _) => {
            let fmt = ty.half_of().and_then(Format::of)?;
            format!("0x{:08X}", fp::pair_bits(lo, hi, fmt))
        }
        _ => return None,
    })
}

/// The small integer `n` as an immediate of the number type `ty` (0 and 1
/// for `bool` → number conversions): exact in every type.
pub(super) fn number(n: i128, ty: Scalar) -> String {
    match Format::of(ty) {
        Some(fmt) if ty == Scalar::F32 => f32_imm(fp::from_int(n, fmt)),
        Some(fmt) if ty == Scalar::F64 => f64_imm(fp::from_int(n, fmt)),
        Some(fmt) => half_imm(fp::from_int(n, fmt), fmt),
        None => int_imm(n, ty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_another_type_have_no_immediate() {
        assert_eq!(scalar_imm(Value::Float(1.5), Scalar::U32), None);
        assert_eq!(scalar_imm(Value::Int(1), Scalar::Bool), None);
        assert_eq!(scalar_imm(Value::Bool(true), Scalar::F32), None);
        assert_eq!(scalar_imm(Value::Int(1), Scalar::F32), None);
        assert_eq!(number(1, Scalar::F32), "0f3F800000");
        assert_eq!(number(1, Scalar::BF16), "0x3F80");
        assert_eq!(number(0, Scalar::U64), "0");
    }

    fn imm(v: Value, ty: Scalar) -> String {
        scalar_imm(v, ty).unwrap_or_default()
    }

    #[test]
    fn immediates() {
        assert_eq!(imm(Value::Float(1.0), Scalar::F32), "0f3F800000");
        assert_eq!(imm(Value::Float(1.0), Scalar::F64), "0d3FF0000000000000");
        assert_eq!(imm(Value::Int(-5), Scalar::I32), "-5");
        assert_eq!(imm(Value::Int(u32::MAX as i128), Scalar::U32), "0xFFFFFFFF");
        assert_eq!(
            imm(Value::Int(u64::MAX as i128), Scalar::U64),
            "0xFFFFFFFFFFFFFFFF"
        );
        assert_eq!(imm(Value::Int(7), Scalar::U64), "7");
        assert_eq!(imm(Value::Float(1.0), Scalar::F16), "0x3C00");
        assert_eq!(imm(Value::Float(-1.5), Scalar::BF16), "0xBFC0");
        assert_eq!(imm(Value::Float(0.0), Scalar::F16), "0x0000");
        // NaNs are written as the canonical NaN of their type.
        assert_eq!(imm(Value::Float(f64::NAN), Scalar::F32), "0f7FFFFFFF");
        assert_eq!(imm(Value::Float(-f64::NAN), Scalar::F16), "0x7FFF");
        assert_eq!(imm(Value::Float(-0.0), Scalar::F32), "0f80000000");
    }
}
