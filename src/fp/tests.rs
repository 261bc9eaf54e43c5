use super::*;
use half::{bf16, f16};

/// A deterministic stream of "random" u64s (SplitMix64), so that the tests
/// need no seed handling and every run checks the same values.
fn stream(seed: u64) -> impl Iterator<Item = u64> {
    let mut s = seed;
    std::iter::repeat_with(move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

#[test]
fn every_f16_and_bf16_encoding_round_trips() {
    for b in 0..=u16::MAX {
        let h = f16::from_bits(b);
        let x = from_bits(u64::from(b), Format::F16);
        if h.is_nan() {
            assert!(x.is_nan());
            assert_eq!(to_bits(x, Format::F16), 0x7FFF);
        } else {
            assert_eq!(x.to_bits(), h.to_f64().to_bits(), "f16 {b:#06x}");
            assert_eq!(to_bits(x, Format::F16), u64::from(b), "f16 {b:#06x}");
            assert_eq!(round(x, Format::F16).to_bits(), x.to_bits());
        }
        let h = bf16::from_bits(b);
        let x = from_bits(u64::from(b), Format::BF16);
        if h.is_nan() {
            assert!(x.is_nan());
            assert_eq!(to_bits(x, Format::BF16), 0x7FFF);
        } else {
            assert_eq!(x.to_bits(), h.to_f64().to_bits(), "bf16 {b:#06x}");
            assert_eq!(to_bits(x, Format::BF16), u64::from(b), "bf16 {b:#06x}");
        }
    }
}

#[test]
fn f32_rounding_matches_rust_casts() {
    for bits in stream(1).take(200_000) {
        let x = f64::from_bits(bits);
        let want = x as f32;
        let got = round(x, Format::F32);
        if want.is_nan() {
            assert!(got.is_nan());
        } else {
            assert_eq!(got.to_bits(), f64::from(want).to_bits(), "{x:e}");
            assert_eq!(to_bits(got, Format::F32), u64::from(want.to_bits()));
        }
    }
}

#[test]
fn f32_to_half_rounding_matches_the_half_crate() {
    // `half`'s conversions from f32 are correctly rounded (its f64 ones are
    // not: they drop the low 32 bits of the f64 fraction).
    for bits in stream(2).take(200_000) {
        let y = f32::from_bits(bits as u32);
        if y.is_nan() {
            continue;
        }
        let x = f64::from(y);
        assert_eq!(
            to_bits(x, Format::F16),
            u64::from(f16::from_f32(y).to_bits()),
            "{y:e}"
        );
        assert_eq!(
            to_bits(x, Format::BF16),
            u64::from(bf16::from_f32(y).to_bits()),
            "{y:e}"
        );
    }
}

#[test]
fn f64_to_half_rounds_once() {
    // 1 + 2^-11 is the f16 midpoint between 1 and 1 + 2^-10; anything above
    // it rounds up, however little (the half crate truncates this away).
    let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-50);
    assert_eq!(to_bits(above, Format::F16), 0x3C01);
    assert_eq!(to_bits(1.0 + 2f64.powi(-11), Format::F16), 0x3C00);
    assert_eq!(to_bits(1.0 + 3.0 * 2f64.powi(-11), Format::F16), 0x3C02);
    // f64 → f32 → f16 would round twice here: the f32 rounding lands on the
    // f16 midpoint and ties to even goes down.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(round(x, Format::F32), 1.0 + 2f64.powi(-11));
    assert_eq!(to_bits(x, Format::F16), 0x3C01);
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(to_bits(x, Format::BF16), 0x3F81);
}

#[test]
fn half_edges() {
    assert_eq!(to_bits(65504.0, Format::F16), 0x7BFF);
    assert_eq!(to_bits(65519.99, Format::F16), 0x7BFF);
    assert_eq!(to_bits(65520.0, Format::F16), 0x7C00); // the tie goes to even: overflow
    assert_eq!(to_bits(-65520.0, Format::F16), 0xFC00);
    assert_eq!(to_bits(2f64.powi(-24), Format::F16), 0x0001);
    assert_eq!(to_bits(2f64.powi(-25), Format::F16), 0x0000); // tie to even zero
    assert_eq!(to_bits(2f64.powi(-25) * 1.0000001, Format::F16), 0x0001);
    assert_eq!(to_bits(-2f64.powi(-26), Format::F16), 0x8000);
    assert_eq!(to_bits(6.103515625e-5, Format::F16), 0x0400);
    assert_eq!(to_bits(0.1, Format::F16), 0x2E66);
    assert_eq!(to_bits(f64::INFINITY, Format::F16), 0x7C00);
    assert_eq!(to_bits(-0.0, Format::F16), 0x8000);
    assert_eq!(to_bits(f64::NAN, Format::F16), 0x7FFF);
    assert_eq!(to_bits(0.1, Format::BF16), 0x3DCD);
    assert_eq!(to_bits(3.0e38, Format::BF16), 0x7F62);
    assert_eq!(to_bits(f64::MAX, Format::BF16), 0x7F80);
    assert_eq!(to_bits(f64::MIN_POSITIVE, Format::BF16), 0);
    assert_eq!(to_bits(f64::NAN, Format::F32), 0x7FFF_FFFF);
    assert_eq!(to_bits(f64::NAN, Format::F64), 0x7FFF_FFFF_FFFF_FFFF);
}

#[test]
fn integers_round_once() {
    for bits in stream(3).take(100_000) {
        let (u, i) = (bits >> (bits % 64), bits as i64 >> (bits % 61));
        assert_eq!(from_int(i128::from(u), Format::F32), f64::from(u as f32));
        assert_eq!(from_int(i128::from(i), Format::F32), f64::from(i as f32));
        assert_eq!(from_int(i128::from(u), Format::F64), u as f64);
        assert_eq!(from_int(i128::from(i), Format::F64), i as f64);
    }
    assert_eq!(from_int(u64::MAX.into(), Format::F32), 2f64.powi(64));
    // 2^60 + 2^52 + 1: through f64 it lands on the bf16 midpoint 2^60 + 2^52
    // and ties to even (down); directly it rounds up.
    let i = (1i128 << 60) + (1 << 52) + 1;
    assert_eq!(from_int(i, Format::BF16), 2f64.powi(60) + 2f64.powi(53));
    assert_eq!(from_int(-i, Format::BF16), -(2f64.powi(60) + 2f64.powi(53)));
    assert_eq!(from_int(65519, Format::F16), 65504.0);
    assert_eq!(from_int(65520, Format::F16), f64::INFINITY);
    assert_eq!(from_int(2049, Format::F16), 2048.0);
    assert_eq!(from_int(2051, Format::F16), 2052.0);
    assert_eq!(from_int(0, Format::F16).to_bits(), 0);
    assert_eq!(from_int(i128::MIN, Format::F32), -(2f64.powi(127)));
}

#[test]
fn midpoints_and_their_side() {
    let m = 1.0 + 2f64.powi(-11);
    assert!(is_midpoint(m, Format::F16));
    assert!(!is_midpoint(m, Format::F32));
    assert!(!is_midpoint(1.0, Format::F16));
    assert_eq!(
        round_near(m, Ordering::Greater, Format::F16),
        1.0 + 2f64.powi(-10)
    );
    assert_eq!(round_near(m, Ordering::Less, Format::F16), 1.0);
    assert_eq!(
        round_near(-m, Ordering::Less, Format::F16),
        -(1.0 + 2f64.powi(-10))
    );
    assert_eq!(round_near(m, Ordering::Equal, Format::F16), 1.0);
    // The f32 overflow threshold: f32::MAX + half an ulp.
    let t = f64::from(f32::MAX) + 2f64.powi(103);
    assert!(is_midpoint(t, Format::F32));
    assert_eq!(
        round_near(t, Ordering::Less, Format::F32),
        f64::from(f32::MAX)
    );
    assert_eq!(round_near(t, Ordering::Equal, Format::F32), f64::INFINITY);
    // Smallest f32 subnormal, halved.
    assert!(is_midpoint(2f64.powi(-150), Format::F32));
    assert_eq!(
        round_near(2f64.powi(-150), Ordering::Greater, Format::F32),
        2f64.powi(-149)
    );
    assert_eq!(
        round_near(2f64.powi(-150), Ordering::Equal, Format::F32),
        0.0
    );
}

#[test]
fn two_sum_is_exact() {
    let (s, e) = two_sum(1.0, 2f64.powi(-60));
    assert_eq!((s, e), (1.0, 2f64.powi(-60)));
    let (s, e) = two_sum(1e300, -1e300);
    assert_eq!((s, e), (0.0, 0.0));
}
