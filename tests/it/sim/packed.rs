//! Packed half math and the storage conversions in the simulator, from
//! kdsl programs, against references computed here: each half of an
//! `f16x2`/`bf16x2` operation with the `half` crate (rounded once from the
//! exact `f64` result), every fp8 code and edge values through
//! `common::gen_expr::{fp8_value, storage_round}`. On sm_80 `bf16x2`
//! arithmetic is the `fma.rn.bf16x2` forms, on sm_90 `add.rn.bf16x2`: both
//! must give the reference's bits. Folding is `check::conversions` and the
//! generated expressions of `sim::generated`.

use crate::common::for_target;
use crate::common::gen_expr::{fp8_value, storage_round};
use crate::common::sim::*;
use half::{bf16, f16};
use kdsl::target::Target;
use kdsl::types::Scalar;

/// Half values worth testing: signed zeros, ones, values whose sums and
/// products round, subnormals, the largest finite, infinities and NaN,
/// then pseudo-random bit patterns.
fn half_bits(n: usize, seed: u64, bf: bool) -> Vec<u16> {
    let edges: [u16; 14] = if bf {
        [
            0x0000, 0x8000, 0x3f80, 0xbf80, 0x3f81, 0x4049, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x7f80,
            0xff80, 0x7fc0, 0x3c00,
        ]
    } else {
        [
            0x0000, 0x8000, 0x3c00, 0xbc00, 0x3c01, 0x4248, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7c00,
            0xfc00, 0x7e00, 0x1400,
        ]
    };
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 3 == 0 {
                edges[(x % 14) as usize]
            } else if i % 3 == 1 {
                // Moderate values: exponents near 0, so results stay finite.
                let e = if bf {
                    0x3c00 + (x as u16 & 0x7ff)
                } else {
                    0x3000 + (x as u16 & 0x1fff)
                };
                e | (x as u16 & 0x8000)
            } else {
                x as u16
            }
        })
        .collect()
}

fn value(bits: u16, bf: bool) -> f64 {
    if bf {
        bf16::from_bits(bits).to_f64()
    } else {
        f16::from_bits(bits).to_f64()
    }
}

/// `x` (exact, or rounded to odd in the last place) rounded once to the
/// half format; NaN as NaN.
fn round(x: f64, bf: bool) -> u16 {
    // f64 → f32 to odd, then once to the half: a correct single rounding.
    let r = x as f32;
    let r = if !x.is_finite() || f64::from(r) == x {
        r
    } else {
        let tz = if f64::from(r).abs() > x.abs() {
            f32::from_bits(r.to_bits() - 1)
        } else {
            r
        };
        f32::from_bits(tz.to_bits() | 1)
    };
    if bf {
        bf16::from_f32(r).to_bits()
    } else {
        f16::from_f32(r).to_bits()
    }
}

/// `a * b + c` of halves, the sum made exact to odd (TwoSum's error).
fn fma_exact(a: f64, b: f64, c: f64) -> f64 {
    let p = a * b;
    let s = p + c;
    if !s.is_finite() {
        return s;
    }
    let bp = s - c;
    let err = (p - bp) + (c - (s - bp));
    if err == 0.0 {
        return s;
    }
    let tz = if (err > 0.0) == (s > 0.0) {
        s
    } else {
        f64::from_bits(s.to_bits() - 1)
    };
    f64::from_bits(tz.to_bits() | 1)
}

/// `min.f16x2`: a NaN operand is ignored (NaN when both are), -0 < +0.
fn min_max(a: f64, b: f64, max: bool) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if max == a.is_sign_positive() {
                a
            } else {
                b
            }
        }
        _ if (a > b) == max => a,
        _ => b,
    }
}

/// The same half, a NaN for a NaN.
fn same(got: u16, want: u16, bf: bool) -> bool {
    let nan = |h: u16| value(h, bf).is_nan();
    if nan(want) {
        nan(got)
    } else {
        got == want
    }
}

const PACKED: &str = r#"
kernel packed(x: global [T2], y: global [T2], z: global [T2], f: global [f32],
              out: global mut [T2], halves: global mut [T]) block(64) {
    let i = block_idx.x * 64 + thread_idx.x;
    let a = x[i];
    let b = y[i];
    let c = z[i];
    let n = 64 * grid_dim.x;
    out[i] = a + b;
    out[n + i] = a - b;
    out[2 * n + i] = a * b;
    out[3 * n + i] = fma(a, b, c);
    out[4 * n + i] = min(a, b);
    out[5 * n + i] = max(a, b);
    out[6 * n + i] = -a;
    out[7 * n + i] = abs(b);
    out[8 * n + i] = T2(f[2 * i], f[2 * i + 1]);
    out[9 * n + i] = T2(b.hi, a.lo);
    out[10 * n + i] = select(a.lo == a.lo, shfl_xor(c, 1), a);
    halves[i] = c.hi;
}
"#;

/// Every packed operation on edge and random halves, on sm_80 and sm_90,
/// both pair types, equal to the reference half by half.
#[test]
fn packed_arithmetic_equals_the_reference() {
    let blocks = 4usize;
    let n = 64 * blocks;
    for (t, bf) in [("f16", false), ("bf16", true)] {
        let src = PACKED
            .replace("T2", &format!("{t}x2"))
            .replace("[T]", &format!("[{t}]"));
        let pair = if bf { Scalar::BF16x2 } else { Scalar::F16x2 };
        let half = if bf { Scalar::BF16 } else { Scalar::F16 };
        let [xs, ys, zs] = [1, 2, 3].map(|s| half_bits(2 * n, s, bf));
        let fs: Vec<f32> = half_bits(2 * n, 4, false)
            .iter()
            .enumerate()
            .map(|(i, h)| f16::from_bits(*h).to_f32() * if i % 5 == 0 { 1.0009765 } else { 1.0 })
            .collect();
        let bytes = |v: &[u16]| v.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
        for target in [Target::Sm80, Target::Sm90] {
            let k = kdsl_str_with("packed.kdsl", &src, &for_target(target));
            let l = launch(
                "packed",
                blocks as u32,
                64,
                1,
                vec![
                    array("x", pair, bytes(&xs)),
                    array("y", pair, bytes(&ys)),
                    array("z", pair, bytes(&zs)),
                    f32s("f", &fs),
                    array("out", pair, vec![0; 4 * 11 * n]),
                    array("halves", half, vec![0; 2 * n]),
                ],
            );
            let o = run_clean(&k, &l);
            let out: Vec<u16> = o.arrays[4]
                .data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            let halves: Vec<u16> = o.arrays[5]
                .data
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            let mut bad = Vec::new();
            for i in 0..n {
                for h in 0..2 {
                    let (a, b, c) = (xs[2 * i + h], ys[2 * i + h], zs[2 * i + h]);
                    let (av, bv, cv) = (value(a, bf), value(b, bf), value(c, bf));
                    let partner = zs[2 * (i ^ 1) + h];
                    let want = [
                        round(av + bv, bf),
                        round(av - bv, bf),
                        round(av * bv, bf),
                        round(fma_exact(av, bv, cv), bf),
                        round(min_max(av, bv, false), bf),
                        round(min_max(av, bv, true), bf),
                        a ^ 0x8000,
                        b & 0x7fff,
                        round(f64::from(fs[2 * i + h]), bf),
                        if h == 0 { ys[2 * i + 1] } else { xs[2 * i] },
                        // `a.lo == a.lo` is false for a NaN low half.
                        if value(xs[2 * i], bf).is_nan() {
                            a
                        } else {
                            partner
                        },
                    ];
                    for (op, w) in want.iter().enumerate() {
                        let got = out[2 * (op * n + i) + h];
                        if !same(got, *w, bf) {
                            bad.push(format!(
                                "{t}x2 {target:?} op {op} element {i} half {h}: {a:#06x} {b:#06x} {c:#06x} gave {got:#06x}, want {w:#06x}"
                            ));
                        }
                    }
                }
                if halves[i] != zs[2 * i + 1] {
                    bad.push(format!("{t} .hi of element {i}"));
                }
            }
            assert!(
                bad.is_empty(),
                "{} differences:\n{}",
                bad.len(),
                bad[..bad.len().min(20)].join("\n")
            );
        }
    }
}

const FP8: &str = r#"
kernel fp8(codes: global [F8], f: global [f32], h: global [f16], b: global [bf16],
           to32: global mut [f32], to16: global mut [f16], tob: global mut [bf16],
           from32: global mut [F8], from16: global mut [F8], fromb: global mut [F8],
           pairs: global mut [F8], t: global mut [tf32]) block(256) {
    let i = thread_idx.x;
    let c = codes[i];
    to32[i] = c as f32;
    to16[i] = c as f16;
    tob[i] = c as bf16;
    from32[i] = f[i] as F8;
    from16[i] = h[i] as F8;
    fromb[i] = b[i] as F8;
    if i < 128 {
        store2(pairs[2 * i], f[2 * i] as F8, f[2 * i + 1] as F8);
    }
    t[i] = f[i] as tf32;
}
"#;

/// Every fp8 code widens exactly; `f32`, `f16` and `bf16` values (edges
/// and random bits) narrow to the reference's byte; `store2` of two
/// conversions is one packed conversion with the same bytes; `tf32`
/// rounds ties away. On sm_89 (PTX 8.1) and sm_90.
#[test]
fn fp8_and_tf32_conversions_equal_the_reference() {
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let edges = [
        448.0f32,
        464.0,
        480.0,
        57344.0,
        61440.0,
        1e30,
        f32::INFINITY,
        -f32::INFINITY,
        f32::NAN,
        0.0,
        -0.0,
        1.0625,
        1.1875,
        0.001953125,
        0.0009765625,
        0.0029296875,
        2f32.powi(-16),
        2f32.powi(-17),
        3.0 * 2f32.powi(-17),
        -3.3,
        f32::MAX,
        f32::from_bits(1),
        1.0 + 1.0 / 2048.0,
        1.0 + 3.0 / 2048.0,
    ];
    let fs: Vec<f32> = (0..256)
        .map(|i| {
            if i < edges.len() {
                edges[i]
            } else if i % 2 == 0 {
                f32::from_bits(next() as u32)
            } else {
                // Within the fp8 ranges, where rounding is interesting.
                let m = (next() % 2000) as f32 / 100.0 - 10.0;
                m * 2f32.powi((next() % 24) as i32 - 12)
            }
        })
        .collect();
    let hs: Vec<u16> = half_bits(256, 7, false);
    let bs: Vec<u16> = half_bits(256, 8, true);
    for fmt in ["e4m3", "e5m2"] {
        let elem = if fmt == "e4m3" {
            Scalar::E4M3
        } else {
            Scalar::E5M2
        };
        let src = FP8.replace("F8", fmt);
        for target in [Target::Sm89, Target::Sm90] {
            let k = kdsl_str_with("fp8.kdsl", &src, &for_target(target));
            let u16s = |v: &[u16]| v.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
            let l = launch(
                "fp8",
                1,
                256,
                1,
                vec![
                    array("codes", elem, (0..=255u8).collect()),
                    f32s("f", &fs),
                    array("h", Scalar::F16, u16s(&hs)),
                    array("b", Scalar::BF16, u16s(&bs)),
                    f32s("to32", &[0.0; 256]),
                    array("to16", Scalar::F16, vec![0; 512]),
                    array("tob", Scalar::BF16, vec![0; 512]),
                    array("from32", elem, vec![0; 256]),
                    array("from16", elem, vec![0; 256]),
                    array("fromb", elem, vec![0; 256]),
                    array("pairs", elem, vec![0; 256]),
                    array("t", Scalar::TF32, vec![0; 1024]),
                ],
            );
            let o = run_clean(&k, &l);
            let a = |k: usize| &o.arrays[k].data;
            let u16_at = |k: usize, i: usize| u16::from_le_bytes([a(k)[2 * i], a(k)[2 * i + 1]]);
            let code = |x: f64| -> u8 {
                let r = storage_round(x, fmt);
                if r.is_nan() {
                    return 0x7f;
                }
                (0u8..=255)
                    .find(|c| {
                        let v = fp8_value(*c, fmt);
                        v == r && v.is_sign_negative() == r.is_sign_negative()
                    })
                    .unwrap_or(0xff)
            };
            let mut bad = Vec::new();
            for i in 0..256usize {
                let v = fp8_value(i as u8, fmt);
                let got32 = f32::from_le_bytes(a(4)[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]));
                let ok = |got: f64| {
                    if v.is_nan() {
                        got.is_nan()
                    } else {
                        got == v && got.is_sign_negative() == v.is_sign_negative()
                    }
                };
                if !ok(f64::from(got32)) {
                    bad.push(format!("{i:#04x} as f32: {got32}, want {v}"));
                }
                if !ok(f16::from_bits(u16_at(5, i)).to_f64()) {
                    bad.push(format!("{i:#04x} as f16"));
                }
                if !ok(bf16::from_bits(u16_at(6, i)).to_f64()) {
                    bad.push(format!("{i:#04x} as bf16"));
                }
                for (k, x, what) in [
                    (7, f64::from(fs[i]), "f32"),
                    (8, value(hs[i], false), "f16"),
                    (9, value(bs[i], true), "bf16"),
                ] {
                    if a(k)[i] != code(x) {
                        bad.push(format!(
                            "{x} ({what}) as {fmt}: {:#04x}, want {:#04x}",
                            a(k)[i],
                            code(x)
                        ));
                    }
                }
                if a(10)[i] != code(f64::from(fs[i])) {
                    bad.push(format!("store2 byte {i}: {:#04x}", a(10)[i]));
                }
                let t = u32::from_le_bytes(a(11)[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]));
                let want = storage_round(f64::from(fs[i]), "tf32") as f32;
                let t_ok = if want.is_nan() {
                    f32::from_bits(t).is_nan()
                } else {
                    t == want.to_bits()
                };
                if !t_ok {
                    bad.push(format!(
                        "{} as tf32: {t:#010x}, want {:#010x}",
                        fs[i],
                        want.to_bits()
                    ));
                }
            }
            assert!(
                bad.is_empty(),
                "{fmt} {target:?}: {} differences:\n{}",
                bad.len(),
                bad[..bad.len().min(20)].join("\n")
            );
        }
    }
}
