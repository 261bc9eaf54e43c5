//! Calls of device functions: `.param` passing and `call.uni`.

use super::error::Result;
use super::suffix;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{Expr, FuncId};
use crate::types::Scalar;

impl Writer<'_> {
    /// Calls device function `func` (`.param` passing, `call.uni`); the
    /// result, if it has one. `bool` travels as a `.b32` 0/1.
    pub(super) fn call(&mut self, func: FuncId, args: &[Expr]) -> Result<Option<Operand>> {
        let module = self.module;
        let (Some(f), Some(name)) = (
            module.functions.get(func.index()),
            self.names.funcs.get(func.index()).cloned(),
        ) else {
            return Err(self.invalid(format!("function {} does not exist", func.0)));
        };
        let params = f.body.locals.get(..f.params as usize).unwrap_or(&[]);
        if params.len() != args.len() || params.len() != f.params as usize {
            return Err(self.invalid(format!(
                "`{}` takes {} arguments, {} given",
                f.name,
                f.params,
                args.len()
            )));
        }
        let vals = self.operand_list(args)?;
        let mut passed = Vec::with_capacity(vals.len());
        for ((v, a), p) in vals.into_iter().zip(args).zip(params) {
            let v = self.convert(v, a.ty, p.ty)?;
            passed.push((self.param_bits(v, p.ty), p.ty));
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
        Ok(result)
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
