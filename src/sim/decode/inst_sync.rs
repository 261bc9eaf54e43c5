//! The synchronising instructions: mbarriers, bulk copies and the
//! warp-synchronous operations. They decode to [`SyncOp`]s, executed by
//! the machine outside the interpreter's inner loop.

use super::inst::{invalid, one_type, unsup, unsupported, R};
use super::mods::{Mods, MEMORY_ORDER};
use super::ops::*;
use super::Builder;
use crate::sim::ptx::ast::Operand;

/// `fence{.sem}.scope`, `fence.proxy.async{.space}`,
/// `fence.mbarrier_init.release.cluster` and `membar.{cta,gl,sys}`: they
/// order memory, which the sequentially consistent simulator always is, so
/// they execute as nothing; any other form (`membar.cluster`, which PTX
/// lacks, or a fence the simulator does not know) is a load error.
pub fn fence(m: &mut Mods, op: &str) -> R<()> {
    let ok = if op == "membar" {
        matches!(m.words(), ["cta" | "gl" | "sys"])
    } else {
        matches!(
            m.words(),
            ["cta" | "cluster" | "gpu" | "sys"]
                | [
                    "acq_rel" | "sc" | "acquire" | "release",
                    "cta" | "cluster" | "gpu" | "sys"
                ]
                | ["proxy", "async"]
                | [
                    "proxy",
                    "async",
                    "shared::cta" | "shared::cluster" | "global"
                ]
                | ["mbarrier_init", "release", "cluster"]
        )
    };
    if !ok {
        return unsupported(format!("`{op}.{}`", m.words().join(".")));
    }
    m.clear();
    Ok(())
}

fn mbar_space(spaces: &[Space]) -> R<Space> {
    match spaces {
        [] => Ok(Space::Generic),
        [Space::Shared] => Ok(Space::Shared),
        [Space::SharedCluster] => Ok(Space::SharedCluster),
        _ => invalid("an mbarrier lives in shared memory"),
    }
}

/// A destination that may be `_`.
fn dst_or_sink(b: &mut Builder, name: &str) -> R<u32> {
    if name == "_" {
        Ok(NO_DEST)
    } else {
        b.dst(Some(&Operand::Name(name.to_string())))
    }
}

pub fn mbarrier(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    let action = m.take_any(&[
        "init",
        "inval",
        "arrive_drop",
        "arrive",
        "expect_tx",
        "complete_tx",
        "test_wait",
        "try_wait",
        "pending_count",
    ]);
    let expect_tx = m.take("expect_tx");
    let no_complete = m.take("noComplete");
    let parity = m.take("parity");
    m.drop_all(MEMORY_ORDER);
    let spaces = m.take_spaces();
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    if one_type(&types, "mbarrier")? != Ty::U64 {
        return invalid("an mbarrier operation is `.b64`");
    }
    let space = mbar_space(&spaces)?;
    let op = match action {
        Some("init") => SyncOp::MbarInit {
            addr: b.sync_addr(o(0), space)?,
            count: b.src(o(1), Ty::U32)?,
        },
        Some("inval") => SyncOp::MbarInval {
            addr: b.sync_addr(o(0), space)?,
        },
        Some(a @ ("arrive" | "arrive_drop")) => {
            let d = b.dst(o(0))?;
            let addr = b.sync_addr(o(1), space)?;
            let (count, tx) = if expect_tx {
                (None, Some(b.src(o(2), Ty::U32)?))
            } else {
                (o(2).map(|op| b.src(Some(op), Ty::U32)).transpose()?, None)
            };
            SyncOp::MbarArrive {
                addr,
                count,
                tx,
                kind: ArriveKind {
                    drop: a == "arrive_drop",
                    no_complete,
                },
                d,
            }
        }
        Some("expect_tx") => SyncOp::MbarExpectTx {
            addr: b.sync_addr(o(0), space)?,
            tx: b.src(o(1), Ty::U32)?,
        },
        Some("complete_tx") => SyncOp::MbarCompleteTx {
            addr: b.sync_addr(o(0), space)?,
            tx: b.src(o(1), Ty::U32)?,
        },
        Some(w @ ("test_wait" | "try_wait")) => {
            if space == Space::SharedCluster {
                return invalid("waiting on a remote mbarrier");
            }
            SyncOp::MbarWait {
                d: b.dst(o(0))?,
                addr: b.sync_addr(o(1), space)?,
                arg: b.src(o(2), if parity { Ty::U32 } else { Ty::U64 })?,
                parity,
                blocking: w == "try_wait",
            }
        }
        Some("pending_count") => SyncOp::MbarPendingCount {
            d: b.dst(o(0))?,
            state: b.src(o(1), Ty::U64)?,
        },
        _ => return unsupported("this mbarrier operation"),
    };
    Ok(b.sync(op))
}

pub fn copy(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    if !m.take("async") {
        return unsupported("the opcode `cp`");
    }
    if !m.take("bulk") {
        return unsupported("non-bulk `cp.async` (sm_80 asynchronous copies)");
    }
    if m.take("tensor") {
        return unsupported("tensor copies (`cp.async.bulk.tensor`)");
    }
    if m.take("commit_group") {
        m.finish().map_err(unsup)?;
        return Ok(b.sync(SyncOp::BulkCommit));
    }
    if m.take("wait_group") {
        m.take("read");
        m.finish().map_err(unsup)?;
        let Some(Operand::Imm(crate::sim::ptx::ast::Imm::Int(n))) = o(0) else {
            return invalid("`wait_group` takes an immediate");
        };
        return Ok(b.sync(SyncOp::BulkWait {
            n: u32::try_from(*n).unwrap_or(u32::MAX),
        }));
    }
    if m.take("prefetch") {
        m.take("L2");
        m.take_spaces();
        m.finish().map_err(unsup)?;
        return Ok(super::inst::base_inst(Op::Nop));
    }
    if m.take("multicast::cluster") {
        return unsupported("multicast bulk copies");
    }
    if m.take("L2::cache_hint") || m.take("cp_mask") {
        return unsupported("cache hints and byte masks on bulk copies");
    }
    let completion_mbar = m.take("mbarrier::complete_tx::bytes");
    let bulk_group = m.take("bulk_group");
    let spaces = m.take_spaces();
    m.finish().map_err(unsup)?;
    let op = match (spaces.as_slice(), completion_mbar, bulk_group) {
        (
            &[dst @ (Space::SharedCluster | Space::Shared), src @ (Space::Global | Space::Shared)],
            true,
            false,
        ) => SyncOp::BulkToShared {
            dst: b.sync_addr(o(0), dst)?,
            src: b.sync_addr(o(1), src)?,
            size: b.src(o(2), Ty::U32)?,
            mbar: b.sync_addr(o(3), Space::SharedCluster)?,
        },
        (&[Space::Global, Space::Shared], false, true) => SyncOp::BulkToGlobal {
            dst: b.sync_addr(o(0), Space::Global)?,
            src: b.sync_addr(o(1), Space::Shared)?,
            size: b.src(o(2), Ty::U32)?,
        },
        _ => return unsupported("this form of `cp.async.bulk`"),
    };
    Ok(b.sync(op))
}

pub fn warp(b: &mut Builder, m: &mut Mods, opcode: &str, ops: &[Operand]) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    if opcode != "activemask" && !m.take("sync") {
        return unsupported(format!("`{opcode}` without `.sync`"));
    }
    let op = match opcode {
        "shfl" => {
            let mode = match m.take_any(&["up", "down", "bfly", "idx"]) {
                Some("up") => ShflMode::Up,
                Some("down") => ShflMode::Down,
                Some("bfly") => ShflMode::Bfly,
                Some(_) => ShflMode::Idx,
                None => return invalid("`shfl` needs a mode"),
            };
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            if one_type(&types, "shfl")? != Ty::U32 {
                return invalid("`shfl` is `.b32`");
            }
            let (d, p) = match o(0) {
                Some(Operand::Pair(x, y)) => (dst_or_sink(b, x)?, dst_or_sink(b, y)?),
                other => (b.dst(other)?, NO_DEST),
            };
            SyncOp::Shfl {
                mode,
                d,
                p,
                a: b.src(o(1), Ty::U32)?,
                b: b.src(o(2), Ty::U32)?,
                c: b.src(o(3), Ty::U32)?,
                mask: b.src(o(4), Ty::U32)?,
            }
        }
        "vote" => {
            let mode = match m.take_any(&["all", "any", "uni", "ballot"]) {
                Some("all") => VoteMode::All,
                Some("any") => VoteMode::Any,
                Some("uni") => VoteMode::Uni,
                Some(_) => VoteMode::Ballot,
                None => return invalid("`vote` needs a mode"),
            };
            m.take_types();
            m.finish().map_err(unsup)?;
            let d = b.dst(o(0))?;
            let (a, negate) = b.pred(o(1))?;
            SyncOp::Vote {
                mode,
                d,
                a,
                negate,
                mask: b.src(o(2), Ty::U32)?,
            }
        }
        "activemask" => {
            m.take_types();
            m.finish().map_err(unsup)?;
            SyncOp::Activemask { d: b.dst(o(0))? }
        }
        "elect" => {
            m.finish().map_err(unsup)?;
            let (d, p) = match o(0) {
                Some(Operand::Pair(x, y)) => (dst_or_sink(b, x)?, dst_or_sink(b, y)?),
                other => (b.dst(other)?, NO_DEST),
            };
            SyncOp::Elect {
                d,
                p,
                mask: b.src(o(1), Ty::U32)?,
            }
        }
        _ => {
            let rop = match m.take_any(&["add", "min", "max", "and", "or", "xor"]) {
                Some("add") => ReduxOp::Add,
                Some("min") => ReduxOp::Min,
                Some("max") => ReduxOp::Max,
                Some("and") => ReduxOp::And,
                Some("or") => ReduxOp::Or,
                Some(_) => ReduxOp::Xor,
                None => return unsupported("this `redux.sync` operation"),
            };
            let types = m.take_types();
            m.finish().map_err(unsup)?;
            let ty = one_type(&types, "redux")?;
            if !matches!(ty, Ty::U32 | Ty::S32) {
                return unsupported("`redux.sync` on types other than 32-bit integers");
            }
            SyncOp::Redux {
                op: rop,
                ty,
                d: b.dst(o(0))?,
                a: b.src(o(1), ty)?,
                mask: b.src(o(2), Ty::U32)?,
            }
        }
    };
    Ok(b.sync(op))
}
