//! Warpgroup operations: `set_max_regs` (`setmaxnreg`), accumulators (a
//! kernel's registers `%accK_0 ..`, one set per `accum`), their elements,
//! and the `wgmma` operations.

use super::error::{ErrorKind, Result};
use super::memory::split_addend;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::analysis::values::At;
use crate::ir::layout::SharedDecl;
use crate::ir::{
    consteval, Accum, AccumId, BinOp, Expr, ExprKind, FragKind, FragOp, Place, PlaceKind, SharedId,
    StmtId, Swizzle, Value, Wgmma, WgmmaForm,
};
use crate::target::Target;
use crate::types::Scalar;

/// The targets that have `wgmma` (ptx-notes §11.3).
const WGMMA: [Target; 1] = [Target::Sm90a];

/// The PTX name prefix of accumulator `k`'s registers: `%acc0_` declares
/// `%acc0_0`, `%acc0_1`, ... (kdsl names never start with `%`).
pub(super) fn accum_prefix(k: usize) -> String {
    format!("%acc{k}_")
}

/// The register type of an accumulator of `elem`: `f16` elements two to a
/// `.b32` (as `wgmma` takes them, q02).
pub(super) fn accum_decl(elem: Scalar) -> &'static str {
    match elem {
        Scalar::F32 => ".f32",
        Scalar::I32 => ".s32",
        _ => ".b32",
    }
}

/// One element of an accumulator: its register and, for `f16`, which half.
pub(super) struct AccRef {
    reg: String,
    elem: Scalar,
    /// For `f16`: the upper half (odd elements) or the lower (even).
    half: Option<bool>,
}

/// The targets that have `setmaxnreg` (ptx-notes §11.4).
const SETMAXNREG: [Target; 2] = [Target::Sm90a, Target::Sm100a];

impl Writer<'_> {
    /// `set_max_regs(n)` (statement `id`): `setmaxnreg.inc` from a smaller
    /// count, `.dec` from a larger one, as the warpgroup facts of
    /// [`crate::analysis`] say.
    pub(super) fn set_max_regs(&mut self, id: StmtId, n: u32) -> Result<()> {
        self.require_arch(&SETMAXNREG, "setmaxnreg")?;
        self.need(8, 0);
        let facts = &self.info.warpgroups;
        let Some(entry) = facts.entry else {
            return Err(self.invalid("`set_max_regs` in a kernel without `block(...)`"));
        };
        let Some(change) = facts.regs.get(&id) else {
            return Err(self.error(ErrorKind::StaleInfo(
                "a `set_max_regs` the warpgroup facts do not know".into(),
            )));
        };
        let Some(inc) = change.increase(entry) else {
            return Err(self.invalid(
                "a `set_max_regs` that increases the count on one path and decreases it on another",
            ));
        };
        let dir = if inc { "inc" } else { "dec" };
        emit!(self, "setmaxnreg.{}.sync.aligned.u32 {};", dir, n);
        Ok(())
    }
}

impl Writer<'_> {
    /// Element `index` of accumulator `acc`: a constant once the loops over
    /// lists are unrolled (the warpgroup pass checked it, E0418).
    pub(super) fn accum_ref(&mut self, acc: AccumId, index: &Expr) -> Result<AccRef> {
        let Some(a) = self.kernel.and_then(|k| k.accums.get(acc.index())) else {
            return Err(self.invalid(format!("accumulator {} does not exist here", acc.0)));
        };
        let i = crate::ir::consteval::eval_int(index)
            .or_else(|| self.info.values.int(index, At::TOP))
            .and_then(|i| u32::try_from(i).ok())
            .filter(|i| *i < a.elements());
        let Some(i) = i else {
            return Err(self.invalid(format!(
                "an element of accumulator `{}` that is not a constant below {}",
                a.name,
                a.elements()
            )));
        };
        let (j, half) = if a.elem.size() == 2 {
            (i / 2, Some(i % 2 == 1))
        } else {
            (i, None)
        };
        Ok(AccRef {
            reg: format!("{}{j}", accum_prefix(acc.index())),
            elem: a.elem,
            half,
        })
    }

    pub(super) fn accum_read(&mut self, a: &AccRef) -> Operand {
        let d = self.reg_for(a.elem);
        match a.half {
            None => emit!(self, "mov.{} {}, {};", super::suffix::mov(a.elem), d, a.reg),
            Some(hi) => {
                let other = self.reg(Class::B16);
                let (lo, up) = if hi { (other, d) } else { (d, other) };
                emit!(self, "mov.b32 {{{}, {}}}, {};", lo, up, a.reg);
            }
        }
        Operand::Reg(d)
    }

    pub(super) fn accum_write(&mut self, a: &AccRef, v: &Operand) {
        match a.half {
            None => emit!(self, "mov.{} {}, {};", super::suffix::mov(a.elem), a.reg, v),
            Some(hi) => {
                let (lo, up) = (self.reg(Class::B16), self.reg(Class::B16));
                emit!(self, "mov.b32 {{{}, {}}}, {};", lo, up, a.reg);
                let keep: Reg = if hi { lo } else { up };
                if hi {
                    emit!(self, "mov.b32 {}, {{{}, {}}};", a.reg, keep, v);
                } else {
                    emit!(self, "mov.b32 {}, {{{}, {}}};", a.reg, v, keep);
                }
            }
        }
    }

    /// `wgmma_commit()`: `wgmma.commit_group.sync.aligned`.
    pub(super) fn wgmma_commit(&mut self) -> Result<()> {
        self.require_arch(&WGMMA, "wgmma.commit_group")?;
        self.need(8, 0);
        emit!(self, "wgmma.commit_group.sync.aligned;");
        Ok(())
    }

    /// `wgmma_wait(n)`: `wgmma.wait_group.sync.aligned n`.
    pub(super) fn wgmma_wait(&mut self, n: u32) -> Result<()> {
        self.require_arch(&WGMMA, "wgmma.wait_group")?;
        self.need(8, 0);
        emit!(self, "wgmma.wait_group.sync.aligned {};", n);
        Ok(())
    }
}

/// The fields of a shared-memory matrix descriptor other than its start
/// address (PTX ISA 9.7.15.5.1.2.2): for a K-major operand in an array of
/// swizzle `s`, the leading-dimension offset unused (encoded 1), the
/// stride-dimension offset 8 rows of one span (`SBO >> 4` in bits 32-45),
/// base offset 0 (every stage starts on its repeat, E0403), the swizzle
/// mode in bits 62-63 (1: 128B, 2: 64B, 3: 32B).
///
/// MN-major (`blocks`: the bytes between the tile's blocks of one span,
/// `Some` for a transposed operand), the leading-dimension offset is that
/// distance (from the first span of rows to the next) and the
/// stride-dimension offset 8 rows of K, again 8 spans (PTX ISA
/// 9.7.15.5.1.2.1, MN-major swizzled layouts).
pub fn descriptor_fields(s: Swizzle, blocks: Option<u64>) -> Option<u64> {
    let mode: u64 = match s {
        Swizzle::B128 => 1,
        Swizzle::B64 => 2,
        Swizzle::B32 => 3,
        Swizzle::None => return None,
    };
    let sbo = (s.span() * 8) >> 4;
    let lbo = blocks.map_or(1, |b| (b >> 4) & 0x3fff);
    Some((mode << 62) | (sbo << 32) | (lbo << 16))
}

impl Writer<'_> {
    /// `wgmma(acc, a, b, accumulate)` (statement `id`): the descriptors of
    /// both tiles, `wgmma.fence` where the wgmma facts say the ISA wants
    /// one (the first wgmma, and after ordinary accesses to the
    /// accumulator), and the `wgmma.mma_async` of the form.
    pub(super) fn wgmma(&mut self, id: StmtId, w: &Wgmma) -> Result<()> {
        self.require_arch(&WGMMA, "wgmma.mma_async")?;
        self.need(8, 0);
        let Some(acc) = self.kernel.and_then(|k| k.accums.get(w.acc.index())) else {
            return Err(self.invalid(format!("accumulator {} does not exist here", w.acc.0)));
        };
        let (n, elem, regs) = (acc.n, acc.elem, acc.registers());
        let form = WgmmaForm::of(elem, w.a.elem, w.b.elem).map_err(|why| self.invalid(why))?;
        if form.mixed_signedness() {
            self.need(8, 4);
        }
        // The A operand: a descriptor, or (RS) the four registers of the
        // fragment's slice.
        let da = match w.a_fragment() {
            Some((p, index)) => self.fragment_slice(p, index)?,
            None => self.descriptor(&w.a, w.trans_a)?.to_string(),
        };
        let db = self.descriptor(&w.b, w.trans_b)?;
        let scale_d = match crate::ir::consteval::eval(&w.accumulate) {
            Ok(Value::Bool(b)) => Operand::imm(u8::from(b)),
            _ => Operand::Reg(self.expr_reg(&w.accumulate)?),
        };
        if self.info.wgmma.fence.contains(&id) {
            emit!(self, "wgmma.fence.sync.aligned;");
        }
        let prefix = accum_prefix(w.acc.index());
        let list: Vec<String> = (0..regs).map(|j| format!("{prefix}{j}")).collect();
        let imms = if form.integer() {
            ""
        } else if w.a_fragment().is_some() {
            // RS: no transpose immediate for A.
            if w.trans_b {
                ", 1, 1, 1"
            } else {
                ", 1, 1, 0"
            }
        } else if form.transposable() {
            match (w.trans_a, w.trans_b) {
                (false, false) => ", 1, 1, 0, 0",
                (true, false) => ", 1, 1, 1, 0",
                (false, true) => ", 1, 1, 0, 1",
                (true, true) => ", 1, 1, 1, 1",
            }
        } else {
            ", 1, 1"
        };
        emit!(
            self,
            "wgmma.mma_async.sync.aligned.m64n{}k{}.{}.{}.{} {{{}}}, {}, {}, {}{};",
            n,
            form.k(),
            WgmmaForm::ptx(form.d),
            WgmmaForm::ptx(form.a),
            WgmmaForm::ptx(form.b),
            list.join(", "),
            da,
            db,
            scale_d,
            imms
        );
        Ok(())
    }

    /// `{%accP_4kk, ..}`: the four registers of fragment `p`'s slice from
    /// element `index` (a constant multiple of 8 within it: E0410).
    fn fragment_slice(&mut self, p: AccumId, index: &Expr) -> Result<String> {
        let Some(a) = self.kernel.and_then(|k| k.accums.get(p.index())) else {
            return Err(self.invalid(format!("accumulator {} does not exist here", p.0)));
        };
        let n = Accum::SLICE_ELEMENTS;
        let i = consteval::eval_int(index)
            .or_else(|| self.info.values.int(index, At::TOP))
            .and_then(|i| u32::try_from(i).ok())
            .filter(|i| i % n == 0 && i + n <= a.elements());
        let Some(i) = i else {
            return Err(self.invalid(format!(
                "a slice of fragment `{}` that does not start at a constant multiple of {n} within it",
                a.name
            )));
        };
        let prefix = accum_prefix(p.index());
        let regs: Vec<String> = (i / 2..(i + n) / 2)
            .map(|j| format!("{prefix}{j}"))
            .collect();
        Ok(format!("{{{}}}", regs.join(", ")))
    }

    /// A whole-fragment operation ([`FragOp`]): unrolled over this
    /// thread's registers; the row reductions end with two butterfly
    /// shuffles across the four lanes of a row (lanes `4q .. 4q + 3`).
    pub(super) fn fragment(&mut self, f: &FragOp) -> Result<()> {
        let k = self.kernel;
        let (Some(d), Some(s)) = (
            k.and_then(|k| k.accums.get(f.dst.index())).cloned(),
            k.and_then(|k| k.accums.get(f.src.index())).cloned(),
        ) else {
            return Err(self.invalid("a fragment operation on an accumulator that does not exist"));
        };
        if let Some(why) = crate::ir::fragment_mismatch(f.kind, &d, &s) {
            return Err(self.invalid(format!("`{}` on {why}", f.kind.name())));
        }
        let (dp, sp) = (accum_prefix(f.dst.index()), accum_prefix(f.src.index()));
        match f.kind {
            FragKind::RowMax | FragKind::RowSum => {
                let op = if f.kind == FragKind::RowMax {
                    "max.f32"
                } else {
                    "add.rn.f32"
                };
                for r in 0..2 {
                    let mut acc: Option<String> = None;
                    for i in (0..s.elements()).filter(|&i| s.row_slot(i) == r) {
                        let x = format!("{sp}{i}");
                        acc = Some(match acc {
                            None => x,
                            Some(a) => {
                                let t = self.reg(Class::F32);
                                emit!(self, "{} {}, {}, {};", op, t, a, x);
                                t.to_string()
                            }
                        });
                    }
                    let Some(mut acc) = acc else {
                        continue;
                    };
                    if !s.row {
                        for lanes in [1, 2] {
                            let (x, t) = (self.reg(Class::F32), self.reg(Class::F32));
                            emit!(
                                self,
                                "shfl.sync.bfly.b32 {}, {}, {}, 31, -1;",
                                x,
                                acc,
                                lanes
                            );
                            emit!(self, "{} {}, {}, {};", op, t, acc, x);
                            acc = t.to_string();
                        }
                    }
                    emit!(self, "{} {dp}{r}, {dp}{r}, {};", op, acc);
                }
            }
            FragKind::RowScale => {
                for i in 0..d.elements() {
                    emit!(self, "mul.rn.f32 {dp}{i}, {dp}{i}, {sp}{};", d.row_slot(i));
                }
            }
            FragKind::RowExp2 => {
                let Some(kx) = &f.factor else {
                    return Err(self.invalid("`row_exp2` without its factor"));
                };
                let kv = self.expr(kx)?;
                let kr = self.reg(Class::F32);
                emit!(self, "mov.f32 {}, {};", kr, kv);
                // Per row: -(m k), then x k - m k in one fma per element.
                let mut neg = Vec::new();
                for r in 0..2 {
                    let t = self.reg(Class::F32);
                    emit!(self, "mul.rn.f32 {}, {sp}{r}, {};", t, kr);
                    let n = self.reg(Class::F32);
                    emit!(self, "neg.f32 {}, {};", n, t);
                    neg.push(n);
                }
                for i in 0..d.elements() {
                    let t = self.reg(Class::F32);
                    let Some(&m) = neg.get(d.row_slot(i) as usize) else {
                        return Err(self.invalid("a row slot past a thread's two rows"));
                    };
                    emit!(self, "fma.rn.f32 {}, {dp}{i}, {}, {};", t, kr, m);
                    emit!(self, "ex2.approx.ftz.f32 {dp}{i}, {};", t);
                }
            }
            FragKind::Convert => {
                let ty = if d.elem == Scalar::F16 {
                    "f16x2"
                } else {
                    "bf16x2"
                };
                for j in 0..d.registers() {
                    emit!(
                        self,
                        "cvt.rn.{ty}.f32 {dp}{j}, {sp}{}, {sp}{};",
                        2 * j + 1,
                        2 * j
                    );
                }
            }
        }
        Ok(())
    }

    /// The 64-bit descriptor of the tile whose first element is `p`,
    /// MN-major when `trans`.
    fn descriptor(&mut self, p: &Place, trans: bool) -> Result<Reg> {
        let PlaceKind::Shared { array, indices } = &p.kind else {
            return Err(self.invalid("a wgmma operand outside this CTA's shared memory"));
        };
        let fields = self.descriptor_fields_of(*array, trans)?;
        let outer = self.at(p.span);
        let e = self.descriptor_of(*array, indices, trans, fields)?;
        self.restore(outer);
        Ok(e)
    }

    /// The constant fields of the descriptors of `array`'s tiles, MN-major
    /// when `trans`: the swizzle mode, the stride and leading offsets.
    fn descriptor_fields_of(&self, array: SharedId, trans: bool) -> Result<u64> {
        let arr = self.kernel.and_then(|k| k.shared.get(array.index()));
        let swizzle = arr.map_or(Swizzle::None, |a| a.swizzle);
        // MN-major: a span of rows is one row of the array; the next span
        // of rows is K rows further.
        let blocks = arr.filter(|_| trans).map(|a| {
            let k_dim = a.dims.iter().rev().nth(1).copied().unwrap_or(0);
            k_dim * swizzle.span()
        });
        descriptor_fields(swizzle, blocks)
            .ok_or_else(|| self.invalid("a wgmma operand in an array without a swizzle"))
    }

    /// The low word of the descriptor of `array`'s first element (MN-major
    /// when `trans`), in a register: the kernel's prologue takes each one
    /// once ([`crate::analysis::Usage::wgmma_operands`]).
    pub(super) fn descriptor_base(&mut self, array: SharedId, trans: bool) -> Result<Reg> {
        if let Some(r) = self.descriptor_bases.get(&(array, trans)) {
            return Ok(*r);
        }
        let fields = self.descriptor_fields_of(array, trans)?;
        let start = self.shared_start(SharedDecl::Array(array))?;
        let base = self.symbol_base(&start.symbol_text()).to_string();
        let lo = self.descriptor_low(&base, fields);
        self.descriptor_bases.insert((array, trans), lo);
        Ok(lo)
    }

    /// `((addr & 0x3FFFF) >> 4) | ` the low word of `fields`.
    fn descriptor_low(&mut self, addr: &str, fields: u64) -> Reg {
        let (r, s, lo) = (
            self.reg(Class::B32),
            self.reg(Class::B32),
            self.reg(Class::B32),
        );
        emit!(self, "and.b32 {}, {}, 0x3FFFF;", r, addr);
        emit!(self, "shr.u32 {}, {}, 4;", s, r);
        emit!(self, "or.b32 {}, {}, {:#x};", lo, s, fields & 0xffff_ffff);
        lo
    }

    /// The descriptor of the tile at `array[indices]` with the constant
    /// `fields` (leading and stride offsets, swizzle mode).
    ///
    /// The start-address field is bits 4-17 of the tile's shared address,
    /// and every tile lies in the CTA's shared window (below 228 KiB, so
    /// below 2^18; E0410 where the indices are known): adding a multiple of
    /// 16 bytes to the address adds a sixteenth of it to the field, never
    /// carrying out of it. So the descriptor is that of the array's start
    /// (`(start & 0x3FFFF) >> 4`, the leading offset in the same low word,
    /// the rest a constant high word) plus each index times its stride in
    /// 16-byte units, plus the constant offset: the same descriptor for
    /// every operand of an array, invariant in every loop (ptxas computes
    /// it once), and the wgmmas of one stage (`sa[s, r, kk * 16]` for each
    /// `kk`) differ by an add to its low word, as hand-written kernels do
    /// (`desc + 2` per 32 bytes of K). An index whose stride (or a constant
    /// offset that) is not a multiple of 16 bytes, such as a K index
    /// computed at run time, is added to the address before it is masked.
    fn descriptor_of(
        &mut self,
        array: SharedId,
        indices: &[Expr],
        trans: bool,
        fields: u64,
    ) -> Result<Reg> {
        let Some(arr) = self.kernel.and_then(|k| k.shared.get(array.index())) else {
            return Err(self.invalid(format!("shared array {} does not exist here", array.0)));
        };
        if indices.len() != arr.dims.len() {
            return Err(self.invalid(format!(
                "{} indices for `{}` of {} dimensions",
                indices.len(),
                arr.name,
                arr.dims.len()
            )));
        }
        let size = i64::from(arr.elem.size());
        let strides: Vec<i64> = (0..arr.dims.len())
            .map(|k| {
                arr.dims
                    .iter()
                    .skip(k + 1)
                    .fold(size, |a, &d| a.wrapping_mul(d as i64))
            })
            .collect();
        let start = self.shared_start(SharedDecl::Array(array))?;
        // The constant byte offset, and the run-time terms: (index, stride).
        let mut off: i64 = 0;
        let mut terms: Vec<(Operand, i64)> = Vec::new();
        for (idx, stride) in indices.iter().zip(strides) {
            if let Some(c) = consteval::eval_int(idx) {
                off = off.wrapping_add((c as i64).wrapping_mul(stride));
                continue;
            }
            let (idx, c) = split_addend(idx);
            off = off.wrapping_add(c.wrapping_mul(stride));
            // `r * 64` rows: one multiply by 64 strides (32-bit addresses
            // wrap like the index, so this is exact).
            let (idx, k) = split_factor(idx);
            terms.push((self.expr_u32(idx)?, stride.wrapping_mul(k)));
        }
        // Shared addresses are 32-bit: the offset wraps like the address.
        let off = i64::from(off as i32);
        let (words, bytes): (Vec<_>, Vec<_>) = terms.into_iter().partition(|(_, st)| st % 16 == 0);
        let cached = self.descriptor_bases.get(&(array, trans)).copied();
        let lo = if let (true, Some(lo)) = (bytes.is_empty() && off % 16 == 0, cached) {
            lo
        } else {
            // The address with what is not a multiple of 16 bytes, masked.
            let mut base = self.symbol_base(&start.symbol_text()).to_string();
            for (v, stride) in bytes {
                let next = self.reg(Class::B32);
                emit!(self, "mad.lo.s32 {}, {}, {}, {};", next, v, stride, base);
                base = next.to_string();
            }
            if off % 16 != 0 {
                let next = self.reg(Class::B32);
                emit!(self, "add.u32 {}, {}, {};", next, base, off);
                base = next.to_string();
            }
            self.descriptor_low(&base, fields)
        };
        let off = if off % 16 == 0 { off } else { 0 };
        let mut lo = lo;
        for (v, stride) in words {
            let next = self.reg(Class::B32);
            emit!(self, "mad.lo.s32 {}, {}, {}, {};", next, v, stride / 16, lo);
            lo = next;
        }
        if off != 0 {
            let next = self.reg(Class::B32);
            emit!(self, "add.u32 {}, {}, {};", next, lo, off / 16);
            lo = next;
        }
        let (d, e) = (self.reg(Class::B64), self.reg(Class::B64));
        emit!(self, "cvt.u64.u32 {}, {};", d, lo);
        emit!(
            self,
            "or.b64 {}, {}, {:#018x};",
            e,
            d,
            fields & !0xffff_ffff
        );
        Ok(e)
    }
}

/// `e * c`, `c * e` or `e << c` of a 32-bit integer `e` and a constant
/// `c`: `(e, c)` (`(e, 2^c)` for the shift); else `(e, 1)`.
fn split_factor(e: &Expr) -> (&Expr, i64) {
    if let ExprKind::Binary(op, a, b) = &e.kind {
        if e.ty.is_int() && e.ty.bits() == 32 {
            match op {
                BinOp::Mul => {
                    if let Some(c) = consteval::eval_int(b) {
                        return (a, c as i64);
                    }
                    if let Some(c) = consteval::eval_int(a) {
                        return (b, c as i64);
                    }
                }
                BinOp::Shl => {
                    if let Some(c) = consteval::eval_int(b).filter(|c| (0..32).contains(c)) {
                        return (a, 1i64 << c);
                    }
                }
                _ => {}
            }
        }
    }
    (e, 1)
}
