//! Calls and CTA/cluster/warp barriers.

use super::inst::{base_inst, invalid, unsup, unsupported, R};
use super::mods::Mods;
use super::ops::*;
use super::scope::Binding;
use super::Builder;
use crate::sim::ptx::ast::Operand;

pub fn call(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    m.take("uni");
    m.finish().map_err(unsup)?;
    let (rets, name, args) = match ops {
        [Operand::List(r), Operand::Name(f), Operand::List(a)] => (r.as_slice(), f, a.as_slice()),
        [Operand::List(r), Operand::Name(f)] => (r.as_slice(), f, &[][..]),
        [Operand::Name(f), Operand::List(a)] => (&[][..], f, a.as_slice()),
        [Operand::Name(f)] => (&[][..], f, &[][..]),
        _ => return unsupported("this form of `call` (prototypes and indirect calls)"),
    };
    let Some(Binding::Func(func)) = b.scopes.lookup(name) else {
        return invalid(format!("unknown function `{name}`"));
    };
    let formals = b.formals.get(func as usize).cloned().unwrap_or_default();
    let extern_func = b
        .module
        .functions
        .get(func as usize)
        .is_some_and(|f| f.body.is_none());
    if extern_func && matches!(name.as_str(), "vprintf" | "__assertfail") {
        return runtime_call(b, name, &formals, rets, args);
    }
    if extern_func {
        return unsupported(format!(
            "a call of `{name}`, which has no body in this module"
        ));
    }
    if formals.params.len() != args.len() || formals.rets.len() != rets.len() {
        return invalid(format!("wrong number of arguments for `{name}`"));
    }
    let mut info = CallInfo {
        func,
        args: Vec::new(),
        rets: Vec::new(),
    };
    for (arg, (off, size)) in args.iter().zip(&formals.params) {
        let Operand::Name(n) = arg else {
            return unsupported("call arguments other than `.param` variables");
        };
        let Some(Binding::FuncParam(at)) = b.scopes.lookup(n) else {
            return unsupported("call arguments other than `.param` variables");
        };
        info.args.push((at, *off, *size));
    }
    for (ret, (off, size)) in rets.iter().zip(&formals.rets) {
        let Operand::Name(n) = ret else {
            return unsupported("call results other than `.param` variables");
        };
        let Some(Binding::FuncParam(at)) = b.scopes.lookup(n) else {
            return unsupported("call results other than `.param` variables");
        };
        info.rets.push((*off, at, *size));
    }
    let mut inst = base_inst(Op::Call);
    inst.aux = b.calls.len() as u32;
    b.calls.push(info);
    Ok(inst)
}

pub fn barrier(b: &mut Builder, m: &mut Mods, ops: &[Operand]) -> R<Inst> {
    if m.take("cluster") {
        m.take("aligned");
        let arrive = m.take("arrive");
        let wait = m.take("wait");
        m.take_any(&["relaxed", "release", "acquire"]);
        m.take("aligned");
        m.finish().map_err(unsup)?;
        return Ok(match (arrive, wait) {
            (true, false) => b.sync(SyncOp::ClusterArrive),
            (false, true) => b.sync(SyncOp::ClusterWait),
            _ => return invalid("`barrier.cluster` needs `.arrive` or `.wait`"),
        });
    }
    if m.take("warp") {
        m.take("sync");
        m.finish().map_err(unsup)?;
        let mask = b.src(ops.first(), Ty::U32)?;
        return Ok(b.sync(SyncOp::BarWarpSync { mask }));
    }
    m.take("cta");
    m.take("aligned");
    let kind = m.take_any(&["sync", "arrive", "red"]);
    m.take("aligned");
    m.finish().map_err(unsup)?;
    let wait = match kind {
        Some("sync") => true,
        Some("arrive") => false,
        Some(_) => return unsupported("barrier reductions (`bar.red`)"),
        None => return invalid("missing `.sync`/`.arrive`"),
    };
    // ptxas's checks of immediates: barriers 0..15, whole warps.
    if let Some(Operand::Imm(crate::sim::ptx::ast::Imm::Int(n))) = ops.first() {
        if *n > 15 {
            return invalid(format!(
                "barrier number {n} out of range, expected to be in range [0..15]"
            ));
        }
    }
    if let Some(Operand::Imm(crate::sim::ptx::ast::Imm::Int(n))) = ops.get(1) {
        if n % 32 != 0 {
            return invalid(format!(
                "{n} threads take part in the barrier: the number must be a multiple of the warp size (32)"
            ));
        }
    }
    let id = b.src(ops.first(), Ty::U32)?;
    let count = match ops.get(1) {
        Some(op) => Some(b.src(Some(op), Ty::U32)?),
        None if !wait => return invalid("`bar.arrive` needs a thread count"),
        None => None,
    };
    Ok(b.sync(SyncOp::Bar { id, count, wait }))
}

/// The `.param` variable a call passes: its offset in the thread's
/// parameter area.
fn param_operand(b: &Builder, op: &Operand) -> R<u32> {
    let Operand::Name(n) = op else {
        return unsupported("call arguments other than `.param` variables");
    };
    match b.scopes.lookup(n) {
        Some(Binding::FuncParam(at)) => Ok(at),
        _ => unsupported("call arguments other than `.param` variables"),
    }
}

/// A call of the CUDA runtime's device functions the simulator provides:
/// `vprintf(.b64 format, .b64 args) -> .b32` and
/// `__assertfail(.b64 message, .b64 file, .b32 line, .b64 function,
/// .b64 charSize)`, checked against their declared parameters.
fn runtime_call(
    b: &mut Builder,
    name: &str,
    formals: &super::Formals,
    rets: &[Operand],
    args: &[Operand],
) -> R<Inst> {
    let sizes: Vec<u32> = formals.params.iter().map(|&(_, size)| size).collect();
    let ret_sizes: Vec<u32> = formals.rets.iter().map(|&(_, size)| size).collect();
    let op = match name {
        "vprintf" => {
            if sizes != [8, 8] || !matches!(ret_sizes[..], [] | [4]) {
                return invalid(
                    "`vprintf` is declared `(.param .b32) vprintf(.param .b64, .param .b64)`",
                );
            }
            let [fmt, list] = args else {
                return invalid("`vprintf` takes 2 arguments");
            };
            SyncOp::Vprintf {
                fmt: param_operand(b, fmt)?,
                args: param_operand(b, list)?,
                ret: match rets {
                    [] => None,
                    [r] => Some(param_operand(b, r)?),
                    _ => return invalid("`vprintf` returns one value"),
                },
            }
        }
        _ => {
            if sizes != [8, 8, 4, 8, 8] || !ret_sizes.is_empty() {
                return invalid("`__assertfail` is declared `__assertfail(.param .b64, .param .b64, .param .b32, .param .b64, .param .b64)`");
            }
            let [message, file, line, function, _] = args else {
                return invalid("`__assertfail` takes 5 arguments");
            };
            SyncOp::AssertFail {
                message: param_operand(b, message)?,
                file: param_operand(b, file)?,
                line: param_operand(b, line)?,
                function: param_operand(b, function)?,
            }
        }
    };
    Ok(b.sync(op))
}
