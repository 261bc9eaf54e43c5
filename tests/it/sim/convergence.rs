//! Warp convergence (`tests/sim/convergence/*.cu`, nvcc's PTX): the lanes
//! that reach an `activemask` together execute it together, so
//! `__activemask()` and `coalesced_threads()` inside a branch give the
//! branch's lanes; lanes that exited, or that a 16-thread block lacks,
//! count as arrived at masks that name them. Each kernel runs clean under
//! in-order and random schedules and matches its Rust reference (each gave
//! a false S0009 before the model). Skipped without nvcc, like the other
//! `.cu` kernels of the tests (never in CI).

use crate::common::sim::*;
use crate::sim::broken::nvcc_lineinfo_ptx;
use kdsl::sim::{Outcome, Schedule};

/// Runs `tests/sim/convergence/NAME.cu` with its header's launch under
/// every schedule; each run must be clean. `None` without nvcc.
pub fn runs(name: &str) -> Option<Vec<Outcome>> {
    let nvcc = crate::common::ptxas::require_nvcc()?;
    let path = repo_root().join("tests/sim/convergence").join(name);
    let text = std::fs::read_to_string(&path).expect("readable");
    let ptx = nvcc_lineinfo_ptx(&nvcc, &path).expect("nvcc compiles it");
    let k = ptx_str(&format!("tests/sim/convergence/{name}.ptx"), &ptx).expect("loads");
    let launch = header_launch(&text, &k.program);
    let mut out = Vec::new();
    for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
        let o = run_clean_with(&k, &launch, schedule, 10_000_000);
        assert!(!o.faulted, "{name} under {schedule:?}");
        out.push(o);
    }
    Some(out)
}

#[test]
fn activemask_inside_a_branch_gives_the_branch_lanes() {
    let Some(outs) = runs("activemask_branch.cu") else {
        return;
    };
    let mut want = vec![0u32; 128];
    for i in 0..64u32 {
        if i & 1 == 1 {
            want[i as usize] = (i ^ 2) * 1000 + 16;
            want[64 + i as usize] = 0xAAAA_AAAA;
        } else {
            want[64 + i as usize] = u32::MAX;
        }
    }
    for o in outs {
        assert_eq!(as_u32(&o.arrays[1]), want);
    }
}

#[test]
fn coalesced_threads_aggregate_an_atomic() {
    let Some(outs) = runs("coalesced_agg.cu") else {
        return;
    };
    let odd: Vec<i32> = (0..100).filter(|i| i % 2 == 1).collect();
    for o in outs {
        assert_eq!(as_i32(&o.arrays[1]), vec![odd.len() as i32]);
        let out = as_i32(&o.arrays[2]);
        let mut got = out[..odd.len()].to_vec();
        got.sort_unstable();
        assert_eq!(got, odd);
        assert!(out[odd.len()..].iter().all(|&v| v == -1), "{out:?}");
    }
}

#[test]
fn a_full_mask_in_a_16_thread_block() {
    let Some(outs) = runs("block16_full_mask.cu") else {
        return;
    };
    let want: Vec<u32> = (0..48u32)
        .map(|i| {
            let b = i / 16;
            let sum: u32 = (16 * b..16 * b + 16).sum();
            sum * 65536 + 0xAAAA
        })
        .collect();
    for o in outs {
        assert_eq!(as_u32(&o.arrays[1]), want);
    }
}

#[test]
fn masks_naming_exited_lanes() {
    let Some(outs) = runs("exited_lanes.cu") else {
        return;
    };
    let n = 90u32;
    let want: Vec<u32> = (0..100u32)
        .map(|i| {
            if i >= n {
                return 0;
            }
            let w = i / 32 * 32;
            let live = w..(w + 32).min(n);
            let big = live.clone().filter(|&v| v >= 80).count() as u32;
            let sum: u32 = live.sum();
            w.wrapping_add(big * 10000)
                .wrapping_add(sum.wrapping_mul(100_000))
        })
        .collect();
    for o in outs {
        assert_eq!(as_u32(&o.arrays[1]), want);
    }
}
