//! Kernels (`.visible .entry`) and device functions (`.func`): signature,
//! launch directives, shared-memory declarations, prologue and epilogue.
//!
//! The prologue reads every parameter once (global pointers converted with
//! `cvta.to.global` once), every special register the body uses once, zeroes
//! the tracked-parity masks and initialises the barriers; the body then only
//! refers to those registers.

use super::lines::Lines;
use super::names::{barrier_symbol, param_symbol, shared_symbol};
use super::scan::Usage;
use super::suffix;
use super::writer::{emit, Class, Exit, Names, Writer};
use crate::ir::layout::{ParamLayout, SharedDecl, SharedLayout, BARRIER_BYTES};
use crate::ir::{self, LocalId, ParamType};
use crate::span::Span;
use crate::target::{PtxVersion, Target};
use crate::types::Scalar;
use std::fmt::Write as _;

/// The closing `}` of a block: where the code the writer adds at the end
/// of a function (the exit synchronisation, the final `ret`) comes from.
fn closing_brace(block: Span) -> Span {
    Span {
        start: block.end.saturating_sub(1).max(block.start),
        ..block
    }
}

/// Writes one kernel; returns its text and the PTX version it needs.
pub(super) fn write_kernel(
    module: &ir::Module,
    names: &Names,
    k: &ir::Kernel,
    target: Target,
) -> (Lines, PtxVersion) {
    let usage = Usage::of_block(&k.body.block);
    let mut w = Writer::new(target, module, names, Some(k), &k.body, Exit::Ret);
    w.parity = vec![Vec::new(); k.barriers.len()];
    if usage.remote && target.has_sm90_features() {
        let l = w.label();
        w.exit = Exit::Cluster(l);
    }

    // Parameters.
    let mut sig = Vec::new();
    for p in &k.params {
        let sym = param_symbol(&p.name);
        w.at(p.span);
        let reg = match p.ty {
            ParamType::Scalar(ty) => {
                let pt = suffix::kernel_param(ty);
                sig.push(format!(".param .{pt} {sym}"));
                if ty == Scalar::Bool {
                    let (raw, pred) = (w.reg(Class::B32), w.reg(Class::Pred));
                    emit!(w, "ld.param.u32 {}, [{}];", raw, sym);
                    emit!(w, "setp.ne.b32 {}, {}, 0;", pred, raw);
                    pred
                } else {
                    let r = w.reg_for(ty);
                    emit!(w, "ld.param.{} {}, [{}];", pt, r, sym);
                    r
                }
            }
            ParamType::Global { .. } => {
                sig.push(format!(".param .u64 {sym}"));
                let (generic, global) = (w.reg(Class::B64), w.reg(Class::B64));
                emit!(w, "ld.param.u64 {}, [{}];", generic, sym);
                emit!(w, "cvta.to.global.u64 {}, {};", global, generic);
                global
            }
        };
        w.params.push(Some(reg));
    }
    w.at(k.name_span);
    w.read_specials(&usage);
    // Shared addresses used with run-time indices, taken once.
    let symbols = usage
        .dyn_shared
        .iter()
        .filter_map(|i| k.shared.get(*i).map(|a| shared_symbol(&a.name)));
    let symbols: Vec<String> = symbols
        .chain(
            usage
                .dyn_barriers
                .iter()
                .filter_map(|i| k.barriers.get(*i).map(|b| barrier_symbol(&b.name))),
        )
        .collect();
    for sym in symbols {
        let r = w.symbol_base(&sym);
        w.bases.insert(sym, r);
    }
    w.init_barriers(&usage);

    w.block(&k.body.block);
    w.at(closing_brace(k.body.block.span));
    if let Exit::Cluster(l) = w.exit {
        w.place_label(l);
        w.cluster_exit_sync();
    }
    emit!(w, "ret;");

    let mut directives = String::new();
    if let Some([x, y, z]) = k.block {
        let _ = writeln!(directives, ".reqntid {x}, {y}, {z}");
    }
    if let Some([x, y, z]) = k.cluster {
        if target.has_sm90_features() {
            w.need(7, 8);
            let _ = writeln!(directives, ".reqnctapercluster {x}, {y}, {z}");
            let _ = writeln!(directives, ".explicitcluster");
        } else {
            let _ = writeln!(
                directives,
                "// cluster({x}, {y}, {z}) requires sm_90 or newer"
            );
        }
    }
    // Parameters past the classic 4352 bytes need PTX ISA 8.1 (more than
    // even that allows is E0127, so such a kernel never gets here).
    if let Some(v) = ParamLayout::of(k).version_needed() {
        w.need(v.major, v.minor);
    }
    let version = w.version();
    let (decls, body) = w.finish();

    let mut text = format!(".visible .entry {}(", k.name);
    push_params(&mut text, &sig);
    text.push_str(&directives);
    text.push_str("{\n");
    text.push_str(&decls);
    // In the layout's order, which is the order ptxas places them in: the
    // shared memory the checker measured (E0122) is what ptxas allocates.
    for slot in &SharedLayout::of(k).slots {
        let size = slot.size.unwrap_or(u64::MAX);
        let _ = match slot.decl {
            SharedDecl::Array(id) => k.shared.get(id.index()).map(|s| {
                writeln!(
                    text,
                    "\t.shared .align {} .b8 {}[{size}];",
                    slot.align,
                    shared_symbol(&s.name)
                )
            }),
            SharedDecl::Barriers(id) => k.barriers.get(id.index()).map(|b| {
                writeln!(
                    text,
                    "\t.shared .align {} .b64 {}[{}];",
                    slot.align,
                    barrier_symbol(&b.name),
                    size / BARRIER_BYTES
                )
            }),
        };
    }
    text.push('\n');
    let mut out = Lines::default();
    out.push(&text, None);
    out.append(body);
    out.push("}\n", None);
    (out, version)
}

/// `(\n\t.param a,\n\t.param b\n)\n`, or `()\n`.
fn push_params(text: &mut String, params: &[String]) {
    if params.is_empty() {
        text.push_str(")\n");
        return;
    }
    text.push('\n');
    let _ = writeln!(text, "\t{}\n)", params.join(",\n\t"));
}

/// The `.func` header of device function `f`: `(.param .b32 $r) name(...)`.
pub(super) fn func_header(f: &ir::Function, name: &str) -> String {
    let mut text = String::from(".func ");
    if let Some(rt) = f.ret {
        let _ = write!(text, "(.param .{} $r) ", suffix::func_param(rt));
    }
    text.push_str(name);
    text.push('(');
    let params: Vec<String> = (0..f.params as usize)
        .map(|i| {
            let ty = f.body.locals.get(i).map_or(Scalar::U32, |l| l.ty);
            format!(".param .{} $a{i}", suffix::func_param(ty))
        })
        .collect();
    push_params(&mut text, &params);
    text
}

/// Writes one device function; its text and the PTX version it needs.
pub(super) fn write_function(
    module: &ir::Module,
    names: &Names,
    f: &ir::Function,
    name: &str,
    target: Target,
) -> (Lines, PtxVersion) {
    let usage = Usage::of_block(&f.body.block);
    let mut w = Writer::new(target, module, names, None, &f.body, Exit::Func(f.ret));
    w.at(f.span);
    for i in 0..f.params {
        let ty = f.body.locals.get(i as usize).map_or(Scalar::U32, |l| l.ty);
        let pt = suffix::func_param(ty);
        if ty == Scalar::Bool {
            let raw = w.reg(Class::B32);
            emit!(w, "ld.param.b32 {}, [$a{}];", raw, i);
            let p = w.local(LocalId(i));
            emit!(w, "setp.ne.b32 {}, {}, 0;", p, raw);
        } else {
            let r = w.local(LocalId(i));
            emit!(w, "ld.param.{} {}, [$a{}];", pt, r, i);
        }
    }
    w.read_specials(&usage);
    w.block(&f.body.block);
    w.at(closing_brace(f.body.block.span));
    emit!(w, "ret;");
    let version = w.version();
    let (decls, body) = w.finish();
    let mut text = func_header(f, name);
    text.push_str("{\n");
    text.push_str(&decls);
    text.push('\n');
    let mut out = Lines::default();
    out.push(&text, None);
    out.append(body);
    out.push("}\n", None);
    (out, version)
}

impl Writer<'_> {
    /// Reads the special registers the body uses, once.
    fn read_specials(&mut self, usage: &Usage) {
        for s in &usage.specials {
            let v = self.read_special(*s);
            self.specials.insert(*s, v);
        }
    }
}
