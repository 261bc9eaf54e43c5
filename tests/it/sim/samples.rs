//! Every sample runs in the simulator on inputs that use every CTA and
//! pipeline-stage path, and its outputs match the reference computed in
//! Rust (`sim::reference`): exactly for data movement, within a stated
//! relative tolerance for float arithmetic (sums are accumulated in another
//! order than the reference's f64 sums); arrays a kernel does not write
//! must come back unchanged.
//!
//! The cases are shared with `sim::twins`, which runs the nvcc-compiled CUDA
//! twins of the same kernels on the same inputs.

use crate::common::sim::*;
use crate::sim::reference::check_arrays;
use kdsl::launch::{ArgValue, Launch};

fn sample(name: &str) -> Loaded {
    kdsl_file(&repo_root().join("samples").join(format!("{name}.kdsl")))
}

fn one(x: &[f32]) -> ArgValue {
    f32s("x", x)
}

fn sum(x: &[f32]) -> f32 {
    x.iter().map(|&v| f64::from(v)).sum::<f64>() as f32
}

/// Runs `l` without any report and checks every array against the
/// reference (`sim::reference`).
fn run_checked(k: &Loaded, l: &Launch) -> kdsl::sim::Outcome {
    let o = run_clean(k, l);
    if let Err(e) = check_arrays(l, &o.arrays) {
        panic!("{e}");
    }
    o
}

pub fn case_saxpy(k: &Loaded) {
    let n = 1000u32;
    let x = rand_f32(n as usize, 1);
    let y = rand_f32(n as usize, 2);
    let l = launch(
        "saxpy",
        4,
        256,
        1,
        vec![f32v(2.5), one(&x), f32s("y", &y), u32v(n)],
    );
    run_checked(k, &l);
}

pub fn case_reduce_sum(k: &Loaded) {
    // 4 blocks of 256 threads, n not a multiple of the grid: every thread
    // loops 4 or 5 times and the last iterations are partial.
    let n = 5000u32;
    let x = rand_f32(n as usize, 3);
    let l = launch(
        "reduce_sum",
        4,
        256,
        1,
        vec![one(&x), f32s("out", &[1.0]), u32v(n)],
    );
    run_checked(k, &l);
}

pub fn case_cluster_sum(k: &Loaded) {
    // Two clusters of two CTAs; n is not a multiple of the 512 threads.
    let n = 10_000u32;
    let x = rand_f32(n as usize, 4);
    let l = launch(
        "cluster_sum",
        4,
        128,
        2,
        vec![one(&x), f32s("out", &[0.0]), u32v(n)],
    );
    run_checked(k, &l);
}

pub fn case_pipeline_sum(k: &Loaded) {
    // 3 blocks of 5 chunks through a 2-stage ring: every stage is refilled,
    // and the last refill of the odd stage count is skipped.
    let (grid, chunks) = (3u32, 5u32);
    let x = rand_f32((grid * chunks * 1024) as usize, 5);
    let l = launch(
        "pipeline_sum",
        grid,
        128,
        1,
        vec![one(&x), f32s("out", &[0.0]), u32v(chunks)],
    );
    let o = run_checked(k, &l);
    assert!(o.stats.instructions.memory.bulk > 0, "bulk copies ran");
}

pub fn case_sgemm_tiled(k: &Loaded) {
    // Sizes that are not multiples of the 16×16 tile: partial tiles at every edge.
    let (m, n, kk) = (40u32, 36u32, 50u32);
    let a = rand_f32((m * kk) as usize, 6);
    let b = rand_f32((kk * n) as usize, 7);
    let l = launch(
        "sgemm_tiled",
        [n.div_ceil(16), m.div_ceil(16), 1],
        [16, 16, 1],
        1,
        vec![
            f32s("a", &a),
            f32s("b", &b),
            f32s("c", &vec![0.0; (m * n) as usize]),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    run_checked(k, &l);
}

/// The register-tiled SGEMM (128×128 tiles of c, 8×8 per thread in a
/// register array): partial tiles at every edge and a k that is not a
/// multiple of 8, under the in-order and two random schedules.
pub fn case_sgemm_regtile(k: &Loaded) {
    use kdsl::sim::Schedule;
    let (m, n, kk) = (136u32, 130u32, 20u32);
    let a = rand_f32((m * kk) as usize, 9);
    let b = rand_f32((kk * n) as usize, 10);
    let l = launch(
        "sgemm_regtile",
        [n.div_ceil(128), m.div_ceil(128), 1],
        256,
        1,
        vec![
            f32s("a", &a),
            f32s("b", &b),
            f32s("c", &vec![0.0; (m * n) as usize]),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
        let o = run_clean_with(k, &l, schedule, 1_000_000_000);
        if let Err(e) = check_arrays(&l, &o.arrays) {
            panic!("{schedule:?}: {e}");
        }
    }
}

/// A launch of the Hopper GEMM (`hopper_gemm(a, b, c, m, n, k)`, C = A·Bᵀ
/// in bf16 with 128×256×64 tiles) on row-major `a` (m×k) and `b` (n×k),
/// bf16 bits; the dynamic shared memory the kernel's layout needs (kdslc's
/// signature), or the twin's 196,672 bytes.
pub fn gemm_launch(k: &Loaded, (m, n, kk): (u32, u32, u32), a: Vec<u8>, b: Vec<u8>) -> Launch {
    use kdsl::launch::{Swizzle, TensorElem};
    let mut l = launch(
        "hopper_gemm",
        [n.div_ceil(256), m.div_ceil(128), 1],
        [384, 1, 1],
        [1, 1, 1],
        vec![
            tensor(
                "a",
                TensorElem::BF16,
                a,
                &[m.into(), kk.into()],
                &[128, 64],
                Swizzle::B128,
            ),
            tensor(
                "b",
                TensorElem::BF16,
                b,
                &[n.into(), kk.into()],
                &[256, 64],
                Swizzle::B128,
            ),
            array(
                "c",
                kdsl::types::Scalar::BF16,
                vec![0; (2 * m * n) as usize],
            ),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    l.dynamic_shared = k
        .program
        .signature("hopper_gemm")
        .and_then(|s| s.dynamic_shared)
        .unwrap_or(196_672);
    l
}

/// A launch of the persistent cluster GEMM (`hopper_gemm_persistent(a, b,
/// c, m, n, k)`, the C of [`gemm_launch`]) on `grid` CTAs in clusters of
/// two: B's map has a box of half a tile (128 x 64), each CTA's copy.
fn persistent_launch(
    k: &Loaded,
    (m, n, kk): (u32, u32, u32),
    grid: u32,
    a: Vec<u8>,
    b: Vec<u8>,
) -> Launch {
    use kdsl::launch::{Swizzle, TensorElem};
    let mut l = launch(
        "hopper_gemm_persistent",
        [grid, 1, 1],
        [384, 1, 1],
        [2, 1, 1],
        vec![
            tensor(
                "a",
                TensorElem::BF16,
                a,
                &[m.into(), kk.into()],
                &[128, 64],
                Swizzle::B128,
            ),
            tensor(
                "b",
                TensorElem::BF16,
                b,
                &[n.into(), kk.into()],
                &[128, 64],
                Swizzle::B128,
            ),
            array(
                "c",
                kdsl::types::Scalar::BF16,
                vec![0; (2 * m * n) as usize],
            ),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    l.dynamic_shared = k
        .program
        .signature("hopper_gemm_persistent")
        .and_then(|s| s.dynamic_shared)
        .expect("the kernel's dynamic shared memory");
    l
}

/// The persistent cluster GEMM with more tiles than clusters, so that
/// each cluster's ring and its barriers' phases carry on from tile to
/// tile: a tile's k-tiles not a multiple of the 4 stages (3, 5) and a
/// multiple of them but not of 8 (4: a parity kept per tile would be
/// wrong on the second tile), partial tiles at every edge (m, n not
/// multiples of the tile, an odd n, k not a multiple of 64, the lower CTA
/// of a pair past the last row of A), one cluster and several; on small
/// integers, under the in-order schedule and two random ones: exactly the
/// reference. Then on normal bf16 inputs within the stated tolerance.
pub fn case_hopper_gemm_persistent(k: &Loaded) {
    use kdsl::sim::Schedule;
    // (m, n, k, CTAs): the pairs of tiles are ceil(m / 256) * ceil(n / 256).
    for (i, &(m, n, kk, grid)) in [
        (300u32, 300u32, 136u32, 2u32), // 4 pairs on 1 cluster, 3 k-tiles each
        (600, 520, 72, 4),              // 9 pairs on 2 clusters (5 and 4), 2 k-tiles
        (129, 257, 256, 2),             // 2 pairs, 4 k-tiles: stage s again on the 2nd
        (1, 1, 8, 2),                   // 1 pair, the lower tile empty
        (200, 600, 320, 4),             // 3 pairs on 2 clusters, 5 k-tiles
    ]
    .iter()
    .enumerate()
    {
        let a = small_int_bf16((m * kk) as usize, 2 * i as u64 + 31);
        let b = small_int_bf16((n * kk) as usize, 2 * i as u64 + 32);
        let l = persistent_launch(k, (m, n, kk), grid, a, b);
        let schedules: &[Schedule] = if m > 128 {
            &[Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)]
        } else {
            &[Schedule::InOrder]
        };
        for &schedule in schedules {
            let o = run_clean_with(k, &l, schedule, 1_000_000_000);
            if let Err(e) = check_arrays(&l, &o.arrays) {
                panic!("{m}x{n}x{kk} on {grid} {schedule:?}: {e}");
            }
        }
    }
    let (m, n, kk) = (300u32, 300u32, 136u32);
    let a = normal_bf16((m * kk) as usize, 41);
    let b = normal_bf16((n * kk) as usize, 42);
    let l = persistent_launch(k, (m, n, kk), 2, a.clone(), b.clone());
    let o = run_clean_with(k, &l, Schedule::Random(3), 1_000_000_000);
    let got = crate::sim::reference::bf16s(&o.arrays[2].data);
    check_gemm_tolerance(&a, &b, &got, (m, n, kk)).unwrap_or_else(|e| panic!("{e}"));
}

/// e4m3 bits of `n` small integers, -3 to 3: their products and sums are
/// exact in f32, and the bf16 C is each sum rounded once, as the
/// reference rounds it.
pub fn small_int_e4m3(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            kdsl::fp8::Fp8::E4M3.encode((x % 7) as f64 - 3.0, false)
        })
        .collect()
}

/// The fp8 instantiation of the Hopper GEMM (`--const ELEM=e4m3`:
/// `hopper_gemm__ELEM_e4m3`, 128 x 64 and 256 x 128 e4m3 boxes, four
/// `wgmma.m64n256k32` per stage) at ragged shapes over several tiles, on
/// small integers, in order and under a random schedule: exactly the
/// reference.
pub fn case_hopper_gemm_fp8(k: &Loaded) {
    use kdsl::launch::{Swizzle, TensorElem};
    use kdsl::sim::Schedule;
    let name = "hopper_gemm__ELEM_e4m3";
    for (i, &(m, n, kk)) in [(200u32, 300u32, 272u32), (129, 257, 48), (1, 1, 16)]
        .iter()
        .enumerate()
    {
        let a = small_int_e4m3((m * kk) as usize, 2 * i as u64 + 51);
        let b = small_int_e4m3((n * kk) as usize, 2 * i as u64 + 52);
        let mut l = launch(
            name,
            [n.div_ceil(256), m.div_ceil(128), 1],
            [384, 1, 1],
            [1, 1, 1],
            vec![
                tensor(
                    "a",
                    TensorElem::E4M3,
                    a,
                    &[m.into(), kk.into()],
                    &[128, 128],
                    Swizzle::B128,
                ),
                tensor(
                    "b",
                    TensorElem::E4M3,
                    b,
                    &[n.into(), kk.into()],
                    &[256, 128],
                    Swizzle::B128,
                ),
                array(
                    "c",
                    kdsl::types::Scalar::BF16,
                    vec![0; (2 * m * n) as usize],
                ),
                u32v(m),
                u32v(n),
                u32v(kk),
            ],
        );
        l.dynamic_shared = k
            .program
            .signature(name)
            .and_then(|s| s.dynamic_shared)
            .expect("the instantiation's dynamic shared memory");
        let schedules: &[Schedule] = if m > 128 {
            &[Schedule::InOrder, Schedule::Random(4)]
        } else {
            &[Schedule::InOrder]
        };
        for &schedule in schedules {
            let o = run_with(k, &l, schedule, 1_000_000_000);
            assert!(
                o.reports.is_empty(),
                "{m}x{n}x{kk} {schedule:?}:\n{}",
                rendered(k, &o)
            );
            if let Err(e) = check_arrays(&l, &o.arrays) {
                panic!("{m}x{n}x{kk} {schedule:?}: {e}");
            }
        }
    }
}

/// The Hopper GEMM at shapes with partial tiles at every edge (m, n not
/// multiples of the tile, an odd n, k not a multiple of 64, a 1×1 C) and
/// over several tiles (a 2×2 and a 3×2 grid of CTAs), on small integers,
/// under the in-order schedule and, for the multi-tile shapes, two random
/// ones: exactly the reference.
/// Then on normal bf16 inputs within the stated tolerance
/// ([`check_gemm_tolerance`]).
pub fn case_hopper_gemm(k: &Loaded) {
    use kdsl::sim::Schedule;
    for (i, &(m, n, kk)) in [
        (128u32, 256u32, 64u32),
        (200, 300, 136),
        (1, 1, 8),
        (129, 257, 200),
        (64, 301, 72),
    ]
    .iter()
    .enumerate()
    {
        let a = small_int_bf16((m * kk) as usize, 2 * i as u64 + 1);
        let b = small_int_bf16((n * kk) as usize, 2 * i as u64 + 2);
        let l = gemm_launch(k, (m, n, kk), a, b);
        // Random schedules on the ragged multi-tile shapes.
        let schedules: &[Schedule] = if m > 128 {
            &[Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)]
        } else {
            &[Schedule::InOrder]
        };
        for &schedule in schedules {
            let o = run_clean_with(k, &l, schedule, 1_000_000_000);
            if let Err(e) = check_arrays(&l, &o.arrays) {
                panic!("{m}x{n}x{kk} {schedule:?}: {e}");
            }
        }
    }
    let (m, n, kk) = (200u32, 300u32, 136u32);
    let a = normal_bf16((m * kk) as usize, 21);
    let b = normal_bf16((n * kk) as usize, 22);
    let l = gemm_launch(k, (m, n, kk), a.clone(), b.clone());
    for schedule in [Schedule::InOrder, Schedule::Random(3)] {
        let o = run_clean_with(k, &l, schedule, 1_000_000_000);
        let got = crate::sim::reference::bf16s(&o.arrays[2].data);
        check_gemm_tolerance(&a, &b, &got, (m, n, kk))
            .unwrap_or_else(|e| panic!("{schedule:?}: {e}"));
    }
}

/// bf16 bits of `n` values with every bit of their significand used, of
/// both signs and magnitudes from 2⁻⁴ to 2: sums of their products are not
/// exact in f32, so the result depends on the order and the roundings.
pub fn normal_bf16(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Sign, an exponent from -4 to 1, 7 random significand bits.
            let sign = ((x >> 63) as u16) << 15;
            let exp = (127 - 4 + (x >> 8) % 6) as u16;
            let bits = sign | exp << 7 | (x & 0x7f) as u16;
            bits.to_le_bytes()
        })
        .collect()
}

/// The tolerance of a bf16 GEMM on inputs whose sums are not exact: each
/// element of C within `2⁻⁸·|s| + 2·(k/16)·2⁻²⁴·Σ|aᵢbᵢ|` of the exact sum
/// `s`, that is one bf16 rounding of the result plus the f32 rounding of
/// each of the `k/16` wgmma steps (the simulator sums a step's 16 products
/// exactly and rounds once into the f32 accumulator; a GPU rounds
/// differently but within the same bound).
pub fn check_gemm_tolerance(
    a: &[u8],
    b: &[u8],
    got: &[f64],
    (m, n, k): (u32, u32, u32),
) -> Result<(), String> {
    let (a, b) = (
        crate::sim::reference::bf16s(a),
        crate::sim::reference::bf16s(b),
    );
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let steps = k.div_ceil(16) as f64;
    for r in 0..m {
        for c in 0..n {
            let (mut s, mut abs) = (0f64, 0f64);
            for j in 0..k {
                let p = a[r * k + j] * b[c * k + j];
                s += p;
                abs += p.abs();
            }
            let tol = s.abs() / 256.0 + 2.0 * steps * abs / f64::from(1u32 << 24);
            let g = got[r * n + c];
            if (g - s).abs() > tol {
                return Err(format!(
                    "c[{r}, {c}] is {g}, the exact sum is {s} (tolerance {tol:e})"
                ));
            }
        }
    }
    Ok(())
}

pub fn case_softmax_rows(k: &Loaded) {
    let (rows, cols) = (3u32, 600u32);
    let x: Vec<f32> = rand_f32((rows * cols) as usize, 8)
        .iter()
        .map(|v| v * 20.0 - 10.0)
        .collect();
    let l = launch(
        "softmax_rows",
        rows,
        256,
        1,
        vec![one(&x), f32s("y", &vec![0.0; x.len()]), u32v(cols)],
    );
    run_checked(k, &l);
}

#[test]
fn saxpy() {
    case_saxpy(&sample("saxpy"));
}

#[test]
fn reduce_sum() {
    case_reduce_sum(&sample("reduce_sum"));
}

#[test]
fn cluster_sum() {
    case_cluster_sum(&sample("cluster_sum"));
}

#[test]
fn pipeline_sum() {
    case_pipeline_sum(&sample("pipeline_sum"));
}

#[test]
fn sgemm_tiled() {
    case_sgemm_tiled(&sample("sgemm_tiled"));
}

#[test]
fn sgemm_regtile() {
    case_sgemm_regtile(&sample("sgemm_regtile"));
}

#[test]
fn softmax_rows() {
    case_softmax_rows(&sample("softmax_rows"));
}

/// The tensor-core GEMM, for sm_90a (its `// target:` line).
#[test]
fn hopper_gemm() {
    let path = repo_root().join("samples/hopper_gemm.kdsl");
    let opts = crate::common::for_target(crate::common::source_target(&path));
    case_hopper_gemm(&kdsl_file_with(&path, &opts));
}

/// The persistent cluster GEMM, for sm_90a.
#[test]
fn hopper_gemm_persistent() {
    let path = repo_root().join("samples/hopper_gemm_persistent.kdsl");
    let opts = crate::common::for_target(crate::common::source_target(&path));
    case_hopper_gemm_persistent(&kdsl_file_with(&path, &opts));
}

/// The GEMM's fp8 instantiation (`--const ELEM=e4m3`), for sm_90a.
#[test]
fn hopper_gemm_fp8() {
    let path = repo_root().join("samples/hopper_gemm.kdsl");
    let opts = kdsl::Options {
        consts: vec!["ELEM=e4m3".parse().expect("a --const")],
        ..crate::common::for_target(crate::common::source_target(&path))
    };
    case_hopper_gemm_fp8(&kdsl_file_with(&path, &opts));
}

#[test]
fn transpose() {
    case_transpose(&sample("transpose"));
}

pub fn case_transpose(k: &Loaded) {
    // Neither dimension a multiple of the 32×32 tile.
    let (rows, cols) = (70u32, 45u32);
    let input: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
    let l = launch(
        "transpose",
        [cols.div_ceil(32), rows.div_ceil(32), 1],
        [32, 8, 1],
        1,
        vec![
            f32s("input", &input),
            f32s("output", &vec![-1.0; input.len()]),
            u32v(rows),
            u32v(cols),
        ],
    );
    run_checked(k, &l);
}

#[test]
fn blend_rows() {
    case_blend_rows(&sample("blend_rows"));
}

pub fn case_blend_rows(k: &Loaded) {
    let (rows, cols) = (5u32, 300u32);
    let a = rand_f32((rows * cols) as usize, 9);
    let b = rand_f32((rows * cols) as usize, 10);
    // Weights below, inside and above smoothstep's [0, 1] after `+ 0.5`.
    let w: Vec<f32> = rand_f32(rows as usize, 11)
        .iter()
        .map(|v| v * 1.4 - 0.9)
        .collect();
    let l = launch(
        "blend_rows",
        rows,
        256,
        1,
        vec![
            f32s("a", &a),
            f32s("b", &b),
            f32s("w", &w),
            f32s("out", &vec![0.0; a.len()]),
            u32v(cols),
        ],
    );
    run_checked(k, &l);
}

#[test]
fn ws_pipeline() {
    case_ws_pipeline(&sample("ws_pipeline"));
}

pub fn case_ws_pipeline(k: &Loaded) {
    // 7 chunks through 3 stages: the producer waits on every `empty` stage,
    // twice on the first one.
    let (grid, chunks) = (2u32, 7u32);
    let x = rand_f32((grid * chunks * 1024) as usize, 12);
    let l = launch(
        "ws_pipeline",
        grid,
        160,
        1,
        vec![one(&x), f32s("out", &[0.0]), u32v(chunks)],
    );
    run_checked(k, &l);
}

#[test]
fn big_pipeline() {
    case_big_pipeline(&sample("big_pipeline"));
}

pub fn case_big_pipeline(k: &Loaded) {
    // 128 KiB of dynamic shared memory; 6 chunks through 4 stages: the
    // producer refills two stages.
    let (grid, chunks) = (2u32, 6u32);
    let x = rand_f32((grid * chunks * 8192) as usize, 13);
    let mut l = launch(
        "big_pipeline",
        grid,
        160,
        1,
        vec![one(&x), f32s("out", &[0.0]), u32v(chunks)],
    );
    // The compiler's size, as `kdslc sim`/`kdslc run` take it.
    let sig = k.program.signature("big_pipeline").expect("the kernel");
    // The two barrier groups (64 bytes) padded to 128, the ring, `partial`.
    assert_eq!(sig.dynamic_shared, Some(128 + 4 * 32768 + 128));
    l.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
    run_checked(k, &l);
}

#[test]
fn histogram() {
    case_histogram(&sample("histogram"));
}

pub fn case_histogram(k: &Loaded) {
    histogram_sample(k, "histogram", 4999);
}

/// The vector variant: whole words with `load4` (one `ld.global.nc.v4.u8`),
/// then the `n % 4` bytes past them, for every `n % 4`.
#[test]
fn histogram_v4() {
    case_histogram_v4(&sample("histogram_v4"));
}

pub fn case_histogram_v4(k: &Loaded) {
    for n in [4996, 4997, 4998, 4999, 3] {
        histogram_sample(k, "histogram_v4", n);
    }
}

fn histogram_sample(k: &Loaded, name: &str, n: usize) {
    // Every byte value, a skewed run of one value, and a tail past `n`
    // that must not be counted; bins that start non-zero.
    let mut data: Vec<u8> = (0..n + 37).map(|i| (i * 7 % 256) as u8).collect();
    data[1000.min(n)..1600.min(n)].fill(0xAB);
    let bins: Vec<u32> = (0..256).map(|b| b * 3).collect();
    for grid in [1, 3, 40] {
        let l = launch(
            name,
            grid,
            256,
            1,
            vec![
                array("data", kdsl::types::Scalar::U8, data.clone()),
                u32s("bins", &bins),
                u32v(n as u32),
            ],
        );
        let mut o = run_checked(k, &l);
        // The reference is not vacuous: the counts add up, and one count
        // off by one is caught.
        let counted: u64 = as_u32(&o.arrays[1])
            .iter()
            .zip(&bins)
            .map(|(g, b)| u64::from(g - b))
            .sum();
        assert_eq!(counted, n as u64);
        o.arrays[1].data[4 * usize::from(data[0])] ^= 1;
        assert!(check_arrays(&l, &o.arrays).is_err(), "a bin wrong");
    }
}

/// The reference is not vacuous: a wrong result is caught.
#[test]
fn the_reference_catches_a_wrong_result() {
    let k = sample("saxpy");
    let x = rand_f32(300, 1);
    let l = launch(
        "saxpy",
        2,
        256,
        1,
        vec![f32v(2.5), one(&x), f32s("y", &x), u32v(300)],
    );
    let mut o = run_clean(&k, &l);
    assert!(check_arrays(&l, &o.arrays).is_ok());
    // y[10] off by 2^-2 of its value: wrong; x[0] off by one ulp: changed.
    o.arrays[1].data[42] ^= 0x20;
    assert!(check_arrays(&l, &o.arrays).is_err(), "y[10] wrong");
    o.arrays[1].data[42] ^= 0x20;
    o.arrays[0].data[0] ^= 1;
    assert!(check_arrays(&l, &o.arrays).is_err(), "x changed");
}

#[test]
fn random_schedules_agree_with_in_order() {
    use kdsl::sim::Schedule;
    // Small integers: every order of the sums is exact.
    let x: Vec<f32> = (0..2 * 6 * 8192).map(|i| (i % 7) as f32).collect();
    let cases = [
        (
            "pipeline_sum",
            [2u32, 1, 1],
            [128u32, 1, 1],
            [1u32, 1, 1],
            4u32 * 1024 * 2,
            4u32,
        ),
        (
            "ws_pipeline",
            [2, 1, 1],
            [160, 1, 1],
            [1, 1, 1],
            7 * 1024 * 2,
            7,
        ),
        (
            "big_pipeline",
            [2, 1, 1],
            [160, 1, 1],
            [1, 1, 1],
            6 * 8192 * 2,
            6,
        ),
        ("cluster_sum", [4, 1, 1], [128, 1, 1], [2, 1, 1], 5000, 5000),
        ("reduce_sum", [4, 1, 1], [256, 1, 1], [1, 1, 1], 5000, 5000),
    ];
    for (name, grid, block, cluster, len, last) in cases {
        let k = sample(name);
        let x = &x[..len as usize];
        let mut l = launch(
            name,
            grid,
            block,
            cluster,
            vec![one(x), f32s("out", &[0.0]), u32v(last)],
        );
        // The compiler's dynamic shared memory (big_pipeline's 128 KiB ring).
        l.dynamic_shared = k
            .program
            .signature(name)
            .and_then(|s| s.dynamic_shared)
            .unwrap_or(0);
        for seed in 0..4 {
            let o = run_with(&k, &l, Schedule::Random(seed), 1 << 30);
            assert!(
                o.reports.is_empty(),
                "{name}, seed {seed}:\n{}",
                rendered(&k, &o)
            );
            assert_eq!(as_f32(&o.arrays[1]), vec![sum(x)], "{name}, seed {seed}");
        }
    }
}

/// Warp-specialised with a named barrier: 6 chunks through 4 stages, one
/// sum per chunk.
pub fn case_ws_named(k: &Loaded) {
    let (grid, chunks) = (2u32, 6u32);
    let x = rand_f32((grid * chunks * 8192) as usize, 21);
    let mut l = launch(
        "ws_named",
        grid,
        288,
        1,
        vec![one(&x), f32s("out", &[0.0; 12]), u32v(chunks)],
    );
    let sig = k.program.signature("ws_named").expect("the kernel");
    l.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
    run_checked(k, &l);
}

#[test]
fn ticket_sum() {
    case_ticket_sum(&sample("ticket_sum"));
}

pub fn case_ticket_sum(k: &Loaded) {
    let x = rand_f32(5000, 14);
    // One block (its own ticket is the last), a few, and more blocks than
    // the grid-stride loop needs (some add nothing).
    for grid in [1u32, 6, 45] {
        let l = launch(
            "ticket_sum",
            grid,
            128,
            1,
            vec![
                f32s("x", &x),
                f32s("partial", &vec![0.0; grid as usize]),
                u32s("tickets", &[0]),
                f32s("total", &[0.0]),
                u32v(5000),
            ],
        );
        run_checked(k, &l);
    }
}
