//! The narrow integers (`u8`, `i8`, `u16`, `i16`) in 32-bit registers.
//!
//! PTX has no 8-bit registers, and its 16-bit integer instructions would
//! only add conversions at every load, store and comparison, so a narrow
//! value lives in a `.b32` register, always **in range**: sign-extended
//! from its width for `i8`/`i16`, zero-extended for `u8`/`u16` (what
//! `ld.global.s8`/`.u8` into a 32-bit register produce). On values in
//! range, the 32-bit comparisons, `min`/`max`, `/` and `%` (but `MIN / -1`),
//! `>>`, `&`, `|`, `^` and `selp` compute exactly the narrow result; every
//! operation that can leave the range (`+ - *`, `<<`, negation, bitwise not
//! of an unsigned value, `abs`, signed `/`, integer conversions to a narrow
//! type) is followed by [`Writer::wrap_narrow`], which wraps the result into
//! the type as kdsl's arithmetic wraps (`docs/language.md` §3), exactly what
//! `ir::consteval` folds.

use super::suffix;
use super::writer::{emit, Operand, Writer};
use crate::types::Scalar;

impl Writer<'_> {
    /// `v` (a 32-bit register holding some integer) wrapped into the narrow
    /// type `ty`: its low 8 or 16 bits, sign- or zero-extended (`cvt.s32.s8`
    /// reads the low byte of its source register). Any other type, and an
    /// immediate (constants are values of their type), is returned as is.
    pub(super) fn wrap_narrow(&mut self, v: Operand, ty: Scalar) -> Operand {
        let Operand::Reg(r) = v else {
            return v;
        };
        if !ty.is_narrow_int() {
            return Operand::Reg(r);
        }
        let d = self.reg_for(ty);
        let wide = if ty.is_signed_int() { "s32" } else { "u32" };
        emit!(self, "cvt.{}.{} {}, {};", wide, suffix::cvt(ty), d, r);
        Operand::Reg(d)
    }
}

/// True when every value of `from` is a value of `to` (both integers), so
/// that a value in range for `from` is already in range for `to`.
pub(super) fn widens(from: Scalar, to: Scalar) -> bool {
    match (from.int_range(), to.int_range()) {
        (Some((a, b)), Some((c, d))) => c <= a && b <= d,
        _ => false,
    }
}
