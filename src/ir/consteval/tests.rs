use super::*;
use crate::span::Span;

fn c(v: Value, ty: Scalar) -> Expr {
    Expr::new(ExprKind::Const(v), ty, Span::default())
}

fn int(v: i128, ty: Scalar) -> Expr {
    c(Value::Int(v), ty)
}

fn float(v: f64, ty: Scalar) -> Expr {
    c(Value::Float(v), ty)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let ty = if op.is_comparison() {
        Scalar::Bool
    } else {
        a.ty
    };
    Expr::new(
        ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty,
        Span::default(),
    )
}

fn float_of(e: &Expr) -> f64 {
    match eval(e) {
        Ok(Value::Float(f)) => f,
        other => panic!("not a float: {other:?}"),
    }
}

#[test]
fn arithmetic_wraps_in_its_type() {
    let e = bin(
        BinOp::Add,
        int(u32::MAX as i128, Scalar::U32),
        int(1, Scalar::U32),
    );
    assert_eq!(eval(&e), Ok(Value::Int(0)));
    let e = bin(BinOp::Mul, int(1024, Scalar::U32), int(4, Scalar::U32));
    assert_eq!(eval_u64(&e), Some(4096));
    let e = bin(
        BinOp::Mul,
        int(u64::MAX as i128, Scalar::U64),
        int(u64::MAX as i128, Scalar::U64),
    );
    assert_eq!(eval(&e), Ok(Value::Int(1)));
    let e = bin(
        BinOp::Sub,
        int(i64::MIN as i128, Scalar::I64),
        int(1, Scalar::I64),
    );
    assert_eq!(eval(&e), Ok(Value::Int(i64::MAX as i128)));
}

#[test]
fn division_by_zero_has_no_value() {
    let e = bin(BinOp::Div, int(1, Scalar::I32), int(0, Scalar::I32));
    assert_eq!(eval(&e), Err(NotConst::DivideByZero(BinOp::Div)));
    let e = bin(BinOp::Rem, int(1, Scalar::U64), int(0, Scalar::U64));
    assert_eq!(eval(&e), Err(NotConst::DivideByZero(BinOp::Rem)));
    // Float division by zero is IEEE.
    let e = bin(BinOp::Div, float(1.0, Scalar::F32), float(0.0, Scalar::F32));
    assert_eq!(float_of(&e), f64::INFINITY);
}

#[test]
fn min_divided_by_minus_one_wraps() {
    for ty in [Scalar::I32, Scalar::I64] {
        let min = -(1i128 << (ty.bits() - 1));
        let e = bin(BinOp::Div, int(min, ty), int(-1, ty));
        assert_eq!(eval(&e), Ok(Value::Int(min)), "{ty}");
        let e = bin(BinOp::Rem, int(min, ty), int(-1, ty));
        assert_eq!(eval(&e), Ok(Value::Int(0)), "{ty}");
    }
    // Truncation toward zero, remainder with the dividend's sign.
    let e = bin(BinOp::Div, int(-7, Scalar::I32), int(2, Scalar::I32));
    assert_eq!(eval(&e), Ok(Value::Int(-3)));
    let e = bin(BinOp::Rem, int(-7, Scalar::I32), int(2, Scalar::I32));
    assert_eq!(eval(&e), Ok(Value::Int(-1)));
}

#[test]
fn shifts_clamp_their_amount_as_unsigned() {
    let shl = |x: i128, ty, s: i128, sty| eval(&bin(BinOp::Shl, int(x, ty), int(s, sty)));
    let shr = |x: i128, ty, s: i128, sty| eval(&bin(BinOp::Shr, int(x, ty), int(s, sty)));
    use Scalar::*;
    assert_eq!(shl(1, U32, 31, U32), Ok(Value::Int(1 << 31)));
    assert_eq!(shl(1, U32, 32, U32), Ok(Value::Int(0)));
    assert_eq!(shl(1, U32, 33, U32), Ok(Value::Int(0)));
    assert_eq!(shl(1, I32, 31, U32), Ok(Value::Int(i32::MIN as i128)));
    // An i32 amount of -1 is 0xFFFFFFFF to PTX: a full shift.
    assert_eq!(shl(1, U32, -1, I32), Ok(Value::Int(0)));
    assert_eq!(shr(-8, I32, -1, I32), Ok(Value::Int(-1)));
    assert_eq!(shr(8, I32, -1, I32), Ok(Value::Int(0)));
    assert_eq!(shr(u32::MAX as i128, U32, -1, I64), Ok(Value::Int(0)));
    assert_eq!(shr(-8, I32, 32, U32), Ok(Value::Int(-1)));
    assert_eq!(shr(-8, I32, 33, U32), Ok(Value::Int(-1)));
    assert_eq!(shr(-8, I32, 1, U32), Ok(Value::Int(-4)));
    assert_eq!(shr(u32::MAX as i128, U32, 31, U32), Ok(Value::Int(1)));
    assert_eq!(shr(u32::MAX as i128, U32, 32, U32), Ok(Value::Int(0)));
    assert_eq!(shl(1, U64, 63, U32), Ok(Value::Int(1 << 63)));
    assert_eq!(shl(1, U64, 64, U32), Ok(Value::Int(0)));
    assert_eq!(shl(1, U64, 1 << 32, U64), Ok(Value::Int(0)));
    assert_eq!(shr(i64::MIN as i128, I64, 64, U64), Ok(Value::Int(-1)));
    assert_eq!(shr(i64::MIN as i128, I64, 63, U64), Ok(Value::Int(-1)));
    assert_eq!(shr(u64::MAX as i128, U64, 63, I32), Ok(Value::Int(1)));
}

#[test]
fn casts_truncate_saturate_and_map_nan_as_cvt_does() {
    use Scalar::*;
    assert_eq!(cast(Value::Float(-1.5), F32, U32), Value::Int(0));
    assert_eq!(
        cast(Value::Float(1e20), F32, I32),
        Value::Int(i32::MAX as i128)
    );
    assert_eq!(cast(Value::Float(-2.7), F32, I32), Value::Int(-2));
    assert_eq!(cast(Value::Int(-1), I32, U32), Value::Int(u32::MAX as i128));
    assert_eq!(cast(Value::Int(-1), I32, U64), Value::Int(u64::MAX as i128));
    assert_eq!(
        cast(Value::Int(u32::MAX as i128), U32, I64),
        Value::Int(u32::MAX as i128)
    );
    assert_eq!(
        cast(Value::Float(f64::INFINITY), F64, U64),
        Value::Int(u64::MAX as i128)
    );
    assert_eq!(
        cast(Value::Float(f64::NEG_INFINITY), F16, I64),
        Value::Int(i64::MIN as i128)
    );
    // NaN: 0 from f32 (and halves) into 32 bits, else 1 << (width - 1).
    let nan = Value::Float(f64::NAN);
    assert_eq!(cast(nan, F32, I32), Value::Int(0));
    assert_eq!(cast(nan, F32, U32), Value::Int(0));
    assert_eq!(cast(nan, BF16, U32), Value::Int(0));
    assert_eq!(cast(nan, F32, I64), Value::Int(i64::MIN as i128));
    assert_eq!(cast(nan, F16, U64), Value::Int(1 << 63));
    assert_eq!(cast(nan, F64, I32), Value::Int(i32::MIN as i128));
    assert_eq!(cast(nan, F64, U32), Value::Int(1 << 31));
    assert_eq!(cast(nan, F64, I64), Value::Int(i64::MIN as i128));
    assert_eq!(cast(nan, F32, Bool), Value::Bool(true));
}

#[test]
fn casts_to_float_round_once() {
    use Scalar::*;
    // u64::MAX rounds straight to 2^64 in f32 (no detour through f64).
    assert_eq!(
        cast(Value::Int(u64::MAX as i128), U64, F32),
        Value::Float(2f64.powi(64))
    );
    let i = (1i128 << 60) + (1 << 52) + 1;
    assert_eq!(
        cast(Value::Int(i), I64, BF16),
        Value::Float(2f64.powi(60) + 2f64.powi(53))
    );
    // f32 → f16 ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
    let tie = 1.0 + 2f64.powi(-11);
    assert_eq!(cast(Value::Float(tie), F32, F16), Value::Float(1.0));
    let tie = 1.0 + 3.0 * 2f64.powi(-11);
    assert_eq!(
        cast(Value::Float(tie), F32, F16),
        Value::Float(1.0 + 2f64.powi(-9))
    );
    // f64 → f16 rounds once (through f32 it would tie and go down).
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(
        cast(Value::Float(x), F64, F16),
        Value::Float(1.0 + 2f64.powi(-10))
    );
    assert_eq!(
        cast(Value::Float(1e10), F64, F16),
        Value::Float(f64::INFINITY)
    );
}

#[test]
fn half_arithmetic_rounds_after_each_operation() {
    // In f16, 2048 + 1 is 2048 (ties to even), so (2048 + 1) + 1 is 2048,
    // where carrying f64 would give 2050.
    let e = bin(
        BinOp::Add,
        bin(
            BinOp::Add,
            float(2048.0, Scalar::F16),
            float(1.0, Scalar::F16),
        ),
        float(1.0, Scalar::F16),
    );
    assert_eq!(float_of(&e), 2048.0);
    // f32: 2^24 + 1 is 2^24.
    let e = bin(
        BinOp::Add,
        bin(
            BinOp::Add,
            float(16777216.0, Scalar::F32),
            float(1.0, Scalar::F32),
        ),
        float(1.0, Scalar::F32),
    );
    assert_eq!(float_of(&e), 16777216.0);
    let e = bin(BinOp::Div, float(1.0, Scalar::F32), float(3.0, Scalar::F32));
    assert_eq!(float_of(&e), f64::from(1.0f32 / 3.0));
}

#[test]
fn multiply_add_contracts_to_one_rounding() {
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: the product rounded to f32 loses
    // the 2^-24, the fused form keeps it.
    let x = 1.0 + 2f64.powi(-12);
    let prod = bin(BinOp::Mul, float(x, Scalar::F32), float(x, Scalar::F32));
    let e = bin(BinOp::Sub, prod.clone(), float(1.0, Scalar::F32));
    assert_eq!(float_of(&e), 2f64.powi(-11) + 2f64.powi(-24));
    let e = bin(BinOp::Add, float(-1.0, Scalar::F32), prod.clone());
    assert_eq!(float_of(&e), 2f64.powi(-11) + 2f64.powi(-24));
    let e = bin(BinOp::Sub, float(1.0, Scalar::F32), prod);
    assert_eq!(float_of(&e), -(2f64.powi(-11) + 2f64.powi(-24)));
    // f16 does not contract: the product rounds to f16 first.
    let prod = bin(
        BinOp::Mul,
        float(1.0 + 2f64.powi(-10), Scalar::F16),
        float(1.0 + 2f64.powi(-10), Scalar::F16),
    );
    let e = bin(BinOp::Sub, prod, float(1.0, Scalar::F16));
    assert_eq!(float_of(&e), 2f64.powi(-9));
}

#[test]
fn min_max_follow_ptx_on_nan_and_signed_zero() {
    assert_eq!(min_num(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(min_num(0.0, -0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(max_num(-0.0, 0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(max_num(0.0, -0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(min_num(f64::NAN, 1.0), 1.0);
    assert_eq!(max_num(2.0, f64::NAN), 2.0);
    assert!(min_num(f64::NAN, f64::NAN).is_nan());
}

#[test]
fn fma_of_halves_rounds_once() {
    // 7 × 37 = 259, halfway between the bf16 values 258 and 260. A tiny
    // addend decides the way; in f64, 259 ± 2^-100 rounds back to 259 and
    // would tie to even (260) both times.
    assert_eq!(fma(7.0, 37.0, 2f64.powi(-100), Format::BF16), 260.0);
    assert_eq!(fma(7.0, 37.0, -(2f64.powi(-100)), Format::BF16), 258.0);
    assert_eq!(fma(7.0, 37.0, 0.0, Format::BF16), 260.0);
    assert_eq!(fma(-7.0, 37.0, 2f64.powi(-100), Format::BF16), -258.0);
    // f16: (1 + 2^-10)^2 + 2^-11 = 1 + 2^-9 + 2^-11 + 2^-20, just above a
    // midpoint.
    let a = 1.0 + 2f64.powi(-10);
    assert_eq!(
        fma(a, a, 2f64.powi(-11), Format::F16),
        1.0 + 2f64.powi(-9) + 2f64.powi(-10)
    );
    assert_eq!(fma(0.0, -1.0, 0.0, Format::F16).to_bits(), 0.0f64.to_bits());
    assert_eq!(
        fma(-0.0, 1.0, -0.0, Format::F16).to_bits(),
        (-0.0f64).to_bits()
    );
    assert!(fma(f64::INFINITY, 0.0, 1.0, Format::F16).is_nan());
}
