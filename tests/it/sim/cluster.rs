//! Cluster synchronisation by construction, in the simulator: a kernel
//! that stores into a peer CTA's shared memory without any barrier group,
//! and a warp-specialised kernel whose roles each run the same
//! `cluster_sync()`s in their own branch (no W0320), both against a Rust
//! reference under random schedules.

use crate::common::sim::*;
use kdsl::launch::ArgValue;
use kdsl::sim::Schedule;

/// Compiles `src` (no diagnostic at all), runs kernel `name` on a grid
/// of one cluster of two CTAs of `threads` under several schedules, and
/// checks the last array against `want`.
fn runs_as(name: &str, src: &str, threads: u32, args: Vec<ArgValue>, want: &[u32]) {
    let c = kdsl::compile_str(name, src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let l = kdsl_str_with(name, src, &kdsl::Options::default());
    for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(8)] {
        let launch = launch(name, 2, threads, 2, args.clone());
        let o = run_with(&l, &launch, schedule, 10_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let got = o.arrays.last().map(as_u32);
        assert_eq!(got.as_deref(), Some(want), "{schedule:?}");
    }
}

const PEER: &str = "kernel peer(out: global mut [u32]) block(32) cluster(2) {
    shared s: [u32; 32];
    remote(s, 1 - cluster_rank)[thread_idx.x] = thread_idx.x + 100 * cluster_rank;
    cluster_sync();
    out[cluster_rank * 32 + thread_idx.x] = s[thread_idx.x];
}";

#[test]
fn remote_stores_without_barrier_groups() {
    // CTA r's array holds what its peer 1 - r stored.
    let want: Vec<u32> = (0..64u32).map(|i| (i % 32) + 100 * (1 - i / 32)).collect();
    runs_as("peer", PEER, 32, vec![u32s("out", &[0; 64])], &want);
}

const ROLES: &str = "kernel roles(x: global [u32], out: global mut [u32]) block(128) cluster(2) {
    shared tile: [u32; 128];
    if warp_id == 0 {
        tile[thread_idx.x] = x[cluster_rank * 32 + thread_idx.x];
        cluster_sync();
        cluster_sync();
    } else if warp_id < 3 {
        cluster_sync();
        out[cluster_rank * 128 + thread_idx.x] = remote(tile, 1 - cluster_rank)[thread_idx.x % 32] + 1;
        cluster_sync();
    } else {
        cluster_sync();
        cluster_sync();
        out[cluster_rank * 128 + thread_idx.x] = 7;
    }
}";

#[test]
fn every_role_runs_the_same_cluster_barriers() {
    let x: Vec<u32> = (0..64).map(|i| i * 3 + 1).collect();
    let mut want = vec![0u32; 256];
    for r in 0..2usize {
        for t in 32..96 {
            // Warps 1 and 2 read what the peer's warp 0 wrote.
            want[r * 128 + t] = x[(1 - r) * 32 + t % 32] + 1;
        }
        for t in 96..128 {
            want[r * 128 + t] = 7;
        }
    }
    runs_as(
        "roles",
        ROLES,
        128,
        vec![u32s("x", &x), u32s("out", &[0; 256])],
        &want,
    );
}
