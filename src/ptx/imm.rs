//! Immediates: how constants are spelled in PTX.
//!
//! Floats are written as their bits (`0f3F800000`, `0d3FF0000000000000`):
//! PTX rejects an integer literal where a float is expected, and hex bits are
//! exact. `f16`/`bf16` constants are rounded here from the `f64` value
//! (round to nearest even, once) and moved into a `.b16` register as bits.

use crate::ir::Value;
use crate::types::Scalar;

/// The integer value of `v` as the bits of `ty` (sign- or zero-extended).
pub(super) fn int_value(v: Value, ty: Scalar) -> i128 {
    let raw = match v {
        Value::Int(i) => i,
        Value::Bool(b) => i128::from(b),
        Value::Float(f) => match crate::ir::consteval::cast(Value::Float(f), ty) {
            Value::Int(i) => i,
            _ => 0,
        },
    };
    crate::ir::consteval::wrap(raw, ty)
}

/// An integer immediate of type `ty`: decimal, or hex for large unsigned
/// values (PTX integer literals are 64-bit; hex above `i64::MAX` is unsigned).
pub(super) fn int_imm(v: i128, ty: Scalar) -> String {
    let v = crate::ir::consteval::wrap(v, ty);
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

pub(super) fn float_value(v: Value) -> f64 {
    match v {
        Value::Float(f) => f,
        Value::Int(i) => i as f64,
        Value::Bool(b) => f64::from(u8::from(b)),
    }
}

pub(super) fn f32_imm(x: f64) -> String {
    format!("0f{:08X}", (x as f32).to_bits())
}

pub(super) fn f64_imm(x: f64) -> String {
    format!("0d{:016X}", x.to_bits())
}

/// The bits of `x` as an `f16` (`ebits = 5, mbits = 10`) or `bf16`
/// (`8, 7`), rounded to nearest even.
pub(super) fn small_float_bits(x: f64, ebits: u32, mbits: u32) -> u16 {
    let sign: u32 = if x.is_sign_negative() {
        1 << (ebits + mbits)
    } else {
        0
    };
    let exp_max: u32 = (1 << ebits) - 1;
    if x.is_nan() {
        return (sign | (exp_max << mbits) | (1 << (mbits - 1))) as u16;
    }
    let a = x.abs();
    let inf = (sign | (exp_max << mbits)) as u16;
    if a.is_infinite() {
        return inf;
    }
    if a == 0.0 {
        return sign as u16;
    }
    let bias = (1i32 << (ebits - 1)) - 1;
    let emin = 1 - bias;
    let emax = bias;
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let mut e_eff = e.max(emin);
    // `a` in units of the last mantissa place at exponent `e_eff`: scaling by
    // a power of two is exact, so one rounding happens here.
    let mut q = (a * 2f64.powi(mbits as i32 - e_eff)).round_ties_even();
    if q >= 2f64.powi(mbits as i32 + 1) {
        q /= 2.0;
        e_eff += 1;
    }
    if e_eff > emax {
        return inf;
    }
    let q = q as u32;
    if q < (1 << mbits) {
        // Subnormal (the exponent field is 0), or rounded to zero.
        return (sign | q) as u16;
    }
    let field = (e_eff + bias) as u32;
    (sign | (field << mbits) | (q - (1 << mbits))) as u16
}

pub(super) fn f16_bits(x: f64) -> u16 {
    small_float_bits(x, 5, 10)
}

pub(super) fn bf16_bits(x: f64) -> u16 {
    small_float_bits(x, 8, 7)
}

/// The immediate spelling of a constant of type `ty` (not for `bool` and
/// halves, which the caller moves into registers).
pub(super) fn scalar_imm(v: Value, ty: Scalar) -> String {
    match ty {
        Scalar::F32 => f32_imm(float_value(v)),
        Scalar::F64 => f64_imm(float_value(v)),
        Scalar::F16 => format!("0x{:04X}", f16_bits(float_value(v))),
        Scalar::BF16 => format!("0x{:04X}", bf16_bits(float_value(v))),
        Scalar::Bool => match v {
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
    fn f16_rounding() {
        assert_eq!(f16_bits(1.0), 0x3C00);
        assert_eq!(f16_bits(-2.0), 0xC000);
        assert_eq!(f16_bits(65504.0), 0x7BFF);
        assert_eq!(f16_bits(65520.0), 0x7C00); // ties to even: overflows
        assert_eq!(f16_bits(65519.0), 0x7BFF);
        assert_eq!(f16_bits(5.960464477539063e-8), 0x0001); // smallest subnormal
        assert_eq!(f16_bits(2.0e-8), 0x0000);
        assert_eq!(f16_bits(0.1), 0x2E66);
        assert_eq!(f16_bits(f64::INFINITY), 0x7C00);
        assert_eq!(f16_bits(f64::NAN) & 0x7E00, 0x7E00);
        assert_eq!(f16_bits(-0.0), 0x8000);
        assert_eq!(f16_bits(6.103515625e-5), 0x0400); // smallest normal
    }

    #[test]
    fn bf16_rounding() {
        assert_eq!(bf16_bits(1.0), 0x3F80);
        assert_eq!(bf16_bits(-1.5), 0xBFC0);
        assert_eq!(bf16_bits(3.0e38), 0x7F62);
        assert_eq!(bf16_bits(f64::MAX), 0x7F80);
        assert_eq!(bf16_bits(0.1), 0x3DCD);
        // 1 + 2^-8 is a tie between 1.0 and 1 + 2^-7: even wins.
        assert_eq!(bf16_bits(1.0 + 2f64.powi(-8)), 0x3F80);
        assert_eq!(bf16_bits(1.0 + 3.0 * 2f64.powi(-8)), 0x3F82);
    }

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
    }
}
