//! Places in memory: global (`param[i]`), shared (`array[i, j]`) and another
//! CTA's shared memory (`remote(array, rank)[i]`); loads, stores and atomics.
//!
//! Global addresses are 64-bit: the base pointer (converted once with
//! `cvta.to.global` in the prologue) plus the index times the element size
//! (`mul.wide` for 32-bit indices). Shared addresses are 32-bit offsets in
//! the CTA's shared window (`mov.u32 r, symbol`), row-major, constant parts
//! folded into the address immediate. Remote addresses go through `mapa`.

use super::error::Result;
use super::suffix;
use super::writer::{emit, Addr, Class, Operand, Reg, Writer};
use crate::ir::consteval;
use crate::ir::contract;
use crate::ir::layout::SharedDecl;
use crate::ir::{
    AtomicOp, BinOp, Expr, ExprKind, MathFn, MemOrder, MemScope, MemSem, ParamId, ParamType, Place,
    PlaceKind, SharedId, UnaryOp,
};
use crate::types::Scalar;

/// What a store goes to.
enum Target {
    Mem(MemRef),
    Accum(super::tensor::AccRef),
}

/// A state space and address.
pub(super) struct MemRef {
    pub(super) space: Space,
    pub(super) addr: Addr,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Space {
    /// `nc`: the pointer is never written by the kernel.
    Global {
        nc: bool,
    },
    Shared,
    Cluster,
}

impl Space {
    pub(super) fn name(self) -> &'static str {
        match self {
            Space::Global { .. } => "global",
            Space::Shared => "shared",
            Space::Cluster => "shared::cluster",
        }
    }

    pub(super) fn load(self) -> &'static str {
        match self {
            Space::Global { nc: true } => "global.nc",
            other => other.name(),
        }
    }
}

impl Writer<'_> {
    /// The address of a place.
    pub(super) fn place_ref(&mut self, p: &Place) -> Result<MemRef> {
        let outer = self.at(p.span);
        let m = self.place_ref_at(p)?;
        self.restore(outer);
        Ok(m)
    }

    fn place_ref_at(&mut self, p: &Place) -> Result<MemRef> {
        match &p.kind {
            PlaceKind::Global { param, index } => {
                let (addr, written) = self.global_addr(*param, index, p.elem)?;
                Ok(MemRef {
                    space: Space::Global { nc: !written },
                    addr,
                })
            }
            PlaceKind::Shared { array, indices } => Ok(MemRef {
                space: Space::Shared,
                addr: self.shared_addr(*array, indices)?,
            }),
            PlaceKind::Remote {
                array,
                rank,
                indices,
            } => {
                self.require_sm90("remote shared memory")?;
                let local = self.shared_addr(*array, indices)?;
                let rank = self.expr_u32(rank)?;
                let base = self.addr_operand(local);
                let r = self.reg(Class::B32);
                emit!(self, "mapa.shared::cluster.u32 {}, {}, {};", r, base, rank);
                Ok(MemRef {
                    space: Space::Cluster,
                    addr: Addr {
                        base: r.to_string(),
                        off: 0,
                    },
                })
            }
            PlaceKind::SharedAt { addr, .. } => Ok(MemRef {
                space: Space::Shared,
                addr: self.shared_at(addr)?,
            }),
            PlaceKind::Accum { .. } => {
                Err(self.invalid("an accumulator's element, a register, used as memory"))
            }
            PlaceKind::Register { .. } => Err(self.invalid(
                "an element of a register array that the optimiser did not make a register",
            )),
        }
    }

    /// The address of a [`PlaceKind::SharedAt`] place: its value, with a
    /// constant addend folded into the instruction's offset (32-bit shared
    /// addresses wrap, so `[a+c]` is exactly `a + c`).
    fn shared_at(&mut self, addr: &Expr) -> Result<Addr> {
        let (base, off) = split_addend(addr);
        let v = self.expr_u32(base)?;
        let base = match v {
            Operand::Reg(r) => r.to_string(),
            Operand::Imm(_) => {
                let r = self.reg(Class::B32);
                emit!(self, "mov.u32 {}, {};", r, v);
                r.to_string()
            }
        };
        Ok(Addr { base, off })
    }

    /// `&array[indices]`: the element's shared-window address as a value.
    pub(super) fn addr_of(&mut self, p: &Place) -> Result<Operand> {
        let PlaceKind::Shared { array, indices } = &p.kind else {
            return Err(self.invalid("the address of a place that is not a shared element"));
        };
        let a = self.shared_addr(*array, indices)?;
        let base = if a.base.starts_with('%') {
            a.base
        } else {
            self.symbol_base(&a.base).to_string()
        };
        let r = self.reg(Class::B32);
        if a.off == 0 {
            emit!(self, "mov.b32 {}, {};", r, base);
        } else {
            emit!(self, "add.u32 {}, {}, {};", r, base, a.off);
        }
        Ok(Operand::Reg(r))
    }

    /// `base + index * size` for a global parameter; also whether the kernel
    /// writes through it.
    pub(super) fn global_addr(
        &mut self,
        param: ParamId,
        index: &Expr,
        elem: Scalar,
    ) -> Result<(Addr, bool)> {
        let param_ty = self
            .kernel
            .and_then(|k| k.params.get(param.index()))
            .map(|p| p.ty);
        let written = match param_ty {
            Some(ParamType::Global { written, .. }) => written,
            _ => return Err(self.invalid(format!("parameter {} is not a global array", param.0))),
        };
        let Some(base) = self.params.get(param.index()).copied().flatten() else {
            return Err(self.invalid(format!("parameter {} has no register here", param.0)));
        };
        let size = i128::from(elem.size());
        if let Some(i) = consteval::eval_int(index) {
            let off = i.checked_mul(size).and_then(|o| i32::try_from(o).ok());
            if let Some(off) = off {
                return Ok((
                    Addr {
                        base: base.to_string(),
                        off: i64::from(off),
                    },
                    written,
                ));
            }
        }
        if matches!(index.ty, Scalar::U64 | Scalar::I64) {
            if let Some(addr) = self.wide_sum_addr(base, index, size)? {
                return Ok((addr, written));
            }
        }
        let idx = self.expr(index)?;
        let a = self.reg(Class::B64);
        match index.ty {
            // A narrow index is sign- or zero-extended to 32 bits already.
            Scalar::U32 | Scalar::I32 | Scalar::U16 | Scalar::I16 | Scalar::U8 | Scalar::I8 => {
                let t = suffix::arith(index.ty);
                // mul.wide + add (not mad.wide): ptxas then shares the
                // product between addresses and folds it into IMAD.WIDE.
                // Bytes need only the widening.
                let off = self.reg(Class::B64);
                if size == 1 {
                    // `cvt` wants a register source.
                    let idx = self.in_reg(idx, index.ty);
                    emit!(
                        self,
                        "cvt.{}.{} {}, {};",
                        t.replace("32", "64"),
                        t,
                        off,
                        idx
                    );
                } else {
                    emit!(self, "mul.wide.{} {}, {}, {};", t, off, idx, size);
                }
                emit!(self, "add.s64 {}, {}, {};", a, base, off);
            }
            Scalar::U64 | Scalar::I64 => {
                let scaled = if size == 1 {
                    idx
                } else {
                    let t = self.reg(Class::B64);
                    emit!(self, "shl.b64 {}, {}, {};", t, idx, size.trailing_zeros());
                    Operand::Reg(t)
                };
                emit!(self, "add.s64 {}, {}, {};", a, base, scaled);
            }
            other => return Err(self.invalid(format!("an index of type {other}"))),
        }
        Ok((
            Addr {
                base: a.to_string(),
                off: 0,
            },
            written,
        ))
    }

    /// `base + index * size` for a 64-bit index that is a sum with a
    /// constant or a widened 32-bit term in it (`(i as u64) + 256`, what the
    /// optimiser writes for the copies of an unrolled loop): each widened
    /// term is one `mul.wide` added to the address (ptxas makes it one
    /// `IMAD.WIDE`), each constant goes to the instruction's offset. Exact:
    /// 64-bit address arithmetic wraps exactly like the index's. `None`
    /// for any other index (the caller computes it whole).
    fn wide_sum_addr(&mut self, base: Reg, index: &Expr, size: i128) -> Result<Option<Addr>> {
        let mut terms = Vec::new();
        sum_terms(index, &mut terms);
        let mut off: i128 = 0;
        let mut parts = Vec::new();
        for t in terms {
            match consteval::eval_int(t) {
                // Two's complement: a u64 constant past i64 is the same
                // offset as its negative.
                Some(c) => off = off.wrapping_add((c as i64 as i128).wrapping_mul(size)),
                None => parts.push(t),
            }
        }
        let off = i64::try_from(off)
            .ok()
            .and_then(|o| i32::try_from(o).ok())
            .map(i64::from);
        let widened = parts.iter().any(|t| narrow_source(t).is_some());
        let Some(off) = off.filter(|&o| o != 0 || widened) else {
            return Ok(None);
        };
        let mut acc = base;
        for t in parts {
            let next = self.reg(Class::B64);
            match narrow_source(t) {
                Some((x, signed)) => {
                    let v = self.expr(x)?;
                    let wide = self.reg(Class::B64);
                    let s = if signed { "s32" } else { "u32" };
                    emit!(self, "mul.wide.{} {}, {}, {};", s, wide, v, size);
                    emit!(self, "add.s64 {}, {}, {};", next, acc, wide);
                }
                None => {
                    let v = self.expr(t)?;
                    if size == 1 {
                        emit!(self, "add.s64 {}, {}, {};", next, acc, v);
                    } else {
                        let wide = self.reg(Class::B64);
                        emit!(self, "shl.b64 {}, {}, {};", wide, v, size.trailing_zeros());
                        emit!(self, "add.s64 {}, {}, {};", next, acc, wide);
                    }
                }
            }
            acc = next;
        }
        Ok(Some(Addr {
            base: acc.to_string(),
            off,
        }))
    }

    /// The 32-bit shared-window address of `array[indices]`: row-major,
    /// then through the array's swizzle ([`crate::ir::Swizzle::apply`], on
    /// the absolute address, as the tensor copies place the elements).
    pub(super) fn shared_addr(&mut self, array: SharedId, indices: &[Expr]) -> Result<Addr> {
        let linear = self.linear_shared_addr(array, indices)?;
        let swizzle = self
            .kernel
            .and_then(|k| k.shared.get(array.index()))
            .map_or(crate::ir::Swizzle::None, |a| a.swizzle);
        if swizzle == crate::ir::Swizzle::None {
            return Ok(linear);
        }
        // a ^ ((a >> 3) & mask): bits 7.. of the row select the XOR of the
        // 16-byte chunk (bits 4-6).
        let a = self.addr_operand(linear);
        let (t, m, d) = (
            self.reg(Class::B32),
            self.reg(Class::B32),
            self.reg(Class::B32),
        );
        emit!(self, "shr.u32 {}, {}, 3;", t, a);
        emit!(self, "and.b32 {}, {}, {};", m, t, swizzle.mask());
        emit!(self, "xor.b32 {}, {}, {};", d, a, m);
        Ok(Addr {
            base: d.to_string(),
            off: 0,
        })
    }

    /// The row-major shared-window address of `array[indices]`, before
    /// any swizzle.
    pub(super) fn linear_shared_addr(&mut self, array: SharedId, indices: &[Expr]) -> Result<Addr> {
        self.row_major_addr(array, indices, false)
    }

    /// The shared-window address where the slice `array[indices]` (fewer
    /// indices than dimensions: the leading ones) starts. A swizzled
    /// array's slices that tensor copies take start on the swizzle's
    /// repeat, where the swizzle changes nothing.
    pub(super) fn slice_addr(&mut self, array: SharedId, indices: &[Expr]) -> Result<Addr> {
        self.row_major_addr(array, indices, true)
    }

    /// `array[indices]` row-major: an element, or with `slice` the start of
    /// the slice its leading indices name.
    fn row_major_addr(&mut self, array: SharedId, indices: &[Expr], slice: bool) -> Result<Addr> {
        let Some(arr) = self.kernel.and_then(|k| k.shared.get(array.index())) else {
            return Err(self.invalid(format!("shared array {} does not exist here", array.0)));
        };
        let fits = if slice {
            indices.len() < arr.dims.len()
        } else {
            indices.len() == arr.dims.len()
        };
        if !fits {
            return Err(self.invalid(format!(
                "{} indices for `{}` of {} dimensions",
                indices.len(),
                arr.name,
                arr.dims.len()
            )));
        }
        // The array's own symbol, or the dynamic array plus its offset.
        let start = self.shared_start(SharedDecl::Array(array))?;
        let symbol = start.symbol_text();
        let size = i64::from(arr.elem.size());
        // Byte stride of each dimension.
        let strides: Vec<i64> = (0..arr.dims.len())
            .map(|k| {
                arr.dims
                    .iter()
                    .skip(k + 1)
                    .fold(size, |a, &d| a.wrapping_mul(d as i64))
            })
            .collect();
        let mut off: i64 = 0;
        let mut acc: Option<Reg> = None;
        for (idx, stride) in indices.iter().zip(strides) {
            if let Some(c) = consteval::eval_int(idx) {
                off = off.wrapping_add((c as i64).wrapping_mul(stride));
                continue;
            }
            // `i + c`: the constant part goes to the offset (32-bit
            // addresses wrap like the index, so this is exact).
            let (idx, c) = split_addend(idx);
            off = off.wrapping_add(c.wrapping_mul(stride));
            let v = self.expr_u32(idx)?;
            let base = match acc {
                Some(r) => r,
                None => self.symbol_base(&symbol),
            };
            let next = self.reg(Class::B32);
            emit!(self, "mad.lo.s32 {}, {}, {}, {};", next, v, stride, base);
            acc = Some(next);
        }
        // Shared addresses are 32-bit: the offset wraps like the address.
        Ok(match acc {
            Some(r) => Addr {
                base: r.to_string(),
                off: i64::from(off as i32),
            },
            None => Addr {
                base: start.base,
                off: i64::from(start.off.wrapping_add(off) as i32),
            },
        })
    }

    /// An address as a single operand (for `mapa` and `cp.async.bulk`).
    pub(super) fn addr_operand(&mut self, a: Addr) -> String {
        if a.off == 0 {
            return a.base;
        }
        // A symbol and an offset are moved into a register as one address
        // (`mov.u32 %r, $dsmem+65792`), never added later: the simulator
        // resolves `$dsmem+offset` to the declaration at that offset, which
        // an `add` to `$dsmem` would hide.
        if !a.base.starts_with('%') {
            return self.symbol_base(&a.symbol_text()).to_string();
        }
        let base = a.base;
        let r = self.reg(Class::B32);
        emit!(self, "add.u32 {}, {}, {};", r, base, a.off);
        r.to_string()
    }

    /// An integer (or bool) expression as a 32-bit operand: indices, ranks,
    /// byte counts and parities.
    pub(super) fn expr_u32(&mut self, e: &Expr) -> Result<Operand> {
        let v = self.expr(e)?;
        match e.ty {
            Scalar::U32 | Scalar::I32 => Ok(v),
            // In range in a 32-bit register: a negative one wraps as an
            // `i32` does in 32-bit address arithmetic.
            t if t.is_narrow_int() => Ok(v),
            Scalar::U64 | Scalar::I64 | Scalar::Bool => self.convert(v, e.ty, Scalar::U32),
            other => Err(self.invalid(format!("an integer operand of type {other}"))),
        }
    }

    pub(super) fn load(&mut self, p: &Place) -> Result<Operand> {
        if let PlaceKind::Accum { acc, index } = &p.kind {
            let a = self.accum_ref(*acc, index)?;
            return Ok(self.accum_read(&a));
        }
        let m = self.place_ref(p)?;
        Ok(self.load_from(&m, p.elem))
    }

    /// What a store reads and writes: memory, or an accumulator's
    /// register.
    fn target(&mut self, p: &Place) -> Result<Target> {
        match &p.kind {
            PlaceKind::Accum { acc, index } => Ok(Target::Accum(self.accum_ref(*acc, index)?)),
            _ => Ok(Target::Mem(self.place_ref(p)?)),
        }
    }

    fn read_target(&mut self, t: &Target, elem: Scalar) -> Operand {
        match t {
            Target::Mem(m) => self.load_from(&plain_ref(m), elem),
            Target::Accum(a) => self.accum_read(a),
        }
    }

    fn write_target(&mut self, t: &Target, v: Operand, elem: Scalar) {
        match t {
            Target::Mem(m) => self.store_to(m, v, elem),
            Target::Accum(a) => self.accum_write(a, &v),
        }
    }

    fn load_from(&mut self, m: &MemRef, elem: Scalar) -> Operand {
        if elem == Scalar::Bool {
            let (b, d) = (self.reg(Class::B32), self.reg(Class::Pred));
            emit!(self, "ld.{}.u8 {}, {};", m.space.load(), b, m.addr);
            emit!(self, "setp.ne.b32 {}, {}, 0;", d, b);
            return Operand::Reg(d);
        }
        let d = self.reg_for(elem);
        emit!(
            self,
            "ld.{}.{} {}, {};",
            m.space.load(),
            suffix::mem(elem),
            d,
            m.addr
        );
        Operand::Reg(d)
    }

    /// `place = value` or `place op= value`, the address computed once.
    pub(super) fn store(&mut self, p: &Place, op: Option<BinOp>, value: &Expr) -> Result<()> {
        let m = self.target(p)?;
        // `place += a * b` and `place -= a * b` contract like `x = x + a * b`.
        if let (Some(op @ (BinOp::Add | BinOp::Sub)), Some((a, b))) = (op, contract::product(value))
        {
            if value.ty == p.elem {
                let [x, y] = self.operands([a, b])?;
                let old = self.read_target(&m, p.elem);
                // `place - a * b` is `(-a) × b + place`.
                let (x, y) = if op == BinOp::Sub {
                    self.negate_product((a, x), (b, y), p.elem)?
                } else {
                    (x, y)
                };
                let v = self.fma(p.elem, x, y, old)?;
                self.write_target(&m, v, p.elem);
                return Ok(());
            }
        }
        let v = self.expr(value)?;
        let v = match op {
            None => self.convert(v, value.ty, p.elem)?,
            Some(op) => {
                let old = self.read_target(&m, p.elem);
                // Shifts keep their amount's type; other operators match.
                let (v, vty) = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    (v, value.ty)
                } else {
                    (self.convert(v, value.ty, p.elem)?, p.elem)
                };
                self.binop(op, p.elem, old, v, vty)?
            }
        };
        // The store itself points at the place written, not the statement.
        let outer = self.at(p.span);
        self.write_target(&m, v, p.elem);
        self.restore(outer);
        Ok(())
    }

    fn store_to(&mut self, m: &MemRef, v: Operand, elem: Scalar) {
        let v = if elem == Scalar::Bool {
            let b = self.reg(Class::B32);
            emit!(self, "selp.b32 {}, 1, 0, {};", b, v);
            Operand::Reg(b)
        } else {
            v
        };
        emit!(
            self,
            "st.{}.{} {}, {};",
            m.space.name(),
            suffix::mem(elem),
            m.addr,
            v
        );
    }

    /// `fence(order, scope)`: `fence.acq_rel.SCOPE` / `fence.sc.SCOPE`.
    pub(super) fn fence(&mut self, sem: MemSem) -> Result<()> {
        if !matches!(sem.order, MemOrder::AcqRel | MemOrder::Sc) {
            return Err(self.invalid(format!("a fence with order `{}`", sem.order.name())));
        }
        self.scope_needs(sem.scope)?;
        emit!(self, "fence.{}.{};", sem.order.name(), sem.scope.name());
        Ok(())
    }

    /// What a scope needs of the target and the PTX version: `.cluster`
    /// is sm_90 and PTX 7.8.
    fn scope_needs(&mut self, scope: MemScope) -> Result<()> {
        if scope == MemScope::Cluster {
            self.require_sm90("the `cluster` scope")?;
            self.need(7, 8);
        }
        Ok(())
    }

    /// The `.sem.scope` qualifiers of an atomic, none for the default
    /// (PTX's `atom` without them is relaxed at gpu scope).
    fn atom_qualifiers(&mut self, sem: MemSem) -> Result<String> {
        if sem == MemSem::ATOMIC {
            return Ok(String::new());
        }
        if sem.order == MemOrder::Sc {
            return Err(self.invalid("an atomic with order `sc`"));
        }
        self.scope_needs(sem.scope)?;
        self.need(6, 0);
        Ok(format!(".{}.{}", sem.order.name(), sem.scope.name()))
    }

    /// `atomic_add/sub/max/min/exch/and/or/xor/inc/dec/cas(place, ...)`:
    /// the old value.
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        sem: MemSem,
        p: &Place,
        args: &[Expr],
    ) -> Result<Operand> {
        let m = self.place_ref(p)?;
        let vals = self.operand_list(args)?;
        let elem = p.elem;
        let mut converted = Vec::with_capacity(vals.len());
        for (v, a) in vals.into_iter().zip(args) {
            converted.push(self.convert(v, a.ty, elem)?);
        }
        let (first, second) = match (op, converted.as_slice()) {
            (AtomicOp::Cas, [cmp, new]) => (cmp.clone(), Some(new.clone())),
            (AtomicOp::Cas, _) => return Err(self.invalid("`atomic_cas` without a new value")),
            (_, [v]) => (v.clone(), None),
            (_, other) => {
                return Err(
                    self.invalid(format!("an atomic `{op:?}` with {} operands", other.len()))
                )
            }
        };
        if elem == Scalar::Bool {
            return Err(self.invalid("an atomic on bool"));
        }
        let q = self.atom_qualifiers(sem)?;
        let space = m.space.name();
        if elem.is_narrow_int() {
            return self.narrow_atomic(op, &q, &m, first, second, elem);
        }
        // `atomic_sub` is an add of the negation: exact for integers
        // (modulo 2^n) and for floats (`a - b` is `a + -b` in IEEE).
        let (op, first) = if op == AtomicOp::Sub {
            let folded = match args {
                [a] if a.ty == elem => self.negated_constant(a, elem)?,
                _ => None,
            };
            let neg = match folded {
                Some(n) => n,
                None => {
                    let v = self.in_reg(first, elem);
                    self.unary(UnaryOp::Neg, elem, Operand::Reg(v))?
                }
            };
            (AtomicOp::Add, neg)
        } else {
            (op, first)
        };
        let wide = matches!(elem.bits(), 32 | 64);
        let native = match (op, elem) {
            (
                AtomicOp::Add,
                Scalar::U32 | Scalar::I32 | Scalar::U64 | Scalar::F32 | Scalar::F64,
            ) => Some(format!("add.{}", suffix::arith(elem))),
            // Two's complement: the same bits as an unsigned add.
            (AtomicOp::Add, Scalar::I64) => Some("add.u64".to_string()),
            (AtomicOp::Add, Scalar::F16) => Some("add.noftz.f16".to_string()),
            (AtomicOp::Add, Scalar::BF16) if self.target.has_sm90_features() => {
                self.need(7, 8);
                Some("add.noftz.bf16".to_string())
            }
            (AtomicOp::Max | AtomicOp::Min, t) if t.is_int() => {
                let name = if op == AtomicOp::Max { "max" } else { "min" };
                Some(format!("{name}.{}", suffix::arith(t)))
            }
            (AtomicOp::Exch, t) if wide => Some(format!("exch.{}", suffix::bits(t))),
            (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor, t) if wide && t.is_int() => {
                let name = match op {
                    AtomicOp::And => "and",
                    AtomicOp::Or => "or",
                    _ => "xor",
                };
                Some(format!("{name}.{}", suffix::bits(t)))
            }
            (AtomicOp::Inc, Scalar::U32) => Some("inc.u32".to_string()),
            (AtomicOp::Dec, Scalar::U32) => Some("dec.u32".to_string()),
            (AtomicOp::Cas, t) => {
                let d = self.reg_for(elem);
                let Some(new) = second else {
                    return Err(self.invalid("`atomic_cas` without a new value"));
                };
                let new = Operand::Reg(self.in_reg(new, elem));
                let cmp = Operand::Reg(self.in_reg(first, elem));
                emit!(
                    self,
                    "atom{}.{}.cas.{} {}, {}, {}, {};",
                    q,
                    space,
                    suffix::bits(t),
                    d,
                    m.addr,
                    cmp,
                    new
                );
                return Ok(Operand::Reg(d));
            }
            _ => None,
        };
        if let Some(name) = native {
            let d = self.reg_for(elem);
            let v = Operand::Reg(self.in_reg(first, elem));
            emit!(
                self,
                "atom{}.{}.{} {}, {}, {};",
                q,
                space,
                name,
                d,
                m.addr,
                v
            );
            return Ok(Operand::Reg(d));
        }
        self.cas_loop(op, &q, &m, first, elem)
    }

    /// An atomic on a narrow integer: PTX has only `atom.cas.b16` (sm_70+;
    /// no 8-bit atomics at all), so the checker allows `atomic_cas` on `u16`
    /// and `i16` only (E0118 otherwise: a compare-and-swap loop on the
    /// enclosing 32-bit word could emulate the others, but kdslc does not
    /// write one behind the program's back; docs/language.md §8). The
    /// operands go through `.b16` registers.
    fn narrow_atomic(
        &mut self,
        op: AtomicOp,
        q: &str,
        m: &MemRef,
        cmp: Operand,
        new: Option<Operand>,
        elem: Scalar,
    ) -> Result<Operand> {
        let (AtomicOp::Cas, Some(new), 16) = (op, new, elem.bits()) else {
            return Err(self.invalid(format!("an atomic `{op:?}` on {elem}")));
        };
        let mut halves = [cmp, new].into_iter().map(|v| {
            let wide = self.in_reg(v, elem);
            let h = self.reg(Class::B16);
            emit!(self, "cvt.u16.u32 {}, {};", h, wide);
            h
        });
        let (Some(c), Some(n)) = (halves.next(), halves.next()) else {
            return Err(self.invalid("`atomic_cas` operands"));
        };
        let (old, d) = (self.reg(Class::B16), self.reg_for(elem));
        emit!(
            self,
            "atom{}.{}.cas.b16 {}, {}, {}, {};",
            q,
            m.space.name(),
            old,
            m.addr,
            c,
            n
        );
        emit!(
            self,
            "cvt.{}.{} {}, {};",
            suffix::arith(elem),
            suffix::cvt(elem),
            d,
            old
        );
        Ok(Operand::Reg(d))
    }

    /// An atomic read-modify-write the hardware lacks (float min/max, bf16
    /// add before sm_90), as a compare-and-swap loop with the atomic's
    /// qualifiers `q` on the compare-and-swap.
    fn cas_loop(
        &mut self,
        op: AtomicOp,
        q: &str,
        m: &MemRef,
        v: Operand,
        elem: Scalar,
    ) -> Result<Operand> {
        let first = self.load_from(&plain_ref(m), elem);
        let old = self.reg_for(elem);
        self.mov(old, &first, elem);
        let head = self.label();
        self.place_label(head);
        let new = match op {
            AtomicOp::Add => self.binop(BinOp::Add, elem, Operand::Reg(old), v, elem)?,
            AtomicOp::Max => self.min_max(MathFn::Max, elem, Operand::Reg(old), v)?,
            AtomicOp::Min => self.min_max(MathFn::Min, elem, Operand::Reg(old), v)?,
            _ => return Err(self.invalid(format!("`{}` on {} as a loop", op.name(), elem.name()))),
        };
        let new = self.in_reg(new, elem);
        let (cur, p) = (self.reg_for(elem), self.reg(Class::Pred));
        let b = suffix::bits(elem);
        emit!(
            self,
            "atom{}.{}.cas.{} {}, {}, {}, {};",
            q,
            m.space.name(),
            b,
            cur,
            m.addr,
            old,
            new
        );
        emit!(self, "setp.ne.{} {}, {}, {};", b, p, cur, old);
        emit!(self, "mov.{} {}, {};", suffix::mov(elem), old, cur);
        emit!(self, "@{} bra {};", p, head);
        Ok(Operand::Reg(cur))
    }
}

/// `a + c` or `a - c` with a constant `c` (of an integer type): `(a, ±c)`;
/// anything else is `(e, 0)`. For address arithmetic modulo 2^32.
pub(super) fn split_addend(e: &Expr) -> (&Expr, i64) {
    if let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = &e.kind {
        if e.ty.is_int() && e.ty.bits() == 32 {
            if let Some(c) = consteval::eval_int(b) {
                let c = c as i64;
                return (
                    a,
                    if *op == BinOp::Add {
                        c
                    } else {
                        c.wrapping_neg()
                    },
                );
            }
            if *op == BinOp::Add {
                if let Some(c) = consteval::eval_int(a) {
                    return (b, c as i64);
                }
            }
        }
    }
    (e, 0)
}

/// The terms of a 64-bit sum (`a + b + c`, nested any way), in order.
fn sum_terms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b) if matches!(e.ty, Scalar::U64 | Scalar::I64) => {
            sum_terms(a, out);
            sum_terms(b, out);
        }
        _ => out.push(e),
    }
}

/// A 64-bit term that widens a 32-bit integer: the integer, and whether it
/// is signed (sign-extended).
fn narrow_source(e: &Expr) -> Option<(&Expr, bool)> {
    match &e.kind {
        ExprKind::Cast(x) if matches!(e.ty, Scalar::U64 | Scalar::I64) => match x.ty {
            Scalar::U32 => Some((x, false)),
            Scalar::I32 => Some((x, true)),
            _ => None,
        },
        _ => None,
    }
}

/// The same space without `.nc` (for a read that is part of a write).
/// The same address, read with a plain load: a read-modify-write must see
/// what it writes, which `ld.global.nc` does not promise.
fn plain_ref(m: &MemRef) -> MemRef {
    MemRef {
        space: plain(m.space),
        addr: m.addr.clone(),
    }
}

fn plain(s: Space) -> Space {
    match s {
        Space::Global { .. } => Space::Global { nc: false },
        other => other,
    }
}
