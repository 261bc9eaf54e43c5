//! Expressions: constants, locals, operators, `select`, `if` expressions and
//! calls. Memory, math, warp and barrier expressions live in their own files.

use super::imm;
use super::scan::{may_assign, speculatable};
use super::suffix;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::ir::consteval;
use crate::ir::{BinOp, Block, Expr, ExprKind, FuncId, UnaryOp, Value};
use crate::types::Scalar;

impl Writer<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Operand {
        if let Some(v) = fold(e) {
            return self.constant(v, e.ty);
        }
        match &e.kind {
            ExprKind::Const(v) => self.constant(*v, e.ty),
            ExprKind::Local(id) => Operand::Reg(self.local(*id)),
            ExprKind::Param(id) => self.param_value(*id, e.ty),
            ExprKind::Special(s) => self.special(*s),
            ExprKind::Unary(op, a) => {
                let x = self.expr(a);
                self.unary(*op, a.ty, x)
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => self.short_circuit(*op, a, b),
            ExprKind::Binary(op, a, b) => {
                let [x, y] = self.operands([a, b]);
                self.binop(*op, a.ty, x, y, b.ty)
            }
            ExprKind::Cast(a) => {
                let x = self.expr(a);
                self.convert(x, a.ty, e.ty)
            }
            ExprKind::Select(c, a, b) => {
                let [c, x, y] = self.operands([c, a, b]);
                self.select(c, x, y, e.ty)
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => self.if_expr(
                cond,
                (then_block, then_value),
                (else_block, else_value),
                e.ty,
            ),
            ExprKind::Load(place) => self.load(place),
            ExprKind::Call { func, args } => match self.call(*func, args) {
                Some(v) => v,
                None => {
                    self.comment("call of a function without a result used as a value");
                    self.zero(e.ty)
                }
            },
            ExprKind::Math(f, args) => self.math(*f, args, e.ty),
            ExprKind::Atomic { op, place, args } => self.atomic(*op, place, args, e.ty),
            ExprKind::Warp(op, args) => self.warp(*op, args, e.ty),
            ExprKind::BarrierTest { barrier, parity } => self.barrier_test(barrier, parity),
        }
    }

    /// Evaluates `e` into a register.
    pub(super) fn expr_reg(&mut self, e: &Expr) -> Reg {
        let v = self.expr(e);
        self.in_reg(v, e.ty)
    }

    /// Evaluates operands left to right. A value still sitting in a local's
    /// register is copied when a later operand may assign that local.
    pub(super) fn operands<const N: usize>(&mut self, es: [&Expr; N]) -> [Operand; N] {
        let mut out: [Operand; N] = std::array::from_fn(|_| Operand::imm(0));
        for (i, e) in es.iter().enumerate() {
            let mut v = self.expr(e);
            if let Operand::Reg(r) = v {
                if self.is_local_reg(r) && es.iter().skip(i + 1).any(|later| may_assign(later)) {
                    let copy = self.reg(r.class);
                    emit!(self, "mov.{} {}, {};", suffix::mov(e.ty), copy, r);
                    v = Operand::Reg(copy);
                }
            }
            if let Some(slot) = out.get_mut(i) {
                *slot = v;
            }
        }
        out
    }

    /// Like [`Writer::operands`] for a slice of arguments.
    pub(super) fn operand_list(&mut self, es: &[Expr]) -> Vec<Operand> {
        let mut out = Vec::with_capacity(es.len());
        for (i, e) in es.iter().enumerate() {
            let mut v = self.expr(e);
            if let Operand::Reg(r) = v {
                if self.is_local_reg(r) && es.iter().skip(i + 1).any(may_assign) {
                    let copy = self.reg(r.class);
                    emit!(self, "mov.{} {}, {};", suffix::mov(e.ty), copy, r);
                    v = Operand::Reg(copy);
                }
            }
            out.push(v);
        }
        out
    }

    /// A constant: an immediate, or a register for `bool` and `f16`/`bf16`.
    pub(super) fn constant(&mut self, v: Value, ty: Scalar) -> Operand {
        match ty {
            Scalar::Bool | Scalar::F16 | Scalar::BF16 => {
                let r = self.reg_for(ty);
                emit!(
                    self,
                    "mov.{} {}, {};",
                    suffix::mov(ty),
                    r,
                    imm::scalar_imm(v, ty)
                );
                Operand::Reg(r)
            }
            _ => Operand::Imm(imm::scalar_imm(v, ty)),
        }
    }

    pub(super) fn zero(&mut self, ty: Scalar) -> Operand {
        let v = if ty == Scalar::Bool {
            Value::Bool(false)
        } else {
            Value::Int(0)
        };
        self.constant(v, ty)
    }

    /// Puts an operand in a register (a no-op for registers).
    pub(super) fn in_reg(&mut self, v: Operand, ty: Scalar) -> Reg {
        match v {
            Operand::Reg(r) => r,
            Operand::Imm(text) => {
                let r = self.reg_for(ty);
                emit!(self, "mov.{} {}, {};", suffix::mov(ty), r, text);
                r
            }
        }
    }

    /// `dst = src`.
    pub(super) fn mov(&mut self, dst: Reg, src: &Operand, ty: Scalar) {
        if *src != Operand::Reg(dst) {
            emit!(self, "mov.{} {}, {};", suffix::mov(ty), dst, src);
        }
    }

    fn param_value(&mut self, id: crate::ir::ParamId, ty: Scalar) -> Operand {
        match self.params.get(id.index()).copied().flatten() {
            Some(r) => Operand::Reg(r),
            None => {
                self.comment("parameter not available here");
                self.zero(ty)
            }
        }
    }

    pub(super) fn unary(&mut self, op: UnaryOp, ty: Scalar, x: Operand) -> Operand {
        let d = self.reg_for(ty);
        match (op, ty) {
            (UnaryOp::Neg, Scalar::I32 | Scalar::I64 | Scalar::F32 | Scalar::F64) => {
                emit!(self, "neg.{} {}, {};", suffix::arith(ty), d, x)
            }
            (UnaryOp::Neg, Scalar::U32 | Scalar::U64) => {
                emit!(self, "sub.{} {}, 0, {};", suffix::arith(ty), d, x)
            }
            // Flipping the sign bit is exact negation for IEEE halves.
            (UnaryOp::Neg, Scalar::F16 | Scalar::BF16) => {
                emit!(self, "xor.b16 {}, {}, 0x8000;", d, x)
            }
            (
                UnaryOp::Not,
                Scalar::Bool | Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64,
            ) => {
                emit!(self, "not.{} {}, {};", suffix::bits(ty), d, x)
            }
            _ => {
                self.comment(&format!("unary operator not defined on {ty}"));
                return x;
            }
        }
        Operand::Reg(d)
    }

    /// `x op y` on operands of type `ty` (`yty` is the shift amount's type).
    pub(super) fn binop(
        &mut self,
        op: BinOp,
        ty: Scalar,
        x: Operand,
        y: Operand,
        yty: Scalar,
    ) -> Operand {
        use BinOp::*;
        if ty == Scalar::Bool {
            return self.bool_binop(op, x, y);
        }
        if ty.is_half() {
            // f16/bf16 arithmetic is done in f32 and rounded back once; f32
            // has more than twice the precision, so this equals a direct
            // correctly-rounded half operation.
            let (xf, yf) = (
                self.convert(x, ty, Scalar::F32),
                self.convert(y, ty, Scalar::F32),
            );
            let r = self.binop(op, Scalar::F32, xf, yf, Scalar::F32);
            return if op.is_comparison() {
                r
            } else {
                self.convert(r, Scalar::F32, ty)
            };
        }
        if op.is_comparison() {
            let p = self.reg(Class::Pred);
            let cmp = match op {
                Eq => "eq",
                // `!=` is true on NaN, as in Rust and C.
                Ne if ty.is_float() => "neu",
                Ne => "ne",
                Lt => "lt",
                Le => "le",
                Gt => "gt",
                _ => "ge",
            };
            emit!(
                self,
                "setp.{}.{} {}, {}, {};",
                cmp,
                suffix::arith(ty),
                p,
                x,
                y
            );
            return Operand::Reg(p);
        }
        let d = self.reg_for(ty);
        let t = suffix::arith(ty);
        match op {
            Add => emit!(self, "add.{} {}, {}, {};", t, d, x, y),
            Sub => emit!(self, "sub.{} {}, {}, {};", t, d, x, y),
            Mul if ty.is_float() => emit!(self, "mul.{} {}, {}, {};", t, d, x, y),
            Mul => emit!(self, "mul.lo.{} {}, {}, {};", t, d, x, y),
            Div if ty.is_float() => emit!(self, "div.rn.{} {}, {}, {};", t, d, x, y),
            Div | Rem if pow2_shift(&y, ty).is_some() => return self.div_pow2(op, ty, x, &y),
            Div => emit!(self, "div.{} {}, {}, {};", t, d, x, y),
            Rem if ty.is_float() => return self.float_rem(ty, x, y),
            Rem => emit!(self, "rem.{} {}, {}, {};", t, d, x, y),
            BitAnd | BitOr | BitXor if ty.is_int() => {
                let name = match op {
                    BitAnd => "and",
                    BitOr => "or",
                    _ => "xor",
                };
                emit!(self, "{}.{} {}, {}, {};", name, suffix::bits(ty), d, x, y)
            }
            Shl | Shr if ty.is_int() => {
                let amount = self.shift_amount(y, yty);
                if op == Shl {
                    emit!(self, "shl.{} {}, {}, {};", suffix::bits(ty), d, x, amount)
                } else {
                    emit!(self, "shr.{} {}, {}, {};", t, d, x, amount)
                }
            }
            _ => {
                self.comment(&format!("operator `{}` not defined on {ty}", op.symbol()));
                return x;
            }
        }
        Operand::Reg(d)
    }

    /// Integer `/` and `%` by a constant power of two, as shifts and masks:
    /// ptxas emits a full division sequence for `div.u32 x, 16`.
    fn div_pow2(&mut self, op: BinOp, ty: Scalar, x: Operand, y: &Operand) -> Operand {
        let k = pow2_shift(y, ty).unwrap_or(0);
        let (n, b) = (ty.bits(), suffix::bits(ty));
        let mask = (1u128 << k) - 1;
        let d = self.reg_for(ty);
        if !ty.is_signed_int() {
            match op {
                BinOp::Div => emit!(self, "shr.{} {}, {}, {};", suffix::arith(ty), d, x, k),
                _ => emit!(self, "and.{} {}, {}, {};", b, d, x, mask),
            }
            return Operand::Reg(d);
        }
        // Signed: round toward zero by adding 2^k - 1 to negative values.
        let s = suffix::arith(ty);
        let u = if n == 64 { "u64" } else { "u32" };
        let (sign, bias, t) = (self.reg_for(ty), self.reg_for(ty), self.reg_for(ty));
        emit!(self, "shr.{} {}, {}, {};", s, sign, x, n - 1);
        emit!(self, "shr.{} {}, {}, {};", u, bias, sign, n - k);
        emit!(self, "add.{} {}, {}, {};", s, t, x, bias);
        match op {
            BinOp::Div => emit!(self, "shr.{} {}, {}, {};", s, d, t, k),
            _ => {
                let m = self.reg_for(ty);
                emit!(
                    self,
                    "and.{} {}, {}, {};",
                    b,
                    m,
                    t,
                    imm::int_imm(!mask as i128, ty)
                );
                emit!(self, "sub.{} {}, {}, {};", s, d, x, m);
            }
        }
        Operand::Reg(d)
    }

    /// PTX shift amounts are always 32-bit (and clamped to the width).
    fn shift_amount(&mut self, y: Operand, yty: Scalar) -> Operand {
        match (&y, yty.bits()) {
            (Operand::Reg(r), 64) => {
                // Clamp first, so an amount of 2^32 does not wrap to 0.
                let (c, a) = (self.reg(Class::B64), self.reg(Class::B32));
                emit!(self, "min.u64 {}, {}, 64;", c, r);
                emit!(self, "cvt.u32.u64 {}, {};", a, c);
                Operand::Reg(a)
            }
            _ => y,
        }
    }

    /// `x % y` on floats: `x - trunc(x / y) * y`, the sign of `x` (C `fmod`
    /// for quotients that f32/f64 represent exactly).
    fn float_rem(&mut self, ty: Scalar, x: Operand, y: Operand) -> Operand {
        let t = suffix::arith(ty);
        let (q, n, d) = (self.reg_for(ty), self.reg_for(ty), self.reg_for(ty));
        emit!(self, "div.rn.{} {}, {}, {};", t, q, x, y);
        emit!(self, "cvt.rzi.{}.{} {}, {};", t, t, q, q);
        emit!(self, "neg.{} {}, {};", t, n, q);
        emit!(self, "fma.rn.{} {}, {}, {}, {};", t, d, n, y, x);
        Operand::Reg(d)
    }

    fn bool_binop(&mut self, op: BinOp, x: Operand, y: Operand) -> Operand {
        use BinOp::*;
        let d = self.reg(Class::Pred);
        match op {
            And | BitAnd => emit!(self, "and.pred {}, {}, {};", d, x, y),
            Or | BitOr => emit!(self, "or.pred {}, {}, {};", d, x, y),
            BitXor | Ne => emit!(self, "xor.pred {}, {}, {};", d, x, y),
            Eq => {
                let t = self.reg(Class::Pred);
                emit!(self, "xor.pred {}, {}, {};", t, x, y);
                emit!(self, "not.pred {}, {};", d, t);
            }
            // false < true, as in Rust.
            Lt | Le | Gt | Ge => {
                let (neg, other, combine) = match op {
                    Lt => (&x, &y, "and"),
                    Le => (&x, &y, "or"),
                    Gt => (&y, &x, "and"),
                    _ => (&y, &x, "or"),
                };
                let n = self.reg(Class::Pred);
                emit!(self, "not.pred {}, {};", n, neg);
                emit!(self, "{}.pred {}, {}, {};", combine, d, n, other);
            }
            _ => {
                self.comment(&format!("operator `{}` not defined on bool", op.symbol()));
                return x;
            }
        }
        Operand::Reg(d)
    }

    /// `a && b`, `a || b`: `b` runs only when needed, unless evaluating it
    /// is harmless (no loads, calls, warp or barrier operations).
    fn short_circuit(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Operand {
        let x = self.expr_reg(a);
        let name = if op == BinOp::And { "and" } else { "or" };
        if speculatable(b) {
            let y = self.expr_reg(b);
            let d = self.reg(Class::Pred);
            emit!(self, "{}.pred {}, {}, {};", name, d, x, y);
            return Operand::Reg(d);
        }
        let d = self.reg(Class::Pred);
        let end = self.label();
        emit!(self, "mov.pred {}, {};", d, x);
        if op == BinOp::And {
            emit!(self, "@!{} bra {};", x, end);
        } else {
            emit!(self, "@{} bra {};", x, end);
        }
        self.depth += 1;
        let y = self.expr_reg(b);
        emit!(self, "mov.pred {}, {};", d, y);
        self.depth -= 1;
        self.place_label(end);
        Operand::Reg(d)
    }

    /// `select(c, x, y)`: both already evaluated.
    pub(super) fn select(&mut self, c: Operand, x: Operand, y: Operand, ty: Scalar) -> Operand {
        if ty == Scalar::Bool {
            // (c && x) || (!c && y)
            let (t, nc, u, d) = (
                self.reg(Class::Pred),
                self.reg(Class::Pred),
                self.reg(Class::Pred),
                self.reg(Class::Pred),
            );
            emit!(self, "and.pred {}, {}, {};", t, c, x);
            emit!(self, "not.pred {}, {};", nc, c);
            emit!(self, "and.pred {}, {}, {};", u, nc, y);
            emit!(self, "or.pred {}, {}, {};", d, t, u);
            return Operand::Reg(d);
        }
        let d = self.reg_for(ty);
        emit!(
            self,
            "selp.{} {}, {}, {}, {};",
            suffix::selp(ty),
            d,
            x,
            y,
            c
        );
        Operand::Reg(d)
    }

    /// `if c { ...; a } else { ...; b }`: only the taken branch runs.
    fn if_expr(
        &mut self,
        cond: &Expr,
        then: (&Block, &Expr),
        els: (&Block, &Expr),
        ty: Scalar,
    ) -> Operand {
        if let ExprKind::Const(Value::Bool(c)) = cond.kind {
            let (block, value) = if c { then } else { els };
            self.block(block);
            let v = self.expr(value);
            let d = self.reg_for(ty);
            self.mov(d, &v, ty);
            return Operand::Reg(d);
        }
        let p = self.expr_reg(cond);
        let d = self.reg_for(ty);
        let (else_l, end_l) = (self.label(), self.label());
        emit!(self, "@!{} bra {};", p, else_l);
        self.depth += 1;
        self.block(then.0);
        let v = self.expr(then.1);
        self.mov(d, &v, ty);
        emit!(self, "bra {};", end_l);
        self.place_label(else_l);
        self.block(els.0);
        let v = self.expr(els.1);
        self.mov(d, &v, ty);
        self.depth -= 1;
        self.place_label(end_l);
        Operand::Reg(d)
    }

    /// Calls device function `func` (`.param` passing, `call.uni`); the
    /// result, if it has one. `bool` travels as a `.b32` 0/1.
    pub(super) fn call(&mut self, func: FuncId, args: &[Expr]) -> Option<Operand> {
        let module = self.module;
        let Some(f) = module.functions.get(func.index()) else {
            self.comment("call of an unknown function");
            return None;
        };
        let name = self
            .names
            .funcs
            .get(func.index())
            .cloned()
            .unwrap_or_default();
        let vals = self.operand_list(args);
        let mut passed = Vec::with_capacity(vals.len());
        for (i, (v, a)) in vals.into_iter().zip(args).enumerate() {
            let want = f.body.locals.get(i).map_or(a.ty, |l| l.ty);
            let v = self.convert(v, a.ty, want);
            passed.push((self.param_bits(v, want), want));
        }
        self.line(format_args!("{{"));
        let mut arg_names = Vec::new();
        for (i, (v, ty)) in passed.iter().enumerate() {
            let pt = suffix::func_param(*ty);
            emit!(self, ".param .{} $ca{};", pt, i);
            emit!(self, "st.param.{} [$ca{}], {};", pt, i, v);
            arg_names.push(format!("$ca{i}"));
        }
        let args_text = if arg_names.is_empty() {
            String::new()
        } else {
            format!(", ({})", arg_names.join(", "))
        };
        let result = match f.ret {
            Some(rt) => {
                let pt = suffix::func_param(rt);
                emit!(self, ".param .{} $cr;", pt);
                emit!(self, "call.uni ($cr), {}{};", name, args_text);
                let v = if rt == Scalar::Bool {
                    let t = self.reg(Class::B32);
                    let p = self.reg(Class::Pred);
                    emit!(self, "ld.param.b32 {}, [$cr];", t);
                    emit!(self, "setp.ne.b32 {}, {}, 0;", p, t);
                    p
                } else {
                    let d = self.reg_for(rt);
                    emit!(self, "ld.param.{} {}, [$cr];", pt, d);
                    d
                };
                Some(Operand::Reg(v))
            }
            None => {
                emit!(self, "call.uni {}{};", name, args_text);
                None
            }
        };
        self.line(format_args!("}}"));
        result
    }

    /// A value as it is stored in a `.param`: `bool` becomes a `.b32` 0/1.
    pub(super) fn param_bits(&mut self, v: Operand, ty: Scalar) -> Operand {
        if ty != Scalar::Bool {
            return v;
        }
        let r = self.reg(Class::B32);
        emit!(self, "selp.b32 {}, 1, 0, {};", r, v);
        Operand::Reg(r)
    }
}

/// `k` when `y` is the integer constant 2^k (1 ≤ 2^k, and 2^k < 2^(bits-1)
/// for signed types).
fn pow2_shift(y: &Operand, ty: Scalar) -> Option<u32> {
    if !ty.is_int() {
        return None;
    }
    let v = imm::parse_int(y)?;
    let limit = if ty.is_signed_int() {
        ty.bits() - 1
    } else {
        ty.bits()
    };
    (v > 0 && v.count_ones() == 1 && v.trailing_zeros() < limit).then(|| v.trailing_zeros())
}

/// The value of a small constant integer/bool expression the checker left
/// unfolded (`CHUNK * 4`). Floats are left to ptxas: folding them here in
/// f64 could round differently from the f32 operations.
fn fold(e: &Expr) -> Option<Value> {
    let foldable = matches!(
        e.kind,
        ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Cast(_)
            | ExprKind::Select(..)
            | ExprKind::Math(..)
    );
    if !foldable {
        return None;
    }
    let mut budget = 64;
    if !integral(e, &mut budget) {
        return None;
    }
    consteval::eval(e).ok()
}

/// True when `e` is a tree of at most `budget` constant nodes, all of them
/// integers or bools.
fn integral(e: &Expr, budget: &mut u32) -> bool {
    if *budget == 0 || !(e.ty.is_int() || e.ty == Scalar::Bool) {
        return false;
    }
    *budget -= 1;
    match &e.kind {
        ExprKind::Const(_) => true,
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => integral(a, budget),
        ExprKind::Binary(_, a, b) => integral(a, budget) && integral(b, budget),
        ExprKind::Select(c, a, b) => {
            integral(c, budget) && integral(a, budget) && integral(b, budget)
        }
        ExprKind::Math(_, args) => args.iter().all(|a| integral(a, budget)),
        _ => false,
    }
}
