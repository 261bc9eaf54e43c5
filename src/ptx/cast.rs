//! `as` conversions between every pair of scalar types (ptx-notes §8).
//!
//! - int ↔ int: sign- or zero-extend by the *source* signedness, truncate
//!   when narrowing, reinterpret at equal width;
//! - int → float rounds once to nearest even (`cvt.rn`, from any width);
//!   float → int truncates toward zero and saturates (`cvt.rzi`); a NaN
//!   gives 0, or `1 << (width - 1)` from `f64` or into 64 bits (the ISA's
//!   rule, which `ir::consteval::cast` folds identically);
//! - float → float: widening is exact (no rounding modifier), narrowing
//!   rounds to nearest even;
//! - `bool` → number: 0 or 1 (`selp`); number → `bool`: `!= 0` (`setp`,
//!   NaN counts as true).
//!
//! `bf16` has no direct `cvt` from integers or `f64` before sm_90; there the
//! value is first rounded to `f32` *to odd*, which makes the final rounding
//! to `bf16` correct (f32 has more than twice bf16's precision).

use super::error::Result;
use super::imm;
use super::narrow;
use super::suffix;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::types::Scalar;

impl Writer<'_> {
    /// Converts `v` of type `from` to type `to`.
    pub(super) fn convert(&mut self, v: Operand, from: Scalar, to: Scalar) -> Result<Operand> {
        if from == to {
            return Ok(v);
        }
        // cvt and setp want a register source.
        let v = self.in_reg(v, from);
        if from.converts_storage(to) {
            return Ok(Operand::Reg(self.storage_convert(v, from, to)?));
        }
        if to == Scalar::Bool {
            return self.bool_of(v, from);
        }
        if from == Scalar::Bool {
            return Ok(self.number_of_bool(v, to));
        }
        let d = match (from.is_int(), to.is_int()) {
            (true, true) => return Ok(self.int_to_int(v, from, to)),
            (true, false) => self.int_to_float(v, from, to)?,
            (false, true) => self.float_to_int(v, from, to)?,
            (false, false) => self.float_to_float(v, from, to)?,
        };
        Ok(Operand::Reg(d))
    }

    fn bool_of(&mut self, v: Reg, from: Scalar) -> Result<Operand> {
        let p = self.reg(Class::Pred);
        match from {
            Scalar::F16 | Scalar::BF16 => {
                let f = self.float_to_float(v, from, Scalar::F32)?;
                emit!(self, "setp.neu.f32 {}, {}, {};", p, f, imm::f32_imm(0.0));
            }
            Scalar::F32 => emit!(self, "setp.neu.f32 {}, {}, {};", p, v, imm::f32_imm(0.0)),
            Scalar::F64 => emit!(self, "setp.neu.f64 {}, {}, {};", p, v, imm::f64_imm(0.0)),
            _ => emit!(self, "setp.ne.{} {}, {}, 0;", suffix::arith(from), p, v),
        }
        Ok(Operand::Reg(p))
    }

    fn number_of_bool(&mut self, p: Reg, to: Scalar) -> Operand {
        let d = self.reg_for(to);
        let (one, zero) = (imm::number(1, to), imm::number(0, to));
        emit!(
            self,
            "selp.{} {}, {}, {}, {};",
            suffix::selp(to),
            d,
            one,
            zero,
            p
        );
        Operand::Reg(d)
    }

    /// Integer to integer: sign- or zero-extended by the source, truncated
    /// when narrowing. A narrow source is already extended to 32 bits; a
    /// narrow target keeps the low 8 or 16 bits, extended by its own
    /// signedness, unless every source value is one of its values.
    fn int_to_int(&mut self, v: Reg, from: Scalar, to: Scalar) -> Operand {
        match (from.bits() == 64, to.bits() == 64) {
            (false, true) => {
                let d = self.reg(Class::B64);
                let t = if from.is_signed_int() { "s" } else { "u" };
                emit!(self, "cvt.{t}64.{t}32 {}, {};", d, v);
                Operand::Reg(d)
            }
            (true, false) => {
                let d = self.reg(Class::B32);
                emit!(self, "cvt.u32.u64 {}, {};", d, v);
                self.wrap_narrow(Operand::Reg(d), to)
            }
            // Same width, or between 32 bits and narrower: the same bits,
            // wrapped into a narrow target that does not hold every value.
            _ if to.is_narrow_int() && !narrow::widens(from, to) => {
                self.wrap_narrow(Operand::Reg(v), to)
            }
            _ => Operand::Reg(v),
        }
    }

    fn int_to_float(&mut self, v: Reg, from: Scalar, to: Scalar) -> Result<Reg> {
        if to == Scalar::BF16 && from.is_narrow_int() {
            // PTX has no `cvt.bf16` from an 8- or 16-bit integer; `f32`
            // holds every such value exactly, so rounding it once to bf16
            // is the correct rounding.
            let f = self.reg(Class::F32);
            emit!(self, "cvt.rn.f32.{} {}, {};", suffix::cvt(from), f, v);
            return self.float_to_float(f, Scalar::F32, Scalar::BF16);
        }
        if to == Scalar::BF16 && !self.target.has_sm90_features() {
            // cvt.rz.f32 + sticky bit = round to odd; then round to bf16.
            let f = self.reg(Class::F32);
            let back = self.reg_for(from);
            let p = self.reg(Class::Pred);
            emit!(self, "cvt.rz.f32.{} {}, {};", suffix::cvt(from), f, v);
            emit!(self, "cvt.rzi.{}.f32 {}, {};", suffix::cvt(from), back, f);
            emit!(
                self,
                "setp.ne.{} {}, {}, {};",
                suffix::bits(from),
                p,
                back,
                v
            );
            return Ok(self.round_odd_to_bf16(f, p));
        }
        let d = self.reg_for(to);
        if to == Scalar::BF16 {
            self.need(7, 8);
        }
        emit!(
            self,
            "cvt.rn.{}.{} {}, {};",
            suffix::cvt(to),
            suffix::cvt(from),
            d,
            v
        );
        Ok(d)
    }

    /// Sets the lowest mantissa bit of `f` when `inexact`, then rounds to bf16.
    fn round_odd_to_bf16(&mut self, f: Reg, inexact: Reg) -> Reg {
        let bits = self.reg(Class::B32);
        let odd = self.reg(Class::F32);
        let d = self.reg(Class::B16);
        emit!(self, "mov.b32 {}, {};", bits, f);
        emit!(self, "@{} or.b32 {}, {}, 1;", inexact, bits, bits);
        emit!(self, "mov.b32 {}, {};", odd, bits);
        emit!(self, "cvt.rn.bf16.f32 {}, {};", d, odd);
        d
    }

    fn float_to_int(&mut self, v: Reg, from: Scalar, to: Scalar) -> Result<Reg> {
        // Halves widen exactly to f32 first (no sm_80 cvt from bf16 to int).
        let (v, from) = if from.is_half() {
            (self.float_to_float(v, from, Scalar::F32)?, Scalar::F32)
        } else {
            (v, from)
        };
        let d = self.reg_for(to);
        emit!(
            self,
            "cvt.rzi.{}.{} {}, {};",
            suffix::cvt(to),
            suffix::cvt(from),
            d,
            v
        );
        Ok(d)
    }

    /// Between two float formats (every pair is covered).
    pub(super) fn float_to_float(&mut self, v: Reg, from: Scalar, to: Scalar) -> Result<Reg> {
        use Scalar::*;
        if from == to {
            return Ok(v);
        }
        let d = self.reg_for(to);
        match (from, to) {
            (F32, F64) | (F16, F32) | (F16, F64) => emit!(
                self,
                "cvt.{}.{} {}, {};",
                suffix::cvt(to),
                suffix::cvt(from),
                d,
                v
            ),
            (BF16, F32) => {
                self.need(7, 1);
                emit!(self, "cvt.f32.bf16 {}, {};", d, v)
            }
            (F64, F32) | (F32, F16) | (F64, F16) | (F32, BF16) => {
                emit!(
                    self,
                    "cvt.rn.{}.{} {}, {};",
                    suffix::cvt(to),
                    suffix::cvt(from),
                    d,
                    v
                )
            }
            (F64, BF16) if self.target.has_sm90_features() => {
                self.need(7, 8);
                emit!(self, "cvt.rn.bf16.f64 {}, {};", d, v)
            }
            (F64, BF16) => {
                let f = self.reg(Class::F32);
                let back = self.reg(Class::F64);
                let p = self.reg(Class::Pred);
                emit!(self, "cvt.rz.f32.f64 {}, {};", f, v);
                emit!(self, "cvt.f64.f32 {}, {};", back, f);
                emit!(self, "setp.neu.f64 {}, {}, {};", p, back, v);
                return Ok(self.round_odd_to_bf16(f, p));
            }
            // Through f32, which holds every f16 and bf16 value exactly.
            (BF16, F64) | (BF16, F16) | (F16, BF16) => {
                let f = self.float_to_float(v, from, F32)?;
                return self.float_to_float(f, F32, to);
            }
            _ => return Err(self.invalid(format!("a float conversion from {from} to {to}"))),
        }
        Ok(d)
    }
}
