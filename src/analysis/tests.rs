//! The facts, looked up by node id in modules the checker built.

use super::*;
use crate::ir::visit::{self, Visit};
use crate::ir::{Expr, Module, Special, Stmt, StmtKind};

fn module(src: &str) -> (crate::Compilation, Module) {
    let opts = crate::Options {
        check_only: true,
        ..crate::Options::default()
    };
    let c = crate::compile_str("t.kdsl", src, &opts);
    let m = c.module.clone().expect("a module");
    (c, m)
}

/// The source text of `span` in `c`.
fn text(c: &crate::Compilation, span: Span) -> &str {
    c.sources.slice(span)
}

/// Every statement and expression of the first kernel, in walk order.
fn nodes(m: &Module) -> (Vec<&Stmt>, Vec<&Expr>) {
    #[derive(Default)]
    struct All<'ir>(Vec<&'ir Stmt>, Vec<&'ir Expr>);
    impl<'ir> Visit<'ir> for All<'ir> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.0.push(s);
            visit::walk_stmt(self, s);
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            self.1.push(e);
            visit::walk_expr(self, e);
        }
    }
    let mut all = All::default();
    if let Some(k) = m.kernels.first() {
        all.visit_block(&k.body.block);
    }
    (all.0, all.1)
}

/// The statement whose source text is `src`.
fn stmt<'m>(c: &crate::Compilation, m: &'m Module, src: &str) -> &'m Stmt {
    let (stmts, _) = nodes(m);
    stmts
        .into_iter()
        .find(|s| text(c, s.span).trim_end_matches(';') == src.trim_end_matches(';'))
        .unwrap_or_else(|| panic!("no statement `{src}`"))
}

/// The expression whose source text is `src`.
fn expr<'m>(c: &crate::Compilation, m: &'m Module, src: &str) -> &'m Expr {
    let (_, exprs) = nodes(m);
    exprs
        .into_iter()
        .find(|e| {
            let t = text(c, e.span);
            t.strip_prefix('(')
                .and_then(|t| t.strip_suffix(')'))
                .unwrap_or(t)
                == src
        })
        .unwrap_or_else(|| panic!("no expression `{src}`"))
}

const UNIFORMITY: &str = "
kernel k(out: global mut [u32], n: u32) block(64) cluster(2) {
    let t = thread_idx.x;
    let mut m = n;
    if n > 3 { out[0] = 1; }
    if t < 3 { m = 5; out[1] = 2; }
    out[2] = m;
    for i in 0..n {
        if t == i { break; }
        out[3] = i;
    }
    cluster_sync();
    out[4] = select(n > 1 && t > 1, 1, 2);
}
";

#[test]
fn divergence_is_exact_and_keyed_by_statement() {
    let (c, m) = module(UNIFORMITY);
    let info = analyze(&m);
    let k = &info.kernels[0].body;
    // Under a uniform condition: every thread, or none.
    assert_eq!(k.divergence(stmt(&c, &m, "out[0] = 1;").id), None);
    // Under `t < 3`.
    let d = k.divergence(stmt(&c, &m, "out[1] = 2;").id);
    assert_eq!(d.map(|s| text(&c, s)), Some("t < 3"));
    // After the `if`: every thread again.
    assert_eq!(k.divergence(stmt(&c, &m, "out[2] = m;").id), None);
    // A loop some of whose threads break early: its whole body diverges,
    // also before the `break` (later iterations).
    let d = k.divergence(stmt(&c, &m, "out[3] = i;").id);
    assert_eq!(d.map(|s| text(&c, s)), Some("t == i"));
    assert_eq!(k.divergence(stmt(&c, &m, "cluster_sync();").id), None);
    // The right side of `&&` runs where the left side let it.
    let d = k.expr_divergence(expr(&c, &m, "t > 1").id);
    assert_eq!(d, None, "the left side is uniform");
}

#[test]
fn values_vary_with_the_thread_and_what_it_assigned() {
    let (c, m) = module(UNIFORMITY);
    let info = analyze(&m);
    let k = &info.kernels[0].body;
    assert!(k.varies(expr(&c, &m, "thread_idx.x").id));
    assert!(!k.varies(expr(&c, &m, "n > 3").id));
    // `m` is assigned under `t < 3`: it varies everywhere.
    assert!(k.varies(expr(&c, &m, "m").id));
    assert!(k.varies(expr(&c, &m, "n > 1 && t > 1").id));
    assert!(!k.varies(expr(&c, &m, "n > 1").id));
}

#[test]
fn expression_flags() {
    let src = "
kernel k(x: global [u32], out: global mut [u32], n: u32) block(32) {
    let mut a = n;
    out[0] = select(n > 1 && x[n] > 2, 1, 2) + (if n > 2 { a = 3; a } else { 4 });
    out[1] = select(n > 1 && n < 9, a, 5);
}
";
    let (c, m) = module(src);
    let info = analyze(&m);
    let k = &info.kernels[0].body;
    assert!(!k.speculatable(expr(&c, &m, "x[n] > 2").id), "a load");
    assert!(k.speculatable(expr(&c, &m, "n < 9").id));
    assert!(k.may_assign(expr(&c, &m, "if n > 2 { a = 3; a } else { 4 }").id));
    assert!(!k.may_assign(expr(&c, &m, "select(n > 1 && n < 9, a, 5)").id));
    assert!(
        k.may_assign(
            expr(
                &c,
                &m,
                "select(n > 1 && x[n] > 2, 1, 2) + (if n > 2 { a = 3; a } else { 4 })"
            )
            .id
        ),
        "through its operand"
    );
}

#[test]
fn usage_calls_and_summaries() {
    let src = "
fn leaf() -> u32 { return lane_id; }
fn mid(v: u32) -> u32 { sync_threads(); return v + leaf(); }
fn unused() { }
kernel k(out: global mut [u32]) block(32) {
    out[warp_id] = mid(block_idx.x);
}
";
    let (_, m) = module(src);
    let info = analyze(&m);
    assert_eq!(info.call_order, vec![FuncId(0), FuncId(1)]);
    let k = &info.kernels[0].body;
    assert_eq!(
        k.usage.specials,
        vec![
            Special::ThreadIdx(ir::Dim::X),
            Special::ThreadIdx(ir::Dim::Y),
            Special::ThreadIdx(ir::Dim::Z),
            Special::BlockDim(ir::Dim::X),
            Special::BlockDim(ir::Dim::Y),
            Special::WarpId,
            Special::BlockIdx(ir::Dim::X),
        ]
    );
    assert_eq!(k.usage.calls, vec![FuncId(1)]);
    let leaf = &info.functions[0];
    assert!(leaf.varying_result, "lane_id");
    assert_eq!(leaf.sync, None);
    let mid = &info.functions[1];
    assert_eq!(mid.sync, Some(CtaSync::Threads));
    assert!(mid.varying_result, "through leaf()");
}

#[test]
fn facts_fit_only_their_body() {
    let (_, m) = module(UNIFORMITY);
    let info = analyze(&m);
    let mut changed = m.clone();
    let k = &mut changed.kernels[0];
    let span = k.span;
    let extra = k.body.stmt(StmtKind::SyncThreads, span);
    k.body.block.stmts.push(extra);
    assert!(info.kernels[0].body.fits(&m.kernels[0].body));
    assert!(!info.kernels[0].body.fits(&changed.kernels[0].body));
    // Out of the table: assumed the worst.
    let k = &info.kernels[0].body;
    assert!(k.divergence(ir::StmtId(9999)).is_some());
    assert!(k.varies(ir::ExprId(9999)));
    assert!(k.may_assign(ir::ExprId(9999)));
    assert!(!k.speculatable(ir::ExprId(9999)));
}

/// What is known of immutable locals: at the top level once, and per run of
/// the loops over constant lists around them (nested runs numbered
/// outermost first); a read outside the runs knows nothing of them.
#[test]
fn values_of_immutable_locals_per_element() {
    let src = "kernel k(out: global mut [u32], n: u32) block(64) {
    let base = 4u32;
    let lane = thread_idx.x * 8;
    for a in [1u32, 2] {
        for b in [10u32, 20, 30] {
            let t = a * b + base;
            out[t] = lane;
        }
    }
    for i in 0u32..n step 4 {
        out[i] = n;
    }
}";
    let (c, m) = module(src);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let info = analyze(&m);
    let k = &m.kernels[0];
    let values = &info.kernels[0].body.values;
    let local = |name: &str| {
        LocalId(
            k.body
                .locals
                .iter()
                .position(|l| l.name == name)
                .expect(name) as u32,
        )
    };
    let top = values::At::TOP;
    assert_eq!(
        values.local(local("base"), top).value,
        Some(ir::Value::Int(4))
    );
    let lane = values.local(local("lane"), top);
    assert_eq!(
        (lane.value, lane.range, lane.low_bits),
        (None, Some((0, 504)), (3, 0))
    );
    // The loop variable: `0 + 4k`.
    assert_eq!(values.local(local("i"), top).low_bits, (2, 0));
    let (stmts, _) = nodes(&m);
    let lists: Vec<&Stmt> = stmts
        .iter()
        .copied()
        .filter(|s| matches!(s.kind, StmtKind::ForList { .. }))
        .collect();
    let [outer, inner] = lists.as_slice() else {
        panic!("two loops over lists: {lists:?}");
    };
    let mut seen = Vec::new();
    for at_a in values.runs(top, outer.id) {
        assert!(values.local(local("a"), at_a).element);
        for at_b in values.runs(at_a, inner.id) {
            let t = values.local(local("t"), at_b);
            let v = |l| match values.local(local(l), at_b).value {
                Some(ir::Value::Int(v)) => v,
                other => panic!("{l}: {other:?}"),
            };
            assert_eq!(t.value, Some(ir::Value::Int(v("a") * v("b") + 4)));
            assert!(!t.element, "a `let` is no element");
            seen.push((v("a"), v("b")));
        }
    }
    assert_eq!(seen, [(1, 10), (1, 20), (1, 30), (2, 10), (2, 20), (2, 30)]);
    assert_eq!(values.local(local("t"), top), values::Known::default());
}
