//! The two 8-bit float formats of Hopper's tensor cores (PTX `.e4m3` and
//! `.e5m2`, OCP FP8): decoding to `f64` (exact) and rounding an `f64` to
//! them, to nearest, ties to even.
//!
//! - `e4m3` (ml_dtypes' `float8_e4m3fn`): sign, 4 exponent bits (bias 7),
//!   3 fraction bits; no infinities; `S.1111.111` is NaN, so the largest
//!   finite value is 448.
//! - `e5m2` (`float8_e5m2`): sign, 5 exponent bits (bias 15), 2 fraction
//!   bits, IEEE-like with infinities and NaNs; the largest finite value is
//!   57344.

/// An 8-bit float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8 {
    E4M3,
    E5M2,
}

impl Fp8 {
    fn mant(self) -> i32 {
        match self {
            Fp8::E4M3 => 3,
            Fp8::E5M2 => 2,
        }
    }

    fn bias(self) -> i32 {
        match self {
            Fp8::E4M3 => 7,
            Fp8::E5M2 => 15,
        }
    }

    /// The largest finite magnitude.
    pub fn max(self) -> f64 {
        match self {
            Fp8::E4M3 => 448.0,
            Fp8::E5M2 => 57344.0,
        }
    }

    /// The NaN the conversions produce (`0x7f` for both).
    pub fn nan(self) -> u8 {
        0x7f
    }

    /// The exact value of `bits`.
    pub fn decode(self, bits: u8) -> f64 {
        let neg = bits & 0x80 != 0;
        let m = i32::from(bits) & ((1 << self.mant()) - 1);
        let e = (i32::from(bits) & 0x7f) >> self.mant();
        let emax_field = (1 << (7 - self.mant())) - 1;
        let v = match self {
            Fp8::E4M3 if e == emax_field && m == 7 => f64::NAN,
            Fp8::E5M2 if e == emax_field && m == 0 => f64::INFINITY,
            Fp8::E5M2 if e == emax_field => f64::NAN,
            _ if e == 0 => f64::from(m) * 2f64.powi(1 - self.bias() - self.mant()),
            _ => f64::from(m + (1 << self.mant())) * 2f64.powi(e - self.bias() - self.mant()),
        };
        if neg {
            -v
        } else {
            v
        }
    }

    /// `x` rounded to nearest, ties to even. With `satfinite` (PTX's
    /// `.satfinite`, required by `cvt` to these formats) a magnitude beyond
    /// the largest finite value, infinities included, becomes that value;
    /// without it, `e5m2` overflows to infinity and `e4m3` to NaN. NaN
    /// gives NaN.
    pub fn encode(self, x: f64, satfinite: bool) -> u8 {
        if x.is_nan() {
            return self.nan();
        }
        let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
        let a = x.abs();
        let overflow = |s: u8| -> u8 {
            match (satfinite, self) {
                (true, Fp8::E4M3) => s | 0x7e,
                (true, Fp8::E5M2) => s | 0x7b,
                (false, Fp8::E4M3) => s | 0x7f,
                (false, Fp8::E5M2) => s | 0x7c,
            }
        };
        if a.is_infinite() {
            return overflow(sign);
        }
        if a == 0.0 {
            return sign;
        }
        // The exponent of the leading bit, clamped to the subnormal range.
        let emin = 1 - self.bias();
        let e = ((a.to_bits() >> 52) as i32 - 1023).max(emin);
        let quantum = 2f64.powi(e - self.mant());
        let mut m = (a / quantum).round_ties_even() as i32;
        let mut e = e;
        if m >= 2 << self.mant() {
            m >>= 1;
            e += 1;
        }
        let value = f64::from(m) * 2f64.powi(e - self.mant());
        if value > self.max() {
            return overflow(sign);
        }
        if m < 1 << self.mant() {
            // Subnormal (or rounded to zero).
            return sign | m as u8;
        }
        let field = (e + self.bias()) as u8;
        sign | (field << self.mant()) | (m as u8 & ((1 << self.mant()) - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_round_trips() {
        for f in [Fp8::E4M3, Fp8::E5M2] {
            for b in 0..=255u8 {
                let v = f.decode(b);
                if v.is_nan() {
                    assert_eq!(f.encode(v, true), 0x7f);
                    continue;
                }
                if v.is_infinite() {
                    continue;
                }
                let back = f.encode(v, true);
                // -0 and +0 both keep their sign.
                assert_eq!(back, b, "{f:?} {b:#04x} = {v}");
            }
        }
    }

    #[test]
    fn known_values_and_rounding() {
        assert_eq!(Fp8::E4M3.decode(0x38), 1.0);
        assert_eq!(Fp8::E4M3.decode(0x7e), 448.0);
        assert!(Fp8::E4M3.decode(0x7f).is_nan());
        assert_eq!(Fp8::E4M3.decode(0x01), 2f64.powi(-9));
        assert_eq!(Fp8::E5M2.decode(0x3c), 1.0);
        assert_eq!(Fp8::E5M2.decode(0x7b), 57344.0);
        assert_eq!(Fp8::E5M2.decode(0x7c), f64::INFINITY);
        assert_eq!(Fp8::E5M2.decode(0x01), 2f64.powi(-16));
        // 1 + 1/16 is halfway between 1 and 1.125 in e4m3: ties to even.
        assert_eq!(Fp8::E4M3.encode(1.0625, true), 0x38);
        assert_eq!(Fp8::E4M3.encode(1.1875, true), 0x3a);
        assert_eq!(Fp8::E4M3.encode(1000.0, true), 0x7e);
        assert_eq!(Fp8::E4M3.encode(-1000.0, true), 0xfe);
        assert_eq!(Fp8::E4M3.encode(1000.0, false), 0x7f);
        assert_eq!(Fp8::E5M2.encode(1e6, false), 0x7c);
        assert_eq!(Fp8::E5M2.encode(f64::NEG_INFINITY, true), 0xfb);
        // 464 rounds to 448 (the tie goes to the even mantissa 1.110).
        assert_eq!(Fp8::E4M3.encode(464.0, false), 0x7e);
        assert_eq!(Fp8::E4M3.encode(2f64.powi(-11), true), 0x00);
        assert_eq!(Fp8::E4M3.encode(3.0 * 2f64.powi(-11), true), 0x01);
    }
}
