//! Calls: the built-in functions, looked up in the table
//! ([`super::builtins`]) and dispatched on [`Function`], and device
//! functions.

use super::args::Call;
use super::body::BodyChecker;
use super::builtins::{self, Builtin, Function};
use super::error::CheckError;
use crate::ir::{self, Expr, ExprKind, MathFn, Special, StmtKind, Value, WarpOp};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

/// A call either produces a value or is a statement (returns nothing).
pub enum CallResult {
    Value(Expr),
    Effect(Box<StmtKind>),
}

impl BodyChecker<'_> {
    pub fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        span: Span,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        if let Some(id) = self.g.function_ids.get(&*callee.name).copied() {
            self.no_named_args(&callee.name, named);
            let note = self
                .g
                .functions
                .get(id.index())
                .map(|f| format!("`{}` is `{}`", callee.name, f.signature()));
            return match note {
                Some(note) => {
                    self.in_call(note, args, &[], |c| c.user_call(id, callee, args, span))
                }
                None => None,
            };
        }
        let Some(entry) = builtins::function(&callee.name) else {
            self.no_named_args(&callee.name, named);
            return self.unknown_function(callee, args);
        };
        self.builtin_use(callee.span, entry);
        let Builtin::Function(f) = entry.builtin else {
            return None;
        };
        if self.const_context && !entry.in_const {
            // The named arguments are checked as the built-in takes them
            // (`mask =` is one), their values for their own errors.
            for n in self.named_args(entry, args, named) {
                self.quiet_uses(&n.value);
            }
            self.error(CheckError::NotConstant {
                span,
                why: Some(format!(
                    "`{}` cannot be evaluated at compile time",
                    entry.name
                )),
            });
            return None;
        }
        let call = Call::new(entry, args, named, span);
        self.in_call(entry.call_note(), args, named, |c| {
            c.builtin_call(call, f, expected)
        })
    }

    /// E0100 for a name that is neither a device function nor a built-in
    /// (or E0109 for a value called as a function); the arguments are
    /// checked for their own errors. The similar name is looked for only
    /// when the error will be shown (the cap keeps the first of a code).
    fn unknown_function(&mut self, callee: &ast::Ident, args: &[ast::Expr]) -> Option<CallResult> {
        let name = &*callee.name;
        let similar = self.similar_name(name, callee.span, || {
            builtins::names(builtins::Form::Function)
                .chain(self.g.function_ids.keys().map(String::as_str))
        });
        self.quiet_call_args(None, args);
        if self.lookup(name).is_some() || self.is_const(name) || builtins::value(name).is_some() {
            self.error(CheckError::NotA {
                name: name.into(),
                what: "a function",
                span: callee.span,
                decl: None,
            });
        } else {
            self.error(CheckError::NotFound {
                kind: "function",
                name: name.into(),
                span: callee.span,
                similar,
                help: None,
            });
        }
        None
    }

    /// A call of the built-in function `f`. Kept apart from [`call`] (and
    /// not inlined into it) because its frame is large: calls of device
    /// functions nest through `call` without paying for it.
    ///
    /// [`call`]: BodyChecker::call
    #[inline(never)]
    fn builtin_call(
        &mut self,
        c: Call<'_>,
        f: Function,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        let Call {
            entry,
            args,
            named,
            span,
        } = c;
        let effect = |k: StmtKind| Some(CallResult::Effect(Box::new(k)));
        match f {
            Function::Math(m) => self.math_call(c, m, expected),
            Function::Pack(ty) => self.pack_call(c, ty),
            Function::Select => {
                let [Some(c), Some(a), Some(b)] = self.bind_args::<3>(&c)?.args else {
                    return None;
                };
                let c = self.expr_as(c, Scalar::Bool);
                let (a, b) = self.unify_pair(a, b, expected);
                let (c, a, b) = (c?, a?, b?);
                let ty = a.ty;
                self.value(
                    ExprKind::Select(Box::new(c), Box::new(a), Box::new(b)),
                    Some(ty),
                    span,
                )
            }
            Function::Atomic(op) => self.atomic_call(c, op),
            Function::Fence => self.fence_call(c),
            Function::Warp(op) => self.warp_call(c, op, expected),
            Function::LaneMask(m) => {
                self.bind_args::<0>(&c)?;
                self.value(
                    ExprKind::Special(Special::LaneMask(m)),
                    Some(Scalar::U32),
                    span,
                )
            }
            Function::SyncWarp => {
                let [mask] = self.bind_args::<1>(&c)?.args;
                let mask = match self.mask(mask)? {
                    Some(m) => m,
                    None => self.constant(Value::Int(i128::from(u32::MAX)), Scalar::U32, span),
                };
                effect(StmtKind::SyncWarp(mask))
            }
            Function::SyncThreads => {
                self.bind_args::<0>(&c)?;
                effect(StmtKind::SyncThreads)
            }
            Function::ClusterSync => {
                self.bind_args::<0>(&c)?;
                self.needs(entry, span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::ClusterSync)))
            }
            Function::FenceProxyAsync => {
                self.bind_args::<0>(&c)?;
                self.needs(entry, span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::FenceProxyAsync)))
            }
            Function::CopyAsync => self.copy_async(c),
            Function::TmaLoad | Function::TmaStore | Function::TmaReduceAdd => {
                self.tensor_copy_call(c, f)
            }
            Function::BytesOf => self.bytes_of_call(c),
            Function::SizeOf => self.size_of_call(c),
            Function::CopyAsyncStore => self.copy_async_store(c),
            Function::CopyAsyncCommit => {
                self.bind_args::<0>(&c)?;
                self.needs(entry, span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::CopyAsyncCommit)))
            }
            Function::CopyAsyncWait => {
                let [Some(n)] = self.bind_args::<1>(&c)?.args else {
                    return None;
                };
                let e = self.expr_as(n, Scalar::U32)?;
                let Some(v) = ir::consteval::eval_u64(&e) else {
                    self.error(CheckError::NotConstant { span: n.span, why: Some("`copy_async_wait` needs a constant count (PTX `wait_group` takes an immediate)".into()) });
                    return None;
                };
                let v = u32::try_from(v).ok()?;
                self.needs(entry, span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::CopyAsyncWait(v))))
            }
            Function::SetMaxRegs => self.set_max_regs(c),
            Function::AccRow => self.accum_coord(c, false),
            Function::AccCol => self.accum_coord(c, true),
            Function::Wgmma => self.wgmma(c),
            Function::Fragment(k) => self.fragment_op(c, k),
            Function::WgmmaCommit => self.wgmma_commit(c),
            Function::WgmmaWait => self.wgmma_wait(c),
            // `remote(array, rank)` on its own, not indexed.
            Function::Remote => {
                self.no_named_args(entry.name, named);
                self.error(CheckError::IndexCount {
                    name: "remote(...)".into(),
                    dims: 1,
                    found: 0,
                    span,
                    decl: None,
                });
                None
            }
            // A vector load used as one value.
            Function::Load2 | Function::Load4 => {
                self.no_named_args(entry.name, named);
                self.vector_as_value(entry, args, span);
                None
            }
            Function::Store2 | Function::Store4 => self.store_vector_call(c),
            Function::LdMatrix(_) => {
                self.no_named_args(entry.name, named);
                self.vector_as_value(entry, args, span);
                None
            }
            Function::StMatrix(n) => self
                .store_matrix_call(c, usize::from(n))
                .map(|k| CallResult::Effect(Box::new(k))),
        }
    }

    /// `min`, `max`, `abs`, the float functions and `fma`.
    /// Its own function (not inlined) so that nested calls pay only for
    /// the frame of the group they use.
    #[inline(never)]
    fn math_call(
        &mut self,
        c: Call<'_>,
        f: MathFn,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        let (name, span) = (c.entry.name, c.span);
        match f {
            MathFn::Min | MathFn::Max => {
                let [Some(a), Some(b)] = self.bind_args::<2>(&c)?.args else {
                    return None;
                };
                let (a, b) = self.unify_pair(a, b, expected);
                let (a, b) = (a?, b?);
                self.numeric(name, a.ty, span)?;
                self.value(ExprKind::Math(f, vec![a, b]), None, span)
            }
            MathFn::Abs => {
                let [Some(a)] = self.bind_args::<1>(&c)?.args else {
                    return None;
                };
                let a = self.expr(a, expected)?;
                if !(a.ty.is_signed_int()
                    || a.ty == Scalar::F32
                    || a.ty == Scalar::F64
                    || a.ty.is_packed())
                {
                    let note = if a.ty.is_packed() || a.ty.is_storage_only() {
                        "`abs` applies to signed integers, `f32`, `f64`, `f16x2` and `bf16x2`"
                    } else {
                        "`abs` applies to signed integers, `f32` and `f64`"
                    };
                    self.bad(name, a.ty, span, note)?;
                }
                self.value(ExprKind::Math(f, vec![a]), None, span)
            }
            MathFn::Sqrt | MathFn::Rsqrt => {
                let [Some(a)] = self.bind_args::<1>(&c)?.args else {
                    return None;
                };
                let a = self.expr(a, expected.filter(|t| t.is_float()).or(Some(Scalar::F32)))?;
                if !matches!(a.ty, Scalar::F32 | Scalar::F64) {
                    self.bad(
                        name,
                        a.ty,
                        span,
                        "square roots apply to `f32` and `f64`; convert halves with `as f32`",
                    )?;
                }
                self.value(ExprKind::Math(f, vec![a]), None, span)
            }
            MathFn::Exp2 | MathFn::Log2 | MathFn::Exp | MathFn::Log | MathFn::Sin | MathFn::Cos => {
                let [Some(a)] = self.bind_args::<1>(&c)?.args else {
                    return None;
                };
                let a = self.expr(a, Some(Scalar::F32))?;
                if a.ty != Scalar::F32 {
                    self.bad(name, a.ty, span, "the hardware approximations (`ex2.approx`, `lg2.approx`, `sin.approx`, ...) exist only for `f32`")?;
                }
                self.value(ExprKind::Math(f, vec![a]), None, span)
            }
            MathFn::Fma => {
                let [Some(a), Some(b), Some(c)] = self.bind_args::<3>(&c)?.args else {
                    return None;
                };
                let (a, b) = self.unify_pair(a, b, expected.or(Some(Scalar::F32)));
                let a = a?;
                let c = self.expr_as(c, a.ty);
                if !(matches!(a.ty, Scalar::F32 | Scalar::F64) || a.ty.is_packed()) {
                    let note = if a.ty.is_half() {
                        "`fma` applies to `f32`, `f64`, `f16x2` and `bf16x2`; pack halves with `f16x2(lo, hi)` for HFMA2"
                    } else {
                        "`fma` applies to `f32` and `f64`"
                    };
                    self.bad(name, a.ty, span, note)?;
                }
                self.value(ExprKind::Math(f, vec![a, b?, c?]), None, span)
            }
            // Not called by name: `x.lo`, `x.hi` and `f16x2(lo, hi)` are
            // lowered where they are written.
            MathFn::Pack | MathFn::Lo | MathFn::Hi => None,
        }
    }

    /// Shuffles, votes, `elect_one` and `active_mask`.
    /// Its own function (not inlined) so that nested calls pay only for
    /// the frame of the group they use.
    #[inline(never)]
    fn warp_call(
        &mut self,
        c: Call<'_>,
        op: WarpOp,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        let (entry, name, span) = (c.entry, c.entry.name, c.span);
        match op {
            WarpOp::ShflDown | WarpOp::ShflUp | WarpOp::ShflXor | WarpOp::ShflIdx => {
                let [Some(v), Some(lane), mask] = self.bind_args::<3>(&c)?.args else {
                    return None;
                };
                let v = self.expr(v, expected);
                let lane = self.expr_as(lane, Scalar::U32);
                let mask = self.mask(mask);
                let v = v?;
                // The narrow integers travel in their 32-bit registers.
                if !(matches!(v.ty, Scalar::U32 | Scalar::I32 | Scalar::F32)
                    || v.ty.is_narrow_int()
                    || v.ty.is_packed())
                {
                    self.bad(
                        name,
                        v.ty,
                        span,
                        "shuffles move values of at most 32 bits (`u32`, `i32`, `f32`, `f16x2`, `bf16x2`, and `u8`, `i8`, `u16`, `i16`)",
                    )?;
                }
                let ty = v.ty;
                let args = with_mask(vec![v, lane?], mask?);
                self.value(ExprKind::Warp(op, args), Some(ty), span)
            }
            WarpOp::Ballot | WarpOp::Any | WarpOp::All => {
                let [Some(p), mask] = self.bind_args::<2>(&c)?.args else {
                    return None;
                };
                let p = self.expr_as(p, Scalar::Bool);
                let mask = self.mask(mask);
                let ty = if op == WarpOp::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                };
                let args = with_mask(vec![p?], mask?);
                self.value(ExprKind::Warp(op, args), Some(ty), span)
            }
            WarpOp::Elect => {
                let [mask] = self.bind_args::<1>(&c)?.args;
                let args = with_mask(Vec::new(), self.mask(mask)?);
                self.value(ExprKind::Warp(op, args), Some(Scalar::Bool), span)
            }
            WarpOp::ActiveMask => {
                self.bind_args::<0>(&c)?;
                self.value(ExprKind::Warp(op, Vec::new()), Some(Scalar::U32), span)
            }
            WarpOp::Redux(_) => {
                let [Some(v), mask] = self.bind_args::<2>(&c)?.args else {
                    return None;
                };
                let target = self.needs(entry, span);
                let v = self.expr(v, expected);
                let mask = self.mask(mask);
                let v = v?;
                if !matches!(v.ty, Scalar::U32 | Scalar::I32) {
                    self.bad(
                        name,
                        v.ty,
                        span,
                        "`redux.sync` reduces `u32` and `i32` values",
                    )?;
                }
                let ty = v.ty;
                let args = with_mask(vec![v], mask?);
                target.then(|| self.value(ExprKind::Warp(op, args), Some(ty), span))?
            }
        }
    }

    fn user_call(
        &mut self,
        id: ir::FuncId,
        callee: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<CallResult> {
        let info = self.g.functions.get(id.index())?;
        self.reference(callee.span, info.ast.name.span);
        if self.const_context {
            self.error(CheckError::NotConstant {
                span,
                why: Some(format!(
                    "`{}` is a device function; constants cannot call functions",
                    callee.name
                )),
            });
            return None;
        }
        if info.params.len() != args.len() {
            self.error(CheckError::ArgCount {
                callee: callee.name.to_string(),
                expected: info.params.len().to_string(),
                found: args.len(),
                span,
                signature: Some(info.signature()),
            });
            self.quiet_args(args);
            return None;
        }
        let mut lowered = Vec::new();
        let mut ok = true;
        for (a, ty) in args.iter().zip(&info.params) {
            let Some(t) = *ty else {
                // A parameter whose type failed (already said): a variable
                // passed to it counts as used, and nothing more is said.
                if let ast::ExprKind::Name(n) = &a.kind {
                    if let Some(super::body::Binding::Local(l)) = self.lookup(&n.name) {
                        self.mark_used(l);
                    }
                }
                ok = false;
                continue;
            };
            match self.expr_as(a, t) {
                Some(v) => lowered.push(v),
                None => ok = false,
            }
        }
        self.calls.push((id, span));
        if !ok {
            return None;
        }
        Some(match info.ret {
            Some(ty) => CallResult::Value(Expr {
                kind: ExprKind::Call {
                    func: id,
                    args: lowered,
                },
                ty,
                span,
                id: self.ids.expr(),
            }),
            None if info.bad_ret => return None,
            None => CallResult::Effect(Box::new(StmtKind::Call {
                func: id,
                args: lowered,
            })),
        })
    }

    fn copy_async(&mut self, c: Call<'_>) -> Option<CallResult> {
        let (entry, span) = (c.entry, c.span);
        let [Some(dst), Some(src), Some(bytes), Some(bar)] = self.bind_args::<4>(&c)?.args else {
            return None;
        };
        let sm90 = self.needs(entry, span);
        let d = self.shared_place(dst);
        let s = self.global_place(src, false);
        let n = self.expr_as(bytes, Scalar::U32);
        let b = self.barrier_ref(bar);
        if !sm90 {
            return None;
        }
        Some(CallResult::Effect(Box::new(StmtKind::CopyAsync {
            dst: Box::new(d?),
            src: Box::new(s?),
            bytes: Box::new(n?),
            barrier: b?,
        })))
    }

    fn copy_async_store(&mut self, c: Call<'_>) -> Option<CallResult> {
        let (entry, span) = (c.entry, c.span);
        let [Some(dst), Some(src), Some(bytes)] = self.bind_args::<3>(&c)?.args else {
            return None;
        };
        let sm90 = self.needs(entry, span);
        let d = self.global_place(dst, true);
        let s = self.shared_place(src);
        let n = self.expr_as(bytes, Scalar::U32);
        if !sm90 {
            return None;
        }
        Some(CallResult::Effect(Box::new(StmtKind::CopyAsyncStore {
            dst: Box::new(d?),
            src: Box::new(s?),
            bytes: Box::new(n?),
        })))
    }

    /// The shared-memory end of a bulk copy: an element of this CTA's
    /// shared memory.
    fn shared_place(&mut self, e: &ast::Expr) -> Option<ir::Place> {
        let (p, _) = self.place(e, true)?;
        if !matches!(p.kind, ir::PlaceKind::Shared { .. }) {
            self.mismatch_text("an element of a shared array", place_kind(&p.kind), e.span);
            return None;
        }
        Some(p)
    }

    /// The global-memory end of a bulk copy.
    fn global_place(&mut self, e: &ast::Expr, write: bool) -> Option<ir::Place> {
        let (p, _) = self.place(e, write)?;
        if !matches!(p.kind, ir::PlaceKind::Global { .. }) {
            self.mismatch_text("an element of a global array", place_kind(&p.kind), e.span);
            return None;
        }
        Some(p)
    }

    /// The lane mask of a warp-synchronous built-in, a `u32`: `Some(None)`
    /// when the source gave none, `None` when it failed to check.
    fn mask(&mut self, mask: Option<&ast::Expr>) -> Option<Option<ir::Expr>> {
        match mask {
            Some(m) => self.expr_as(m, Scalar::U32).map(Some),
            None => Some(None),
        }
    }

    fn numeric(&mut self, name: &str, ty: Scalar, span: Span) -> Option<()> {
        if ty.is_int() || matches!(ty, Scalar::F32 | Scalar::F64) || ty.is_packed() {
            return Some(());
        }
        let note = if ty.is_half() || ty.is_storage_only() {
            "applies to integers, `f32`, `f64`, `f16x2` and `bf16x2`"
        } else {
            "applies to integers, `f32` and `f64`"
        };
        self.bad(name, ty, span, note)
    }

    /// `f16x2(lo, hi)`, `bf16x2(lo, hi)`: two halves of the pair's half
    /// type, or two `f32`s (untyped literals are halves).
    fn pack_call(&mut self, c: Call<'_>, ty: Scalar) -> Option<CallResult> {
        let (name, span) = (c.entry.name, c.span);
        let half = ty.half_of()?;
        let [Some(lo), Some(hi)] = self.bind_args::<2>(&c)?.args else {
            return None;
        };
        let (lo, hi) = self.unify_pair(lo, hi, Some(half));
        let (lo, hi) = (lo?, hi?);
        if lo.ty != half && lo.ty != Scalar::F32 {
            let note = format!(
                "`{name}` packs two `{half}` (as they are) or two `f32` (each rounded to `{half}`)"
            );
            self.bad(name, lo.ty, span, &note)?;
        }
        self.value(ExprKind::Math(MathFn::Pack, vec![lo, hi]), Some(ty), span)
    }

    pub(super) fn bad(&mut self, name: &str, ty: Scalar, span: Span, note: &str) -> Option<()> {
        self.error(CheckError::BadOperand {
            op: name.into(),
            ty: ty.to_string(),
            span,
            note: Some(note.into()),
        });
        None
    }

    /// The value of a built-in call: of type `ty`, or, when that is `None`,
    /// of its first argument's type.
    pub(super) fn value(
        &mut self,
        kind: ExprKind,
        ty: Option<Scalar>,
        span: Span,
    ) -> Option<CallResult> {
        let ty = match (&kind, ty) {
            (_, Some(t)) => t,
            (ExprKind::Math(_, args), None) => args.first()?.ty,
            _ => return None,
        };
        Some(CallResult::Value(Expr {
            kind,
            ty,
            span,
            id: self.ids.expr(),
        }))
    }
}

/// A warp operation's arguments: the fixed ones, then the mask if the
/// source gave one.
fn with_mask(mut args: Vec<Expr>, mask: Option<Expr>) -> Vec<Expr> {
    args.extend(mask);
    args
}

/// What a place that is the wrong end of a bulk copy is, for E0110.
pub(super) fn place_kind(p: &ir::PlaceKind) -> &'static str {
    match p {
        ir::PlaceKind::Global { .. } => "an element of global memory",
        ir::PlaceKind::Shared { .. } | ir::PlaceKind::SharedAt { .. } => {
            "an element of this CTA's shared memory"
        }
        ir::PlaceKind::Remote { .. } => "an element of another CTA's shared memory",
        ir::PlaceKind::Accum { .. } => "an element of an accumulator, which is registers",
        ir::PlaceKind::Register { .. } => "an element of a register array, which is a register",
    }
}

impl BodyChecker<'_> {
    /// `set_max_regs(n)`: `n` a constant multiple of 8 from 24 to 256
    /// (E0117, E0420), on an architecture-specific target (E0200), in a
    /// kernel with `block(...)` (E0421: the pool and the count at entry
    /// follow from its threads).
    fn set_max_regs(&mut self, c: Call<'_>) -> Option<CallResult> {
        let [Some(n)] = self.bind_args::<1>(&c)?.args else {
            return None;
        };
        let e = self.expr_as(n, Scalar::U32)?;
        let Some(v) = ir::consteval::eval_u64(&e) else {
            self.error(CheckError::NotConstant {
                span: n.span,
                why: Some(
                    "`set_max_regs` needs a constant count (PTX `setmaxnreg` takes an immediate)"
                        .into(),
                ),
            });
            return None;
        };
        let target = self.needs(c.entry, c.span);
        let valid = (u64::from(ir::REGS_MIN)..=u64::from(ir::REGS_MAX)).contains(&v)
            && v % u64::from(ir::REGS_STEP) == 0;
        if !valid {
            self.error(CheckError::BadRegisterCount { n: v, span: n.span });
        }
        let block = match &self.kernel {
            None => Err(None),
            Some(k) if k.block.is_none() => Err(Some(k.name_span)),
            Some(_) => Ok(()),
        };
        if let Err(kernel) = block {
            self.error(CheckError::RegistersWithoutBlock {
                span: c.span,
                kernel,
            });
        }
        let v = u32::try_from(v).ok()?;
        (target && valid && block.is_ok())
            .then(|| CallResult::Effect(Box::new(StmtKind::SetMaxRegs(v))))
    }
}
