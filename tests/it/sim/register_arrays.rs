//! Register arrays (language.md §5.8) run: `tests/valid/register_arrays.kdsl`
//! against a Rust reference with the passes on and off (the arrays are
//! made registers whatever `--passes` says), and its PTX holds no local
//! memory. The register-tiled SGEMM sample is `sim::samples`'s.

use crate::common::sim::*;
use kdsl::launch::Launch;
use kdsl::opt::Passes;
use kdsl::types::Scalar;

const FILE: &str = "tests/valid/register_arrays.kdsl";
const THREADS: usize = 128;

/// `weigh` of the program, in f32 as it computes it (fma or not: a
/// tolerance covers the difference).
fn weigh(v: [f32; 4]) -> f32 {
    let w = [0.5f32, 1.0, 2.0, 4.0];
    w.iter().zip(v).map(|(w, v)| w * v).sum()
}

fn f64s(a: &kdsl::launch::Array) -> Vec<f64> {
    a.data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// What the program writes: `out`, `counts` and `wide`.
fn reference(x: &[f32], n: usize) -> (Vec<f32>, Vec<u32>, Vec<f64>) {
    let mut out = vec![0.0f32; THREADS * 10];
    let mut counts = vec![0u32; THREADS * 8];
    let mut wide = vec![0.0f64; THREADS];
    for t in 0..THREADS {
        let mut acc = [[0.0f32; 4]; 2];
        let mut seen = [[0u32; 4]; 2];
        for r in 0..n {
            for i in 0..2 {
                for j in 0..4 {
                    let v = x[(t + r + 4 * i + j) % 256];
                    acc[i][j] += v;
                    seen[i][j] += u32::from(v > 0.5);
                }
            }
        }
        for i in 0..2 {
            for j in 0..4 {
                out[t * 10 + 4 * i + j] = acc[i][j];
                counts[t * 8 + 4 * i + j] = seen[i][j];
            }
        }
        // odd = [-1, 0, 1], its ends times 3, its middle plus 5: -3 + 5 + 3.
        out[t * 10 + 8] = weigh([acc[0][0], acc[0][1], acc[1][2], 5.0]);
        out[t * 10 + 9] = if t % 2 == 0 && t % 3 != 0 { 1.0 } else { 0.0 };
        let mut d = [1.0f64, 0.0, 0.0];
        for i in 1..3 {
            d[i] = d[i - 1] * 2.0 + f64::from(x[t % 256]);
        }
        wide[t] = d[2];
    }
    (out, counts, wide)
}

fn launch_of(x: &[f32], n: u32) -> Launch {
    launch(
        "register_arrays",
        (THREADS / 64) as u32,
        64,
        1,
        vec![
            f32s("x", x),
            f32s("out", &vec![0.0; THREADS * 10]),
            u32s("counts", &vec![0; THREADS * 8]),
            array("wide", Scalar::F64, vec![0; THREADS * 8]),
            u32v(n),
        ],
    )
}

#[test]
fn register_arrays_match_the_reference_with_and_without_passes() {
    let x = rand_f32(256, 17);
    let n = 7u32;
    let (out, counts, wide) = reference(&x, n as usize);
    for passes in [Passes::all(), Passes::none()] {
        let opts = with_passes(passes.clone());
        let c = kdsl::compile(std::path::Path::new(FILE), &opts).expect("readable");
        let ptx = c.ptx.as_deref().expect("PTX");
        assert!(
            !ptx.contains(".local"),
            "{passes:?}: local memory in\n{ptx}"
        );
        let k = kdsl_file_with(std::path::Path::new(FILE), &opts);
        let o = run_clean(&k, &launch_of(&x, n));
        let got = as_f32(&o.arrays[1]);
        for (i, (g, e)) in got.iter().zip(&out).enumerate() {
            assert!(
                (g - e).abs() <= 1e-5 * e.abs().max(1.0),
                "{passes:?}: out[{i}] = {g}, expected {e}"
            );
        }
        assert_eq!(as_u32(&o.arrays[2]), counts, "{passes:?}: counts");
        assert_eq!(f64s(&o.arrays[3]), wide, "{passes:?}: wide");
    }
}
