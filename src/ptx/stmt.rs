//! Statements and structured control flow: `let`/assignment, stores,
//! `if`, `while`, `for`, `break`/`continue`/`return`, and the statement forms
//! of calls, fences and barrier operations.

use super::error::Result;
use super::suffix;
use super::writer::{emit, Class, Exit, LoopLabels, Operand, Reg, Writer};
use crate::ir::consteval;
use crate::ir::{Block, Expr, ExprKind, LocalId, Stmt, StmtClass, StmtId, StmtKind, Value};
use crate::types::Scalar;

impl Writer<'_> {
    pub(super) fn block(&mut self, b: &Block) -> Result<()> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        let outer = self.at(s.span);
        self.stmt_kind(s)?;
        self.restore(outer);
        Ok(())
    }

    fn stmt_kind(&mut self, s: &Stmt) -> Result<()> {
        match &s.kind {
            StmtKind::Let { local, value } | StmtKind::Assign { local, value } => {
                self.assign(*local, value)
            }
            StmtKind::Store { place, op, value } => self.store(place, *op, value),
            StmtKind::LetArray { .. } => {
                Err(self.invalid("a register array that the optimiser did not make registers"))
            }
            StmtKind::LoadVector {
                locals,
                place,
                matrix: None,
            } => self.load_vector(locals, place),
            StmtKind::StoreVector {
                place,
                values,
                matrix: None,
            } => self.store_vector(place, values),
            StmtKind::LoadVector {
                locals,
                place,
                matrix: Some(m),
            } => self.load_matrix(locals, place, *m),
            StmtKind::StoreVector {
                place,
                values,
                matrix: Some(m),
            } => self.store_matrix(place, values, *m),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_stmt(cond, then_block, else_block.as_ref()),
            StmtKind::While { cond, body } => self.while_stmt(s.id, cond, body),
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => self.for_stmt(*var, [start, end, step], body),
            StmtKind::Break | StmtKind::Continue => match self.loops.last().copied() {
                Some(l) => {
                    let target = if matches!(s.kind, StmtKind::Break) {
                        l.brk
                    } else {
                        l.cont
                    };
                    emit!(self, "bra {};", target);
                    Ok(())
                }
                None => Err(self.invalid("`break`/`continue` outside a loop")),
            },
            StmtKind::Return(value) => self.return_stmt(value.as_ref()),
            StmtKind::Expr(e) => self.expr(e).map(drop),
            StmtKind::Call { func, args } => self.call(*func, args).map(drop),
            StmtKind::SyncThreads => {
                emit!(self, "bar.sync 0;");
                Ok(())
            }
            StmtKind::SyncWarp(mask) => {
                let m = self.expr_u32(mask)?;
                emit!(self, "bar.warp.sync {};", m);
                Ok(())
            }
            StmtKind::ClusterSync => self.cluster_sync(s.id),
            StmtKind::FenceProxyAsync => self.fence_proxy_async(),
            StmtKind::Fence(sem) => self.fence(*sem),
            StmtKind::Barrier(op) => self.barrier_op(op),
            StmtKind::NamedBarrier(op) => self.named_barrier(s.id, op),
            StmtKind::CopyAsync {
                dst,
                src,
                bytes,
                barrier,
            } => self.copy_async(dst, src, bytes, barrier),
            StmtKind::CopyAsyncStore { dst, src, bytes } => self.copy_async_store(dst, src, bytes),
            StmtKind::TensorCopy(c) => self.tensor_copy(c),
            StmtKind::CopyAsyncCommit => self.copy_async_commit(),
            StmtKind::CopyAsyncWait(n) => self.copy_async_wait(*n),
            StmtKind::SetMaxRegs(n) => self.set_max_regs(s.id, *n),
            StmtKind::Wgmma(w) => self.wgmma(s.id, w),
            StmtKind::Fragment(f) => self.fragment(f),
            StmtKind::WgmmaCommit => self.wgmma_commit(),
            StmtKind::WgmmaWait(n) => self.wgmma_wait(*n),
            // The optimiser unrolls every one before the writer runs.
            StmtKind::ForList { .. } => {
                Err(self.invalid("a loop over a constant list that was not unrolled"))
            }
            // Only a module with errors holds one, and it is never written.
            StmtKind::Poisoned { .. } => Err(self.invalid("a statement that failed to check")),
        }
    }

    fn assign(&mut self, local: LocalId, value: &Expr) -> Result<()> {
        let ty = self.local_type(local)?;
        let v = self.expr(value)?;
        let v = self.convert(v, value.ty, ty)?;
        let r = self.local(local)?;
        self.mov(r, &v, ty);
        Ok(())
    }

    fn if_stmt(
        &mut self,
        cond: &Expr,
        then_block: &Block,
        else_block: Option<&Block>,
    ) -> Result<()> {
        if let ExprKind::Const(Value::Bool(c)) = cond.kind {
            return match (c, else_block) {
                (true, _) => self.block(then_block),
                (false, Some(b)) => self.block(b),
                (false, None) => Ok(()),
            };
        }
        let p = self.expr_reg(cond)?;
        let else_l = self.label();
        emit!(self, "@!{} bra {};", p, else_l);
        self.block(then_block)?;
        match else_block {
            Some(b) => {
                let end = self.label();
                if !ends_in_jump(then_block) {
                    emit!(self, "bra {};", end);
                }
                self.place_label(else_l);
                self.block(b)?;
                self.place_label(end);
            }
            None => self.place_label(else_l),
        }
        Ok(())
    }

    fn while_stmt(&mut self, id: StmtId, cond: &Expr, body: &Block) -> Result<()> {
        let always = match cond.kind {
            ExprKind::Const(Value::Bool(false)) => return Ok(()),
            ExprKind::Const(Value::Bool(true)) => true,
            _ => false,
        };
        if !always && !self.copying_condition && self.info.usage.returning_whiles.contains(&id) {
            return self.guarded_while(cond, body);
        }
        let (head, end) = (self.label(), self.label());
        self.place_label(head);
        if !always {
            let p = self.expr_reg(cond)?;
            emit!(self, "@!{} bra {};", p, end);
        }
        self.loop_body(
            body,
            LoopLabels {
                cont: head,
                brk: end,
            },
        )?;
        emit!(self, "bra {};", head);
        self.place_label(end);
        Ok(())
    }

    /// A `while` loop that a `return` leaves, as a guarded do-while loop
    /// (the shape of [`Writer::for_stmt`]): the condition is written twice,
    /// before the loop and at its end. ptxas 13.5 (-O1 and up, sm_80 and
    /// sm_90) crashes with SIGSEGV on the plain shape, a test at the head
    /// and a jump back to it, when it proves the condition false on entry
    /// (`w < 18 && false`, a local holding `false`, `(n * 0) == 1`) and the
    /// body holds a `return` and a branch or a loop; with the guard, a loop
    /// that never runs is skipped whole, as an `if` is (docs/architecture.md,
    /// "ptxas workarounds"; tests/fixtures/ptxas-crash).
    fn guarded_while(&mut self, cond: &Expr, body: &Block) -> Result<()> {
        let p = self.condition_copy(cond)?;
        self.do_while(p, body, |w| w.condition_copy(cond))
    }

    /// A guarded do-while loop, the shape of `for` and of the `while` loops
    /// a `return` leaves: `guard` false skips the loop; after the body (and
    /// at each `continue`) `again` computes whether it runs once more.
    fn do_while(
        &mut self,
        guard: Reg,
        body: &Block,
        again: impl FnOnce(&mut Self) -> Result<Reg>,
    ) -> Result<()> {
        let (body_l, cont_l, end_l) = (self.label(), self.label(), self.label());
        emit!(self, "@!{} bra {};", guard, end_l);
        self.place_label(body_l);
        self.loop_body(
            body,
            LoopLabels {
                cont: cont_l,
                brk: end_l,
            },
        )?;
        self.place_label(cont_l);
        let q = again(self)?;
        emit!(self, "@{} bra {};", q, body_l);
        self.place_label(end_l);
        Ok(())
    }

    /// One of the two copies of a guarded loop's condition. The loops in it
    /// (in the blocks of an `if` expression) keep the plain shape, so copies
    /// never nest: the output stays within twice the plain one, where
    /// nested copies would double at each level.
    fn condition_copy(&mut self, cond: &Expr) -> Result<Reg> {
        let outer = std::mem::replace(&mut self.copying_condition, true);
        let p = self.expr_reg(cond);
        self.copying_condition = outer;
        p
    }

    /// `for var in start..end step step`, bounds evaluated once, as a guarded
    /// do-while loop. The increment never wraps past `end`: the loop goes on
    /// while `var + step < end` *without* wrap-around. Where that may wrap
    /// (unless both bounds are constants that rule it out), an unsigned loop
    /// compares the old `var` with a limit computed once before the loop,
    /// `lim = max(end, step) - step` (`var + step < end` exactly when `var <
    /// lim`), which costs the loop no more than a plain `var < end` after
    /// the add; a signed one tests `end - var > step`.
    fn for_stmt(
        &mut self,
        var: LocalId,
        [start, end, step]: [&Expr; 3],
        body: &Block,
    ) -> Result<()> {
        let ty = self.local_type(var)?;
        let [s, e, st] = self.operands([start, end, step])?;
        // A bound read from a local the body may assign is copied.
        let e = self.convert(e, end.ty, ty)?;
        let e = self.copy_if_local(e, ty);
        let st = self.convert(st, step.ty, ty)?;
        let st = self.copy_if_local(st, ty);
        let s = self.convert(s, start.ty, ty)?;
        let v = self.local(var)?;
        self.mov(v, &s, ty);
        let t = suffix::arith(ty);
        // A narrow loop variable lives in a 32-bit register, where
        // `var + step` cannot wrap (both are at most 16 bits): the test
        // after the add is exact, and the out-of-range value it may leave
        // is never read (the variable is the loop's own).
        let exit = if !ty.is_int() || ty.is_narrow_int() || !may_overflow(end, step, ty) {
            LoopTest::After
        } else if matches!(ty, Scalar::I32 | Scalar::I64) {
            LoopTest::Left
        } else {
            LoopTest::Limit(self.limit(&e, &st, ty))
        };
        let p = self.reg(Class::Pred);
        emit!(self, "setp.lt.{} {}, {}, {};", t, p, v, e);
        self.do_while(p, body, |w| {
            let q = w.reg(Class::Pred);
            match exit {
                LoopTest::After => {
                    emit!(w, "add.{} {}, {}, {};", t, v, v, st);
                    emit!(w, "setp.lt.{} {}, {}, {};", t, q, v, e);
                }
                LoopTest::Limit(lim) => {
                    emit!(w, "setp.lt.{} {}, {}, {};", t, q, v, lim);
                    emit!(w, "add.{} {}, {}, {};", t, v, v, st);
                }
                LoopTest::Left => {
                    // `var < end` holds here, so `end - var` is exact as unsigned.
                    let u = if ty.bits() == 64 { "u64" } else { "u32" };
                    let left = w.reg_for(ty);
                    emit!(w, "sub.{} {}, {}, {};", t, left, e, v);
                    emit!(w, "setp.gt.{} {}, {}, {};", u, q, left, st);
                    emit!(w, "add.{} {}, {}, {};", t, v, v, st);
                }
            }
            Ok(q)
        })
    }

    /// `max(end, step) - step` for an unsigned loop: the largest `var + 1`
    /// for which `var + step < end` holds without wrap-around (0: none).
    fn limit(&mut self, e: &Operand, st: &Operand, ty: Scalar) -> Operand {
        let t = suffix::arith(ty);
        // `max` wants a register first; it is symmetric.
        let (a, b) = match (e, st) {
            (Operand::Imm(_), Operand::Reg(_)) => (st, e),
            _ => (e, st),
        };
        let m = self.reg_for(ty);
        emit!(self, "max.{} {}, {}, {};", t, m, a, b);
        let lim = self.reg_for(ty);
        emit!(self, "sub.{} {}, {}, {};", t, lim, m, st);
        Operand::Reg(lim)
    }

    /// `v`, or a copy of it when it sits in a local's register (which the
    /// loop's body may assign).
    fn copy_if_local(&mut self, v: Operand, ty: Scalar) -> Operand {
        match v {
            Operand::Reg(r) if self.is_local_reg(r) => {
                let c = self.reg(r.class);
                emit!(self, "mov.{} {}, {};", suffix::mov(ty), c, r);
                Operand::Reg(c)
            }
            other => other,
        }
    }

    fn loop_body(&mut self, body: &Block, labels: LoopLabels) -> Result<()> {
        self.loops.push(labels);
        let r = self.block(body);
        self.loops.pop();
        r
    }

    fn return_stmt(&mut self, value: Option<&Expr>) -> Result<()> {
        match (self.exit, value) {
            (Exit::Func(Some(ty)), Some(e)) => {
                let v = self.expr(e)?;
                let v = self.convert(v, e.ty, ty)?;
                let v = self.param_bits(v, ty);
                emit!(self, "st.param.{} [$r], {};", suffix::func_param(ty), v);
                emit!(self, "ret;");
            }
            (Exit::Func(Some(_)), None) => {
                return Err(self.invalid("a function with a result returns none"))
            }
            (Exit::Func(None) | Exit::Ret | Exit::Cluster(_), Some(_)) => {
                return Err(self.invalid("a `return` with a value where none is returned"))
            }
            (Exit::Func(None) | Exit::Ret, None) => emit!(self, "ret;"),
            (Exit::Cluster(l), None) => emit!(self, "bra {};", l),
        }
        Ok(())
    }
}

/// How a `for` loop decides to go on (see `Writer::for_stmt`).
enum LoopTest {
    /// `var += step; var < end`: no wrap-around possible.
    After,
    /// `var < lim; var += step`, `lim` computed before the loop.
    Limit(Operand),
    /// `end - var > step; var += step` (signed loops).
    Left,
}

/// True when `var += step` may wrap for some `var < end`: unless both are
/// constants with `end - 1 + step` in range (`for j in 0..16` never wraps).
fn may_overflow(end: &Expr, step: &Expr, ty: Scalar) -> bool {
    let (Some(e), Some(s)) = (consteval::eval_int(end), consteval::eval_int(step)) else {
        return !matches!(consteval::eval_int(step), Some(1));
    };
    let Some((_, max)) = ty.int_range() else {
        return true;
    };
    s <= 0 || e - 1 + s > max
}

/// A block whose last statement leaves it (no fall-through jump needed).
fn ends_in_jump(b: &Block) -> bool {
    b.stmts
        .last()
        .is_some_and(|s| s.kind.class() == StmtClass::Jump)
}
