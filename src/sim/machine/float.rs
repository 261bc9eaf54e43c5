//! IEEE formats and rounding that Rust's `f32`/`f64` do not give directly:
//! f16 and bf16 conversions, directed rounding (`.rz`, `.rm`, `.rp`), exact
//! integer → float conversion, flush-to-zero and canonical NaNs.

use crate::sim::decode::ops::Rnd;

/// A binary floating-point format: mantissa (fraction) and exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub mant: u32,
    pub exp: u32,
}

pub const F16: Format = Format { mant: 10, exp: 5 };
pub const BF16: Format = Format { mant: 7, exp: 8 };
pub const F32: Format = Format { mant: 23, exp: 8 };
pub const F64: Format = Format { mant: 52, exp: 11 };

/// The canonical NaN the hardware produces (all mantissa bits set).
pub fn canonical_nan(f: Format) -> u64 {
    (1u64 << (f.mant + f.exp)) - 1
}

/// Rounding direction for a value known to be exact or with a sticky error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    NearestEven,
    Zero,
    Down,
    Up,
}

impl Dir {
    pub fn of(r: Rnd) -> Dir {
        match r {
            Rnd::Rn | Rnd::Approx => Dir::NearestEven,
            Rnd::Rz => Dir::Zero,
            Rnd::Rm => Dir::Down,
            Rnd::Rp => Dir::Up,
        }
    }
}

/// Rounds an unsigned integer mantissa `mag` that is to be shifted right by
/// `shift` bits, in direction `dir` for a value of sign `neg`; `sticky` says
/// whether nonzero bits were already lost below `mag`.
fn round_shift(mag: u128, shift: u32, neg: bool, dir: Dir, sticky: bool) -> u128 {
    if shift == 0 && !sticky {
        return mag;
    }
    let (q, rem, half) = if shift >= 128 {
        (0, mag, u128::MAX)
    } else if shift == 0 {
        (mag, 0, 1)
    } else {
        (
            mag >> shift,
            mag & ((1u128 << shift) - 1),
            1u128 << (shift - 1),
        )
    };
    let inexact = rem != 0 || sticky;
    if !inexact {
        return q;
    }
    let up = match dir {
        Dir::Zero => false,
        Dir::Down => neg,
        Dir::Up => !neg,
        Dir::NearestEven => {
            if shift == 0 {
                false
            } else if rem > half || (rem == half && sticky) {
                true
            } else if rem == half {
                q & 1 == 1
            } else {
                false
            }
        }
    };
    q + u128::from(up)
}

/// Encodes `(-1)^neg * mag * 2^exp2` (with `sticky` lost bits below) in
/// format `f`, rounding in direction `dir`. `mag` may be any size.
pub fn encode(neg: bool, mag: u128, exp2: i32, sticky: bool, f: Format, dir: Dir) -> u64 {
    let sign = u64::from(neg) << (f.mant + f.exp);
    if mag == 0 {
        return sign;
    }
    let bias = (1i32 << (f.exp - 1)) - 1;
    let emin = 1 - bias;
    let emax = bias;
    let bitlen = 128 - mag.leading_zeros() as i32;
    // The exponent of the leading bit.
    let e = exp2 + bitlen - 1;
    // The quantum (unit in the last place) of the result: 2^q.
    let q = if e < emin {
        emin - f.mant as i32
    } else {
        e - f.mant as i32
    };
    let shift = q - exp2;
    let (m, q) = if shift > 0 {
        (round_shift(mag, shift as u32, neg, dir, sticky), q)
    } else {
        // Exact: shift left (mag fits since bitlen <= mant + 1 here).
        let m = mag << (-shift) as u32;
        (round_shift(m, 0, neg, dir, sticky), q)
    };
    // Re-normalise after rounding up to the next power of two.
    let (m, q) = if m >> (f.mant + 1) != 0 {
        (m >> 1, q + 1)
    } else {
        (m, q)
    };
    let top = if m == 0 {
        -1000
    } else {
        q + (128 - m.leading_zeros() as i32) - 1
    };
    if top > emax {
        let to_inf = match dir {
            Dir::NearestEven => true,
            Dir::Zero => false,
            Dir::Down => neg,
            Dir::Up => !neg,
        };
        let inf = ((1u64 << f.exp) - 1) << f.mant;
        return sign | if to_inf { inf } else { inf - 1 };
    }
    if m == 0 {
        return sign;
    }
    if m >> f.mant == 0 {
        // Subnormal (q == emin - mant).
        return sign | m as u64;
    }
    let biased = (q + f.mant as i32 + bias) as u64;
    sign | (biased << f.mant) | (m as u64 & ((1u64 << f.mant) - 1))
}

/// The parts of a finite f64: sign, integer mantissa, exponent.
fn parts64(x: f64) -> (bool, u128, i32) {
    let bits = x.to_bits();
    let neg = bits >> 63 == 1;
    let e = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if e == 0 {
        (neg, u128::from(frac), -1074)
    } else {
        (neg, u128::from(frac | (1u64 << 52)), e - 1075)
    }
}

/// Rounds `x + err` (exactly; `err` is the error of an f64 operation, below
/// half an ulp of `x`) into format `f`, which must be narrower than f64.
/// With two extra bits, `x ± err` becomes `4·mag ± 1`: a value strictly
/// between `x` and its f64 neighbour, where no point or midpoint of the
/// narrower format can lie.
pub fn round_f64(x: f64, err: f64, f: Format, dir: Dir) -> u64 {
    if x.is_nan() {
        return canonical_nan(f);
    }
    let sign = u64::from(x.is_sign_negative()) << (f.mant + f.exp);
    if x.is_infinite() {
        return sign | (((1u64 << f.exp) - 1) << f.mant);
    }
    if x == 0.0 {
        if err == 0.0 {
            return sign;
        }
        let (neg, mag, e) = parts64(err);
        return encode(neg, mag, e, false, f, dir);
    }
    let (neg, mag, e) = parts64(x);
    if err == 0.0 {
        return encode(neg, mag, e, false, f, dir);
    }
    let same = (err < 0.0) == neg;
    let m2 = if same { (mag << 2) + 1 } else { (mag << 2) - 1 };
    encode(neg, m2, e - 2, false, f, dir)
}

/// An unsigned or signed integer, exactly rounded into format `f`.
pub fn from_int(neg: bool, mag: u64, f: Format, dir: Dir) -> u64 {
    encode(neg, u128::from(mag), 0, false, f, dir)
}

pub fn f16_to_f32(h: u16) -> f32 {
    half_to_f32(u64::from(h), F16)
}

pub fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

fn half_to_f32(bits: u64, f: Format) -> f32 {
    let neg = bits >> (f.mant + f.exp) & 1 == 1;
    let e = (bits >> f.mant) & ((1 << f.exp) - 1);
    let frac = bits & ((1 << f.mant) - 1);
    let bias = (1i32 << (f.exp - 1)) - 1;
    let v = if e == (1 << f.exp) - 1 {
        if frac == 0 {
            f32::INFINITY
        } else {
            f32::NAN
        }
    } else if e == 0 {
        frac as f32 * 2f32.powi(1 - bias - f.mant as i32)
    } else {
        (frac | (1 << f.mant)) as f32 * 2f32.powi(e as i32 - bias - f.mant as i32)
    };
    if neg {
        -v
    } else {
        v
    }
}

pub fn f32_to_f16(x: f32) -> u16 {
    round_f64(f64::from(x), 0.0, F16, Dir::NearestEven) as u16
}

pub fn f32_to_bf16(x: f32) -> u16 {
    round_f64(f64::from(x), 0.0, BF16, Dir::NearestEven) as u16
}

/// Flushes an f32 subnormal to a zero of the same sign.
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        if x.is_sign_negative() {
            -0.0
        } else {
            0.0
        }
    } else {
        x
    }
}

/// The next f64 towards +inf (`up`) or -inf.
pub fn next_f64(x: f64, up: bool) -> f64 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    let away = (x > 0.0) == up;
    f64::from_bits(if away { bits + 1 } else { bits - 1 })
}

/// `s + e` where `s = fl(a + b)`: the exact error of the sum (TwoSum).
pub fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    let aa = s - bb;
    (a - aa) + (b - bb)
}

/// Applies a directed rounding to an f64 result `s` whose exact value is
/// `s + err` (`err` below half an ulp of `s`).
pub fn directed_f64(s: f64, err: f64, dir: Dir) -> f64 {
    if err == 0.0 || !s.is_finite() {
        return s;
    }
    match dir {
        Dir::NearestEven => s,
        Dir::Down if err < 0.0 => next_f64(s, false),
        Dir::Up if err > 0.0 => next_f64(s, true),
        Dir::Zero if (err < 0.0) != (s < 0.0) => next_f64(s, s < 0.0),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_trip_and_round() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // rounds to inf
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001); // smallest subnormal
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80); // tie to even
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
        for h in 0u16..=0xffff {
            let f = f16_to_f32(h);
            if !f.is_nan() {
                assert_eq!(f32_to_f16(f), h, "{h:#x}");
            }
        }
    }

    #[test]
    fn directed_rounding_and_integers() {
        let third = 1.0f64 / 3.0;
        let down = round_f64(third, 0.0, F32, Dir::Down);
        let up = round_f64(third, 0.0, F32, Dir::Up);
        assert_eq!(up - down, 1);
        assert_eq!(
            round_f64(third, 0.0, F32, Dir::NearestEven),
            u64::from((third as f32).to_bits())
        );
        // 2^24 + 1 is not an f32: nearest-even goes down, up goes up.
        let n = (1u64 << 24) + 1;
        assert_eq!(
            from_int(false, n, F32, Dir::NearestEven),
            u64::from(16_777_216f32.to_bits())
        );
        assert_eq!(
            from_int(false, n, F32, Dir::Up),
            u64::from(16_777_218f32.to_bits())
        );
        assert_eq!(
            from_int(true, 1, F64, Dir::NearestEven),
            (-1.0f64).to_bits()
        );
        assert_eq!(
            from_int(false, u64::MAX, F32, Dir::Zero),
            u64::from(f32::from_bits(0x5f7f_ffff).to_bits())
        );
        // A sticky error below an exact f32 value moves a directed rounding.
        assert_eq!(
            round_f64(1.0, -1e-30, F32, Dir::Down),
            u64::from(f32::from_bits(0x3f7f_ffff).to_bits())
        );
        assert_eq!(
            round_f64(1.0, -1e-30, F32, Dir::Up),
            u64::from(1f32.to_bits())
        );
        assert_eq!(
            round_f64(1.0, 1e-30, F32, Dir::Up),
            u64::from(f32::from_bits(0x3f80_0001).to_bits())
        );
    }
}
