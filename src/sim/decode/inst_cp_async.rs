//! Ampere's asynchronous copies, `cp.async` (PTX ISA §9.7.9.25): per
//! thread, global to shared memory, in groups (`commit_group`,
//! `wait_group`, `wait_all`) or completing on an mbarrier
//! (`cp.async.mbarrier.arrive`). Run by `machine/cp_async.rs`.

use super::inst::{invalid, unsup, unsupported, R};
use super::mods::Mods;
use super::ops::*;
use super::Builder;
use crate::sim::ptx::ast::{Imm, Operand};

/// `cp.async...` after `cp.async` (not `.bulk`).
pub fn cp_async(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    if m.take("commit_group") {
        m.finish().map_err(unsup)?;
        return Ok(b.sync(SyncOp::CpAsyncCommit));
    }
    if m.take("wait_all") {
        m.finish().map_err(unsup)?;
        return Ok(b.sync(SyncOp::CpAsyncWait { n: None }));
    }
    if m.take("wait_group") {
        m.finish().map_err(unsup)?;
        let Some(Operand::Imm(Imm::Int(n))) = o(0) else {
            return invalid("`cp.async.wait_group` takes an immediate");
        };
        return Ok(b.sync(SyncOp::CpAsyncWait {
            n: Some(u32::try_from(*n).unwrap_or(u32::MAX)),
        }));
    }
    if m.take("mbarrier") {
        if !m.take("arrive") {
            return invalid("`cp.async.mbarrier` is `.arrive`");
        }
        let noinc = m.take("noinc");
        let spaces = m.take_spaces();
        let types = m.take_types();
        m.finish().map_err(unsup)?;
        if types != [Ty::U64] {
            return invalid("`cp.async.mbarrier.arrive` is `.b64`");
        }
        let space = match spaces[..] {
            [] => Space::Generic,
            [Space::Shared] => Space::Shared,
            _ => return invalid("the mbarrier of `cp.async.mbarrier.arrive` is in `.shared`"),
        };
        if ops.len() != 1 {
            return invalid("`cp.async.mbarrier.arrive` takes the mbarrier's address");
        }
        let mbar = b.sync_addr(o(0), space)?;
        return Ok(b.sync(SyncOp::CpAsyncArrive { mbar, noinc }));
    }
    let cg = match m.take_any(&["ca", "cg"]) {
        Some("cg") => true,
        Some(_) => false,
        None => return unsupported("this form of `cp.async`"),
    };
    let hint = m.take("L2::cache_hint");
    m.take_any(&["L2::64B", "L2::128B", "L2::256B"]);
    let spaces = m.take_spaces();
    m.finish().map_err(unsup)?;
    if !matches!(spaces[..], [Space::Shared, Space::Global]) {
        return invalid("`cp.async` copies `.shared{::cta}.global`");
    }
    let size = match o(2) {
        Some(Operand::Imm(Imm::Int(n))) if matches!(n, 4 | 8 | 16) => *n as u32,
        _ => return invalid("the copy size of `cp.async` is 4, 8 or 16"),
    };
    if cg && size != 16 {
        return invalid("`cp.async.cg` copies 16 bytes");
    }
    let n = 3 + usize::from(hint);
    let (src_size, ignore) = match ops.len() {
        len if len == n => (None, None),
        len if len == n + 1 => match o(3) {
            Some(Operand::Not(_)) => (None, Some(b.pred(o(3))?)),
            Some(Operand::Name(name)) if b.is_pred_register(name) => (None, Some(b.pred(o(3))?)),
            Some(Operand::Imm(Imm::Int(v))) if *v > u64::from(size) => {
                return invalid(format!(
                    "the source size {v} is larger than the copy size {size}"
                ))
            }
            other => (Some(b.src(other, Ty::U32)?), None),
        },
        _ => {
            return invalid(format!(
                "this form of `cp.async` takes {n} or {} operands",
                n + 1
            ))
        }
    };
    let op = SyncOp::CpAsync {
        dst: b.sync_addr(o(0), Space::Shared)?,
        src: b.sync_addr(o(1), Space::Global)?,
        size,
        src_size,
        ignore,
    };
    Ok(b.sync(op))
}
