//! Kernels (`.visible .entry`) and device functions (`.func`): signature,
//! launch directives, shared-memory declarations, prologue and epilogue.
//!
//! The prologue reads every parameter once (global pointers converted with
//! `cvta.to.global` once), every special register the body uses once, zeroes
//! the tracked-parity masks and initialises the barriers; the body then only
//! refers to those registers.

use super::error::{Error, ErrorKind, Result};
use super::lines::Lines;
use super::names::{barrier_symbol, param_symbol, shared_symbol, DYNAMIC_SHARED};
use super::suffix;
use super::writer::{emit, Class, Context, Exit, Names, Writer};
use crate::analysis::{BodyInfo, Usage};
use crate::ir::layout::{ParamLayout, Placement, SharedDecl, SharedLayout, BARRIER_BYTES};
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
    facts: &BodyInfo,
    target: Target,
) -> Result<(Lines, PtxVersion)> {
    let usage = &facts.usage;
    let cx = Context {
        target,
        module,
        names,
    };
    let item = format!("kernel {}", k.name);
    let mut w = Writer::new(&cx, item, Some(k), (&k.body, facts), Exit::Ret);
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
            // The map by value, `__grid_constant__`; the tensor copies take
            // its generic address, which `cvta.param` makes (without it the
            // address is the raw parameter offset and the copy reads the
            // wrong bytes: ptx-notes §11.1, t27).
            ParamType::Tensor(_) => {
                w.require_sm90("a tensor-map parameter")?;
                w.need(7, 7);
                sig.push(format!(
                    ".param .align {} .b8 {sym}[{}]",
                    ir::TensorMap::ALIGN,
                    ir::TensorMap::BYTES
                ));
                let (window, generic) = (w.reg(Class::B64), w.reg(Class::B64));
                emit!(w, "mov.u64 {}, {};", window, sym);
                emit!(w, "cvta.param.u64 {}, {};", generic, window);
                generic
            }
        };
        w.params.push(Some(reg));
    }
    w.at(k.name_span);
    w.read_specials(usage)?;
    // Shared addresses used with run-time indices, taken once.
    let mut symbols = Vec::new();
    for a in &usage.dyn_shared {
        symbols.push(w.shared_start(SharedDecl::Array(*a))?.symbol_text());
    }
    for g in &usage.dyn_barriers {
        symbols.push(w.shared_start(SharedDecl::Barriers(*g))?.symbol_text());
    }
    for sym in symbols {
        let r = w.symbol_base(&sym);
        w.bases.insert(sym, r);
    }
    // The descriptors of the arrays wgmma reads, at their starts: every
    // operand's descriptor adds to these.
    for &(array, trans) in &usage.wgmma_operands {
        w.descriptor_base(array, trans)?;
    }
    w.init_barriers(usage)?;

    w.block(&k.body.block)?;
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
    // One CTA per SM pins the count at entry, from which `setmaxnreg`
    // counts: without it ptxas drops every `setmaxnreg` (C7508).
    if usage.max_regs.is_some() {
        let _ = writeln!(directives, ".minnctapersm 1");
    }
    if let Some([x, y, z]) = k.cluster {
        w.at(k.name_span);
        w.require_sm90("a cluster launch attribute")?;
        w.need(7, 8);
        let _ = writeln!(directives, ".reqnctapercluster {x}, {y}, {z}");
        let _ = writeln!(directives, ".explicitcluster");
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
    let mut out = Lines::default();
    out.push(&text, None);
    // In the layout's order, which is the order ptxas places them in: the
    // shared memory the checker measured (E0122) is what ptxas allocates.
    // Each declaration maps to its kdsl declaration, which the simulator's
    // reports label.
    let invalid = |what: String| Error {
        item: format!("kernel {}", k.name),
        span: Some(k.span),
        kind: ErrorKind::InvalidIr(what),
    };
    // A dynamic layout declares nothing here: each declaration is an offset
    // into the module's `.extern .shared` array, listed in a comment (mapped
    // to the declaration like the static form).
    let layout = SharedLayout::of(k);
    let dynamic = layout.placement() == Placement::Dynamic;
    if dynamic {
        let line = format!(
            "\t// {} bytes of dynamic shared memory in {DYNAMIC_SHARED} (launch with at least that many)\n",
            layout.dynamic_bytes()
        );
        out.push(&line, None);
    }
    for slot in &layout.slots {
        let (Some(size), Some(offset)) = (slot.size, slot.offset) else {
            return Err(invalid("a shared declaration too large to size".into()));
        };
        let (symbol, span, ty, len) = match slot.decl {
            SharedDecl::Array(id) => {
                let s = k
                    .shared
                    .get(id.index())
                    .ok_or_else(|| invalid(format!("shared array {} does not exist", id.0)))?;
                (shared_symbol(&s.name), s.span, "b8", size)
            }
            SharedDecl::Barriers(id) => {
                let b = k
                    .barriers
                    .get(id.index())
                    .ok_or_else(|| invalid(format!("barrier group {} does not exist", id.0)))?;
                (
                    barrier_symbol(&b.name),
                    b.spans.decl,
                    "b64",
                    size / BARRIER_BYTES,
                )
            }
        };
        // A `.shared` declaration maps to its kdsl declaration; a comment,
        // like every comment, to nothing.
        let (line, span) = if dynamic {
            (
                format!("\t// {symbol}: {DYNAMIC_SHARED}+{offset}, {size} bytes\n"),
                None,
            )
        } else {
            (
                format!("\t.shared .align {} .{ty} {symbol}[{len}];\n", slot.align),
                Some(span),
            )
        };
        out.push(&line, span);
    }
    out.push("\n", None);
    out.append(body);
    out.push("}\n", None);
    Ok((out, version))
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
fn func_header(f: &ir::Function, name: &str) -> Result<String> {
    let mut text = String::from(".func ");
    if let Some(rt) = f.ret {
        let _ = write!(text, "(.param .{} $r) ", suffix::func_param(rt));
    }
    text.push_str(name);
    text.push('(');
    let mut params = Vec::new();
    for i in 0..f.params as usize {
        let Some(l) = f.body.locals.get(i) else {
            return Err(Error {
                item: format!("fn {}", f.name),
                span: Some(f.span),
                kind: ErrorKind::InvalidIr(format!("parameter {i} has no local")),
            });
        };
        params.push(format!(".param .{} $a{i}", suffix::func_param(l.ty)));
    }
    push_params(&mut text, &params);
    Ok(text)
}

/// Writes one device function; its text and the PTX version it needs.
pub(super) fn write_function(
    module: &ir::Module,
    names: &Names,
    f: &ir::Function,
    facts: &BodyInfo,
    name: &str,
    target: Target,
) -> Result<(Lines, PtxVersion)> {
    let header = func_header(f, name)?;
    let cx = Context {
        target,
        module,
        names,
    };
    let item = format!("fn {}", f.name);
    let mut w = Writer::new(&cx, item, None, (&f.body, facts), Exit::Func(f.ret));
    w.at(f.span);
    for i in 0..f.params {
        let ty = w.local_type(LocalId(i))?;
        let pt = suffix::func_param(ty);
        if ty == Scalar::Bool {
            let raw = w.reg(Class::B32);
            emit!(w, "ld.param.b32 {}, [$a{}];", raw, i);
            let p = w.local(LocalId(i))?;
            emit!(w, "setp.ne.b32 {}, {}, 0;", p, raw);
        } else {
            let r = w.local(LocalId(i))?;
            emit!(w, "ld.param.{} {}, [$a{}];", pt, r, i);
        }
    }
    w.read_specials(&facts.usage)?;
    w.block(&f.body.block)?;
    w.at(closing_brace(f.body.block.span));
    emit!(w, "ret;");
    let version = w.version();
    let (decls, body) = w.finish();
    let mut text = header;
    text.push_str("{\n");
    text.push_str(&decls);
    text.push('\n');
    let mut out = Lines::default();
    out.push(&text, None);
    out.append(body);
    out.push("}\n", None);
    Ok((out, version))
}

impl Writer<'_> {
    /// Reads the special registers the body uses, once.
    fn read_specials(&mut self, usage: &Usage) -> Result<()> {
        for s in &usage.specials {
            let v = self.read_special(*s)?;
            self.specials.insert(*s, v);
        }
        Ok(())
    }
}
