//! The storage conversions fold as the reference says: `as e4m3`,
//! `as e5m2` (round to nearest even, `.satfinite`) and `as tf32` (ties
//! away), and back to `f32`, `f16` and `bf16`. The reference
//! (`common::gen_expr::storage_round`, `fp8_value`) is written from the
//! formats' definitions by search over their values, independently of the
//! compiler's `fp8` module; the simulator's side is `sim::packed`.

use crate::common::gen_expr::{fp8_value, storage_round};
use kdsl::{compile_str, Options};
use proptest::prelude::*;

/// The immediates of a kernel's `st.global` instructions, in order.
fn stored(src: &str) -> Vec<u64> {
    let c = compile_str("t.kdsl", src, &Options::default());
    let errors: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
    let ptx = c
        .ptx
        .unwrap_or_else(|| panic!("no PTX for\n{src}\nerrors: {errors:?}"));
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix("st.global."))
        .map(|l| {
            let imm = l.trim_end_matches(';').rsplit(", ").next().unwrap_or("");
            let (hex, radix) = match imm.strip_prefix("0x").or_else(|| imm.strip_prefix("0f")) {
                Some(h) => (h, 16),
                None => (imm, 10),
            };
            u64::from_str_radix(hex, radix)
                .unwrap_or_else(|_| panic!("`{l}` does not store an immediate\n{ptx}"))
        })
        .collect()
}

/// An `f32` literal of `x` exactly (a NaN or an infinity as a division).
fn f32_literal(x: f64) -> String {
    if x.is_nan() {
        return "(0.0f32 / 0.0f32)".into();
    }
    if x.is_infinite() {
        return format!("({}1.0f32 / 0.0f32)", if x < 0.0 { "-" } else { "" });
    }
    let t = format!("{:e}", x.abs());
    format!("({}{t}f32)", if x.is_sign_negative() { "-" } else { "" })
}

/// The byte the reference gives for `x as fmt` (NaN: the conversion's
/// `0x7f`).
fn reference_code(x: f64, fmt: &str) -> u8 {
    let r = storage_round(x, fmt);
    if r.is_nan() {
        return 0x7f;
    }
    (0u8..=255)
        .find(|c| {
            let v = fp8_value(*c, fmt);
            v == r && v.is_sign_negative() == r.is_sign_negative()
        })
        .unwrap_or_else(|| panic!("{r} is no {fmt} value"))
}

#[test]
fn every_fp8_code_round_trips_through_f32_f16_and_bf16() {
    for fmt in ["e4m3", "e5m2"] {
        let codes: Vec<u8> = (0u8..=255)
            .filter(|c| fp8_value(*c, fmt).is_finite())
            .collect();
        let mut body = String::new();
        for (i, c) in codes.iter().enumerate() {
            let v = fp8_value(*c, fmt);
            body.push_str(&format!("    out[{i}] = {} as {fmt};\n", f32_literal(v)));
            body.push_str(&format!(
                "    back[{i}] = ({} as {fmt}) as f32;\n",
                f32_literal(v)
            ));
            body.push_str(&format!(
                "    half[{i}] = (({} as {fmt}) as f16) as f32;\n",
                f32_literal(v)
            ));
            body.push_str(&format!(
                "    brain[{i}] = (({} as {fmt}) as bf16) as f32;\n",
                f32_literal(v)
            ));
        }
        let src = format!(
            "kernel k(out: global mut [{fmt}], back: global mut [f32], half: global mut [f32], brain: global mut [f32]) block(1) {{\n{body}}}\n"
        );
        let got = stored(&src);
        assert_eq!(got.len(), 4 * codes.len());
        for (i, c) in codes.iter().enumerate() {
            let v = fp8_value(*c, fmt);
            let [code, back, half, brain] = [0, 1, 2, 3].map(|k| got[4 * i + k]);
            assert_eq!(code, u64::from(*c), "{v} as {fmt}");
            for (how, bits) in [("f32", back), ("f16", half), ("bf16", brain)] {
                assert_eq!(
                    bits,
                    u64::from((v as f32).to_bits()),
                    "({v} as {fmt}) as {how}"
                );
            }
        }
    }
}

/// Values at the edges of each format: the largest finite value, the
/// midpoint above it and beyond (`.satfinite`), infinities, NaN, the
/// smallest subnormal and the ties around it, the smallest normal, ties
/// between normals (to the even code).
fn edges(fmt: &str) -> Vec<f64> {
    let (max, min_sub, min_norm) = if fmt == "e5m2" {
        (57344.0, 2f64.powi(-16), 2f64.powi(-14))
    } else {
        (448.0, 2f64.powi(-9), 2f64.powi(-6))
    };
    let ulp_max = if fmt == "e5m2" { 8192.0 } else { 32.0 };
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        max,
        max + ulp_max / 2.0,
        max + ulp_max / 2.0 - 1.0 / 64.0,
        max + ulp_max,
        1e30,
        f64::from(f32::MAX),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        min_sub,
        min_sub / 2.0,
        min_sub / 2.0 + min_sub / 1024.0,
        min_sub * 1.5,
        min_sub * 2.5,
        min_norm,
        min_norm - min_sub / 2.0,
        1.0625,
        1.1875,
        1.125 + 1.0 / 32.0,
        -3.3,
        0.1,
        f64::from(f32::from_bits(1)),
    ];
    let negated: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

#[test]
fn f32_values_round_to_fp8_as_the_reference_says() {
    for fmt in ["e4m3", "e5m2"] {
        let xs: Vec<f64> = edges(fmt)
            .into_iter()
            .map(|x| f64::from(x as f32))
            .collect();
        let body: String = xs
            .iter()
            .enumerate()
            .map(|(i, x)| format!("    out[{i}] = {} as {fmt};\n", f32_literal(*x)))
            .collect();
        let src = format!("kernel k(out: global mut [{fmt}]) block(1) {{\n{body}}}\n");
        let got = stored(&src);
        for (x, g) in xs.iter().zip(got) {
            assert_eq!(g, u64::from(reference_code(*x, fmt)), "{x} as {fmt}");
        }
    }
}

#[test]
fn tf32_rounds_ties_away_and_overflows_to_infinity() {
    let xs = [
        1.0,
        1.0 + 2f64.powi(-11),                  // a tie: away, up
        1.0 + 2f64.powi(-11) - 2f64.powi(-23), // below the tie: down
        -(1.0 + 2f64.powi(-11)),               // away from zero, down
        1.0 + 3.0 * 2f64.powi(-11),            // a tie at an odd quantum: away
        f64::from(f32::MAX),                   // rounds past the largest: infinity
        f64::from(f32::from_bits(0x7f7f_efff)),
        f64::from(f32::from_bits(1)),      // the smallest subnormal: 0
        f64::from(f32::from_bits(0x1000)), // a subnormal tie: away
        f64::INFINITY,
        -0.0,
        0.1,
    ];
    let body: String = xs
        .iter()
        .enumerate()
        .map(|(i, x)| format!("    out[{i}] = ({} as tf32) as f32;\n", f32_literal(*x)))
        .collect();
    let got = stored(&format!(
        "kernel k(out: global mut [f32]) block(1) {{\n{body}}}\n"
    ));
    for (x, g) in xs.iter().zip(got) {
        let want = storage_round(*x, "tf32") as f32;
        assert_eq!(
            g,
            u64::from(want.to_bits()),
            "{x} as tf32: {}",
            f32::from_bits(g as u32)
        );
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(256))]

    /// Random `f32` bit patterns fold to the reference's byte.
    #[test]
    fn random_f32_values_fold_to_the_reference(bits in any::<u32>(), e5m2 in any::<bool>()) {
        let fmt = if e5m2 { "e5m2" } else { "e4m3" };
        let x = f64::from(f32::from_bits(bits));
        let got = stored(&format!(
            "kernel k(out: global mut [{fmt}]) block(1) {{ out[0] = {} as {fmt}; }}\n",
            f32_literal(x)
        ));
        prop_assert_eq!(got, vec![u64::from(reference_code(x, fmt))], "{} as {}", x, fmt);
    }
}
