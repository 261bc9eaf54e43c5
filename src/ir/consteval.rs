//! Compile-time evaluation of IR expressions: `const` items, launch bounds,
//! array sizes, barrier counts, the constant operands that the barrier pass
//! inspects (indices, parities, byte counts), and every constant
//! subexpression the PTX writer folds ([`fold`]). This is the one
//! definition of what a constant computes, and it is exactly what the
//! instructions the PTX writer emits compute at run time (`docs/language.md`,
//! "Constant evaluation"):
//!
//! - integers wrap in their type; `/` truncates toward zero and `%` takes
//!   the dividend's sign (`div`/`rem`); `MIN / -1` wraps to `MIN` and
//!   `MIN % -1` is 0; division by zero has no value ([`NotConst::DivideByZero`]);
//! - shifts read the amount as unsigned in its own type and clamp it to the
//!   width (`shl`/`shr`): `x << 32` is 0 on 32 bits, `x >> 99` is 0 or, for
//!   signed `x`, its sign; an `i32` amount of -1 is 2^32 - 1, a full shift;
//! - `f32` and `f64` operations round once to their type; `f16`/`bf16`
//!   operate in `f32` and round back, as the writer emits them; an `f32`/`f64`
//!   `a * b + c` contracts to one fused multiply-add ([`super::contract`]);
//! - `min`/`max` on floats ignore a NaN operand and order -0.0 below +0.0
//!   (`min.f32`); `as` rounds once (`cvt.rn`), and float → integer truncates,
//!   saturates, and maps NaN as `cvt.rzi` does.
//!
//! Float values are carried as `f64` holding a value of their own type
//! ([`crate::fp`]); a NaN is just "NaN" (its bits are the canonical NaN).

use super::contract::{self, Fused};
use super::{BinOp, Expr, ExprKind, LocalId, MathFn, UnaryOp, Value};
use crate::fp::{self, Format};
use crate::types::Scalar;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::marker::PhantomData;

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum NotConst {
    /// It reads something only known at run time.
    Runtime,
    /// Integer division or remainder (the operator) by zero.
    DivideByZero(BinOp),
}

/// The value of `e`, if it is a compile-time constant.
pub fn eval(e: &Expr) -> Result<Value, NotConst> {
    eval_node(e, &mut eval)
}

/// [`eval`] with `locals` giving the value of each local that has one (an
/// immutable local bound to a constant, the element of a loop over a
/// constant list): what `crate::analysis::values` asks.
pub fn eval_with(e: &Expr, locals: &dyn Fn(LocalId) -> Option<Value>) -> Result<Value, NotConst> {
    match &e.kind {
        ExprKind::Local(l) => locals(*l).ok_or(NotConst::Runtime),
        _ => eval_node(e, &mut |c| eval_with(c, locals)),
    }
}

/// The value of `e`'s own operation, with `sub` giving its operands'
/// values: [`eval`] recursively, or [`Memo::eval`].
fn eval_node<'e>(
    e: &'e Expr,
    sub: &mut dyn FnMut(&'e Expr) -> Result<Value, NotConst>,
) -> Result<Value, NotConst> {
    match &e.kind {
        ExprKind::Const(v) => Ok(*v),
        ExprKind::Unary(op, a) => unary(*op, sub(a)?, e.ty),
        ExprKind::Binary(op, a, b) => {
            if let Some(f) = contract::fused(*op, a, b) {
                return fused(&f, e.ty, sub);
            }
            let a_val = sub(a)?;
            // `&&`/`||` are lazy here too, so `false && x` is constant.
            match (op, a_val) {
                (BinOp::And, Value::Bool(false)) => return Ok(Value::Bool(false)),
                (BinOp::Or, Value::Bool(true)) => return Ok(Value::Bool(true)),
                _ => {}
            }
            binary(*op, a_val, sub(b)?, a.ty, b.ty)
        }
        ExprKind::Cast(a) => Ok(cast(sub(a)?, a.ty, e.ty)),
        ExprKind::Select(c, a, b) => match sub(c)? {
            Value::Bool(true) => sub(a),
            _ => sub(b),
        },
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } if then_block.stmts.is_empty() && else_block.stmts.is_empty() => match sub(cond)? {
            Value::Bool(true) => sub(then_value),
            _ => sub(else_value),
        },
        ExprKind::Math(f, args) => {
            let vals = args.iter().map(&mut *sub).collect::<Result<Vec<_>, _>>()?;
            if *f == MathFn::Pack {
                return pack(&vals, e.ty);
            }
            let arg_ty = args.first().map_or(e.ty, |a| a.ty);
            math(*f, &vals, arg_ty)
        }
        _ => Err(NotConst::Runtime),
    }
}

/// [`eval`] for a pass that asks about many nested subtrees of one
/// finished tree (the zero-divisor check asks at every division of a
/// chain): each node is evaluated once and remembered by its address. The
/// tree is borrowed for the memo's lifetime `'ir`, so no node can move or
/// be freed while its address is a key.
#[derive(Default)]
pub struct Memo<'ir> {
    values: HashMap<*const Expr, Result<Value, NotConst>>,
    tree: PhantomData<&'ir Expr>,
}

impl<'ir> Memo<'ir> {
    pub fn eval(&mut self, e: &'ir Expr) -> Result<Value, NotConst> {
        self.eval_with(e, &|_| None)
    }

    /// [`eval_with`], remembered. One memo serves one `locals`: a node's
    /// value is remembered whatever the locals were.
    pub fn eval_with(
        &mut self,
        e: &'ir Expr,
        locals: &dyn Fn(LocalId) -> Option<Value>,
    ) -> Result<Value, NotConst> {
        let key: *const Expr = e;
        if let Some(v) = self.values.get(&key) {
            return v.clone();
        }
        let v = match &e.kind {
            ExprKind::Local(l) => locals(*l).ok_or(NotConst::Runtime),
            _ => eval_node(e, &mut |c| self.eval_with(c, locals)),
        };
        self.values.insert(key, v.clone());
        v
    }
}

/// The value of an integer constant expression as a number: its `+`, `-`,
/// `*`, `/`, `%`, shifts, `&`, `|`, `^`, negation and integer casts
/// computed on the exact values instead of wrapping each result in its type
/// (everything else, `select`, `if`, the built-ins, keeps its meaning,
/// [`eval`]). What a size means: a launch dimension, a shared array's
/// dimension, a barrier count, an arrival count. `65536 * 65536` there is
/// 4294967296, past every limit, not the 0 a `u32` register would hold,
/// and `0 - 1` is -1, not 4294967295. An explicit cast converts the exact
/// value (`(65536 * 65536) as u64` is 4294967296). Values past
/// ±(2^127 − 1) saturate: still outside every range, no longer exact.
pub fn eval_exact(e: &Expr) -> Result<i128, NotConst> {
    use BinOp::*;
    let int = |v: Value| match v {
        Value::Int(i) => Ok(i),
        _ => Err(NotConst::Runtime),
    };
    if !e.ty.is_int() {
        return int(eval(e)?);
    }
    match &e.kind {
        ExprKind::Unary(UnaryOp::Neg, a) => Ok(eval_exact(a)?.saturating_neg()),
        ExprKind::Cast(a) if a.ty.is_int() => Ok(wrap(eval_exact(a)?, e.ty)),
        ExprKind::Binary(op @ (Add | Sub | Mul | Div | Rem | BitAnd | BitOr | BitXor), a, b) => {
            let (x, y) = (eval_exact(a)?, eval_exact(b)?);
            Ok(match op {
                Add => x.saturating_add(y),
                Sub => x.saturating_sub(y),
                Mul => x.saturating_mul(y),
                Div | Rem if y == 0 => return Err(NotConst::DivideByZero(*op)),
                Div => x.checked_div(y).unwrap_or(i128::MAX),
                Rem => x.checked_rem(y).unwrap_or(0),
                BitAnd => x & y,
                BitOr => x | y,
                _ => x ^ y,
            })
        }
        ExprKind::Binary(op @ (Shl | Shr), a, b) => {
            let (x, amount) = (eval_exact(a)?, eval_exact(b)?);
            // A negative amount is a huge unsigned one to `shl`/`shr`: that
            // meaning, not a shift the other way.
            let Ok(s) = u32::try_from(amount) else {
                return int(eval(e)?);
            };
            Ok(match op {
                Shl if x == 0 => 0,
                Shl if s >= 127 || x.unsigned_abs().leading_zeros() <= s => {
                    if x < 0 {
                        i128::MIN
                    } else {
                        i128::MAX
                    }
                }
                Shl => x << s,
                _ => x >> s.min(127),
            })
        }
        _ => int(eval(e)?),
    }
}

/// The value of `e` when it is a constant made of at most `budget` nodes of
/// operators, casts and built-in functions over constants: what the PTX
/// writer folds. The bound keeps the writer linear (it asks at every node).
pub fn fold(e: &Expr, budget: u32) -> Option<Value> {
    let mut left = budget;
    if !matches!(
        e.kind,
        ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Select(..)
            | ExprKind::Math(..)
    ) || !small_constant_tree(e, &mut left)
    {
        return None;
    }
    eval(e).ok()
}

/// True when `e` is a tree of at most `budget` nodes, all constants or
/// operations on them.
fn small_constant_tree(e: &Expr, budget: &mut u32) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    match &e.kind {
        ExprKind::Const(_) => true,
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => small_constant_tree(a, budget),
        ExprKind::Binary(_, a, b) => {
            small_constant_tree(a, budget) && small_constant_tree(b, budget)
        }
        ExprKind::Select(c, a, b) => {
            small_constant_tree(c, budget)
                && small_constant_tree(a, budget)
                && small_constant_tree(b, budget)
        }
        ExprKind::Math(f, args) => {
            foldable_math(*f) && args.iter().all(|a| small_constant_tree(a, budget))
        }
        _ => false,
    }
}

/// The built-in functions constant evaluation computes. The others (`sqrt`,
/// `exp`, …) use hardware approximations and are left to run time.
fn foldable_math(f: MathFn) -> bool {
    matches!(
        f,
        MathFn::Min
            | MathFn::Max
            | MathFn::Abs
            | MathFn::Fma
            | MathFn::Pack
            | MathFn::Lo
            | MathFn::Hi
    )
}

/// The value of `e` as an unsigned integer, if it is a constant integer.
pub fn eval_u64(e: &Expr) -> Option<u64> {
    match eval(e).ok()? {
        Value::Int(v) => u64::try_from(v).ok(),
        _ => None,
    }
}

/// The value of `e` as a (possibly negative) integer, if constant.
pub fn eval_int(e: &Expr) -> Option<i128> {
    match eval(e).ok()? {
        Value::Int(v) => Some(v),
        _ => None,
    }
}

/// Wraps an integer into the range of `ty` (two's complement).
pub fn wrap(v: i128, ty: Scalar) -> i128 {
    match ty {
        Scalar::I8 => v as i8 as i128,
        Scalar::U8 => v as u8 as i128,
        Scalar::I16 => v as i16 as i128,
        Scalar::U16 => v as u16 as i128,
        Scalar::I32 => v as i32 as i128,
        Scalar::U32 => v as u32 as i128,
        Scalar::I64 => v as i64 as i128,
        Scalar::U64 => v as u64 as i128,
        _ => v,
    }
}

/// True when `v` is representable in the integer type `ty` without wrapping.
pub fn fits(v: i128, ty: Scalar) -> bool {
    wrap(v, ty) == v
}

/// The bits of the integer `v` of type `ty`, zero-extended: how PTX reads
/// a register as unsigned (a shift amount, say).
fn unsigned_bits(v: i128, ty: Scalar) -> u128 {
    match ty.bits() {
        64 => u128::from(v as u64),
        32 => u128::from(v as u32),
        16 => u128::from(v as u16),
        8 => u128::from(v as u8),
        _ => u128::from(v != 0),
    }
}

/// `op v` with `v: ty`.
pub fn unary(op: UnaryOp, v: Value, ty: Scalar) -> Result<Value, NotConst> {
    Ok(match (op, v) {
        (UnaryOp::Neg, Value::Int(i)) => Value::Int(wrap(i.wrapping_neg(), ty)),
        // Exact in every format (`neg`, or flipping the sign bit of a half).
        (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
        (UnaryOp::Neg, Value::Pair(lo, hi)) => Value::Pair(-lo, -hi),
        (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnaryOp::Not, Value::Int(i)) => Value::Int(wrap(!i, ty)),
        _ => return Err(NotConst::Runtime),
    })
}

/// `x op y` with `x: ty` and `y: yty` (`yty` differs from `ty` only for
/// shift amounts; comparisons return `bool`).
pub fn binary(op: BinOp, x: Value, y: Value, ty: Scalar, yty: Scalar) -> Result<Value, NotConst> {
    match (x, y) {
        (Value::Int(x), Value::Int(y)) => int_binary(op, x, y, ty, yty),
        (Value::Float(x), Value::Float(y)) => match Format::of(ty) {
            Some(fmt) => float_binary(op, x, y, fmt),
            None => Err(NotConst::Runtime),
        },
        (Value::Bool(x), Value::Bool(y)) => bool_binary(op, x, y),
        // A packed pair: each half on its own, as `add.rn.f16x2` computes
        // it (correctly rounded, which is what `f32` then one rounding
        // gives for halves).
        (Value::Pair(a, b), Value::Pair(c, d))
            if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) =>
        {
            let fmt = ty.half_of().and_then(Format::of).ok_or(NotConst::Runtime)?;
            match (float_binary(op, a, c, fmt)?, float_binary(op, b, d, fmt)?) {
                (Value::Float(lo), Value::Float(hi)) => Ok(Value::Pair(lo, hi)),
                _ => Err(NotConst::Runtime),
            }
        }
        _ => Err(NotConst::Runtime),
    }
}

fn int_binary(op: BinOp, x: i128, y: i128, ty: Scalar, yty: Scalar) -> Result<Value, NotConst> {
    use BinOp::*;
    // Values are exact in i128 (at most 64 bits), so only the final wrap
    // into `ty` loses anything, as in a `ty`-wide register.
    Ok(match op {
        Add => Value::Int(wrap(x + y, ty)),
        Sub => Value::Int(wrap(x - y, ty)),
        Mul => Value::Int(wrap(x.wrapping_mul(y), ty)),
        Div | Rem if y == 0 => return Err(NotConst::DivideByZero(op)),
        // Truncating; `MIN / -1` is 2^(n-1), which wraps back to `MIN`.
        Div => Value::Int(wrap(x / y, ty)),
        Rem => Value::Int(wrap(x % y, ty)),
        BitAnd => Value::Int(wrap(x & y, ty)),
        BitOr => Value::Int(wrap(x | y, ty)),
        BitXor => Value::Int(wrap(x ^ y, ty)),
        Shl | Shr => Value::Int(shift(op, x, ty, unsigned_bits(y, yty))),
        Eq => Value::Bool(x == y),
        Ne => Value::Bool(x != y),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        And | Or => return Err(NotConst::Runtime),
    })
}

/// `shl`/`shr` of `x: ty` by an amount read as unsigned, clamped to the
/// width: past it, `shl` and `shr.u` give 0 and `shr.s` the sign.
fn shift(op: BinOp, x: i128, ty: Scalar, amount: u128) -> i128 {
    let width = ty.bits();
    let s = amount.min(u128::from(width)) as u32;
    if op == BinOp::Shl {
        if s >= width {
            return 0;
        }
        // Through u128 so that no bit pattern overflows before the wrap.
        return wrap((x as u128).wrapping_shl(s) as i128, ty);
    }
    // `x` is sign-extended for signed types and zero-extended otherwise,
    // so an arithmetic shift of the i128 is `shr.s` or `shr.u`.
    wrap(
        x >> s.min(width - 1 + u32::from(!ty.is_signed_int())).min(127),
        ty,
    )
}

fn bool_binary(op: BinOp, x: bool, y: bool) -> Result<Value, NotConst> {
    use BinOp::*;
    Ok(Value::Bool(match op {
        And | BitAnd => x && y,
        Or | BitOr => x || y,
        BitXor | Ne => x != y,
        Eq => x == y,
        // false < true, as in Rust (and the writer's predicate logic).
        Lt => !x && y,
        Le => !x || y,
        Gt => x && !y,
        Ge => x || !y,
        _ => return Err(NotConst::Runtime),
    }))
}

/// A float operation on values of `fmt`, rounded as the writer's
/// instructions round: `f32` and `f64` once in their own type; `f16` and
/// `bf16` in `f32` (which holds them exactly), then once back to the type.
fn float_binary(op: BinOp, x: f64, y: f64, fmt: Format) -> Result<Value, NotConst> {
    use BinOp::*;
    let arith = |f: fn(f64, f64) -> f64, g: fn(f32, f32) -> f32| match fmt {
        Format::F64 => f(x, y),
        // The operands are f32 values, so `as f32` is exact.
        _ => fp::round(f64::from(g(x as f32, y as f32)), fmt),
    };
    Ok(match op {
        Add => Value::Float(arith(|a, b| a + b, |a, b| a + b)),
        Sub => Value::Float(arith(|a, b| a - b, |a, b| a - b)),
        Mul => Value::Float(arith(|a, b| a * b, |a, b| a * b)),
        Div => Value::Float(arith(|a, b| a / b, |a, b| a / b)),
        // Comparing exact values needs no rounding; NaN is unordered and
        // unequal, so only `!=` holds (`setp.neu`).
        Eq => Value::Bool(x == y),
        Ne => Value::Bool(x != y),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        _ => return Err(NotConst::Runtime),
    })
}

/// A contracted `a * b + c` (see [`contract`]): one rounding.
fn fused<'e>(
    f: &Fused<'e>,
    ty: Scalar,
    sub: &mut dyn FnMut(&'e Expr) -> Result<Value, NotConst>,
) -> Result<Value, NotConst> {
    let (a, b, c) = (sub(f.a)?, sub(f.b)?, sub(f.c)?);
    let (Value::Float(a), Value::Float(b), Value::Float(c), Some(fmt)) = (a, b, c, Format::of(ty))
    else {
        return Err(NotConst::Runtime);
    };
    let a = if f.negate_product { -a } else { a };
    let c = if f.negate_addend { -c } else { c };
    Ok(Value::Float(fma(a, b, c, fmt)))
}

/// `a × b + c` rounded once to `fmt`.
pub fn fma(a: f64, b: f64, c: f64, fmt: Format) -> f64 {
    match fmt {
        Format::F64 => a.mul_add(b, c),
        Format::F32 => f64::from((a as f32).mul_add(b as f32, c as f32)),
        Format::F16 | Format::BF16 => {
            // The product of two halves is exact in f64 (22 significant
            // bits, exponents within f64's range); the sum is the rounded
            // `s` plus the exact error `err`, which decides a tie.
            let p = a * b;
            let (s, err) = fp::two_sum(p, c);
            if !s.is_finite() || !err.is_finite() {
                return fp::round(p + c, fmt);
            }
            fp::round_near(s, err.partial_cmp(&0.0).unwrap_or(Ordering::Equal), fmt)
        }
    }
}

/// Converts a constant of type `from` to `to` with `as` semantics, as the
/// writer's `cvt` does (ptx-notes §8):
/// - integer → float: rounded once (`cvt.rn`), even from 64 bits;
/// - float → float: rounded once to nearest even (exact when widening);
/// - float → integer: truncated toward zero and saturated (`cvt.rzi`); NaN
///   is 0, except from `f64` or into a 64-bit integer, where it is
///   `1 << (width - 1)` (`i64::MIN`, `2^63` for `u64`, `i32::MIN` for
///   `f64 → i32`), as the PTX ISA specifies for `cvt`;
/// - integer → integer: sign- or zero-extended by the source, truncated;
/// - `bool` ↔ number: 0/1 and `!= 0` (NaN is true).
pub fn cast(v: Value, from: Scalar, to: Scalar) -> Value {
    match (v, Format::of(to)) {
        // `as e4m3`, `as e5m2` (saturating), `as tf32` (ties away).
        (Value::Float(f), None) if to.is_storage_only() => {
            Value::Float(fp::to_storage(f, to).unwrap_or(f))
        }
        // Pairs have no `as` (the checker refuses it); nothing changes.
        (Value::Pair(..), _) => v,
        (Value::Bool(b), _) if to == Scalar::Bool => Value::Bool(b),
        (Value::Bool(b), Some(_)) => Value::Float(if b { 1.0 } else { 0.0 }),
        (Value::Bool(b), None) => Value::Int(i128::from(b)),
        (Value::Int(i), _) if to == Scalar::Bool => Value::Bool(i != 0),
        (Value::Int(i), Some(fmt)) => Value::Float(fp::from_int(i, fmt)),
        (Value::Int(i), None) => Value::Int(wrap(i, to)),
        (Value::Float(f), _) if to == Scalar::Bool => Value::Bool(f != 0.0),
        (Value::Float(f), Some(fmt)) => Value::Float(fp::round(f, fmt)),
        (Value::Float(f), None) => Value::Int(float_to_int(f, from, to)),
    }
}

/// `cvt.rzi.{to}.{from}` (halves are widened to `f32` first, exactly).
fn float_to_int(f: f64, from: Scalar, to: Scalar) -> i128 {
    let (lo, hi) = int_range(to);
    if f.is_nan() {
        return if from == Scalar::F64 || to.bits() == 64 {
            wrap(1i128 << (to.bits() - 1), to)
        } else {
            0
        };
    }
    let t = f.trunc();
    // Compare as floats first: `as i128` of a huge value saturates too,
    // but the range check is then explicit.
    if t <= lo as f64 {
        lo
    } else if t >= hi as f64 {
        hi
    } else {
        t as i128
    }
}

fn int_range(t: Scalar) -> (i128, i128) {
    t.int_range().unwrap_or((0, u64::MAX as i128))
}

/// `f16x2(lo, hi)`/`bf16x2(lo, hi)` of type `ty`: halves as they are,
/// `f32`s rounded once each to the half type (`cvt.rn.f16x2.f32`).
fn pack(args: &[Value], ty: Scalar) -> Result<Value, NotConst> {
    let fmt = ty.half_of().and_then(Format::of).ok_or(NotConst::Runtime)?;
    match args {
        [Value::Float(lo), Value::Float(hi)] => {
            Ok(Value::Pair(fp::round(*lo, fmt), fp::round(*hi, fmt)))
        }
        _ => Err(NotConst::Runtime),
    }
}

/// `min`, `max`, `abs` and `fma` of a packed pair of halves of `fmt`, and
/// its halves (`lo`, `hi`): each half as the scalar operation computes it
/// (`min.f16x2` ignores a NaN operand per half, like `min.f32`).
fn pair_math(f: MathFn, args: &[Value], fmt: Format) -> Result<Value, NotConst> {
    let halves = |i: usize| -> Vec<Value> {
        args.iter()
            .map(|a| match a {
                Value::Pair(lo, hi) => Value::Float(if i == 0 { *lo } else { *hi }),
                other => *other,
            })
            .collect()
    };
    match (f, args) {
        (MathFn::Lo, [Value::Pair(lo, _)]) => return Ok(Value::Float(*lo)),
        (MathFn::Hi, [Value::Pair(_, hi)]) => return Ok(Value::Float(*hi)),
        _ => {}
    }
    let half_ty = fmt.scalar();
    match (math(f, &halves(0), half_ty)?, math(f, &halves(1), half_ty)?) {
        (Value::Float(lo), Value::Float(hi)) => Ok(Value::Pair(lo, hi)),
        _ => Err(NotConst::Runtime),
    }
}

/// `min`, `max`, `abs` and `fma` on arguments of type `ty`.
fn math(f: MathFn, args: &[Value], ty: Scalar) -> Result<Value, NotConst> {
    if let Some(half) = ty.half_of().and_then(Format::of) {
        return pair_math(f, args, half);
    }
    let fmt = Format::of(ty);
    Ok(match (f, args, fmt) {
        (MathFn::Min, [Value::Int(a), Value::Int(b)], _) => Value::Int(*a.min(b)),
        (MathFn::Max, [Value::Int(a), Value::Int(b)], _) => Value::Int(*a.max(b)),
        (MathFn::Min | MathFn::Max, [Value::Bool(a), Value::Bool(b)], _) => {
            Value::Bool(if f == MathFn::Min { *a && *b } else { *a || *b })
        }
        (MathFn::Min, [Value::Float(a), Value::Float(b)], _) => Value::Float(min_num(*a, *b)),
        (MathFn::Max, [Value::Float(a), Value::Float(b)], _) => Value::Float(max_num(*a, *b)),
        // `abs.s32` of MIN is MIN; unsigned values are their own.
        (MathFn::Abs, [Value::Int(a)], _) => Value::Int(wrap(a.abs(), ty)),
        (MathFn::Abs, [Value::Float(a)], _) => Value::Float(a.abs()),
        (MathFn::Abs, [Value::Bool(a)], _) => Value::Bool(*a),
        (MathFn::Fma, [Value::Int(a), Value::Int(b), Value::Int(c)], _) => {
            Value::Int(wrap(a.wrapping_mul(*b).wrapping_add(*c), ty))
        }
        (MathFn::Fma, [Value::Float(a), Value::Float(b), Value::Float(c)], Some(fmt)) => {
            Value::Float(fma(*a, *b, *c, fmt))
        }
        _ => return Err(NotConst::Runtime),
    })
}

/// `min.f32`/`min.f64` (without `.NaN`): a NaN operand is ignored (NaN only
/// when both are), and -0.0 is below +0.0.
pub fn min_num(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if a.is_sign_negative() {
                a
            } else {
                b
            }
        }
        _ => a.min(b),
    }
}

/// `max.f32`/`max.f64`: like [`min_num`], +0.0 above -0.0.
pub fn max_num(a: f64, b: f64) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if a == b => {
            if a.is_sign_positive() {
                a
            } else {
                b
            }
        }
        _ => a.max(b),
    }
}

#[cfg(test)]
mod tests;
