//! `mov`, loads, stores and atomics.

use super::inst::{base_inst, invalid, is_clock, one_type, unsup, unsupported, R};
use super::mods::{Mods, CACHE, MEMORY_ORDER, SCOPES, SEMS, TYPE_WORDS};
use super::ops::*;
use super::{Builder, Wider};
use crate::sim::ptx::ast::Operand;

pub fn mov(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    if let Some(w) = m.peek_any(TYPE_WORDS) {
        if !matches!(ops.first(), Some(Operand::Vector(_)))
            && !matches!(ops.get(1), Some(Operand::Vector(_)))
        {
            b.check_operand(ops.first(), w, Wider::No, "mov")?;
            b.check_operand(ops.get(1), w, Wider::No, "mov")?;
        }
    }
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    let ty = one_type(&types, "mov")?;
    let o = |k: usize| ops.get(k);
    match (o(0), o(1)) {
        (Some(Operand::Vector(parts)), Some(src)) => {
            let n = parts.len() as u32;
            if n < 2 || ty.bits() % n != 0 {
                return invalid("bad vector unpack");
            }
            let mut slots = Vec::new();
            for p in parts {
                slots.push(b.dst(Some(p))?);
            }
            let mut inst = base_inst(Op::Unpack {
                bits: (ty.bits() / n) as u8,
            });
            inst.a = b.src(Some(src), ty)?;
            inst.c = n;
            inst.aux = b.list(slots);
            Ok(inst)
        }
        (Some(d), Some(Operand::Vector(parts))) => {
            let n = parts.len() as u32;
            if n < 2 || ty.bits() % n != 0 {
                return invalid("bad vector pack");
            }
            let part_ty = match ty.bits() / n {
                8 => Ty::U8,
                16 => Ty::U16,
                32 => Ty::U32,
                _ => return invalid("bad vector pack"),
            };
            let mut slots = Vec::new();
            for p in parts {
                slots.push(b.src(Some(p), part_ty)?);
            }
            let mut inst = base_inst(Op::Pack {
                bits: part_ty.bits() as u8,
            });
            inst.d = b.dst(Some(d))?;
            inst.c = n;
            inst.aux = b.list(slots);
            Ok(inst)
        }
        (Some(d), Some(Operand::Name(name)))
            if is_clock(name) && b.scopes.lookup(name).is_none() =>
        {
            // `c`: the destination's bits, and above them how far the
            // count is shifted (the `_hi` halves are its upper 32 bits).
            let shift = if name.ends_with("_hi") { 32 } else { 0 };
            let mut inst = base_inst(Op::Clock);
            inst.d = b.dst(Some(d))?;
            inst.c = ty.bits() | shift << 8;
            Ok(inst)
        }
        (d, s) => {
            let mut inst = base_inst(Op::Mov);
            inst.d = b.dst(d)?;
            inst.a = b.src(s, ty)?;
            Ok(inst)
        }
    }
}

/// `Inst::c` of a load with `.acquire` or `.relaxed` (a strong load, what
/// a spin-wait on a flag reads with): the in-order schedule moves on to
/// the next thread after it, so that a thread spinning on memory another
/// thread writes (cooperative groups' grid and multi-warp barriers) lets
/// the writer run.
pub const STRONG_LOAD: u32 = 1;

pub fn load_store(b: &mut Builder, m: &mut Mods, op: &str, ops: &[Operand]) -> R<Inst> {
    let strong = m.peek_any(&["acquire", "relaxed"]).is_some();
    m.drop_all(MEMORY_ORDER);
    m.drop_all(CACHE);
    let vec = m.take_vector();
    let spaces = m.take_spaces();
    let word = m.peek_any(TYPE_WORDS);
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    let ty = one_type(&types, op)?;
    if let Some(w) = word {
        let value = if op == "st" { ops.get(1) } else { ops.first() };
        b.check_operand(value, w, Wider::Any, if op == "ldu" { "ldu" } else { op })?;
    }
    let space = match spaces[..] {
        [] if op == "ldu" => Space::Global,
        [] => Space::Generic,
        [s] => s,
        _ => return invalid("several state spaces"),
    };
    if ty == Ty::Pred {
        return invalid("memory access of a predicate");
    }
    if vec > 4 {
        return unsupported("`.v8` accesses");
    }
    let (value_op, addr_op) = if op == "st" {
        (ops.get(1), ops.first())
    } else {
        (ops.first(), ops.get(1))
    };
    let (base, off, space) = b.addr(addr_op, space)?;
    let mut inst = base_inst(Op::Nop);
    inst.a = base;
    inst.off = off;
    let slots: Vec<u32> = match value_op {
        Some(Operand::Vector(parts)) => {
            if parts.len() != usize::from(vec) {
                return invalid("the vector operand does not match the `.vN` modifier");
            }
            let mut v = Vec::new();
            for p in parts {
                v.push(if op == "st" {
                    b.src(Some(p), ty)?
                } else {
                    b.dst(Some(p))?
                });
            }
            v
        }
        other if vec == 1 => vec![if op == "st" {
            b.src(other, ty)?
        } else {
            b.dst(other)?
        }],
        _ => return invalid("a `.vN` access needs a vector operand"),
    };
    if op == "st" {
        inst.op = Op::St { space, ty, vec };
        inst.b = slots.first().copied().unwrap_or(0);
    } else {
        inst.op = Op::Ld { space, ty, vec };
        inst.d = slots.first().copied().unwrap_or(NO_DEST);
        if strong {
            inst.c = STRONG_LOAD;
        }
    }
    if vec > 1 {
        inst.aux = b.list(slots);
    }
    Ok(inst)
}

/// The element types of each atomic operation, as ptxas 13.5 takes them
/// (`.and.u32` and `.inc.u64` are rejected; the simulator rejects them too
/// rather than run a program ptxas would not assemble).
fn atomic_types(op: AtomOp) -> &'static [&'static str] {
    match op {
        AtomOp::Add => &["u32", "s32", "u64", "f32", "f64", "f16", "bf16"],
        AtomOp::Min | AtomOp::Max => &["u32", "s32", "u64", "s64"],
        AtomOp::Inc | AtomOp::Dec => &["u32"],
        AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch => &["b32", "b64"],
        AtomOp::Cas => &["b16", "b32", "b64"],
    }
}

/// `atom{.sem}{.scope}{.space}.op.type` and `red{.sem}{.scope}...`: at
/// most one order (`red` has no acquire side) and one scope; the
/// simulator is sequentially consistent, so both change nothing in a run.
fn atomic_sem(m: &mut Mods, op: &str) -> R<()> {
    let (n, sem) = m.take_count(SEMS);
    if n > 1 {
        return invalid(format!("several memory orders on `{op}`"));
    }
    if op == "red" && matches!(sem, Some("acquire" | "acq_rel")) {
        return invalid(format!("`red` with order `.{}`", sem.unwrap_or("")));
    }
    let (n, _) = m.take_count(SCOPES);
    if n > 1 {
        return invalid(format!("several scopes on `{op}`"));
    }
    Ok(())
}

pub fn atomic(b: &mut Builder, m: &mut Mods, op: &str, ops: &[Operand]) -> R<Inst> {
    atomic_sem(m, op)?;
    m.take("noftz");
    if m.take_vector() != 1 {
        return unsupported("vector atomics");
    }
    let aop = match m.take_any(&[
        "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas",
    ]) {
        Some("add") => AtomOp::Add,
        Some("min") => AtomOp::Min,
        Some("max") => AtomOp::Max,
        Some("inc") => AtomOp::Inc,
        Some("dec") => AtomOp::Dec,
        Some("and") => AtomOp::And,
        Some("or") => AtomOp::Or,
        Some("xor") => AtomOp::Xor,
        Some("exch") => AtomOp::Exch,
        Some(_) => AtomOp::Cas,
        None => return invalid("missing the atomic operation"),
    };
    let spaces = m.take_spaces();
    let word = m.peek_any(TYPE_WORDS);
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    let ty = one_type(&types, op)?;
    if let Some(w) = word {
        if !atomic_types(aop).contains(&w) {
            return invalid(format!("`{op}.{}` does not take `.{w}`", aop.name()));
        }
    }
    let space = match spaces[..] {
        [] => Space::Generic,
        [s] => s,
        _ => return invalid("several state spaces"),
    };
    if !matches!(
        space,
        Space::Global | Space::Shared | Space::SharedCluster | Space::Generic
    ) {
        return invalid(format!("atomics in the {} space", space.name()));
    }
    if ty.is_float() && aop != AtomOp::Add && aop != AtomOp::Exch {
        return unsupported("float atomics other than `add`/`exch`");
    }
    let mut inst = base_inst(Op::Atom { space, op: aop, ty });
    let mut k = 0;
    if op == "atom" {
        inst.d = b.dst(ops.first())?;
        k = 1;
    }
    let (base, off, _) = b.addr(ops.get(k), space)?;
    inst.a = base;
    inst.off = off;
    inst.b = b.src(ops.get(k + 1), ty)?;
    if aop == AtomOp::Cas {
        inst.c = b.src(ops.get(k + 2), ty)?;
    }
    Ok(inst)
}
