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
    if b.module
        .functions
        .get(func as usize)
        .is_some_and(|f| f.body.is_none())
    {
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
    let id = b.src(ops.first(), Ty::U32)?;
    let count = match ops.get(1) {
        Some(op) => Some(b.src(Some(op), Ty::U32)?),
        None if !wait => return invalid("`bar.arrive` needs a thread count"),
        None => None,
    };
    Ok(b.sync(SyncOp::Bar { id, count, wait }))
}
