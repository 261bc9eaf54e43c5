//! A readable text form of the IR (`--emit ir`).
//!
//! The text is stable (the same module prints the same bytes) and reads
//! like kdsl with everything the checker decided made explicit:
//!
//! ```text
//! kernel k block(128, 1, 1) {
//!     param out: global mut [f32]  // written
//!     shared tile: [f32; 2, 64]  // #0, 512 bytes
//!     barrier full[2]: cta(arrivals = 1)  // group #0
//!
//!     let %0 s: u32 = (thread_idx.x % 2u32)
//!     barrier.arrive full[%0]
//!     barrier.wait full[%0] parity=tracked
//! }
//! ```
//!
//! Locals print as `%N` (their `LocalId`) with the name and type at the
//! declaration (`let`, `for`, function parameters), so shadowed names stay
//! apart. Constants carry their type as a suffix (`0u32`, `1.5f32`), every
//! binary operation is parenthesised, and conversions are `(e as T)`.
//! Names that do not resolve (an IR bug) print as `?kind#N` instead of
//! failing, so a broken module can still be looked at.

use super::*;
use std::fmt::Write as _;

/// Prints a module: device functions first (in declaration order), then
/// kernels. Printing recurses as deep as the bodies nest, so it is done on
/// the big stack ([`crate::stack`]).
pub fn print(module: &Module) -> String {
    crate::stack::with_big_stack(|| print_here(module))
}

fn print_here(module: &Module) -> String {
    let mut out = String::new();
    let mut first = true;
    for f in &module.functions {
        if !first {
            out.push('\n');
        }
        first = false;
        function(&mut out, module, f);
    }
    for k in &module.kernels {
        if !first {
            out.push('\n');
        }
        first = false;
        kernel(&mut out, module, k);
    }
    out
}

/// What names resolve against while printing one body.
#[derive(Clone, Copy)]
struct Cx<'a> {
    module: &'a Module,
    kernel: Option<&'a Kernel>,
    body: &'a Body,
}

const INDENT: &str = "    ";

fn function(out: &mut String, module: &Module, f: &Function) {
    let cx = Cx {
        module,
        kernel: None,
        body: &f.body,
    };
    let _ = write!(out, "fn {}(", f.name);
    for i in 0..f.params {
        if i > 0 {
            out.push_str(", ");
        }
        local_decl(out, cx, LocalId(i));
    }
    out.push(')');
    if let Some(ret) = f.ret {
        let _ = write!(out, " -> {ret}");
    }
    out.push_str(" {\n");
    block(out, cx, &f.body.block, 1);
    out.push_str("}\n");
}

fn kernel(out: &mut String, module: &Module, k: &Kernel) {
    let cx = Cx {
        module,
        kernel: Some(k),
        body: &k.body,
    };
    let _ = write!(out, "kernel {}", k.name);
    if let Some([x, y, z]) = k.block {
        let _ = write!(out, " block({x}, {y}, {z})");
    }
    if let Some([x, y, z]) = k.cluster {
        let _ = write!(out, " cluster({x}, {y}, {z})");
    }
    out.push_str(" {\n");
    // An instantiation's constants, as its body was checked with them.
    for c in k.instance.iter().flat_map(|i| &i.consts) {
        let _ = writeln!(
            out,
            "{INDENT}const {}: {} = {}",
            c.name,
            c.value.type_name(),
            c.value.text()
        );
    }
    for p in &k.params {
        let _ = write!(out, "{INDENT}param {}: ", p.name);
        match p.ty {
            ParamType::Scalar(s) => {
                let _ = writeln!(out, "{s}");
            }
            ParamType::Global {
                elem,
                mutable,
                written,
            } => {
                let m = if mutable { "mut " } else { "" };
                let w = if written { "  // written" } else { "" };
                let _ = writeln!(out, "global {m}[{elem}]{w}");
            }
            ParamType::Tensor(map) => {
                let _ = writeln!(
                    out,
                    "{}  // swizzle {}",
                    map.type_text(),
                    map.swizzle.name()
                );
            }
        }
    }
    for (i, s) in k.shared.iter().enumerate() {
        let dims: Vec<String> = s.dims.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "{INDENT}shared {}: [{}; {}]  // #{i}, {} bytes",
            s.name,
            s.elem,
            dims.join(", "),
            s.bytes_text()
        );
    }
    for (i, b) in k.barriers.iter().enumerate() {
        let _ = writeln!(
            out,
            "{INDENT}barrier {}[{}]: {}(arrivals = {})  // group #{i}",
            b.name,
            b.count,
            b.scope.name(),
            b.arrivals
        );
    }
    for (i, b) in k.named_barriers.iter().enumerate() {
        let _ = writeln!(
            out,
            "{INDENT}barrier {}[{}]: named(threads = {})  // named #{i}, ids {}..{}",
            b.name,
            b.count,
            b.threads,
            b.first_id,
            u64::from(b.first_id) + u64::from(b.count)
        );
    }
    let has_decls = !(k.params.is_empty()
        && k.shared.is_empty()
        && k.barriers.is_empty()
        && k.named_barriers.is_empty());
    if has_decls && !k.body.block.stmts.is_empty() {
        out.push('\n');
    }
    block(out, cx, &k.body.block, 1);
    out.push_str("}\n");
}

/// `%3 acc: f32` (the name and type of a local, where it is declared;
/// `%4 t: [f32; 8, 8]` for a register array).
fn local_decl(out: &mut String, cx: Cx, id: LocalId) {
    let _ = match cx.body.locals.get(id.index()) {
        Some(l) => write!(out, "%{} {}: {}", id.0, l.name, l.type_text()),
        None => write!(out, "%{} ?: ?", id.0),
    };
}

fn block(out: &mut String, cx: Cx, b: &Block, level: usize) {
    for s in &b.stmts {
        stmt(out, cx, s, level);
    }
}

/// Indentation stops growing after this many levels, so that the text of a
/// deeply nested body stays proportional to the body.
const MAX_LEVEL: usize = 100;

fn indent(out: &mut String, level: usize) {
    for _ in 0..level.min(MAX_LEVEL) {
        out.push_str(INDENT);
    }
}

// Everything below writes into `out` as it goes (no intermediate strings),
// so that printing takes time proportional to the text, however deeply
// expressions nest.

fn stmt(out: &mut String, cx: Cx, s: &Stmt, level: usize) {
    indent(out, level);
    match &s.kind {
        StmtKind::Let { local, value } => {
            out.push_str("let ");
            local_decl(out, cx, *local);
            out.push_str(" = ");
            expr(out, cx, value, level);
        }
        StmtKind::Assign { local, value } => {
            let _ = write!(out, "%{} = ", local.0);
            expr(out, cx, value, level);
        }
        // `let %2 acc: [f32; 4, 4] = [0.0; 4, 4]` (one value for every
        // element) or `= [a, b, c, d]`.
        StmtKind::LetArray { local, values } => {
            out.push_str("let ");
            local_decl(out, cx, *local);
            out.push_str(" = [");
            list(out, cx, values, level);
            let dims = cx.body.locals.get(local.index()).map(|l| &l.dims);
            if let (Some(dims), [_]) = (dims, values.as_slice()) {
                let dims: Vec<String> = dims.iter().map(u32::to_string).collect();
                let _ = write!(out, "; {}", dims.join(", "));
            }
            out.push(']');
        }
        StmtKind::Call { func, args } => {
            out.push_str("call ");
            call(out, cx, *func, args, level);
        }
        StmtKind::LoadVector {
            locals,
            place: p,
            matrix,
        } => {
            out.push_str("let (");
            for (i, l) in locals.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                local_decl(out, cx, *l);
            }
            match matrix {
                Some(_) => {
                    let _ = write!(out, ") = ldmatrix_x{}(", locals.len());
                }
                None => {
                    let _ = write!(out, ") = load{}(", locals.len());
                }
            }
            place(out, cx, p, level);
            if matrix.is_some_and(|m| m.trans) {
                out.push_str(", trans = true");
            }
            out.push(')');
        }
        StmtKind::StoreVector {
            place: p,
            values,
            matrix,
        } => {
            match matrix {
                Some(_) => {
                    let _ = write!(out, "stmatrix_x{}(", values.len());
                }
                None => {
                    let _ = write!(out, "store{}(", values.len());
                }
            }
            place(out, cx, p, level);
            for v in values {
                out.push_str(", ");
                expr(out, cx, v, level);
            }
            if matrix.is_some_and(|m| m.trans) {
                out.push_str(", trans = true");
            }
            out.push(')');
        }
        StmtKind::Store {
            place: p,
            op,
            value,
        } => {
            place(out, cx, p, level);
            let _ = write!(out, " {}= ", op.map_or("", BinOp::symbol));
            expr(out, cx, value, level);
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            out.push_str("if ");
            expr(out, cx, cond, level);
            out.push_str(" {\n");
            block(out, cx, then_block, level + 1);
            if let Some(else_block) = else_block {
                indent(out, level);
                out.push_str("} else {\n");
                block(out, cx, else_block, level + 1);
            }
            indent(out, level);
            out.push('}');
        }
        StmtKind::While { cond, body } => {
            out.push_str("while ");
            expr(out, cx, cond, level);
            out.push_str(" {\n");
            block(out, cx, body, level + 1);
            indent(out, level);
            out.push('}');
        }
        StmtKind::For {
            var,
            start,
            end,
            step,
            body,
            unroll,
        } => {
            match unroll.map(|h| h.unroll) {
                Some(Unroll::Full) => out.push_str("#[unroll] "),
                Some(Unroll::By(n)) => {
                    let _ = write!(out, "#[unroll({n})] ");
                }
                None => {}
            }
            out.push_str("for ");
            local_decl(out, cx, *var);
            out.push_str(" in ");
            expr(out, cx, start, level);
            out.push_str("..");
            expr(out, cx, end, level);
            out.push_str(" step ");
            expr(out, cx, step, level);
            out.push_str(" {\n");
            block(out, cx, body, level + 1);
            indent(out, level);
            out.push('}');
        }
        StmtKind::ForList { var, items, body } => {
            out.push_str("for ");
            local_decl(out, cx, *var);
            out.push_str(" in [");
            for (i, e) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                expr(out, cx, e, level);
            }
            out.push_str("] {\n");
            block(out, cx, body, level + 1);
            indent(out, level);
            out.push('}');
        }
        StmtKind::Break => out.push_str("break"),
        StmtKind::Continue => out.push_str("continue"),
        StmtKind::Return(None) => out.push_str("return"),
        StmtKind::Return(Some(v)) => {
            out.push_str("return ");
            expr(out, cx, v, level);
        }
        StmtKind::Expr(x) => expr(out, cx, x, level),
        StmtKind::SyncThreads => out.push_str("sync_threads"),
        StmtKind::SyncWarp(mask) => {
            out.push_str("sync_warp(");
            expr(out, cx, mask, level);
            out.push(')');
        }
        StmtKind::ClusterSync => out.push_str("cluster_sync"),
        StmtKind::FenceProxyAsync => out.push_str("fence_proxy_async"),
        StmtKind::Fence(sem) => {
            let _ = write!(out, "fence {} {}", sem.order.name(), sem.scope.name());
        }
        StmtKind::Barrier(op) => barrier_op(out, cx, op, level),
        StmtKind::NamedBarrier(op) => {
            let name = cx
                .kernel
                .and_then(|k| k.named_barriers.get(op.group.index()))
                .map(|b| b.name.to_string());
            let name = name.unwrap_or_else(|| format!("?named#{}", op.group.0));
            group_ref(out, cx, &name, op.index.as_ref(), level);
            let _ = write!(out, ".{}", op.kind.method());
        }
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => {
            out.push_str("copy_async ");
            place(out, cx, dst, level);
            out.push_str(" <- ");
            place(out, cx, src, level);
            out.push_str(" bytes=");
            expr(out, cx, bytes, level);
            out.push_str(" barrier=");
            barrier_ref(out, cx, barrier, level);
        }
        StmtKind::CopyAsyncStore { dst, src, bytes } => {
            out.push_str("copy_async_store ");
            place(out, cx, dst, level);
            out.push_str(" <- ");
            place(out, cx, src, level);
            out.push_str(" bytes=");
            expr(out, cx, bytes, level);
        }
        StmtKind::TensorCopy(c) => {
            let _ = write!(out, "{} ", c.kind.name());
            out.push_str(&shared_name(cx, c.smem.array));
            if !c.smem.indices.is_empty() {
                out.push('[');
                list(out, cx, &c.smem.indices, level);
                out.push(']');
            }
            out.push_str(if matches!(c.kind, TensorCopyKind::Load { .. }) {
                " <- "
            } else {
                " -> "
            });
            let _ = write!(out, "{}[", param_name(cx, c.map));
            list(out, cx, &c.coords, level);
            out.push(']');
            if let TensorCopyKind::Load { barrier, mask } = &c.kind {
                out.push_str(" barrier=");
                barrier_ref(out, cx, barrier, level);
                if let Some(m) = mask {
                    out.push_str(" mask=");
                    expr(out, cx, m, level);
                }
            }
        }
        StmtKind::CopyAsyncCommit => out.push_str("copy_async_commit"),
        StmtKind::CopyAsyncWait(n) => {
            let _ = write!(out, "copy_async_wait {n}");
        }
        StmtKind::Wgmma(w) => {
            let name = cx
                .kernel
                .and_then(|k| k.accums.get(w.acc.index()))
                .map_or_else(|| format!("?accum#{}", w.acc.0), |a| a.name.clone());
            let _ = write!(out, "wgmma {name} += ");
            if w.trans_a {
                out.push_str("transpose ");
            }
            place(out, cx, &w.a, level);
            out.push_str(" * ");
            if w.trans_b {
                out.push_str("transpose ");
            }
            place(out, cx, &w.b, level);
            out.push_str(" accumulate=");
            expr(out, cx, &w.accumulate, level);
        }
        StmtKind::Fragment(f) => {
            let name = |a: crate::ir::AccumId| {
                cx.kernel
                    .and_then(|k| k.accums.get(a.index()))
                    .map_or_else(|| format!("?accum#{}", a.0), |x| x.name.clone())
            };
            let _ = write!(out, "{} {}, {}", f.kind.name(), name(f.dst), name(f.src));
            if let Some(k) = &f.factor {
                out.push_str(", ");
                expr(out, cx, k, level);
            }
        }
        StmtKind::WgmmaCommit => out.push_str("wgmma_commit"),
        StmtKind::WgmmaWait(n) => {
            let _ = write!(out, "wgmma_wait {n}");
        }
        StmtKind::SetMaxRegs(n) => {
            let _ = write!(out, "set_max_regs {n}");
        }
        StmtKind::Poisoned { groups, blocks } => {
            out.push_str("<error> groups=[");
            for (i, g) in groups.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match cx.kernel.and_then(|k| k.barriers.get(g.index())) {
                    Some(b) => out.push_str(&b.name),
                    None => {
                        let _ = write!(out, "?barrier#{}", g.0);
                    }
                }
            }
            out.push_str("] {\n");
            for b in blocks {
                block(out, cx, b, level + 1);
            }
            indent(out, level);
            out.push('}');
        }
    }
    out.push('\n');
}

/// `barrier.wait full[%2] parity=tracked`, `barrier.arrive_expect_tx full[0u32] bytes=4096u32`.
fn barrier_op(out: &mut String, cx: Cx, op: &BarrierOp, level: usize) {
    let _ = write!(out, "barrier.{} ", op.kind.method());
    barrier_ref(out, cx, &op.barrier, level);
    let (name, arg) = match &op.kind {
        BarrierOpKind::Arrive { count: None } => return,
        BarrierOpKind::Arrive { count: Some(c) } => ("count", c),
        BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
            ("bytes", bytes)
        }
        BarrierOpKind::ArriveRemote { rank } => ("rank", rank),
        BarrierOpKind::Wait { parity: p } | BarrierOpKind::WaitCluster { parity: p } => {
            out.push_str(" parity=");
            parity(out, cx, p, level);
            return;
        }
    };
    let _ = write!(out, " {name}=");
    expr(out, cx, arg, level);
}

fn parity(out: &mut String, cx: Cx, p: &Parity, level: usize) {
    match p {
        Parity::Tracked => out.push_str("tracked"),
        Parity::Explicit(x) => expr(out, cx, x, level),
    }
}

/// `full[%2]`, or `done` for an unindexed reference.
fn barrier_ref(out: &mut String, cx: Cx, r: &BarrierRef, level: usize) {
    let name = cx
        .kernel
        .and_then(|k| k.barriers.get(r.group.index()))
        .map(|b| b.name.to_string());
    let name = name.unwrap_or_else(|| format!("?barrier#{}", r.group.0));
    group_ref(out, cx, &name, r.index.as_deref(), level);
}

/// A group's name and its index, if any: `full[%2]`.
fn group_ref(out: &mut String, cx: Cx, name: &str, index: Option<&Expr>, level: usize) {
    out.push_str(name);
    if let Some(i) = index {
        out.push('[');
        expr(out, cx, i, level);
        out.push(']');
    }
}

/// `a, b, c`.
fn list(out: &mut String, cx: Cx, xs: &[Expr], level: usize) {
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        expr(out, cx, x, level);
    }
}

fn place(out: &mut String, cx: Cx, p: &Place, level: usize) {
    match &p.kind {
        PlaceKind::Accum { acc, index } => {
            let name = cx
                .kernel
                .and_then(|k| k.accums.get(acc.index()))
                .map_or_else(|| format!("?accum#{}", acc.0), |a| a.name.clone());
            out.push_str(&name);
            out.push('[');
            expr(out, cx, index, level);
            out.push(']');
        }
        PlaceKind::Register { array, indices } => {
            let _ = write!(out, "%{}[", array.0);
            list(out, cx, indices, level);
            out.push(']');
        }
        PlaceKind::Global { param, index } => {
            out.push_str(&param_name(cx, *param));
            out.push('[');
            expr(out, cx, index, level);
            out.push(']');
        }
        PlaceKind::Shared { array, indices } => {
            out.push_str(&shared_name(cx, *array));
            out.push('[');
            list(out, cx, indices, level);
            out.push(']');
        }
        PlaceKind::Remote {
            array,
            rank,
            indices,
        } => {
            let _ = write!(out, "remote({}, ", shared_name(cx, *array));
            expr(out, cx, rank, level);
            out.push_str(")[");
            list(out, cx, indices, level);
            out.push(']');
        }
        PlaceKind::SharedAt { array, addr } => {
            let _ = write!(out, "{}@[", shared_name(cx, *array));
            expr(out, cx, addr, level);
            out.push(']');
        }
    }
}

fn param_name(cx: Cx, id: ParamId) -> String {
    cx.kernel
        .and_then(|k| k.params.get(id.index()))
        .map_or_else(|| format!("?param#{}", id.0), |p| p.name.clone())
}

fn shared_name(cx: Cx, id: SharedId) -> String {
    cx.kernel
        .and_then(|k| k.shared.get(id.index()))
        .map_or_else(|| format!("?shared#{}", id.0), |s| s.name.clone())
}

/// An expression on one line, except an `if` expression whose branches hold
/// statements, which opens indented lines below `level`.
fn expr(out: &mut String, cx: Cx, x: &Expr, level: usize) {
    match &x.kind {
        ExprKind::Const(v) => out.push_str(&value(*v, x.ty)),
        ExprKind::Local(id) => {
            let _ = write!(out, "%{}", id.0);
        }
        ExprKind::Param(id) => out.push_str(&param_name(cx, *id)),
        ExprKind::Special(s) => out.push_str(&special(*s)),
        ExprKind::Unary(op, a) => {
            out.push(match op {
                UnaryOp::Neg => '-',
                UnaryOp::Not => '!',
            });
            expr(out, cx, a, level);
        }
        ExprKind::Binary(op, a, b) => {
            out.push('(');
            expr(out, cx, a, level);
            let _ = write!(out, " {} ", op.symbol());
            expr(out, cx, b, level);
            out.push(')');
        }
        ExprKind::Cast(a) => {
            out.push('(');
            expr(out, cx, a, level);
            let _ = write!(out, " as {})", x.ty);
        }
        ExprKind::Select(c, a, b) => {
            out.push_str("select(");
            expr(out, cx, c, level);
            out.push_str(", ");
            expr(out, cx, a, level);
            out.push_str(", ");
            expr(out, cx, b, level);
            out.push(')');
        }
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            out.push_str("if ");
            expr(out, cx, cond, level);
            if then_block.stmts.is_empty() && else_block.stmts.is_empty() {
                out.push_str(" { ");
                expr(out, cx, then_value, level);
                out.push_str(" } else { ");
                expr(out, cx, else_value, level);
                out.push_str(" }");
                return;
            }
            let inner = level + 1;
            out.push_str(" {\n");
            block(out, cx, then_block, inner);
            indent(out, inner);
            expr(out, cx, then_value, inner);
            out.push('\n');
            indent(out, level);
            out.push_str("} else {\n");
            block(out, cx, else_block, inner);
            indent(out, inner);
            expr(out, cx, else_value, inner);
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        ExprKind::Load(p) => place(out, cx, p, level),
        ExprKind::AddrOf(p) => {
            out.push('&');
            place(out, cx, p, level);
        }
        ExprKind::Call { func, args } => call(out, cx, *func, args, level),
        // `x.lo`, `x.hi` and the pair's type as the name of `pack`, as
        // the program writes them.
        ExprKind::Math(f @ (MathFn::Lo | MathFn::Hi), args) => {
            out.push('(');
            list(out, cx, args, level);
            let _ = write!(out, ").{}", f.name());
        }
        ExprKind::Math(MathFn::Pack, args) => {
            let _ = write!(out, "{}(", x.ty);
            list(out, cx, args, level);
            out.push(')');
        }
        ExprKind::Math(f, args) => {
            let _ = write!(out, "{}(", f.name());
            list(out, cx, args, level);
            out.push(')');
        }
        ExprKind::Atomic {
            op,
            sem,
            place: p,
            args,
        } => {
            let _ = write!(out, "{}", op.name());
            if *sem != MemSem::ATOMIC {
                let _ = write!(out, ".{}.{}", sem.order.name(), sem.scope.name());
            }
            out.push('(');
            place(out, cx, p, level);
            for a in args {
                out.push_str(", ");
                expr(out, cx, a, level);
            }
            out.push(')');
        }
        ExprKind::Warp(op, args) => {
            let _ = write!(out, "{}(", op.name());
            list(out, cx, args, level);
            out.push(')');
        }
        ExprKind::BarrierTest {
            barrier,
            parity: p,
            acquire,
            ..
        } => {
            out.push_str(match acquire {
                Scope::Cta => "barrier.test ",
                Scope::Cluster => "barrier.test_cluster ",
            });
            barrier_ref(out, cx, barrier, level);
            out.push_str(" parity=");
            parity(out, cx, p, level);
        }
    }
}

fn call(out: &mut String, cx: Cx, func: FuncId, args: &[Expr], level: usize) {
    match cx.module.functions.get(func.index()) {
        Some(f) => out.push_str(&f.name),
        None => {
            let _ = write!(out, "?fn#{}", func.0);
        }
    }
    out.push('(');
    list(out, cx, args, level);
    out.push(')');
}

/// A constant with its type as a suffix: `0u32`, `-1i64`, `0.5f32`, `true`.
fn value(v: Value, ty: crate::types::Scalar) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => format!("{i}{ty}"),
        // `{:?}` keeps a `.0` on whole numbers, so a float never reads as an
        // int; an f32 reads as its shortest form (`0.1f32`, not its f64 digits).
        Value::Float(f) => match crate::fp::Format::of(ty) {
            Some(fmt) => format!("{}{ty}", crate::fp::display(f, fmt)),
            None => format!("{f:?}{ty}"),
        },
        Value::Pair(lo, hi) => match ty.half_of().and_then(crate::fp::Format::of) {
            Some(fmt) => format!(
                "{ty}({}, {})",
                crate::fp::display(lo, fmt),
                crate::fp::display(hi, fmt)
            ),
            None => format!("{ty}({lo:?}, {hi:?})"),
        },
    }
}

fn special(s: Special) -> String {
    let dim = |base: &str, d: Dim| format!("{base}.{}", d.name());
    match s {
        Special::ThreadIdx(d) => dim("thread_idx", d),
        Special::BlockDim(d) => dim("block_dim", d),
        Special::BlockIdx(d) => dim("block_idx", d),
        Special::GridDim(d) => dim("grid_dim", d),
        Special::LaneId => "lane_id".to_string(),
        Special::WarpId => "warp_id".to_string(),
        Special::ClusterRank => "cluster_rank".to_string(),
        Special::ClusterSize => "cluster_size".to_string(),
        Special::ClusterIdx(d) => dim("cluster_idx", d),
        Special::ClusterDim(d) => dim("cluster_dim", d),
        Special::ClusterGridIdx(d) => dim("cluster_grid_idx", d),
        Special::ClusterGridDim(d) => dim("cluster_grid_dim", d),
        Special::LaneMask(m) => format!("lane_mask_{}()", m.name()),
    }
}

#[cfg(test)]
mod tests;
