//! Constants compute what the GPU computes: every folded value is, bit for
//! bit, what the emitted instructions compute at run time.
//!
//! The property test compiles generated expressions over every scalar type
//! (`common::gen_expr`) as a `const` item and inline in a kernel, reads the
//! folded value out of the PTX, and compares it with the generator's
//! reference evaluator (NaN compared as "a NaN", every other value by its
//! bits, signed zeros included). The other tests pin each named edge case
//! and the PTX the writer emits for it.

use crate::common::gen_expr::{self, describe, GenExpr, Ty, Val};
use crate::common::ptxas;
use kdsl::{compile_str, Compilation, Options};
use proptest::prelude::*;
use std::collections::HashMap;

fn compile(src: &str) -> Compilation {
    compile_str("t.kdsl", src, &Options::default())
}

fn error_codes(c: &Compilation) -> Vec<String> {
    let mut codes: Vec<String> = c
        .diagnostics
        .iter()
        .filter(|d| d.severity == kdsl::diagnostics::Severity::Error)
        .map(|d| d.code.to_string())
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

fn ptx_of(src: &str) -> String {
    let c = compile(src);
    let errors: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
    c.ptx
        .unwrap_or_else(|| panic!("no PTX for\n{src}\nerrors: {errors:?}"))
}

/// The value a kernel stores with its (only) `st.global`, when that is a
/// constant: an immediate, or a register set from one by `mov` (and, for
/// `bool`, `selp` of a `mov.pred`). `None` when it was computed.
fn stored_constant(ptx: &str, ty: Ty) -> Option<Val> {
    let mut defs: HashMap<&str, &str> = HashMap::new();
    let mut stored = None;
    for line in ptx.lines().map(str::trim) {
        let Some(body) = line.strip_suffix(';') else {
            continue;
        };
        let (op, args) = body.split_once(' ').unwrap_or((body, ""));
        let args: Vec<&str> = args.split(',').map(str::trim).collect();
        if op.starts_with("mov.") && args.len() == 2 {
            defs.insert(args[0], args[1]);
        } else if op == "selp.b32" && args.len() == 4 && args[1] == "1" && args[2] == "0" {
            defs.insert(args[0], args[3]);
        } else if op.starts_with("st.global.") && args.len() == 2 {
            stored = Some(args[1]);
        }
    }
    let mut operand = stored?;
    while operand.starts_with('%') {
        operand = defs.get(operand)?;
    }
    Some(Val::from_bits(ty, immediate_bits(operand, ty)?))
}

/// The bits of a PTX immediate in `ty`'s width.
fn immediate_bits(text: &str, ty: Ty) -> Option<u64> {
    let mask = if ty.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits()) - 1
    };
    let bits = if let Some(hex) = text.strip_prefix("0f").or_else(|| text.strip_prefix("0d")) {
        u64::from_str_radix(hex, 16).ok()?
    } else if let Some(hex) = text.strip_prefix("0x") {
        u64::from_str_radix(hex, 16).ok()?
    } else {
        text.parse::<i128>().ok()? as u64
    };
    Some(bits & mask)
}

/// Compiles `source` (storing one value of type `ty`) and checks the stored
/// constant, or the errors, against `g`'s reference value. `folded` says
/// whether the store must be a constant.
fn check(g: &GenExpr, source: &str, folded: bool) -> Result<(), TestCaseError> {
    let c = compile(source);
    let codes = error_codes(&c);
    match g.value {
        Err(faults) => {
            let want: Vec<String> = faults.codes().iter().map(|s| s.to_string()).collect();
            if faults.out_of_range {
                // After an E0003 on a line, the compiler drops later errors
                // on that line as likely cascades (`pipeline.rs`), so an
                // E0117 to the right of the bad literal is not reported.
                prop_assert!(
                    codes.contains(&"E0003".to_string()) && codes.iter().all(|c| want.contains(c)),
                    "{}\n{}\nerrors: {:?}",
                    describe(g),
                    source,
                    codes
                );
            } else {
                prop_assert_eq!(codes, want, "{}\n{}", describe(g), source);
            }
        }
        Ok(want) => {
            prop_assert!(
                codes.is_empty(),
                "{}\n{}\nerrors: {:?}",
                describe(g),
                source,
                codes
            );
            let Some(ptx) = c.ptx else {
                return Err(TestCaseError::fail(format!("no PTX for {source}")));
            };
            match stored_constant(&ptx, g.ty) {
                Some(got) => prop_assert!(
                    got.same(want),
                    "{}\nfolded to {:?} (bits {:#x})\n{}",
                    describe(g),
                    got,
                    got.bits(),
                    source
                ),
                None => prop_assert!(!folded, "{}: not folded\n{}", describe(g), ptx),
            }
        }
    }
    Ok(())
}

/// The writer folds constant trees of at most this many nodes in one go.
const WRITER_FOLDS: u32 = 64;

proptest! {
    #![proptest_config(ProptestConfig {
        max_shrink_iters: 2000,
        ..crate::common::proptest_config(768)
    })]

    #[test]
    fn folded_constants_match_the_reference(g in gen_expr::any_expr(3)) {
        let t = g.ty.name();
        let as_const = format!(
            "const C: {t} = {};\nkernel k(out: global mut [{t}]) block(1) {{ out[0] = C; }}\n",
            g.source
        );
        check(&g, &as_const, true)?;
        let inline = format!(
            "kernel k(out: global mut [{t}]) block(1) {{ out[0] = {}; }}\n",
            g.source
        );
        check(&g, &inline, g.nodes <= WRITER_FOLDS)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        max_shrink_iters: 4000,
        ..crate::common::proptest_config(20_000)
    })]

    /// The same, longer and deeper: `cargo test --test it -- --ignored check::consteval`.
    #[test]
    #[ignore = "long: 20,000 deeper expressions"]
    fn folded_constants_match_the_reference_long(g in gen_expr::any_expr(4)) {
        let t = g.ty.name();
        let as_const = format!(
            "const C: {t} = {};\nkernel k(out: global mut [{t}]) block(1) {{ out[0] = C; }}\n",
            g.source
        );
        check(&g, &as_const, true)?;
        let inline = format!(
            "kernel k(out: global mut [{t}]) block(1) {{ out[0] = {}; }}\n",
            g.source
        );
        check(&g, &inline, g.nodes <= WRITER_FOLDS)?;
    }
}

/// The reference and the folder agree on hand-picked values too: a table of
/// `(type, source, expected bits)`.
fn assert_folds(ty: &str, expr: &str, bits: u64) {
    let t = Ty::ALL.into_iter().find(|t| t.name() == ty).unwrap();
    for src in [
        format!("const C: {ty} = {expr};\nkernel k(out: global mut [{ty}]) block(1) {{ out[0] = C; }}\n"),
        format!("kernel k(out: global mut [{ty}]) block(1) {{ out[0] = {expr}; }}\n"),
    ] {
        let ptx = ptx_of(&src);
        let got = stored_constant(&ptx, t).unwrap_or_else(|| panic!("not folded:\n{ptx}"));
        let want = Val::from_bits(t, bits);
        assert!(
            got.same(want),
            "{expr}: {ty} folded to {got:?} ({:#x}), want {want:?} ({bits:#x})",
            got.bits()
        );
    }
}

#[test]
fn float_literals_round_once_from_their_digits() {
    // 1 + 2^-24 is halfway between the f32 values 1 and 1 + 2^-23.
    assert_folds("f32", "1.000000059604644775390625", 0x3F80_0000);
    assert_folds("f32", "1.0000000596046447753906250000001", 0x3F80_0001);
    assert_folds("f32", "1.0000000596046447753906249999999", 0x3F80_0000);
    assert_folds("f32", "1.000000178813934326171875", 0x3F80_0002); // 1 + 3·2^-24: ties up to even
                                                                    // f16: 1 + 2^-11 = 1.00048828125; bf16: 1 + 2^-8 = 1.00390625.
    assert_folds("f16", "1.00048828125f16", 0x3C00);
    assert_folds("f16", "1.00048828125000000000001f16", 0x3C01);
    assert_folds("bf16", "1.00390625bf16", 0x3F80);
    assert_folds("bf16", "1.003906250000000000000000001bf16", 0x3F81);
    assert_folds("f16", "(-1.00048828125000000000001f16)", 0xBC01);
    // An integer literal in float context rounds straight from the integer.
    assert_folds("bf16", "1157425104234217473", 0x5D81); // 2^60 + 2^52 + 1 → 2^60 + 2^53
    assert_folds("f32", "16777217", 0x4B80_0000);
}

/// An unsuffixed integer literal past `u64::MAX` is still an integer
/// literal in a float context: rounded once from its value (the rule for
/// every integer literal there), decimal, hex or binary alike.
#[test]
fn wide_integer_literals_round_once_in_a_float_context() {
    // Rust's parser rounds correctly from the digits.
    let digits = |t: &str| u64::from(t.parse::<f32>().map(f32::to_bits).unwrap_or(0));
    assert_folds("f32", "100000000000000000000000", digits("1e23"));
    assert_folds("f64", "100000000000000000000000", 0x44B5_2D02_C7E1_4AF6);
    assert_eq!(digits("18446745173221179393"), 0x5F80_0001);
    // 2^64 + 2^40 + 1: its nearest f64 is 2^64 + 2^40, an f32 tie that
    // would round down to 2^64; the 1 makes it round up to 2^64 + 2^41.
    assert_folds("f32", "18446745173221179393", 0x5F80_0001);
    assert_folds("f32", "0x1_0000_0100_0000_0001", 0x5F80_0001);
    assert_folds("f32", "18446745173221179392", 0x5F80_0000);
    assert_folds("f32", "(-18446745173221179393)", 0xDF80_0001);
    assert_folds(
        "f64",
        "0b1_0000000000000000000000000000000000000000000000000000000000000000",
        0x43F0_0000_0000_0000,
    );
    let src = |ty: &str, lit: &str| {
        format!(
            "kernel k(out: global mut [{ty}]) block(1) {{ let v: {ty} = {lit}; out[0] = v; }}\n"
        )
    };
    // No integer type holds it; nor does f32 past its range.
    for (ty, lit) in [
        ("u64", "18446744073709551616"),
        ("i64", "0x1_0000_0000_0000_0000"),
        ("f32", "1000000000000000000000000000000000000000"),
        ("f16", "100000000000000000000"),
    ] {
        let c = compile(&src(ty, lit));
        assert_eq!(error_codes(&c), ["E0003"], "{lit} as {ty}");
        assert!(
            c.diagnostics[0].message.ends_with(ty),
            "{:?}",
            c.diagnostics[0]
        );
    }
}

#[test]
fn literal_range_uses_the_same_rounding() {
    // The f32 overflow threshold is 2^128 - 2^103 (a tie, which goes to
    // infinity): out of range; a hair below it rounds to f32::MAX.
    let at = "340282356779733661637539395458142568448.0f32";
    let below = "340282356779733661637539395458142568447.999f32";
    let src =
        |lit: &str| format!("kernel k(out: global mut [f32]) block(1) {{ out[0] = {lit}; }}\n");
    assert_eq!(error_codes(&compile(&src(at))), ["E0003"]);
    // Below the threshold, though its nearest f64 is the threshold itself:
    // rounding that f64 would tie to infinity.
    assert_folds("f32", "3.4028235677973366e38f32", 0x7F7F_FFFF);
    assert_folds("f32", below, 0x7F7F_FFFF);
    assert_folds("f32", "3.4028235677973365e38", 0x7F7F_FFFF);
    let src16 =
        |lit: &str| format!("kernel k(out: global mut [f16]) block(1) {{ out[0] = {lit}; }}\n");
    assert_eq!(error_codes(&compile(&src16("65520.0f16"))), ["E0003"]);
    assert_eq!(error_codes(&compile(&src16("65520"))), ["E0003"]);
    assert_folds("f16", "65519.99999999999999f16", 0x7BFF);
    assert_folds("f16", "(-65519.0f16)", 0xFBFF);
}

#[test]
fn conversions_round_once() {
    // u64::MAX → f32 is 2^64 (through f64 it would be too, but i64 → f16 and
    // u64 → bf16 below would not).
    assert_folds("f32", "18446744073709551615u64 as f32", 0x5F80_0000);
    assert_folds("f32", "9223372036854775807i64 as f32", 0x5F00_0000);
    assert_folds("bf16", "1157425104234217473u64 as bf16", 0x5D81);
    assert_folds("bf16", "1157425104234217472u64 as bf16", 0x5D80); // the tie: to even
    assert_folds(
        "f64",
        "18446744073709551615u64 as f64",
        0x43F0_0000_0000_0000,
    );
    // f32 → f16 ties to even: 1 + 2^-11 goes down, 1 + 3·2^-11 up.
    assert_folds("f16", "1.00048828125f32 as f16", 0x3C00);
    assert_folds("f16", "1.00146484375f32 as f16", 0x3C02);
    assert_folds("bf16", "1.00390625f32 as bf16", 0x3F80);
    assert_folds("bf16", "1.01171875f32 as bf16", 0x3F82);
    // f64 → f16 directly: through f32 this would tie and go down.
    assert_folds("f16", "1.0004882812500000000001f64 as f16", 0x3C00);
    assert_folds("f16", "1.000488281250001f64 as f16", 0x3C01);
    // An f64 literal rounds to f64 first (here onto the f32 midpoint, which
    // then ties to even), a f32 literal straight to f32.
    assert_folds("f32", "1.0000000596046448f64 as f32", 0x3F80_0000);
    assert_folds("f32", "1.0000000596046448f32", 0x3F80_0001);
    assert_folds("f32", "1.0000000596046449f64 as f32", 0x3F80_0001);
}

#[test]
fn float_to_int_saturates_and_maps_nan_like_cvt_rzi() {
    assert_folds("i32", "(-2.9f32) as i32", (-2i32) as u32 as u64);
    assert_folds("u32", "(-2.9f32) as u32", 0);
    assert_folds("i32", "1e20f32 as i32", 0x7FFF_FFFF);
    assert_folds("u64", "1e30f64 as u64", u64::MAX);
    assert_folds("i64", "(-1e30f64) as i64", 1 << 63);
    assert_folds("u32", "(1.0f32 / 0.0f32) as u32", 0xFFFF_FFFF);
    // NaN: 0 from f32 into 32 bits; 1 << (width - 1) from f64 or into 64 bits.
    assert_folds("i32", "(0.0f32 / 0.0f32) as i32", 0);
    assert_folds("u32", "(0.0f16 / 0.0f16) as u32", 0);
    assert_folds("i64", "(0.0f32 / 0.0f32) as i64", 1 << 63);
    assert_folds("u64", "(0.0bf16 / 0.0bf16) as u64", 1 << 63);
    assert_folds("i32", "(0.0f64 / 0.0f64) as i32", 0x8000_0000);
    assert_folds("u32", "(0.0f64 / 0.0f64) as u32", 0x8000_0000);
    assert_folds("bool", "(0.0f32 / 0.0f32) as bool", 1);
}

#[test]
fn integer_edges_wrap() {
    assert_folds("i32", "(-2147483648i32) / (-1i32)", 0x8000_0000);
    assert_folds("i32", "(-2147483648i32) % (-1i32)", 0);
    assert_folds("i64", "(-9223372036854775808i64) / (-1i64)", 1 << 63);
    assert_folds("i32", "(-7i32) / 2i32", (-3i32) as u32 as u64);
    assert_folds("i32", "(-7i32) % 2i32", (-1i32) as u32 as u64);
    assert_folds("u32", "4294967295u32 + 1u32", 0);
    assert_folds(
        "u64",
        "18446744073709551615u64 * 18446744073709551615u64",
        1,
    );
    assert_folds("i32", "abs(-2147483648i32)", 0x8000_0000);
    assert_folds("i32", "-(-2147483648i32)", 0x8000_0000);
}

#[test]
fn shifts_treat_their_amount_as_ptx_does() {
    assert_folds("u32", "1u32 << 31u32", 0x8000_0000);
    assert_folds("u32", "1u32 << 32u32", 0);
    assert_folds("u32", "1u32 << 33u32", 0);
    assert_folds("u32", "1u32 << (-1i32)", 0);
    assert_folds("u32", "4294967295u32 >> 32u32", 0);
    assert_folds("i32", "(-8i32) >> 32u32", 0xFFFF_FFFF);
    assert_folds("i32", "(-8i32) >> 33u32", 0xFFFF_FFFF);
    assert_folds("i32", "(-8i32) >> (-1i32)", 0xFFFF_FFFF);
    assert_folds("i32", "8i32 >> (-1i32)", 0);
    assert_folds("u64", "1u64 << 4294967296u64", 0);
    assert_folds("u64", "1u64 << 63u32", 1 << 63);
    assert_folds("i64", "(-9223372036854775808i64) >> 64u32", u64::MAX);
}

/// `u8`, `i8`, `u16`, `i16` wrap in their own width after every operation,
/// shift by amounts clamped to that width, and saturate float conversions
/// to their own range (`cvt.rzi.u8.f32`), NaN as for the other integers.
#[test]
fn narrow_integers_wrap_shift_and_saturate_in_their_width() {
    // Wrap-around at the edges.
    assert_folds("i8", "127i8 + 1i8", 0x80);
    assert_folds("i8", "(-128i8) - 1i8", 0x7F);
    assert_folds("i8", "(-128i8) / (-1i8)", 0x80);
    assert_folds("i8", "(-128i8) % (-1i8)", 0);
    assert_folds("i8", "-(-128i8)", 0x80);
    assert_folds("i8", "abs(-128i8)", 0x80);
    assert_folds("i8", "(-7i8) / 2i8", 0xFD);
    assert_folds("i8", "(-7i8) % 2i8", 0xFF);
    assert_folds("i8", "100i8 * 3i8", 0x2C);
    assert_folds("u8", "255u8 + 1u8", 0);
    assert_folds("u8", "0u8 - 1u8", 0xFF);
    assert_folds("u8", "16u8 * 16u8", 0);
    assert_folds("u8", "!0u8", 0xFF);
    assert_folds("u8", "200u8 / 3u8", 66);
    assert_folds("u16", "65535u16 * 65535u16", 1);
    assert_folds("u16", "65535u16 + 2u16", 1);
    assert_folds("i16", "32767i16 + 1i16", 0x8000);
    assert_folds("i16", "(-32768i16) / (-1i16)", 0x8000);
    assert_folds("i16", "min(-32768i16, 5i16)", 0x8000);
    assert_folds("u16", "max(65535u16, 5u16)", 0xFFFF);
    // Shifts: the amount clamped to the narrow width, read as unsigned in
    // its own type (a negative one is a full shift).
    assert_folds("u8", "1u8 << 7u32", 0x80);
    assert_folds("u8", "1u8 << 8u32", 0);
    assert_folds("u8", "3u8 << 7u8", 0x80);
    assert_folds("u8", "255u8 >> 8u32", 0);
    assert_folds("u8", "255u8 >> 7u32", 1);
    assert_folds("u8", "1u8 << (-1i32)", 0);
    assert_folds("u8", "129u8 << 1i8", 2);
    assert_folds("i8", "(-128i8) >> 7u32", 0xFF);
    assert_folds("i8", "(-128i8) >> 8u32", 0xFF);
    assert_folds("i8", "(-128i8) >> 200u8", 0xFF);
    assert_folds("i8", "64i8 >> (-1i8)", 0);
    assert_folds("i8", "64i8 << 1u32", 0x80);
    assert_folds("i16", "1i16 << 15u8", 0x8000);
    assert_folds("i16", "(-2i16) >> 100u64", 0xFFFF);
    assert_folds("u16", "1u16 << 16u8", 0);
    assert_folds("u16", "65535u16 >> 15i16", 1);
    assert_folds("u32", "1u32 << 200u8", 0);
    assert_folds("u32", "1u32 << (-1i8)", 0);
    assert_folds("u64", "1u64 << 40u8", 1 << 40);
    // Float → narrow: truncated, saturated to the narrow range; NaN is 0,
    // or `1 << (width - 1)` from `f64`, as for the 32-bit integers.
    assert_folds("u8", "300.0f32 as u8", 0xFF);
    assert_folds("u8", "(-1.0f32) as u8", 0);
    assert_folds("u8", "200.9f32 as u8", 200);
    assert_folds("i8", "(-128.9f32) as i8", 0x80);
    assert_folds("i8", "(-1e9f32) as i8", 0x80);
    assert_folds("i8", "1e9f64 as i8", 0x7F);
    assert_folds("i16", "1e9f64 as i16", 0x7FFF);
    assert_folds("u16", "70000.5f32 as u16", 0xFFFF);
    assert_folds("u16", "(1.0f16 / 0.0f16) as u16", 0xFFFF);
    assert_folds("u8", "(0.0f32 / 0.0f32) as u8", 0);
    assert_folds("i16", "(0.0bf16 / 0.0bf16) as i16", 0);
    assert_folds("u8", "(0.0f64 / 0.0f64) as u8", 0x80);
    assert_folds("i8", "(0.0f64 / 0.0f64) as i8", 0x80);
    assert_folds("i16", "(0.0f64 / 0.0f64) as i16", 0x8000);
    // Integer ↔ narrow: truncated to the narrow width, extended by the
    // source's signedness; narrow → float exactly.
    assert_folds("u8", "300i32 as u8", 0x2C);
    assert_folds("u16", "(-1i32) as u16", 0xFFFF);
    assert_folds("i8", "200u8 as i8", 0xC8);
    assert_folds("u32", "(-56i8) as u32", 0xFFFF_FFC8);
    assert_folds("u64", "(-1i8) as u64", u64::MAX);
    assert_folds("i16", "(-1i8) as i16", 0xFFFF);
    assert_folds("u16", "(-1i8) as u16", 0xFFFF);
    assert_folds("i16", "65535u16 as i16", 0xFFFF);
    assert_folds("i8", "4294967295u64 as i8", 0xFF);
    assert_folds("f32", "255u8 as f32", 0x437F_0000);
    assert_folds("f16", "(-128i8) as f16", 0xD800);
    assert_folds("bf16", "65535u16 as bf16", 0x4780);
    assert_folds("bool", "256i32 as u8 as bool", 0);
    // A constant zero divisor is E0117 in every width.
    for src in [
        "kernel k(out: global mut [u8], x: u8) block(1) { out[0] = x / 0u8; }\n",
        "kernel k(out: global mut [i16], x: i16) block(1) { out[0] = x % (3i16 - 3i16); }\n",
        "const C: i8 = 5i8 / 0i8;\n",
    ] {
        assert_eq!(error_codes(&compile(src)), ["E0117"], "{src}");
    }
}

#[test]
fn min_max_abs_follow_ptx_on_nan_and_signed_zeros() {
    assert_folds("f32", "min(-0.0f32, 0.0f32)", 0x8000_0000);
    assert_folds("f32", "min(0.0f32, -0.0f32)", 0x8000_0000);
    assert_folds("f32", "max(-0.0f32, 0.0f32)", 0);
    assert_folds("f64", "max(0.0f64, -0.0f64)", 0);
    assert_folds("f32", "min(0.0f32 / 0.0f32, 2.0f32)", 0x4000_0000);
    assert_folds("f32", "max(3.0f32, 0.0f32 / 0.0f32)", 0x4040_0000);
    assert_folds("f32", "abs(-0.0f32)", 0);
    assert_folds("u32", "min(4294967295u32, 1u32)", 1);
    assert_folds("i64", "max(-1i64, -2i64)", u64::MAX);
}

#[test]
fn half_arithmetic_rounds_after_every_operation() {
    // f16: 2048 + 1 = 2048 (a tie, to even), twice; in f64 it would be 2050.
    assert_folds("f16", "(2048.0f16 + 1.0f16) + 1.0f16", 0x6800);
    assert_folds("bf16", "(256.0bf16 + 1.0bf16) + 1.0bf16", 0x4380);
    assert_folds("f32", "(16777216.0f32 + 1.0f32) + 1.0f32", 0x4B80_0000);
    assert_folds("f16", "1.0f16 / 3.0f16", 0x3555);
}

#[test]
fn multiply_add_contracts_with_one_rounding() {
    // x = 1 + 2^-12: x*x - 1 is 2^-11 + 2^-24 fused, 2^-11 if the product
    // were rounded first.
    let x = "1.000244140625f32";
    assert_folds("f32", &format!("{x} * {x} - 1.0f32"), 0x3A00_0400);
    assert_folds("f32", &format!("(-1.0f32) + {x} * {x}"), 0x3A00_0400);
    assert_folds("f32", &format!("1.0f32 - {x} * {x}"), 0xBA00_0400);
    assert_folds("f32", &format!("fma({x}, {x}, -1.0f32)"), 0x3A00_0400);
    assert_folds("f32", &format!("({x} * {x} as f32) - 1.0f32"), 0x3A00_0400);
    // A statement boundary opts out.
    let src = format!(
        "const P: f32 = {x} * {x};\nconst C: f32 = P - 1.0f32;\n\
         kernel k(out: global mut [f32]) block(1) {{ out[0] = C; }}\n"
    );
    assert_eq!(
        stored_constant(&ptx_of(&src), Ty::F32).map(Val::bits),
        Some(0x3A00_0000)
    );
    // f16 does not contract: (1 + 2^-10)^2 rounds to 1 + 2^-9 first.
    assert_folds("f16", "1.0009765625f16 * 1.0009765625f16 - 1.0f16", 0x1800);
}

#[test]
fn constant_division_by_zero_is_an_error() {
    for (body, label) in [
        ("out[0] = 1u32 / 0u32;", "/"),
        ("out[0] = n % (2u32 - 2u32);", "%"),
        ("let mut x = n; x /= 0u32; out[0] = x;", "/"),
        ("out[0] /= 0;", "/"),
        (
            "out[0] = select(n > 0u32, n / (n - n), 1u32 / (4u32 >> 3u32));",
            "/",
        ),
    ] {
        let src = format!("kernel k(out: global mut [u32], n: u32) block(1) {{ {body} }}\n");
        let c = compile(&src);
        let errors: Vec<_> = c.diagnostics.iter().filter(|d| d.code == "E0117").collect();
        assert_eq!(errors.len(), 1, "{src}: {:?}", c.diagnostics);
        assert_eq!(errors[0].message, "division by zero");
        let label_text = &errors[0].labels[0].message;
        assert_eq!(
            label_text,
            &format!("this divisor of `{label}` is zero"),
            "{src}"
        );
    }
    // A `const` too, and float division by zero is IEEE, not an error.
    assert_eq!(
        error_codes(&compile("const A: i64 = 4i64 % 0i64;\n")),
        ["E0117"]
    );
    assert_folds("f32", "1.0f32 / 0.0f32", 0x7F80_0000);
    assert_folds("f32", "(-1.0f32) / 0.0f32", 0xFF80_0000);
    assert_folds("f32", "0.0f32 / 0.0f32", 0x7FFF_FFFF);
}

/// The writer's instructions for run-time operands, for the rules above.
fn kernel_ptx(params: &str, body: &str) -> String {
    ptx_of(&format!("kernel k({params}) block(32) {{ {body} }}\n"))
}

#[test]
fn the_writer_fuses_exactly_what_the_folder_fuses() {
    let p = "out: global mut [f32], a: f32, b: f32, c: f32";
    let ptx = kernel_ptx(
        p,
        "out[0] = a * b + c; out[1] = c - a * b; out[2] = a * b - c;",
    );
    assert_eq!(ptx.matches("fma.rn.f32").count(), 3, "{ptx}");
    assert!(
        !ptx.contains("mul.f32") && !ptx.contains("add.f32") && !ptx.contains("sub.f32"),
        "{ptx}"
    );
    // A statement boundary: a rounded product, then an add; both `.rn`, so
    // ptxas cannot fuse them either.
    let ptx = kernel_ptx(p, "let t = a * b; out[0] = t + c;");
    assert!(!ptx.contains("fma"), "{ptx}");
    assert!(
        ptx.contains("mul.rn.f32") && ptx.contains("add.rn.f32"),
        "{ptx}"
    );
    // `place += a * b` is `place = place + a * b`.
    let ptx = kernel_ptx(p, "out[0] += a * b; out[1] -= a * b;");
    assert_eq!(ptx.matches("fma.rn.f32").count(), 2, "{ptx}");
    let ptx = kernel_ptx(
        "out: global mut [f64], a: f64, b: f64",
        "out[0] = a * b + 1.0;",
    );
    assert!(ptx.contains("fma.rn.f64"), "{ptx}");
    // Halves do not contract.
    let ptx = kernel_ptx(
        "out: global mut [f16], a: f16, b: f16",
        "out[0] = a * b + a;",
    );
    assert!(!ptx.contains("fma"), "{ptx}");
}

#[test]
fn constant_shift_amounts_are_clamped_in_the_ptx() {
    let ptx = kernel_ptx(
        "out: global mut [u32], wide: global mut [i64], x: u32, y: i64",
        "out[0] = x << (-1i32); out[1] = x >> 4294967296u64; wide[0] = y >> 99u32; wide[1] = y << 3u64;",
    );
    assert!(ptx.contains("shl.b32 %r") && ptx.contains(", 32;"), "{ptx}");
    assert!(ptx.contains("shr.u32") && ptx.contains("shr.s64"), "{ptx}");
    assert!(
        !ptx.contains("-1;") && !ptx.contains("4294967296") && !ptx.contains(", 99;"),
        "{ptx}"
    );
    assert!(ptx.contains(", 64;") && ptx.contains(", 3;"), "{ptx}");
}

/// Every form above assembles (the clamped immediates, `fma.rn`, `neg`,
/// `.rn` arithmetic), for run-time operands of every float type.
#[test]
fn the_forms_assemble() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let mut body = String::new();
    for t in ["f32", "f64"] {
        body.push_str(&format!(
            "out_{t}[0] = a_{t} * b_{t} + c_{t}; out_{t}[1] = c_{t} - a_{t} * b_{t}; \
             out_{t}[2] = a_{t} * b_{t} - c_{t}; out_{t}[3] += a_{t} * b_{t}; out_{t}[4] -= a_{t} * b_{t}; \
             out_{t}[5] = min(a_{t}, b_{t}) / c_{t}; out_{t}[6] = 2.0 * a_{t} + 1.0; "
        ));
    }
    body.push_str(
        "out_u32[0] = x << (-1i32); out_u32[1] = x >> 4294967296u64; out_u32[2] = x << y;",
    );
    let params = "out_f32: global mut [f32], out_f64: global mut [f64], out_u32: global mut [u32], \
                  a_f32: f32, b_f32: f32, c_f32: f32, a_f64: f64, b_f64: f64, c_f64: f64, x: u32, y: i64";
    for arch in ["sm_80", "sm_90"] {
        let c = compile_str(
            "t.kdsl",
            &format!("kernel k({params}) block(32) {{ {body} }}\n"),
            &Options {
                target: kdsl::target::Target::from_name(arch).unwrap(),
                ..Options::default()
            },
        );
        let ptx = c
            .ptx
            .unwrap_or_else(|| panic!("{arch}: {:?}", c.diagnostics));
        ptxas::assemble(&ptxas, &ptx, arch).unwrap_or_else(|e| panic!("{arch}: {e}\n{ptx}"));
    }
}

/// The generator reaches every type, operator, built-in and cast, and the
/// interesting outcomes (NaN, signed zeros, infinities, both errors), so the
/// property above cannot pass by testing little.
#[test]
fn the_generator_covers_the_language() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = gen_expr::any_expr(3);
    let mut sources = String::new();
    let (mut types, mut nan, mut neg_zero, mut inf, mut e0003, mut e0117) =
        (std::collections::HashSet::new(), 0, 0, 0, 0, 0);
    for _ in 0..2000 {
        let g = strategy.new_tree(&mut runner).unwrap().current();
        types.insert(g.ty);
        sources.push_str(&g.source);
        sources.push('\n');
        match g.value {
            Ok(v) if v.is_nan() => nan += 1,
            Ok(v) if v.ty().is_float() && v.bits() == 1 << (v.ty().bits() - 1) => neg_zero += 1,
            Ok(Val::F32(x)) if x.is_infinite() => inf += 1,
            Ok(Val::F64(x)) if x.is_infinite() => inf += 1,
            Ok(_) => {}
            Err(f) => {
                e0003 += usize::from(f.out_of_range);
                e0117 += usize::from(f.divide_by_zero);
            }
        }
    }
    assert_eq!(types.len(), Ty::EXPRS.len());
    for token in [
        "f16x2(",
        "bf16x2(",
        ").lo",
        ").hi",
        "as e4m3",
        "as e5m2",
        "as tf32",
        " + ",
        " - ",
        " * ",
        " / ",
        " % ",
        " & ",
        " | ",
        " ^ ",
        " << ",
        " >> ",
        " && ",
        " || ",
        " == ",
        " != ",
        " < ",
        " <= ",
        " > ",
        " >= ",
        "(!",
        "(-",
        "min(",
        "max(",
        "abs(",
        "fma(",
        "select(",
        "true",
        "false",
        "f16",
        "bf16",
        "f32",
        "f64",
        "i8",
        "u8",
        "i16",
        "u16",
        "i32",
        "u32",
        "i64",
        "u64",
        "as bool",
        "as i8",
        "as u8",
        "as i16",
        "as u16",
        "as i32",
        "as u32",
        "as i64",
        "as u64",
        "as f16",
        "as bf16",
        "as f32",
        "as f64",
        "e-",
        "999999999999e",
        "000000001e",
    ] {
        assert!(sources.contains(token), "no `{token}` in 2000 expressions");
    }
    for (what, n) in [
        ("NaN", nan),
        ("-0.0", neg_zero),
        ("infinity", inf),
        ("E0003", e0003),
        ("E0117", e0117),
    ] {
        assert!(n >= 10, "only {n} {what} results in 2000 expressions");
    }
}
