//! The IR printer on modules built by hand.

use super::print;
use crate::ir::*;
use crate::span::Span;
use crate::types::Scalar;

fn sp() -> Span {
    Span::default()
}

fn ex(kind: ExprKind, ty: Scalar) -> Expr {
    Expr::new(kind, ty, sp())
}

fn int(v: i128, ty: Scalar) -> Expr {
    ex(ExprKind::Const(Value::Int(v)), ty)
}

fn local(id: u32, ty: Scalar) -> Expr {
    ex(ExprKind::Local(LocalId(id)), ty)
}

fn st(kind: StmtKind) -> Stmt {
    Stmt::new(kind, sp())
}

fn loc(name: &str, ty: Scalar) -> Local {
    Local::scalar(name, ty, false, sp())
}

fn bref(group: u32, index: Option<Expr>) -> BarrierRef {
    BarrierRef {
        group: BarrierId(group),
        index: index.map(Box::new),
        span: sp(),
    }
}

fn barrier(kind: BarrierOpKind, r: BarrierRef) -> Stmt {
    st(StmtKind::Barrier(Box::new(BarrierOp {
        kind,
        barrier: r,
        method_span: sp(),
    })))
}

fn group(name: &str, scope: Scope, count: u32, arrivals: u32) -> BarrierGroup {
    BarrierGroup {
        name: name.into(),
        scope,
        count,
        arrivals,
        spans: BarrierSpans {
            decl: sp(),
            name: sp(),
            count: None,
            scope: sp(),
            arrivals: sp(),
        },
        failed: Default::default(),
        guards: Vec::new(),
    }
}

fn pipeline_kernel() -> Kernel {
    use Scalar::*;
    let s = ex(
        ExprKind::Binary(
            BinOp::Rem,
            Box::new(ex(ExprKind::Special(Special::ThreadIdx(Dim::X)), U32)),
            Box::new(int(2, U32)),
        ),
        U32,
    );
    let tile_at = |i: Expr| Place {
        kind: PlaceKind::Shared {
            array: SharedId(0),
            indices: vec![local(0, U32), i],
        },
        elem: F32,
        span: sp(),
    };
    let out_at = |i: Expr| Place {
        kind: PlaceKind::Global {
            param: ParamId(0),
            index: i,
        },
        elem: F32,
        span: sp(),
    };
    let body = vec![
        st(StmtKind::Let {
            local: LocalId(0),
            value: s,
        }),
        st(StmtKind::Let {
            local: LocalId(1),
            value: ex(ExprKind::Const(Value::Float(0.0)), F32),
        }),
        barrier(
            BarrierOpKind::Arrive { count: None },
            bref(0, Some(local(0, U32))),
        ),
        barrier(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            bref(0, Some(local(0, U32))),
        ),
        barrier(
            BarrierOpKind::WaitCluster {
                parity: Parity::Explicit(int(0, U32)),
            },
            bref(1, None),
        ),
        st(StmtKind::For {
            var: LocalId(2),
            start: Box::new(int(0, U32)),
            end: Box::new(int(64, U32)),
            step: Box::new(int(1, U32)),
            body: Block {
                stmts: vec![st(StmtKind::Assign {
                    local: LocalId(1),
                    value: ex(
                        ExprKind::Binary(
                            BinOp::Add,
                            Box::new(local(1, F32)),
                            Box::new(ex(ExprKind::Load(Box::new(tile_at(local(2, U32)))), F32)),
                        ),
                        F32,
                    ),
                })],
                span: sp(),
            },
            unroll: None,
        }),
        st(StmtKind::If {
            cond: Box::new(ex(
                ExprKind::BarrierTest {
                    barrier: Box::new(bref(0, Some(int(1, U32)))),
                    parity: Box::new(Parity::Explicit(int(1, U32))),
                    acquire: Scope::Cta,
                    method_span: sp(),
                },
                Bool,
            )),
            then_block: Block {
                stmts: vec![st(StmtKind::Store {
                    place: Box::new(out_at(ex(
                        ExprKind::Special(Special::ThreadIdx(Dim::X)),
                        U32,
                    ))),
                    op: Some(BinOp::Add),
                    value: local(1, F32),
                })],
                span: sp(),
            },
            else_block: None,
        }),
    ];
    Kernel {
        name: "pipe".into(),
        name_span: sp(),
        span: sp(),
        params: vec![Param {
            name: "out".into(),
            span: sp(),
            ty: ParamType::Global {
                elem: F32,
                mutable: true,
                written: true,
            },
        }],
        block: Some([128, 1, 1]),
        cluster: Some([2, 1, 1]),
        shared: vec![SharedArray {
            name: "tile".into(),
            elem: F32,
            dims: vec![2, 64],
            swizzle: crate::ir::Swizzle::None,
            span: sp(),
        }],
        barriers: vec![
            group("full", Scope::Cta, 2, 1),
            group("peer", Scope::Cluster, 1, 2),
        ],
        named_barriers: vec![],
        accums: vec![],
        instance: None,
        body: Body::new(
            vec![loc("s", U32), loc("acc", F32), loc("i", U32)],
            Block {
                stmts: body,
                span: sp(),
            },
        ),
    }
}

#[test]
fn prints_a_kernel_with_barrier_groups() {
    let m = Module {
        kernels: vec![pipeline_kernel()],
        ..Module::default()
    };
    let expected = "\
kernel pipe block(128, 1, 1) cluster(2, 1, 1) {
    param out: global mut [f32]  // written
    shared tile: [f32; 2, 64]  // #0, 512 bytes
    barrier full[2]: cta(arrivals = 1)  // group #0
    barrier peer[1]: cluster(arrivals = 2)  // group #1

    let %0 s: u32 = (thread_idx.x % 2u32)
    let %1 acc: f32 = 0.0f32
    barrier.arrive full[%0]
    barrier.wait full[%0] parity=tracked
    barrier.wait_cluster peer parity=0u32
    for %2 i: u32 in 0u32..64u32 step 1u32 {
        %1 = (%1 + tile[%0, %2])
    }
    if barrier.test full[1u32] parity=1u32 {
        out[thread_idx.x] += %1
    }
}
";
    assert_eq!(print(&m), expected);
}

#[test]
fn prints_functions_calls_and_if_expressions() {
    use Scalar::*;
    let f = Function {
        name: "clamp01".into(),
        span: sp(),
        params: 1,
        ret: Some(F32),
        body: Body::new(
            vec![loc("x", F32), loc("t", F32)],
            Block {
                stmts: vec![st(StmtKind::Return(Some(ex(
                    ExprKind::If {
                        cond: Box::new(ex(
                            ExprKind::Binary(
                                BinOp::Lt,
                                Box::new(local(0, F32)),
                                Box::new(ex(ExprKind::Const(Value::Float(0.0)), F32)),
                            ),
                            Bool,
                        )),
                        then_block: Box::new(Block {
                            stmts: vec![st(StmtKind::Let {
                                local: LocalId(1),
                                value: ex(ExprKind::Math(MathFn::Abs, vec![local(0, F32)]), F32),
                            })],
                            span: sp(),
                        }),
                        then_value: Box::new(local(1, F32)),
                        else_block: Box::default(),
                        else_value: Box::new(ex(ExprKind::Cast(Box::new(int(-1, I32))), F32)),
                    },
                    F32,
                ))))],
                span: sp(),
            },
        ),
    };
    let k = Kernel {
        name: "k".into(),
        name_span: sp(),
        span: sp(),
        params: vec![Param {
            name: "a".into(),
            span: sp(),
            ty: ParamType::Scalar(F32),
        }],
        block: None,
        cluster: None,
        shared: vec![],
        barriers: vec![],
        named_barriers: vec![],
        accums: vec![],
        instance: None,
        body: Body::new(
            vec![],
            Block {
                stmts: vec![
                    st(StmtKind::Expr(ex(
                        ExprKind::Call {
                            func: FuncId(0),
                            args: vec![ex(ExprKind::Param(ParamId(0)), F32)],
                        },
                        F32,
                    ))),
                    // A handle that does not resolve prints, it does not panic.
                    st(StmtKind::Expr(ex(
                        ExprKind::Call {
                            func: FuncId(9),
                            args: vec![],
                        },
                        F32,
                    ))),
                    st(StmtKind::Call {
                        func: FuncId(0),
                        args: vec![ex(ExprKind::Const(Value::Float(2.0)), F32)],
                    }),
                    st(StmtKind::SyncThreads),
                    st(StmtKind::Return(None)),
                ],
                span: sp(),
            },
        ),
    };
    let m = Module {
        functions: vec![f],
        kernels: vec![k],
    };
    let expected = "\
fn clamp01(%0 x: f32) -> f32 {
    return if (%0 < 0.0f32) {
        let %1 t: f32 = abs(%0)
        %1
    } else {
        (-1i32 as f32)
    }
}

kernel k {
    param a: f32

    clamp01(a)
    ?fn#9()
    call clamp01(2.0f32)
    sync_threads
    return
}
";
    assert_eq!(print(&m), expected);
}

#[test]
fn empty_module_prints_nothing() {
    assert_eq!(print(&Module::default()), "");
}
