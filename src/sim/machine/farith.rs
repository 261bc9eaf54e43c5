//! The value semantics of PTX's float arithmetic and of `cvt`, as pure
//! functions of register bits: rounding modes, flush-to-zero, saturation,
//! canonical NaNs, saturating float → integer conversion (see `arith` for
//! the rules common to both).

use super::arith::{int_range, int_value, sext, trunc};
use super::float::{self, Dir, Format};
use crate::sim::decode::ops::*;

/// A float register value widened to f64 (exact for every format).
pub fn to_f64(v: u64, ty: Ty) -> f64 {
    match ty {
        Ty::F16 => f64::from(float::f16_to_f32(v as u16)),
        Ty::BF16 => f64::from(float::bf16_to_f32(v as u16)),
        Ty::F32 => f64::from(f32::from_bits(v as u32)),
        _ => f64::from_bits(v),
    }
}

fn format(ty: Ty) -> Format {
    match ty {
        Ty::F16 => float::F16,
        Ty::BF16 => float::BF16,
        Ty::F32 => float::F32,
        _ => float::F64,
    }
}

/// Finishes an f32 result: flush-to-zero, saturation, canonical NaN.
fn finish32(r: f32, mode: FMode) -> u64 {
    let r = if mode.ftz { float::ftz32(r) } else { r };
    let r = if mode.sat {
        sat(f64::from(r)) as f32
    } else {
        r
    };
    if r.is_nan() {
        float::canonical_nan(float::F32)
    } else {
        u64::from(r.to_bits())
    }
}

fn finish64(r: f64, mode: FMode) -> u64 {
    let r = if mode.sat { sat(r) } else { r };
    if r.is_nan() {
        float::canonical_nan(float::F64)
    } else {
        r.to_bits()
    }
}

/// Rounds an f64 computed from half-precision inputs back to `ty`.
fn finish_half(r: f64, err: f64, ty: Ty, mode: FMode) -> u64 {
    let r = if mode.sat { sat(r) } else { r };
    float::round_f64(r, err, format(ty), Dir::NearestEven)
}

fn sat(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

fn in32(v: u64, mode: FMode) -> f32 {
    let x = f32::from_bits(v as u32);
    if mode.ftz {
        float::ftz32(x)
    } else {
        x
    }
}

/// `min`/`max`: a NaN input loses to a number; -0 is below +0.
fn minmax(x: f64, y: f64, max: bool, nan_wins: bool) -> f64 {
    if x.is_nan() || y.is_nan() {
        if nan_wins || (x.is_nan() && y.is_nan()) {
            return f64::NAN;
        }
        return if x.is_nan() { y } else { x };
    }
    if x == y {
        // Only the zeros differ: pick by sign.
        let neg = if max {
            x.is_sign_negative() && y.is_sign_negative()
        } else {
            x.is_sign_negative() || y.is_sign_negative()
        };
        return if neg { -x.abs() } else { x.abs() };
    }
    if (x > y) == max {
        x
    } else {
        y
    }
}

pub fn float_bin(op: FOp, ty: Ty, rnd: Rnd, mode: FMode, a: u64, b: u64) -> u64 {
    let dir = Dir::of(rnd);
    match ty {
        Ty::F32 => {
            let (x, y) = (in32(a, mode), in32(b, mode));
            let (xd, yd) = (f64::from(x), f64::from(y));
            let r = match op {
                FOp::Add | FOp::Sub => {
                    let y = if op == FOp::Sub { -y } else { y };
                    if dir == Dir::NearestEven {
                        x + y
                    } else {
                        let yd = f64::from(y);
                        let s = xd + yd;
                        let err = float::two_sum_err(xd, yd, s);
                        f32::from_bits(float::round_f64(s, err, float::F32, dir) as u32)
                    }
                }
                FOp::Mul => {
                    if dir == Dir::NearestEven {
                        x * y
                    } else {
                        f32::from_bits(float::round_f64(xd * yd, 0.0, float::F32, dir) as u32)
                    }
                }
                FOp::Div => {
                    if rnd == Rnd::Approx {
                        (xd / yd) as f32
                    } else {
                        x / y
                    }
                }
                FOp::Min | FOp::Max | FOp::MinNan | FOp::MaxNan => minmax(
                    xd,
                    yd,
                    matches!(op, FOp::Max | FOp::MaxNan),
                    matches!(op, FOp::MinNan | FOp::MaxNan),
                ) as f32,
                FOp::Copysign => {
                    return u64::from((y.abs().to_bits()) | (x.to_bits() & 0x8000_0000))
                }
            };
            finish32(r, mode)
        }
        Ty::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            let r = match op {
                FOp::Add | FOp::Sub => {
                    let y = if op == FOp::Sub { -y } else { y };
                    let s = x + y;
                    float::directed_f64(s, float::two_sum_err(x, y, s), dir)
                }
                FOp::Mul => {
                    let p = x * y;
                    let err = if p.is_finite() { x.mul_add(y, -p) } else { 0.0 };
                    float::directed_f64(p, err, dir)
                }
                FOp::Div => x / y,
                FOp::Min | FOp::Max | FOp::MinNan | FOp::MaxNan => minmax(
                    x,
                    y,
                    matches!(op, FOp::Max | FOp::MaxNan),
                    matches!(op, FOp::MinNan | FOp::MaxNan),
                ),
                FOp::Copysign => return (y.abs().to_bits()) | (x.to_bits() & (1 << 63)),
            };
            finish64(r, mode)
        }
        _ => {
            // f16/bf16: exact in f64, then one rounding (with the error of
            // the f64 operation where it can have one).
            let (x, y) = (to_f64(a, ty), to_f64(b, ty));
            let (r, err) = match op {
                FOp::Add => {
                    let s = x + y;
                    (s, float::two_sum_err(x, y, s))
                }
                FOp::Sub => {
                    let s = x - y;
                    (s, float::two_sum_err(x, -y, s))
                }
                FOp::Mul => (x * y, 0.0),
                FOp::Div => {
                    let q = x / y;
                    let err = if q.is_finite() && y != 0.0 {
                        -(q.mul_add(y, -x)) / y
                    } else {
                        0.0
                    };
                    (q, err)
                }
                FOp::Min | FOp::Max | FOp::MinNan | FOp::MaxNan => (
                    minmax(
                        x,
                        y,
                        matches!(op, FOp::Max | FOp::MaxNan),
                        matches!(op, FOp::MinNan | FOp::MaxNan),
                    ),
                    0.0,
                ),
                FOp::Copysign => {
                    let sign = 1u64 << (ty.bits() - 1);
                    return (trunc(b, ty.bits()) & !sign) | (a & sign);
                }
            };
            finish_half(r, err, ty, mode)
        }
    }
}

pub fn fma(ty: Ty, rnd: Rnd, mode: FMode, a: u64, b: u64, c: u64) -> u64 {
    let dir = Dir::of(rnd);
    match ty {
        Ty::F32 => {
            let (x, y, z) = (in32(a, mode), in32(b, mode), in32(c, mode));
            let r = if dir == Dir::NearestEven {
                x.mul_add(y, z)
            } else {
                let p = f64::from(x) * f64::from(y);
                let s = p + f64::from(z);
                let err = float::two_sum_err(p, f64::from(z), s);
                f32::from_bits(float::round_f64(s, err, float::F32, dir) as u32)
            };
            finish32(r, mode)
        }
        Ty::F64 => finish64(
            f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)),
            mode,
        ),
        _ => {
            let (x, y, z) = (to_f64(a, ty), to_f64(b, ty), to_f64(c, ty));
            let p = x * y;
            let s = p + z;
            finish_half(s, float::two_sum_err(p, z, s), ty, mode)
        }
    }
}

fn approx(op: FUnOp, x: f64) -> f64 {
    match op {
        FUnOp::Sqrt => x.sqrt(),
        FUnOp::Rsqrt => 1.0 / x.sqrt(),
        FUnOp::Rcp => 1.0 / x,
        FUnOp::Ex2 => x.exp2(),
        FUnOp::Lg2 => x.log2(),
        FUnOp::Sin => x.sin(),
        FUnOp::Cos => x.cos(),
        FUnOp::Tanh => x.tanh(),
        FUnOp::Neg => -x,
        FUnOp::Abs => x.abs(),
    }
}

pub fn float_un(op: FUnOp, ty: Ty, rnd: Rnd, mode: FMode, a: u64) -> u64 {
    let bits = ty.bits();
    let sign = 1u64 << (bits - 1);
    match op {
        FUnOp::Neg | FUnOp::Abs => {
            let v = if ty == Ty::F32 && mode.ftz {
                u64::from(in32(a, mode).to_bits())
            } else {
                trunc(a, bits)
            };
            return if op == FUnOp::Neg {
                v ^ sign
            } else {
                v & !sign
            };
        }
        _ => {}
    }
    match ty {
        Ty::F32 => {
            let x = in32(a, mode);
            let r = match (op, rnd) {
                (FUnOp::Sqrt, Rnd::Rn) => x.sqrt(),
                (FUnOp::Rcp, Rnd::Rn) => 1.0 / x,
                _ => approx(op, f64::from(x)) as f32,
            };
            finish32(r, mode)
        }
        Ty::F64 => {
            let x = f64::from_bits(a);
            finish64(approx(op, x), mode)
        }
        _ => finish_half(approx(op, to_f64(a, ty)), 0.0, ty, mode),
    }
}

/// A packed result: `f(0)` (the operation on the low halves, whose
/// operands are shifted by 0) in the low 16 bits, `f(16)` in the high ones.
pub fn halves(f: impl Fn(u32) -> u64) -> u64 {
    (f(0) & 0xffff) | (f(16) & 0xffff) << 16
}

/// `cvt.rna.tf32.f32`: `a` rounded to 10 fraction bits, ties away from
/// zero, in an `f32` whose low 13 bits are clear; NaN is the canonical
/// `f32` NaN, and what rounds past the largest finite value is infinite.
pub fn tf32(a: u64) -> u64 {
    let x = f32::from_bits(a as u32);
    if x.is_nan() {
        return float::canonical_nan(float::F32);
    }
    let bits = a as u32;
    let magnitude = ((bits & 0x7fff_ffff).saturating_add(0x1000) & !0x1fff).min(0x7f80_0000);
    u64::from((bits & 0x8000_0000) | magnitude)
}

pub fn cvt(c: Cvt, a: u64) -> u64 {
    let (from, to) = (c.from, c.to);
    if from.is_int() && to.is_int() {
        let v = int_value(a, from);
        let v = if c.sat {
            let (lo, hi) = int_range(to);
            v.clamp(lo, hi)
        } else {
            v
        };
        return int_result(v as u64, to);
    }
    if from.is_int() {
        let v = int_value(a, from);
        let dir = match c.rnd {
            CvtRnd::Rz => Dir::Zero,
            CvtRnd::Rm => Dir::Down,
            CvtRnd::Rp => Dir::Up,
            _ => Dir::NearestEven,
        };
        let bits = float::from_int(v < 0, v.unsigned_abs() as u64, format(to), dir);
        if c.sat {
            return float_sat_bits(bits, to);
        }
        return bits;
    }
    let mut x = to_f64(a, from);
    if c.ftz && from == Ty::F32 && x != 0.0 && x.abs() < f64::from(f32::MIN_POSITIVE) {
        x = if x < 0.0 { -0.0 } else { 0.0 };
    }
    if to.is_int() {
        if x.is_nan() {
            // The PTX ISA (`cvt`, since 9.0 in writing): 0, unless the
            // source is `.f64` or the destination 64 bits wide; then
            // `1 << (width - 1)` (MININT, or MAXINT/2 + 1 unsigned).
            return if from == Ty::F64 || to.bits() == 64 {
                int_result(1 << (to.bits() - 1), to)
            } else {
                0
            };
        }
        let r = match c.rnd {
            CvtRnd::Rni => x.round_ties_even(),
            CvtRnd::Rmi => x.floor(),
            CvtRnd::Rpi => x.ceil(),
            _ => x.trunc(),
        };
        let (lo, hi) = int_range(to);
        let v = if r <= lo as f64 {
            lo
        } else if r >= hi as f64 {
            hi
        } else {
            r as i128
        };
        return int_result(v as u64, to);
    }
    // float → float
    let x = match c.rnd {
        CvtRnd::Rni => x.round_ties_even(),
        CvtRnd::Rzi => x.trunc(),
        CvtRnd::Rmi => x.floor(),
        CvtRnd::Rpi => x.ceil(),
        _ => x,
    };
    let x = if c.relu && (x < 0.0 || x.is_nan()) {
        if x.is_nan() {
            f64::NAN
        } else {
            0.0
        }
    } else {
        x
    };
    let x = if c.sat { sat(x) } else { x };
    let dir = match c.rnd {
        CvtRnd::Rz => Dir::Zero,
        CvtRnd::Rm => Dir::Down,
        CvtRnd::Rp => Dir::Up,
        _ => Dir::NearestEven,
    };
    let bits = if to == Ty::F64 {
        if x.is_nan() {
            float::canonical_nan(float::F64)
        } else {
            x.to_bits()
        }
    } else {
        float::round_f64(x, 0.0, format(to), dir)
    };
    if c.ftz && to == Ty::F32 {
        return u64::from(float::ftz32(f32::from_bits(bits as u32)).to_bits());
    }
    bits
}

/// An integer result of `cvt` in its register: the low bits of the type,
/// sign-extended for a signed type and zero-extended otherwise (the PTX
/// ISA's rule for a destination register wider than the instruction type:
/// `cvt.rzi.s8.f32` of -1.0 into a `.b32` register is 0xFFFFFFFF).
fn int_result(v: u64, to: Ty) -> u64 {
    let r = trunc(v, to.bits());
    if to.is_signed() {
        sext(r, to.bits()) as u64
    } else {
        r
    }
}

fn float_sat_bits(bits: u64, ty: Ty) -> u64 {
    let x = sat(to_f64(bits, ty));
    match ty {
        Ty::F64 => x.to_bits(),
        _ => float::round_f64(x, 0.0, format(ty), Dir::NearestEven),
    }
}

/// A packed conversion (`cvt.rn.bf16x2.f32 d, a, b` and its kin): `a` into
/// the upper half (byte) of `d`, `b` into the lower, each rounded once;
/// `.relu` makes negative results +0 (and NaN the canonical NaN),
/// `.satfinite` makes results beyond the largest finite value (infinities
/// included) that value of the same sign, and keeps NaN.
pub fn cvt_packed(c: CvtPacked, a: u64, b: u64) -> u64 {
    use crate::fp8::Fp8;
    let dir = if c.rz { Dir::Zero } else { Dir::NearestEven };
    let half = |x: f64, f: float::Format| -> u64 {
        let x = if c.relu && (x < 0.0 || x.is_nan()) {
            if x.is_nan() {
                return float::canonical_nan(f);
            }
            0.0
        } else {
            x
        };
        let bits = float::round_f64(x, 0.0, f, dir);
        let inf = ((1u64 << f.exp) - 1) << f.mant;
        if c.satfinite && bits & !(1 << (f.mant + f.exp)) == inf {
            // The largest finite value, with the sign.
            return bits - 1;
        }
        bits
    };
    let eight = |x: f64, f: Fp8| -> u64 {
        if x.is_nan() {
            return u64::from(f.nan());
        }
        let x = if c.relu && x < 0.0 { 0.0 } else { x };
        u64::from(f.encode(x, c.satfinite))
    };
    let f32v = |v: u64| f64::from(f32::from_bits(v as u32));
    let f16v = |v: u64| f64::from(float::f16_to_f32(v as u16));
    match c.kind {
        Packed::Bf16x2FromF32 => half(f32v(a), float::BF16) << 16 | half(f32v(b), float::BF16),
        Packed::F16x2FromF32 => half(f32v(a), float::F16) << 16 | half(f32v(b), float::F16),
        Packed::E4m3x2FromF32 => eight(f32v(a), Fp8::E4M3) << 8 | eight(f32v(b), Fp8::E4M3),
        Packed::E5m2x2FromF32 => eight(f32v(a), Fp8::E5M2) << 8 | eight(f32v(b), Fp8::E5M2),
        Packed::E4m3x2FromF16x2 => {
            eight(f16v(a >> 16), Fp8::E4M3) << 8 | eight(f16v(a & 0xffff), Fp8::E4M3)
        }
        Packed::E5m2x2FromF16x2 => {
            eight(f16v(a >> 16), Fp8::E5M2) << 8 | eight(f16v(a & 0xffff), Fp8::E5M2)
        }
        Packed::F16x2FromE4m3x2 | Packed::F16x2FromE5m2x2 => {
            let f = if c.kind == Packed::F16x2FromE4m3x2 {
                Fp8::E4M3
            } else {
                Fp8::E5M2
            };
            // Exact: every 8-bit float is an f16.
            half(f.decode((a >> 8) as u8), float::F16) << 16 | half(f.decode(a as u8), float::F16)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_rules() {
        let f = |x: f32| u64::from(x.to_bits());
        let m = FMode::default();
        assert_eq!(
            float_bin(FOp::Add, Ty::F32, Rnd::Rn, m, f(1.0), f(2.0)),
            f(3.0)
        );
        assert_eq!(
            float_bin(FOp::Min, Ty::F32, Rnd::Rn, m, f(f32::NAN), f(2.0)),
            f(2.0)
        );
        assert_eq!(
            float_bin(FOp::Min, Ty::F32, Rnd::Rn, m, f(0.0), f(-0.0)),
            f(-0.0)
        );
        // 1 + 2^-30 rounds to 1 (rn, rz, rm) or up (rp).
        let tiny = f(2f32.powi(-30));
        assert_eq!(
            float_bin(FOp::Add, Ty::F32, Rnd::Rp, m, f(1.0), tiny),
            f(1.0 + f32::EPSILON)
        );
        assert_eq!(
            float_bin(FOp::Add, Ty::F32, Rnd::Rz, m, f(1.0), tiny),
            f(1.0)
        );
        let sat = FMode {
            ftz: false,
            sat: true,
        };
        assert_eq!(
            float_bin(FOp::Mul, Ty::F32, Rnd::Rn, sat, f(3.0), f(2.0)),
            f(1.0)
        );
        let ftz = FMode {
            ftz: true,
            sat: false,
        };
        assert_eq!(
            float_bin(FOp::Mul, Ty::F32, Rnd::Rn, ftz, f(1e-39), f(1.0)),
            f(0.0)
        );
        assert_eq!(
            float_bin(FOp::Div, Ty::F32, Rnd::Rn, m, f(0.0), f(0.0)),
            0x7fff_ffff
        );
        let c = |to, from, rnd| Cvt {
            to,
            from,
            rnd,
            sat: false,
            ftz: false,
            relu: false,
        };
        // A signed result is sign-extended in its register.
        assert_eq!(
            cvt(c(Ty::S32, Ty::F32, CvtRnd::Rzi), f(-2.7)),
            (-2i64) as u64
        );
        assert_eq!(cvt(c(Ty::S8, Ty::F32, CvtRnd::Rzi), f(-1.5)), u64::MAX);
        assert_eq!(
            cvt(c(Ty::S8, Ty::F32, CvtRnd::Rzi), f(-1e9)),
            (-128i64) as u64
        );
        assert_eq!(cvt(c(Ty::S8, Ty::F32, CvtRnd::Rzi), f(300.0)), 127);
        assert_eq!(cvt(c(Ty::U8, Ty::F32, CvtRnd::Rzi), f(300.0)), 255);
        assert_eq!(cvt(c(Ty::U8, Ty::F32, CvtRnd::Rzi), f(-3.0)), 0);
        assert_eq!(
            cvt(c(Ty::U16, Ty::F64, CvtRnd::Rzi), 1e9f64.to_bits()),
            0xffff
        );
        assert_eq!(
            cvt(c(Ty::S16, Ty::F64, CvtRnd::Rzi), f64::NAN.to_bits()),
            (-32768i64) as u64
        );
        assert_eq!(
            cvt(c(Ty::U8, Ty::F64, CvtRnd::Rzi), f64::NAN.to_bits()),
            0x80
        );
        assert_eq!(cvt(c(Ty::S32, Ty::F32, CvtRnd::Rni), f(2.5)), 2);
        assert_eq!(cvt(c(Ty::U32, Ty::F32, CvtRnd::Rzi), f(-5.0)), 0);
        assert_eq!(cvt(c(Ty::S32, Ty::F32, CvtRnd::Rzi), f(1e20)), 0x7fff_ffff);
        assert_eq!(cvt(c(Ty::U32, Ty::F32, CvtRnd::Rzi), f(f32::NAN)), 0);
        assert_eq!(cvt(c(Ty::S16, Ty::F32, CvtRnd::Rzi), f(f32::NAN)), 0);
        assert_eq!(
            cvt(c(Ty::S32, Ty::F64, CvtRnd::Rzi), f64::NAN.to_bits()),
            i64::from(i32::MIN) as u64
        );
        assert_eq!(
            cvt(c(Ty::U32, Ty::F64, CvtRnd::Rni), f64::NAN.to_bits()),
            0x8000_0000
        );
        assert_eq!(cvt(c(Ty::S64, Ty::F32, CvtRnd::Rzi), f(f32::NAN)), 1 << 63);
        assert_eq!(cvt(c(Ty::U64, Ty::F16, CvtRnd::Rzi), 0x7e00), 1 << 63);
        assert_eq!(
            cvt(c(Ty::F32, Ty::S32, CvtRnd::Rn), (-3i32) as u32 as u64),
            f(-3.0)
        );
        assert_eq!(
            cvt(c(Ty::S64, Ty::S32, CvtRnd::None), 0xffff_ffff),
            u64::MAX
        );
        assert_eq!(
            cvt(c(Ty::U64, Ty::U32, CvtRnd::None), 0xffff_ffff),
            0xffff_ffff
        );
        assert_eq!(cvt(c(Ty::F16, Ty::F32, CvtRnd::Rn), f(1.0)), 0x3c00);
        assert_eq!(cvt(c(Ty::F32, Ty::BF16, CvtRnd::None), 0x3f80), f(1.0));
        assert_eq!(
            cvt(c(Ty::F32, Ty::F64, CvtRnd::Rn), 0.1f64.to_bits()),
            f(0.1)
        );
    }
}
