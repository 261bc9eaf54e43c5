//! `--dump NAME`: an array as text on stdout, summarised like NumPy when
//! long (the first and last three elements of arrays over 1000 elements),
//! in full with `--dump-all`.
//!
//! ```text
//! y: f32[4096] = [0.0, 2.0, 4.0, ..., 8186.0, 8188.0, 8190.0]
//! ```
//!
//! Floats are written in the shortest form that reads back to the same
//! value of their type (`0.1`, `1e-8`, `nan`, `inf`), integers in decimal,
//! `bool` as `true`/`false`. Long lines wrap at 80 columns.

use super::Array;
use crate::types::Scalar;

/// NumPy's `threshold`: longer arrays are summarised.
pub const SUMMARY_THRESHOLD: usize = 1000;
/// NumPy's `edgeitems`: elements shown at each end of a summary.
pub const EDGE_ITEMS: usize = 3;
const WIDTH: usize = 80;

/// The text of `a` for `--dump` (ends with a newline).
pub fn format(a: &Array, full: bool) -> String {
    let n = a.len();
    let size = a.elem.size() as usize;
    let item = |i: usize| {
        a.data
            .get(i * size..(i + 1) * size)
            .map_or_else(|| "?".to_string(), |b| element(a.elem, b))
    };
    let items: Vec<String> = if full || n <= SUMMARY_THRESHOLD {
        (0..n).map(item).collect()
    } else {
        (0..EDGE_ITEMS)
            .map(item)
            .chain(std::iter::once("...".to_string()))
            .chain((n - EDGE_ITEMS..n).map(item))
            .collect()
    };
    let mut out = format!("{}: {}[{n}] = [", a.name, a.elem);
    let mut col = out.chars().count();
    let indent = "    ";
    for (i, it) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!("{it}, ")
        } else {
            it.clone()
        };
        let fits = col + piece.trim_end().len() < WIDTH;
        if !fits && i > 0 {
            // Break before this element; drop the space after the comma.
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
            out.push_str(indent);
            col = indent.len();
        }
        out.push_str(&piece);
        col += piece.len();
    }
    out.push_str("]\n");
    out
}

/// One element, from its little-endian bytes.
pub fn element(elem: Scalar, b: &[u8]) -> String {
    let mut w = [0u8; 8];
    for (d, s) in w.iter_mut().zip(b) {
        *d = *s;
    }
    let bits = u64::from_le_bytes(w);
    match elem {
        Scalar::Bool => (bits != 0).to_string(),
        Scalar::I8 => (bits as u8 as i8).to_string(),
        Scalar::U8 => (bits as u8).to_string(),
        Scalar::I16 => (bits as u16 as i16).to_string(),
        Scalar::U16 => (bits as u16).to_string(),
        Scalar::I32 => (bits as u32 as i32).to_string(),
        Scalar::U32 => (bits as u32).to_string(),
        Scalar::I64 => (bits as i64).to_string(),
        Scalar::U64 => bits.to_string(),
        Scalar::E4M3 | Scalar::E5M2 => {
            let f = if elem == Scalar::E5M2 {
                crate::fp8::Fp8::E5M2
            } else {
                crate::fp8::Fp8::E4M3
            };
            let x = f.decode(bits as u8);
            float(x, |y| y == x)
        }
        Scalar::F32 | Scalar::TF32 => float(f64::from(f32::from_bits(bits as u32)), |y| {
            (y as f32).to_bits() == bits as u32
        }),
        Scalar::F64 => float(f64::from_bits(bits), |y| y.to_bits() == bits),
        Scalar::F16 => float(half::f16::from_bits(bits as u16).to_f64(), |y| {
            half::f16::from_f64(y).to_bits() == bits as u16
        }),
        Scalar::BF16 => float(half::bf16::from_bits(bits as u16).to_f64(), |y| {
            half::bf16::from_f64(y).to_bits() == bits as u16
        }),
        // `lo/hi`, as `--arg` takes it.
        Scalar::F16x2 | Scalar::BF16x2 => {
            let half = elem.half_of().unwrap_or(Scalar::F16);
            let lo = element(half, &(bits as u16).to_le_bytes());
            let hi = element(half, &((bits >> 16) as u16).to_le_bytes());
            format!("{lo}/{hi}")
        }
    }
}

/// The shortest decimal that reads back to the same value of the type
/// (`same` says whether a candidate does).
fn float(x: f64, same: impl Fn(f64) -> bool) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    for digits in 0..17 {
        let text = format!("{x:.digits$e}");
        if let Ok(y) = text.parse::<f64>() {
            if same(y) {
                return format!("{y:?}");
            }
        }
    }
    format!("{x:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_array(name: &str, xs: &[f32]) -> Array {
        Array {
            name: name.into(),
            elem: Scalar::F32,
            data: xs.iter().flat_map(|x| x.to_le_bytes()).collect(),
            writable: true,
        }
    }

    #[test]
    fn short_arrays_in_full() {
        let a = f32_array("y", &[0.0, 0.1, -2.5, 1e-8, f32::NAN, f32::NEG_INFINITY]);
        assert_eq!(
            format(&a, false),
            "y: f32[6] = [0.0, 0.1, -2.5, 1e-8, nan, -inf]\n"
        );
        let e = f32_array("e", &[]);
        assert_eq!(format(&e, false), "e: f32[0] = []\n");
    }

    #[test]
    fn long_arrays_are_summarised_unless_full() {
        let xs: Vec<f32> = (0..4096).map(|i| (2 * i) as f32).collect();
        let a = f32_array("y", &xs);
        assert_eq!(
            format(&a, false),
            "y: f32[4096] = [0.0, 2.0, 4.0, ..., 8186.0, 8188.0, 8190.0]\n"
        );
        let full = format(&a, true);
        assert!(full.contains("4094.0, "), "{}", &full[..200]);
        assert!(full.lines().all(|l| l.chars().count() <= 80));
        assert_eq!(
            full.matches(", ").count() + full.matches(",\n").count(),
            4095
        );
        // Exactly at the threshold: still in full.
        let t = f32_array("t", &vec![1.0; 1000]);
        assert!(!format(&t, false).contains("..."));
        let t = f32_array("t", &vec![1.0; 1001]);
        assert!(format(&t, false).contains("..."));
    }

    #[test]
    fn every_element_type() {
        assert_eq!(element(Scalar::Bool, &[1]), "true");
        assert_eq!(element(Scalar::I32, &(-5i32).to_le_bytes()), "-5");
        assert_eq!(element(Scalar::U32, &u32::MAX.to_le_bytes()), "4294967295");
        assert_eq!(
            element(Scalar::I64, &i64::MIN.to_le_bytes()),
            "-9223372036854775808"
        );
        assert_eq!(
            element(Scalar::U64, &u64::MAX.to_le_bytes()),
            "18446744073709551615"
        );
        assert_eq!(element(Scalar::F64, &0.1f64.to_le_bytes()), "0.1");
        // f16(0.1) is 0.0999755859375; the shortest text that reads back
        // to it in f16 is 0.1, as NumPy prints it.
        assert_eq!(
            element(Scalar::F16, &half::f16::from_f64(0.1).to_le_bytes()),
            "0.1"
        );
        assert_eq!(element(Scalar::F16, &0x7bffu16.to_le_bytes()), "65500.0");
        assert_eq!(element(Scalar::BF16, &0x3f80u16.to_le_bytes()), "1.0");
        assert_eq!(
            element(Scalar::F32, &16777216f32.to_le_bytes()),
            "16777216.0"
        );
        assert_eq!(
            element(Scalar::F32, &3.4028235e38f32.to_le_bytes()),
            "3.4028235e38"
        );
    }
}
