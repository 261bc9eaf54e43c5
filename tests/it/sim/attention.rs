//! `samples/flash_attention_fwd.kdsl` in the simulator against an f64
//! reference of softmax(Q Kᵀ · scale) V, for each instantiation the
//! samples' Makefile builds (HEAD_DIM 64 and 128, CAUSAL false and true),
//! on two heads of a sequence of one full KV tile and a partial one, under
//! the in-order schedule and a random one (each instantiation its own
//! seed).
//!
//! The tolerance: the kernel rounds P to bf16 before the PV product
//! (relative 2⁻⁹ per element) while the row sums keep P in f32, and
//! rounds O to bf16 (relative 2⁻⁹); ex2.approx is good to 2⁻²². With
//! |V| ≤ 1, |O| ≤ 1, so each output is within 2⁻⁸ + 2⁻⁹ < 0.006 of the
//! reference: the test allows that.

use crate::common::sim::*;
use kdsl::fp::{self, Format};
use kdsl::launch::{ArgValue, Launch, Swizzle, TensorElem};
use kdsl::sim::Schedule;
use kdsl::types::Scalar;

/// Values in [-1, 1] rounded to bf16, reproducible from `seed`.
fn bf16_values(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            fp::from_bits(fp::to_bits(u, Format::BF16), Format::BF16)
        })
        .collect()
}

fn bits(v: &[f64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| (fp::to_bits(x, Format::BF16) as u16).to_le_bytes())
        .collect()
}

/// The reference: per head, per query row below `seq`, the softmax of the
/// scaled scores over the keys (those up to the row when `causal`).
pub fn reference(
    (q, k, v): (&[f64], &[f64], &[f64]),
    heads: usize,
    seq: usize,
    d: usize,
    scale: f64,
    causal: bool,
) -> Vec<f64> {
    let mut o = vec![0.0; heads * seq * d];
    for h in 0..heads {
        let row = |r: usize| (h * seq + r) * d..(h * seq + r + 1) * d;
        for r in 0..seq {
            let keys = if causal { r + 1 } else { seq };
            let qr = &q[row(r)];
            let s: Vec<f64> = (0..keys)
                .map(|c| qr.iter().zip(&k[row(c)]).map(|(a, b)| a * b).sum::<f64>() * scale)
                .collect();
            let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
            let l: f64 = p.iter().sum();
            for j in 0..d {
                o[(h * seq + r) * d + j] = (0..keys)
                    .map(|c| p[c] * v[(h * seq + c) * d + j])
                    .sum::<f64>()
                    / l;
            }
        }
    }
    o
}

fn tensor_arg(name: &str, data: &[f64], rows: usize, d: usize) -> ArgValue {
    tensor(
        name,
        TensorElem::BF16,
        bits(data),
        &[rows as u64, d as u64],
        &[128, 64],
        Swizzle::B128,
    )
}

/// One launch of instantiation `kernel` (`flash_attention_fwd...`) of
/// `k`: `heads` heads of `seq` rows, head dimension `d`; returns the
/// launch and the reference.
pub fn attention_launch(
    k: &Loaded,
    kernel: &str,
    (heads, seq, d): (usize, usize, usize),
    causal: bool,
) -> (Launch, Vec<f64>) {
    let rows = heads * seq;
    let (q, kk, v) = (
        bf16_values(rows * d, 1),
        bf16_values(rows * d, 2),
        bf16_values(rows * d, 3),
    );
    let scale = 1.0 / (d as f64).sqrt();
    let want = reference((&q, &kk, &v), heads, seq, d, scale, causal);
    let mut l = launch(
        kernel,
        [seq.div_ceil(128) as u32, heads as u32, 1],
        [384, 1, 1],
        [1, 1, 1],
        vec![
            tensor_arg("q", &q, rows, d),
            tensor_arg("k", &kk, rows, d),
            tensor_arg("v", &v, rows, d),
            array("o", Scalar::BF16, vec![0; rows * d * 2]),
            u32v(seq as u32),
            f32v(scale as f32),
        ],
    );
    // kdslc's layout, or (nvcc's PTX, the twin) the twin's: the Q tile,
    // two stages of K and V, the barriers in the last 1024 bytes.
    l.dynamic_shared = k
        .program
        .signature(kernel)
        .and_then(|s| s.dynamic_shared)
        .unwrap_or((5 * 128 * d * 2 + 1024) as u32);
    (l, want)
}

/// Runs a launch and compares `o` (the fourth array: q, k, v, o) with the
/// reference within 0.006.
pub fn check_attention(k: &Loaded, l: &Launch, want: &[f64], schedule: Schedule) {
    let out = run_clean_with(k, l, schedule, 2_000_000_000);
    let o = &out.arrays[3].data;
    let mut worst = (0.0f64, 0usize);
    for (i, w) in want.iter().enumerate() {
        let b = u16::from_le_bytes([o[2 * i], o[2 * i + 1]]);
        let got = fp::from_bits(u64::from(b), Format::BF16);
        // A NaN is the worst of all.
        let err = if got.is_nan() {
            f64::INFINITY
        } else {
            (got - w).abs()
        };
        if err > worst.0 {
            worst = (err, i);
        }
    }
    assert!(
        worst.0 <= 0.006,
        "{} {schedule:?}: element {} is off by {} (want {})",
        l.kernel,
        worst.1,
        worst.0,
        want[worst.1]
    );
}

/// Each instantiation (the kdsl sample's or its CUDA twin's entries, named
/// alike) on two heads of 200 rows: one full KV tile and a partial one;
/// with `random`, each under a random schedule too (a seed of its own).
pub fn case_flash_attention(k: &Loaded, random: bool) {
    let seq = 200;
    for (kernel, d, causal, seed) in [
        ("flash_attention_fwd", 64, false, 5),
        ("flash_attention_fwd__CAUSAL_true", 64, true, 6),
        ("flash_attention_fwd__HEAD_DIM_128", 128, false, 7),
        (
            "flash_attention_fwd__HEAD_DIM_128__CAUSAL_true",
            128,
            true,
            8,
        ),
    ] {
        let (l, want) = attention_launch(k, kernel, (2, seq, d), causal);
        check_attention(k, &l, &want, Schedule::InOrder);
        if random {
            check_attention(k, &l, &want, Schedule::Random(seed));
        }
    }
}

#[test]
fn flash_attention_matches_the_f64_reference() {
    let path = repo_root().join("samples/flash_attention_fwd.kdsl");
    let opts = kdsl::Options {
        consts: ["HEAD_DIM=64", "HEAD_DIM=128", "CAUSAL=false", "CAUSAL=true"]
            .iter()
            .map(|c| c.parse().expect("a --const"))
            .collect(),
        ..crate::common::for_target(kdsl::target::Target::Sm90a)
    };
    case_flash_attention(&kdsl_file_with(&path, &opts), true);
}
