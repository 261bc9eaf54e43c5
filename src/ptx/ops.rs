//! Operators: unary and binary operators on every scalar type.
//!
//! Integers use the type's signedness (`div.s32`, `shr.u64`, `setp.lt.u32`);
//! `/` and `%` by a constant power of two become shifts and masks; floats
//! are IEEE with explicit rounding (`add.rn`, `mul.rn`, `div.rn`: ptxas may
//! not fuse them), `!=` is true on NaN; `f16`/`bf16` are computed in `f32`
//! and rounded back once; `bool` operators are predicate logic. Every
//! operation here computes what `ir::consteval` folds for it.

use super::error::Result;
use super::imm;
use super::suffix;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{BinOp, UnaryOp};
use crate::types::Scalar;

impl Writer<'_> {
    /// `-x` (unsigned: `0 - x`; halves: flip the sign bit) and `!x`. A
    /// narrow integer's result is wrapped back into its type (`-(-128i8)`
    /// is -128, `!0u8` is 255), except the bitwise not of a signed one,
    /// which stays in range.
    pub(super) fn unary(&mut self, op: UnaryOp, ty: Scalar, x: Operand) -> Result<Operand> {
        use Scalar::*;
        let d = self.reg_for(ty);
        match (op, ty) {
            (UnaryOp::Neg, I8 | I16 | I32 | I64 | F32 | F64) => {
                emit!(self, "neg.{} {}, {};", suffix::arith(ty), d, x)
            }
            (UnaryOp::Neg, U8 | U16 | U32 | U64) => {
                emit!(self, "sub.{} {}, 0, {};", suffix::arith(ty), d, x)
            }
            // Flipping the sign bit is exact negation for IEEE halves.
            (UnaryOp::Neg, F16 | BF16) => {
                emit!(self, "xor.b16 {}, {}, 0x8000;", d, x)
            }
            (UnaryOp::Neg, F16x2 | BF16x2) => return Ok(self.packed_unary("neg", ty, x)),
            (UnaryOp::Not, Bool | I8 | U8 | I16 | U16 | I32 | U32 | I64 | U64) => {
                emit!(self, "not.{} {}, {};", suffix::bits(ty), d, x)
            }
            _ => return Err(self.invalid(format!("`{}` on {ty}", op.symbol()))),
        }
        if op == UnaryOp::Not && ty.is_signed_int() {
            return Ok(Operand::Reg(d));
        }
        Ok(self.wrap_narrow(Operand::Reg(d), ty))
    }

    /// `x op y` on operands of type `ty` (`yty` is the shift amount's type).
    pub(super) fn binop(
        &mut self,
        op: BinOp,
        ty: Scalar,
        x: Operand,
        y: Operand,
        yty: Scalar,
    ) -> Result<Operand> {
        use BinOp::*;
        if ty == Scalar::Bool {
            return self.bool_binop(op, x, y);
        }
        if ty.is_packed() {
            return self.packed_binop(op, ty, x, y);
        }
        if ty.is_half() {
            // f16/bf16 arithmetic is done in f32 and rounded back once; f32
            // has more than twice the precision, so this equals a direct
            // correctly-rounded half operation.
            let (xf, yf) = (
                self.convert(x, ty, Scalar::F32)?,
                self.convert(y, ty, Scalar::F32)?,
            );
            let r = self.binop(op, Scalar::F32, xf, yf, Scalar::F32)?;
            return if op.is_comparison() {
                Ok(r)
            } else {
                self.convert(r, Scalar::F32, ty)
            };
        }
        if op.is_comparison() {
            let p = self.reg(Class::Pred);
            let cmp = match op {
                Eq => "eq",
                // `!=` is true on NaN, as in Rust and C.
                Ne if ty.is_float() => "neu",
                Ne => "ne",
                Lt => "lt",
                Le => "le",
                Gt => "gt",
                _ => "ge",
            };
            emit!(
                self,
                "setp.{}.{} {}, {}, {};",
                cmp,
                suffix::arith(ty),
                p,
                x,
                y
            );
            return Ok(Operand::Reg(p));
        }
        let d = self.reg_for(ty);
        // Integer `/` and `%` by a power of two (`pow2_shift` is only
        // ever `Some` for integers).
        if let (Div | Rem, Some(k)) = (op, pow2_shift(&y, ty)) {
            return Ok(self.div_pow2(op, ty, x, k));
        }
        let t = suffix::arith(ty);
        // Float add/sub/mul carry `.rn`, which ptxas never fuses into an
        // fma: the only fused multiply-adds are the ones `ir::contract`
        // chose, so constant folding knows every rounding.
        let rn = if ty.is_float() { ".rn" } else { "" };
        match op {
            Add => emit!(self, "add{}.{} {}, {}, {};", rn, t, d, x, y),
            Sub => emit!(self, "sub{}.{} {}, {}, {};", rn, t, d, x, y),
            Mul if ty.is_float() => emit!(self, "mul.rn.{} {}, {}, {};", t, d, x, y),
            Mul => emit!(self, "mul.lo.{} {}, {}, {};", t, d, x, y),
            Div if ty.is_float() => emit!(self, "div.rn.{} {}, {}, {};", t, d, x, y),
            Div => emit!(self, "div.{} {}, {}, {};", t, d, x, y),
            Rem if ty.is_float() => return Ok(self.float_rem(ty, x, y)),
            Rem => emit!(self, "rem.{} {}, {}, {};", t, d, x, y),
            BitAnd | BitOr | BitXor if ty.is_int() => {
                let name = match op {
                    BitAnd => "and",
                    BitOr => "or",
                    _ => "xor",
                };
                emit!(self, "{}.{} {}, {}, {};", name, suffix::bits(ty), d, x, y)
            }
            Shl | Shr if ty.is_int() => {
                let amount = self.shift_amount(y, yty, ty);
                if op == Shl {
                    emit!(self, "shl.{} {}, {}, {};", suffix::bits(ty), d, x, amount)
                } else {
                    emit!(self, "shr.{} {}, {}, {};", t, d, x, amount)
                }
            }
            _ => return Err(self.invalid(format!("`{}` on {ty}", op.symbol()))),
        }
        // A narrow result computed in 32 bits may leave its type: `+ - *`
        // and `<<` wrap, and signed `MIN / -1` is MIN again. (`>>`, `%`
        // and the bitwise operators of values in range stay in range.)
        let wraps = matches!(op, Add | Sub | Mul | Shl) || (op == Div && ty.is_signed_int());
        Ok(if wraps {
            self.wrap_narrow(Operand::Reg(d), ty)
        } else {
            Operand::Reg(d)
        })
    }

    /// Integer `/` and `%` by a constant power of two, as shifts and masks:
    /// ptxas emits a full division sequence for `div.u32 x, 16`.
    fn div_pow2(&mut self, op: BinOp, ty: Scalar, x: Operand, k: u32) -> Operand {
        // A narrow value sits sign- or zero-extended in a 32-bit register,
        // whose quotient by 2^k is the narrow one (it cannot overflow).
        let n = if ty.is_narrow_int() { 32 } else { ty.bits() };
        let b = suffix::bits(ty);
        let mask = (1u128 << k) - 1;
        let d = self.reg_for(ty);
        if !ty.is_signed_int() {
            match op {
                BinOp::Div => emit!(self, "shr.{} {}, {}, {};", suffix::arith(ty), d, x, k),
                _ => emit!(self, "and.{} {}, {}, {};", b, d, x, mask),
            }
            return Operand::Reg(d);
        }
        // Signed: round toward zero by adding 2^k - 1 to negative values.
        let s = suffix::arith(ty);
        let u = if n == 64 { "u64" } else { "u32" };
        let (sign, bias, t) = (self.reg_for(ty), self.reg_for(ty), self.reg_for(ty));
        emit!(self, "shr.{} {}, {}, {};", s, sign, x, n - 1);
        emit!(self, "shr.{} {}, {}, {};", u, bias, sign, n - k);
        emit!(self, "add.{} {}, {}, {};", s, t, x, bias);
        match op {
            BinOp::Div => emit!(self, "shr.{} {}, {}, {};", s, d, t, k),
            _ => {
                let m = self.reg_for(ty);
                emit!(
                    self,
                    "and.{} {}, {}, {};",
                    b,
                    m,
                    t,
                    imm::int_imm(!mask as i128, ty)
                );
                emit!(self, "sub.{} {}, {}, {};", s, d, x, m);
            }
        }
        Operand::Reg(d)
    }

    /// PTX shift amounts are always 32-bit, read as unsigned and clamped to
    /// the width of the shifted value `ty`. A 64-bit amount is clamped
    /// first, so 2^32 does not wrap to 0; a constant amount is clamped here
    /// (so `-1i32` is written as the full width, as the register would read).
    fn shift_amount(&mut self, y: Operand, yty: Scalar, ty: Scalar) -> Operand {
        if let Some(v) = imm::parse_int(&y) {
            let unsigned = if yty.bits() == 64 {
                u128::from(v as u64)
            } else {
                u128::from(v as u32)
            };
            return Operand::imm(unsigned.min(u128::from(ty.bits())));
        }
        match (&y, yty.bits()) {
            (Operand::Reg(r), 64) => {
                // Clamp first, so an amount of 2^32 does not wrap to 0.
                let (c, a) = (self.reg(Class::B64), self.reg(Class::B32));
                emit!(self, "min.u64 {}, {}, 64;", c, r);
                emit!(self, "cvt.u32.u64 {}, {};", a, c);
                Operand::Reg(a)
            }
            _ => y,
        }
    }

    /// `x % y` on floats: `x - trunc(x / y) * y`, the sign of `x` (C `fmod`
    /// for quotients that f32/f64 represent exactly).
    fn float_rem(&mut self, ty: Scalar, x: Operand, y: Operand) -> Operand {
        let t = suffix::arith(ty);
        let (q, n, d) = (self.reg_for(ty), self.reg_for(ty), self.reg_for(ty));
        emit!(self, "div.rn.{} {}, {}, {};", t, q, x, y);
        emit!(self, "cvt.rzi.{}.{} {}, {};", t, t, q, q);
        emit!(self, "neg.{} {}, {};", t, n, q);
        emit!(self, "fma.rn.{} {}, {}, {}, {};", t, d, n, y, x);
        Operand::Reg(d)
    }

    fn bool_binop(&mut self, op: BinOp, x: Operand, y: Operand) -> Result<Operand> {
        use BinOp::*;
        let d = self.reg(Class::Pred);
        match op {
            And | BitAnd => emit!(self, "and.pred {}, {}, {};", d, x, y),
            Or | BitOr => emit!(self, "or.pred {}, {}, {};", d, x, y),
            BitXor | Ne => emit!(self, "xor.pred {}, {}, {};", d, x, y),
            Eq => {
                let t = self.reg(Class::Pred);
                emit!(self, "xor.pred {}, {}, {};", t, x, y);
                emit!(self, "not.pred {}, {};", d, t);
            }
            // false < true, as in Rust.
            Lt | Le | Gt | Ge => {
                let (neg, other, combine) = match op {
                    Lt => (&x, &y, "and"),
                    Le => (&x, &y, "or"),
                    Gt => (&y, &x, "and"),
                    _ => (&y, &x, "or"),
                };
                let n = self.reg(Class::Pred);
                emit!(self, "not.pred {}, {};", n, neg);
                emit!(self, "{}.pred {}, {}, {};", combine, d, n, other);
            }
            _ => return Err(self.invalid(format!("`{}` on bool", op.symbol()))),
        }
        Ok(Operand::Reg(d))
    }
}

/// `k` when `y` is the integer constant 2^k (1 ≤ 2^k, and 2^k < 2^(bits-1)
/// for signed types).
fn pow2_shift(y: &Operand, ty: Scalar) -> Option<u32> {
    if !ty.is_int() {
        return None;
    }
    let v = imm::parse_int(y)?;
    let limit = if ty.is_signed_int() {
        ty.bits() - 1
    } else {
        ty.bits()
    };
    (v > 0 && v.count_ones() == 1 && v.trailing_zeros() < limit).then(|| v.trailing_zeros())
}
