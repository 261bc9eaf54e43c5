//! Vector loads and stores: `let (a, b, c, d) = load4(x[i]);` and
//! `store4(y[i], a, b, c, d)`, one `ld.v4`/`st.v4` (or `.v2`) of the
//! consecutive elements starting at the place's address.
//!
//! The access moves at most 16 bytes (E0147) and must be aligned to its
//! whole size (the PTX ISA's rule for vectors); the checker rejects what it
//! can see is misaligned (E0148), warns where it cannot prove alignment
//! (W0325), and the simulator reports the rest (S0003). `bool` elements
//! travel as bytes (`.v4.u8` into 32-bit registers, then `setp`), as scalar
//! `bool` loads do; the narrow integers load straight into their 32-bit
//! registers, extended by `.u8`/`.s8`/`.u16`/`.s16` (ptxas takes wider
//! registers for a vector of narrow elements, as for a scalar one).

use super::error::Result;
use super::memory::MemRef;
use super::suffix;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::ir::{Expr, LocalId, Place, VECTOR_BYTES};
use crate::types::Scalar;

impl Writer<'_> {
    /// `let (locals...) = loadN(place)`.
    pub(super) fn load_vector(&mut self, locals: &[LocalId], place: &Place) -> Result<()> {
        let elem = place.elem;
        self.vector_shape(locals.len(), elem)?;
        let m = self.place_ref(place)?;
        let mut dests = Vec::with_capacity(locals.len());
        for l in locals {
            dests.push(self.local(*l)?);
        }
        let outer = self.at(place.span);
        if elem == Scalar::Bool {
            let bytes: Vec<Reg> = dests.iter().map(|_| self.reg(Class::B32)).collect();
            self.vector_access("ld", &m, elem, &list(&bytes));
            for (d, b) in dests.iter().zip(&bytes) {
                emit!(self, "setp.ne.b32 {}, {}, 0;", d, b);
            }
        } else {
            self.vector_access("ld", &m, elem, &list(&dests));
        }
        self.restore(outer);
        Ok(())
    }

    /// `storeN(place, values...)`: the address first, then the values in
    /// order (as a scalar store computes its place before its value).
    pub(super) fn store_vector(&mut self, place: &Place, values: &[Expr]) -> Result<()> {
        let elem = place.elem;
        self.vector_shape(values.len(), elem)?;
        let m = self.place_ref(place)?;
        // `store2(p, x as bf16, y as bf16)` of two `f32`s: one packed
        // conversion (`cvt.rn.bf16x2.f32 d, y, x`: `y` to the upper half,
        // the higher address) and a 32-bit store; the same rounding as two.
        if let [Some(x), Some(y)] = [values.first(), values.get(1)].map(|v| v.and_then(f32_cast)) {
            if matches!(elem, Scalar::BF16 | Scalar::F16) && values.len() == 2 {
                let [x, y] = self.operands([x, y])?;
                let d = self.reg(Class::B32);
                let t = if elem == Scalar::BF16 {
                    "bf16x2"
                } else {
                    "f16x2"
                };
                emit!(self, "cvt.rn.{}.f32 {}, {}, {};", t, d, y, x);
                let outer = self.at(place.span);
                emit!(self, "st.{}.b32 {}, {};", m.space.name(), m.addr, d);
                self.restore(outer);
                return Ok(());
            }
        }
        // `store2(p, x as e4m3, y as e4m3)`: one packed conversion and a
        // 16-bit store.
        if let Some(d) = self.fp8_pair(elem, values)? {
            let outer = self.at(place.span);
            emit!(self, "st.{}.b16 {}, {};", m.space.name(), m.addr, d);
            self.restore(outer);
            return Ok(());
        }
        let vals = self.operand_list(values)?;
        let mut regs = Vec::with_capacity(vals.len());
        for (v, e) in vals.into_iter().zip(values) {
            let v = self.convert(v, e.ty, elem)?;
            let r = if elem == Scalar::Bool {
                let b = self.reg(Class::B32);
                emit!(self, "selp.b32 {}, 1, 0, {};", b, v);
                b
            } else {
                self.in_reg(v, elem)
            };
            regs.push(r);
        }
        let outer = self.at(place.span);
        self.vector_access("st", &m, elem, &list(&regs));
        self.restore(outer);
        Ok(())
    }

    /// An error unless `n` elements of `elem` make a vector PTX has.
    fn vector_shape(&self, n: usize, elem: Scalar) -> Result<()> {
        if matches!(n, 2 | 4) && n as u32 * elem.size() <= VECTOR_BYTES {
            return Ok(());
        }
        Err(self.invalid(format!("a vector access of {n} {elem} elements")))
    }

    /// `ld.{space}.vN.T {regs}, [addr]` or `st.{space}.vN.T [addr], {regs}`.
    fn vector_access(&mut self, op: &str, m: &MemRef, elem: Scalar, regs: &(usize, String)) {
        let (n, regs) = regs;
        let t = suffix::mem(elem);
        if op == "ld" {
            emit!(
                self,
                "ld.{}.v{}.{} {}, {};",
                m.space.load(),
                n,
                t,
                regs,
                m.addr
            );
        } else {
            emit!(
                self,
                "st.{}.v{}.{} {}, {};",
                m.space.name(),
                n,
                t,
                m.addr,
                regs
            );
        }
    }
}

/// `{%r1, %r2, %r3, %r4}` and how many registers it names.
fn list(regs: &[Reg]) -> (usize, String) {
    let names: Vec<String> = regs.iter().map(|r| Operand::Reg(*r).to_string()).collect();
    (regs.len(), format!("{{{}}}", names.join(", ")))
}

/// The `f32` operand of a conversion to a half type: `x` of `x as bf16`.
fn f32_cast(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        crate::ir::ExprKind::Cast(x)
            if x.ty == Scalar::F32 && e.ty.size() == 2 && e.ty.is_float() =>
        {
            Some(x)
        }
        _ => None,
    }
}
