//! Calls: built-in functions and device functions.

use super::body::BodyChecker;
use super::error::CheckError;
use crate::ir::{self, Expr, ExprKind, LaneMask, MathFn, Special, StmtKind, Value, WarpOp};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

/// A call either produces a value or is a statement (returns nothing).
pub enum CallResult {
    Value(Expr),
    Effect(Box<StmtKind>),
}

const BUILTIN_FUNCTIONS: &[&str] = &[
    "min",
    "max",
    "abs",
    "sqrt",
    "rsqrt",
    "exp2",
    "log2",
    "exp",
    "log",
    "sin",
    "cos",
    "fma",
    "select",
    "atomic_add",
    "atomic_sub",
    "atomic_max",
    "atomic_min",
    "atomic_exch",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_inc",
    "atomic_dec",
    "atomic_cas",
    "shfl_down",
    "shfl_up",
    "shfl_xor",
    "shfl_idx",
    "ballot",
    "any",
    "all",
    "elect_one",
    "active_mask",
    "lane_mask_eq",
    "lane_mask_lt",
    "lane_mask_le",
    "lane_mask_gt",
    "lane_mask_ge",
    "sync_warp",
    "sync_threads",
    "cluster_sync",
    "fence",
    "fence_proxy_async",
    "copy_async",
    "copy_async_store",
    "copy_async_commit",
    "copy_async_wait",
    "remote",
    "load2",
    "load4",
    "store2",
    "store4",
];

pub fn is_builtin_function(name: &str) -> bool {
    BUILTIN_FUNCTIONS.contains(&name)
}

/// Built-ins a constant expression may use (they fold).
const CONST_FUNCTIONS: &[&str] = &["min", "max", "abs", "fma", "select"];

impl BodyChecker<'_> {
    pub fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        span: Span,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        let user = self.g.function_ids.get(&*callee.name).copied();
        if user.is_none() && is_builtin_function(&callee.name) && !self.const_context {
            if let Some(op) = super::atomics::atomic_op(&callee.name) {
                return self.atomic_call(op, args, named, span);
            }
            if &*callee.name == "fence" {
                return self.fence_call(args, named, span);
            }
            if let Some((n, load)) = super::vector::vector_op(&callee.name) {
                self.no_named_args(&callee.name, named);
                if load {
                    self.vector_as_value(&callee.name, n, args, span);
                    return None;
                }
                return self.store_vector_call(&callee.name, n, args, span);
            }
        }
        self.no_named_args(&callee.name, named);
        if let Some(id) = user {
            return self.user_call(id, callee, args, span);
        }
        self.builtin_call(callee, args, span, expected)
    }

    /// A call of anything but a device function. Kept apart from [`call`]
    /// (and not inlined into it) because its frame is large: calls of device
    /// functions nest through `call` without paying for it.
    ///
    /// [`call`]: BodyChecker::call
    #[inline(never)]
    fn builtin_call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        let name = &*callee.name;
        if !is_builtin_function(name) {
            let mut names: Vec<&str> = BUILTIN_FUNCTIONS.to_vec();
            names.extend(self.g.function_ids.keys().map(String::as_str));
            let similar = super::body::similar(name, names);
            for a in args {
                let _ = self.expr(a, None);
            }
            if self.lookup(name).is_some()
                || self.g.consts.contains_key(name)
                || super::exprs::BUILTIN_VALUES.contains(&name)
            {
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
            return None;
        }
        if self.const_context && !CONST_FUNCTIONS.contains(&name) {
            self.error(CheckError::NotConstant {
                span,
                why: Some(format!("`{name}` cannot be evaluated at compile time")),
            });
            return None;
        }
        match name {
            "min" | "max" | "abs" | "sqrt" | "rsqrt" | "exp2" | "log2" | "exp" | "log" | "sin"
            | "cos" | "fma" | "select" => self.math_call(name, args, span, expected),
            "shfl_down" | "shfl_up" | "shfl_xor" | "shfl_idx" | "ballot" | "any" | "all"
            | "elect_one" | "active_mask" | "sync_warp" => {
                self.warp_call(name, args, span, expected)
            }
            _ if name.starts_with("lane_mask_") => {
                let m = LaneMask::ALL
                    .into_iter()
                    .find(|m| name.strip_prefix("lane_mask_") == Some(m.name()))?;
                self.arity::<0>(name, args, span, "lane_mask_lt() -> u32")?;
                self.value(
                    ExprKind::Special(Special::LaneMask(m)),
                    Some(Scalar::U32),
                    span,
                )
            }
            "sync_threads" => {
                self.arity::<0>(name, args, span, "sync_threads()")?;
                Some(CallResult::Effect(Box::new(StmtKind::SyncThreads)))
            }
            "cluster_sync" => {
                self.arity::<0>(name, args, span, "cluster_sync()")?;
                (self.require_sm90("`cluster_sync()`", span)
                    && self.require_cluster("`cluster_sync()`", span))
                .then_some(CallResult::Effect(Box::new(StmtKind::ClusterSync)))
            }
            "fence_proxy_async" => {
                self.arity::<0>(name, args, span, "fence_proxy_async()")?;
                self.require_sm90("`fence_proxy_async()`", span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::FenceProxyAsync)))
            }
            "copy_async" => self.copy_async(args, span),
            "copy_async_store" => self.copy_async_store(args, span),
            "copy_async_commit" => {
                self.arity::<0>(name, args, span, "copy_async_commit()")?;
                self.require_sm90("`copy_async_commit()`", span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::CopyAsyncCommit)))
            }
            "copy_async_wait" => {
                let [n] = self.arity::<1>(name, args, span, "copy_async_wait(n: u32)")?;
                let e = self.expr_as(n, Scalar::U32)?;
                let Some(v) = ir::consteval::eval_u64(&e) else {
                    self.error(CheckError::NotConstant { span: n.span, why: Some("`copy_async_wait` needs a constant count (PTX `wait_group` takes an immediate)".into()) });
                    return None;
                };
                let v = u32::try_from(v).ok()?;
                self.require_sm90("`copy_async_wait()`", span)
                    .then_some(CallResult::Effect(Box::new(StmtKind::CopyAsyncWait(v))))
            }
            // `remote(array, rank)` on its own, not indexed.
            _ => {
                self.error(CheckError::IndexCount {
                    name: "remote(...)".into(),
                    dims: 1,
                    found: 0,
                    span,
                    decl: None,
                });
                None
            }
        }
    }

    /// `min`, `max`, `abs`, the float functions, `fma`, `select`.
    /// Its own function (not inlined) so that nested calls pay only for
    /// the frame of the group they use.
    #[inline(never)]
    fn math_call(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        match name {
            "min" | "max" => {
                let [a, b] = self.arity::<2>(name, args, span, "min(a: T, b: T) -> T")?;
                let (a, b) = self.unify_pair(a, b, expected);
                let (a, b) = (a?, b?);
                self.numeric(name, a.ty, span)?;
                let f = if name == "min" {
                    MathFn::Min
                } else {
                    MathFn::Max
                };
                self.value(ExprKind::Math(f, vec![a, b]), None, span)
            }
            "abs" => {
                let [a] = self.arity::<1>(name, args, span, "abs(x: T) -> T")?;
                let a = self.expr(a, expected)?;
                if !(a.ty.is_signed_int() || a.ty == Scalar::F32 || a.ty == Scalar::F64) {
                    self.bad(
                        name,
                        a.ty,
                        span,
                        "`abs` applies to signed integers, `f32` and `f64`",
                    )?;
                }
                self.value(ExprKind::Math(MathFn::Abs, vec![a]), None, span)
            }
            "sqrt" | "rsqrt" => {
                let [a] = self.arity::<1>(name, args, span, "sqrt(x: f32) -> f32")?;
                let a = self.expr(a, expected.filter(|t| t.is_float()).or(Some(Scalar::F32)))?;
                if !matches!(a.ty, Scalar::F32 | Scalar::F64) {
                    self.bad(
                        name,
                        a.ty,
                        span,
                        "square roots apply to `f32` and `f64`; convert halves with `as f32`",
                    )?;
                }
                let f = if name == "sqrt" {
                    MathFn::Sqrt
                } else {
                    MathFn::Rsqrt
                };
                self.value(ExprKind::Math(f, vec![a]), None, span)
            }
            "exp2" | "log2" | "exp" | "log" | "sin" | "cos" => {
                let [a] = self.arity::<1>(name, args, span, "exp(x: f32) -> f32")?;
                let a = self.expr(a, Some(Scalar::F32))?;
                if a.ty != Scalar::F32 {
                    self.bad(name, a.ty, span, "the hardware approximations (`ex2.approx`, `lg2.approx`, `sin.approx`, ...) exist only for `f32`")?;
                }
                let f = match name {
                    "exp2" => MathFn::Exp2,
                    "log2" => MathFn::Log2,
                    "exp" => MathFn::Exp,
                    "log" => MathFn::Log,
                    "sin" => MathFn::Sin,
                    _ => MathFn::Cos,
                };
                self.value(ExprKind::Math(f, vec![a]), None, span)
            }
            "fma" => {
                let [a, b, c] = self.arity::<3>(name, args, span, "fma(a: T, b: T, c: T) -> T")?;
                let (a, b) = self.unify_pair(a, b, expected.or(Some(Scalar::F32)));
                let a = a?;
                let c = self.expr_as(c, a.ty);
                if !matches!(a.ty, Scalar::F32 | Scalar::F64) {
                    self.bad(name, a.ty, span, "`fma` applies to `f32` and `f64`")?;
                }
                self.value(ExprKind::Math(MathFn::Fma, vec![a, b?, c?]), None, span)
            }
            "select" => {
                let [c, a, b] =
                    self.arity::<3>(name, args, span, "select(cond: bool, a: T, b: T) -> T")?;
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
            _ => None,
        }
    }

    /// Shuffles and votes.
    /// Its own function (not inlined) so that nested calls pay only for
    /// the frame of the group they use.
    #[inline(never)]
    fn warp_call(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        expected: Option<Scalar>,
    ) -> Option<CallResult> {
        match name {
            "shfl_down" | "shfl_up" | "shfl_xor" | "shfl_idx" => {
                let ([v, lane], mask) = self.masked::<2>(
                    name,
                    args,
                    span,
                    "shfl_down(value: T, delta: u32, mask: u32 = 0xFFFF_FFFF) -> T",
                )?;
                let v = self.expr(v, expected);
                let lane = self.expr_as(lane, Scalar::U32);
                let mask = self.mask(mask);
                let v = v?;
                // The narrow integers travel in their 32-bit registers.
                if !(matches!(v.ty, Scalar::U32 | Scalar::I32 | Scalar::F32)
                    || v.ty.is_narrow_int())
                {
                    self.bad(
                        name,
                        v.ty,
                        span,
                        "shuffles move values of at most 32 bits (`u32`, `i32`, `f32`, and `u8`, `i8`, `u16`, `i16`)",
                    )?;
                }
                let op = match name {
                    "shfl_down" => WarpOp::ShflDown,
                    "shfl_up" => WarpOp::ShflUp,
                    "shfl_xor" => WarpOp::ShflXor,
                    _ => WarpOp::ShflIdx,
                };
                let ty = v.ty;
                let args = with_mask(vec![v, lane?], mask?);
                self.value(ExprKind::Warp(op, args), Some(ty), span)
            }
            "ballot" | "any" | "all" => {
                let ([p], mask) = self.masked::<1>(
                    name,
                    args,
                    span,
                    "ballot(pred: bool, mask: u32 = 0xFFFF_FFFF) -> u32",
                )?;
                let p = self.expr_as(p, Scalar::Bool);
                let mask = self.mask(mask);
                let (op, ty) = match name {
                    "ballot" => (WarpOp::Ballot, Scalar::U32),
                    "any" => (WarpOp::Any, Scalar::Bool),
                    _ => (WarpOp::All, Scalar::Bool),
                };
                let args = with_mask(vec![p?], mask?);
                self.value(ExprKind::Warp(op, args), Some(ty), span)
            }
            "elect_one" => {
                let ([], mask) = self.masked::<0>(
                    name,
                    args,
                    span,
                    "elect_one(mask: u32 = 0xFFFF_FFFF) -> bool",
                )?;
                let args = with_mask(Vec::new(), self.mask(mask)?);
                self.value(
                    ExprKind::Warp(WarpOp::Elect, args),
                    Some(Scalar::Bool),
                    span,
                )
            }
            "active_mask" => {
                self.arity::<0>(name, args, span, "active_mask() -> u32")?;
                self.value(
                    ExprKind::Warp(WarpOp::ActiveMask, Vec::new()),
                    Some(Scalar::U32),
                    span,
                )
            }
            "sync_warp" => {
                let ([], mask) =
                    self.masked::<0>(name, args, span, "sync_warp(mask: u32 = 0xFFFF_FFFF)")?;
                let mask = match self.mask(mask)? {
                    Some(m) => m,
                    None => Expr {
                        kind: ExprKind::Const(Value::Int(i128::from(u32::MAX))),
                        ty: Scalar::U32,
                        span,
                        id: self.ids.expr(),
                    },
                };
                Some(CallResult::Effect(Box::new(StmtKind::SyncWarp(mask))))
            }
            _ => None,
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
            for a in args {
                let _ = self.expr(a, None);
            }
            return None;
        }
        let mut lowered = Vec::new();
        let mut ok = true;
        for (a, ty) in args.iter().zip(&info.params) {
            match ty.and_then(|t| self.expr_as(a, t)) {
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

    fn copy_async(&mut self, args: &[ast::Expr], span: Span) -> Option<CallResult> {
        let [dst, src, bytes, bar] = self.arity::<4>(
            "copy_async",
            args,
            span,
            "copy_async(dst: shared element, src: global element, bytes: u32, barrier)",
        )?;
        let sm90 = self.require_sm90("the bulk copy `copy_async`", span);
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

    fn copy_async_store(&mut self, args: &[ast::Expr], span: Span) -> Option<CallResult> {
        let [dst, src, bytes] = self.arity::<3>(
            "copy_async_store",
            args,
            span,
            "copy_async_store(dst: global element, src: shared element, bytes: u32)",
        )?;
        let sm90 = self.require_sm90("the bulk copy `copy_async_store`", span);
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

    fn shared_place(&mut self, e: &ast::Expr) -> Option<ir::Place> {
        let (p, _) = self.place(e, true)?;
        if !matches!(p.kind, ir::PlaceKind::Shared { .. }) {
            self.mismatch_text(
                "an element of a shared array",
                "an element of global memory",
                e.span,
            );
            return None;
        }
        Some(p)
    }

    fn global_place(&mut self, e: &ast::Expr, write: bool) -> Option<ir::Place> {
        let (p, _) = self.place(e, write)?;
        if !matches!(p.kind, ir::PlaceKind::Global { .. }) {
            self.mismatch_text(
                "an element of a global array",
                "an element of shared memory",
                e.span,
            );
            return None;
        }
        Some(p)
    }

    /// Checks the argument count (E0111) and returns the arguments.
    pub fn arity<'e, const N: usize>(
        &mut self,
        name: &str,
        args: &'e [ast::Expr],
        span: Span,
        sig: &str,
    ) -> Option<[&'e ast::Expr; N]> {
        let refs: Vec<&ast::Expr> = args.iter().collect();
        match <[&ast::Expr; N]>::try_from(refs) {
            Ok(a) => Some(a),
            Err(_) => self.wrong_arg_count(name, args, span, N.to_string(), sig),
        }
    }

    /// E0111 for a call of `callee` with `args`, which are still checked
    /// for their own errors; always `None`, for the caller to return.
    pub fn wrong_arg_count<T>(
        &mut self,
        callee: &str,
        args: &[ast::Expr],
        span: Span,
        expected: String,
        signature: &str,
    ) -> Option<T> {
        for a in args {
            let _ = self.expr(a, None);
        }
        self.error(CheckError::ArgCount {
            callee: callee.into(),
            expected,
            found: args.len(),
            span,
            signature: Some(signature.into()),
        });
        None
    }

    /// [`Self::arity`] for a warp-synchronous built-in: its `N` arguments,
    /// then an optional lane mask.
    fn masked<'e, const N: usize>(
        &mut self,
        name: &str,
        args: &'e [ast::Expr],
        span: Span,
        sig: &str,
    ) -> Option<([&'e ast::Expr; N], Option<&'e ast::Expr>)> {
        let (fixed, mask) = match args.split_at_checked(N) {
            Some((f, [m])) => (f, Some(m)),
            Some((f, [])) => (f, None),
            _ => {
                let expected = format!("{N} or {}", N + 1);
                return self.wrong_arg_count(name, args, span, expected, sig);
            }
        };
        let refs: Vec<&ast::Expr> = fixed.iter().collect();
        Some((<[&ast::Expr; N]>::try_from(refs).ok()?, mask))
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
        if ty.is_int() || matches!(ty, Scalar::F32 | Scalar::F64) {
            return Some(());
        }
        self.bad(name, ty, span, "applies to integers, `f32` and `f64`")
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
