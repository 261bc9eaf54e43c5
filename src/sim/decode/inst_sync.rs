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
    // ptxas's checks of immediates: an arrival count of 1 to 2^20 - 1.
    let count_at = match action {
        Some("init") => Some((1, "mbarrier.init", (1u64 << 20) - 1)),
        Some("arrive" | "arrive_drop") if !expect_tx => Some((2, "mbarrier.arrive", u64::MAX)),
        _ => None,
    };
    if let Some((k, name, max)) = count_at {
        if let Some(Operand::Imm(crate::sim::ptx::ast::Imm::Int(n))) = o(k) {
            if *n == 0 || *n > max {
                return invalid(format!(
                    "argument {k} of `{name}`: value {n} out of range, expected to be in range [1..{}]",
                    if max == u64::MAX { "4294967295".to_string() } else { max.to_string() }
                ));
            }
        }
    }
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
    let reduce = m.take("reduce");
    if !m.take("async") {
        return unsupported("the opcode `cp`");
    }
    if !m.take("bulk") {
        if reduce {
            return unsupported("`cp.reduce.async` without `.bulk`");
        }
        return super::inst_cp_async::cp_async(b, m, ops);
    }
    if m.take("tensor") {
        return tensor_copy(b, m, ops, reduce);
    }
    if reduce {
        return unsupported("bulk reductions without a tensor map (`cp.reduce.async.bulk`)");
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
    let multicast = m.take("multicast::cluster");
    // A cache policy operand changes nothing here.
    let hint = m.take("L2::cache_hint");
    if m.take("cp_mask") {
        return unsupported("byte masks on bulk copies");
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
        ) => {
            if multicast && (dst != Space::SharedCluster || src != Space::Global) {
                return invalid("`.multicast::cluster` copies from global to `.shared::cluster`");
            }
            let n = 4 + usize::from(multicast) + usize::from(hint);
            if ops.len() != n {
                return invalid(format!("this form takes {n} operands"));
            }
            SyncOp::BulkToShared {
                dst: b.sync_addr(o(0), dst)?,
                src: b.sync_addr(o(1), src)?,
                size: b.src(o(2), Ty::U32)?,
                mbar: b.sync_addr(o(3), Space::SharedCluster)?,
                mask: if multicast {
                    Some(b.src(o(4), Ty::U16)?)
                } else {
                    None
                },
            }
        }
        (&[Space::Global, Space::Shared], false, true) if !multicast => {
            let n = 3 + usize::from(hint);
            if ops.len() != n {
                return invalid(format!("this form takes {n} operands"));
            }
            SyncOp::BulkToGlobal {
                dst: b.sync_addr(o(0), Space::Global)?,
                src: b.sync_addr(o(1), Space::Shared)?,
                size: b.src(o(2), Ty::U32)?,
            }
        }
        _ => return unsupported("this form of `cp.async.bulk`"),
    };
    Ok(b.sync(op))
}

/// `[map, {c0, c1, ...}]`: the map's generic address and the list of the
/// coordinates (`.s32`, innermost first).
fn tensor_operand(b: &mut Builder, op: Option<&Operand>, rank: u8) -> R<(u32, u32)> {
    let Some(Operand::List(items)) = op else {
        return invalid("expected a tensor operand `[map, {c0, ...}]`");
    };
    let [map, Operand::Vector(coords)] = items.as_slice() else {
        return invalid("expected a tensor operand `[map, {c0, ...}]`");
    };
    if coords.len() != usize::from(rank) {
        return invalid(format!(
            "`.{rank}d` takes {rank} coordinates, not {}",
            coords.len()
        ));
    }
    let map = b.src(Some(map), Ty::U64)?;
    let mut slots = Vec::new();
    for c in coords {
        slots.push(b.src(Some(c), Ty::S32)?);
    }
    Ok((map, b.list(slots)))
}

/// `cp.async.bulk.tensor` (tile mode: loads completing on an mbarrier,
/// optionally multicast; stores in bulk groups), `cp.reduce.async.bulk.tensor`
/// and `cp.async.bulk.prefetch.tensor` (no effect).
fn tensor_copy(b: &mut Builder, m: &mut Mods, ops: &[Operand], reduce: bool) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    let rank = match m.take_any(&["1d", "2d", "3d", "4d", "5d"]) {
        Some("1d") => 1,
        Some("2d") => 2,
        Some("3d") => 3,
        Some("4d") => 4,
        Some(_) => 5,
        None => return invalid("a tensor copy needs its dimension (`.1d` ... `.5d`)"),
    };
    if m.peek_any(&[
        "im2col",
        "im2col_no_offs",
        "tile::gather4",
        "tile::scatter4",
    ])
    .is_some()
    {
        return unsupported("tensor copies in im2col or gather/scatter mode");
    }
    m.take("tile");
    let hint = m.take("L2::cache_hint");
    if m.take("prefetch") {
        m.take("L2");
        let spaces = m.take_spaces();
        m.finish().map_err(unsup)?;
        if spaces != [Space::Global] {
            return invalid("`cp.async.bulk.prefetch.tensor` prefetches from `.global`");
        }
        tensor_operand(b, o(0), rank)?;
        return Ok(super::inst::base_inst(Op::Nop));
    }
    let mbar = m.take("mbarrier::complete_tx::bytes");
    let bulk_group = m.take("bulk_group");
    let multicast = m.take("multicast::cluster");
    let red = if reduce {
        Some(
            match m.take_any(&["add", "min", "max", "inc", "dec", "and", "or", "xor"]) {
                Some("add") => TensorRed::Add,
                Some("min") => TensorRed::Min,
                Some("max") => TensorRed::Max,
                Some("inc") => TensorRed::Inc,
                Some("dec") => TensorRed::Dec,
                Some("and") => TensorRed::And,
                Some("or") => TensorRed::Or,
                Some(_) => TensorRed::Xor,
                None => return invalid("`cp.reduce.async.bulk.tensor` needs its operation"),
            },
        )
    } else {
        None
    };
    let spaces = m.take_spaces();
    m.finish().map_err(unsup)?;
    let op = match (spaces.as_slice(), mbar, bulk_group) {
        (&[Space::SharedCluster | Space::Shared, Space::Global], true, false) if !reduce => {
            let n = 3 + usize::from(multicast) + usize::from(hint);
            if ops.len() != n {
                return invalid(format!("this form takes {n} operands"));
            }
            let (map, coords) = tensor_operand(b, o(1), rank)?;
            SyncOp::TensorLoad {
                dst: b.sync_addr(o(0), Space::SharedCluster)?,
                map,
                coords,
                rank,
                mbar: b.sync_addr(o(2), Space::SharedCluster)?,
                mask: if multicast {
                    Some(b.src(o(3), Ty::U16)?)
                } else {
                    None
                },
            }
        }
        (&[Space::Global, Space::Shared], false, true) if !multicast => {
            let n = 2 + usize::from(hint);
            if ops.len() != n {
                return invalid(format!("this form takes {n} operands"));
            }
            let (map, coords) = tensor_operand(b, o(0), rank)?;
            SyncOp::TensorStore {
                map,
                coords,
                rank,
                src: b.sync_addr(o(1), Space::Shared)?,
                red,
            }
        }
        _ => return unsupported("this form of `cp.async.bulk.tensor`"),
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

/// `match.{any,all}.sync.{b32,b64} d{|p}, a, membermask` (PTX ISA
/// §9.7.13.9): a warp-synchronous rendezvous like `shfl.sync`.
pub fn match_sync(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    let o = |k: usize| ops.get(k);
    let all = match m.take_any(&["any", "all"]) {
        Some("all") => true,
        Some(_) => false,
        None => return invalid("`match` needs `.any` or `.all`"),
    };
    if !m.take("sync") {
        return invalid("`match` is `.sync`");
    }
    let word = m.peek_any(super::mods::TYPE_WORDS);
    let types = m.take_types();
    m.finish().map_err(unsup)?;
    one_type(&types, "match")?;
    let wide = match word {
        Some("b32") => false,
        Some("b64") => true,
        _ => return invalid("`match.sync` takes `.b32` or `.b64`"),
    };
    let ty = if wide { Ty::U64 } else { Ty::U32 };
    let (d, p) = match o(0) {
        Some(Operand::Pair(x, y)) if all => (dst_or_sink(b, x)?, dst_or_sink(b, y)?),
        Some(Operand::Pair(..)) => return invalid("`match.any` has no predicate destination"),
        other => (b.dst(other)?, NO_DEST),
    };
    let op = SyncOp::Match {
        all,
        wide,
        d,
        p,
        a: b.src(o(1), ty)?,
        mask: b.src(o(2), Ty::U32)?,
    };
    Ok(b.sync(op))
}
