//! PTX special registers. Each has a slot of the register file right after
//! slot 0, filled when a thread starts; only the clocks change while it
//! runs (they are read by [`super::ops::Op::Clock`] instead). The list is
//! every special register of the PTX ISA but the clocks: what the CUDA
//! headers read (`cooperative_groups`' `%envreg1`/`%envreg2` and
//! `%reserved_smem_offset_1`, `cuda_device_runtime_api.h`'s
//! `%current_graph_exec`, ...) among them.

/// The special registers in slot order (slot = index + 1): the 41 below,
/// then `%envreg0..31`, the performance counters `%pm0..7` and
/// `%pm0_64..%pm7_64` ([`EXTRA`]).
const BASE: [&str; 41] = [
    "%tid.x",
    "%tid.y",
    "%tid.z",
    "%ntid.x",
    "%ntid.y",
    "%ntid.z",
    "%ctaid.x",
    "%ctaid.y",
    "%ctaid.z",
    "%nctaid.x",
    "%nctaid.y",
    "%nctaid.z",
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%lanemask_eq",
    "%lanemask_lt",
    "%lanemask_le",
    "%lanemask_gt",
    "%lanemask_ge",
    "%cluster_ctaid.x",
    "%cluster_ctaid.y",
    "%cluster_ctaid.z",
    "%cluster_nctaid.x",
    "%cluster_nctaid.y",
    "%cluster_nctaid.z",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%clusterid.x",
    "%clusterid.y",
    "%clusterid.z",
    "%nclusterid.x",
    "%nclusterid.y",
    "%nclusterid.z",
    "%is_explicit_cluster",
    "%smid",
    "%nsmid",
    "%gridid",
    "%total_smem_size",
    "%dynamic_smem_size",
    "%aggr_smem_size",
];

/// The special registers after [`BASE`] that are not numbered families:
/// the reserved shared memory (sm_80+: the first KiB of a CTA's shared
/// memory, `[begin, end)`, `cap` bytes; `_0` and `_1` are offsets in it,
/// `_1` where cooperative groups keep their multi-warp scratch) and the
/// CUDA graph being executed (none: 0).
const NAMED: [&str; 6] = [
    "%reserved_smem_offset_begin",
    "%reserved_smem_offset_end",
    "%reserved_smem_offset_cap",
    "%reserved_smem_offset_0",
    "%reserved_smem_offset_1",
    "%current_graph_exec",
];

/// The numbered families after [`NAMED`]: name prefix, count, suffix.
const FAMILIES: [(&str, u32, &str); 3] = [("%envreg", 32, ""), ("%pm", 8, ""), ("%pm", 8, "_64")];

/// How many special registers there are (the slots after slot 0).
pub const COUNT: usize = BASE.len() + NAMED.len() + 32 + 8 + 8;

/// Where the reserved shared memory ends and `%reserved_smem_offset_1`
/// points: the simulator's choices (ptxas reads both from the driver's
/// constant bank; it compiles `_begin` and `_0` to 0 and `_cap` to 1024).
pub const RESERVED_END: u32 = 1024;
/// The name of the variable the decoder makes of the reserved shared
/// memory (for bounds and reports).
pub const RESERVED_NAME: &str = "(reserved shared memory)";
pub const RESERVED_OFFSET_1: u32 = 512;

/// The slot of a special register, if `name` is one.
pub fn slot(name: &str) -> Option<u32> {
    if let Some(i) = BASE.iter().position(|s| *s == name) {
        return Some(i as u32 + 1);
    }
    if let Some(i) = NAMED.iter().position(|s| *s == name) {
        return Some((BASE.len() + i) as u32 + 1);
    }
    let mut first = (BASE.len() + NAMED.len()) as u32 + 1;
    for (prefix, count, suffix) in FAMILIES {
        let number = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(suffix))
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .filter(|d| d.len() == 1 || !d.starts_with('0'))
            .and_then(|d| d.parse::<u32>().ok());
        if let Some(n) = number.filter(|&n| n < count) {
            return Some(first + n);
        }
        first += count;
    }
    None
}

/// The values of the special registers of one thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadIds {
    pub tid: [u32; 3],
    pub ntid: [u32; 3],
    pub ctaid: [u32; 3],
    pub nctaid: [u32; 3],
    pub cluster_ctaid: [u32; 3],
    pub cluster_nctaid: [u32; 3],
    pub clusterid: [u32; 3],
    pub nclusterid: [u32; 3],
    pub explicit_cluster: bool,
    /// The CTA's static shared memory as a GPU lays it out (the variables
    /// aligned one after another, without the simulator's red zones).
    pub smem: u32,
    /// The launch's dynamic shared memory (`%dynamic_smem_size`).
    pub dynamic_smem: u32,
    /// The grid workspace of a cooperative launch (`%envreg1` its high
    /// half, `%envreg2` its low half), 0 otherwise.
    pub grid_workspace: u64,
}

/// Writes the special registers of a thread into its register file.
pub fn fill(regs: &mut [u64], ids: &ThreadIds) {
    let linear = ids.tid[0] + ids.ntid[0] * (ids.tid[1] + ids.ntid[1] * ids.tid[2]);
    let lane = linear % 32;
    let nthreads = ids.ntid[0] * ids.ntid[1] * ids.ntid[2];
    let rank = ids.cluster_ctaid[0]
        + ids.cluster_nctaid[0]
            * (ids.cluster_ctaid[1] + ids.cluster_nctaid[1] * ids.cluster_ctaid[2]);
    // `%total_smem_size`: static and dynamic shared memory in whole
    // allocation units (128 bytes from sm_80 on); `%aggr_smem_size` adds
    // the reserved KiB (ptxas: SR_SMEMSZ, which includes it).
    let total = (u64::from(ids.smem) + u64::from(ids.dynamic_smem)).next_multiple_of(128);
    let aggr = total + u64::from(RESERVED_END);
    let values: [u64; BASE.len()] = [
        ids.tid[0].into(),
        ids.tid[1].into(),
        ids.tid[2].into(),
        ids.ntid[0].into(),
        ids.ntid[1].into(),
        ids.ntid[2].into(),
        ids.ctaid[0].into(),
        ids.ctaid[1].into(),
        ids.ctaid[2].into(),
        ids.nctaid[0].into(),
        ids.nctaid[1].into(),
        ids.nctaid[2].into(),
        lane.into(),
        (linear / 32).into(),
        nthreads.div_ceil(32).into(),
        1u64 << lane,
        (1u64 << lane) - 1,
        (1u64 << (lane + 1)) - 1,
        (!((1u64 << (lane + 1)) - 1)) & 0xffff_ffff,
        (!((1u64 << lane) - 1)) & 0xffff_ffff,
        ids.cluster_ctaid[0].into(),
        ids.cluster_ctaid[1].into(),
        ids.cluster_ctaid[2].into(),
        ids.cluster_nctaid[0].into(),
        ids.cluster_nctaid[1].into(),
        ids.cluster_nctaid[2].into(),
        rank.into(),
        (ids.cluster_nctaid[0] * ids.cluster_nctaid[1] * ids.cluster_nctaid[2]).into(),
        ids.clusterid[0].into(),
        ids.clusterid[1].into(),
        ids.clusterid[2].into(),
        ids.nclusterid[0].into(),
        ids.nclusterid[1].into(),
        ids.nclusterid[2].into(),
        u64::from(ids.explicit_cluster),
        0,
        1,
        0,
        total,
        ids.dynamic_smem.into(),
        aggr,
    ];
    let named: [u64; NAMED.len()] = [
        0,
        RESERVED_END.into(),
        RESERVED_END.into(),
        0,
        RESERVED_OFFSET_1.into(),
        0,
    ];
    let mut envreg = [0u64; 32];
    envreg[1] = ids.grid_workspace >> 32;
    envreg[2] = ids.grid_workspace & 0xffff_ffff;
    // Performance counters count nothing here.
    let pm = [0u64; 16];
    let all = values.iter().chain(&named).chain(&envreg).chain(&pm);
    for (i, v) in all.enumerate() {
        if let Some(r) = regs.get_mut(i + 1) {
            *r = *v;
        }
    }
}
