//! Hopper's warpgroup instructions and their companions: `wgmma` (fence,
//! mma_async, commit_group, wait_group), `setmaxnreg`, `ldmatrix` and
//! `stmatrix`. The forms ptxas 13.5 rejects (a shape, a type combination,
//! a register count or an immediate it does not take) are load errors
//! here too (`hopper.md` §4.1).

use super::inst::{base_inst, invalid, unsup, unsupported, R};
use super::mods::Mods;
use super::ops::*;
use super::Builder;
use crate::sim::ptx::ast::{Imm, Operand};

fn imm(op: Option<&Operand>) -> Option<i64> {
    match op {
        Some(Operand::Imm(Imm::Int(v))) => Some(*v as i64),
        _ => None,
    }
}

fn in_type(word: &str) -> Option<WgIn> {
    Some(match word {
        "f16" => WgIn::F16,
        "bf16" => WgIn::BF16,
        "tf32" => WgIn::TF32,
        "e4m3" => WgIn::E4M3,
        "e5m2" => WgIn::E5M2,
        "s8" => WgIn::S8,
        "u8" => WgIn::U8,
        _ => return None,
    })
}

/// `.sync` (required) and `.aligned` (optional: ptxas accepts its absence).
fn sync_aligned(m: &mut Mods, what: &str) -> R<()> {
    if !m.take("sync") {
        return invalid(format!("`{what}` needs `.sync`"));
    }
    m.take("aligned");
    Ok(())
}

pub fn wgmma(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let action = m.take_any(&["fence", "commit_group", "wait_group", "mma_async"]);
    sync_aligned(m, "wgmma")?;
    match action {
        Some("fence") => {
            m.finish().map_err(unsup)?;
            // Orders register accesses against the asynchronous proxy; the
            // simulator's wgmma reads its registers at the issue, and checks
            // that a fence separates them from ordinary accesses (S0028).
            Ok(base_inst(Op::WgmmaFence))
        }
        Some("commit_group") => {
            m.finish().map_err(unsup)?;
            Ok(b.sync(SyncOp::WgmmaCommit))
        }
        Some("wait_group") => {
            m.finish().map_err(unsup)?;
            let Some(n) = imm(ops.first()).filter(|n| *n >= 0) else {
                return invalid("`wgmma.wait_group` takes a non-negative immediate");
            };
            // ptxas clamps the count to 7 (`WARPGROUP.DEPBAR.LE gsb0, 0x7`).
            Ok(b.sync(SyncOp::WgmmaWait { n: n.min(7) as u32 }))
        }
        Some(_) => mma_async(b, m, ops),
        None => unsupported("this `wgmma` instruction"),
    }
}

fn mma_async(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    // The shape word `m64nNkK`.
    let shape = m
        .words()
        .iter()
        .find(|w| w.starts_with("m64n"))
        .map(|w| w.to_string());
    let Some(shape) = shape else {
        return invalid("`wgmma.mma_async` needs its shape (`.m64nNkK`)");
    };
    m.drop_all(&[shape.as_str()]);
    let (n, k) = shape
        .strip_prefix("m64n")
        .and_then(|r| r.split_once('k'))
        .and_then(|(n, k)| Some((n.parse::<u32>().ok()?, k.parse::<u32>().ok()?)))
        .ok_or((
            super::LoadErrorKind::Invalid,
            format!("unknown shape `.{shape}`"),
        ))?;
    let satfinite = m.take("satfinite");
    let words: Vec<String> = m.words().iter().map(|w| w.to_string()).collect();
    let [d, a, bty] = words.as_slice() else {
        return invalid("`wgmma.mma_async` needs three types: `.dtype.atype.btype`");
    };
    let out = match d.as_str() {
        "f32" => WgOut::F32,
        "f16" => WgOut::F16,
        "s32" => WgOut::S32,
        _ => return invalid(format!("`.{d}` is not an accumulator type of wgmma")),
    };
    let (Some(a_ty), Some(b_ty)) = (in_type(a), in_type(bty)) else {
        return invalid(format!("`.{a}.{bty}` are not input types of wgmma"));
    };
    m.clear();
    // The type combinations and their K (PTX ISA §9.7.15.5.1).
    let kk = match (out, a_ty, b_ty) {
        (WgOut::F32 | WgOut::F16, WgIn::F16, WgIn::F16) | (WgOut::F32, WgIn::BF16, WgIn::BF16) => {
            16
        }
        (WgOut::F32, WgIn::TF32, WgIn::TF32) => 8,
        (WgOut::F32 | WgOut::F16, WgIn::E4M3 | WgIn::E5M2, WgIn::E4M3 | WgIn::E5M2) => 32,
        (WgOut::S32, WgIn::S8 | WgIn::U8, WgIn::S8 | WgIn::U8) => 32,
        _ => {
            return invalid(format!(
                "`.{d}.{a}.{bty}` is not a type combination of wgmma"
            ))
        }
    };
    if k != kk {
        return invalid(format!(
            "illegal shape `.{shape}`: `.{a}` inputs take K = {kk}"
        ));
    }
    let int = a_ty.is_int();
    let n_ok = if int {
        matches!(n, 8 | 16 | 24) || (32..=256).contains(&n) && n % 16 == 0
    } else {
        (8..=256).contains(&n) && n % 8 == 0
    };
    if !n_ok {
        return invalid(format!("illegal shape `.{shape}`"));
    }
    if satfinite && !int {
        return invalid("`.satfinite` is for integer wgmma");
    }
    let nd = if out == WgOut::F16 { n / 4 } else { n / 2 };
    let Some(Operand::Vector(dregs)) = ops.first() else {
        return invalid("the accumulators are a vector `{...}`");
    };
    if dregs.len() != nd as usize {
        return invalid(format!(
            "`.{shape}.{d}` takes {nd} accumulator registers, not {}",
            dregs.len()
        ));
    }
    let mut slots = Vec::new();
    for r in dregs {
        slots.push(b.dst(Some(r))?);
    }
    let d_list = b.list(slots);
    let (a_op, rs) = match ops.get(1) {
        Some(Operand::Vector(regs)) => {
            if regs.len() != 4 {
                return invalid("the A fragment is 4 registers");
            }
            let mut slots = Vec::new();
            for r in regs {
                slots.push(b.src(Some(r), Ty::U32)?);
            }
            (WgA::Regs(b.list(slots)), true)
        }
        other => (WgA::Desc(b.src(other, Ty::U64)?), false),
    };
    let b_desc = b.src(ops.get(2), Ty::U64)?;
    let scale_d = match ops.get(3) {
        Some(Operand::Not(p)) => (b.name_value(p, 0)?, true),
        Some(Operand::Imm(Imm::Int(v))) if *v <= 1 => (b.c(*v)?, false),
        Some(Operand::Name(p)) => (b.name_value(p, 0)?, false),
        _ => return invalid("`scale-d` is a predicate or 0 or 1"),
    };
    // The immediates after scale-d: scale-a, scale-b (floats), then
    // trans-a (SS only) and trans-b for f16/bf16.
    let trans = matches!(a_ty, WgIn::F16 | WgIn::BF16);
    let want = match (int, trans, rs) {
        (true, _, _) => 0,
        (false, false, _) => 2,
        (false, true, false) => 4,
        (false, true, true) => 3,
    };
    let rest = ops.get(4..).unwrap_or(&[]);
    if rest.len() != want {
        return invalid(format!(
            "this form takes {want} immediates after `scale-d`, not {}",
            rest.len()
        ));
    }
    let mut imms = Vec::new();
    for op in rest {
        let Some(v) = imm(Some(op)) else {
            return invalid("`imm-scale` and `imm-trans` are immediates");
        };
        imms.push(v);
    }
    let scale = |v: Option<&i64>| match v {
        Some(1) | None => Ok(false),
        Some(-1) => Ok(true),
        Some(v) => invalid(format!("unexpected value '{v}', expected to be -1 or 1")),
    };
    let flag = |v: Option<&i64>| match v {
        Some(0) | None => Ok(false),
        Some(1) => Ok(true),
        Some(v) => invalid(format!("unexpected value '{v}', expected to be 0 or 1")),
    };
    let (trans_a, trans_b) = match (trans, rs) {
        (true, false) => (flag(imms.get(2))?, flag(imms.get(3))?),
        (true, true) => (false, flag(imms.get(2))?),
        _ => (false, false),
    };
    let op = Wgmma {
        n,
        k,
        out,
        a_ty,
        b_ty,
        satfinite,
        d: d_list,
        nd,
        a: a_op,
        b: b_desc,
        scale_d,
        neg_a: scale(imms.first())?,
        neg_b: scale(imms.get(1))?,
        trans_a,
        trans_b,
    };
    Ok(b.sync(SyncOp::Wgmma(Box::new(op))))
}

pub fn setmaxnreg(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let dir = m.take_any(&["inc", "dec"]);
    sync_aligned(m, "setmaxnreg")?;
    if !m.take("u32") {
        return invalid("`setmaxnreg` is `.u32`");
    }
    m.finish().map_err(unsup)?;
    let Some(dir) = dir else {
        return invalid("`setmaxnreg` needs `.inc` or `.dec`");
    };
    let Some(n) = imm(ops.first()) else {
        return invalid("`setmaxnreg` takes an immediate register count");
    };
    if !(24..=256).contains(&n) {
        return invalid(format!(
            "value '{n}' out of range, expected to be in range [24..256]"
        ));
    }
    if n % 8 != 0 {
        return invalid(format!(
            "unexpected value '{n}', expected to be multiple of 8"
        ));
    }
    Ok(b.sync(SyncOp::SetMaxNreg {
        inc: dir == "inc",
        n: n as u32,
    }))
}

/// `ldmatrix`/`stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared{::cta}.b16`.
pub fn matrix(b: &mut Builder, m: &mut Mods, opcode: &str, ops: &[Operand]) -> R<Inst> {
    sync_aligned(m, opcode)?;
    if !m.take("m8n8") {
        return unsupported(format!("`{opcode}` shapes other than `.m8n8`"));
    }
    let num = match m.take_any(&["x1", "x2", "x4"]) {
        Some("x1") => 1,
        Some("x2") => 2,
        Some(_) => 4,
        None => return invalid(format!("`{opcode}` needs `.x1`, `.x2` or `.x4`")),
    };
    let trans = m.take("trans");
    let spaces = m.take_spaces();
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    if types != [Ty::U16] {
        return unsupported(format!("`{opcode}` of elements other than `.b16`"));
    }
    if !matches!(spaces.as_slice(), [] | [Space::Shared]) {
        return invalid(format!("`{opcode}` accesses `.shared`"));
    }
    let store = opcode == "stmatrix";
    let (addr_op, regs_op) = if store {
        (ops.first(), ops.get(1))
    } else {
        (ops.get(1), ops.first())
    };
    let Some(Operand::Vector(regs)) = regs_op else {
        return invalid(format!(
            "`{opcode}` takes its registers as a vector `{{...}}`"
        ));
    };
    if regs.len() != num as usize {
        return invalid(format!(
            "`.x{num}` takes {num} registers, not {}",
            regs.len()
        ));
    }
    let mut slots = Vec::new();
    for r in regs {
        slots.push(if store {
            b.src(Some(r), Ty::U32)?
        } else {
            b.dst(Some(r))?
        });
    }
    let regs = b.list(slots);
    let space = if spaces.is_empty() {
        Space::Generic
    } else {
        Space::Shared
    };
    let addr = b.sync_addr(addr_op, space)?;
    Ok(b.sync(SyncOp::Matrix {
        store,
        addr,
        num,
        trans,
        regs,
    }))
}
