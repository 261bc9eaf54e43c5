//! Packed pairs of halves (`f16x2`, `bf16x2`) and the conversions of the
//! storage types (`e4m3`, `e5m2`, `tf32`).
//!
//! A pair lives in one `.b32` register, `.lo` in the low 16 bits, as nvcc
//! keeps a `half2`. Its arithmetic is one instruction for both halves
//! (`add.rn.f16x2`, `fma.rn.bf16x2`: HADD2, HFMA2 in SASS), each half
//! correctly rounded, so `ir::consteval` folds it half by half with the
//! scalar rules. `add`/`sub`/`mul` of `bf16x2` exist from sm_90 (PTX 7.8);
//! before, they are the `fma.rn.bf16x2` CUDA's `__hadd2` uses: `a * 1 + b`,
//! `b * -1 + a` and `a * b + (-0)`, each the same single rounding (adding
//! -0 keeps the sign of a zero product, and the products by ±1 are exact).
//!
//! The fp8 conversions are the packed `cvt`s of sm_89 and newer (PTX 8.1
//! on sm_89, 7.8 from sm_90): `x as e4m3` is `cvt.rn.satfinite.e4m3x2.f32`
//! with a zero for the other byte, `y as f32` of an `e4m3` is
//! `cvt.rn.f16x2.e4m3x2` (exact) and a widening of the `f16`. `f16` and
//! `bf16` sources widen to `f32` first, exactly, so each conversion rounds
//! once. `x as tf32` is `cvt.rna.tf32.f32`; a `tf32` is read as an `f32`
//! as it is.

use super::error::Result;
use super::suffix;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::ir::{BinOp, Expr, ExprKind, MathFn};
use crate::types::Scalar;

/// `1.0` in both halves, for `fma` as an add.
fn ones(ty: Scalar) -> &'static str {
    if ty == Scalar::BF16x2 {
        "0x3F803F80"
    } else {
        "0x3C003C00"
    }
}

impl Writer<'_> {
    /// `x op y` of two pairs: `+`, `-`, `*`.
    pub(super) fn packed_binop(
        &mut self,
        op: BinOp,
        ty: Scalar,
        x: Operand,
        y: Operand,
    ) -> Result<Operand> {
        let t = suffix::arith(ty);
        let (x, y) = (self.in_reg(x, ty), self.in_reg(y, ty));
        let d = self.reg_for(ty);
        let name = match op {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            _ => return Err(self.invalid(format!("`{}` on {ty}", op.symbol()))),
        };
        if ty == Scalar::BF16x2 && !self.target.has_sm90_features() {
            // sm_80 to sm_89 have only the fused form for bf16x2.
            let k = self.reg(Class::B32);
            match op {
                BinOp::Add => {
                    emit!(self, "mov.b32 {}, {};", k, ones(ty));
                    emit!(self, "fma.rn.bf16x2 {}, {}, {}, {};", d, x, k, y);
                }
                BinOp::Sub => {
                    emit!(self, "mov.b32 {}, 0xBF80BF80;", k);
                    emit!(self, "fma.rn.bf16x2 {}, {}, {}, {};", d, y, k, x);
                }
                _ => {
                    emit!(self, "mov.b32 {}, 0x80008000;", k);
                    emit!(self, "fma.rn.bf16x2 {}, {}, {}, {};", d, x, y, k);
                }
            }
            return Ok(Operand::Reg(d));
        }
        if ty == Scalar::BF16x2 {
            self.need(7, 8);
        }
        emit!(self, "{}.rn.{} {}, {}, {};", name, t, d, x, y);
        Ok(Operand::Reg(d))
    }

    /// `-x`, `abs(x)` of a pair: `neg.f16x2`, `abs.f16x2`.
    pub(super) fn packed_unary(&mut self, name: &str, ty: Scalar, x: Operand) -> Operand {
        let x = self.in_reg(x, ty);
        let d = self.reg_for(ty);
        emit!(self, "{}.{} {}, {};", name, suffix::arith(ty), d, x);
        Operand::Reg(d)
    }

    /// `min`, `max` and `fma` of pairs: `min.f16x2`, `fma.rn.bf16x2`.
    pub(super) fn packed_math(
        &mut self,
        f: MathFn,
        ty: Scalar,
        args: [Operand; 3],
    ) -> Result<Operand> {
        let [x, y, z] = args;
        if f == MathFn::Abs {
            return Ok(self.packed_unary("abs", ty, x));
        }
        let (x, y) = (self.in_reg(x, ty), self.in_reg(y, ty));
        let d = self.reg_for(ty);
        let t = suffix::arith(ty);
        match f {
            MathFn::Min => emit!(self, "min.{} {}, {}, {};", t, d, x, y),
            MathFn::Max => emit!(self, "max.{} {}, {}, {};", t, d, x, y),
            MathFn::Fma => {
                let z = self.in_reg(z, ty);
                emit!(self, "fma.rn.{} {}, {}, {}, {};", t, d, x, y, z)
            }
            _ => return Err(self.invalid(format!("`{f:?}` on {ty}"))),
        }
        Ok(Operand::Reg(d))
    }

    /// `f16x2(lo, hi)` of type `ty` from two halves (`mov.b32 d, {lo, hi}`)
    /// or two `f32`s (`cvt.rn.f16x2.f32 d, hi, lo`: the first source goes
    /// to the upper half).
    pub(super) fn pack(&mut self, ty: Scalar, arg: Scalar, lo: Operand, hi: Operand) -> Operand {
        let d = self.reg_for(ty);
        if arg == Scalar::F32 {
            let (lo, hi) = (self.in_reg(lo, arg), self.in_reg(hi, arg));
            emit!(
                self,
                "cvt.rn.{}.f32 {}, {}, {};",
                suffix::arith(ty),
                d,
                hi,
                lo
            );
        } else {
            let (lo, hi) = (self.in_reg(lo, arg), self.in_reg(hi, arg));
            emit!(self, "mov.b32 {}, {{{}, {}}};", d, lo, hi);
        }
        Operand::Reg(d)
    }

    /// `x.lo`, `x.hi`: `mov.b32 {lo, _}, x`.
    pub(super) fn half(&mut self, f: MathFn, ty: Scalar, x: Operand) -> Operand {
        let x = self.in_reg(x, ty);
        let h = self.reg(Class::B16);
        if f == MathFn::Lo {
            emit!(self, "mov.b32 {{{}, _}}, {};", h, x);
        } else {
            emit!(self, "mov.b32 {{_, {}}}, {};", h, x);
        }
        Operand::Reg(h)
    }

    /// The PTX version the fp8 `cvt`s need: 8.1 on sm_89 (7.8 from sm_90,
    /// the target's own floor).
    fn need_fp8(&mut self) {
        if !self.target.has_sm90_features() {
            self.need(8, 1);
        }
    }

    /// `v as to` where one of the two is a storage type
    /// ([`Scalar::converts_storage`]).
    pub(super) fn storage_convert(&mut self, v: Reg, from: Scalar, to: Scalar) -> Result<Reg> {
        match (from, to) {
            (Scalar::F32, Scalar::TF32) => {
                let d = self.reg(Class::B32);
                emit!(self, "cvt.rna.tf32.f32 {}, {};", d, v);
                Ok(d)
            }
            (Scalar::TF32, Scalar::F32) => {
                let d = self.reg(Class::F32);
                emit!(self, "mov.b32 {}, {};", d, v);
                Ok(d)
            }
            (_, t) if t.is_fp8() => {
                let f = self.float_to_float(v, from, Scalar::F32)?;
                let (p, d) = (self.reg(Class::B16), self.reg(Class::B32));
                self.need_fp8();
                emit!(
                    self,
                    "cvt.rn.satfinite.{}x2.f32 {}, 0f00000000, {};",
                    t.name(),
                    p,
                    f
                );
                emit!(self, "cvt.u32.u16 {}, {};", d, p);
                Ok(d)
            }
            (f, _) if f.is_fp8() => {
                let (p, pair) = (self.reg(Class::B16), self.reg(Class::B32));
                self.need_fp8();
                emit!(self, "cvt.u16.u32 {}, {};", p, v);
                emit!(self, "cvt.rn.f16x2.{}x2 {}, {};", f.name(), pair, p);
                let h = self.half(MathFn::Lo, Scalar::F16x2, Operand::Reg(pair));
                let h = self.in_reg(h, Scalar::F16);
                self.float_to_float(h, Scalar::F16, to)
            }
            _ => Err(self.invalid(format!("a conversion from {from} to {to}"))),
        }
    }

    /// `store2(p, x as e4m3, y as e4m3)` with `x`, `y` of `f32`, `f16` or
    /// `bf16`: both bytes from one `cvt.rn.satfinite.e4m3x2.f32 d, y, x`
    /// (`y` to the upper byte, the higher address), the same rounding as
    /// two conversions; `None` when the values are not such conversions.
    pub(super) fn fp8_pair(&mut self, elem: Scalar, values: &[Expr]) -> Result<Option<Reg>> {
        let sources: Vec<&Expr> = values.iter().filter_map(|v| fp8_source(v, elem)).collect();
        let [x, y] = sources.as_slice() else {
            return Ok(None);
        };
        if values.len() != 2 {
            return Ok(None);
        }
        let [xo, yo] = self.operands([x, y])?;
        let (xr, yr) = (self.in_reg(xo, x.ty), self.in_reg(yo, y.ty));
        let xf = self.float_to_float(xr, x.ty, Scalar::F32)?;
        let yf = self.float_to_float(yr, y.ty, Scalar::F32)?;
        let d = self.reg(Class::B16);
        self.need_fp8();
        emit!(
            self,
            "cvt.rn.satfinite.{}x2.f32 {}, {}, {};",
            elem.name(),
            d,
            yf,
            xf
        );
        Ok(Some(d))
    }
}

/// The float operand of a conversion to the fp8 type `elem`: `x` of
/// `x as e4m3`.
fn fp8_source(e: &Expr, elem: Scalar) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Cast(x) if e.ty == elem && elem.is_fp8() && x.ty.converts_storage(elem) => {
            Some(x)
        }
        _ => None,
    }
}

impl Writer<'_> {
    /// `let (locals...) = ldmatrix_xN(place)`: `ldmatrix.sync.aligned.m8n8
    /// .xN{.trans}.shared.b16 {regs}, [addr]`, each lane's address that of
    /// its row (through the array's swizzle: a 16-byte row is one chunk).
    pub(super) fn load_matrix(
        &mut self,
        locals: &[crate::ir::LocalId],
        place: &crate::ir::Place,
        m: crate::ir::Matrix,
    ) -> Result<()> {
        let mem = self.place_ref(place)?;
        let mut dests = Vec::with_capacity(locals.len());
        for l in locals {
            dests.push(Operand::Reg(self.local(*l)?).to_string());
        }
        let outer = self.at(place.span);
        emit!(
            self,
            "ldmatrix.sync.aligned.m8n8.x{}{}.shared.b16 {{{}}}, {};",
            locals.len(),
            if m.trans { ".trans" } else { "" },
            dests.join(", "),
            mem.addr
        );
        self.restore(outer);
        Ok(())
    }

    /// `stmatrix_xN(place, values...)`: `stmatrix.sync.aligned.m8n8.xN
    /// {.trans}.shared.b16 [addr], {regs}` (sm_90, PTX 7.8), the address
    /// first, then the values in order.
    pub(super) fn store_matrix(
        &mut self,
        place: &crate::ir::Place,
        values: &[Expr],
        m: crate::ir::Matrix,
    ) -> Result<()> {
        let mem = self.place_ref(place)?;
        let vals = self.operand_list(values)?;
        let mut regs = Vec::with_capacity(vals.len());
        for (v, e) in vals.into_iter().zip(values) {
            regs.push(Operand::Reg(self.in_reg(v, e.ty)).to_string());
        }
        self.need(7, 8);
        let outer = self.at(place.span);
        emit!(
            self,
            "stmatrix.sync.aligned.m8n8.x{}{}.shared.b16 {}, {{{}}};",
            values.len(),
            if m.trans { ".trans" } else { "" },
            mem.addr,
            regs.join(", ")
        );
        self.restore(outer);
        Ok(())
    }
}
