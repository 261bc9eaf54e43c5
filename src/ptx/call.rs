//! Calls of device functions: `.param` passing and `call.uni`.

use super::suffix;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{Expr, FuncId};
use crate::types::Scalar;

impl Writer<'_> {
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
