//! Expressions: constants, locals, operators, `select`, `if` expressions and
//! calls. Memory, math, warp and barrier expressions live in their own files.

use super::error::Result;
use super::imm;
use super::suffix;
use super::writer::{emit, Class, Operand, Reg, Writer};
use crate::ir::consteval;
use crate::ir::contract::{self, Fused};
use crate::ir::{BinOp, Block, Expr, ExprKind, UnaryOp, Value};
use crate::types::Scalar;

/// The most nodes of a constant subexpression the writer folds in one go
/// (it asks at every node, so a bound keeps it linear; a larger constant
/// tree is folded in parts, to the same value, since folding computes what
/// the instructions compute).
const FOLD_BUDGET: u32 = 64;

impl Writer<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Operand> {
        let outer = self.at(e.span);
        let v = self.expr_kind(e)?;
        self.restore(outer);
        Ok(v)
    }

    fn expr_kind(&mut self, e: &Expr) -> Result<Operand> {
        // The writer has no constant arithmetic of its own: every constant
        // operation is computed by `consteval`, the one definition.
        if let Some(v) = consteval::fold(e, FOLD_BUDGET) {
            return self.constant(v, e.ty);
        }
        match &e.kind {
            ExprKind::Const(v) => self.constant(*v, e.ty),
            ExprKind::Local(id) => Ok(Operand::Reg(self.local(*id)?)),
            ExprKind::Param(id) => self.param_value(*id),
            ExprKind::Special(s) => self.special(*s),
            ExprKind::Unary(op, a) => {
                let x = self.expr(a)?;
                self.unary(*op, a.ty, x)
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => self.short_circuit(*op, a, b),
            ExprKind::Binary(op, a, b) => match contract::fused(*op, a, b) {
                Some(f) => self.fused(&f, e.ty),
                None => {
                    let [x, y] = self.operands([a, b])?;
                    self.binop(*op, a.ty, x, y, b.ty)
                }
            },
            ExprKind::Cast(a) => {
                let x = self.expr(a)?;
                self.convert(x, a.ty, e.ty)
            }
            ExprKind::Select(c, a, b) => {
                let [c, x, y] = self.operands([c, a, b])?;
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
            ExprKind::AddrOf(place) => self.addr_of(place),
            ExprKind::Call { func, args } => match self.call(*func, args)? {
                Some(v) => Ok(v),
                None => Err(self.invalid("a function without a result used as a value")),
            },
            ExprKind::Math(f, args) => self.math(*f, args, e.ty),
            ExprKind::Atomic {
                op,
                sem,
                place,
                args,
            } => self.atomic(*op, *sem, place, args),
            ExprKind::Warp(op, args) => self.warp(*op, args),
            ExprKind::BarrierTest {
                barrier,
                parity,
                acquire,
                ..
            } => self.barrier_test(barrier, parity, *acquire),
        }
    }

    /// Evaluates `e` into a register.
    pub(super) fn expr_reg(&mut self, e: &Expr) -> Result<Reg> {
        let v = self.expr(e)?;
        Ok(self.in_reg(v, e.ty))
    }

    /// Evaluates operands left to right. A value still sitting in a local's
    /// register is copied when a later operand may assign that local.
    pub(super) fn operands<const N: usize>(&mut self, es: [&Expr; N]) -> Result<[Operand; N]> {
        let mut out: [Operand; N] = std::array::from_fn(|_| Operand::imm(0));
        for (slot, (i, e)) in out.iter_mut().zip(es.iter().enumerate()) {
            let later = es.iter().skip(i + 1).copied();
            *slot = self.operand(e, later)?;
        }
        Ok(out)
    }

    /// Like [`Writer::operands`] for a slice of arguments.
    pub(super) fn operand_list(&mut self, es: &[Expr]) -> Result<Vec<Operand>> {
        let mut out = Vec::with_capacity(es.len());
        for (i, e) in es.iter().enumerate() {
            out.push(self.operand(e, es.iter().skip(i + 1))?);
        }
        Ok(out)
    }

    /// `e`'s value, copied out of a local's register when one of the
    /// operands evaluated after it may assign that local (the fact
    /// [`crate::analysis`] found for each expression).
    fn operand<'e>(
        &mut self,
        e: &Expr,
        mut later: impl Iterator<Item = &'e Expr>,
    ) -> Result<Operand> {
        let v = self.expr(e)?;
        if let Operand::Reg(r) = v {
            if self.is_local_reg(r) && later.any(|x| self.info.may_assign(x.id)) {
                let copy = self.reg(r.class);
                emit!(self, "mov.{} {}, {};", suffix::mov(e.ty), copy, r);
                return Ok(Operand::Reg(copy));
            }
        }
        Ok(v)
    }

    /// A contracted `a * b + c` ([`contract`]): `fma.rn`, operands evaluated
    /// in source order. A negation falls on a constant operand when there is
    /// one (`3.0 - 2.0 * t` is `fma(-2.0, t, 3.0)`), else it is a `neg`.
    fn fused(&mut self, f: &Fused<'_>, ty: Scalar) -> Result<Operand> {
        let [a, b, c] = if f.product_first {
            self.operands([f.a, f.b, f.c])?
        } else {
            let [c, a, b] = self.operands([f.c, f.a, f.b])?;
            [a, b, c]
        };
        let (a, b) = if f.negate_product {
            self.negate_product((f.a, a), (f.b, b), ty)?
        } else {
            (a, b)
        };
        let c = if f.negate_addend {
            self.negate(f.c, c, ty)?
        } else {
            c
        };
        self.fma(ty, a, b, c)
    }

    /// `(-a, b)` or `(a, -b)` for a product: the constant factor is negated,
    /// if there is one (no instruction), else `a`.
    pub(super) fn negate_product(
        &mut self,
        (a, x): (&Expr, Operand),
        (b, y): (&Expr, Operand),
        ty: Scalar,
    ) -> Result<(Operand, Operand)> {
        if let Some(ny) = self.negated_constant(b, ty)? {
            return Ok((x, ny));
        }
        Ok((self.negate(a, x, ty)?, y))
    }

    /// `-e`, given `e`'s value `x`: an immediate when `e` is a constant,
    /// else a `neg` (exact in every float format).
    fn negate(&mut self, e: &Expr, x: Operand, ty: Scalar) -> Result<Operand> {
        if let Some(n) = self.negated_constant(e, ty)? {
            return Ok(n);
        }
        let x = self.in_reg(x, ty);
        let d = self.reg_for(ty);
        emit!(self, "neg.{} {}, {};", suffix::arith(ty), d, x);
        Ok(Operand::Reg(d))
    }

    /// `-e` as an immediate, when `e` is a constant.
    pub(super) fn negated_constant(&mut self, e: &Expr, ty: Scalar) -> Result<Option<Operand>> {
        let v = match &e.kind {
            ExprKind::Const(v) => *v,
            _ => match consteval::fold(e, FOLD_BUDGET) {
                Some(v) => v,
                None => return Ok(None),
            },
        };
        match consteval::unary(UnaryOp::Neg, v, ty) {
            Ok(n) => Ok(Some(self.constant(n, ty)?)),
            Err(_) => Ok(None),
        }
    }

    /// A constant: an immediate, or a register for `bool`, `f16`/`bf16` and
    /// the pairs (whose instructions take no immediates).
    pub(super) fn constant(&mut self, v: Value, ty: Scalar) -> Result<Operand> {
        let Some(text) = imm::scalar_imm(v, ty) else {
            return Err(self.invalid(format!("the constant {v:?} is not a value of {ty}")));
        };
        Ok(match ty {
            Scalar::Bool | Scalar::F16 | Scalar::BF16 | Scalar::F16x2 | Scalar::BF16x2 => {
                let r = self.reg_for(ty);
                emit!(self, "mov.{} {}, {};", suffix::mov(ty), r, text);
                Operand::Reg(r)
            }
            _ => Operand::Imm(text),
        })
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

    /// The register a kernel parameter was read into in the prologue.
    fn param_value(&mut self, id: crate::ir::ParamId) -> Result<Operand> {
        match self.params.get(id.index()).copied().flatten() {
            Some(r) => Ok(Operand::Reg(r)),
            None => Err(self.invalid(format!("parameter {} has no register here", id.0))),
        }
    }

    /// `a && b`, `a || b`: `b` runs only when needed, unless evaluating it
    /// is harmless (no loads, calls, warp or barrier operations: the
    /// speculation fact of [`crate::analysis`]).
    fn short_circuit(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Result<Operand> {
        let x = self.expr_reg(a)?;
        let name = if op == BinOp::And { "and" } else { "or" };
        if self.info.speculatable(b.id) {
            let y = self.expr_reg(b)?;
            let d = self.reg(Class::Pred);
            emit!(self, "{}.pred {}, {}, {};", name, d, x, y);
            return Ok(Operand::Reg(d));
        }
        let d = self.reg(Class::Pred);
        let end = self.label();
        emit!(self, "mov.pred {}, {};", d, x);
        if op == BinOp::And {
            emit!(self, "@!{} bra {};", x, end);
        } else {
            emit!(self, "@{} bra {};", x, end);
        }
        let y = self.expr_reg(b)?;
        emit!(self, "mov.pred {}, {};", d, y);
        self.place_label(end);
        Ok(Operand::Reg(d))
    }

    /// `select(c, x, y)`: both already evaluated.
    pub(super) fn select(
        &mut self,
        c: Operand,
        x: Operand,
        y: Operand,
        ty: Scalar,
    ) -> Result<Operand> {
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
            return Ok(Operand::Reg(d));
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
        Ok(Operand::Reg(d))
    }

    /// `if c { ...; a } else { ...; b }`: only the taken branch runs.
    fn if_expr(
        &mut self,
        cond: &Expr,
        then: (&Block, &Expr),
        els: (&Block, &Expr),
        ty: Scalar,
    ) -> Result<Operand> {
        if let ExprKind::Const(Value::Bool(c)) = cond.kind {
            let (block, value) = if c { then } else { els };
            self.block(block)?;
            let v = self.expr(value)?;
            let d = self.reg_for(ty);
            self.mov(d, &v, ty);
            return Ok(Operand::Reg(d));
        }
        let p = self.expr_reg(cond)?;
        let d = self.reg_for(ty);
        let (else_l, end_l) = (self.label(), self.label());
        emit!(self, "@!{} bra {};", p, else_l);
        self.block(then.0)?;
        let v = self.expr(then.1)?;
        self.mov(d, &v, ty);
        emit!(self, "bra {};", end_l);
        self.place_label(else_l);
        self.block(els.0)?;
        let v = self.expr(els.1)?;
        self.mov(d, &v, ty);
        self.place_label(end_l);
        Ok(Operand::Reg(d))
    }
}
