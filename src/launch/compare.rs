//! `kdslc run --check-sim`: the GPU's output arrays against the
//! simulator's.
//!
//! Integers and `bool` must be equal. Floats are equal when their bits
//! are, when both are NaN, when both are below the type's smallest normal
//! number in magnitude (flush-to-zero), or when
//! `|gpu − sim| ≤ rtol · max(|gpu|, |sim|)` with the relative tolerance of
//! the type:
//!
//! | type | rtol |
//! | --- | --- |
//! | `f64` | 1e-12 |
//! | `f32` | 1e-5 |
//! | `f16` | 1e-3 |
//! | `bf16` | 1e-2 |
//!
//! A tolerance is needed because the order of floating-point atomics (and
//! so their rounding) differs between the GPU and the simulator.
//!
//! Exactly, with no tolerance, when the kernel multiplies with tensor
//! cores (`wgmma`) and every float input is integer-valued
//! ([`integer_valued`]): the products and sums are then exact in every
//! order (the PTX ISA leaves the order of a wgmma's sums unspecified), so
//! the GPU and the simulator agree bit for bit (hopper.md §3.7).

use super::{dump, Array};
use crate::types::Scalar;
use std::fmt;

/// How many mismatching elements a report lists.
pub const SHOWN: usize = 5;

/// The relative tolerance for floats of `elem` (0 for exact types).
pub fn rtol(elem: Scalar) -> f64 {
    match elem {
        Scalar::F64 => 1e-12,
        Scalar::F32 => 1e-5,
        Scalar::F16 => 1e-3,
        Scalar::BF16 => 1e-2,
        _ => 0.0,
    }
}

/// One element that differs.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    pub index: usize,
    pub gpu: String,
    pub sim: String,
}

/// How one output array differs between the GPU and the simulator.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub name: String,
    pub elem: Scalar,
    pub len: usize,
    /// The array does not exist on one side, or the two differ in type or
    /// length.
    pub shape: Option<String>,
    /// How many elements differ.
    pub count: usize,
    /// Floats were compared bit for bit.
    pub exact: bool,
    /// The first [`SHOWN`] of them.
    pub first: Vec<Mismatch>,
}

/// Compares every writable array of `gpu` with the array of the same name
/// in `sim`; returns one [`Difference`] per array that differs (none when
/// they agree).
pub fn compare(gpu: &[Array], sim: &[Array]) -> Vec<Difference> {
    compare_with(gpu, sim, false)
}

/// [`compare`], floats bit for bit when `exact`.
pub fn compare_with(gpu: &[Array], sim: &[Array], exact: bool) -> Vec<Difference> {
    let mut out = Vec::new();
    for g in gpu.iter().filter(|a| a.writable) {
        let diff = |shape: Option<String>| Difference {
            name: g.name.clone(),
            elem: g.elem,
            len: g.len(),
            shape,
            count: 0,
            exact,
            first: Vec::new(),
        };
        let Some(s) = sim.iter().find(|s| s.name == g.name) else {
            out.push(diff(Some(
                "the simulator returned no such array".to_string(),
            )));
            continue;
        };
        if s.elem != g.elem || s.len() != g.len() {
            out.push(diff(Some(format!(
                "the GPU's is {}[{}], the simulator's {}[{}]",
                g.elem,
                g.len(),
                s.elem,
                s.len()
            ))));
            continue;
        }
        let size = g.elem.size() as usize;
        let mut d = diff(None);
        for (i, (a, b)) in g
            .data
            .chunks_exact(size)
            .zip(s.data.chunks_exact(size))
            .enumerate()
        {
            if !(equal(g.elem, a, b) && (!exact || a == b || both_nan(g.elem, a, b))) {
                d.count += 1;
                if d.first.len() < SHOWN {
                    d.first.push(Mismatch {
                        index: i,
                        gpu: dump::element(g.elem, a),
                        sim: dump::element(g.elem, b),
                    });
                }
            }
        }
        if d.count > 0 {
            out.push(d);
        }
    }
    out
}

/// Whether two elements (little-endian bytes) agree, per the rules above.
pub fn equal(elem: Scalar, a: &[u8], b: &[u8]) -> bool {
    if a == b {
        return true;
    }
    let (x, y, min_normal) = match elem {
        Scalar::F64 => (
            f64::from_le_bytes(word(a)),
            f64::from_le_bytes(word(b)),
            f64::MIN_POSITIVE,
        ),
        Scalar::F32 => (
            f64::from(f32::from_le_bytes(word(a))),
            f64::from(f32::from_le_bytes(word(b))),
            f64::from(f32::MIN_POSITIVE),
        ),
        Scalar::F16 => (
            half::f16::from_le_bytes(word(a)).to_f64(),
            half::f16::from_le_bytes(word(b)).to_f64(),
            half::f16::MIN_POSITIVE.to_f64(),
        ),
        Scalar::BF16 => (
            half::bf16::from_le_bytes(word(a)).to_f64(),
            half::bf16::from_le_bytes(word(b)).to_f64(),
            half::bf16::MIN_POSITIVE.to_f64(),
        ),
        _ => return false,
    };
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    if x.is_infinite() || y.is_infinite() {
        return x == y;
    }
    if x.abs() < min_normal && y.abs() < min_normal {
        return true;
    }
    (x - y).abs() <= rtol(elem) * x.abs().max(y.abs())
}

/// Both elements are NaNs (of any payload).
fn both_nan(elem: Scalar, a: &[u8], b: &[u8]) -> bool {
    let nan = |c: &[u8]| match elem {
        Scalar::F64 => f64::from_le_bytes(word(c)).is_nan(),
        Scalar::F32 => f32::from_le_bytes(word(c)).is_nan(),
        Scalar::F16 => half::f16::from_le_bytes(word(c)).is_nan(),
        Scalar::BF16 => half::bf16::from_le_bytes(word(c)).is_nan(),
        _ => false,
    };
    nan(a) && nan(b)
}

/// Whether every float element of the launch's arrays and tensors is an
/// integer (the 8-bit floats of a tensor by their values): then sums of
/// products of them are exact in any order.
pub fn integer_valued(launch: &super::Launch) -> bool {
    launch.args.iter().all(|arg| {
        let (a, fp8) = match arg {
            super::ArgValue::Array(a) => (a, None),
            super::ArgValue::TensorMap { array, map, .. } => (array, map.elem.fp8()),
            super::ArgValue::Scalar { .. } | super::ArgValue::Bytes(_) => return true,
        };
        let size = a.elem.size() as usize;
        a.data.chunks_exact(size.max(1)).all(|c| {
            let x = match (fp8, a.elem) {
                (Some(f), _) => f.decode(c.first().copied().unwrap_or(0)),
                (None, Scalar::F64) => f64::from_le_bytes(word(c)),
                (None, Scalar::F32) => f64::from(f32::from_le_bytes(word(c))),
                (None, Scalar::F16) => half::f16::from_le_bytes(word(c)).to_f64(),
                (None, Scalar::BF16) => half::bf16::from_le_bytes(word(c)).to_f64(),
                _ => return true,
            };
            x.is_finite() && x == x.trunc()
        })
    })
}

fn word<const N: usize>(c: &[u8]) -> [u8; N] {
    let mut w = [0u8; N];
    for (d, s) in w.iter_mut().zip(c) {
        *d = *s;
    }
    w
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.shape {
            return write!(f, "`{}`: {why}", self.name);
        }
        let rule = if self.elem.is_float() && self.exact {
            " (compared bit for bit: the inputs are integer-valued)".to_string()
        } else if self.elem.is_float() {
            format!(" beyond a relative tolerance of {:e}", rtol(self.elem))
        } else {
            String::new()
        };
        write!(
            f,
            "`{}` ({}[{}]): {} {} between the GPU and the simulator",
            self.name,
            self.elem,
            self.len,
            self.count,
            if self.count == 1 {
                format!("element differs{rule}")
            } else {
                format!("elements differ{rule}")
            }
        )?;
        for m in &self.first {
            write!(f, "\n  [{}] gpu {}, sim {}", m.index, m.gpu, m.sim)?;
        }
        if self.count > self.first.len() {
            write!(f, "\n  ... and {} more", self.count - self.first.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr<T: Copy, const N: usize>(
        name: &str,
        elem: Scalar,
        xs: &[T],
        f: fn(T) -> [u8; N],
    ) -> Array {
        Array {
            name: name.into(),
            elem,
            data: xs.iter().flat_map(|&x| f(x)).collect(),
            writable: true,
        }
    }

    #[test]
    fn integer_valued_tensor_core_results_compare_bit_for_bit() {
        let g = arr("c", Scalar::F32, &[3.0f32, 1e6], f32::to_le_bytes);
        let s = arr("c", Scalar::F32, &[3.0f32, 1e6 + 0.0625], f32::to_le_bytes);
        // Within f32's tolerance ...
        assert!(compare(std::slice::from_ref(&g), std::slice::from_ref(&s)).is_empty());
        // ... but not the same bits.
        let d = compare_with(std::slice::from_ref(&g), &[s], true);
        assert_eq!(
            d[0].to_string(),
            "`c` (f32[2]): 1 element differs (compared bit for bit: the inputs are integer-valued) between the GPU and the simulator\n  [1] gpu 1000000.0, sim 1000000.06"
        );
        let nan = arr("c", Scalar::F32, &[f32::NAN], f32::to_le_bytes);
        let other = arr("c", Scalar::F32, &[-f32::NAN], f32::to_le_bytes);
        assert!(compare_with(&[nan], &[other], true).is_empty());
        // Which launches are integer-valued.
        let launch = |a: Array| super::super::Launch {
            kernel: "k".into(),
            grid: [1, 1, 1],
            block: [1, 1, 1],
            cluster: [1, 1, 1],
            dynamic_shared: 0,
            args: vec![super::super::ArgValue::Array(a)],
            cooperative: false,
        };
        assert!(integer_valued(&launch(g)));
        assert!(!integer_valued(&launch(arr(
            "x",
            Scalar::BF16,
            &[0x3fc0u16],
            u16::to_le_bytes
        ))));
        assert!(integer_valued(&launch(arr(
            "x",
            Scalar::BF16,
            &[0xc040u16],
            u16::to_le_bytes
        ))));
        assert!(integer_valued(&launch(arr(
            "i",
            Scalar::I32,
            &[7i32],
            i32::to_le_bytes
        ))));
        let p = super::super::ParamSig {
            name: "m".into(),
            kind: super::super::ParamKind::PtxTensorMap,
        };
        let half = super::super::value::parse(&p, "tmap:e4m3:fill:2,16:0.5:box=2,16").unwrap();
        let two = super::super::value::parse(&p, "tmap:e4m3:fill:2,16:2:box=2,16").unwrap();
        let with = |a| super::super::Launch {
            args: vec![a],
            ..launch(arr("i", Scalar::I32, &[7i32], i32::to_le_bytes))
        };
        assert!(!integer_valued(&with(half)));
        assert!(integer_valued(&with(two)));
    }

    #[test]
    fn equal_arrays_agree() {
        let a = arr("y", Scalar::U32, &[1u32, 2, 3], u32::to_le_bytes);
        assert!(compare(std::slice::from_ref(&a), std::slice::from_ref(&a)).is_empty());
    }

    #[test]
    fn integers_are_exact_and_the_first_indices_are_reported() {
        let g = arr(
            "y",
            Scalar::I32,
            &(0..100).collect::<Vec<i32>>(),
            i32::to_le_bytes,
        );
        let mut v: Vec<i32> = (0..100).collect();
        for i in [3, 10, 11, 12, 50, 60, 99] {
            v[i] += 1;
        }
        let s = arr("y", Scalar::I32, &v, i32::to_le_bytes);
        let d = compare(&[g], &[s]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].count, 7);
        assert_eq!(
            d[0].to_string(),
            "`y` (i32[100]): 7 elements differ between the GPU and the simulator\n  \
             [3] gpu 3, sim 4\n  [10] gpu 10, sim 11\n  [11] gpu 11, sim 12\n  \
             [12] gpu 12, sim 13\n  [50] gpu 50, sim 51\n  ... and 2 more"
        );
    }

    #[test]
    fn floats_within_the_tolerance_agree() {
        let g = arr(
            "y",
            Scalar::F32,
            &[1.0f32, 1000.0, 0.0, f32::NAN, 1e-40],
            f32::to_le_bytes,
        );
        let s = arr(
            "y",
            Scalar::F32,
            &[1.0f32 + 5e-6, 1000.0 * (1.0 + 9e-6), -0.0, f32::NAN, 0.0],
            f32::to_le_bytes,
        );
        assert!(compare(std::slice::from_ref(&g), &[s]).is_empty());
        let s = arr(
            "y",
            Scalar::F32,
            &[1.0f32 + 2e-5, 1000.0, 0.0, 1.0, 1e-40],
            f32::to_le_bytes,
        );
        let d = compare(&[g], &[s]);
        assert_eq!(d[0].count, 2);
        assert_eq!(
            d[0].to_string(),
            "`y` (f32[5]): 2 elements differ beyond a relative tolerance of 1e-5 between the GPU and the simulator\n  \
             [0] gpu 1.0, sim 1.00002\n  [3] gpu nan, sim 1.0"
        );
        // Infinities must match exactly.
        let g = arr("z", Scalar::F64, &[f64::INFINITY], f64::to_le_bytes);
        let s = arr("z", Scalar::F64, &[f64::MAX], f64::to_le_bytes);
        assert_eq!(compare(&[g], &[s]).len(), 1);
        // Half precision has a looser tolerance.
        let h = |x: f64| half::f16::from_f64(x).to_bits();
        let g = arr("h", Scalar::F16, &[h(1.0)], u16::to_le_bytes);
        let s = arr("h", Scalar::F16, &[h(1.0009765625)], u16::to_le_bytes);
        assert!(compare(std::slice::from_ref(&g), &[s]).is_empty());
        let s = arr("h", Scalar::F16, &[h(1.005)], u16::to_le_bytes);
        assert_eq!(compare(&[g], &[s]).len(), 1);
    }

    #[test]
    fn shape_problems_and_read_only_arrays() {
        let g = arr("y", Scalar::F32, &[1.0f32, 2.0], f32::to_le_bytes);
        let short = arr("y", Scalar::F32, &[1.0f32], f32::to_le_bytes);
        assert_eq!(
            compare(std::slice::from_ref(&g), &[short])[0].to_string(),
            "`y`: the GPU's is f32[2], the simulator's f32[1]"
        );
        assert_eq!(
            compare(std::slice::from_ref(&g), &[])[0].to_string(),
            "`y`: the simulator returned no such array"
        );
        let mut ro = g;
        ro.writable = false;
        assert!(compare(&[ro], &[]).is_empty());
    }
}
