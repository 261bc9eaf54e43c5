//! Number literals: the lexer matches a generous run of digits, letters and
//! `_` (plus a fraction and a signed exponent) and this module decides what
//! it means, so that every malformed literal is one token with one precise
//! error instead of a confusing split into a number and an identifier.

use crate::fp::{self, Format};
use crate::types::Scalar;
use std::cmp::Ordering;
use std::fmt;

/// The value of a number literal as written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer: exact, with the written type suffix, if any. A suffixed
    /// value over `u64::MAX` is an error.
    Int { value: u64, suffix: Option<Scalar> },
    /// An unsuffixed integer over `u64::MAX`: no integer type can hold it,
    /// but a float context can (`let x: f32 = 100000000000000000000000;`),
    /// so it is kept like a float literal, exactly enough to round it once
    /// to any float type (infinite when it is past every `f64`).
    WideInt(FloatLit),
    /// A float, exactly enough to round it to any float type, with the
    /// written suffix, if any.
    Float {
        value: FloatLit,
        suffix: Option<Scalar>,
    },
    /// A malformed or out-of-range literal, already reported (E0003): it
    /// stands where it was written so that parsing goes on, and the syntax
    /// tree has an error node there, which silences everything that would
    /// only follow from it (a type the literal never had).
    Invalid,
}

/// The value of a decimal float literal, kept exactly enough to round it
/// correctly, once, to each of `f16`, `bf16`, `f32` and `f64`: its nearest
/// `f64`, and on which side of that `f64` the decimal text lies when that
/// decides a rounding.
///
/// Why this is enough: the values of the narrower types and the midpoints
/// between them are all `f64` values, so the decimal and its nearest `f64`
/// round the same way unless that `f64` is itself such a midpoint, and
/// then the side breaks the tie ([`fp::round_near`]). Rounding the `f64`
/// alone would round twice: `1.00048828125000001` is just above the `f16`
/// midpoint `1 + 2^-11`, its nearest `f64` is that midpoint, and ties to
/// even would go down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatLit {
    /// The literal rounded to the nearest `f64` (ties to even).
    pub nearest: f64,
    /// How the decimal text compares with `nearest`, when `nearest` is a
    /// midpoint of `f32`, `f16` or `bf16` (computed exactly from the
    /// digits); `Equal` otherwise, where it cannot matter.
    pub side: Ordering,
}

impl FloatLit {
    /// A literal whose value is exactly `value`.
    pub fn exact(value: f64) -> FloatLit {
        FloatLit {
            nearest: value,
            side: Ordering::Equal,
        }
    }

    /// The literal rounded once to `fmt` (infinite when out of range).
    pub fn round(self, fmt: Format) -> f64 {
        fp::round_near(self.nearest, self.side, fmt)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (suffix, written) = match self {
            Number::Int { value, suffix } => (suffix, value.to_string()),
            Number::Float { value, suffix } => (suffix, format!("{:?}", value.nearest)),
            // Its digits past the nearest f64 are not kept: the value as an
            // integer, to f64 precision (the token dump is for reading).
            Number::WideInt(value) if value.nearest.is_finite() => {
                (&None, format!("{:.0}", value.nearest))
            }
            Number::WideInt(_) => (&None, "inf".to_string()),
            Number::Invalid => (&None, "0".to_string()),
        };
        f.write_str(&written)?;
        if let Some(s) = suffix {
            f.write_str(s.name())?;
        }
        Ok(())
    }
}

/// Why a literal was rejected.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberError {
    /// Malformed: what is wrong (the label), and how to write it instead.
    Invalid { why: String, help: Option<String> },
    /// Does not fit the type (`u64`, or the suffix's type).
    OutOfRange(Scalar),
}

const INT_SUFFIXES: &str = "the suffixes `u8`, `i8`, `u16`, `i16`, `u32`, `i32`, `u64`, `i64`";
const FLOAT_SUFFIX_LIST: &str = "the suffixes `f16`, `bf16`, `f32`, `f64`";
const FLOAT_SUFFIXES: [&str; 4] = ["bf16", "f16", "f32", "f64"];

/// Reads the literal `text` (as matched by the lexer: it starts with a digit).
pub fn parse(text: &str) -> Result<Number, NumberError> {
    if let Some(rest) = text.strip_prefix("0x") {
        radix_literal(rest, 16, "hex")
    } else if let Some(rest) = text.strip_prefix("0b") {
        radix_literal(rest, 2, "binary")
    } else {
        decimal_literal(text)
    }
}

/// `0x…` / `0b…` after the prefix: digits and `_`, then an integer suffix.
///
/// As in Rust, the digits come first: a hex literal's digits are every hex
/// digit and `_` that follow the prefix, so `0xf32`, `0xbf16` and `0x0f64`
/// are the integers 0xF32, 0xBF16 and 0xF64 (a float suffix cannot be told
/// from digits), and the suffix starts at the first other character
/// (`0xffu32`, `0x1f_i64`). Binary literals take all decimal digits first,
/// so that `0b102` is a bad digit rather than an unknown suffix `2`, and
/// `0b1f32` is a binary literal with a float suffix (an error).
fn radix_literal(rest: &str, radix: u32, what: &str) -> Result<Number, NumberError> {
    let digit_len = rest
        .find(|c: char| {
            !(c == '_'
                || if radix == 16 {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                })
        })
        .unwrap_or(rest.len());
    let (digits, suffix_text) = rest.split_at(digit_len);
    if let Some(bad) = digits
        .chars()
        .find(|c| c.to_digit(radix).is_none() && *c != '_')
    {
        return Err(invalid(format!("invalid digit `{bad}` in {what} literal")));
    }
    if !digits.chars().any(|c| c != '_') {
        return Err(invalid(format!("this {what} literal has no digits")));
    }
    let suffix = int_suffix(suffix_text, what)?;
    match (accumulate(digits, radix), suffix) {
        (Some(value), _) => Ok(Number::Int { value, suffix }),
        (None, None) => Ok(Number::WideInt(wide_radix(digits, radix))),
        (None, Some(s)) => Err(NumberError::OutOfRange(s)),
    }
}

/// Decimal integer or float: `digits (. digits)? (e [+-]? digits)? suffix?`.
fn decimal_literal(text: &str) -> Result<Number, NumberError> {
    let int_len = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    let mut end = int_len;
    let mut is_float = false;
    let rest = text.get(end..).unwrap_or("");
    if let Some(frac) = rest.strip_prefix('.') {
        // The lexer only includes a `.` that a digit follows.
        is_float = true;
        end += 1 + frac
            .find(|c: char| !(c.is_ascii_digit() || c == '_'))
            .unwrap_or(frac.len());
    }
    let rest = text.get(end..).unwrap_or("");
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        is_float = true;
        let signed = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        let sign_len = exp.len() - signed.len();
        let digits_len = signed
            .find(|c: char| !(c.is_ascii_digit() || c == '_'))
            .unwrap_or(signed.len());
        let exp_digits = signed.get(..digits_len).unwrap_or("");
        if !exp_digits.chars().any(|c| c.is_ascii_digit()) {
            return Err(invalid("the exponent has no digits"));
        }
        end += 1 + sign_len + digits_len;
    }
    let (body, suffix_text) = text.split_at(end.min(text.len()));
    if suffix_text.is_empty() || FLOAT_SUFFIXES.contains(&suffix_text) {
        let float_suffix = Scalar::from_name(suffix_text);
        if is_float || float_suffix.is_some() {
            let value = decimal_value(body)?;
            if !value.nearest.is_finite() {
                return Err(NumberError::OutOfRange(float_suffix.unwrap_or(Scalar::F64)));
            }
            return Ok(Number::Float {
                value,
                suffix: float_suffix,
            });
        }
    }
    if is_float {
        return Err(match int_suffix(suffix_text, "float") {
            Ok(_) => invalid_help(
                format!("a float literal cannot take the integer suffix `{suffix_text}`"),
                format!("float literals take {FLOAT_SUFFIX_LIST}; convert with `as {suffix_text}`"),
            ),
            Err(e) => e,
        });
    }
    let suffix = int_suffix(suffix_text, "integer")?;
    match (accumulate(body, 10), suffix) {
        (Some(value), _) => Ok(Number::Int { value, suffix }),
        (None, None) => Ok(Number::WideInt(decimal_value(body)?)),
        (None, Some(s)) => Err(NumberError::OutOfRange(s)),
    }
}

/// A decimal literal's digits (`_` allowed, no suffix) as a [`FloatLit`]:
/// its nearest `f64` (infinite past `f64::MAX`) and, where that `f64` is a
/// midpoint of a narrower type, on which side of it the digits lie.
fn decimal_value(body: &str) -> Result<FloatLit, NumberError> {
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    let nearest: f64 = clean
        .parse()
        .map_err(|_| invalid("malformed float literal"))?;
    let narrower = [Format::F32, Format::F16, Format::BF16];
    let side = if nearest.is_finite() && narrower.iter().any(|f| fp::is_midpoint(nearest, *f)) {
        compare_decimal(&clean, nearest)
    } else {
        Ordering::Equal
    };
    Ok(FloatLit { nearest, side })
}

/// The hex or binary digits of an integer over `u64::MAX` as a
/// [`FloatLit`]. Only the leading bits matter for any rounding: the first
/// 121 or more are kept exactly, the rest only as "some were not zero",
/// which is all rounding to `f64` (53 bits) and deciding a tie need.
fn wide_radix(digits: &str, radix: u32) -> FloatLit {
    let bits_per_digit: u32 = if radix == 16 { 4 } else { 1 };
    let (mut kept, mut exp, mut sticky) = (0u128, 0i32, false);
    for d in digits.chars().filter_map(|c| c.to_digit(radix)) {
        if kept >> 120 == 0 {
            kept = (kept << bits_per_digit) | u128::from(d);
        } else {
            // Saturating: a literal of 2^31 bits is infinite all the same.
            exp = exp.saturating_add(bits_per_digit as i32);
            sticky |= d != 0;
        }
    }
    let (nearest, side) = fp::nearest_f64(kept, exp, sticky);
    FloatLit { nearest, side }
}

/// An integer suffix (or none). Float suffixes were handled by the caller.
fn int_suffix(text: &str, what: &str) -> Result<Option<Scalar>, NumberError> {
    if text.is_empty() {
        return Ok(None);
    }
    match Scalar::from_name(text) {
        Some(s) if s.is_int() => Ok(Some(s)),
        _ if FLOAT_SUFFIXES.contains(&text) => Err(invalid_help(
            format!("a {what} literal cannot take the float suffix `{text}`"),
            format!("{what} literals take {INT_SUFFIXES}"),
        )),
        _ => Err(invalid_help(
            format!("unknown suffix `{text}`"),
            format!(
                "integer literals take {INT_SUFFIXES}; float literals take {FLOAT_SUFFIX_LIST}"
            ),
        )),
    }
}

/// The value of `digits` (with `_` separators) in `radix`, or `None` on
/// overflow of `u64`.
fn accumulate(digits: &str, radix: u32) -> Option<u64> {
    digits
        .chars()
        .filter(|c| *c != '_')
        .try_fold(0u64, |acc, c| {
            acc.checked_mul(u64::from(radix))?
                .checked_add(u64::from(c.to_digit(radix)?))
        })
}

/// How the decimal `text` (`digits[.digits][e[+-]digits]`, no `_`, no
/// suffix) compares with the finite, positive `x`, exactly: both as a
/// normalised digit string and the exponent of its first digit, `x` through
/// its exact decimal expansion (every `f64` has one, of at most 767
/// significant digits, and Rust prints it exactly when asked for enough).
fn compare_decimal(text: &str, x: f64) -> Ordering {
    let Some((digits, exp)) = decimal_digits(text) else {
        // The text is zero.
        return Ordering::Less;
    };
    let expansion = format!("{x:.*e}", exact_digits(x));
    let Some((x_digits, x_exp)) = decimal_digits(&expansion) else {
        return Ordering::Greater;
    };
    exp.cmp(&x_exp).then_with(|| digits.cmp(&x_digits))
}

/// Enough digits after the first for `{:e}` to print `x` (finite, > 0)
/// exactly: `m × 2^e` (m odd) has at most `len(m) + e·log10 2` digits for
/// `e ≥ 0`, and `len(m · 5^-e) ≤ len(m) + |e|·log10 5` for `e < 0`. A
/// midpoint of `f32`, `f16` or `bf16` needs at most about 120.
fn exact_digits(x: f64) -> usize {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i64;
    let (m, e) = if field == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), field - 1075)
    };
    let tz = i64::from(m.trailing_zeros().min(63));
    let (len, e) = (64 - i64::from((m >> tz).leading_zeros()), e + tz);
    let digits = if e >= 0 {
        (len + e) * 302 / 1000
    } else {
        len * 302 / 1000 + (-e) * 699 / 1000
    };
    usize::try_from(digits + 2).unwrap_or(800)
}

/// The significant digits of a decimal (no leading or trailing zeros) and
/// the power of ten of the first one; `None` for zero.
fn decimal_digits(text: &str) -> Option<(String, i128)> {
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e),
        None => (text, "0"),
    };
    let (negative, exp_digits) = match exp.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, exp.strip_prefix('+').unwrap_or(exp)),
    };
    // Saturating: an exponent this large makes the literal infinite or
    // zero as an f64, and such literals are never compared.
    let exp = exp_digits
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0i128, |acc, d| {
            (acc * 10 + i128::from(d - b'0')).min(i128::from(i64::MAX))
        });
    let exp = if negative { -exp } else { exp };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let leading = all.len() - all.trim_start_matches('0').len();
    let significant = all.trim_start_matches('0').trim_end_matches('0');
    if significant.is_empty() {
        return None;
    }
    // The first significant digit's position: `int` digits are at powers
    // int.len()-1 down to 0, then the fraction continues below.
    let first = int.len() as i128 - 1 - leading as i128;
    Some((significant.to_string(), exp + first))
}

fn invalid(why: impl Into<String>) -> NumberError {
    NumberError::Invalid {
        why: why.into(),
        help: None,
    }
}

fn invalid_help(why: impl Into<String>, help: impl Into<String>) -> NumberError {
    NumberError::Invalid {
        why: why.into(),
        help: Some(help.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(text: &str) -> FloatLit {
        match parse(text) {
            Ok(Number::WideInt(value)) => value,
            other => panic!("{text} is not a wide integer literal: {other:?}"),
        }
    }

    fn int(value: u64, suffix: Option<Scalar>) -> Result<Number, NumberError> {
        Ok(Number::Int { value, suffix })
    }

    fn float(value: f64, suffix: Option<Scalar>) -> Result<Number, NumberError> {
        Ok(Number::Float {
            value: FloatLit::exact(value),
            suffix,
        })
    }

    fn lit(text: &str) -> FloatLit {
        match parse(text) {
            Ok(Number::Float { value, .. }) => value,
            other => panic!("{text} is not a float literal: {other:?}"),
        }
    }

    fn is_invalid(text: &str) -> bool {
        matches!(parse(text), Err(NumberError::Invalid { .. }))
    }

    #[test]
    fn integers() {
        assert_eq!(parse("42"), int(42, None));
        assert_eq!(parse("0x2A"), int(42, None));
        assert_eq!(parse("0b101"), int(5, None));
        assert_eq!(parse("1_000_000"), int(1_000_000, None));
        assert_eq!(parse("16u64"), int(16, Some(Scalar::U64)));
        assert_eq!(parse("255u8"), int(255, Some(Scalar::U8)));
        assert_eq!(parse("7i8"), int(7, Some(Scalar::I8)));
        assert_eq!(parse("65535u16"), int(65535, Some(Scalar::U16)));
        assert_eq!(parse("1_2i16"), int(12, Some(Scalar::I16)));
        assert_eq!(parse("0xffu32"), int(255, Some(Scalar::U32)));
        assert_eq!(parse("0x1f32u32"), int(0x1f32, Some(Scalar::U32)));
        assert_eq!(parse("0x1f_32"), int(0x1f32, None));
    }

    /// Hex digits first, as in Rust: what looks like a float suffix is
    /// digits; the suffix starts at the first character that is not one.
    #[test]
    fn hex_digits_come_before_suffixes() {
        assert_eq!(parse("0xf32"), int(0xf32, None));
        assert_eq!(parse("0xbf16"), int(0xbf16, None));
        assert_eq!(parse("0x0f64"), int(0xf64, None));
        assert_eq!(parse("0x1f16"), int(0x1f16, None));
        assert_eq!(parse("0xF32"), int(0xf32, None));
        assert_eq!(parse("0x_f32"), int(0xf32, None));
        assert_eq!(parse("0xf32_u64"), int(0xf32, Some(Scalar::U64)));
        assert_eq!(parse("0xbf16i32"), int(0xbf16, Some(Scalar::I32)));
        assert_eq!(parse("0xf64u32"), int(0xf64, Some(Scalar::U32)));
        assert_eq!(parse("0b1_0"), int(2, None));
        assert_eq!(parse("0b10u64"), int(2, Some(Scalar::U64)));
        // Binary digits stop at the first letter: a float suffix there is
        // a float suffix, and binary floats do not exist.
        for text in ["0b1f32", "0b1f16", "0b1bf16", "0b1f64", "0xfu7", "0xffx"] {
            assert!(is_invalid(text), "{text}: {:?}", parse(text));
        }
        assert_eq!(parse("7i32"), int(7, Some(Scalar::I32)));
        assert_eq!(parse("0xfu8"), int(15, Some(Scalar::U8)));
        assert_eq!(parse("0xffi16"), int(255, Some(Scalar::I16)));
        assert_eq!(parse("0b1u16"), int(1, Some(Scalar::U16)));
        assert_eq!(parse("18446744073709551615"), int(u64::MAX, None));
    }

    #[test]
    fn floats() {
        assert_eq!(parse("1.0"), float(1.0, None));
        assert_eq!(parse("1e-3"), float(1e-3, None));
        assert_eq!(parse("2.5e+4"), float(2.5e4, None));
        assert_eq!(parse("2.5E4f32"), float(2.5e4, Some(Scalar::F32)));
        assert_eq!(parse("1f32"), float(1.0, Some(Scalar::F32)));
        assert_eq!(parse("0.5bf16"), float(0.5, Some(Scalar::BF16)));
        assert_eq!(parse("3.4028235e38"), float(3.4028235e38, None));
    }

    #[test]
    fn malformed() {
        for text in [
            "0x", "0x_", "1e", "1e+", "0b102", "1.5u32", "5u7", "5u128", "1.5u8", "0b1f64", "3abc",
            "1e5u32", "0xu32", "0xu8",
        ] {
            assert!(
                is_invalid(text),
                "{text} should be invalid: {:?}",
                parse(text)
            );
        }
    }

    #[test]
    fn out_of_range() {
        assert_eq!(
            parse("18446744073709551616u64"),
            Err(NumberError::OutOfRange(Scalar::U64))
        );
        assert_eq!(
            parse("99999999999999999999i32"),
            Err(NumberError::OutOfRange(Scalar::I32))
        );
        assert_eq!(
            parse("0x1_0000_0000_0000_0000u32"),
            Err(NumberError::OutOfRange(Scalar::U32))
        );
        assert_eq!(parse("1e999"), Err(NumberError::OutOfRange(Scalar::F64)));
        assert_eq!(parse("1e999f32"), Err(NumberError::OutOfRange(Scalar::F32)));
    }

    /// Unsuffixed integers past `u64::MAX` are kept for a float context,
    /// exactly enough to round once to every float type.
    #[test]
    fn wide_integers_keep_their_value() {
        assert_eq!(wide("18446744073709551616").nearest, 2f64.powi(64));
        assert_eq!(wide("0x1_0000_0000_0000_0000").nearest, 2f64.powi(64));
        assert_eq!(
            wide(&format!("0b1{}", "0".repeat(64))).nearest,
            2f64.powi(64)
        );
        assert_eq!(wide("100000000000000000000000").nearest, 1e23);
        assert_eq!(wide("100_000_000_000_000_000_000_000").nearest, 1e23);
        assert_eq!(wide(&"9".repeat(400)).nearest, f64::INFINITY);
        assert_eq!(
            wide(&format!("0x{}", "f".repeat(300))).nearest,
            f64::INFINITY
        );
        // 2^64 + 2^40: the f32 midpoint between 2^64 and 2^64 + 2^41 is
        // exactly an f64; a low bit past it decides the tie, upwards.
        let mid = (1u128 << 64) + (1 << 40);
        for (text, want) in [
            (format!("{mid}"), 2f64.powi(64)),
            (format!("{}", mid + 1), 2f64.powi(64) + 2f64.powi(41)),
            (format!("0x{mid:x}"), 2f64.powi(64)),
            (format!("0x{:x}", mid + 1), 2f64.powi(64) + 2f64.powi(41)),
            (format!("0x{:x}", mid - 1), 2f64.powi(64)),
        ] {
            assert_eq!(wide(&text).round(Format::F32), want, "{text}");
        }
        // Far past 121 bits, a single set bit at the end still counts.
        let long = format!("0x8{}1", "0".repeat(40));
        assert_eq!(wide(&long).side, Ordering::Greater);
        let f16_mid = format!("0x1{}", "0".repeat(40));
        assert_eq!(wide(&f16_mid).side, Ordering::Equal);
    }

    #[test]
    fn literals_round_once_from_their_digits() {
        // 1 + 2^-24 is the f32 midpoint between 1 and 1 + 2^-23, and the
        // f64 nearest to each of these literals.
        let mid = "1.000000059604644775390625";
        assert_eq!(lit(mid).round(Format::F32), 1.0);
        let above = format!("{mid}000000000000000000001");
        assert_eq!(lit(&above).nearest, 1.0 + 2f64.powi(-24));
        assert_eq!(lit(&above).side, Ordering::Greater);
        assert_eq!(lit(&above).round(Format::F32), 1.0 + 2f64.powi(-23));
        let below = "1.000000059604644775390624999999999999";
        assert_eq!(lit(below).round(Format::F32), 1.0);
        assert_eq!(lit(below).side, Ordering::Less);
        // f16: 1 + 2^-11 = 1.00048828125.
        assert_eq!(lit("1.00048828125").round(Format::F16), 1.0);
        assert_eq!(
            lit("1.00048828125000000001").round(Format::F16),
            1.0 + 2f64.powi(-10)
        );
        assert_eq!(lit("1.00146484375").round(Format::F16), 1.0 + 2f64.powi(-9));
        // bf16: 1 + 2^-8 = 1.00390625.
        assert_eq!(lit("1.00390625").round(Format::BF16), 1.0);
        assert_eq!(
            lit("1.0039062500000000000000001").round(Format::BF16),
            1.0 + 2f64.powi(-7)
        );
        assert_eq!(lit("100390625e-8").round(Format::BF16), 1.0);
        assert_eq!(
            lit("0.0000000100390625000000000001e8").round(Format::BF16),
            1.0 + 2f64.powi(-7)
        );
        // The f32 overflow threshold, 2^128 - 2^103, and a hair below it.
        let t = "340282356779733661637539395458142568448";
        assert_eq!(lit(&format!("{t}.0")).round(Format::F32), f64::INFINITY);
        assert_eq!(lit(&format!("{t}.0f32")).round(Format::F32), f64::INFINITY);
        assert_eq!(
            lit("340282356779733661637539395458142568447.9999").round(Format::F32),
            f64::from(f32::MAX)
        );
        // f16's: 65520.
        assert_eq!(lit("65519.999999999999999").round(Format::F16), 65504.0);
        assert_eq!(lit("65520.0").round(Format::F16), f64::INFINITY);
    }

    #[test]
    fn f32_literals_agree_with_rusts_parser() {
        // Rust's `str::parse::<f32>` rounds correctly from the digits.
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let mid = f64::from(f32::from_bits((s as u32) & 0x7F7F_FFFF));
            let next = f64::from(f32::from_bits(((s as u32) & 0x7F7F_FFFF) + 1));
            // A midpoint written exactly, then nudged by a digit far down.
            let m = (mid + next) / 2.0;
            for text in [format!("{m:.800e}"), format!("{m:.60e}")] {
                let want = f64::from(text.parse::<f32>().unwrap_or(f32::NAN));
                let got = lit(&text).round(Format::F32);
                assert_eq!(got.to_bits(), want.to_bits(), "{text}");
            }
        }
    }

    #[test]
    fn exact_digits_suffice() {
        for x in [
            1.0,
            0.1,
            2f64.powi(-150),
            3.0 * 2f64.powi(-150),
            f64::MAX,
            5e-324,
            1e300,
        ] {
            let short = format!("{x:.*e}", exact_digits(x));
            let long = format!("{x:.900e}");
            let trim = |t: &str| {
                let (m, e) = t.split_once('e').unwrap_or((t, ""));
                format!("{}e{e}", m.trim_end_matches('0'))
            };
            assert_eq!(trim(&short), trim(&long), "{x:e}");
        }
    }

    #[test]
    fn decimal_comparison() {
        assert_eq!(compare_decimal("0.5", 0.5), Ordering::Equal);
        assert_eq!(compare_decimal("5e-1", 0.5), Ordering::Equal);
        assert_eq!(compare_decimal("000.50000", 0.5), Ordering::Equal);
        assert_eq!(compare_decimal("0.50001", 0.5), Ordering::Greater);
        assert_eq!(compare_decimal("0.49999", 0.5), Ordering::Less);
        assert_eq!(compare_decimal("50e-2", 0.5), Ordering::Equal);
        assert_eq!(compare_decimal("0.0", 0.5), Ordering::Less);
        assert_eq!(
            compare_decimal("1e-99999999999999999999999", 0.5),
            Ordering::Less
        );
        assert_eq!(compare_decimal("123.456", 123.456), Ordering::Less);
        assert_eq!(compare_decimal("0.1", 0.1), Ordering::Less);
    }
}
