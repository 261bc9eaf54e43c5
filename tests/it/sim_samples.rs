//! Every sample runs in the simulator on inputs that use every CTA and
//! pipeline-stage path, and its outputs match a reference computed here:
//! exactly for integers, within a stated relative tolerance for floats
//! (sums are accumulated in another order than the reference's f64 sums).
//!
//! The cases are shared with `sim_twins`, which runs the nvcc-compiled CUDA
//! twins of the same kernels on the same inputs.

use crate::sim_support::*;
use kdsl::launch::ArgValue;

fn sample(name: &str) -> Loaded {
    kdsl_file(&root().join("samples").join(format!("{name}.kdsl")))
}

/// Tolerance of float sums over thousands of terms (relative to the sum's
/// magnitude; f32 has 24 bits, a sum of N terms loses about log2(N) of them).
const SUM_TOL: f32 = 2e-5;

fn one(x: &[f32]) -> ArgValue {
    f32s("x", x)
}

fn sum(x: &[f32]) -> f32 {
    x.iter().map(|&v| f64::from(v)).sum::<f64>() as f32
}

pub fn case_saxpy(k: &Loaded) {
    let n = 1000u32;
    let x = rand_f32(n as usize, 1);
    let y = rand_f32(n as usize, 2);
    let l = launch(
        "saxpy",
        [4, 1, 1],
        [256, 1, 1],
        [1, 1, 1],
        vec![f32v(2.5), one(&x), f32s("y", &y), u32v(n)],
    );
    let o = run_clean(k, &l);
    let want: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(x, y)| 2.5f32.mul_add(*x, *y))
        .collect();
    // One fused multiply-add or two rounded operations: within 1 ulp.
    assert_close("y", &as_f32(&o.arrays[1]), &want, 2e-7);
    assert_eq!(as_f32(&o.arrays[0]), x, "x is unchanged");
}

pub fn case_reduce_sum(k: &Loaded) {
    // 4 blocks of 256 threads, n not a multiple of the grid: every thread
    // loops 4 or 5 times and the last iterations are partial.
    let n = 5000u32;
    let x = rand_f32(n as usize, 3);
    let l = launch(
        "reduce_sum",
        [4, 1, 1],
        [256, 1, 1],
        [1, 1, 1],
        vec![one(&x), f32s("out", &[1.0]), u32v(n)],
    );
    let o = run_clean(k, &l);
    assert_close("out", &as_f32(&o.arrays[1]), &[1.0 + sum(&x)], SUM_TOL);
}

pub fn case_cluster_sum(k: &Loaded) {
    // Two clusters of two CTAs; n is not a multiple of the 512 threads.
    let n = 10_000u32;
    let x = rand_f32(n as usize, 4);
    let l = launch(
        "cluster_sum",
        [4, 1, 1],
        [128, 1, 1],
        [2, 1, 1],
        vec![one(&x), f32s("out", &[0.0]), u32v(n)],
    );
    let o = run_clean(k, &l);
    assert_close("out", &as_f32(&o.arrays[1]), &[sum(&x)], SUM_TOL);
}

pub fn case_pipeline_sum(k: &Loaded) {
    // 3 blocks of 5 chunks through a 2-stage ring: every stage is refilled,
    // and the last refill of the odd stage count is skipped.
    let (grid, chunks) = (3u32, 5u32);
    let x = rand_f32((grid * chunks * 1024) as usize, 5);
    let l = launch(
        "pipeline_sum",
        [grid, 1, 1],
        [128, 1, 1],
        [1, 1, 1],
        vec![one(&x), f32s("out", &[0.0]), u32v(chunks)],
    );
    let o = run_clean(k, &l);
    assert_close("out", &as_f32(&o.arrays[1]), &[sum(&x)], SUM_TOL);
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
        [1, 1, 1],
        vec![
            f32s("a", &a),
            f32s("b", &b),
            f32s("c", &vec![0.0; (m * n) as usize]),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    let o = run_clean(k, &l);
    let mut want = vec![0f32; (m * n) as usize];
    for r in 0..m {
        for c in 0..n {
            let s: f64 = (0..kk)
                .map(|j| f64::from(a[(r * kk + j) as usize]) * f64::from(b[(j * n + c) as usize]))
                .sum();
            want[(r * n + c) as usize] = s as f32;
        }
    }
    assert_close("c", &as_f32(&o.arrays[2]), &want, 1e-5);
}

pub fn case_softmax_rows(k: &Loaded) {
    let (rows, cols) = (3u32, 600u32);
    let x: Vec<f32> = rand_f32((rows * cols) as usize, 8)
        .iter()
        .map(|v| v * 20.0 - 10.0)
        .collect();
    let l = launch(
        "softmax_rows",
        [rows, 1, 1],
        [256, 1, 1],
        [1, 1, 1],
        vec![one(&x), f32s("y", &vec![0.0; x.len()]), u32v(cols)],
    );
    let o = run_clean(k, &l);
    let mut want = Vec::new();
    for r in 0..rows as usize {
        let row = &x[r * cols as usize..(r + 1) * cols as usize];
        let m = row.iter().fold(f64::MIN, |a, &b| a.max(f64::from(b)));
        let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - m).exp()).collect();
        let s: f64 = e.iter().sum();
        want.extend(e.iter().map(|v| (v / s) as f32));
    }
    // `exp` is `ex2.approx` of x·log2(e) (2 ulp) times a rounded reciprocal.
    let got = as_f32(&o.arrays[1]);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs() + 1e-12,
            "y[{i}]: got {g}, want {w}"
        );
    }
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
fn softmax_rows() {
    case_softmax_rows(&sample("softmax_rows"));
}

#[test]
fn transpose() {
    let k = sample("transpose");
    // Neither dimension a multiple of the 32×32 tile.
    let (rows, cols) = (70u32, 45u32);
    let input: Vec<u32> = (0..rows * cols).collect();
    let l = launch(
        "transpose",
        [cols.div_ceil(32), rows.div_ceil(32), 1],
        [32, 8, 1],
        [1, 1, 1],
        vec![
            u32s("input", &input),
            u32s("output", &vec![u32::MAX; input.len()]),
            u32v(rows),
            u32v(cols),
        ],
    );
    let o = run_clean(&k, &l);
    let got = as_u32(&o.arrays[1]);
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(
                got[(c * rows + r) as usize],
                input[(r * cols + c) as usize],
                "out[{c}, {r}]"
            );
        }
    }
}

#[test]
fn blend_rows() {
    let k = sample("blend_rows");
    let (rows, cols) = (5u32, 300u32);
    let a = rand_f32((rows * cols) as usize, 9);
    let b = rand_f32((rows * cols) as usize, 10);
    let w: Vec<f32> = rand_f32(rows as usize, 11)
        .iter()
        .map(|v| v * 1.4 - 0.9)
        .collect();
    let l = launch(
        "blend_rows",
        [rows, 1, 1],
        [256, 1, 1],
        [1, 1, 1],
        vec![
            f32s("a", &a),
            f32s("b", &b),
            f32s("w", &w),
            f32s("out", &vec![0.0; a.len()]),
            u32v(cols),
        ],
    );
    let o = run_clean(&k, &l);
    let got = as_f32(&o.arrays[3]);
    for (r, wr) in w.iter().enumerate() {
        let t = (wr + 0.5).clamp(0.0, 1.0);
        let t = t * t * (3.0 - 2.0 * t);
        for c in 0..cols as usize {
            let i = r * cols as usize + c;
            let want = t.mul_add(b[i] - a[i], a[i]);
            assert_eq!(got[i], want, "out[{i}]");
        }
    }
}

#[test]
fn ws_pipeline() {
    let k = sample("ws_pipeline");
    // 7 chunks through 3 stages: the producer waits on every `empty` stage,
    // twice on the first one.
    let (grid, chunks) = (2u32, 7u32);
    let x = rand_f32((grid * chunks * 1024) as usize, 12);
    let l = launch(
        "ws_pipeline",
        [grid, 1, 1],
        [160, 1, 1],
        [1, 1, 1],
        vec![one(&x), f32s("out", &[0.0]), u32v(chunks)],
    );
    let o = run_clean(&k, &l);
    assert_close("out", &as_f32(&o.arrays[1]), &[sum(&x)], SUM_TOL);
}

#[test]
fn random_schedules_agree_with_in_order() {
    use kdsl::sim::Schedule;
    // Small integers: every order of the sums is exact.
    let x: Vec<f32> = (0..2 * 7 * 1024).map(|i| (i % 7) as f32).collect();
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
        ("cluster_sum", [4, 1, 1], [128, 1, 1], [2, 1, 1], 5000, 5000),
        ("reduce_sum", [4, 1, 1], [256, 1, 1], [1, 1, 1], 5000, 5000),
    ];
    for (name, grid, block, cluster, len, last) in cases {
        let k = sample(name);
        let x = &x[..len as usize];
        let l = launch(
            name,
            grid,
            block,
            cluster,
            vec![one(x), f32s("out", &[0.0]), u32v(last)],
        );
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
