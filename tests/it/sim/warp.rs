//! The warp-synchronous built-ins with lane masks (`shfl_*`, `ballot`,
//! `any`, `all` with a mask, `elect_one`, `active_mask`, `lane_mask_*`,
//! `sync_warp`) run in the simulator on every target form the writer has
//! (`elect.sync` on sm_90, a ballot before it), with the passes on and off
//! and under random schedules, against a Rust reference. Lanes that sync on
//! different masks at different places meet only their own mask's lanes
//! (the PTX ISA's rule), so the divergent part does not deadlock.

use crate::common::assert_contains;
use crate::common::sim::*;
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
                    1,
                    64,
                    1,
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
    let launch = launch("split", 1, 32, 1, vec![u32s("out", &[0; 32])]);
    let o = run_with(&l, &launch, Schedule::InOrder, 1_000_000);
    let text = rendered(&l, &o);
    assert_contains(&text, &["error[S0001]", "split.kdsl:3:9"]);
    assert_eq!(text.matches("16 threads wait here").count(), 2, "{text}");
}

/// What `tests/valid/warp_reductions.kdsl` writes.
fn reductions_reference(x: &[u32], s: &[i32]) -> (Vec<u32>, Vec<i32>) {
    let (mut out, mut signed) = (vec![0u32; 256], vec![0i32; 192]);
    for w in 0..2usize {
        let lanes = 32 * w..32 * w + 32;
        let low = 32 * w..32 * w + 16;
        let (v, sv) = (&x[lanes.clone()], &s[lanes.clone()]);
        let add = v.iter().fold(0u32, |a, b| a.wrapping_add(*b));
        let (min, max) = (v.iter().min(), v.iter().max());
        let (and, or, xor) = v
            .iter()
            .fold((u32::MAX, 0, 0), |(a, o, x), b| (a & b, o | b, x ^ b));
        let sadd = sv.iter().fold(0i32, |a, b| a.wrapping_add(*b));
        let (smin, smax) = (sv.iter().min(), sv.iter().max());
        let sxor = sv.iter().fold(0i32, |a, b| a ^ b);
        let low_max = x[low.clone()].iter().max();
        let low_add = x[low.clone()].iter().fold(0u32, |a, b| a.wrapping_add(*b));
        let low_smin = s[low.clone()].iter().min();
        for i in lanes {
            out[i] = add;
            out[64 + i] = min.zip(max).map_or(0, |(a, b)| a ^ b);
            out[128 + i] = and | (or << 1) ^ xor;
            signed[i] = sadd.wrapping_add(smin.map_or(0, |m| m.wrapping_mul(3)));
            signed[64 + i] = smax.map_or(0, |m| m.wrapping_sub(sxor));
            if low.contains(&i) {
                out[192 + i] = low_max.map_or(0, |m| m.wrapping_add(low_add));
                signed[128 + i] = low_smin.copied().unwrap_or(0);
            }
        }
    }
    (out, signed)
}

/// The warp reductions against a Rust reference: whole warps and the low
/// half of each warp, on values that wrap and signed values of both signs,
/// with the passes on and off, in order and under random schedules.
#[test]
fn warp_reductions_match_the_reference() {
    let x: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 7))
        .collect();
    let s: Vec<i32> = (0..64i32).map(|i| (i - 20) * 1_000_003).collect();
    let (want, want_signed) = reductions_reference(&x, &s);
    for passes in [Passes::all(), Passes::none()] {
        let opts = Options {
            target: Target::Sm80,
            passes: passes.clone(),
            ..Options::default()
        };
        let l = kdsl_file_with(Path::new("tests/valid/warp_reductions.kdsl"), &opts);
        for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
            let s_bytes: Vec<u8> = s.iter().flat_map(|v| v.to_le_bytes()).collect();
            let launch = launch(
                "warp_reductions",
                1,
                64,
                1,
                vec![
                    u32s("x", &x),
                    array("s", kdsl::types::Scalar::I32, s_bytes),
                    u32s("out", &[0; 256]),
                    array("signed", kdsl::types::Scalar::I32, vec![0; 192 * 4]),
                ],
            );
            let o = run_with(&l, &launch, schedule, 10_000_000);
            assert!(o.reports.is_empty(), "{schedule:?}:\n{}", rendered(&l, &o));
            assert_eq!(as_u32(&o.arrays[2]), want, "{passes:?} {schedule:?}");
            let got: Vec<i32> = as_u32(&o.arrays[3]).into_iter().map(|v| v as i32).collect();
            assert_eq!(got, want_signed, "{passes:?} {schedule:?}");
        }
    }
}
