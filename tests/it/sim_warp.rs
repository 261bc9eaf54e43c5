//! The warp-synchronous built-ins with lane masks (`shfl_*`, `ballot`,
//! `any`, `all` with a mask, `elect_one`, `active_mask`, `lane_mask_*`,
//! `sync_warp`) run in the simulator on every target form the writer has
//! (`elect.sync` on sm_90, a ballot before it), with the passes on and off
//! and under random schedules, against a Rust reference. Lanes that sync on
//! different masks at different places meet only their own mask's lanes
//! (the PTX ISA's rule), so the divergent part does not deadlock.

use crate::sim_support::*;
use kdsl::opt::Passes;
use kdsl::sim::Schedule;
use kdsl::target::Target;
use kdsl::Options;
use std::path::Path;

const FILE: &str = "tests/valid/warp_masks.kdsl";

fn input() -> Vec<u32> {
    // Even and odd values, one 7 in warp 0 only, all below 1000.
    let mut x: Vec<u32> = (0..64u32).map(|i| (i * 37 + 11) % 997).collect();
    x[5] = 7;
    x
}

/// What `tests/valid/warp_masks.kdsl` writes, lane by lane.
fn reference(x: &[u32]) -> Vec<u32> {
    let mut out = vec![0u32; 197];
    for w in 0..2usize {
        let v = &x[32 * w..32 * w + 32];
        let low = 0..16usize;
        let ballot = low
            .clone()
            .filter(|&l| v[l].is_multiple_of(2))
            .fold(0u32, |b, l| b | 1 << l);
        out[64 + w] = out[64 + w].wrapping_add(ballot);
        out[66 + w] += 1;
        for l in 0..32usize {
            let mut r = v[(l + 1).min(31)];
            if low.contains(&l) {
                let up = if l >= 2 { v[l - 2] } else { v[l] };
                r = r
                    .wrapping_add(v[l ^ 1].wrapping_mul(1000))
                    .wrapping_add(up)
                    .wrapping_add(v[3]);
            }
            out[32 * w + l] = r;
            out[68 + 32 * w + l] = 1 << l;
            out[132 + 32 * w + l] = u32::MAX;
        }
        if v.contains(&7) && v.iter().all(|&e| e < 1000) {
            out[196] += 32;
        }
    }
    out
}

#[test]
fn warp_builtins_with_masks_match_the_reference() {
    let x = input();
    assert!(x[..32].contains(&7) && !x[32..].contains(&7), "{x:?}");
    let want = reference(&x);
    for target in [Target::Sm90, Target::Sm80] {
        for passes in [Passes::all(), Passes::none()] {
            let opts = Options {
                target,
                passes: passes.clone(),
                ..Options::default()
            };
            let l = kdsl_file_with(Path::new(FILE), &opts);
            for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(4)] {
                let launch = launch(
                    "warp_masks",
                    [1, 1, 1],
                    [64, 1, 1],
                    [1, 1, 1],
                    vec![u32s("x", &x), u32s("out", &[0; 197])],
                );
                let o = run_with(&l, &launch, schedule, 10_000_000);
                assert!(
                    o.reports.is_empty(),
                    "{target:?} {schedule:?}:\n{}",
                    rendered(&l, &o)
                );
                let got = as_u32(&o.arrays[1]);
                assert_eq!(got, want, "{target:?} {passes:?} {schedule:?}");
            }
        }
    }
}

/// Lanes that name each other in their masks but execute different kinds
/// of warp-synchronous instruction never meet: the simulator reports the
/// deadlock at both places.
#[test]
fn lanes_at_different_warp_instructions_deadlock() {
    let src = "kernel split(out: global mut [u32]) block(32) {
    if lane_id < 16 {
        sync_warp();
    } else {
        out[lane_id] = ballot(true);
    }
}
";
    let l = kdsl_str_with("split.kdsl", src, &Options::default());
    let launch = launch(
        "split",
        [1, 1, 1],
        [32, 1, 1],
        [1, 1, 1],
        vec![u32s("out", &[0; 32])],
    );
    let o = run_with(&l, &launch, Schedule::InOrder, 1_000_000);
    let text = rendered(&l, &o);
    assert!(text.contains("error[S0001]"), "{text}");
    assert!(text.contains("split.kdsl:3:9"), "{text}");
    assert_eq!(text.matches("16 threads wait here").count(), 2, "{text}");
}
