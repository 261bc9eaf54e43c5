//! Floating-point formats and exact rounding.
//!
//! Every value of kdsl's float types (`f16`, `bf16`, `f32`, `f64`) is also
//! an `f64` value, so the compiler carries float constants as an `f64` that
//! holds a value of the constant's own type. This module rounds into each
//! type exactly once, round to nearest, ties to even, as PTX's `.rn` does:
//! from an `f64` ([`round`]), from an integer ([`from_int`]), and from a
//! value known only as "this `f64`, plus a little more or a little less"
//! ([`round_near`]: decimal literals and `f16`/`bf16` fused multiply-adds).
//! It also encodes and decodes each format's bits.
//!
//! NaN: every NaN the compiler computes is written as the format's
//! canonical NaN ([`Format::canonical_nan`]), the quiet NaN CUDA documents
//! for `f32` results (`0x7fffffff`); PTX leaves some payloads unspecified
//! (`abs.f32` of a NaN), so nothing may depend on a NaN's payload or sign.

use crate::types::Scalar;
use std::cmp::Ordering;

/// A binary floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    F16,
    BF16,
    F32,
    F64,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::F16, Format::BF16, Format::F32, Format::F64];

    /// The format of a float type; `None` for `bool` and integers.
    pub fn of(ty: Scalar) -> Option<Format> {
        match ty {
            Scalar::F16 => Some(Format::F16),
            Scalar::BF16 => Some(Format::BF16),
            Scalar::F32 => Some(Format::F32),
            Scalar::F64 => Some(Format::F64),
            _ => None,
        }
    }

    pub fn scalar(self) -> Scalar {
        match self {
            Format::F16 => Scalar::F16,
            Format::BF16 => Scalar::BF16,
            Format::F32 => Scalar::F32,
            Format::F64 => Scalar::F64,
        }
    }

    /// Stored fraction bits (the precision less the implicit bit).
    pub fn fraction_bits(self) -> u32 {
        match self {
            Format::F16 => 10,
            Format::BF16 => 7,
            Format::F32 => 23,
            Format::F64 => 52,
        }
    }

    pub fn exponent_bits(self) -> u32 {
        match self {
            Format::F16 => 5,
            Format::BF16 | Format::F32 => 8,
            Format::F64 => 11,
        }
    }

    /// Width of the encoding in bits.
    pub fn bits(self) -> u32 {
        1 + self.exponent_bits() + self.fraction_bits()
    }

    fn bias(self) -> i32 {
        (1 << (self.exponent_bits() - 1)) - 1
    }

    /// The exponent of the smallest normal value.
    fn emin(self) -> i32 {
        1 - self.bias()
    }

    /// The exponent of the largest finite value.
    fn emax(self) -> i32 {
        self.bias()
    }

    /// The exponent of the last place of subnormals (the smallest quantum).
    fn qmin(self) -> i32 {
        self.emin() - self.fraction_bits() as i32
    }

    /// The bits of the NaN the compiler writes for this format: all ones
    /// but the sign, as CUDA documents for `f32` (`0x7fffffff`).
    pub fn canonical_nan(self) -> u64 {
        (1u64 << (self.bits() - 1)) - 1
    }
}

/// `x` rounded to `fmt` (to nearest, ties to even). Infinities and zeros
/// keep their sign; a NaN stays a NaN.
pub fn round(x: f64, fmt: Format) -> f64 {
    round_near(x, Ordering::Equal, fmt)
}

/// A value `v` rounded to `fmt`, where `v` is known as `x` and `side`, which
/// says how `v` compares with `x`: `v` lies within half an `f64` ulp of `x`
/// on that side, and `x` is its nearest `f64` (or `v == x` for `Equal`).
///
/// That is exact for every format narrower than `f64`: their values and
/// the midpoints between them are `f64` values, so no such midpoint lies
/// strictly between `v` and `x`; only when `x` *is* a midpoint does the side
/// decide the rounding, which is where `round` alone would round twice.
pub fn round_near(x: f64, side: Ordering, fmt: Format) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return if x.is_nan() { f64::NAN } else { x };
    }
    // Work on the magnitude; `side` flips with the sign.
    let side = if x < 0.0 { side.reverse() } else { side };
    let (m, e) = decompose(x.abs());
    let r = round_magnitude(u128::from(m), e, side, fmt);
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// The integer `i` rounded once to `fmt`.
pub fn from_int(i: i128, fmt: Format) -> f64 {
    let r = round_magnitude(i.unsigned_abs(), 0, Ordering::Equal, fmt);
    if i < 0 {
        -r
    } else {
        r
    }
}

/// The number `m × 2^e`, plus something less than `2^e` when `sticky`,
/// as its nearest `f64` (ties to even; infinite past `f64::MAX`) and how
/// the number compares with that `f64`: what a [`round_near`] of it to any
/// narrower format needs (an integer literal too wide for 64 bits).
pub fn nearest_f64(m: u128, e: i32, sticky: bool) -> (f64, Ordering) {
    let side = if sticky {
        Ordering::Greater
    } else {
        Ordering::Equal
    };
    let x = round_magnitude(m, e, side, Format::F64);
    if !x.is_finite() || x == 0.0 {
        return (x, side);
    }
    // Compare m × 2^e with xm × 2^xe exactly: the two are within a factor
    // of two, so the smaller exponent's side shifts by less than 128 bits
    // unless the values differ anyway.
    let (xm, xe) = decompose(x);
    let (xm, d) = (u128::from(xm), i64::from(xe) - i64::from(e));
    let order = if d >= 0 {
        match u32::try_from(d).ok().and_then(|d| xm.checked_shl(d)) {
            Some(shifted) if shifted >> d == xm => m.cmp(&shifted),
            _ => Ordering::Less,
        }
    } else {
        let d = d.unsigned_abs();
        match u32::try_from(d).ok().and_then(|d| m.checked_shl(d)) {
            Some(shifted) if shifted >> d == m => shifted.cmp(&xm),
            _ => Ordering::Greater,
        }
    };
    (x, order.then(side))
}

/// True when `x` lies exactly halfway between two neighbouring values of
/// `fmt` (or halfway between its largest finite value and the next power
/// of two, the overflow threshold): the values where rounding to `fmt`
/// needs to know on which side of `x` the exact value lies.
pub fn is_midpoint(x: f64, fmt: Format) -> bool {
    if !x.is_finite() || x == 0.0 {
        return false;
    }
    let (m, e) = decompose(x.abs());
    matches!(
        split(u128::from(m), e, fmt),
        Split::Cut {
            rest: Ordering::Equal,
            ..
        }
    )
}

/// The encoding of `x`, a value of `fmt` (rounded to `fmt` first if it is
/// not), in the low `fmt.bits()` bits. NaN is the canonical NaN.
pub fn to_bits(x: f64, fmt: Format) -> u64 {
    let x = round(x, fmt);
    if x.is_nan() {
        return fmt.canonical_nan();
    }
    if fmt == Format::F64 {
        return x.to_bits();
    }
    let frac_bits = fmt.fraction_bits();
    let sign = u64::from(x.is_sign_negative()) << (fmt.bits() - 1);
    let exp_all_ones = (1u64 << fmt.exponent_bits()) - 1;
    if x.is_infinite() {
        return sign | (exp_all_ones << frac_bits);
    }
    if x == 0.0 {
        return sign;
    }
    let (m, e) = decompose(x.abs());
    // The value as `q × 2^quantum` with `q` below 2^(fraction_bits + 1).
    let top = e + bit_len(u128::from(m)) as i32 - 1;
    let quantum = (top - frac_bits as i32).max(fmt.qmin());
    let q = shift_exact(u128::from(m), e - quantum);
    if top < fmt.emin() {
        // Subnormal: exponent field 0, the fraction is the whole value.
        return sign | q as u64;
    }
    let field = (top + fmt.bias()) as u64;
    sign | (field << frac_bits) | (q as u64 & ((1u64 << frac_bits) - 1))
}

/// The value of the encoding `bits` of `fmt` (the low `fmt.bits()` bits).
pub fn from_bits(bits: u64, fmt: Format) -> f64 {
    if fmt == Format::F64 {
        return f64::from_bits(bits);
    }
    let frac_bits = fmt.fraction_bits();
    let negative = bits >> (fmt.bits() - 1) & 1 == 1;
    let field = (bits >> frac_bits) & ((1u64 << fmt.exponent_bits()) - 1);
    let frac = bits & ((1u64 << frac_bits) - 1);
    let magnitude = if field == (1u64 << fmt.exponent_bits()) - 1 {
        if frac != 0 {
            return f64::NAN;
        }
        f64::INFINITY
    } else if field == 0 {
        frac as f64 * pow2(fmt.qmin())
    } else {
        ((1u64 << frac_bits) | frac) as f64 * pow2(field as i32 - fmt.bias() - frac_bits as i32)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The bits of a packed pair (`f16x2`, `bf16x2`): the low half in the
/// low 16 bits, each half as [`to_bits`] writes it.
pub fn pair_bits(lo: f64, hi: f64, half: Format) -> u64 {
    to_bits(lo, half) | to_bits(hi, half) << 16
}

/// The 8-bit float format of `e4m3` or `e5m2`.
pub fn fp8_of(ty: Scalar) -> Option<crate::fp8::Fp8> {
    match ty {
        Scalar::E4M3 => Some(crate::fp8::Fp8::E4M3),
        Scalar::E5M2 => Some(crate::fp8::Fp8::E5M2),
        _ => None,
    }
}

/// `x as ty` for a storage type `ty`, from a value `x` of `f32`, `f16` or
/// `bf16` (exact in `f32`): what the writer's `cvt` computes.
/// - `e4m3`, `e5m2`: `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`, rounded to
///   nearest even; beyond the largest finite value (infinities included)
///   the largest finite value of the same sign; NaN stays NaN.
/// - `tf32`: `cvt.rna.tf32.f32`, rounded to the top 10 fraction bits,
///   ties away from zero (an `f32` whose low 13 bits are clear); a value
///   that rounds past the largest finite `tf32` becomes infinite.
///
/// `None` for any other type.
pub fn to_storage(x: f64, ty: Scalar) -> Option<f64> {
    if let Some(f) = fp8_of(ty) {
        return Some(f.decode(f.encode(x, true)));
    }
    if ty != Scalar::TF32 {
        return None;
    }
    if x.is_nan() {
        return Some(f64::NAN);
    }
    let bits = (x as f32).to_bits();
    let magnitude = (bits & 0x7fff_ffff).saturating_add(0x1000) & !0x1fff;
    let r = f32::from_bits((bits & 0x8000_0000) | magnitude.min(0x7f80_0000));
    Some(f64::from(r))
}

/// The encoding of `x`, a value of the storage type `ty` (`e4m3`, `e5m2`:
/// the byte; `tf32`: the `f32` bits). NaN: `0x7f` for the fp8s, the
/// canonical `f32` NaN for `tf32`.
pub fn storage_bits(x: f64, ty: Scalar) -> Option<u64> {
    if let Some(f) = fp8_of(ty) {
        return Some(u64::from(f.encode(x, true)));
    }
    (ty == Scalar::TF32).then(|| to_bits(x, Format::F32))
}

/// `x` as text in its own type: the shortest decimal that reads back as
/// the same `f32` for `f32`, the exact `f64` digits otherwise.
pub fn display(x: f64, fmt: Format) -> String {
    match fmt {
        Format::F32 => format!("{:?}", x as f32),
        _ => format!("{x:?}"),
    }
}

/// `a + b` and its rounding error, exactly (`a + b == s + err` as real
/// numbers, barring overflow): Knuth's TwoSum.
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// A finite positive `f64` as `m × 2^e`.
fn decompose(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if field == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), field - 1075)
    }
}

/// Where `m × 2^e` (m > 0) falls on the grid of `fmt`.
enum Split {
    /// It is on the grid: `m × 2^e` is a value of `fmt`'s precision.
    OnGrid,
    /// It lies between `kept × 2^quantum` and the next grid point; `rest`
    /// compares the remainder with half a quantum.
    Cut {
        kept: u128,
        quantum: i32,
        rest: Ordering,
    },
}

fn split(m: u128, e: i32, fmt: Format) -> Split {
    let top = e + bit_len(m) as i32 - 1;
    let quantum = (top - fmt.fraction_bits() as i32).max(fmt.qmin());
    let shift = i64::from(quantum) - i64::from(e);
    if shift <= 0 {
        return Split::OnGrid;
    }
    let (kept, rest) = match shift {
        s if s > 128 => (0, Ordering::Less),
        128 => (0, m.cmp(&(1u128 << 127))),
        s => {
            let s = s as u32;
            let low = m & ((1u128 << s) - 1);
            (m >> s, low.cmp(&(1u128 << (s - 1))))
        }
    };
    Split::Cut {
        kept,
        quantum,
        rest,
    }
}

/// `m × 2^e`, whose exact value compares with it as `side`, rounded to
/// `fmt`: the magnitude as an `f64`, infinity past the largest finite value.
fn round_magnitude(m: u128, e: i32, side: Ordering, fmt: Format) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let (value, quantum) = match split(m, e, fmt) {
        // On the grid, `side` cannot move the value: the exact value is at
        // most half an f64 ulp away (already decided for `f64` itself), far
        // less than half a quantum of a narrower format.
        Split::OnGrid => (m, e),
        Split::Cut {
            kept,
            quantum,
            rest,
        } => {
            let up = match rest.then(side) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => kept & 1 == 1,
            };
            (kept + u128::from(up), quantum)
        }
    };
    let top = quantum + bit_len(value) as i32 - 1;
    if value != 0 && top > fmt.emax() {
        return f64::INFINITY;
    }
    // A value of `fmt` has at most 53 significant bits: without its
    // trailing zeros the integer converts to f64 exactly, and scaling by a
    // power of two is exact for a representable result.
    let tz = value.trailing_zeros().min(127);
    let (value, quantum) = (value >> tz, quantum + tz as i32);
    value as f64 * pow2(quantum)
}

/// `m × 2^shift` for a shift that loses no bits (a right shift of zeros).
fn shift_exact(m: u128, shift: i32) -> u128 {
    if shift >= 0 {
        m.checked_shl(shift as u32).unwrap_or(0)
    } else {
        m.checked_shr(shift.unsigned_abs()).unwrap_or(0)
    }
}

fn bit_len(m: u128) -> u32 {
    128 - m.leading_zeros()
}

/// 2^q as an `f64`, for q in -1074 ..= 1023 (exact there).
fn pow2(q: i32) -> f64 {
    if q > 1023 {
        f64::INFINITY
    } else if q >= -1022 {
        f64::from_bits(((q + 1023) as u64) << 52)
    } else if q >= -1074 {
        f64::from_bits(1u64 << (q + 1074))
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
