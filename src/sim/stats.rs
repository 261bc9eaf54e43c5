//! `--stats`: what a run executed, by instruction class.

use super::decode::ops::{Op, Space, SyncOp};
use super::decode::Program;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    pub kernel: String,
    /// Instructions executed by every thread together (predicated-off ones
    /// included): the unit of `max_steps`.
    pub steps: u64,
    pub instructions: Classes,
    pub longest_thread: Option<LongestThread>,
    /// mbarrier waits that found their phase incomplete and had to block
    /// (or poll).
    pub blocking_mbarrier_waits: u64,
    pub clusters: u64,
    pub ctas: u64,
    pub threads: u64,
}

/// How `--jobs` ran the groups of a launch (not part of `--stats`, which
/// is the same for every `--jobs`): the groups whose speculative run on a
/// worker was merged, and those run on the machine itself — the first,
/// whose steps decide whether workers are worth their copies of memory,
/// every group when they are not, a group again after a conflict, or all
/// of the rest once most of a batch had to. Both 0 with `--jobs 1` (or a
/// launch of one group).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobStats {
    pub parallel: u64,
    pub serial: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Classes {
    /// Integer, float, logic, comparison, conversion and move instructions.
    pub arith: u64,
    pub memory: MemoryClasses,
    /// CTA barriers, cluster barriers and mbarrier operations.
    pub barrier: u64,
    /// Warp-synchronous instructions (`shfl`, `vote`, ...).
    pub warp: u64,
    /// Branches, calls, returns, exits.
    pub control: u64,
}

/// Loads, stores and atomics by state space. Generic accesses count in the
/// space they resolved to and, in total, in `generic`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemoryClasses {
    pub global: u64,
    pub shared: u64,
    /// Accesses through `.shared::cluster` addresses (distributed shared memory).
    pub shared_cluster: u64,
    pub local: u64,
    pub param: u64,
    #[serde(rename = "const")]
    pub constant: u64,
    pub generic: u64,
    /// Bulk copies issued (`cp.async.bulk`, tensor copies included) and
    /// their group operations.
    pub bulk: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LongestThread {
    pub cta: [u32; 3],
    pub thread: u32,
    pub instructions: u64,
}

/// Adds up the per-instruction execution counts by class.
pub fn classify(prog: &Program, counts: &[u64], generic: [u64; 4]) -> Classes {
    let mut c = Classes::default();
    for (inst, &n) in prog.code.iter().zip(counts) {
        if n == 0 {
            continue;
        }
        match inst.op {
            Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => {
                let m = &mut c.memory;
                match space {
                    Space::Global => m.global += n,
                    Space::Shared => m.shared += n,
                    Space::SharedCluster => m.shared_cluster += n,
                    Space::Local => m.local += n,
                    Space::Param | Space::FuncParam => m.param += n,
                    Space::Const => m.constant += n,
                    Space::Generic => m.generic += n,
                }
            }
            Op::Bra | Op::Call | Op::Ret | Op::Exit | Op::Trap => c.control += n,
            Op::Sync => match prog.syncs.get(inst.aux as usize) {
                Some(
                    SyncOp::BulkToShared { .. }
                    | SyncOp::BulkToGlobal { .. }
                    | SyncOp::TensorLoad { .. }
                    | SyncOp::TensorStore { .. }
                    | SyncOp::BulkCommit
                    | SyncOp::BulkWait { .. }
                    | SyncOp::CpAsync { .. }
                    | SyncOp::CpAsyncCommit
                    | SyncOp::CpAsyncWait { .. },
                ) => c.memory.bulk += n,
                Some(
                    SyncOp::Shfl { .. }
                    | SyncOp::Vote { .. }
                    | SyncOp::Activemask { .. }
                    | SyncOp::Elect { .. }
                    | SyncOp::Redux { .. }
                    | SyncOp::Match { .. }
                    | SyncOp::BarWarpSync { .. },
                ) => c.warp += n,
                _ => c.barrier += n,
            },
            _ => c.arith += n,
        }
    }
    let [g, s, l, p] = generic;
    c.memory.global += g;
    c.memory.shared += s;
    c.memory.local += l;
    c.memory.param += p;
    c
}
