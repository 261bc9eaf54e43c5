//! Expressions: names, operators, casts, if-expressions.

use super::body::{Binding, BodyChecker};
use super::builtins::{self, Builtin, BuiltinValue, Entry, Form};
use super::error::CheckError;
use crate::ir::{BinOp, UnaryOp};
use crate::ir::{Dim, Expr, ExprKind, MathFn, Special};
use crate::span::Span;
use crate::syntax::ast;
use crate::target::Target;
use crate::types::Scalar;

/// The special register of a built-in value (`dim` for the vectors).
fn special_of(v: BuiltinValue, dim: Dim) -> Special {
    match v {
        BuiltinValue::ThreadIdx => Special::ThreadIdx(dim),
        BuiltinValue::BlockDim => Special::BlockDim(dim),
        BuiltinValue::BlockIdx => Special::BlockIdx(dim),
        BuiltinValue::GridDim => Special::GridDim(dim),
        BuiltinValue::ClusterIdx => Special::ClusterIdx(dim),
        BuiltinValue::ClusterDim => Special::ClusterDim(dim),
        BuiltinValue::ClusterGridIdx => Special::ClusterGridIdx(dim),
        BuiltinValue::ClusterGridDim => Special::ClusterGridDim(dim),
        BuiltinValue::LaneId => Special::LaneId,
        BuiltinValue::WarpId => Special::WarpId,
        BuiltinValue::ClusterRank => Special::ClusterRank,
        BuiltinValue::ClusterSize => Special::ClusterSize,
    }
}

impl BodyChecker<'_> {
    /// Checks `e` and requires type `ty` (E0110 otherwise).
    pub fn expr_as(&mut self, e: &ast::Expr, ty: Scalar) -> Option<Expr> {
        let v = self.expr(e, Some(ty))?;
        if v.ty != ty {
            self.mismatch(ty, &v, e);
            return None;
        }
        Some(v)
    }

    /// Checks an expression; `expected` is the type the context wants, used
    /// to type untyped literals (it is not enforced here).
    pub fn expr(&mut self, e: &ast::Expr, expected: Option<Scalar>) -> Option<Expr> {
        match &e.kind {
            ast::ExprKind::Int { value, suffix } => {
                self.int_literal(*value, *suffix, false, expected, e.span)
            }
            ast::ExprKind::Float { value, suffix } => {
                self.float_literal(*value, *suffix, false, expected, e.span)
            }
            ast::ExprKind::WideInt(value) => self.wide_int_literal(*value, false, expected, e.span),
            ast::ExprKind::Bool(b) => {
                Some(self.constant(crate::ir::Value::Bool(*b), Scalar::Bool, e.span))
            }
            ast::ExprKind::Name(name) => self.name_value(name),
            ast::ExprKind::Field { base, field } => self.field(base, field, e.span),
            ast::ExprKind::Index { .. } => {
                let (place, _) = self.place(e, false)?;
                let ty = place.elem;
                Some(Expr {
                    kind: ExprKind::Load(Box::new(place)),
                    ty,
                    span: e.span,
                    id: self.ids.expr(),
                })
            }
            ast::ExprKind::Call {
                callee,
                args,
                named,
            } => match self.call(callee, args, ast::named_args(named), e.span, expected)? {
                super::calls::CallResult::Value(v) => Some(v),
                super::calls::CallResult::Effect(_) => {
                    self.unit_as_value(expected, e.span);
                    None
                }
            },
            ast::ExprKind::MethodCall {
                receiver,
                method,
                args,
            } => match self.method_call(receiver, method, args, e.span)? {
                super::calls::CallResult::Value(v) => Some(v),
                super::calls::CallResult::Effect(_) => {
                    self.unit_as_value(expected, e.span);
                    None
                }
            },
            ast::ExprKind::Unary { op, operand } => self.unary(*op, operand, expected, e.span),
            ast::ExprKind::Binary {
                op,
                op_span,
                lhs,
                rhs,
            } => self.binary(*op, *op_span, lhs, rhs, expected, e.span),
            ast::ExprKind::Cast { expr, ty } => {
                let target = self.scalar_type(ty);
                let inner = self.expr(expr, None)?;
                let target = target?;
                if inner.ty == target {
                    return Some(Expr {
                        span: e.span,
                        ..inner
                    });
                }
                if let Some(pair) = [inner.ty, target].into_iter().find(|t| t.is_packed()) {
                    self.error(CheckError::BadOperand {
                        op: "as".into(),
                        ty: pair.to_string(),
                        span: if inner.ty == pair { expr.span } else { ty.span },
                        note: Some(pair_note(pair)),
                    });
                    return None;
                }
                let storage = [inner.ty, target]
                    .into_iter()
                    .find(|t| t.is_storage_only())
                    .filter(|_| !inner.ty.converts_storage(target));
                if let Some(storage) = storage {
                    self.error(CheckError::BadOperand {
                        op: "as".into(),
                        ty: storage.to_string(),
                        span: if inner.ty == storage {
                            expr.span
                        } else {
                            ty.span
                        },
                        note: Some(storage_note(storage)),
                    });
                    return None;
                }
                if (inner.ty.is_fp8() || target.is_fp8())
                    && !self.require_target(
                        Target::Sm89,
                        format!("the conversion from `{}` to `{target}`", inner.ty),
                        e.span,
                    )
                {
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Cast(Box::new(inner)),
                    ty: target,
                    span: e.span,
                    id: self.ids.expr(),
                })
            }
            ast::ExprKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_value(
                cond,
                then_block,
                super::values::Else::Block(else_block),
                expected,
                e.span,
            ),
            ast::ExprKind::Paren(inner) => {
                let v = self.expr(inner, expected)?;
                Some(Expr { span: e.span, ..v })
            }
            ast::ExprKind::Error => None,
        }
    }

    fn unit_as_value(&mut self, expected: Option<Scalar>, span: Span) {
        self.error(CheckError::Mismatch {
            expected: expected.map_or("a value".into(), |t| t.to_string()),
            found: "()".into(),
            span,
            note: Some("this call returns nothing".into()),
            fix: None,
        });
    }

    /// A name used as a value.
    pub fn name_value(&mut self, name: &ast::Ident) -> Option<Expr> {
        let span = name.span;
        match self.lookup(&name.name) {
            Some(Binding::Local(id)) if self.is_array(id) => {
                self.array_as_value(id, name);
                return None;
            }
            Some(Binding::Local(id)) => {
                self.mark_used(id);
                let (ty, def) = self.local(id).map(|l| (l.ty, l.span))?;
                self.reference(span, def);
                return Some(Expr {
                    kind: ExprKind::Local(id),
                    ty,
                    span,
                    id: self.ids.expr(),
                });
            }
            Some(Binding::Param(p)) => {
                let param = self.kernel.as_ref()?.params.get(p.index())?.clone();
                self.reference(span, param.span);
                return match param.ty {
                    crate::ir::ParamType::Scalar(ty) => Some(Expr {
                        kind: ExprKind::Param(p),
                        ty,
                        span,
                        id: self.ids.expr(),
                    }),
                    crate::ir::ParamType::Global { .. } => {
                        self.error(CheckError::IndexCount {
                            name: name.name.to_string(),
                            dims: 1,
                            found: 0,
                            span,
                            decl: Some(param.span),
                        });
                        None
                    }
                    crate::ir::ParamType::Tensor(_) => {
                        self.error(CheckError::TensorDecl {
                            why: format!("tensor map `{}` is not a value", name.name),
                            span,
                            note: Some("a tensor map describes a tensor in global memory for tensor copies; its elements are not read one by one".into()),
                            help: Some(format!("copy a box of it into shared memory: `tma_load(dst, {}[c0, c1], barrier)`", name.name)),
                            fix: None,
                            other: None,
                        });
                        None
                    }
                };
            }
            Some(Binding::Shared(s)) => {
                let arr = self.kernel.as_ref()?.shared.get(s.index())?;
                let (dims, decl) = (arr.dims.len(), arr.span);
                self.error(CheckError::IndexCount {
                    name: name.name.to_string(),
                    dims,
                    found: 0,
                    span,
                    decl: Some(decl),
                });
                return None;
            }
            Some(Binding::Poisoned) => return None,
            Some(Binding::Barrier(id)) => {
                self.error(CheckError::Mismatch {
                    expected: "a value".into(),
                    found: "barrier group".into(),
                    span,
                    note: Some(format!(
                        "use a barrier group through its operations, e.g. `{}`",
                        self.wait_example(id)
                    )),
                    fix: None,
                });
                return None;
            }
            Some(Binding::Accum(_)) => {
                self.error(CheckError::Mismatch {
                    expected: "a value".into(),
                    found: "accumulator".into(),
                    span,
                    note: Some(
                        "an accumulator is read element by element, `acc[i]`, and written by `wgmma`"
                            .into(),
                    ),
                    fix: None,
                });
                return None;
            }
            Some(Binding::Named(_)) => {
                self.error(CheckError::Mismatch {
                    expected: "a value".into(),
                    found: "named barrier".into(),
                    span,
                    note: Some(
                        "use a named barrier through its operations, `sync()` and `arrive()`"
                            .into(),
                    ),
                    fix: None,
                });
                return None;
            }
            None => {}
        }
        if let Some(found) = self.kernel_const(name, span) {
            return found;
        }
        if self.g.poisoned.contains(&*name.name) {
            return None;
        }
        if let Some(c) = self.g.consts.get(&*name.name) {
            let (value, ty, def) = (c.value, c.ty, c.span);
            self.reference(span, def);
            return Some(self.constant(value, ty, span));
        }
        if let Some(entry) = builtins::value(&name.name) {
            let Builtin::Value(v) = entry.builtin else {
                return None;
            };
            if entry.form == Form::Scalar {
                self.builtin_use(span, entry);
                return self.special(entry, special_of(v, Dim::X), &name.name, span);
            }
            self.error(CheckError::Mismatch {
                expected: "u32".into(),
                // CUDA's name for the type of `threadIdx` and friends.
                found: "uint3".into(),
                span,
                note: Some(format!(
                    "`{0}` is a vector of three `u32`s; pick a component: `{0}.x`, `{0}.y` or `{0}.z`",
                    name.name
                )),
                fix: Some(super::error::Suggestion {
                    message: format!("use `{}.x`", name.name),
                    span,
                    replacement: format!("{}.x", name.name),
                }),
            });
            return None;
        }
        if self.g.function_ids.contains_key(&*name.name) || builtins::function(&name.name).is_some()
        {
            self.error(CheckError::NotFound {
                kind: "value",
                name: name.name.to_string(),
                span,
                similar: None,
                help: Some(format!(
                    "`{0}` is a function: call it with `{0}(...)`",
                    name.name
                )),
            });
            return None;
        }
        let similar = self.similar_visible(&name.name, span);
        self.error(CheckError::NotFound {
            kind: "value",
            name: name.name.to_string(),
            span,
            similar,
            help: None,
        });
        None
    }

    /// The built-in value `entry` (written `name`), which reads `s`.
    fn special(&mut self, entry: &Entry, s: Special, name: &str, span: Span) -> Option<Expr> {
        if self.const_context {
            self.error(CheckError::NotConstant {
                span,
                why: Some(format!("`{name}` is only known at run time")),
            });
            return None;
        }
        if !self.require_target(entry.needs.target, format!("`{name}`"), span) {
            return None;
        }
        Some(Expr {
            kind: ExprKind::Special(s),
            ty: Scalar::U32,
            span,
            id: self.ids.expr(),
        })
    }

    fn field(&mut self, base: &ast::Expr, field: &ast::Ident, span: Span) -> Option<Expr> {
        if let ast::ExprKind::Name(name) = &base.kind {
            if self.lookup(&name.name).is_none() && !self.is_const(&name.name) {
                let dim = match &*field.name {
                    "x" => Some(Dim::X),
                    "y" => Some(Dim::Y),
                    "z" => Some(Dim::Z),
                    _ => None,
                };
                let vector = builtins::value(&name.name).filter(|e| e.form == Form::Vector);
                if let Some(entry) = vector {
                    let Builtin::Value(v) = entry.builtin else {
                        return None;
                    };
                    self.builtin_use(name.span, entry);
                    let Some(dim) = dim else {
                        self.error(CheckError::NotFound {
                            kind: "field",
                            name: field.name.to_string(),
                            span: field.span,
                            similar: super::body::similar(&field.name, ["x", "y", "z"]),
                            help: Some(format!("`{}` has the fields `x`, `y` and `z`", name.name)),
                        });
                        return None;
                    };
                    let text = format!("{}.{}", name.name, field.name);
                    return self.special(entry, special_of(v, dim), &text, span);
                }
            }
        }
        let b = self.expr(base, None)?;
        if let Some(half) = b.ty.half_of() {
            let f = match &*field.name {
                "lo" => MathFn::Lo,
                "hi" => MathFn::Hi,
                _ => {
                    self.error(CheckError::NotFound {
                        kind: "field",
                        name: field.name.to_string(),
                        span: field.span,
                        similar: super::body::similar(&field.name, ["lo", "hi"]),
                        help: Some(format!(
                            "values of type `{}` have the fields `lo` (the low 16 bits) and `hi`",
                            b.ty
                        )),
                    });
                    return None;
                }
            };
            return Some(Expr {
                kind: ExprKind::Math(f, vec![b]),
                ty: half,
                span,
                id: self.ids.expr(),
            });
        }
        let vectors: Vec<String> = builtins::names(Form::Vector)
            .map(|n| format!("`{n}`"))
            .collect();
        self.error(CheckError::NotFound {
            kind: "field",
            name: field.name.to_string(),
            span: field.span,
            similar: None,
            help: Some(format!(
                "values of type `{}` have no fields; only the built-in vectors ({}) and the pairs `f16x2` and `bf16x2` (`.lo`, `.hi`) do",
                b.ty,
                vectors.join(", ")
            )),
        });
        None
    }

    fn unary(
        &mut self,
        op: UnaryOp,
        operand: &ast::Expr,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        if op == UnaryOp::Neg {
            let mut inner = operand;
            while let ast::ExprKind::Paren(i) = &inner.kind {
                inner = i;
            }
            match &inner.kind {
                ast::ExprKind::Int { value, suffix } => {
                    return self.int_literal(*value, *suffix, true, expected, span)
                }
                ast::ExprKind::Float { value, suffix } => {
                    return self.float_literal(*value, *suffix, true, expected, span)
                }
                ast::ExprKind::WideInt(value) => {
                    return self.wide_int_literal(*value, true, expected, span)
                }
                _ => {}
            }
        }
        let v = self.expr(operand, expected)?;
        if v.ty.is_storage_only() {
            self.error(CheckError::BadOperand {
                op: op.symbol().into(),
                ty: v.ty.to_string(),
                span: operand.span,
                note: Some(storage_note(v.ty)),
            });
            return None;
        }
        let ok = match op {
            UnaryOp::Neg => v.ty.is_signed_int() || v.ty.is_float() || v.ty.is_packed(),
            UnaryOp::Not => v.ty == Scalar::Bool || v.ty.is_int(),
        };
        if !ok {
            let sym = op.symbol();
            let note = match op {
                UnaryOp::Neg if v.ty.is_int() => {
                    "unsigned values cannot be negated; subtract from zero or cast to a signed type"
                }
                UnaryOp::Not => "`!` is logical not on `bool` and bitwise not on integers",
                _ => "`-` applies to signed integers and floats",
            };
            self.error(CheckError::BadOperand {
                op: sym.into(),
                ty: v.ty.to_string(),
                span: operand.span,
                note: Some(note.into()),
            });
            return None;
        }
        let ty = v.ty;
        Some(Expr {
            kind: ExprKind::Unary(op, Box::new(v)),
            ty,
            span,
            id: self.ids.expr(),
        })
    }

    /// Checks two operands that must have the same type. An untyped literal
    /// operand takes its type from the other one, whichever side it is on.
    pub fn unify_pair(
        &mut self,
        a: &ast::Expr,
        b: &ast::Expr,
        expected: Option<Scalar>,
    ) -> (Option<Expr>, Option<Expr>) {
        if a.untyped && !b.untyped {
            let bv = self.expr(b, expected);
            let av = match &bv {
                Some(bv) => self.expr_as(a, bv.ty),
                None => self.expr(a, expected),
            };
            return (av, bv);
        }
        let av = self.expr(a, expected);
        let bv = match &av {
            Some(av) => self.expr_as(b, av.ty),
            None => self.expr(b, expected),
        };
        (av, bv)
    }

    fn binary(
        &mut self,
        op: BinOp,
        op_span: Span,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        if op.is_logical() {
            let (l, r) = (
                self.expr_as(lhs, Scalar::Bool),
                self.expr_as(rhs, Scalar::Bool),
            );
            return Some(Expr {
                kind: ExprKind::Binary(op, Box::new(l?), Box::new(r?)),
                ty: Scalar::Bool,
                span,
                id: self.ids.expr(),
            });
        }
        if op.is_shift() {
            let l = self.expr(lhs, expected.filter(|t| t.is_int()));
            let r = self.shift_amount(rhs);
            let l = l?;
            self.check_operator(op, l.ty, op_span)?;
            let ty = l.ty;
            return Some(Expr {
                kind: ExprKind::Binary(op, Box::new(l), Box::new(r?)),
                ty,
                span,
                id: self.ids.expr(),
            });
        }
        let want = if op.is_comparison() {
            None
        } else {
            expected.filter(|t| *t != Scalar::Bool || op.is_bitwise())
        };
        let (l, r) = self.unify_pair(lhs, rhs, want);
        let (l, r) = (l?, r?);
        self.check_operator(op, l.ty, op_span)?;
        self.check_divisor(op, &r)?;
        let ty = if op.is_comparison() {
            Scalar::Bool
        } else {
            l.ty
        };
        Some(Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty,
            span,
            id: self.ids.expr(),
        })
    }

    /// The amount of a shift: any integer type (untyped literals are `u32`).
    pub fn shift_amount(&mut self, e: &ast::Expr) -> Option<Expr> {
        let v = self.expr(e, Some(Scalar::U32))?;
        if !v.ty.is_int() {
            self.mismatch_text("integer", v.ty.to_string(), e.span);
            return None;
        }
        Some(v)
    }

    /// E0117 when `op` is an integer `/` or `%` and `divisor` is the
    /// constant zero: PTX gives no defined result, at run time or folded.
    pub fn check_divisor(&mut self, op: BinOp, divisor: &Expr) -> Option<()> {
        if !matches!(op, BinOp::Div | BinOp::Rem) || !divisor.ty.is_int() {
            return Some(());
        }
        // Large divisors are left to the pass over the finished body.
        if super::divisors::quick_value(divisor) != Some(crate::ir::Value::Int(0)) {
            return Some(());
        }
        self.error(CheckError::DivisionByZero {
            op: op.symbol(),
            span: divisor.span,
        });
        None
    }

    /// E0118 unless `op` applies to operands of type `ty`.
    pub fn check_operator(&mut self, op: BinOp, ty: Scalar, op_span: Span) -> Option<()> {
        use BinOp::*;
        if ty.is_storage_only() {
            self.error(CheckError::BadOperand {
                op: op.symbol().into(),
                ty: ty.to_string(),
                span: op_span,
                note: Some(storage_note(ty)),
            });
            return None;
        }
        if ty.is_packed() && !matches!(op, Add | Sub | Mul) {
            self.error(CheckError::BadOperand {
                op: op.symbol().into(),
                ty: ty.to_string(),
                span: op_span,
                note: Some(pair_note(ty)),
            });
            return None;
        }
        // The language's rules: narrower than the IR's domains
        // (`ir::BinOp::applies_to`), which the writer defines more widely.
        let (ok, note) = match op {
            Add | Sub | Mul => (
                ty.is_int() || ty.is_float() || ty.is_packed(),
                "arithmetic applies to integers and floats",
            ),
            Div => (
                ty.is_int() || ty.is_float(),
                "arithmetic applies to integers and floats",
            ),
            Rem => (ty.is_int(), "`%` applies to integers"),
            BitAnd | BitOr | BitXor => (
                ty.is_int() || ty == Scalar::Bool,
                "bitwise operators apply to integers and `bool`",
            ),
            Shl | Shr => (ty.is_int(), "shifts apply to integers"),
            Eq | Ne => (true, ""),
            Lt | Le | Gt | Ge => (
                ty.is_int() || ty.is_float(),
                "ordering comparisons apply to integers and floats",
            ),
            And | Or => (ty == Scalar::Bool, "`&&` and `||` apply to `bool`"),
        };
        if ok {
            return Some(());
        }
        self.error(CheckError::BadOperand {
            op: op.symbol().into(),
            ty: ty.to_string(),
            span: op_span,
            note: Some(note.into()),
        });
        None
    }
}

/// The note of E0118 on a storage type (`e4m3`, `e5m2`, `tf32`).
pub fn storage_note(ty: Scalar) -> String {
    let converts = if ty.is_fp8() {
        "; `as` converts it to and from `f32`, `f16` and `bf16` (sm_89 and newer)"
    } else {
        "; `as` converts it to and from `f32`"
    };
    format!(
        "`{ty}` is a storage type for tensor data: its values are loaded, stored, copied and passed on, but no operator or built-in applies to them{converts}"
    )
}

/// The note of E0118 on a packed pair used where only its halves apply.
pub fn pair_note(ty: Scalar) -> String {
    let half = ty.half_of().unwrap_or(ty);
    format!(
        "`{ty}` holds two `{half}`: `+`, `-`, `*`, unary `-`, `min`, `max`, `abs` and `fma` apply to both halves at once; for anything else take them apart with `.lo` and `.hi` and pack the results with `{ty}(lo, hi)`"
    )
}
