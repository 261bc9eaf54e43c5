//! One PTX instruction → one [`Inst`]: the opcode table of the simulator.
//! An opcode or modifier it does not know is an `Unsupported` error naming
//! the instruction, so a module outside the subset fails at load time
//! instead of running wrongly.

use super::mods::Mods;
use super::ops::*;
use super::scope::Binding;
use super::{specials, Builder, LoadErrorKind, Wider};
use crate::sim::ptx::ast::{self, Imm, Operand};

pub(super) type R<T> = Result<T, (LoadErrorKind, String)>;

pub(super) fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err((LoadErrorKind::Unsupported, what.into()))
}

pub(super) fn invalid<T>(what: impl Into<String>) -> R<T> {
    Err((LoadErrorKind::Invalid, what.into()))
}

pub(super) fn unsup(m: String) -> (LoadErrorKind, String) {
    (LoadErrorKind::Unsupported, m)
}

/// The bits of an immediate as a value of type `ty`.
pub fn imm_bits(imm: Imm, ty: Ty) -> u64 {
    let bits = match (imm, ty) {
        (Imm::Int(v), Ty::F32) => u64::from((v as i64 as f32).to_bits()),
        (Imm::Int(v), Ty::F64) => (v as i64 as f64).to_bits(),
        (Imm::F32(b), Ty::F64) => f64::from(f32::from_bits(b)).to_bits(),
        (Imm::F64(b), Ty::F32) => u64::from((f64::from_bits(b) as f32).to_bits()),
        (Imm::F64(b), Ty::F16) => u64::from(crate::sim::machine::float::f32_to_f16(
            f64::from_bits(b) as f32,
        )),
        (Imm::F64(b), Ty::BF16) => u64::from(crate::sim::machine::float::f32_to_bf16(
            f64::from_bits(b) as f32,
        )),
        (Imm::Int(v), _) => v,
        (Imm::F32(b), _) => u64::from(b),
        (Imm::F64(b), _) => b,
    };
    mask(bits, ty)
}

fn mask(v: u64, ty: Ty) -> u64 {
    match ty.bits() {
        64 => v,
        1 => u64::from(v != 0),
        n => v & ((1u64 << n) - 1),
    }
}

pub(super) fn base_inst(op: Op) -> Inst {
    Inst {
        op,
        guard: 0,
        d: NO_DEST,
        a: 0,
        b: 0,
        c: 0,
        off: 0,
        aux: 0,
    }
}

impl Builder<'_> {
    pub(super) fn c(&mut self, value: u64) -> R<u32> {
        self.constant(value).map_err(unsup)
    }

    /// A source operand of type `ty`: a register, a special register, an
    /// immediate or the address of a symbol.
    pub(super) fn src(&mut self, op: Option<&Operand>, ty: Ty) -> R<u32> {
        match op {
            Some(Operand::Name(name)) => self.name_value(name, 0),
            Some(Operand::SymOffset(name, off)) => self.name_value(name, *off),
            Some(Operand::Imm(imm)) => self.c(imm_bits(*imm, ty)),
            Some(other) => invalid(format!("unexpected operand {other:?}")),
            None => invalid("missing operand"),
        }
    }

    pub(super) fn name_value(&mut self, name: &str, off: i64) -> R<u32> {
        if name == "WARP_SZ" {
            return self.c(32);
        }
        match self.scopes.lookup(name) {
            Some(Binding::Reg(slot)) if off == 0 => Ok(slot),
            Some(Binding::Shared(o)) => {
                let off = self.shared_offset(o, off);
                self.c((i64::from(o) + off) as u64)
            }
            Some(Binding::Local(o)) | Some(Binding::Param(o)) => {
                self.c((i64::from(o) + off) as u64)
            }
            Some(Binding::Global(a)) => self.c((a as i64 + off) as u64),
            Some(Binding::FuncParam(_)) => unsupported(format!(
                "taking the address of the function parameter `{name}`"
            )),
            Some(Binding::Label(_)) | Some(Binding::Func(_)) => {
                unsupported(format!("`{name}` used as a value"))
            }
            Some(Binding::Reg(_)) => invalid(format!("`{name}+{off}`: an offset on a register")),
            None => match specials::slot(name) {
                Some(slot) => Ok(slot),
                None if is_clock(name) => unsupported(format!("`{name}` outside `mov`")),
                None => invalid(format!("unknown name `{name}`")),
            },
        }
    }

    /// `off` bytes past shared variable `o`: in a kdslc kernel placed in
    /// dynamic shared memory, where the simulator put the declaration at
    /// that offset of the dynamic array (`crate::sim::shared`).
    fn shared_offset(&self, o: u32, off: i64) -> i64 {
        match self.layout {
            Some(l) if Some(o) == self.dynamic_base => crate::sim::dynamic::remap(l, off),
            _ => off,
        }
    }

    pub(super) fn dst(&mut self, op: Option<&Operand>) -> R<u32> {
        match op {
            Some(Operand::Sink) => Ok(NO_DEST),
            Some(Operand::Name(name)) => match self.scopes.lookup(name) {
                Some(Binding::Reg(slot)) => Ok(slot),
                Some(_) => invalid(format!("`{name}` is not a register")),
                None if specials::slot(name).is_some() => {
                    invalid(format!("the special register `{name}` is read-only"))
                }
                None => invalid(format!("unknown register `{name}`")),
            },
            Some(other) => invalid(format!("expected a register, found {other:?}")),
            None => invalid("missing destination"),
        }
    }

    /// A predicate source, possibly negated (`!%p`).
    pub(super) fn pred(&mut self, op: Option<&Operand>) -> R<(u32, bool)> {
        match op {
            Some(Operand::Not(name)) => Ok((self.name_value(name, 0)?, true)),
            other => Ok((self.src(other, Ty::Pred)?, false)),
        }
    }

    /// `[base+off]`: the base slot and the offset; the space may change
    /// (`ld.param` of a function parameter is per thread).
    pub(super) fn addr(&mut self, op: Option<&Operand>, space: Space) -> R<(u32, i64, Space)> {
        let Some(Operand::Addr(a)) = op else {
            return invalid(format!("expected an address `[...]`, found {op:?}"));
        };
        let Some(base) = &a.base else {
            return Ok((self.c(a.offset as u64)?, 0, space));
        };
        match self.scopes.lookup(base) {
            Some(Binding::Reg(slot)) => Ok((slot, a.offset, space)),
            Some(Binding::FuncParam(o)) => {
                if !matches!(space, Space::Param | Space::FuncParam) {
                    return unsupported(format!(
                        "`{base}` (a function parameter) in the {} space",
                        space.name()
                    ));
                }
                Ok((self.c(u64::from(o))?, a.offset, Space::FuncParam))
            }
            Some(Binding::Param(o)) => {
                if space != Space::Param {
                    return unsupported(format!(
                        "the kernel parameter `{base}` in the {} space",
                        space.name()
                    ));
                }
                Ok((self.c(u64::from(o))?, a.offset, Space::Param))
            }
            Some(Binding::Shared(o)) if self.layout.is_some() && Some(o) == self.dynamic_base => {
                // `[$dsmem+off]`: the whole address is the declaration's.
                let off = self.shared_offset(o, a.offset);
                Ok((self.c((i64::from(o) + off) as u64)?, 0, space))
            }
            Some(Binding::Shared(o)) => Ok((self.c(u64::from(o))?, a.offset, space)),
            Some(Binding::Local(o)) => Ok((self.c(u64::from(o))?, a.offset, space)),
            Some(Binding::Global(g)) => Ok((self.c(g)?, a.offset, space)),
            Some(_) => invalid(format!("`{base}` is not an address")),
            None => match specials::slot(base) {
                Some(slot) => Ok((slot, a.offset, space)),
                None => invalid(format!("unknown name `{base}`")),
            },
        }
    }

    pub(super) fn sync_addr(&mut self, op: Option<&Operand>, space: Space) -> R<Addr> {
        let (base, off, space) = self.addr(op, space)?;
        Ok(Addr { base, off, space })
    }

    pub(super) fn list(&mut self, slots: Vec<u32>) -> u32 {
        let at = self.lists.len() as u32;
        self.lists.extend(slots);
        at
    }

    pub(super) fn sync(&mut self, op: SyncOp) -> Inst {
        let mut inst = base_inst(Op::Sync);
        inst.aux = self.syncs.len() as u32;
        self.syncs.push(op);
        inst
    }
}

/// The type word of an instruction (`u32`, `b64`), as written.
fn type_word(m: &Mods) -> Option<&'static str> {
    m.peek_any(super::mods::TYPE_WORDS)
}

/// `word` with its bits doubled (`u32` → `u64`): `mul.wide`'s result.
fn doubled(word: &str) -> String {
    let (kind, bits) = word.split_at(1);
    format!("{kind}{}", bits.parse::<u32>().unwrap_or(0) * 2)
}

pub(super) fn is_clock(name: &str) -> bool {
    matches!(
        name,
        "%clock"
            | "%clock64"
            | "%globaltimer"
            | "%globaltimer_lo"
            | "%clock_hi"
            | "%globaltimer_hi"
    )
}

/// One type modifier, required.
pub(super) fn one_type(types: &[Ty], what: &str) -> R<Ty> {
    match types {
        [t] => Ok(*t),
        [] => invalid(format!("`{what}` needs a type")),
        _ => unsupported(format!("`{what}` with several types")),
    }
}

fn float_rnd(m: &mut Mods) -> Rnd {
    match m.take_any(&["rn", "rz", "rm", "rp", "approx", "full"]) {
        Some("rz") => Rnd::Rz,
        Some("rm") => Rnd::Rm,
        Some("rp") => Rnd::Rp,
        Some("approx") | Some("full") => Rnd::Approx,
        _ => Rnd::Rn,
    }
}

/// `.f16x2`/`.bf16x2`: the half type of a packed operation, taken from
/// the modifiers.
fn packed_type(m: &mut Mods) -> Option<Ty> {
    match m.take_any(&["f16x2", "bf16x2"]) {
        Some("f16x2") => Some(Ty::F16),
        Some(_) => Some(Ty::BF16),
        None => None,
    }
}

fn fmode(m: &mut Mods) -> FMode {
    FMode {
        ftz: m.take("ftz"),
        sat: m.take("sat") | m.take("satfinite"),
    }
}

/// `cvt` of the packed types: `.bf16x2`/`.f16x2` from two f32s, the
/// 8-bit float pairs from two f32s or an `.f16x2`, and `.f16x2` from an
/// 8-bit pair (PTX ISA §9.7.9.21).
fn cvt_packed(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let rnd = m.take_any(&["rn", "rz", "rna", "rm", "rp"]);
    let relu = m.take("relu");
    let satfinite = m.take("satfinite");
    let words: Vec<&str> = m.words().to_vec();
    let kind = match words.as_slice() {
        ["bf16x2", "f32"] => Packed::Bf16x2FromF32,
        ["f16x2", "f32"] => Packed::F16x2FromF32,
        ["e4m3x2", "f32"] => Packed::E4m3x2FromF32,
        ["e5m2x2", "f32"] => Packed::E5m2x2FromF32,
        ["e4m3x2", "f16x2"] => Packed::E4m3x2FromF16x2,
        ["e5m2x2", "f16x2"] => Packed::E5m2x2FromF16x2,
        ["f16x2", "e4m3x2"] => Packed::F16x2FromE4m3x2,
        ["f16x2", "e5m2x2"] => Packed::F16x2FromE5m2x2,
        _ => return unsupported(format!("`cvt.{}`", words.join("."))),
    };
    m.clear();
    let to_fp8 = matches!(
        kind,
        Packed::E4m3x2FromF32
            | Packed::E5m2x2FromF32
            | Packed::E4m3x2FromF16x2
            | Packed::E5m2x2FromF16x2
    );
    match rnd {
        Some("rn") => {}
        Some("rz")
            if !to_fp8 && !matches!(kind, Packed::F16x2FromE4m3x2 | Packed::F16x2FromE5m2x2) => {}
        Some(r) => return unsupported(format!("`.{r}` on this packed `cvt`")),
        None => return invalid("a packed `cvt` needs its rounding (`.rn`)"),
    }
    if to_fp8 && !satfinite {
        return invalid("a conversion to an 8-bit float pair needs `.satfinite`");
    }
    let mut inst = base_inst(Op::CvtPacked(CvtPacked {
        kind,
        rz: rnd == Some("rz"),
        relu,
        satfinite,
    }));
    inst.d = b.dst(ops.first())?;
    let two = matches!(
        kind,
        Packed::Bf16x2FromF32
            | Packed::F16x2FromF32
            | Packed::E4m3x2FromF32
            | Packed::E5m2x2FromF32
    );
    if two {
        inst.a = b.src(ops.get(1), Ty::F32)?;
        inst.b = b.src(ops.get(2), Ty::F32)?;
    } else {
        inst.a = b.src(ops.get(1), Ty::U32)?;
    }
    Ok(inst)
}

pub fn decode(b: &mut Builder, i: &ast::Instruction) -> R<Inst> {
    let full = i.full_name();
    let mut inst = decode_op(b, i, &full).map_err(|(kind, msg)| {
        let msg = if kind == LoadErrorKind::Unsupported {
            format!("`{full}` is outside the simulator's PTX subset: {msg}")
        } else {
            format!("`{full}`: {msg}")
        };
        (kind, msg)
    })?;
    if let Some((name, neg)) = &i.guard {
        let slot = b
            .name_value(name, 0)
            .map_err(|(k, m)| (k, format!("guard of `{full}`: {m}")))?;
        inst.guard = slot | if *neg { 1 << 31 } else { 0 };
    }
    Ok(inst)
}

fn decode_op(b: &mut Builder, i: &ast::Instruction, full: &str) -> R<Inst> {
    let mut m = Mods::new(&i.opcode, &i.mods);
    let ops = &i.operands;
    let o = |k: usize| ops.get(k);
    let op = i.opcode.as_str();
    let inst = match op {
        "mov" => return super::inst_memory::mov(b, &mut m, ops),
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl"
        | "shr" | "copysign" => {
            let sat = m.take("sat");
            let lohi = m.take_any(&["lo", "hi", "wide"]);
            if m.take("cc") {
                return unsupported("carry chains (`.cc`)");
            }
            let mut rnd = Rnd::Rn;
            let mut mode = FMode::default();
            let nan = m.take("NaN");
            let packed = packed_type(&mut m);
            let word = type_word(&m);
            let types = m.take_types();
            let ty = match packed {
                Some(t) if types.is_empty() => t,
                _ => one_type(&types, full)?,
            };
            if ty.is_float() {
                rnd = float_rnd(&mut m);
                mode = fmode(&mut m);
                mode.sat |= sat;
                m.take("noftz");
            }
            m.finish().map_err(unsup)?;
            if let Some(w) = word {
                let dw = if lohi == Some("wide") {
                    doubled(w)
                } else {
                    w.to_string()
                };
                b.check_operand(o(0), &dw, Wider::No, op)?;
                b.check_operand(o(1), w, Wider::No, op)?;
                let shift = op == "shl" || op == "shr";
                b.check_operand(o(2), if shift { "u32" } else { w }, Wider::No, op)?;
            }
            let mut inst = base_inst(Op::Nop);
            inst.d = b.dst(o(0))?;
            let src_ty = if op == "shl" || op == "shr" || packed.is_some() {
                Ty::U32
            } else {
                ty
            };
            inst.a = b.src(o(1), if packed.is_some() { Ty::U32 } else { ty })?;
            inst.b = b.src(o(2), src_ty)?;
            inst.op = if ty.is_float() {
                let fop = match (op, nan) {
                    ("add", _) => FOp::Add,
                    ("sub", _) => FOp::Sub,
                    ("mul", _) => FOp::Mul,
                    ("div", _) => FOp::Div,
                    ("min", false) => FOp::Min,
                    ("max", false) => FOp::Max,
                    ("min", true) => FOp::MinNan,
                    ("max", true) => FOp::MaxNan,
                    ("copysign", _) => FOp::Copysign,
                    _ => return invalid("not a float operation"),
                };
                if matches!(ty, Ty::F16 | Ty::BF16) && rnd != Rnd::Rn {
                    return unsupported(
                        "half-precision arithmetic with a rounding other than `.rn`",
                    );
                }
                if fop == FOp::Div && matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
                    return unsupported("directed rounding of `div`");
                }
                if packed.is_some() {
                    if matches!(fop, FOp::Div | FOp::Copysign) {
                        return invalid("no packed form of this operation");
                    }
                    Op::FBin2(fop, ty, rnd, mode)
                } else {
                    Op::FBin(fop, ty, rnd, mode)
                }
            } else {
                let iop = match (op, lohi, sat) {
                    ("add", _, false) => IntOp::Add,
                    ("add", _, true) => IntOp::AddSat,
                    ("sub", _, false) => IntOp::Sub,
                    ("sub", _, true) => IntOp::SubSat,
                    ("mul", Some("hi"), _) => IntOp::MulHi,
                    ("mul", Some("wide"), _) => IntOp::MulWide,
                    ("mul", _, _) => IntOp::MulLo,
                    ("div", _, _) => IntOp::Div,
                    ("rem", _, _) => IntOp::Rem,
                    ("min", _, _) => IntOp::Min,
                    ("max", _, _) => IntOp::Max,
                    ("and", _, _) => IntOp::And,
                    ("or", _, _) => IntOp::Or,
                    ("xor", _, _) => IntOp::Xor,
                    ("shl", _, _) => IntOp::Shl,
                    ("shr", _, _) => IntOp::Shr,
                    _ => return invalid("not an integer operation"),
                };
                if sat && !(matches!(ty, Ty::S32) && matches!(iop, IntOp::AddSat | IntOp::SubSat)) {
                    return unsupported("`.sat` on this operation");
                }
                if iop == IntOp::MulWide && ty.bits() > 32 {
                    return invalid("`mul.wide` takes 16- or 32-bit operands");
                }
                Op::IBin(iop, ty)
            };
            inst
        }
        "mad" | "fma" => {
            let lohi = m.take_any(&["lo", "hi", "wide"]);
            if m.take("cc") || m.take("sat") && lohi.is_some() {
                return unsupported("`.cc`/`.sat` on integer `mad`");
            }
            let packed = packed_type(&mut m);
            if let Some(w) = type_word(&m) {
                let name = match lohi {
                    Some(l) => format!("{op}.{l}"),
                    None => op.to_string(),
                };
                let wide = if lohi == Some("wide") {
                    doubled(w)
                } else {
                    w.to_string()
                };
                b.check_operand(o(0), &wide, Wider::No, &name)?;
                b.check_operand(o(1), w, Wider::No, &name)?;
                b.check_operand(o(2), w, Wider::No, &name)?;
                b.check_operand(o(3), &wide, Wider::No, &name)?;
            }
            let types = m.take_types();
            let ty = match packed {
                Some(t) if types.is_empty() => t,
                _ => one_type(&types, full)?,
            };
            let mut inst = base_inst(Op::Nop);
            if ty.is_float() {
                let rnd = float_rnd(&mut m);
                let mode = fmode(&mut m);
                m.finish().map_err(unsup)?;
                if matches!(ty, Ty::F64) && matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
                    return unsupported("directed rounding of `fma.f64`");
                }
                if matches!(ty, Ty::F16 | Ty::BF16) && rnd != Rnd::Rn {
                    return unsupported("half-precision `fma` with a rounding other than `.rn`");
                }
                inst.op = if packed.is_some() {
                    Op::Fma2(ty, rnd, mode)
                } else {
                    Op::Fma(ty, rnd, mode)
                };
            } else {
                m.finish().map_err(unsup)?;
                let mode = match lohi {
                    Some("hi") => MadMode::Hi,
                    Some("wide") => MadMode::Wide,
                    _ => MadMode::Lo,
                };
                inst.op = Op::IMad(mode, ty);
            }
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), if packed.is_some() { Ty::U32 } else { ty })?;
            inst.b = b.src(o(2), if packed.is_some() { Ty::U32 } else { ty })?;
            let cty = match (inst.op, ty) {
                (Op::IMad(MadMode::Wide, _), Ty::U32) => Ty::U64,
                (Op::IMad(MadMode::Wide, _), Ty::S32) => Ty::S64,
                (Op::IMad(MadMode::Wide, _), Ty::U16) => Ty::U32,
                (Op::IMad(MadMode::Wide, _), Ty::S16) => Ty::S32,
                (Op::Fma2(..), _) => Ty::U32,
                _ => ty,
            };
            inst.c = b.src(o(3), cty)?;
            inst
        }
        "abs" | "neg" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rsqrt"
        | "rcp" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            let shift = m.take("shiftamt");
            let packed = packed_type(&mut m);
            if let Some(w) = type_word(&m) {
                if !matches!(op, "popc" | "clz" | "bfind") {
                    b.check_operand(o(0), w, Wider::No, op)?;
                }
                b.check_operand(o(1), w, Wider::No, op)?;
            }
            let types = m.take_types();
            let ty = match packed {
                Some(t) if types.is_empty() => t,
                _ => one_type(&types, full)?,
            };
            let mut inst = base_inst(Op::Nop);
            if ty.is_float() {
                let rnd = float_rnd(&mut m);
                let mode = fmode(&mut m);
                m.finish().map_err(unsup)?;
                let fop = match op {
                    "abs" => FUnOp::Abs,
                    "neg" => FUnOp::Neg,
                    "sqrt" => FUnOp::Sqrt,
                    "rsqrt" => FUnOp::Rsqrt,
                    "rcp" => FUnOp::Rcp,
                    "ex2" => FUnOp::Ex2,
                    "lg2" => FUnOp::Lg2,
                    "sin" => FUnOp::Sin,
                    "cos" => FUnOp::Cos,
                    "tanh" => FUnOp::Tanh,
                    _ => return invalid("not a float operation"),
                };
                if matches!(fop, FUnOp::Sqrt | FUnOp::Rcp)
                    && matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp)
                {
                    return unsupported("directed rounding of `sqrt`/`rcp`");
                }
                if matches!(ty, Ty::F16 | Ty::BF16)
                    && !matches!(fop, FUnOp::Abs | FUnOp::Neg | FUnOp::Ex2 | FUnOp::Tanh)
                {
                    return unsupported("this half-precision operation");
                }
                inst.op = if packed.is_some() {
                    Op::FUn2(fop, ty, rnd, mode)
                } else {
                    Op::FUn(fop, ty, rnd, mode)
                };
            } else {
                m.finish().map_err(unsup)?;
                let iop = match (op, shift) {
                    ("abs", _) => IntUnOp::Abs,
                    ("neg", _) => IntUnOp::Neg,
                    ("not", _) => IntUnOp::Not,
                    ("cnot", _) => IntUnOp::Cnot,
                    ("popc", _) => IntUnOp::Popc,
                    ("clz", _) => IntUnOp::Clz,
                    ("brev", _) => IntUnOp::Brev,
                    ("bfind", false) => IntUnOp::Bfind,
                    ("bfind", true) => IntUnOp::BfindShift,
                    _ => return invalid("not an integer operation"),
                };
                inst.op = Op::IUn(iop, ty);
            }
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), if packed.is_some() { Ty::U32 } else { ty })?;
            inst
        }
        "bfe" | "bfi" => {
            let types = m.take_types();
            let ty = one_type(&types, full)?;
            m.finish().map_err(unsup)?;
            let mut inst = base_inst(if op == "bfe" {
                Op::Bfe(ty)
            } else {
                Op::Bfi(ty)
            });
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), ty)?;
            if op == "bfe" {
                inst.b = b.src(o(2), Ty::U32)?;
                inst.c = b.src(o(3), Ty::U32)?;
            } else {
                inst.b = b.src(o(2), ty)?;
                inst.c = b.src(o(3), Ty::U32)?;
                inst.aux = b.src(o(4), Ty::U32)?;
            }
            inst
        }
        "prmt" => {
            let types = m.take_types();
            one_type(&types, full)?;
            m.finish().map_err(unsup)?;
            let mut inst = base_inst(Op::Prmt);
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::U32)?;
            inst.b = b.src(o(2), Ty::U32)?;
            inst.c = b.src(o(3), Ty::U32)?;
            inst
        }
        "shf" => {
            let left = match m.take_any(&["l", "r"]) {
                Some("l") => true,
                Some(_) => false,
                None => return invalid("`shf` needs `.l` or `.r`"),
            };
            let clamp = match m.take_any(&["wrap", "clamp"]) {
                Some("clamp") => true,
                Some(_) => false,
                None => return invalid("`shf` needs `.wrap` or `.clamp`"),
            };
            let word = m.peek_any(super::mods::TYPE_WORDS);
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            one_type(&types, full)?;
            if word != Some("b32") {
                return invalid("`shf` is `.b32`");
            }
            let mut inst = base_inst(Op::Shf { left, clamp });
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::U32)?;
            inst.b = b.src(o(2), Ty::U32)?;
            inst.c = b.src(o(3), Ty::U32)?;
            inst
        }
        "setp" => {
            let cmp = match m.take_any(&[
                "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
                "leu", "gtu", "geu", "num", "nan",
            ]) {
                Some("eq") => Cmp::Eq,
                Some("ne") => Cmp::Ne,
                Some("lt") | Some("lo") => Cmp::Lt,
                Some("le") | Some("ls") => Cmp::Le,
                Some("gt") | Some("hi") => Cmp::Gt,
                Some("ge") | Some("hs") => Cmp::Ge,
                Some("equ") => Cmp::Equ,
                Some("neu") => Cmp::Neu,
                Some("ltu") => Cmp::Ltu,
                Some("leu") => Cmp::Leu,
                Some("gtu") => Cmp::Gtu,
                Some("geu") => Cmp::Geu,
                Some("num") => Cmp::Num,
                Some(_) => Cmp::Nan,
                None => return invalid("`setp` needs a comparison"),
            };
            let bop = match m.take_any(&["and", "or", "xor"]) {
                Some("and") => Some(BoolOp::And),
                Some("or") => Some(BoolOp::Or),
                Some("xor") => Some(BoolOp::Xor),
                _ => None,
            };
            m.take("ftz");
            let packed = packed_type(&mut m);
            if let Some(w) = type_word(&m) {
                b.check_operand(o(1), w, Wider::No, op)?;
                b.check_operand(o(2), w, Wider::No, op)?;
            }
            let types = m.take_types();
            let ty = match packed {
                Some(t) if types.is_empty() => t,
                _ => one_type(&types, full)?,
            };
            m.finish().map_err(unsup)?;
            let mut inst = base_inst(if packed.is_some() {
                Op::Setp2(cmp, ty)
            } else {
                Op::Setp(cmp, ty)
            });
            let mut d2 = NO_DEST;
            match o(0) {
                Some(Operand::Pair(p, q)) => {
                    inst.d = b.dst(Some(&Operand::Name(p.clone())))?;
                    d2 = b.dst(Some(&Operand::Name(q.clone())))?;
                }
                other => inst.d = b.dst(other)?,
            }
            inst.a = b.src(o(1), if packed.is_some() { Ty::U32 } else { ty })?;
            inst.b = b.src(o(2), if packed.is_some() { Ty::U32 } else { ty })?;
            let combine = match bop {
                Some(bop) => {
                    let (slot, neg) = b.pred(o(3))?;
                    Some((bop, slot, neg))
                }
                None => None,
            };
            inst.aux = if combine.is_some() || d2 != NO_DEST {
                b.setp_ext.push(SetpExt { combine, d2 });
                b.setp_ext.len() as u32 - 1
            } else {
                u32::MAX
            };
            inst
        }
        "selp" => {
            if let Some(w) = type_word(&m) {
                for k in 0..3 {
                    b.check_operand(o(k), w, Wider::No, op)?;
                }
                b.check_operand(o(3), "pred", Wider::No, op)?;
            }
            let types = m.take_types();
            let ty = one_type(&types, full)?;
            m.finish().map_err(unsup)?;
            let mut inst = base_inst(Op::Selp);
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), ty)?;
            inst.b = b.src(o(2), ty)?;
            inst.c = b.src(o(3), Ty::Pred)?;
            inst
        }
        "cvt"
            if m.peek_any(&["bf16x2", "f16x2", "e4m3x2", "e5m2x2"])
                .is_some() =>
        {
            return cvt_packed(b, &mut m, ops)
        }
        "cvt" if m.peek_any(&["tf32"]).is_some() => {
            let rna = m.take("rna");
            m.take("tf32");
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            if !rna || types != [Ty::F32] {
                return unsupported("`cvt` to `.tf32` other than `cvt.rna.tf32.f32`");
            }
            let mut inst = base_inst(Op::CvtTf32);
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::F32)?;
            inst
        }
        "cvt" => {
            let rnd = match m.take_any(&["rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"])
            {
                Some("rn") => CvtRnd::Rn,
                Some("rz") => CvtRnd::Rz,
                Some("rm") => CvtRnd::Rm,
                Some("rp") => CvtRnd::Rp,
                Some("rni") => CvtRnd::Rni,
                Some("rzi") => CvtRnd::Rzi,
                Some("rmi") => CvtRnd::Rmi,
                Some("rpi") => CvtRnd::Rpi,
                Some(_) => return unsupported("`.rna` rounding"),
                None => CvtRnd::None,
            };
            let ftz = m.take("ftz");
            let sat = m.take("sat");
            let relu = m.take("relu");
            let words: Vec<&str> = m
                .words()
                .iter()
                .copied()
                .filter(|w| super::mods::TYPE_WORDS.contains(w))
                .collect();
            if let [to, from] = words[..] {
                // ptxas 13.5 takes a wider register for either operand,
                // but for a 32- or 64-bit integer converted to a float.
                let int_to_float = to.starts_with('f')
                    && matches!(from, "u32" | "s32" | "b32" | "u64" | "s64" | "b64");
                let from_wider = if int_to_float {
                    Wider::SubWord
                } else {
                    Wider::Any
                };
                b.check_operand(o(0), to, Wider::Any, op)?;
                b.check_operand(o(1), from, from_wider, op)?;
            }
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            let [to, from] = types[..] else {
                return unsupported("`cvt` needs exactly two scalar types (packed forms such as `.f16x2` are not supported)");
            };
            if to == Ty::Pred || from == Ty::Pred {
                return invalid("`cvt` of a predicate");
            }
            let mut inst = base_inst(Op::Cvt(Cvt {
                to,
                from,
                rnd,
                sat,
                ftz,
                relu,
            }));
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), from)?;
            inst
        }
        "cvta" => {
            let to = m.take("to");
            let spaces = m.take_spaces();
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            let [space] = spaces[..] else {
                return invalid("`cvta` needs one state space");
            };
            one_type(&types, full)?;
            let mut inst = base_inst(Op::Cvta(
                space,
                if to {
                    CvtaDir::FromGeneric
                } else {
                    CvtaDir::ToGeneric
                },
            ));
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::U64)?;
            inst
        }
        "mapa" | "getctarank" => {
            let spaces = m.take_spaces();
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            one_type(&types, full)?;
            let generic = spaces.is_empty();
            let mut inst = base_inst(if op == "mapa" {
                Op::Mapa { generic }
            } else {
                Op::Getctarank { generic }
            });
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::U64)?;
            if op == "mapa" {
                inst.b = b.src(o(2), Ty::U32)?;
            }
            inst
        }
        "isspacep" => {
            let spaces = m.take_spaces();
            m.finish().map_err(unsup)?;
            let [space] = spaces[..] else {
                return invalid("`isspacep` needs one state space");
            };
            let mut inst = base_inst(Op::Isspacep(space));
            inst.d = b.dst(o(0))?;
            inst.a = b.src(o(1), Ty::U64)?;
            inst
        }
        "ld" | "ldu" | "st" => return super::inst_memory::load_store(b, &mut m, op, ops),
        "atom" | "red" => return super::inst_memory::atomic(b, &mut m, op, ops),
        "fence" | "membar" => {
            super::inst_sync::fence(&mut m, op)?;
            base_inst(Op::Nop)
        }
        "prefetch" | "prefetchu" | "nanosleep" | "pmevent" | "discard" | "applypriority" => {
            base_inst(Op::Nop)
        }
        "createpolicy" => {
            // A cache policy is an opaque 64-bit value that only cache
            // hints read, and they change nothing here: it is 0.
            let mut inst = base_inst(Op::Mov);
            inst.d = b.dst(o(0))?;
            inst.a = b.c(0)?;
            inst
        }
        "bra" | "brx" => {
            if op == "brx" {
                return unsupported("indirect branches");
            }
            m.take("uni");
            m.finish().map_err(unsup)?;
            let Some(Operand::Name(label)) = o(0) else {
                return invalid("`bra` needs a label");
            };
            let Some(Binding::Label(pc)) = b.scopes.lookup(label) else {
                return invalid(format!("unknown label `{label}`"));
            };
            let mut inst = base_inst(Op::Bra);
            inst.off = i64::from(pc);
            inst
        }
        "call" => return super::inst_control::call(b, &mut m, ops),
        "ret" | "exit" | "trap" | "brkpt" => {
            m.take("uni");
            m.finish().map_err(unsup)?;
            base_inst(match op {
                "ret" => Op::Ret,
                "exit" => Op::Exit,
                _ => Op::Trap,
            })
        }
        "bar" | "barrier" => return super::inst_control::barrier(b, &mut m, ops),
        "wgmma" => return super::inst_tensor::wgmma(b, &mut m, ops),
        "setmaxnreg" => return super::inst_tensor::setmaxnreg(b, &mut m, ops),
        "ldmatrix" | "stmatrix" => return super::inst_tensor::matrix(b, &mut m, op, ops),
        "mbarrier" => return super::inst_sync::mbarrier(b, &mut m, ops),
        "cp" => return super::inst_sync::copy(b, &mut m, ops),
        "match" => return super::inst_sync::match_sync(b, &mut m, ops),
        "shfl" | "vote" | "activemask" | "elect" | "redux" => {
            return super::inst_sync::warp(b, &mut m, op, ops)
        }
        _ => return unsupported(format!("the opcode `{op}`")),
    };
    Ok(inst)
}
