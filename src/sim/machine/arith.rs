//! The value semantics of PTX's integer, logic and comparison instructions,
//! as pure functions of register bits (floats and conversions: `farith`). Values are
//! `u64` register contents; an instruction of a narrower type reads the low
//! bits and writes its result zero-extended.
//!
//! Rules implemented (PTX ISA): integer arithmetic wraps; `.sat` clamps;
//! shifts by at least the width give 0 (or the sign for `shr.s`); division
//! by zero gives all ones (the ISA leaves it unspecified); float results
//! that are NaN are the canonical NaN; `.ftz` flushes f32 subnormal inputs
//! and results to signed zero; `.sat` clamps floats to [0, 1] (NaN → 0);
//! float → integer conversions saturate and map NaN to 0.

use super::farith::to_f64;
use crate::sim::decode::ops::*;

/// The low `bits` of `v` (all of it for 64).
#[inline]
pub fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// `v`'s low `bits` as a signed number.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - bits;
        ((v << shift) as i64) >> shift
    }
}

#[inline]
pub(super) fn int_value(v: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        i128::from(sext(v, ty.bits()))
    } else {
        i128::from(trunc(v, ty.bits()))
    }
}

pub(super) fn int_range(ty: Ty) -> (i128, i128) {
    let bits = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

#[inline]
pub fn int_bin(op: IntOp, ty: Ty, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::AddSat | IntOp::SubSat => {
            let (lo, hi) = int_range(ty);
            let (x, y) = (int_value(a, ty), int_value(b, ty));
            let r = if op == IntOp::AddSat { x + y } else { x - y };
            r.clamp(lo, hi) as u64
        }
        IntOp::MulLo => a.wrapping_mul(b),
        IntOp::MulHi => {
            let p = int_value(a, ty).wrapping_mul(int_value(b, ty));
            (p >> bits) as u64
        }
        IntOp::MulWide => {
            let p = int_value(a, ty).wrapping_mul(int_value(b, ty));
            return trunc(p as u64, 2 * bits);
        }
        IntOp::Div | IntOp::Rem => {
            let (x, y) = (int_value(a, ty), int_value(b, ty));
            if y == 0 {
                if op == IntOp::Div {
                    u64::MAX
                } else {
                    a
                }
            } else if op == IntOp::Div {
                // i128 cannot overflow here; the wrap of MIN / -1 happens in trunc.
                (x / y) as u64
            } else {
                (x % y) as u64
            }
        }
        IntOp::Min => int_value(a, ty).min(int_value(b, ty)) as u64,
        IntOp::Max => int_value(a, ty).max(int_value(b, ty)) as u64,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        IntOp::Shl => {
            let n = trunc(b, 32);
            if n >= u64::from(bits) {
                0
            } else {
                a << n
            }
        }
        IntOp::Shr => {
            let n = trunc(b, 32);
            if signed {
                let x = sext(a, bits);
                (x >> n.min(63)) as u64
            } else if n >= u64::from(bits) {
                0
            } else {
                trunc(a, bits) >> n
            }
        }
    };
    let _ = signed;
    trunc(r, bits)
}

#[inline]
pub fn int_mad(mode: MadMode, ty: Ty, a: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    match mode {
        MadMode::Lo => trunc(a.wrapping_mul(b).wrapping_add(c), bits),
        MadMode::Hi => {
            let p = int_value(a, ty).wrapping_mul(int_value(b, ty));
            trunc(((p >> bits) as u64).wrapping_add(c), bits)
        }
        MadMode::Wide => {
            let p = int_value(a, ty).wrapping_mul(int_value(b, ty)) as u64;
            trunc(p.wrapping_add(c), 2 * bits)
        }
    }
}

pub fn int_un(op: IntUnOp, ty: Ty, a: u64) -> u64 {
    let bits = ty.bits();
    let v = trunc(a, bits);
    let r = match op {
        IntUnOp::Neg => v.wrapping_neg(),
        IntUnOp::Not => !v,
        IntUnOp::Abs => sext(v, bits).wrapping_abs() as u64,
        IntUnOp::Popc => u64::from(v.count_ones()),
        IntUnOp::Clz => u64::from(v.leading_zeros() - (64 - bits)),
        IntUnOp::Brev => v.reverse_bits() >> (64 - bits),
        IntUnOp::Cnot => u64::from(v == 0),
        IntUnOp::Bfind | IntUnOp::BfindShift => {
            let x = if ty.is_signed() && sext(v, bits) < 0 {
                trunc(!v, bits)
            } else {
                v
            };
            if x == 0 {
                return 0xffff_ffff;
            }
            let pos = u64::from(63 - x.leading_zeros());
            if op == IntUnOp::BfindShift {
                u64::from(bits) - 1 - pos
            } else {
                pos
            }
        }
    };
    if matches!(op, IntUnOp::Popc | IntUnOp::Clz) {
        r
    } else {
        trunc(r, bits)
    }
}

/// `bfe`: `len` bits of `a` from `pos`, sign-extended for signed types.
pub fn bfe(ty: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let msb = bits - 1;
    let pos = pos & 0xff;
    let len = len & 0xff;
    let sbit = if ty.is_signed() && len > 0 {
        (a >> (pos + len - 1).min(msb)) & 1
    } else {
        0
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

/// `bfi`: `len` bits of `a` inserted into `b` at `pos`.
pub fn bfi(ty: Ty, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let pos = pos & 0xff;
    let len = len & 0xff;
    let mut d = trunc(b, bits as u32);
    for i in 0..len {
        if pos + i >= bits {
            break;
        }
        let bit = (a >> i) & 1;
        d = (d & !(1 << (pos + i))) | (bit << (pos + i));
    }
    d
}

/// `prmt.b32` in the default mode: each result byte picks one of the eight
/// bytes of `{b, a}` (or replicates its sign bit).
pub fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let bytes = (trunc(b, 32) << 32) | trunc(a, 32);
    let mut d = 0u64;
    for i in 0..4 {
        let sel = (c >> (4 * i)) & 0xf;
        let byte = (bytes >> (8 * (sel & 7))) & 0xff;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= byte << (8 * i);
    }
    d
}

#[inline]
pub fn setp(cmp: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    if !ty.is_float() {
        let (x, y) = (int_value(a, ty), int_value(b, ty));
        return match cmp {
            Cmp::Eq | Cmp::Equ => x == y,
            Cmp::Ne | Cmp::Neu => x != y,
            Cmp::Lt | Cmp::Ltu => x < y,
            Cmp::Le | Cmp::Leu => x <= y,
            Cmp::Gt | Cmp::Gtu => x > y,
            Cmp::Ge | Cmp::Geu => x >= y,
            Cmp::Num => true,
            Cmp::Nan => false,
        };
    }
    let (x, y) = (to_f64(a, ty), to_f64(b, ty));
    let nan = x.is_nan() || y.is_nan();
    match cmp {
        Cmp::Eq => !nan && x == y,
        Cmp::Ne => !nan && x != y,
        Cmp::Lt => !nan && x < y,
        Cmp::Le => !nan && x <= y,
        Cmp::Gt => !nan && x > y,
        Cmp::Ge => !nan && x >= y,
        Cmp::Equ => nan || x == y,
        Cmp::Neu => nan || x != y,
        Cmp::Ltu => nan || x < y,
        Cmp::Leu => nan || x <= y,
        Cmp::Gtu => nan || x > y,
        Cmp::Geu => nan || x >= y,
        Cmp::Num => !nan,
        Cmp::Nan => nan,
    }
}

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c` (PTX ISA §9.7.8.9): the 64-bit
/// value `b:a` (`b` the high word) shifted left (`d` its high word) or
/// right (`d` its low word) by `c` modulo 32 (`.wrap`) or at most 32
/// (`.clamp`).
pub fn shf(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if clamp {
        (c as u32).min(32)
    } else {
        c as u32 & 31
    };
    let wide = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    if left {
        (wide << n) >> 32 & 0xffff_ffff
    } else {
        (wide >> n) & 0xffff_ffff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_rules() {
        assert_eq!(int_bin(IntOp::Add, Ty::U32, 0xffff_ffff, 1), 0);
        assert_eq!(int_bin(IntOp::AddSat, Ty::S32, 0x7fff_ffff, 1), 0x7fff_ffff);
        assert_eq!(int_bin(IntOp::Shr, Ty::S32, 0x8000_0000, 40), 0xffff_ffff);
        assert_eq!(int_bin(IntOp::Shr, Ty::U32, 0x8000_0000, 32), 0);
        assert_eq!(int_bin(IntOp::Shl, Ty::U64, 1, 63), 1 << 63);
        assert_eq!(
            int_bin(IntOp::Div, Ty::S32, (-7i32) as u32 as u64, 2),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            int_bin(IntOp::Rem, Ty::S32, (-7i32) as u32 as u64, 2),
            (-1i32) as u32 as u64
        );
        assert_eq!(
            int_bin(IntOp::Div, Ty::S32, 0x8000_0000, 0xffff_ffff),
            0x8000_0000
        );
        assert_eq!(int_bin(IntOp::Div, Ty::U32, 5, 0), 0xffff_ffff);
        assert_eq!(
            int_bin(IntOp::MulWide, Ty::S32, 0xffff_ffff, 2),
            (-2i64) as u64
        );
        assert_eq!(int_bin(IntOp::MulHi, Ty::U32, 0x8000_0000, 4), 2);
        assert_eq!(int_mad(MadMode::Lo, Ty::S32, 3, 4, 5), 17);
        assert_eq!(int_un(IntUnOp::Clz, Ty::U32, 1), 31);
        assert_eq!(int_un(IntUnOp::Bfind, Ty::U32, 0), 0xffff_ffff);
        assert_eq!(int_un(IntUnOp::Brev, Ty::U32, 1), 0x8000_0000);
        assert_eq!(bfe(Ty::U32, 0b1011_0000, 4, 4), 0b1011);
        assert_eq!(bfe(Ty::S32, 0b1011_0000, 4, 4), 0xffff_fffb);
        assert_eq!(bfi(Ty::U32, 0b11, 0, 4, 2), 0b11_0000);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x3210), 0x4433_2211);
        assert_eq!(prmt(0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
    }

    #[test]
    fn funnel_shifts() {
        // `b:a` = 0x89abcdef_01234567.
        let (a, b) = (0x0123_4567, 0x89ab_cdef);
        assert_eq!(shf(true, false, a, b, 8), 0xabcd_ef01);
        assert_eq!(shf(false, false, a, b, 8), 0xef01_2345);
        // `.wrap` takes the count modulo 32, `.clamp` at most 32.
        assert_eq!(shf(true, false, a, b, 40), 0xabcd_ef01);
        assert_eq!(shf(true, true, a, b, 40), 0x0123_4567);
        assert_eq!(shf(false, true, a, b, 40), 0x89ab_cdef);
        // A rotate: `a` = `b`.
        assert_eq!(shf(true, false, 0xffff_fffe, 0xffff_fffe, 3), 0xffff_fff7);
    }
}
