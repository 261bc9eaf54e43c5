//! `rand:N:SEED`: reproducible random arrays, the same bytes for the same
//! seed on every machine and in every version of kdslc.
//!
//! The generator is PCG XSL RR 128/64 (`rand_pcg::Pcg64`, a fixed and
//! value-stable algorithm) with state `SEED` and PCG's default stream,
//! and one draw per element (`next_u64`; `next_u32` is its low 32 bits),
//! converted with integer arithmetic only:
//!
//! | element | value |
//! | --- | --- |
//! | `f32` | `(next_u32 >> 8) · 2⁻²⁴` |
//! | `f64` | `(next_u64 >> 11) · 2⁻⁵³` |
//! | `f16` | `(next_u32 >> 21) · 2⁻¹¹` |
//! | `bf16` | `(next_u32 >> 24) · 2⁻⁸` |
//! | `tf32` | `(next_u32 >> 22) · 2⁻¹⁰` (an `f32`) |
//! | `e4m3`, `e5m2` | the encoding `next_u32 mod 0x38` (`mod 0x3c`): the values below 1.0 |
//! | `i8`, `u8` | the low 8 bits of `next_u32` |
//! | `i16`, `u16` | the low 16 bits of `next_u32` |
//! | `i32`, `u32` | the 32 bits of `next_u32` |
//! | `i64`, `u64` | the 64 bits of `next_u64` |
//! | `bool` | the top bit of `next_u32` |
//! | `e4m3`, `e5m2` (tensors) | `(b >> 5) · 2⁻¹`, `b` the low 8 bits of `next_u32` |
//!
//! Floats are uniform in [0, 1) on a grid fine enough that every value is
//! exact in the type; integers are uniform over the whole type.
//!
//! Precisely, with 128-bit wrapping arithmetic, `M =
//! 0x2360ed051fc65da44385df649fccf645`, `INC = (STREAM << 1) | 1`: the
//! state starts as `s = (SEED + INC)·M + INC`; each draw is
//! `s = s·M + INC`, then `x = (s >> 64) ^ (s mod 2⁶⁴)` rotated right by
//! `s >> 122` bits.

use crate::types::Scalar;
use rand_core::RngCore;
use rand_pcg::Pcg64;

/// PCG's default stream (increment), as in the PCG reference code.
const STREAM: u128 = 0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96;

/// Appends `n` random elements of `elem` to `out` (little-endian).
pub fn fill(out: &mut Vec<u8>, elem: Scalar, n: usize, seed: u64) {
    let mut rng = Pcg64::new(u128::from(seed), STREAM);
    for _ in 0..n {
        match elem {
            // tf32: values in [0, 1) with 10 fraction bits, exact in tf32.
            Scalar::TF32 => {
                let x = (rng.next_u32() >> 22) as f32 * (1.0 / 1024.0);
                out.extend_from_slice(&x.to_le_bytes());
            }
            // fp8: the bits of a value in [0, 1) (exponent below the bias).
            Scalar::E4M3 => out.push((rng.next_u32() % 0x38) as u8),
            Scalar::E5M2 => out.push((rng.next_u32() % 0x3c) as u8),
            Scalar::F32 => {
                let x = (rng.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Scalar::F64 => {
                let x = (rng.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Scalar::F16 => {
                let x = f64::from(rng.next_u32() >> 21) / 2048.0;
                out.extend_from_slice(&half::f16::from_f64(x).to_bits().to_le_bytes());
            }
            Scalar::BF16 => {
                let x = f64::from(rng.next_u32() >> 24) / 256.0;
                out.extend_from_slice(&half::bf16::from_f64(x).to_bits().to_le_bytes());
            }
            // Two halves, each as a random `f16` or `bf16`.
            Scalar::F16x2 => {
                for _ in 0..2 {
                    let x = f64::from(rng.next_u32() >> 21) / 2048.0;
                    out.extend_from_slice(&half::f16::from_f64(x).to_bits().to_le_bytes());
                }
            }
            Scalar::BF16x2 => {
                for _ in 0..2 {
                    let x = f64::from(rng.next_u32() >> 24) / 256.0;
                    out.extend_from_slice(&half::bf16::from_f64(x).to_bits().to_le_bytes());
                }
            }
            Scalar::I8 | Scalar::U8 => out.push(rng.next_u32() as u8),
            Scalar::I16 | Scalar::U16 => {
                out.extend_from_slice(&(rng.next_u32() as u16).to_le_bytes())
            }
            Scalar::I32 | Scalar::U32 => out.extend_from_slice(&rng.next_u32().to_le_bytes()),
            Scalar::I64 | Scalar::U64 => out.extend_from_slice(&rng.next_u64().to_le_bytes()),
            Scalar::Bool => out.push((rng.next_u32() >> 31) as u8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_they_are_pinned() {
        let mut a = Vec::new();
        fill(&mut a, Scalar::U32, 4, 42);
        let mut b = Vec::new();
        fill(&mut b, Scalar::U32, 4, 42);
        assert_eq!(a, b);
        // Pinned: a change of generator or conversion must be deliberate
        // (and documented), since users keep seeds in scripts.
        let words: Vec<u32> = a
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut rng = Pcg64::new(42, STREAM);
        let direct: Vec<u32> = (0..4).map(|_| rng.next_u32()).collect();
        assert_eq!(words, direct);
        let mut c = Vec::new();
        fill(&mut c, Scalar::U32, 4, 43);
        assert_ne!(a, c);
    }

    #[test]
    fn reference_values() {
        let mut f = Vec::new();
        fill(&mut f, Scalar::F32, 3, 1);
        let mut w = Vec::new();
        fill(&mut w, Scalar::U32, 3, 1);
        // Each f32 is the top 24 bits of the same draw.
        for (x, c) in f32s(&f).iter().zip(w.chunks_exact(4)) {
            let u = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            assert_eq!(*x, (u >> 8) as f32 / 16_777_216.0);
        }
        assert_eq!(
            w,
            [142, 219, 135, 177, 94, 49, 135, 128, 179, 240, 190, 24],
            "the first three u32 of seed 1 changed (pinned from an independent \
             implementation of PCG XSL RR 128/64)"
        );
    }

    #[test]
    fn floats_are_in_the_unit_interval_and_spread() {
        for elem in [Scalar::F32, Scalar::F64, Scalar::F16, Scalar::BF16] {
            let mut v = Vec::new();
            fill(&mut v, elem, 4000, 7);
            let xs: Vec<f64> = match elem {
                Scalar::F32 => f32s(&v).into_iter().map(f64::from).collect(),
                Scalar::F64 => v
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
                Scalar::F16 => v
                    .chunks_exact(2)
                    .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
                    .collect(),
                _ => v
                    .chunks_exact(2)
                    .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
                    .collect(),
            };
            assert_eq!(xs.len(), 4000);
            assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)), "{elem}");
            let mean = xs.iter().sum::<f64>() / 4000.0;
            assert!((mean - 0.5).abs() < 0.03, "{elem}: mean {mean}");
            assert!(xs.iter().any(|&x| x < 0.05) && xs.iter().any(|&x| x > 0.95));
        }
        let mut b = Vec::new();
        fill(&mut b, Scalar::Bool, 1000, 3);
        assert!(b.iter().all(|&x| x <= 1));
        let ones = b.iter().filter(|&&x| x == 1).count();
        assert!((400..600).contains(&ones), "{ones}");
    }
}
