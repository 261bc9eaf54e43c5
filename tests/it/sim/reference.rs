//! What each sample kernel must compute, in Rust, from the inputs of a
//! launch: the one reference for the simulator's library tests
//! (`sim::samples`, `sim::twins`) and its command-line tests (`sim::cli`).
//! Kernels are known by name and their arguments by position, so a launch
//! of the kdsl sample, of its kdslc PTX and of its nvcc twin all check
//! against the same values. Integers and data movement are exact; float
//! results carry a stated tolerance.

use kdsl::launch::{ArgValue, Launch};
use kdsl::types::Scalar;

/// How close a float result must be.
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// Bit for bit (data movement, and arithmetic done in the same order
    /// with the same roundings).
    Exact,
    /// Within `rel * max(|want|, 1)`.
    Rel(f32),
    /// Within `rel * |want| + 1e-12`: values far below 1 keep their
    /// relative precision.
    RelOnly(f32),
}

/// The values one array argument must hold after the run.
#[derive(Clone, Debug)]
pub struct Expected {
    /// The argument's position.
    pub arg: usize,
    pub values: Values,
}

/// An array's elements: `f32`s, compared within a tolerance, or the values
/// of any other element type (integers; the bits of other floats), compared
/// exactly.
#[derive(Clone, Debug)]
pub enum Values {
    F32(Vec<f32>, Tol),
    Exact(Vec<i128>),
    /// A `bf16` array's values (its bits decoded), each within the
    /// absolute tolerance of the reference.
    Bf16Near(Vec<f64>, f64),
}

impl Values {
    /// The elements of an array of `elem` from its little-endian bytes:
    /// `f32` as floats (compared bit for bit unless a tolerance is given),
    /// integers and `bool` as their values (signed types sign-extended),
    /// other floats as their bits.
    pub fn decode(elem: Scalar, bytes: &[u8]) -> Values {
        if elem == Scalar::F32 {
            return Values::F32(
                bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
                Tol::Exact,
            );
        }
        let size = elem.size() as usize;
        Values::Exact(
            bytes
                .chunks_exact(size)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..size].copy_from_slice(c);
                    let bits = u64::from_le_bytes(w);
                    let shift = 64 - 8 * size as u32;
                    if elem.is_signed_int() {
                        i128::from(((bits << shift) as i64) >> shift)
                    } else {
                        i128::from(bits)
                    }
                })
                .collect(),
        )
    }

    fn len(&self) -> usize {
        match self {
            Values::F32(v, _) => v.len(),
            Values::Exact(v) => v.len(),
            Values::Bf16Near(v, _) => v.len(),
        }
    }
}

/// Tolerance of float sums over thousands of terms, relative to the sum's
/// magnitude (f32 has 24 bits; a sum of N terms in another order than the
/// reference's f64 sum loses about log2(N) of them).
pub const SUM_TOL: f32 = 2e-5;

fn f32s(l: &Launch, i: usize) -> Vec<f32> {
    match l.args.get(i) {
        Some(ArgValue::Array(a)) => a
            .data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        other => panic!("{}: argument {i} is not an array: {other:?}", l.kernel),
    }
}

fn bytes(l: &Launch, i: usize) -> &[u8] {
    match l.args.get(i) {
        Some(ArgValue::Array(a)) => &a.data,
        other => panic!("{}: argument {i} is not an array: {other:?}", l.kernel),
    }
}

fn scalar(l: &Launch, i: usize) -> u64 {
    match l.args.get(i) {
        Some(ArgValue::Scalar { bits, .. }) => *bits,
        other => panic!("{}: argument {i} is not a scalar: {other:?}", l.kernel),
    }
}

/// bf16 elements (little-endian bits) as f64.
pub fn bf16s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(2)
        .map(|c| {
            f64::from(f32::from_bits(
                u32::from(u16::from_le_bytes([c[0], c[1]])) << 16,
            ))
        })
        .collect()
}

/// An f32 rounded to the nearest bf16 (ties to even), as its bits.
pub fn bf16_bits(x: f32) -> u16 {
    let u = x.to_bits();
    if x.is_nan() {
        return 0x7fff;
    }
    ((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

fn sum(x: &[f32]) -> f32 {
    x.iter().map(|&v| f64::from(v)).sum::<f64>() as f32
}

/// `out[0] += sum(x[..n])`.
fn accumulated(l: &Launch, n: usize) -> Vec<Expected> {
    let x = f32s(l, 0);
    let out = f32s(l, 1);
    let terms = x
        .get(..n)
        .unwrap_or_else(|| panic!("{}: x is shorter than {n}", l.kernel));
    vec![Expected {
        arg: 1,
        values: Values::F32(
            vec![(f64::from(out[0]) + f64::from(sum(terms))) as f32],
            Tol::Rel(SUM_TOL),
        ),
    }]
}

/// The arrays a launch of a sample kernel must leave behind: every array
/// the kernel writes; the others must come back unchanged. An
/// instantiation of a kernel with constants (`sgemm_tiled__TILE_8`) has
/// its kernel's reference, which holds for every value of the constants.
pub fn expected(l: &Launch) -> Vec<Expected> {
    let grid = (l.grid[0] * l.grid[1] * l.grid[2]) as usize;
    let kernel = l
        .kernel
        .split_once(kdsl::ptx::names::INSTANCE_SEPARATOR)
        .map_or(l.kernel.as_str(), |(k, _)| k);
    match kernel {
        "saxpy" => {
            let a = f32::from_bits(scalar(l, 0) as u32);
            let (x, y) = (f32s(l, 1), f32s(l, 2));
            let n = scalar(l, 3) as usize;
            let values = y
                .iter()
                .enumerate()
                .map(|(i, &y)| if i < n { a.mul_add(x[i], y) } else { y })
                .collect();
            // One fused multiply-add, or a product and a sum rounded
            // separately: within 1 ulp.
            vec![Expected {
                arg: 2,
                values: Values::F32(values, Tol::RelOnly(2e-7)),
            }]
        }
        "reduce_sum" | "cluster_sum" => accumulated(l, scalar(l, 2) as usize),
        "pipeline_sum" | "ws_pipeline" => accumulated(l, grid * scalar(l, 2) as usize * 1024),
        "big_pipeline" => accumulated(l, grid * scalar(l, 2) as usize * 8192),
        // One sum per chunk of 8192 floats.
        "ws_named" => {
            let (x, out) = (f32s(l, 0), f32s(l, 1));
            let chunks = grid * scalar(l, 2) as usize;
            let values = (0..out.len())
                .map(|c| {
                    if c < chunks {
                        sum(&x[c * 8192..(c + 1) * 8192])
                    } else {
                        out[c]
                    }
                })
                .collect();
            vec![Expected {
                arg: 1,
                values: Values::F32(values, Tol::Rel(SUM_TOL)),
            }]
        }
        "sgemm_tiled" | "sgemm_regtile" => {
            let (a, b) = (f32s(l, 0), f32s(l, 1));
            let (m, n, k) = (
                scalar(l, 3) as usize,
                scalar(l, 4) as usize,
                scalar(l, 5) as usize,
            );
            let mut c = f32s(l, 2);
            for r in 0..m {
                for col in 0..n {
                    let s: f64 = (0..k)
                        .map(|j| f64::from(a[r * k + j]) * f64::from(b[j * n + col]))
                        .sum();
                    c[r * n + col] = s as f32;
                }
            }
            vec![Expected {
                arg: 2,
                values: Values::F32(c, Tol::Rel(1e-5)),
            }]
        }
        "softmax_rows" => {
            let x = f32s(l, 0);
            let cols = scalar(l, 2) as usize;
            let mut y = f32s(l, 1);
            for r in 0..grid {
                let row = &x[r * cols..(r + 1) * cols];
                let m = row.iter().fold(f64::MIN, |a, &b| a.max(f64::from(b)));
                let e: Vec<f64> = row.iter().map(|&v| (f64::from(v) - m).exp()).collect();
                let s: f64 = e.iter().sum();
                for (c, v) in e.iter().enumerate() {
                    y[r * cols + c] = (v / s) as f32;
                }
            }
            // `exp` is `ex2.approx` of x·log2(e) (2 ulp) times a rounded
            // reciprocal of the sum.
            vec![Expected {
                arg: 1,
                values: Values::F32(y, Tol::RelOnly(1e-5)),
            }]
        }
        "transpose" => {
            let input = f32s(l, 0);
            let (rows, cols) = (scalar(l, 2) as usize, scalar(l, 3) as usize);
            let mut out = f32s(l, 1);
            for r in 0..rows {
                for c in 0..cols {
                    out[c * rows + r] = input[r * cols + c];
                }
            }
            vec![Expected {
                arg: 1,
                values: Values::F32(out, Tol::Exact),
            }]
        }
        "blend_rows" => {
            let (a, b, w) = (f32s(l, 0), f32s(l, 1), f32s(l, 2));
            let cols = scalar(l, 4) as usize;
            let mut out = f32s(l, 3);
            for (r, wr) in w.iter().enumerate().take(grid) {
                let t = (wr + 0.5).clamp(0.0, 1.0);
                let t = t * t * (3.0 - 2.0 * t);
                for c in 0..cols {
                    let i = r * cols + c;
                    out[i] = t.mul_add(b[i] - a[i], a[i]);
                }
            }
            vec![Expected {
                arg: 3,
                values: Values::F32(out, Tol::Exact),
            }]
        }
        "histogram" | "histogram_v4" => {
            let (data, n) = (bytes(l, 0), scalar(l, 2) as usize);
            let Values::Exact(mut bins) = Values::decode(Scalar::U32, bytes(l, 1)) else {
                unreachable!("u32 bins decode as integers")
            };
            for &b in &data[..n] {
                bins[usize::from(b)] = (bins[usize::from(b)] + 1) % (1 << 32);
            }
            vec![Expected {
                arg: 1,
                values: Values::Exact(bins),
            }]
        }
        "ticket_sum" => {
            // Block b adds x[b * 128 + t + k * grid * 128]; the last block
            // to take a ticket adds the parts, and the ticket counter wraps
            // back to 0.
            let x = f32s(l, 0);
            let n = scalar(l, 4) as usize;
            let mut parts = vec![0f64; grid];
            for (i, v) in x.iter().enumerate().take(n) {
                parts[(i / 128) % grid] += f64::from(*v);
            }
            let total: f64 = parts.iter().sum();
            vec![
                Expected {
                    arg: 1,
                    values: Values::F32(
                        parts.iter().map(|&p| p as f32).collect(),
                        Tol::Rel(SUM_TOL),
                    ),
                },
                Expected {
                    arg: 2,
                    values: Values::Exact(vec![0]),
                },
                Expected {
                    arg: 3,
                    values: Values::F32(vec![total as f32], Tol::Rel(SUM_TOL)),
                },
            ]
        }
        // C = A·Bᵀ, bf16 in and out: the exact sum rounded once to f32,
        // then to bf16. The simulator sums each wgmma's products exactly
        // and rounds into the f32 accumulator once per wgmma, so this is
        // its result whenever every partial sum is exact in f32 — as for
        // the tests' inputs (`rand` bf16 are multiples of 2⁻⁸ below 1:
        // for k ≤ 256 every sum is a multiple of 2⁻¹⁶ below 2⁸).
        // O = softmax(Q Kᵀ scale) V per head, q/k/v/o [heads seq, d] bf16:
        // the f64 reference of sim::attention, within its bound (0.006:
        // P and O rounded to bf16, ex2.approx).
        "flash_attention_fwd" => {
            let tensor = |i: usize| match l.args.get(i) {
                Some(ArgValue::TensorMap { array, dims, .. }) => (bf16s(&array.data), dims.clone()),
                other => panic!("flash_attention_fwd: argument {i} is not a tensor: {other:?}"),
            };
            let ((q, dims), (k, _), (v, _)) = (tensor(0), tensor(1), tensor(2));
            let seq = scalar(l, 4) as usize;
            let scale = f64::from(f32::from_bits(scalar(l, 5) as u32));
            let d = dims.get(1).copied().unwrap_or(64) as usize;
            let heads = dims.first().copied().unwrap_or(0) as usize / seq.max(1);
            let want = crate::sim::attention::reference((&q, &k, &v), heads, seq, d, scale, false);
            vec![Expected {
                arg: 3,
                values: Values::Bf16Near(want, 0.006),
            }]
        }
        // The persistent cluster GEMM computes the same C; the fp8
        // instantiation (`hopper_gemm__ELEM_e4m3`) too, from e4m3 A and B
        // (exact products; sums exact in f32 on the tests' small integers).
        "hopper_gemm" | "hopper_gemm_persistent" => {
            let tensor = |i: usize| match l.args.get(i) {
                Some(ArgValue::TensorMap { array, map, .. }) => match map.elem {
                    kdsl::launch::TensorElem::BF16 => bf16s(&array.data),
                    kdsl::launch::TensorElem::E4M3 => array
                        .data
                        .iter()
                        .map(|&b| kdsl::fp8::Fp8::E4M3.decode(b))
                        .collect(),
                    e => panic!("{}: no reference for {e:?} tensors", l.kernel),
                },
                other => panic!("{}: argument {i} is not a tensor: {other:?}", l.kernel),
            };
            let (a, b) = (tensor(0), tensor(1));
            let (m, n, k) = (
                scalar(l, 3) as usize,
                scalar(l, 4) as usize,
                scalar(l, 5) as usize,
            );
            let Values::Exact(mut c) = Values::decode(Scalar::BF16, bytes(l, 2)) else {
                unreachable!("bf16 bits decode exactly")
            };
            for r in 0..m {
                for col in 0..n {
                    let s: f64 = (0..k).map(|j| a[r * k + j] * b[col * k + j]).sum();
                    c[r * n + col] = i128::from(bf16_bits(s as f32));
                }
            }
            vec![Expected {
                arg: 2,
                values: Values::Exact(c),
            }]
        }
        other => panic!("no reference for kernel `{other}`"),
    }
}

/// Checks the arrays after a run of `l`: `got(arg)` gives argument `arg`'s
/// bytes after the run, `None` where the run did not return them (a
/// read-only array of a `.kdsl` kernel is not written out by `--out`).
pub fn check(l: &Launch, got: impl Fn(usize) -> Option<Vec<u8>>) -> Result<(), String> {
    let want = expected(l);
    for (i, arg) in l.args.iter().enumerate() {
        let ArgValue::Array(a) = arg else { continue };
        let Some(bytes) = got(i) else {
            if want.iter().any(|e| e.arg == i) {
                return Err(format!("{}: no result for `{}`", l.kernel, a.name));
            }
            continue;
        };
        let values = Values::decode(a.elem, &bytes);
        let expect = match want.iter().find(|e| e.arg == i) {
            Some(e) => e.values.clone(),
            // Not written by the kernel: unchanged.
            None => Values::decode(a.elem, &a.data),
        };
        if values.len() != expect.len() {
            return Err(format!(
                "{}: `{}` has {} elements, want {}",
                l.kernel,
                a.name,
                values.len(),
                expect.len()
            ));
        }
        match (&values, &expect) {
            (Values::F32(got, _), Values::F32(want, tol)) => {
                for (j, (g, w)) in got.iter().zip(want).enumerate() {
                    let ok = match tol {
                        Tol::Exact => g.to_bits() == w.to_bits(),
                        Tol::Rel(r) => (g - w).abs() <= r * w.abs().max(1.0),
                        Tol::RelOnly(r) => (g - w).abs() <= r * w.abs() + 1e-12,
                    };
                    if !ok {
                        return Err(format!(
                            "{}: `{}`[{j}] is {g}, want {w} ({tol:?})",
                            l.kernel, a.name
                        ));
                    }
                }
            }
            (Values::Exact(got), Values::Bf16Near(want, tol)) => {
                for (j, (g, w)) in got.iter().zip(want).enumerate() {
                    let g = f64::from(f32::from_bits((*g as u32) << 16));
                    if g.is_nan() || (g - w).abs() > *tol {
                        return Err(format!(
                            "{}: `{}`[{j}] is {g}, want {w} (within {tol})",
                            l.kernel, a.name
                        ));
                    }
                }
            }
            (Values::Exact(got), Values::Exact(want)) => {
                if let Some(j) = got.iter().zip(want).position(|(g, w)| g != w) {
                    return Err(format!(
                        "{}: `{}`[{j}] is {}, want {}",
                        l.kernel, a.name, got[j], want[j]
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "{}: `{}` is an array of {}, but the reference has other values",
                    l.kernel, a.name, a.elem
                ))
            }
        }
    }
    Ok(())
}

/// [`check`] on the arrays a library run returns (every array argument, in
/// launch order).
pub fn check_arrays(l: &Launch, arrays: &[kdsl::launch::Array]) -> Result<(), String> {
    let array_args: Vec<usize> = l
        .args
        .iter()
        .enumerate()
        // The run returns tensors' arrays too, in launch order.
        .filter(|(_, a)| a.as_array().is_some())
        .map(|(i, _)| i)
        .collect();
    check(l, |arg| {
        let k = array_args.iter().position(|&i| i == arg)?;
        arrays.get(k).map(|a| a.data.clone())
    })
}
