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

/// Prints a module: device functions first (in declaration order), then kernels.
pub fn print(module: &Module) -> String {
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
    let params: Vec<String> = (0..f.params).map(|i| local_decl(cx, LocalId(i))).collect();
    let _ = write!(out, "fn {}({})", f.name, params.join(", "));
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
        }
    }
    for (i, s) in k.shared.iter().enumerate() {
        let dims: Vec<String> = s.dims.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "{INDENT}shared {}: [{}; {}]  // #{i}, {} bytes",
            s.name,
            s.elem,
            dims.join(", "),
            s.bytes()
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
    let has_decls = !(k.params.is_empty() && k.shared.is_empty() && k.barriers.is_empty());
    if has_decls && !k.body.block.stmts.is_empty() {
        out.push('\n');
    }
    block(out, cx, &k.body.block, 1);
    out.push_str("}\n");
}

/// `%3 acc: f32` (the name and type of a local, where it is declared).
fn local_decl(cx: Cx, id: LocalId) -> String {
    match cx.body.locals.get(id.index()) {
        Some(l) => format!("%{} {}: {}", id.0, l.name, l.ty),
        None => format!("%{} ?: ?", id.0),
    }
}

fn block(out: &mut String, cx: Cx, b: &Block, level: usize) {
    for s in &b.stmts {
        stmt(out, cx, s, level);
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str(INDENT);
    }
}

fn stmt(out: &mut String, cx: Cx, s: &Stmt, level: usize) {
    indent(out, level);
    let e = |x: &Expr| expr(cx, x, level);
    let line = match &s.kind {
        StmtKind::Let { local, value } => format!("let {} = {}", local_decl(cx, *local), e(value)),
        StmtKind::Assign { local, value } => format!("%{} = {}", local.0, e(value)),
        StmtKind::Call { func, args } => format!("call {}", call(cx, *func, args, level)),
        StmtKind::Store {
            place: p,
            op,
            value,
        } => {
            let op = op.map_or("", BinOp::symbol);
            format!("{} {op}= {}", place(cx, p, level), e(value))
        }
        StmtKind::If {
            cond,
            then_block,
            else_block,
        } => {
            let _ = writeln!(out, "if {} {{", e(cond));
            block(out, cx, then_block, level + 1);
            if let Some(else_block) = else_block {
                indent(out, level);
                out.push_str("} else {\n");
                block(out, cx, else_block, level + 1);
            }
            indent(out, level);
            out.push_str("}\n");
            return;
        }
        StmtKind::While { cond, body } => {
            let _ = writeln!(out, "while {} {{", e(cond));
            block(out, cx, body, level + 1);
            indent(out, level);
            out.push_str("}\n");
            return;
        }
        StmtKind::For {
            var,
            start,
            end,
            step,
            body,
        } => {
            let _ = writeln!(
                out,
                "for {} in {}..{} step {} {{",
                local_decl(cx, *var),
                e(start),
                e(end),
                e(step)
            );
            block(out, cx, body, level + 1);
            indent(out, level);
            out.push_str("}\n");
            return;
        }
        StmtKind::Break => "break".to_string(),
        StmtKind::Continue => "continue".to_string(),
        StmtKind::Return(None) => "return".to_string(),
        StmtKind::Return(Some(v)) => format!("return {}", e(v)),
        StmtKind::Expr(x) => e(x),
        StmtKind::SyncThreads => "sync_threads".to_string(),
        StmtKind::ClusterSync => "cluster_sync".to_string(),
        StmtKind::FenceProxyAsync => "fence_proxy_async".to_string(),
        StmtKind::Barrier(op) => barrier_op(cx, op, level),
        StmtKind::CopyAsync {
            dst,
            src,
            bytes,
            barrier,
        } => format!(
            "copy_async {} <- {} bytes={} barrier={}",
            place(cx, dst, level),
            place(cx, src, level),
            e(bytes),
            barrier_ref(cx, barrier, level)
        ),
        StmtKind::CopyAsyncStore { dst, src, bytes } => format!(
            "copy_async_store {} <- {} bytes={}",
            place(cx, dst, level),
            place(cx, src, level),
            e(bytes)
        ),
        StmtKind::CopyAsyncCommit => "copy_async_commit".to_string(),
        StmtKind::CopyAsyncWait(n) => format!("copy_async_wait {n}"),
        StmtKind::Poisoned { groups, blocks } => {
            let names: Vec<String> = groups
                .iter()
                .map(|g| {
                    cx.kernel
                        .and_then(|k| k.barriers.get(g.index()))
                        .map_or_else(|| format!("?barrier#{}", g.0), |b| b.name.clone())
                })
                .collect();
            let _ = writeln!(out, "<error> groups=[{}] {{", names.join(", "));
            for b in blocks {
                block(out, cx, b, level + 1);
            }
            indent(out, level);
            out.push_str("}\n");
            return;
        }
    };
    out.push_str(&line);
    out.push('\n');
}

/// `barrier.wait full[%2] parity=tracked`, `barrier.arrive_expect_tx full[0u32] bytes=4096u32`.
fn barrier_op(cx: Cx, op: &BarrierOp, level: usize) -> String {
    let e = |x: &Expr| expr(cx, x, level);
    let head = format!(
        "barrier.{} {}",
        op.kind.method(),
        barrier_ref(cx, &op.barrier, level)
    );
    let arg = match &op.kind {
        BarrierOpKind::Arrive { count: None } => return head,
        BarrierOpKind::Arrive { count: Some(c) } => format!("count={}", e(c)),
        BarrierOpKind::ArriveExpectTx { bytes } | BarrierOpKind::ExpectTx { bytes } => {
            format!("bytes={}", e(bytes))
        }
        BarrierOpKind::ArriveRemote { rank } => format!("rank={}", e(rank)),
        BarrierOpKind::Wait { parity: p } | BarrierOpKind::WaitCluster { parity: p } => {
            format!("parity={}", parity(cx, p, level))
        }
    };
    format!("{head} {arg}")
}

fn parity(cx: Cx, p: &Parity, level: usize) -> String {
    match p {
        Parity::Tracked => "tracked".to_string(),
        Parity::Explicit(x) => expr(cx, x, level),
    }
}

/// `full[%2]`, or `done` for an unindexed reference.
fn barrier_ref(cx: Cx, r: &BarrierRef, level: usize) -> String {
    let name = cx
        .kernel
        .and_then(|k| k.barriers.get(r.group.index()))
        .map_or_else(|| format!("?barrier#{}", r.group.0), |b| b.name.clone());
    match &r.index {
        Some(i) => format!("{name}[{}]", expr(cx, i, level)),
        None => name,
    }
}

fn place(cx: Cx, p: &Place, level: usize) -> String {
    let list = |xs: &[Expr]| {
        xs.iter()
            .map(|x| expr(cx, x, level))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &p.kind {
        PlaceKind::Global { param, index } => {
            format!("{}[{}]", param_name(cx, *param), expr(cx, index, level))
        }
        PlaceKind::Shared { array, indices } => {
            format!("{}[{}]", shared_name(cx, *array), list(indices))
        }
        PlaceKind::Remote {
            array,
            rank,
            indices,
        } => format!(
            "remote({}, {})[{}]",
            shared_name(cx, *array),
            expr(cx, rank, level),
            list(indices)
        ),
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
fn expr(cx: Cx, x: &Expr, level: usize) -> String {
    let e = |y: &Expr| expr(cx, y, level);
    let list = |ys: &[Expr]| {
        ys.iter()
            .map(|y| expr(cx, y, level))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &x.kind {
        ExprKind::Const(v) => value(*v, x.ty),
        ExprKind::Local(id) => format!("%{}", id.0),
        ExprKind::Param(id) => param_name(cx, *id),
        ExprKind::Special(s) => special(*s),
        ExprKind::Unary(op, a) => {
            let sym = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
            };
            format!("{sym}{}", e(a))
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", e(a), op.symbol(), e(b)),
        ExprKind::Cast(a) => format!("({} as {})", e(a), x.ty),
        ExprKind::Select(c, a, b) => format!("select({}, {}, {})", e(c), e(a), e(b)),
        ExprKind::If {
            cond,
            then_block,
            then_value,
            else_block,
            else_value,
        } => {
            if then_block.stmts.is_empty() && else_block.stmts.is_empty() {
                return format!(
                    "if {} {{ {} }} else {{ {} }}",
                    e(cond),
                    e(then_value),
                    e(else_value)
                );
            }
            let inner = level + 1;
            let mut s = format!("if {} {{\n", e(cond));
            block(&mut s, cx, then_block, inner);
            indent(&mut s, inner);
            let _ = writeln!(s, "{}", expr(cx, then_value, inner));
            indent(&mut s, level);
            s.push_str("} else {\n");
            block(&mut s, cx, else_block, inner);
            indent(&mut s, inner);
            let _ = writeln!(s, "{}", expr(cx, else_value, inner));
            indent(&mut s, level);
            s.push('}');
            s
        }
        ExprKind::Load(p) => place(cx, p, level),
        ExprKind::Call { func, args } => call(cx, *func, args, level),
        ExprKind::Math(f, args) => format!("{}({})", math_name(*f), list(args)),
        ExprKind::Atomic { op, place: p, args } => {
            let name = match op {
                AtomicOp::Add => "atomic_add",
                AtomicOp::Max => "atomic_max",
                AtomicOp::Min => "atomic_min",
                AtomicOp::Cas => "atomic_cas",
            };
            let mut all = vec![place(cx, p, level)];
            all.extend(args.iter().map(e));
            format!("{name}({})", all.join(", "))
        }
        ExprKind::Warp(op, args) => format!("{}({})", warp_name(*op), list(args)),
        ExprKind::BarrierTest {
            barrier,
            parity: p,
            acquire,
            ..
        } => format!(
            "barrier.{} {} parity={}",
            match acquire {
                Scope::Cta => "test",
                Scope::Cluster => "test_cluster",
            },
            barrier_ref(cx, barrier, level),
            parity(cx, p, level)
        ),
    }
}

fn call(cx: Cx, func: FuncId, args: &[Expr], level: usize) -> String {
    let name = cx
        .module
        .functions
        .get(func.index())
        .map_or_else(|| format!("?fn#{}", func.0), |f| f.name.clone());
    let args: Vec<String> = args.iter().map(|a| expr(cx, a, level)).collect();
    format!("{name}({})", args.join(", "))
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
    }
}

fn math_name(f: MathFn) -> &'static str {
    match f {
        MathFn::Min => "min",
        MathFn::Max => "max",
        MathFn::Abs => "abs",
        MathFn::Sqrt => "sqrt",
        MathFn::Rsqrt => "rsqrt",
        MathFn::Exp2 => "exp2",
        MathFn::Log2 => "log2",
        MathFn::Exp => "exp",
        MathFn::Log => "log",
        MathFn::Sin => "sin",
        MathFn::Cos => "cos",
        MathFn::Fma => "fma",
    }
}

fn warp_name(op: WarpOp) -> &'static str {
    match op {
        WarpOp::ShflDown => "shfl_down",
        WarpOp::ShflUp => "shfl_up",
        WarpOp::ShflXor => "shfl_xor",
        WarpOp::ShflIdx => "shfl_idx",
        WarpOp::Ballot => "ballot",
        WarpOp::Any => "any",
        WarpOp::All => "all",
    }
}

#[cfg(test)]
mod tests;
