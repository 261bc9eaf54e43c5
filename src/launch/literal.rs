//! Scalar literals on the command line (`--arg n=1024`, list elements,
//! `fill:N:V`): parsed for one scalar type, range-checked, and turned into
//! the value's bits.
//!
//! - `bool`: `true`, `false`, `1`, `0`.
//! - Integers: decimal, `0x`/`0o`/`0b`, an optional sign, `_` between
//!   digits, and optionally the type as a suffix (`16u32`). A value outside
//!   the type's range is an error, never wrapped.
//! - Floats: decimal or scientific (`1.5`, `-2e-3`, `7`), `inf`, `-inf`,
//!   `nan`, optionally suffixed by the type. Rounded to nearest; a finite
//!   value too large for the type is an error.
//! - `f16x2`, `bf16x2`: the two halves, low first, joined by `/`
//!   (`1.5/-2`), each a literal of the half type.

use crate::types::Scalar;

/// The bits of `text` as a value of `ty`, zero-extended to 64 (floats as
/// their IEEE bits). The error is a phrase: "`-1` is out of range for u32
/// (0 to 4294967295)".
pub fn parse(text: &str, ty: Scalar) -> Result<u64, String> {
    let t = text.trim();
    let t = strip_suffix(t, ty)?;
    match ty {
        Scalar::Bool => match t {
            "true" | "1" => Ok(1),
            "false" | "0" => Ok(0),
            _ => Err(format!(
                "`{text}` is not a bool literal (true, false, 1 or 0)"
            )),
        },
        Scalar::I8
        | Scalar::U8
        | Scalar::I16
        | Scalar::U16
        | Scalar::I32
        | Scalar::U32
        | Scalar::I64
        | Scalar::U64 => {
            let v = integer(t).ok_or_else(|| not_a(text, ty))?;
            let (min, max) = int_range(ty);
            if v < min || v > max {
                return Err(format!(
                    "`{text}` is out of range for {ty} ({min} to {max})"
                ));
            }
            // Two's complement, zero-extended from the type's width.
            let mask = if ty.bits() == 64 {
                u64::MAX
            } else {
                (1u64 << ty.bits()) - 1
            };
            Ok((v as u64) & mask)
        }
        Scalar::F32 => {
            let x: f32 = float_text(t)
                .ok_or_else(|| not_a(text, ty))?
                .parse()
                .map_err(|_| not_a(text, ty))?;
            finite_or_error(text, ty, x.is_infinite(), t)?;
            Ok(u64::from(x.to_bits()))
        }
        Scalar::F64 => {
            let x: f64 = float_text(t)
                .ok_or_else(|| not_a(text, ty))?
                .parse()
                .map_err(|_| not_a(text, ty))?;
            finite_or_error(text, ty, x.is_infinite(), t)?;
            Ok(x.to_bits())
        }
        // tf32 data is f32 data.
        Scalar::TF32 => parse(text, Scalar::F32),
        // The nearest fp8 value, saturated (`cvt.rn.satfinite`'s rule).
        Scalar::E4M3 | Scalar::E5M2 => {
            let x: f64 = float_text(t)
                .ok_or_else(|| not_a(text, ty))?
                .parse()
                .map_err(|_| not_a(text, ty))?;
            finite_or_error(text, ty, x.is_infinite(), t)?;
            let f = if ty == Scalar::E5M2 {
                crate::fp8::Fp8::E5M2
            } else {
                crate::fp8::Fp8::E4M3
            };
            Ok(u64::from(f.encode(x, true)))
        }
        Scalar::F16x2 | Scalar::BF16x2 => {
            let half = ty.half_of().unwrap_or(Scalar::F16);
            let Some((lo, hi)) = t.split_once('/') else {
                return Err(format!(
                    "`{text}` is not {} literal: write its two halves, low first, as `1.5/-2`",
                    a(ty)
                ));
            };
            let (lo, hi) = (parse(lo, half)?, parse(hi, half)?);
            Ok(lo | hi << 16)
        }
        Scalar::F16 | Scalar::BF16 => {
            let x: f64 = float_text(t)
                .ok_or_else(|| not_a(text, ty))?
                .parse()
                .map_err(|_| not_a(text, ty))?;
            let bits = half_bits(x, ty);
            let inf = bits & 0x7fff == if ty == Scalar::F16 { 0x7c00 } else { 0x7f80 };
            finite_or_error(text, ty, inf, t)?;
            Ok(u64::from(bits))
        }
    }
}

/// A 64-bit integer for an untyped PTX `.u64`/`.s64`/`.b64` parameter:
/// anything from `i64::MIN` to `u64::MAX`, as its 64 bits.
pub fn parse_u64_bits(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let v = integer(t).ok_or_else(|| {
        format!("`{text}` is neither a 64-bit integer nor a typed array such as `f32:zeros:1024`")
    })?;
    if v < i128::from(i64::MIN) || v > i128::from(u64::MAX) {
        return Err(format!(
            "`{text}` is out of range for a 64-bit parameter ({} to {})",
            i64::MIN,
            u64::MAX
        ));
    }
    Ok(v as u64)
}

/// The bits of `x` rounded to nearest even as an `f16` or `bf16`.
pub fn half_bits(x: f64, ty: Scalar) -> u16 {
    match ty {
        Scalar::BF16 => half::bf16::from_f64(x).to_bits(),
        _ => half::f16::from_f64(x).to_bits(),
    }
}

/// The smallest and largest value of an integer type (`bool`: 0 to 1).
pub fn int_range(ty: Scalar) -> (i128, i128) {
    ty.int_range().unwrap_or((0, 1))
}

fn not_a(text: &str, ty: Scalar) -> String {
    let example = match ty {
        Scalar::Bool => "true",
        t if t.is_float() || t.is_storage_only() => "1.5",
        t if t.is_packed() => "1.5/-2",
        _ => "1024",
    };
    format!(
        "`{text}` is not {} literal (for example `{example}`)",
        a(ty)
    )
}

/// "a u32", "an f32": the article as the type name is read aloud.
pub fn a(ty: Scalar) -> String {
    let an = matches!(ty.name().as_bytes().first(), Some(b'i' | b'f'));
    format!("{} {ty}", if an { "an" } else { "a" })
}

/// `16u32` → `16` when the suffix is `ty`; another type's suffix is an
/// error (the value would be read as a type it was not written in).
fn strip_suffix(t: &str, ty: Scalar) -> Result<&str, String> {
    for other in Scalar::ALL {
        if let Some(head) = t.strip_suffix(other.name()) {
            // `0xf16` is a hex number, not `0x` with an `f16` suffix.
            let hex = head.starts_with("0x") || head.starts_with("-0x") || head.starts_with("+0x");
            if head.is_empty() || hex || !head.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
                continue;
            }
            if other != ty {
                return Err(format!("`{t}` is {} literal, not {ty}", a(other)));
            }
            return Ok(head);
        }
    }
    Ok(t)
}

/// An integer: sign, radix prefix, digits with `_` between them.
fn integer(t: &str) -> Option<i128> {
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..)?),
        Some(b'+') => (false, t.get(1..)?),
        _ => (false, t),
    };
    let (radix, digits) =
        if let Some(d) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, d)
        } else if let Some(d) = body.strip_prefix("0o") {
            (8, d)
        } else if let Some(d) = body.strip_prefix("0b") {
            (2, d)
        } else {
            (10, body)
        };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    // `u128` holds every value of interest; more digits overflow → None.
    let v = u128::from_str_radix(&clean, radix).ok()?;
    let v = i128::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// The float text Rust's parser should see: `_` removed between digits,
/// and only the spellings documented above (Rust also takes `infinity`).
fn float_text(t: &str) -> Option<String> {
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    let special = matches!(body, "inf" | "nan");
    let numeric = body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-' | '_'))
        && body.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if !(special || numeric) || t.contains("__") {
        return None;
    }
    Some(t.replace('_', ""))
}

/// A finite literal that became infinite does not fit the type.
fn finite_or_error(text: &str, ty: Scalar, infinite: bool, t: &str) -> Result<(), String> {
    let written_inf = t.trim_start_matches(['+', '-']).eq_ignore_ascii_case("inf");
    if infinite && !written_inf {
        let max = match ty {
            Scalar::F16 => "65504",
            Scalar::BF16 => "3.3895e38",
            Scalar::F32 => "3.4028235e38",
            _ => "1.7976931348623157e308",
        };
        return Err(format!(
            "`{text}` is too large for {ty} (largest finite value {max})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_two_halves_low_first() {
        assert_eq!(parse("1.5/-2", Scalar::F16x2), Ok(0xc000_3e00));
        assert_eq!(parse("1/1", Scalar::BF16x2), Ok(0x3f80_3f80));
        assert_eq!(parse(" 0 / inf ", Scalar::F16x2), Ok(0x7c00_0000));
        let bad = |t: &str| parse(t, Scalar::F16x2).unwrap_err();
        assert!(bad("1.5").contains("`1.5/-2`"), "{}", bad("1.5"));
        assert!(bad("1/70000").contains("f16"), "{}", bad("1/70000"));
        assert!(bad("1/x").contains("f16"), "{}", bad("1/x"));
    }

    #[test]
    fn integers_in_every_radix_and_range() {
        assert_eq!(parse("1024", Scalar::U32), Ok(1024));
        assert_eq!(parse("1_000_000", Scalar::U32), Ok(1_000_000));
        assert_eq!(parse("0xff", Scalar::U32), Ok(255));
        assert_eq!(parse("0b101", Scalar::I64), Ok(5));
        assert_eq!(parse("0o17", Scalar::I32), Ok(15));
        assert_eq!(parse("-1", Scalar::I32), Ok(0xffff_ffff));
        assert_eq!(parse("-1", Scalar::I64), Ok(u64::MAX));
        assert_eq!(parse("+7", Scalar::U64), Ok(7));
        assert_eq!(parse("16u32", Scalar::U32), Ok(16));
        assert_eq!(parse("4294967295", Scalar::U32), Ok(u64::from(u32::MAX)));
        assert_eq!(parse("-2147483648", Scalar::I32), Ok(0x8000_0000));
        assert_eq!(parse("18446744073709551615", Scalar::U64), Ok(u64::MAX));
    }

    #[test]
    fn integer_errors_are_specific() {
        assert_eq!(
            parse("-1", Scalar::U32).unwrap_err(),
            "`-1` is out of range for u32 (0 to 4294967295)"
        );
        assert_eq!(
            parse("4294967296", Scalar::U32).unwrap_err(),
            "`4294967296` is out of range for u32 (0 to 4294967295)"
        );
        assert_eq!(
            parse("2147483648", Scalar::I32).unwrap_err(),
            "`2147483648` is out of range for i32 (-2147483648 to 2147483647)"
        );
        assert_eq!(
            parse("18446744073709551616", Scalar::U64).unwrap_err(),
            "`18446744073709551616` is out of range for u64 (0 to 18446744073709551615)"
        );
        assert_eq!(
            parse("abc", Scalar::U32).unwrap_err(),
            "`abc` is not a u32 literal (for example `1024`)"
        );
        assert_eq!(
            parse("1.5", Scalar::I32).unwrap_err(),
            "`1.5` is not an i32 literal (for example `1024`)"
        );
        assert_eq!(
            parse("7i64", Scalar::U32).unwrap_err(),
            "`7i64` is an i64 literal, not u32"
        );
        assert!(parse("", Scalar::U32).is_err());
        assert!(parse("1__0", Scalar::U32).is_err());
        assert!(parse("_1", Scalar::U32).is_err());
        assert!(parse("0x", Scalar::U32).is_err());
        assert!(parse("99999999999999999999999999999999999999999999", Scalar::U64).is_err());
    }

    #[test]
    fn floats_round_and_refuse_overflow() {
        assert_eq!(parse("1.5", Scalar::F32), Ok(u64::from(1.5f32.to_bits())));
        assert_eq!(parse("2", Scalar::F32), Ok(u64::from(2f32.to_bits())));
        assert_eq!(parse("-2e-3", Scalar::F64), Ok((-2e-3f64).to_bits()));
        assert_eq!(parse("0.1", Scalar::F32), Ok(u64::from(0.1f32.to_bits())));
        assert_eq!(
            parse("1.5f32", Scalar::F32),
            Ok(u64::from(1.5f32.to_bits()))
        );
        assert_eq!(
            parse("inf", Scalar::F32),
            Ok(u64::from(f32::INFINITY.to_bits()))
        );
        assert_eq!(parse("-inf", Scalar::F16), Ok(0xfc00));
        assert!(f32::from_bits(parse("nan", Scalar::F32).unwrap() as u32).is_nan());
        assert_eq!(parse("1.0", Scalar::F16), Ok(0x3c00));
        assert_eq!(parse("1.0", Scalar::BF16), Ok(0x3f80));
        assert_eq!(parse("65504", Scalar::F16), Ok(0x7bff));
        assert_eq!(
            parse("70000", Scalar::F16).unwrap_err(),
            "`70000` is too large for f16 (largest finite value 65504)"
        );
        assert_eq!(
            parse("1e39", Scalar::F32).unwrap_err(),
            "`1e39` is too large for f32 (largest finite value 3.4028235e38)"
        );
        assert_eq!(
            parse("1e309", Scalar::F64).unwrap_err(),
            "`1e309` is too large for f64 (largest finite value 1.7976931348623157e308)"
        );
        assert_eq!(
            parse("x1", Scalar::F32).unwrap_err(),
            "`x1` is not an f32 literal (for example `1.5`)"
        );
        assert!(parse("infinity", Scalar::F32).is_err());
        assert!(parse("1.0.0", Scalar::F32).is_err());
        // Tiny values round to zero rather than fail.
        assert_eq!(parse("1e-50", Scalar::F32), Ok(0));
    }

    #[test]
    fn bools() {
        assert_eq!(parse("true", Scalar::Bool), Ok(1));
        assert_eq!(parse("0", Scalar::Bool), Ok(0));
        assert_eq!(
            parse("yes", Scalar::Bool).unwrap_err(),
            "`yes` is not a bool literal (true, false, 1 or 0)"
        );
    }

    #[test]
    fn untyped_64_bit_values() {
        assert_eq!(parse_u64_bits("-1"), Ok(u64::MAX));
        assert_eq!(parse_u64_bits("0x10"), Ok(16));
        assert_eq!(parse_u64_bits("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_u64_bits("18446744073709551616")
            .unwrap_err()
            .contains("out of range"));
        assert_eq!(
            parse_u64_bits("iota:4").unwrap_err(),
            "`iota:4` is neither a 64-bit integer nor a typed array such as `f32:zeros:1024`"
        );
    }

    mod generated {
        use super::super::*;
        use proptest::prelude::*;

        fn scalar() -> impl Strategy<Value = Scalar> {
            (0usize..Scalar::ALL.len()).prop_map(|i| Scalar::ALL[i])
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(3000))]

            #[test]
            fn any_text_is_a_value_or_an_error(text in "\\PC{0,24}", ty in scalar()) {
                let _ = parse(&text, ty);
                let _ = parse_u64_bits(&text);
            }

            #[test]
            fn numberish_text_is_a_value_or_an_error(text in "[-+0-9a-fxob_.eEinfau]{0,30}", ty in scalar()) {
                if let Ok(bits) = parse(&text, ty) {
                    prop_assert!(ty.bits() == 64 || bits >> (ty.size().max(1) * 8) == 0);
                }
            }

            #[test]
            fn integers_round_trip(v in any::<i64>(), u in any::<u64>()) {
                prop_assert_eq!(parse(&v.to_string(), Scalar::I64), Ok(v as u64));
                prop_assert_eq!(parse(&u.to_string(), Scalar::U64), Ok(u));
                prop_assert_eq!(parse(&format!("{:#x}", u), Scalar::U64), Ok(u));
                let small = v as i32;
                prop_assert_eq!(parse(&small.to_string(), Scalar::I32), Ok(u64::from(small as u32)));
                prop_assert!(parse(&(i64::from(i32::MAX) + 1 + (v & 0xffff).abs()).to_string(), Scalar::I32).is_err());
            }

            #[test]
            fn floats_round_trip_exactly(bits in any::<u32>(), wide in any::<u64>()) {
                let x = f32::from_bits(bits);
                if x.is_finite() {
                    prop_assert_eq!(parse(&format!("{x:?}"), Scalar::F32), Ok(u64::from(bits)));
                    prop_assert_eq!(parse(&format!("{x:e}"), Scalar::F32), Ok(u64::from(bits)));
                }
                let y = f64::from_bits(wide);
                if y.is_finite() {
                    prop_assert_eq!(parse(&format!("{y:?}"), Scalar::F64), Ok(wide));
                }
            }

            #[test]
            fn halves_round_trip_through_their_dump_text(bits in any::<u16>()) {
                for ty in [Scalar::F16, Scalar::BF16] {
                    let text = crate::launch::dump::element(ty, &bits.to_le_bytes());
                    let back = parse(&text, ty);
                    let exp = if ty == Scalar::F16 { 0x7c00 } else { 0x7f80 };
                    if bits & exp == exp && bits & !(exp | 0x8000) != 0 {
                        // NaN payloads are not kept: any NaN reads back as a NaN.
                        prop_assert!(back.is_ok());
                    } else {
                        prop_assert_eq!(back, Ok(u64::from(bits)), "{} {}", ty, text);
                    }
                }
            }
        }
    }
}
