//! PTX special registers. Each has a slot of the register file right after
//! slot 0, filled when a thread starts; only the clocks change while it
//! runs (they are read by [`super::ops::Op::Clock`] instead).

/// The special registers in slot order (slot = index + 1).
pub const SPECIALS: [&str; 41] = [
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

/// The slot of a special register, if `name` is one.
pub fn slot(name: &str) -> Option<u32> {
    SPECIALS
        .iter()
        .position(|s| *s == name)
        .map(|i| i as u32 + 1)
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
    /// The CTA's static shared memory as the simulator lays it out.
    pub smem: u32,
    /// The launch's dynamic shared memory (`%dynamic_smem_size`).
    pub dynamic_smem: u32,
}

/// Writes the special registers of a thread into its register file.
pub fn fill(regs: &mut [u64], ids: &ThreadIds) {
    let linear = ids.tid[0] + ids.ntid[0] * (ids.tid[1] + ids.ntid[1] * ids.tid[2]);
    let lane = linear % 32;
    let nthreads = ids.ntid[0] * ids.ntid[1] * ids.ntid[2];
    let rank = ids.cluster_ctaid[0]
        + ids.cluster_nctaid[0]
            * (ids.cluster_ctaid[1] + ids.cluster_nctaid[1] * ids.cluster_ctaid[2]);
    let values: [u64; SPECIALS.len()] = [
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
        u64::from(ids.smem) + u64::from(ids.dynamic_smem),
        ids.dynamic_smem.into(),
        u64::from(ids.smem) + u64::from(ids.dynamic_smem),
    ];
    for (i, v) in values.iter().enumerate() {
        if let Some(r) = regs.get_mut(i + 1) {
            *r = *v;
        }
    }
}
