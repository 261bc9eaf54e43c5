//! Fragments as values in the simulator (language.md §16.7): the RS form
//! of `wgmma` (A from registers) exactly on integer-valued inputs, and the
//! row operations (`row_max`, `row_sum`, `row_exp2`, `row_scale`) against
//! an f64 reference, under in-order and random schedules.

use crate::common::sim::*;
use kdsl::fp::{self, Format};
use kdsl::sim::Schedule;
use kdsl::types::Scalar;
use std::path::Path;

/// Small integers in `lo..=hi`, reproducible from `seed`.
fn ints(n: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (x % (hi - lo + 1) as u64) as i32
        })
        .collect()
}

fn bf16s(v: &[i32]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| (fp::to_bits(f64::from(x), Format::BF16) as u16).to_le_bytes())
        .collect()
}

/// Row-major `x (m x k)` times `y (n x k)` transposed.
fn mul_t(x: &[i64], y: &[i64], m: usize, n: usize, k: usize) -> Vec<i64> {
    let mut c = vec![0i64; m * n];
    for r in 0..m {
        for col in 0..n {
            c[r * n + col] = (0..k).map(|j| x[r * k + j] * y[col * k + j]).sum();
        }
    }
    c
}

#[test]
fn rs_wgmma_and_row_operations_match_the_reference() {
    let opts = kdsl::Options {
        target: kdsl::target::Target::Sm90a,
        ..kdsl::Options::default()
    };
    let l = kdsl_file_with(Path::new("tests/valid/fragments.kdsl"), &opts);
    let sig = l.program.signature("frag").expect("the kernel");
    // |S| <= 64 * 4 = 256: every element of S is exact in bf16, so P = S
    // and O = S Vtᵀ are exact.
    let (av, bv, vv) = (
        ints(4096, -2, 2, 1),
        ints(4096, -2, 2, 2),
        ints(4096, -3, 3, 3),
    );
    let wide = |v: &[i32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<_>>();
    let s = mul_t(&wide(&av), &wide(&bv), 64, 64, 64);
    let o_want = mul_t(&s, &wide(&vv), 64, 64, 64);
    let k = 0.05f32;
    for schedule in [Schedule::InOrder, Schedule::Random(7)] {
        let mut launch = launch(
            "frag",
            [1, 1, 1],
            [128, 1, 1],
            [1, 1, 1],
            vec![
                array("a", Scalar::BF16, bf16s(&av)),
                array("b", Scalar::BF16, bf16s(&bv)),
                array("vt", Scalar::BF16, bf16s(&vv)),
                f32v(k),
                f32s("o", &[0.0; 4096]),
                f32s("rows", &[0.0; 128]),
                f32s("e", &[0.0; 4096]),
            ],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let out = run_with(&l, &launch, schedule, 100_000_000);
        assert!(out.reports.is_empty(), "{}", rendered(&l, &out));
        let o: Vec<i64> = as_f32(&out.arrays[3]).iter().map(|&x| x as i64).collect();
        assert_eq!(o, o_want, "O = P Vtᵀ, {schedule:?}");
        let rows = as_f32(&out.arrays[4]);
        let e = as_f32(&out.arrays[5]);
        for r in 0..64 {
            let row = &s[r * 64..r * 64 + 64];
            let max = *row.iter().max().expect("a row");
            let sum: i64 = row.iter().sum();
            // -1e30 folds in: the max of the row, exactly; the sum of
            // integers below 2^24, exactly.
            assert_eq!(rows[r], max as f32, "row_max of row {r}");
            assert_eq!(rows[64 + r], sum as f32, "row_sum of row {r}");
            let ex: Vec<f64> = row
                .iter()
                .map(|&x| ((x - max) as f64 * f64::from(k)).exp2())
                .collect();
            let total: f64 = ex.iter().sum();
            for c in 0..64 {
                let want = ex[c] / total;
                let got = f64::from(e[r * 64 + c]);
                // ex2.approx.ftz: relative error below 2^-22 each, then
                // an f32 sum of 64 and a reciprocal: 1e-5 relative.
                assert!(
                    (got - want).abs() <= 1e-5 * want.max(1e-30) + 1e-30,
                    "softmax [{r}, {c}]: {got} against {want}, {schedule:?}"
                );
            }
        }
    }
}
