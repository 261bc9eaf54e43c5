//! The verifier's checks of expressions, places and barrier references.

use super::{Mode, Verifier};
use crate::fp::{self, Format};
use crate::ir::{
    consteval, AtomicOp, BarrierRef, BinOp, Expr, ExprKind, MathFn, MemOrder, ParamType, Parity,
    Place, PlaceKind, UnaryOp, Value, WarpOp,
};
use crate::span::Span;
use crate::types::Scalar;

impl Verifier<'_> {
    pub(super) fn barrier_ref(&mut self, r: &BarrierRef) {
        self.span(r.span, "a barrier reference");
        if let Some(i) = &r.index {
            self.expr(i);
            self.expect_int(i.span, "a barrier index", i.ty);
        }
        let Some(k) = self.kernel else {
            self.error(r.span, "a barrier operation outside a kernel");
            return;
        };
        let Some(g) = k.barriers.get(r.group.index()) else {
            self.error(
                r.span,
                format!("barrier group {} does not exist", r.group.0),
            );
            return;
        };
        if self.mode == Mode::Partial {
            return;
        }
        // After the barrier pass (a module without errors), every
        // reference names one barrier.
        match r.index.as_deref() {
            None if g.count != 1 => self.error(
                r.span,
                format!("unindexed reference to `{}` of {}", g.name, g.count),
            ),
            Some(i) => {
                if let Some(c) = consteval::eval_int(i) {
                    if !(0..i128::from(g.count)).contains(&c) {
                        self.error(
                            r.span,
                            format!("index {c} out of bounds for `{}` of {}", g.name, g.count),
                        );
                    }
                }
            }
            None => {}
        }
    }

    pub(super) fn parity(&mut self, p: &Parity) {
        if let Parity::Explicit(e) = p {
            self.expr(e);
            self.expect(e.span, "the parity", e.ty, Scalar::U32);
        }
    }

    pub(super) fn place(&mut self, p: &Place, write: bool) {
        self.span(p.span, "a place");
        let indices = match &p.kind {
            PlaceKind::Global { param, index } => {
                self.expr(index);
                self.expect_int(index.span, "an index", index.ty);
                match self.kernel.and_then(|k| k.params.get(param.index())) {
                    Some(prm) => match prm.ty {
                        ParamType::Global {
                            elem,
                            mutable,
                            written,
                        } => {
                            self.expect(p.span, "the element", p.elem, elem);
                            if write && !(mutable && written) {
                                self.error(
                                    p.span,
                                    format!("`{}` is written but not marked so", prm.name),
                                );
                            }
                        }
                        ParamType::Scalar(_) | ParamType::Tensor(_) => {
                            self.error(p.span, format!("`{}` is not a global array", prm.name))
                        }
                    },
                    None => self.error(p.span, format!("parameter {} does not exist", param.0)),
                }
                return;
            }
            PlaceKind::Shared { array, indices } => (array, indices),
            PlaceKind::Remote {
                array,
                rank,
                indices,
            } => {
                self.expr(rank);
                self.expect(rank.span, "the CTA rank", rank.ty, Scalar::U32);
                (array, indices)
            }
            PlaceKind::Accum { acc, index } => {
                self.expr(index);
                self.expect(index.span, "an accumulator index", index.ty, Scalar::U32);
                match self.kernel.and_then(|k| k.accums.get(acc.index())) {
                    Some(a) => {
                        self.expect(p.span, "the element", p.elem, a.elem);
                        // Out of range only in a module with errors (E0418).
                        let constant = crate::ir::consteval::eval_int(index)
                            .filter(|_| self.mode == super::Mode::Complete);
                        if let Some(i) = constant {
                            if i < 0 || i >= i128::from(a.elements()) {
                                self.error(
                                    p.span,
                                    format!(
                                        "element {i} of `{}`, which holds {}",
                                        a.name,
                                        a.elements()
                                    ),
                                );
                            }
                        }
                    }
                    None => self.error(p.span, format!("accumulator {} does not exist", acc.0)),
                }
                return;
            }
            PlaceKind::Register { array, indices } => {
                for i in indices {
                    self.expr(i);
                    self.expect_int(i.span, "an index", i.ty);
                }
                if let Some(a) = self.array(p.span, *array) {
                    self.expect(p.span, "the element", p.elem, a.ty);
                    if indices.len() != a.dims.len() {
                        self.error(
                            p.span,
                            format!(
                                "{} indices for register array `{}` of {} dimensions",
                                indices.len(),
                                a.name,
                                a.dims.len()
                            ),
                        );
                    }
                    if write && !a.mutable {
                        self.error(
                            p.span,
                            format!("immutable register array `{}` is written", a.name),
                        );
                    }
                    // Out of range only in a module with errors (E0441).
                    if self.mode == super::Mode::Complete {
                        for (i, d) in indices.iter().zip(&a.dims) {
                            let c = crate::ir::consteval::eval_int(i);
                            if c.is_some_and(|c| c < 0 || c >= i128::from(*d)) {
                                self.error(
                                    i.span,
                                    format!(
                                        "index {} of `{}`'s dimension of {d}",
                                        c.unwrap_or(0),
                                        a.name
                                    ),
                                );
                            }
                        }
                    }
                }
                return;
            }
            PlaceKind::SharedAt { array, addr } => {
                self.expr(addr);
                self.expect(addr.span, "a shared address", addr.ty, Scalar::U32);
                match self.kernel.and_then(|k| k.shared.get(array.index())) {
                    Some(a) => self.expect(p.span, "the element", p.elem, a.elem),
                    None => self.error(p.span, format!("shared array {} does not exist", array.0)),
                }
                return;
            }
        };
        let (array, indices) = indices;
        for i in indices {
            self.expr(i);
            self.expect_int(i.span, "an index", i.ty);
        }
        match self.kernel.and_then(|k| k.shared.get(array.index())) {
            Some(a) => {
                self.expect(p.span, "the element", p.elem, a.elem);
                if a.dims.len() != indices.len() {
                    self.error(
                        p.span,
                        format!(
                            "{} indices for `{}` of {} dimensions",
                            indices.len(),
                            a.name,
                            a.dims.len()
                        ),
                    );
                }
            }
            None => self.error(p.span, format!("shared array {} does not exist", array.0)),
        }
    }

    /// `op` applies to operands of type `ty`.
    pub(super) fn operator(&mut self, span: Span, op: BinOp, ty: Scalar) {
        if !op.applies_to(ty) {
            self.error(span, format!("`{}` on {ty}", op.symbol()));
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) {
        self.span(e.span, "an expression");
        match self.seen_exprs.get_mut(e.id.index()) {
            Some(seen) if !*seen => *seen = true,
            Some(_) => self.error(e.span, format!("expression id {} is used twice", e.id.0)),
            None => self.error(
                e.span,
                format!("expression id {} is not of this body", e.id.0),
            ),
        }
        let ty = e.ty;
        match &e.kind {
            ExprKind::Const(v) => self.constant(e.span, *v, ty),
            ExprKind::Local(id) => {
                if let Some(l) = self.local(e.span, *id) {
                    self.expect(e.span, "the local's read", ty, l.ty);
                }
            }
            ExprKind::Param(id) => match self.kernel.and_then(|k| k.params.get(id.index())) {
                Some(p) => match p.ty {
                    ParamType::Scalar(pty) => self.expect(e.span, "the parameter's read", ty, pty),
                    ParamType::Global { .. } => {
                        self.error(e.span, format!("global array `{}` read as a value", p.name))
                    }
                    ParamType::Tensor(_) => {
                        self.error(e.span, format!("tensor map `{}` read as a value", p.name))
                    }
                },
                None => self.error(e.span, format!("parameter {} does not exist", id.0)),
            },
            ExprKind::Special(_) => self.expect(e.span, "a built-in value", ty, Scalar::U32),
            ExprKind::Unary(op, a) => {
                self.expr(a);
                self.expect(e.span, "the result", ty, a.ty);
                let ok = match op {
                    UnaryOp::Neg => a.ty.is_int() || a.ty.is_float() || a.ty.is_packed(),
                    UnaryOp::Not => a.ty.is_int() || a.ty == Scalar::Bool,
                };
                if !ok {
                    self.error(e.span, format!("`{}` on {}", op.symbol(), a.ty));
                }
            }
            ExprKind::Binary(op, a, b) => {
                self.expr(a);
                self.expr(b);
                self.binary(e, *op, a, b);
            }
            ExprKind::Cast(a) => self.expr(a),
            ExprKind::Select(c, a, b) => {
                for x in [c, a, b] {
                    self.expr(x);
                }
                self.expect(c.span, "the condition", c.ty, Scalar::Bool);
                self.expect(a.span, "the first value", a.ty, ty);
                self.expect(b.span, "the second value", b.ty, ty);
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                self.expr(cond);
                self.expect(cond.span, "the condition", cond.ty, Scalar::Bool);
                self.block(then_block);
                self.expr(then_value);
                self.block(else_block);
                self.expr(else_value);
                self.expect(then_value.span, "the `then` value", then_value.ty, ty);
                self.expect(else_value.span, "the `else` value", else_value.ty, ty);
            }
            ExprKind::Load(p) => {
                self.place(p, false);
                self.expect(e.span, "the loaded value", ty, p.elem);
            }
            ExprKind::AddrOf(p) => {
                self.place(p, false);
                self.expect(e.span, "an address", ty, Scalar::U32);
                if !matches!(p.kind, PlaceKind::Shared { .. }) {
                    self.error(
                        e.span,
                        "the address of a place that is not a shared element",
                    );
                }
            }
            ExprKind::Call { func, args } => {
                for a in args {
                    self.expr(a);
                }
                match self.call(e.span, *func, args) {
                    Some(Some(ret)) => self.expect(e.span, "the call's result", ty, ret),
                    Some(None) => self.error(e.span, "a function without a result used as a value"),
                    None => {}
                }
            }
            ExprKind::Math(f, args) => {
                for a in args {
                    self.expr(a);
                }
                self.math(e, *f, args);
            }
            ExprKind::Atomic {
                op,
                sem,
                place,
                args,
            } => {
                if sem.order == MemOrder::Sc {
                    self.error(e.span, "an atomic with order `sc`");
                }
                let t = place.elem;
                let wide = matches!(t.bits(), 32 | 64);
                let ok = match op {
                    AtomicOp::Add
                    | AtomicOp::Sub
                    | AtomicOp::Max
                    | AtomicOp::Min
                    | AtomicOp::Cas => true,
                    AtomicOp::Exch => wide,
                    AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => wide && t.is_int(),
                    AtomicOp::Inc | AtomicOp::Dec => t == Scalar::U32,
                };
                if !ok && t != Scalar::Bool {
                    self.error(e.span, format!("`{}` on {}", op.name(), t.name()));
                }
                self.place(place, true);
                for a in args {
                    self.expr(a);
                }
                let n = if *op == AtomicOp::Cas { 2 } else { 1 };
                if args.len() != n {
                    self.error(e.span, format!("an atomic with {} operands", args.len()));
                }
                for a in args {
                    self.expect(a.span, "an atomic's operand", a.ty, place.elem);
                }
                self.expect(e.span, "the atomic's result", ty, place.elem);
                if place.elem == Scalar::Bool {
                    self.error(e.span, "an atomic on bool");
                }
                // PTX's only narrow atomic is `atom.cas.b16`.
                if place.elem.is_narrow_int() && !(*op == AtomicOp::Cas && place.elem.bits() == 16)
                {
                    self.error(e.span, format!("an atomic `{op:?}` on {}", place.elem));
                }
            }
            ExprKind::Warp(op, args) => {
                for a in args {
                    self.expr(a);
                }
                self.warp(e, *op, args);
            }
            ExprKind::BarrierTest {
                barrier,
                parity,
                method_span,
                ..
            } => {
                self.barrier_ref(barrier);
                self.parity(parity);
                self.span(*method_span, "the barrier method");
                self.expect(e.span, "a barrier test", ty, Scalar::Bool);
            }
        }
    }

    fn constant(&mut self, span: Span, v: Value, ty: Scalar) {
        let ok = match (v, Format::of(ty)) {
            (Value::Bool(_), _) => ty == Scalar::Bool,
            (Value::Int(i), _) => ty.is_int() && consteval::wrap(i, ty) == i,
            (Value::Float(f), Some(fmt)) => f.is_nan() || fp::round(f, fmt) == f,
            (Value::Float(f), None) => f.is_nan() || fp::to_storage(f, ty).is_some_and(|r| r == f),
            (Value::Pair(lo, hi), _) => match ty.half_of().and_then(Format::of) {
                Some(fmt) => [lo, hi]
                    .iter()
                    .all(|x| x.is_nan() || fp::round(*x, fmt) == *x),
                None => false,
            },
        };
        if !ok {
            self.error(span, format!("the constant {v:?} is not a value of {ty}"));
        }
    }

    fn binary(&mut self, e: &Expr, op: BinOp, a: &Expr, b: &Expr) {
        if op.is_logical() {
            for x in [a, b] {
                self.expect(x.span, "an operand", x.ty, Scalar::Bool);
            }
            self.expect(e.span, "the result", e.ty, Scalar::Bool);
            return;
        }
        if op.is_shift() {
            self.expect_int(b.span, "the shift amount", b.ty);
        } else {
            self.expect(b.span, "the right operand", b.ty, a.ty);
        }
        self.operator(e.span, op, a.ty);
        let result = if op.is_comparison() {
            Scalar::Bool
        } else {
            a.ty
        };
        self.expect(e.span, "the result", e.ty, result);
    }

    fn math(&mut self, e: &Expr, f: MathFn, args: &[Expr]) {
        let n = match f {
            MathFn::Min | MathFn::Max | MathFn::Pack => 2,
            MathFn::Fma => 3,
            _ => 1,
        };
        if args.len() != n {
            self.error(e.span, format!("`{f:?}` with {} arguments", args.len()));
        }
        match f {
            // Two halves of the pair's type, or two `f32`s.
            MathFn::Pack => {
                let half = e.ty.half_of();
                if half.is_none() {
                    self.error(e.span, format!("`pack` into {}", e.ty));
                }
                let want = match args.first() {
                    Some(a) if a.ty == Scalar::F32 => Scalar::F32,
                    _ => half.unwrap_or(e.ty),
                };
                for a in args {
                    self.expect(a.span, "an argument", a.ty, want);
                }
                return;
            }
            MathFn::Lo | MathFn::Hi => {
                for a in args {
                    match a.ty.half_of() {
                        Some(h) => self.expect(e.span, "the half", e.ty, h),
                        None => self.error(a.span, format!("`{f:?}` of {}", a.ty)),
                    }
                }
                return;
            }
            _ => {}
        }
        for a in args {
            self.expect(a.span, "an argument", a.ty, e.ty);
        }
        // The writer's domains, wider than the language's: every type for
        // `min`/`max` (`bool` as `and`/`or`, halves through `f32`) and
        // `abs` (the identity on unsigned values and `bool`), every float
        // format for the rest (halves through `f32`), integers for `fma`
        // (`mad.lo`).
        let ty = e.ty;
        let ok = match f {
            MathFn::Min | MathFn::Max | MathFn::Abs => !ty.is_storage_only(),
            MathFn::Fma => ty != Scalar::Bool && !ty.is_storage_only(),
            MathFn::Pack | MathFn::Lo | MathFn::Hi => true,
            _ => ty.is_float(),
        };
        if !ok {
            self.error(e.span, format!("`{f:?}` on {ty}"));
        }
    }

    fn warp(&mut self, e: &Expr, op: WarpOp, args: &[Expr]) {
        let result = match op {
            WarpOp::Ballot | WarpOp::ActiveMask => Scalar::U32,
            WarpOp::Any | WarpOp::All | WarpOp::Elect => Scalar::Bool,
            _ => args.first().map_or(e.ty, |a| a.ty),
        };
        let n = op.fixed_args();
        let masked = op.takes_mask() && args.len() == n + 1;
        if args.len() != n && !masked {
            self.error(e.span, format!("`{op:?}` with {} arguments", args.len()));
        }
        if let (true, Some(mask)) = (masked, args.last()) {
            self.expect(mask.span, "the warp mask", mask.ty, Scalar::U32);
        }
        self.expect(e.span, "the result", e.ty, result);
        match (op, args) {
            (WarpOp::Ballot | WarpOp::Any | WarpOp::All, [p, ..]) => {
                self.expect(p.span, "the predicate", p.ty, Scalar::Bool)
            }
            // Any value: the writer moves other widths as 32-bit pieces.
            (_, [_, lane, ..]) if !(lane.ty.is_int() || lane.ty == Scalar::Bool) => {
                self.error(lane.span, format!("a shuffle lane of type {}", lane.ty));
            }
            _ => {}
        }
    }
}
