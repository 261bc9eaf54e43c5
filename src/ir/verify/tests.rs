//! Each invariant, broken on purpose in IR the checker built: the verifier
//! must say so, and must accept the IR as built.

use super::*;
use crate::ir::visit_mut::{walk_expr_mut, walk_stmt_mut, VisitMut};
use crate::ir::{BarrierId, BinOp, ExprId, ExprKind, LocalId, ParamId, StmtId, Value};
use crate::types::Scalar;

const SRC: &str = "
fn twice(x: f32) -> f32 { return x * 2.0; }
fn bump(p: u32) { let q = p + 1; twice(q as f32); }
kernel k(x: global [f32], out: global mut [f32], n: u32) block(128) cluster(2) {
    shared tile: [f32; 128];
    barrier full[2]: cta(arrivals = 128);
    let tid = thread_idx.x;
    let mut acc = 0.0;
    for i in 0..n {
        if i > 7u32 { break; }
        acc += x[i];
    }
    tile[tid] = twice(acc);
    bump(tid);
    full[tid % 2].arrive();
    full[0].wait();
    cluster_sync();
    out[tid] = tile[tid];
}
";

fn module() -> Module {
    let opts = crate::Options {
        check_only: true,
        ..crate::Options::default()
    };
    let c = crate::compile_str("t.kdsl", SRC, &opts);
    assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
    c.module.expect("a module")
}

/// The messages of the verifier's errors.
fn errors(m: &Module, mode: Mode) -> Vec<String> {
    match super::module(m, mode) {
        Ok(()) => Vec::new(),
        Err(es) => es.into_iter().map(|e| e.message).collect(),
    }
}

#[track_caller]
fn assert_error(m: &Module, mode: Mode, needle: &str) {
    let es = errors(m, mode);
    assert!(
        es.iter().any(|e| e.contains(needle)),
        "expected an error containing {needle:?}, got {es:#?}"
    );
}

fn kernel(m: &mut Module) -> &mut Kernel {
    m.kernels.first_mut().expect("a kernel")
}

/// Applies `f` to every expression of the kernel until it returns true.
fn edit_expr(m: &mut Module, f: impl FnMut(&mut Expr) -> bool) {
    struct Edit<F>(F, bool);
    impl<F: FnMut(&mut Expr) -> bool> VisitMut for Edit<F> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if self.1 {
                return;
            }
            if (self.0)(e) {
                self.1 = true;
                return;
            }
            walk_expr_mut(self, e);
        }
    }
    let mut e = Edit(f, false);
    e.visit_block_mut(&mut kernel(m).body.block);
    assert!(e.1, "nothing was edited");
}

/// Applies `f` to every statement of the kernel until it returns true.
fn edit_stmt(m: &mut Module, f: impl FnMut(&mut Stmt) -> bool) {
    struct Edit<F>(F, bool);
    impl<F: FnMut(&mut Stmt) -> bool> VisitMut for Edit<F> {
        fn visit_stmt_mut(&mut self, s: &mut Stmt) {
            if self.1 {
                return;
            }
            if (self.0)(s) {
                self.1 = true;
                return;
            }
            walk_stmt_mut(self, s);
        }
    }
    let mut e = Edit(f, false);
    e.visit_block_mut(&mut kernel(m).body.block);
    assert!(e.1, "nothing was edited");
}

#[test]
fn the_checkers_ir_verifies() {
    let m = module();
    assert_eq!(errors(&m, Mode::Complete), Vec::<String>::new());
    assert_eq!(errors(&m, Mode::Partial), Vec::<String>::new());
}

#[test]
fn ids_are_unique_and_of_their_body() {
    let mut m = module();
    let first = kernel(&mut m).body.block.stmts.first().map(|s| s.id);
    let mut n = 0;
    edit_stmt(&mut m, |s| {
        n += 1;
        if n == 2 {
            s.id = first.unwrap_or(StmtId(0));
        }
        n == 2
    });
    assert_error(&m, Mode::Complete, "is used twice");

    let mut m = module();
    edit_expr(&mut m, |e| {
        e.id = ExprId::NONE;
        true
    });
    assert_error(&m, Mode::Partial, "is not of this body");
}

#[test]
fn handles_name_what_exists() {
    let mut m = module();
    edit_expr(&mut m, |e| match e.kind {
        ExprKind::Local(_) => {
            e.kind = ExprKind::Local(LocalId(99));
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "local 99 does not exist");

    let mut m = module();
    edit_expr(&mut m, |e| match e.kind {
        ExprKind::Param(_) => {
            e.kind = ExprKind::Param(ParamId(0));
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "global array `x` read as a value");

    let mut m = module();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::Barrier(op) => {
            op.barrier.group = BarrierId(5);
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "barrier group 5 does not exist");

    let mut m = module();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::Call { func, .. } => {
            *func = FuncId(9);
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "function 9 does not exist");
}

#[test]
fn types_match_without_implicit_conversions() {
    // `let tid = thread_idx.x` given an f32 value: a conversion left out.
    let mut m = module();
    edit_expr(&mut m, |e| match e.kind {
        ExprKind::Special(_) => {
            e.ty = Scalar::F32;
            true
        }
        _ => false,
    });
    assert_error(
        &m,
        Mode::Partial,
        "a built-in value has type f32, expected u32",
    );
    assert_error(&m, Mode::Partial, "the value has type f32, expected u32");

    // The operands of `+` disagree.
    let mut m = module();
    edit_expr(&mut m, |e| match &mut e.kind {
        ExprKind::Binary(BinOp::Add, _, b) => {
            b.ty = Scalar::U64;
            b.kind = ExprKind::Const(Value::Int(1));
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "the right operand has type u64");

    // A constant that is not a value of its type.
    let mut m = module();
    edit_expr(&mut m, |e| match e.kind {
        ExprKind::Const(Value::Int(_)) if e.ty == Scalar::U32 => {
            e.kind = ExprKind::Const(Value::Int(-1));
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "is not a value of u32");

    // A call with an argument of the wrong type.
    let mut m = module();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::Call { args, .. } => {
            args.clear();
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "`bump` takes 1 arguments, 0 given");
}

#[test]
fn control_flow_is_structured() {
    let mut m = module();
    let span = kernel(&mut m).span;
    let stmts = &mut kernel(&mut m).body.block.stmts;
    stmts.push(Stmt::new(StmtKind::Break, span));
    // A fresh id, so that only the `break` is wrong.
    let k = kernel(&mut m);
    if let Some(s) = k.body.block.stmts.last_mut() {
        s.id = k.body.ids.stmt();
    }
    assert_error(&m, Mode::Partial, "`break`/`continue` outside a loop");

    let mut m = module();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::Break => {
            s.kind = StmtKind::Return(Some(Expr::new(
                ExprKind::Const(Value::Int(0)),
                Scalar::U32,
                s.span,
            )));
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a kernel returns a value");
}

#[test]
fn spans_are_present() {
    let mut m = module();
    edit_expr(&mut m, |e| {
        e.span = e.span.end_point();
        true
    });
    assert_error(&m, Mode::Partial, "an expression has no span");
}

#[test]
fn complete_modules_hold_no_poisoned_statements_or_unchecked_references() {
    let mut m = module();
    edit_stmt(&mut m, |s| match s.kind {
        StmtKind::ClusterSync => {
            s.kind = StmtKind::Poisoned {
                groups: vec![BarrierId(0)],
                blocks: Vec::new(),
            };
            true
        }
        _ => false,
    });
    assert_eq!(errors(&m, Mode::Partial), Vec::<String>::new());
    assert_error(&m, Mode::Complete, "a statement that failed to check");

    let mut m = module();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::Barrier(op) if op.barrier.index.is_some() => {
            op.barrier.index = None;
            true
        }
        _ => false,
    });
    assert_eq!(errors(&m, Mode::Partial), Vec::<String>::new());
    assert_error(&m, Mode::Complete, "unindexed reference to `full` of 2");
}

#[test]
fn stores_go_through_written_parameters() {
    let mut m = module();
    for p in &mut kernel(&mut m).params {
        if let ParamType::Global { written, .. } = &mut p.ty {
            *written = false;
        }
    }
    assert_error(&m, Mode::Partial, "`out` is written but not marked so");
}

#[test]
fn barrier_groups_have_counts_the_hardware_allows() {
    let mut m = module();
    if let Some(g) = kernel(&mut m).barriers.first_mut() {
        g.arrivals = 0;
        g.count = 65;
    }
    assert_error(&m, Mode::Partial, "holds 65 barriers");
    assert_error(&m, Mode::Partial, "expects 0 arrivals");
}

#[test]
fn the_call_graph_has_no_cycles_in_a_complete_module() {
    let mut m = module();
    // `bump` calls itself.
    let span = m.functions.get(1).map(|f| f.span).unwrap_or_default();
    if let Some(f) = m.functions.get_mut(1) {
        let arg = f.body.expr(ExprKind::Local(LocalId(0)), Scalar::U32, span);
        let call = f.body.stmt(
            StmtKind::Call {
                func: FuncId(1),
                args: vec![arg],
            },
            span,
        );
        f.body.block.stmts.push(call);
    }
    assert_eq!(errors(&m, Mode::Partial), Vec::<String>::new());
    assert_error(
        &m,
        Mode::Complete,
        "the call graph has a cycle through `bump`",
    );
}

#[test]
fn vector_accesses_have_2_or_4_elements_of_at_most_16_bytes() {
    let src = "kernel v(x: global [f32], y: global mut [f32]) block(32) {
        let (a, b, c, d) = load4(x[thread_idx.x * 4]);
        store4(y[thread_idx.x * 4], d, c, b, a);
    }";
    let opts = crate::Options {
        check_only: true,
        ..crate::Options::default()
    };
    let build = || {
        let c = crate::compile_str("v.kdsl", src, &opts);
        assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
        c.module.expect("a module")
    };
    let m = build();
    assert!(errors(&m, Mode::Complete).is_empty());
    // Three elements: no `.v3` in PTX.
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::LoadVector { locals, .. } => {
            locals.pop();
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a vector access of 3 elements");
    // Four `f64`s: 32 bytes (the values and locals then mismatch too).
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::StoreVector { place, .. } => {
            place.elem = Scalar::F64;
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a vector access of 4 f64 elements");
    // A local of another type than the element.
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::LoadVector { place, .. } => {
            place.elem = Scalar::U32;
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a vector load's local");
}

#[test]
fn matrix_accesses_move_1_2_or_4_matrices_of_16_bit_shared_elements() {
    let src = "kernel m(y: global mut [f16x2]) block(32) {
        shared t: [f16; 16, 16];
        t[lane_id % 16, lane_id / 16] = 1.0;
        sync_threads();
        let (a, b) = ldmatrix_x2(t[lane_id % 16, 0]);
        stmatrix_x2(t[lane_id % 16, 8], b, a, trans = true);
        y[lane_id] = a + b;
    }";
    let opts = crate::Options {
        check_only: true,
        ..crate::Options::default()
    };
    let build = || {
        let c = crate::compile_str("m.kdsl", src, &opts);
        assert!(c.diagnostics.is_empty(), "{:#?}", c.diagnostics);
        c.module.expect("a module")
    };
    assert!(errors(&build(), Mode::Complete).is_empty());
    // Three matrices: no `.x3`.
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::StoreVector {
            values,
            matrix: Some(_),
            ..
        } => {
            values.push(values[0].clone());
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a matrix access of 3 matrices");
    // 32-bit elements (the locals then mismatch too).
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::LoadVector {
            place,
            matrix: Some(_),
            ..
        } => {
            place.elem = Scalar::F32;
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a matrix access of f32 elements");
    // A register of another type than the elements' pair.
    let mut m = build();
    edit_stmt(&mut m, |s| match &mut s.kind {
        StmtKind::LoadVector {
            place,
            matrix: Some(_),
            ..
        } => {
            place.elem = Scalar::BF16;
            true
        }
        _ => false,
    });
    assert_error(&m, Mode::Partial, "a vector load's local");
}
