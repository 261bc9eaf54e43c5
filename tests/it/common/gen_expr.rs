//! Random constant kdsl expressions over every scalar type, each with the
//! value it must have.
//!
//! The value comes from a reference evaluator written here, independently
//! of the compiler, from Rust's own IEEE and wrapping arithmetic and the
//! `half` crate for `f16`/`bf16` (whose arithmetic is done in `f32` and
//! rounded back once, and whose conversions *from f32* round correctly). It
//! encodes the semantics kdsl documents in `docs/language.md` ("Constant
//! evaluation"): the rules of the PTX instructions kdslc emits.
//!
//! `tests/it/check/consteval.rs` compares the compiler's folded constants with
//! these values; the simulator's tests run the same expressions as PTX. An
//! expression's source is fully parenthesised and every literal carries its
//! type suffix, so it means the same thing in any context.

use half::{bf16, f16};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::fmt::Write as _;

/// The scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    BF16,
    F32,
    F64,
    /// Two halves in one register: not in [`Ty::ALL`] (no `as`, no
    /// comparisons), generated as their own expressions ([`Ty::EXPRS`]).
    F16x2,
    BF16x2,
}

impl Ty {
    pub const ALL: [Ty; 13] = {
        use Ty::*;
        [
            Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64,
        ]
    };
    /// The packed pairs.
    pub const PACKED: [Ty; 2] = [Ty::F16x2, Ty::BF16x2];
    /// Every type the generator makes expressions of: [`Ty::ALL`], then
    /// [`Ty::PACKED`].
    pub const EXPRS: [Ty; 15] = {
        use Ty::*;
        [
            Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, F16x2, BF16x2,
        ]
    };
    pub const INTS: [Ty; 8] = {
        use Ty::*;
        [I8, U8, I16, U16, I32, U32, I64, U64]
    };

    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I8 => "i8",
            Ty::U8 => "u8",
            Ty::I16 => "i16",
            Ty::U16 => "u16",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::I64 => "i64",
            Ty::U64 => "u64",
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::F16x2 => "f16x2",
            Ty::BF16x2 => "bf16x2",
        }
    }

    /// `f16x2`, `bf16x2`.
    pub fn is_packed(self) -> bool {
        matches!(self, Ty::F16x2 | Ty::BF16x2)
    }

    /// The half type of a pair (`f16` of `f16x2`); itself otherwise.
    pub fn half(self) -> Ty {
        match self {
            Ty::F16x2 => Ty::F16,
            Ty::BF16x2 => Ty::BF16,
            t => t,
        }
    }

    /// Width of the value's encoding (1 for `bool`).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Bool => 1,
            Ty::I8 | Ty::U8 => 8,
            Ty::I16 | Ty::U16 | Ty::F16 | Ty::BF16 => 16,
            Ty::I32 | Ty::U32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 32,
            Ty::I64 | Ty::U64 | Ty::F64 => 64,
        }
    }

    pub fn is_int(self) -> bool {
        Ty::INTS.contains(&self)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64)
    }

    /// `u8`, `i8`, `u16`, `i16`.
    pub fn is_narrow(self) -> bool {
        matches!(self, Ty::I8 | Ty::U8 | Ty::I16 | Ty::U16)
    }

    /// `f16`, `bf16`.
    pub fn is_half(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16)
    }

    /// `f32`/`f64`: `a * b + c` contracts; `min`, `max`, `fma` apply.
    pub fn is_wide_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// Bytes in memory (a shared array element; `bool` takes a byte).
    pub fn size(self) -> u32 {
        match self {
            Ty::Bool | Ty::I8 | Ty::U8 => 1,
            Ty::I16 | Ty::U16 | Ty::F16 | Ty::BF16 => 2,
            Ty::I32 | Ty::U32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 4,
            Ty::I64 | Ty::U64 | Ty::F64 => 8,
        }
    }
}

/// A value of one scalar type.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
    /// Low half, then high half.
    F16x2(f16, f16),
    BF16x2(bf16, bf16),
}

impl Val {
    pub fn ty(self) -> Ty {
        match self {
            Val::Bool(_) => Ty::Bool,
            Val::I8(_) => Ty::I8,
            Val::U8(_) => Ty::U8,
            Val::I16(_) => Ty::I16,
            Val::U16(_) => Ty::U16,
            Val::I32(_) => Ty::I32,
            Val::U32(_) => Ty::U32,
            Val::I64(_) => Ty::I64,
            Val::U64(_) => Ty::U64,
            Val::F16(_) => Ty::F16,
            Val::BF16(_) => Ty::BF16,
            Val::F32(_) => Ty::F32,
            Val::F64(_) => Ty::F64,
            Val::F16x2(..) => Ty::F16x2,
            Val::BF16x2(..) => Ty::BF16x2,
        }
    }

    /// The halves of a pair (`None` for other values).
    pub fn halves(self) -> Option<(Val, Val)> {
        match self {
            Val::F16x2(lo, hi) => Some((Val::F16(lo), Val::F16(hi))),
            Val::BF16x2(lo, hi) => Some((Val::BF16(lo), Val::BF16(hi))),
            _ => None,
        }
    }

    /// The pair of type `ty` of two halves of its half type.
    pub fn pair(ty: Ty, lo: Val, hi: Val) -> Val {
        match (ty, lo, hi) {
            (Ty::F16x2, Val::F16(a), Val::F16(b)) => Val::F16x2(a, b),
            (Ty::BF16x2, Val::BF16(a), Val::BF16(b)) => Val::BF16x2(a, b),
            _ => lo,
        }
    }

    /// The value's encoding in its type's width (`bool`: 0 or 1).
    pub fn bits(self) -> u64 {
        match self {
            Val::Bool(b) => u64::from(b),
            Val::I8(x) => u64::from(x as u8),
            Val::U8(x) => u64::from(x),
            Val::I16(x) => u64::from(x as u16),
            Val::U16(x) => u64::from(x),
            Val::I32(x) => u64::from(x as u32),
            Val::U32(x) => u64::from(x),
            Val::I64(x) => x as u64,
            Val::U64(x) => x,
            Val::F16(x) => u64::from(x.to_bits()),
            Val::BF16(x) => u64::from(x.to_bits()),
            Val::F32(x) => u64::from(x.to_bits()),
            Val::F64(x) => x.to_bits(),
            Val::F16x2(lo, hi) => u64::from(lo.to_bits()) | u64::from(hi.to_bits()) << 16,
            Val::BF16x2(lo, hi) => u64::from(lo.to_bits()) | u64::from(hi.to_bits()) << 16,
        }
    }

    pub fn is_nan(self) -> bool {
        match self {
            Val::F16(x) => x.is_nan(),
            Val::BF16(x) => x.is_nan(),
            Val::F32(x) => x.is_nan(),
            Val::F64(x) => x.is_nan(),
            _ => false,
        }
    }

    /// The value a run of kdsl code must agree with: the same bits, or a
    /// NaN for a NaN. NaN payloads and signs are not compared: PTX leaves
    /// some unspecified (`abs.f32`, `cvt.f32.bf16` of a NaN), and kdsl
    /// promises only "a NaN" there.
    pub fn same(self, other: Val) -> bool {
        if let (Some((a, b)), Some((c, d))) = (self.halves(), other.halves()) {
            return self.ty() == other.ty() && a.same(c) && b.same(d);
        }
        self.ty() == other.ty()
            && if self.is_nan() || other.is_nan() {
                self.is_nan() && other.is_nan()
            } else {
                self.bits() == other.bits()
            }
    }

    /// The value from its encoding in `ty`'s width.
    pub fn from_bits(ty: Ty, bits: u64) -> Val {
        match ty {
            Ty::Bool => Val::Bool(bits & 1 == 1),
            Ty::I8 => Val::I8(bits as u8 as i8),
            Ty::U8 => Val::U8(bits as u8),
            Ty::I16 => Val::I16(bits as u16 as i16),
            Ty::U16 => Val::U16(bits as u16),
            Ty::I32 => Val::I32(bits as u32 as i32),
            Ty::U32 => Val::U32(bits as u32),
            Ty::I64 => Val::I64(bits as i64),
            Ty::U64 => Val::U64(bits),
            Ty::F16 => Val::F16(f16::from_bits(bits as u16)),
            Ty::BF16 => Val::BF16(bf16::from_bits(bits as u16)),
            Ty::F32 => Val::F32(f32::from_bits(bits as u32)),
            Ty::F64 => Val::F64(f64::from_bits(bits)),
            Ty::F16x2 => Val::F16x2(
                f16::from_bits(bits as u16),
                f16::from_bits((bits >> 16) as u16),
            ),
            Ty::BF16x2 => Val::BF16x2(
                bf16::from_bits(bits as u16),
                bf16::from_bits((bits >> 16) as u16),
            ),
        }
    }

    /// Integers as i128 (exact), for the reference's integer rules.
    fn int(self) -> i128 {
        match self {
            Val::Bool(b) => i128::from(b),
            Val::I8(x) => x.into(),
            Val::U8(x) => x.into(),
            Val::I16(x) => x.into(),
            Val::U16(x) => x.into(),
            Val::I32(x) => x.into(),
            Val::U32(x) => x.into(),
            Val::I64(x) => x.into(),
            Val::U64(x) => x.into(),
            _ => 0,
        }
    }

    /// Floats as f64 (exact: every float type's values are f64 values).
    fn float(self) -> f64 {
        match self {
            Val::F16(x) => x.to_f64(),
            Val::BF16(x) => x.to_f64(),
            Val::F32(x) => x.into(),
            Val::F64(x) => x,
            _ => 0.0,
        }
    }

    /// The integer `i` wrapped into `ty` (two's complement truncation).
    fn wrap(ty: Ty, i: i128) -> Val {
        match ty {
            Ty::I8 => Val::I8(i as i8),
            Ty::U8 => Val::U8(i as u8),
            Ty::I16 => Val::I16(i as i16),
            Ty::U16 => Val::U16(i as u16),
            Ty::I32 => Val::I32(i as i32),
            Ty::U32 => Val::U32(i as u32),
            Ty::I64 => Val::I64(i as i64),
            Ty::U64 => Val::U64(i as u64),
            _ => Val::Bool(i != 0),
        }
    }
}

/// Why an expression has no value: the compile errors it must produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Faults {
    /// A literal rounds to infinity in its type (E0003).
    pub out_of_range: bool,
    /// An integer `/` or `%` whose divisor is zero (E0117).
    pub divide_by_zero: bool,
}

impl Faults {
    fn or(self, other: Faults) -> Faults {
        Faults {
            out_of_range: self.out_of_range || other.out_of_range,
            divide_by_zero: self.divide_by_zero || other.divide_by_zero,
        }
    }

    /// The diagnostic codes the compiler must report, sorted.
    pub fn codes(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.out_of_range {
            out.push("E0003");
        }
        if self.divide_by_zero {
            out.push("E0117");
        }
        out
    }
}

/// A generated expression: its kdsl source, its type, and its value, or
/// the compile errors it must produce instead.
#[derive(Clone, Debug)]
pub struct GenExpr {
    pub source: String,
    pub ty: Ty,
    pub value: Result<Val, Faults>,
    /// Operators, calls, casts and literals in the expression.
    pub nodes: u32,
    /// The factors when this is an `f32`/`f64` product, which contracts with
    /// an enclosing `+`/`-` into one fused multiply-add.
    product: Option<(Val, Val)>,
    /// The literals (and literal NaNs and infinities) in source order: their
    /// text and value, so that a test can pass them as run-time values.
    pub leaves: Vec<(String, Val)>,
}

impl GenExpr {
    fn leaf(source: String, v: Val) -> GenExpr {
        GenExpr {
            leaves: vec![(source.clone(), v)],
            source,
            ty: v.ty(),
            value: Ok(v),
            nodes: 1,
            product: None,
        }
    }

    /// An operation on `parts`: `f` computes its value from theirs, unless
    /// one of them failed (then the failures propagate and the operation
    /// itself is not checked further, as the compiler does).
    fn node(
        source: String,
        ty: Ty,
        parts: &[&GenExpr],
        f: impl FnOnce(&[Val]) -> Result<Val, Faults>,
    ) -> GenExpr {
        let faults = parts
            .iter()
            .filter_map(|p| p.value.err())
            .fold(None, |acc: Option<Faults>, f| {
                Some(acc.unwrap_or_default().or(f))
            });
        let value = match faults {
            Some(f) => Err(f),
            None => {
                let vals: Vec<Val> = parts.iter().filter_map(|p| p.value.ok()).collect();
                f(&vals)
            }
        };
        GenExpr {
            source,
            ty,
            value,
            nodes: 1 + parts.iter().map(|p| p.nodes).sum::<u32>(),
            product: None,
            leaves: parts.iter().flat_map(|p| p.leaves.clone()).collect(),
        }
    }
}

const DIVIDE_BY_ZERO: Faults = Faults {
    out_of_range: false,
    divide_by_zero: true,
};

/// Expressions of each type (in `Ty::ALL` order), nested at most `depth`
/// operators deep.
pub fn exprs(depth: u32) -> Vec<BoxedStrategy<GenExpr>> {
    let mut level: Vec<BoxedStrategy<GenExpr>> = Ty::EXPRS.iter().map(|t| leaf(*t)).collect();
    for _ in 0..depth {
        let below = level.clone();
        level = Ty::EXPRS.iter().map(|t| composite(*t, &below)).collect();
    }
    level
}

/// Expressions of type `ty`, nested at most `depth` operators deep.
pub fn expr(ty: Ty, depth: u32) -> BoxedStrategy<GenExpr> {
    of(&exprs(depth), ty)
}

/// Expressions of any type, nested at most `depth` operators deep.
pub fn any_expr(depth: u32) -> BoxedStrategy<GenExpr> {
    proptest::strategy::Union::new(exprs(depth)).boxed()
}

fn of(level: &[BoxedStrategy<GenExpr>], ty: Ty) -> BoxedStrategy<GenExpr> {
    let i = Ty::EXPRS.iter().position(|t| *t == ty).unwrap_or(0);
    level[i].clone()
}

// ---------------------------------------------------------------- literals

/// A literal of type `ty`: edge values, random bit patterns, and (floats)
/// decimal texts at or just beside a rounding midpoint.
fn leaf(ty: Ty) -> BoxedStrategy<GenExpr> {
    match ty {
        // `f16x2(lo, hi)` of two half literals, or of two `f32` ones.
        t if t.is_packed() => prop_oneof![
            3 => (leaf(t.half()), leaf(t.half())).prop_map(move |(a, b)| pack(t, a, b)),
            1 => (leaf(Ty::F32), leaf(Ty::F32)).prop_map(move |(a, b)| pack(t, a, b)),
        ]
        .boxed(),
        Ty::Bool => any::<bool>()
            .prop_map(|b| GenExpr::leaf(b.to_string(), Val::Bool(b)))
            .boxed(),
        t if t.is_int() => {
            let width = t.bits();
            let edges: Vec<u64> = vec![
                0,
                1,
                2,
                3,
                7,
                31,
                32,
                33,
                63,
                64,
                65,
                u64::MAX,
                u64::MAX - 1,
                1 << (width - 1),
                (1 << (width - 1)) - 1,
                (1 << (width - 1)) + 1,
            ];
            prop_oneof![
                3 => proptest::sample::select(edges),
                2 => any::<u64>(),
                2 => 0u64..300,
                1 => any::<u64>().prop_map(move |x| x >> (x % 64)),
            ]
            .prop_map(move |bits| int_literal(Val::from_bits(t, bits)))
            .boxed()
        }
        t => prop_oneof![
            3 => any::<u64>().prop_map(move |b| float_literal(finite(t, b))),
            2 => proptest::sample::select(float_edges(t))
                .prop_map(float_literal),
            2 => (any::<u64>(), 0u8..3).prop_map(move |(b, side)| midpoint_literal(t, b, side)),
            // The overflow threshold (all ones clamp to the largest value).
            1 => (0u8..3).prop_map(move |side| midpoint_literal(t, u64::MAX, side)),
            1 => (any::<bool>(), any::<bool>()).prop_map(move |(nan, neg)| special(t, nan, neg)),
        ]
        .boxed(),
    }
}

/// The source of a literal of value `v` (a NaN or an infinity as the
/// division that makes it), which means `v` in any context.
pub fn literal_source(v: Val) -> String {
    if let Some((lo, hi)) = v.halves() {
        return format!(
            "{}({}, {})",
            v.ty().name(),
            literal_source(lo),
            literal_source(hi)
        );
    }
    match v {
        Val::Bool(b) => b.to_string(),
        _ if v.ty().is_int() => int_literal(v).source,
        _ if v.is_nan() => special(v.ty(), true, false).source,
        _ if v.float().is_infinite() => special(v.ty(), false, v.float() < 0.0).source,
        _ => float_literal(v).source,
    }
}

fn int_literal(v: Val) -> GenExpr {
    let ty = v.ty();
    let i = v.int();
    let source = if i < 0 {
        format!("({i}{})", ty.name())
    } else {
        format!("{i}{}", ty.name())
    };
    GenExpr::leaf(source, v)
}

/// A finite value of float type `ty` from random bits.
fn finite(ty: Ty, bits: u64) -> Val {
    let v = Val::from_bits(ty, bits >> (64 - ty.bits()));
    let inf = match v {
        Val::F16(x) => x.is_infinite() || x.is_nan(),
        Val::BF16(x) => x.is_infinite() || x.is_nan(),
        Val::F32(x) => !x.is_finite(),
        Val::F64(x) => !x.is_finite(),
        _ => false,
    };
    if inf {
        // Clear the top exponent bit: finite.
        Val::from_bits(ty, (bits >> (64 - ty.bits())) & !(1 << (ty.bits() - 2)))
    } else {
        v
    }
}

fn float_edges(ty: Ty) -> Vec<Val> {
    let vals: [f64; 18] = [
        // Factors whose exact products need more bits than the type has, so
        // that `x * x - 1` shows whether the product was rounded.
        1.000244140625,     // 1 + 2^-12
        1.0000000074505806, // 1 + 2^-27
        1.0078125,          // 1 + 2^-7
        -1.00048828125,     // -(1 + 2^-11)
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        3.0,
        0.1,
        65504.0,
        2048.0,
        16777216.0,
        2147483648.0,
        4294967296.0,
        9.223372036854776e18,
    ];
    let mut out: Vec<Val> = vals
        .iter()
        .map(|x| from_f64(ty, *x))
        .filter(|v| v.float().is_finite())
        .collect();
    // The largest finite value and the smallest subnormal of the type.
    let max = Val::from_bits(
        ty,
        (1u64 << (ty.bits() - 1)) - 1 - (1u64 << float_fraction_bits(ty)),
    );
    out.push(max);
    out.push(Val::from_bits(ty, 1));
    out
}

fn float_fraction_bits(ty: Ty) -> u32 {
    match ty {
        Ty::F16 => 10,
        Ty::BF16 => 7,
        Ty::F32 => 23,
        _ => 52,
    }
}

/// A float literal: the exact decimal of its value (which rounds back to
/// it), with the suffix.
fn float_literal(v: Val) -> GenExpr {
    let x = v.float();
    let text = format!("{:?}", x.abs());
    let text = if text.contains(['.', 'e']) {
        text
    } else {
        format!("{text}.0")
    };
    let source = if x.is_sign_negative() {
        format!("(-{text}{})", v.ty().name())
    } else {
        format!("{text}{}", v.ty().name())
    };
    GenExpr::leaf(source, v)
}

/// A decimal literal at a rounding midpoint of `ty` (side 1), just above it
/// (side 2) or just below it (side 0): the value a correct single rounding
/// from the digits gives is known by construction.
fn midpoint_literal(ty: Ty, bits: u64, side: u8) -> GenExpr {
    if ty == Ty::F64 {
        // Rust's parser is the reference for f64.
        let v = finite(ty, bits);
        let text = format!("{:.30e}", v.float().abs());
        let x: f64 = text.parse().unwrap_or(0.0);
        return GenExpr::leaf(format!("{text}f64"), Val::F64(x));
    }
    // A positive finite value below the largest, and the next one up.
    let width = ty.bits();
    let low = (bits >> (64 - width)) & ((1 << (width - 1)) - 1);
    let max_finite = (1u64 << (width - 1)) - 1 - (1u64 << float_fraction_bits(ty));
    let low = low.min(max_finite);
    let lo = Val::from_bits(ty, low);
    let hi = Val::from_bits(ty, low + 1); // may be +infinity
    let upper = if low == max_finite {
        hi_limit(ty)
    } else {
        hi.float()
    };
    let mid = (lo.float() + upper) / 2.0;
    let exact = format!("{mid:.1100e}");
    let (mantissa, exp) = exact.split_once('e').unwrap_or((&exact, "0"));
    let mantissa = mantissa.trim_end_matches('0');
    let text = match side {
        1 if mantissa.ends_with('.') => format!("{mantissa}0e{exp}"),
        1 => format!("{mantissa}e{exp}"),
        2 => format!("{mantissa}000000000000000000001e{exp}"),
        _ => {
            // Subtract one unit far below the last digit: the mantissa's
            // last nonzero digit goes down by one, followed by nines.
            let mut digits: Vec<u8> = mantissa.bytes().collect();
            if let Some(last) = digits
                .iter()
                .rposition(|d| d.is_ascii_digit() && *d != b'0')
            {
                digits[last] -= 1;
            }
            let mut s = String::from_utf8(digits).unwrap_or_default();
            if !s.contains('.') {
                s.push('.');
            }
            s.push_str("999999999999999999999");
            format!("{s}e{exp}")
        }
    };
    let value = match side {
        2 => hi,
        1 if low % 2 == 1 => hi,
        _ => lo,
    };
    let mut g = GenExpr::leaf(format!("{text}{}", ty.name()), value);
    if value.float().is_infinite() {
        // Rounds to infinity: the literal is out of range for its type.
        g.value = Err(Faults {
            out_of_range: true,
            divide_by_zero: false,
        });
    }
    g
}

/// 2^(emax + 1) for `ty`: where its values would continue past the largest.
fn hi_limit(ty: Ty) -> f64 {
    match ty {
        Ty::F16 => 65536.0,
        Ty::BF16 | Ty::F32 => 2f64.powi(128),
        _ => f64::MAX,
    }
}

/// NaN or an infinity, written as the division kdsl allows for it.
fn special(ty: Ty, nan: bool, negative: bool) -> GenExpr {
    let t = ty.name();
    let (num, x) = match (nan, negative) {
        (true, _) => (format!("0.0{t}"), f64::NAN),
        (false, false) => (format!("1.0{t}"), f64::INFINITY),
        (false, true) => (format!("(-1.0{t})"), f64::NEG_INFINITY),
    };
    let source = format!("({num} / 0.0{t})");
    let mut g = GenExpr::leaf(source, from_f64(ty, x));
    g.nodes = 3;
    g
}

/// `x`, exactly representable in `ty` (or NaN/infinite), as a `Val`.
fn from_f64(ty: Ty, x: f64) -> Val {
    match ty {
        Ty::F16 => Val::F16(f16::from_f32(x as f32)),
        Ty::BF16 => Val::BF16(bf16::from_f32(x as f32)),
        Ty::F32 => Val::F32(x as f32),
        _ => Val::F64(x),
    }
}

// -------------------------------------------------------------- operators

fn composite(ty: Ty, below: &[BoxedStrategy<GenExpr>]) -> BoxedStrategy<GenExpr> {
    if ty.is_packed() {
        return packed_composite(ty, below);
    }
    let same = of(below, ty);
    let casts = proptest::sample::select(Ty::ALL.to_vec())
        .prop_flat_map({
            let below = below.to_vec();
            move |from| of(&below, from)
        })
        .prop_map(move |e| cast(e, ty));
    let selects =
        (of(below, Ty::Bool), same.clone(), same.clone()).prop_map(|(c, a, b)| select(c, a, b));
    let mut options: Vec<(u32, BoxedStrategy<GenExpr>)> =
        vec![(2, same.clone()), (3, casts.boxed()), (1, selects.boxed())];
    match ty {
        Ty::Bool => {
            let ops = proptest::sample::select(vec!["&&", "||", "&", "|", "^", "==", "!="]);
            options.push((
                3,
                (ops, same.clone(), same.clone())
                    .prop_map(|(op, a, b)| binary(op, a, b))
                    .boxed(),
            ));
            options.push((1, same.clone().prop_map(|a| unary("!", a)).boxed()));
            // Comparisons of every other type.
            let cmps = proptest::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]);
            let operands = proptest::sample::select(Ty::ALL[1..].to_vec()).prop_flat_map({
                let below = below.to_vec();
                move |t| (of(&below, t), of(&below, t))
            });
            options.push((
                4,
                (cmps, operands)
                    .prop_map(|(op, (a, b))| binary(op, a, b))
                    .boxed(),
            ));
        }
        t if t.is_int() => {
            let ops = proptest::sample::select(vec!["+", "-", "*", "/", "%", "&", "|", "^"]);
            options.push((
                5,
                (ops, same.clone(), same.clone())
                    .prop_map(|(op, a, b)| binary(op, a, b))
                    .boxed(),
            ));
            let amounts = proptest::sample::select(Ty::INTS.to_vec()).prop_flat_map({
                let below = below.to_vec();
                move |a| of(&below, a)
            });
            options.push((
                3,
                (
                    proptest::sample::select(vec!["<<", ">>"]),
                    same.clone(),
                    amounts,
                )
                    .prop_map(|(op, a, s)| binary(op, a, s))
                    .boxed(),
            ));
            let unaries = if t.is_signed() {
                vec!["-", "!"]
            } else {
                vec!["!"]
            };
            options.push((
                1,
                (proptest::sample::select(unaries), same.clone())
                    .prop_map(|(op, a)| unary(op, a))
                    .boxed(),
            ));
            options.push((2, min_max(&same)));
            if t.is_signed() {
                options.push((1, same.clone().prop_map(|a| call("abs", vec![a])).boxed()));
            }
        }
        t => {
            let ops = proptest::sample::select(vec!["+", "-", "*", "/"]);
            options.push((
                6,
                (ops, same.clone(), same.clone())
                    .prop_map(|(op, a, b)| binary(op, a, b))
                    .boxed(),
            ));
            options.push((1, same.clone().prop_map(|a| unary("-", a)).boxed()));
            if matches!(t, Ty::F16 | Ty::BF16 | Ty::F32) {
                // A half of a pair, and a round trip through an fp8 (and,
                // for f32, tf32).
                if t.is_half() {
                    let pair = if t == Ty::F16 { Ty::F16x2 } else { Ty::BF16x2 };
                    options.push((
                        1,
                        (of(below, pair), any::<bool>())
                            .prop_map(|(p, hi)| half_of(p, hi))
                            .boxed(),
                    ));
                }
                let sources = proptest::sample::select(vec![Ty::F32, Ty::F16, Ty::BF16])
                    .prop_flat_map({
                        let below = below.to_vec();
                        move |from| of(&below, from)
                    });
                let storage = if t == Ty::F32 {
                    vec!["e4m3", "e5m2", "tf32"]
                } else {
                    vec!["e4m3", "e5m2"]
                };
                options.push((
                    2,
                    (sources, proptest::sample::select(storage))
                        .prop_map(move |(e, s)| through_storage(e, s, t))
                        .boxed(),
                ));
            }
            if t.is_wide_float() {
                options.push((2, min_max(&same)));
                options.push((1, same.clone().prop_map(|a| call("abs", vec![a])).boxed()));
                options.push((
                    2,
                    (same.clone(), same.clone(), same.clone())
                        .prop_map(|(a, b, c)| call("fma", vec![a, b, c]))
                        .boxed(),
                ));
                // `a * b - p` where `p` is the rounded product: 0 if the
                // product were rounded, its rounding error when fused.
                options.push((
                    2,
                    (leaf(t), leaf(t), any::<bool>())
                        .prop_map(|(a, b, left)| cancelling_product(a, b, left))
                        .boxed(),
                ));
            }
        }
    }
    proptest::strategy::Union::new_weighted(options).boxed()
}

/// `min(a, b)` or `max(a, b)` of two expressions of `same`.
fn min_max(same: &BoxedStrategy<GenExpr>) -> BoxedStrategy<GenExpr> {
    (
        proptest::sample::select(vec!["min", "max"]),
        same.clone(),
        same.clone(),
    )
        .prop_map(|(f, a, b)| call(f, vec![a, b]))
        .boxed()
}

fn unary(op: &str, a: GenExpr) -> GenExpr {
    let source = format!("({op}{})", a.source);
    let op = op.to_string();
    GenExpr::node(source, a.ty, &[&a], |v| {
        if let Some((lo, hi)) = v[0].halves() {
            let neg = |h: Val| match h {
                Val::F16(x) => Val::F16(-x),
                Val::BF16(x) => Val::BF16(-x),
                other => other,
            };
            return Ok(Val::pair(v[0].ty(), neg(lo), neg(hi)));
        }
        Ok(match (op.as_str(), v[0]) {
            ("!", Val::Bool(b)) => Val::Bool(!b),
            ("!", x) => Val::wrap(x.ty(), !x.int()),
            (_, Val::F16(x)) => Val::F16(-x),
            (_, Val::BF16(x)) => Val::BF16(-x),
            (_, Val::F32(x)) => Val::F32(-x),
            (_, Val::F64(x)) => Val::F64(-x),
            (_, x) => Val::wrap(x.ty(), x.int().wrapping_neg()),
        })
    })
}

fn binary(op: &str, a: GenExpr, b: GenExpr) -> GenExpr {
    let source = format!("({} {op} {})", a.source, b.source);
    let cmp = matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=");
    let ty = if cmp { Ty::Bool } else { a.ty };
    // A float `a * b ± c` or `c ± a * b` is one fused multiply-add: the
    // product is not rounded on its own.
    if matches!(op, "+" | "-") && a.ty.is_wide_float() {
        let fused = match (a.product, b.product) {
            (Some((x, y)), _) => Some((x, y, false, op == "-")),
            (None, Some((x, y))) => Some((x, y, op == "-", false)),
            _ => None,
        };
        if let Some((x, y, neg_product, neg_addend)) = fused {
            let product_left = a.product.is_some();
            return GenExpr::node(source, ty, &[&a, &b], |v| {
                let c = if product_left { v[1] } else { v[0] };
                Ok(fma3(x, y, c, neg_product, neg_addend))
            });
        }
    }
    let op_owned = op.to_string();
    let mut g = GenExpr::node(source, ty, &[&a, &b], |v| {
        binary_value(&op_owned, v[0], v[1])
    });
    if op == "*" && a.ty.is_wide_float() {
        if let (Ok(x), Ok(y)) = (a.value, b.value) {
            g.product = Some((x, y));
        }
    }
    g
}

/// `a * b - p` (or `-p + a * b`) with `p` the product rounded to the type:
/// the fused result is the product's rounding error.
fn cancelling_product(a: GenExpr, b: GenExpr, left: bool) -> GenExpr {
    let ty = a.ty;
    let p = binary("*", a, b);
    let rounded = match p.value {
        Ok(v) if v.float().is_finite() => v,
        _ => from_f64(ty, 1.0),
    };
    let neg = float_literal(from_f64(ty, -rounded.float()));
    if left {
        binary("+", p, neg)
    } else {
        binary("+", neg, p)
    }
}

/// `±x × y ± z` rounded once, for `f32`/`f64`.
fn fma3(x: Val, y: Val, z: Val, neg_product: bool, neg_addend: bool) -> Val {
    let sx = if neg_product { -1.0 } else { 1.0 };
    let sz = if neg_addend { -1.0 } else { 1.0 };
    match (x, y, z) {
        (Val::F32(x), Val::F32(y), Val::F32(z)) => {
            Val::F32((sx as f32 * x).mul_add(y, sz as f32 * z))
        }
        (Val::F64(x), Val::F64(y), Val::F64(z)) => Val::F64((sx * x).mul_add(y, sz * z)),
        (x, _, _) => x,
    }
}

pub fn binary_value(op: &str, x: Val, y: Val) -> Result<Val, Faults> {
    use Val::*;
    // A pair: each half as the half type computes it.
    if let (Some((a, b)), Some((c, d))) = (x.halves(), y.halves()) {
        return Ok(Val::pair(
            x.ty(),
            binary_value(op, a, c)?,
            binary_value(op, b, d)?,
        ));
    }
    Ok(match (x, y) {
        (Bool(a), Bool(b)) => Bool(match op {
            "&&" | "&" => a && b,
            "||" | "|" => a || b,
            "^" | "!=" => a != b,
            _ => a == b,
        }),
        _ if matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=") => {
            let ord = if x.ty().is_float() {
                x.float().partial_cmp(&y.float())
            } else {
                x.int().partial_cmp(&y.int())
            };
            use std::cmp::Ordering::*;
            Bool(match (op, ord) {
                ("!=", None) => true,
                (_, None) => false,
                ("==", Some(o)) => o == Equal,
                ("!=", Some(o)) => o != Equal,
                ("<", Some(o)) => o == Less,
                ("<=", Some(o)) => o != Greater,
                (">", Some(o)) => o == Greater,
                (_, Some(o)) => o != Less,
            })
        }
        (F16(a), F16(b)) => F16(float_op(op, a, b)),
        (BF16(a), BF16(b)) => BF16(float_op(op, a, b)),
        (F32(a), F32(b)) => F32(float_op(op, a, b)),
        (F64(a), F64(b)) => F64(float_op(op, a, b)),
        _ if matches!(op, "<<" | ">>") => shift(op, x, y),
        (I8(a), I8(b)) => I8(int_op(op, a, b)?),
        (U8(a), U8(b)) => U8(int_op(op, a, b)?),
        (I16(a), I16(b)) => I16(int_op(op, a, b)?),
        (U16(a), U16(b)) => U16(int_op(op, a, b)?),
        (I32(a), I32(b)) => I32(int_op(op, a, b)?),
        (U32(a), U32(b)) => U32(int_op(op, a, b)?),
        (I64(a), I64(b)) => I64(int_op(op, a, b)?),
        (U64(a), U64(b)) => U64(int_op(op, a, b)?),
        _ => x,
    })
}

/// `a op b` of floats (`+`, `-`, `*`, else `/`), rounded as the type rounds.
fn float_op<T>(op: &str, a: T, b: T) -> T
where
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>,
{
    match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        _ => a / b,
    }
}

trait Wrapping: Copy + PartialEq {
    const ZERO: Self;
    fn ops(self, op: &str, b: Self) -> Self;
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        impl Wrapping for $t {
            const ZERO: Self = 0;
            fn ops(self, op: &str, b: Self) -> Self {
                match op {
                    "+" => self.wrapping_add(b),
                    "-" => self.wrapping_sub(b),
                    "*" => self.wrapping_mul(b),
                    // `MIN / -1` wraps to MIN and `MIN % -1` is 0.
                    "/" => self.wrapping_div(b),
                    "%" => self.wrapping_rem(b),
                    "&" => self & b,
                    "|" => self | b,
                    _ => self ^ b,
                }
            }
        }
    )*};
}
wrapping!(i8, u8, i16, u16, i32, u32, i64, u64);

/// An integer operator; division or remainder by zero is an error.
fn int_op<T: Wrapping>(op: &str, a: T, b: T) -> Result<T, Faults> {
    if matches!(op, "/" | "%") && b == T::ZERO {
        return Err(DIVIDE_BY_ZERO);
    }
    Ok(a.ops(op, b))
}

/// `shl`/`shr`: the amount is read as unsigned in its own type and clamped
/// to the width; a full shift gives 0 (`shl`, `shr.u`) or the sign (`shr.s`).
fn shift(op: &str, x: Val, s: Val) -> Val {
    let amount = s.bits(); // unsigned, in the amount's own width
    let width = u64::from(x.ty().bits());
    let full = amount >= width;
    let k = amount.min(width - 1) as u32;
    match (op, x) {
        ("<<", _) if full => Val::wrap(x.ty(), 0),
        ("<<", Val::I8(a)) => Val::I8(a << k),
        ("<<", Val::U8(a)) => Val::U8(a << k),
        ("<<", Val::I16(a)) => Val::I16(a << k),
        ("<<", Val::U16(a)) => Val::U16(a << k),
        ("<<", Val::I32(a)) => Val::I32(a << k),
        ("<<", Val::U32(a)) => Val::U32(a << k),
        ("<<", Val::I64(a)) => Val::I64(a << k),
        ("<<", Val::U64(a)) => Val::U64(a << k),
        (_, Val::I8(a)) => Val::I8(a >> k),
        (_, Val::I16(a)) => Val::I16(a >> k),
        (_, Val::I32(a)) => Val::I32(a >> k),
        (_, Val::I64(a)) => Val::I64(a >> k),
        (_, Val::U8(_) | Val::U16(_) | Val::U32(_) | Val::U64(_)) if full => Val::wrap(x.ty(), 0),
        (_, Val::U8(a)) => Val::U8(a >> k),
        (_, Val::U16(a)) => Val::U16(a >> k),
        (_, Val::U32(a)) => Val::U32(a >> k),
        (_, Val::U64(a)) => Val::U64(a >> k),
        _ => x,
    }
}

fn call(f: &str, args: Vec<GenExpr>) -> GenExpr {
    let ty = args[0].ty;
    let source = format!(
        "{f}({})",
        args.iter()
            .map(|a| a.source.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let parts: Vec<&GenExpr> = args.iter().collect();
    let f = f.to_string();
    GenExpr::node(source, ty, &parts, |v| Ok(call_value(&f, ty, v)))
}

/// The value of the built-in `f` of arguments `v` of type `ty`; a pair's
/// half by half.
fn call_value(f: &str, ty: Ty, v: &[Val]) -> Val {
    if ty.is_packed() {
        let half = |i: usize| -> Vec<Val> {
            v.iter()
                .filter_map(|x| x.halves())
                .map(|(lo, hi)| if i == 0 { lo } else { hi })
                .collect()
        };
        return Val::pair(
            ty,
            call_value(f, ty.half(), &half(0)),
            call_value(f, ty.half(), &half(1)),
        );
    }
    {
        match (f, v) {
            ("min" | "max", [a, b]) if ty.is_float() => {
                let (x, y) = (a.float(), b.float());
                // `min.f32`: a NaN operand is ignored; -0.0 < +0.0.
                let pick_a = match (x.is_nan(), y.is_nan()) {
                    (_, true) => true,
                    (true, false) => false,
                    _ if x == y => (f == "min") == x.is_sign_negative(),
                    _ => (f == "min") == (x < y),
                };
                if pick_a {
                    *a
                } else {
                    *b
                }
            }
            ("min", [a, b]) => {
                if a.int() <= b.int() {
                    *a
                } else {
                    *b
                }
            }
            ("max", [a, b]) => {
                if a.int() >= b.int() {
                    *a
                } else {
                    *b
                }
            }
            ("abs", [Val::I8(a)]) => Val::I8(a.wrapping_abs()),
            ("abs", [Val::I16(a)]) => Val::I16(a.wrapping_abs()),
            ("abs", [Val::I32(a)]) => Val::I32(a.wrapping_abs()),
            ("abs", [Val::I64(a)]) => Val::I64(a.wrapping_abs()),
            ("abs", [Val::F32(a)]) => Val::F32(a.abs()),
            ("abs", [Val::F64(a)]) => Val::F64(a.abs()),
            ("abs", [Val::F16(a)]) => Val::F16(f16::from_bits(a.to_bits() & 0x7fff)),
            ("abs", [Val::BF16(a)]) => Val::BF16(bf16::from_bits(a.to_bits() & 0x7fff)),
            ("fma", [a, b, c]) if ty.is_half() => half_fma(*a, *b, *c),
            ("fma", [a, b, c]) => fma3(*a, *b, *c, false, false),
            (_, v) => v[0],
        }
    }
}

/// `a × b + c` of halves rounded once: the product is exact in `f64`, the
/// sum is made exact enough by rounding it to odd (its error from TwoSum
/// sets the last bit), which a later rounding to 8 or 11 bits does not
/// see; then to `f32` to odd and to the half (`half`'s `from_f32` rounds
/// correctly).
fn half_fma(a: Val, b: Val, c: Val) -> Val {
    let (x, y, z) = (a.float(), b.float(), c.float());
    let p = x * y;
    let s = p + z;
    let exact = if s.is_finite() {
        let bp = s - z;
        let err = (p - bp) + (z - (s - bp));
        if err == 0.0 {
            s
        } else {
            // Toward zero, then odd: `err` says on which side `s` is.
            let toward_zero = if (err > 0.0) == (s > 0.0) {
                s
            } else {
                f64::from_bits(s.to_bits() - 1)
            };
            f64::from_bits(toward_zero.to_bits() | 1)
        }
    } else {
        s
    };
    from_f64_rounded(a.ty(), exact)
}

/// `x` rounded once to nearest even into the half type `ty`.
fn from_f64_rounded(ty: Ty, x: f64) -> Val {
    match ty {
        Ty::F16 => Val::F16(f16::from_f32(f64_to_f32_odd(x))),
        _ => Val::BF16(bf16::from_f32(f64_to_f32_odd(x))),
    }
}

fn select(c: GenExpr, a: GenExpr, b: GenExpr) -> GenExpr {
    let source = format!("select({}, {}, {})", c.source, a.source, b.source);
    let ty = a.ty;
    GenExpr::node(source, ty, &[&c, &a, &b], |v| {
        Ok(if matches!(v[0], Val::Bool(true)) {
            v[1]
        } else {
            v[2]
        })
    })
}

/// `e as to`. A cast to the expression's own type is no conversion at all
/// (the checker drops it), so a product stays a product.
fn cast(e: GenExpr, to: Ty) -> GenExpr {
    let source = format!("({} as {})", e.source, to.name());
    let mut g = GenExpr::node(source, to, &[&e], |v| Ok(convert(v[0], to)));
    if e.ty == to {
        g.product = e.product;
    }
    g
}

/// `as`: one rounding to nearest even into floats; float → integer
/// truncates and saturates (Rust's `as`), NaN → 0 except from `f64` or
/// into 64 bits, where PTX's `cvt` gives `1 << (width - 1)`.
pub fn convert(v: Val, to: Ty) -> Val {
    let from = v.ty();
    if to == Ty::Bool {
        return Val::Bool(if from.is_float() {
            v.float() != 0.0
        } else {
            v.int() != 0
        });
    }
    if from == Ty::Bool || from.is_int() {
        let i = v.int();
        return match to {
            Ty::F32 => Val::F32(i as f32),
            Ty::F64 => Val::F64(i as f64),
            Ty::F16 => Val::F16(f16::from_f32(int_to_f32_odd(i))),
            Ty::BF16 => Val::BF16(bf16::from_f32(int_to_f32_odd(i))),
            t => Val::wrap(t, i),
        };
    }
    let x = v.float();
    if to.is_float() {
        return match to {
            Ty::F64 => Val::F64(x),
            Ty::F32 => Val::F32(x as f32),
            Ty::F16 => Val::F16(f16::from_f32(f64_to_f32_odd(x))),
            _ => Val::BF16(bf16::from_f32(f64_to_f32_odd(x))),
        };
    }
    if x.is_nan() {
        let i = if from == Ty::F64 || to.bits() == 64 {
            1i128 << (to.bits() - 1)
        } else {
            0
        };
        return Val::wrap(to, i);
    }
    // Halves widen exactly; Rust's float → int `as` truncates and saturates.
    match to {
        Ty::I8 => Val::I8(x as i8),
        Ty::U8 => Val::U8(x as u8),
        Ty::I16 => Val::I16(x as i16),
        Ty::U16 => Val::U16(x as u16),
        Ty::I32 => Val::I32(x as i32),
        Ty::U32 => Val::U32(x as u32),
        Ty::I64 => Val::I64(x as i64),
        _ => Val::U64(x as u64),
    }
}

/// `x` rounded to f32 *to odd* (toward zero, then the last bit set when
/// inexact): then rounding to a half from this f32 equals rounding `x`
/// directly, since f32 has more than twice their precision plus two bits.
fn f64_to_f32_odd(x: f64) -> f32 {
    let r = x as f32;
    if !x.is_finite() || f64::from(r) == x {
        return r;
    }
    let toward_zero = if f64::from(r).abs() > x.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// An integer rounded to f32 to odd (see [`f64_to_f32_odd`]).
fn int_to_f32_odd(i: i128) -> f32 {
    let r = i as f32;
    let back = r as i128; // exact: |r| ≤ 2^64
    if back == i {
        return r;
    }
    let toward_zero = if back.abs() > i.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// A short description for failure messages.
pub fn describe(g: &GenExpr) -> String {
    let mut s = String::new();
    let _ = write!(s, "{}: {} = ", g.source, g.ty.name());
    match g.value {
        Ok(v) => {
            let _ = write!(s, "{v:?} (bits {:#x})", v.bits());
        }
        Err(f) => {
            let _ = write!(s, "errors {:?}", f.codes());
        }
    }
    s
}

// ------------------------------------------------------------ packed pairs

/// `f16x2(lo, hi)` (or `bf16x2`): two halves as they are, or two `f32`s
/// each rounded once to the half type.
fn pack(ty: Ty, lo: GenExpr, hi: GenExpr) -> GenExpr {
    let source = format!("{}({}, {})", ty.name(), lo.source, hi.source);
    GenExpr::node(source, ty, &[&lo, &hi], |v| {
        Ok(Val::pair(
            ty,
            convert(v[0], ty.half()),
            convert(v[1], ty.half()),
        ))
    })
}

/// `(p).lo` or `(p).hi`.
fn half_of(p: GenExpr, hi: bool) -> GenExpr {
    let source = format!("({}).{}", p.source, if hi { "hi" } else { "lo" });
    let ty = p.ty.half();
    GenExpr::node(source, ty, &[&p], |v| {
        let (lo, h) = v[0].halves().unwrap_or((v[0], v[0]));
        Ok(if hi { h } else { lo })
    })
}

/// `((e as S) as to)` for a storage type `S` (`e4m3`, `e5m2`, `tf32`): the
/// value rounded to `S` by [`storage_round`], then exactly into `to`.
fn through_storage(e: GenExpr, storage: &'static str, to: Ty) -> GenExpr {
    // `tf32` converts from `f32` only: a half widens first (exactly).
    let from = if storage == "tf32" && e.ty != Ty::F32 {
        format!("({} as f32)", e.source)
    } else {
        e.source.clone()
    };
    let widened = from != e.source;
    let source = format!("(({from} as {storage}) as {})", to.name());
    let mut g = GenExpr::node(source, to, &[&e], |v| {
        Ok(convert(Val::F64(storage_round(v[0].float(), storage)), to))
    });
    // Two casts, or three with the widening: the writer folds by nodes.
    g.nodes += 1 + u32::from(widened);
    g
}

/// `x` rounded to the storage type `storage` as `as` documents it,
/// computed here by search rather than by bit manipulation: for the fp8s
/// the nearest of the format's finite values, listed from their
/// definition (ties to the even code; beyond the largest value, that
/// value: `.satfinite`); for `tf32` the nearest multiple of its quantum,
/// ties away from zero, infinite past the largest value.
pub fn storage_round(x: f64, storage: &str) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if storage == "tf32" {
        if x.is_infinite() {
            return x;
        }
        let a = x.abs();
        // The quantum of 10 fraction bits at `a`'s binade (subnormal f32s
        // share the smallest normal binade's).
        let e = if a == 0.0 {
            -126
        } else {
            (a.log2().floor() as i32).max(-126)
        };
        // `log2` may be off by one near powers of two: fix the binade.
        let e = if 2f64.powi(e) > a && e > -126 {
            e - 1
        } else if 2f64.powi(e + 1) <= a {
            e + 1
        } else {
            e
        };
        let q = 2f64.powi(e - 10);
        let r = (a / q).round() * q; // `round`: halves away from zero
        let r = if r >= 2f64.powi(128) {
            f64::INFINITY
        } else {
            r
        };
        return r.copysign(x);
    }
    let (exp_bits, man_bits, ieee) = if storage == "e5m2" {
        (5, 2, true)
    } else {
        (4, 3, false)
    };
    // Every finite non-negative value with its code, in increasing order.
    let bias = (1 << (exp_bits - 1)) - 1;
    let mut values: Vec<(f64, u32)> = Vec::new();
    for code in 0u32..128 {
        let e = code >> man_bits;
        let m = code & ((1 << man_bits) - 1);
        let top = (1 << exp_bits) - 1;
        if e == top && (ieee || m == (1 << man_bits) - 1) {
            continue; // infinities and NaNs
        }
        let v = if e == 0 {
            f64::from(m) * 2f64.powi(1 - bias - man_bits)
        } else {
            f64::from(m + (1 << man_bits)) * 2f64.powi(e as i32 - bias - man_bits)
        };
        values.push((v, code));
    }
    let a = x.abs();
    let (max, _) = *values.last().unwrap_or(&(0.0, 0));
    let r = if a >= max {
        max
    } else {
        let mut best = values[0];
        for w in values.windows(2) {
            let [(lo, lc), (hi, hc)] = [w[0], w[1]];
            if a >= lo && a <= hi {
                best = if a - lo < hi - a || (a - lo == hi - a && lc % 2 == 0) {
                    (lo, lc)
                } else {
                    (hi, hc)
                };
                let _ = hc;
            }
        }
        best.0
    };
    r.copysign(x)
}

/// Expressions of a pair type: its operators, `min`/`max`/`abs`/`fma`,
/// `select`, and packs of half or `f32` expressions.
fn packed_composite(ty: Ty, below: &[BoxedStrategy<GenExpr>]) -> BoxedStrategy<GenExpr> {
    let same = of(below, ty);
    let ops = proptest::sample::select(vec!["+", "-", "*"]);
    let halves = proptest::sample::select(vec![ty.half(), Ty::F32]).prop_flat_map({
        let below = below.to_vec();
        move |h| (of(&below, h), of(&below, h))
    });
    let options: Vec<(u32, BoxedStrategy<GenExpr>)> = vec![
        (2, same.clone()),
        (
            5,
            (ops, same.clone(), same.clone())
                .prop_map(|(op, a, b)| binary(op, a, b))
                .boxed(),
        ),
        (1, same.clone().prop_map(|a| unary("-", a)).boxed()),
        (2, min_max(&same)),
        (1, same.clone().prop_map(|a| call("abs", vec![a])).boxed()),
        (
            2,
            (same.clone(), same.clone(), same.clone())
                .prop_map(|(a, b, c)| call("fma", vec![a, b, c]))
                .boxed(),
        ),
        (
            1,
            (of(below, Ty::Bool), same.clone(), same.clone())
                .prop_map(|(c, a, b)| select(c, a, b))
                .boxed(),
        ),
        (3, halves.prop_map(move |(lo, hi)| pack(ty, lo, hi)).boxed()),
    ];
    proptest::strategy::Union::new_weighted(options).boxed()
}

/// The value of the byte `code` in the fp8 format `storage` (`e4m3`:
/// bias 7, no infinities, `S.1111.111` NaN; `e5m2`: bias 15, IEEE-like),
/// from the formats' definitions (OCP 8-bit floating point, v1.0).
pub fn fp8_value(code: u8, storage: &str) -> f64 {
    let (exp_bits, man_bits) = if storage == "e5m2" { (5, 2) } else { (4, 3) };
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from(code & 0x7f) >> man_bits;
    let m = i32::from(code) & ((1 << man_bits) - 1);
    let top = (1 << exp_bits) - 1;
    let v = if storage == "e5m2" && e == top {
        if m == 0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if storage == "e4m3" && e == top && m == (1 << man_bits) - 1 {
        f64::NAN
    } else if e == 0 {
        f64::from(m) * 2f64.powi(1 - bias - man_bits)
    } else {
        f64::from(m + (1 << man_bits)) * 2f64.powi(e - bias - man_bits)
    };
    sign * v
}
