//! Hand-built IR for the kernels the PTX writer's tests compile: the bench
//! kernels (saxpy, reduce_sum, sgemm_tiled, pipeline_sum, cluster_sum) and
//! kernels that exercise every operator, conversion and barrier operation.
#![allow(dead_code)]

use super::*;
use kdsl::ir::{
    AtomicOp, BarrierOpKind, Dim::*, MemOrder, MemScope, MemSem, Parity, Special::*, StmtKind,
};

/// y[i] = a * x[i] + y[i]
pub fn saxpy() -> Kernel {
    let mut k = KernelBuilder::new("saxpy");
    k.block = Some([256, 1, 1]);
    let a = k.scalar("a", F32);
    let x = k.global("x", F32, false);
    let y = k.global("y", F32, true);
    let n = k.scalar("n", U32);
    let i = k.local("i", U32);
    let iv = i.1.clone();
    k.finish(vec![
        let_(
            i,
            add(mul(special(BlockIdx(X)), special(BlockDim(X))), tid(X)),
        ),
        if_(
            lt(iv.clone(), n),
            vec![store(
                gplace(y, iv.clone(), F32),
                add(
                    mul(a, load(gplace(x, iv.clone(), F32))),
                    load(gplace(y, iv, F32)),
                ),
            )],
        ),
    ])
}

/// `acc += shfl_down(acc, d)` for d = 16, 8, ..., 1.
fn warp_sum(k: &mut KernelBuilder, acc: &(kdsl::ir::LocalId, Expr), start: u32) -> Vec<Stmt> {
    let d = k.local("d", U32);
    let dv = d.1.clone();
    vec![
        let_(d.clone(), u32c(start)),
        while_(
            bin(BinOp::Gt, dv.clone(), u32c(0)),
            vec![
                assign(
                    acc,
                    add(
                        acc.1.clone(),
                        warp(WarpOp::ShflDown, vec![acc.1.clone(), dv.clone()]),
                    ),
                ),
                assign(&d, bin(BinOp::Shr, dv, u32c(1))),
            ],
        ),
    ]
}

/// out[0] += sum(x): grid-stride loop, shuffles, shared partials, one atomic.
pub fn reduce_sum() -> Kernel {
    let mut k = KernelBuilder::new("reduce_sum");
    k.block = Some([256, 1, 1]);
    let x = k.global("x", F32, false);
    let out = k.global("out", F32, true);
    let n = k.scalar("n", U32);
    let partial = k.shared("partial", F32, &[8]);
    let acc = k.local("acc", F32);
    let i = k.local("i", U32);
    let v = k.local("v", F32);
    let mut body = vec![
        let_(acc.clone(), f32c(0.0)),
        for_(
            &i,
            add(mul(special(BlockIdx(X)), u32c(256)), tid(X)),
            n,
            mul(special(GridDim(X)), u32c(256)),
            vec![assign(
                &acc,
                add(acc.1.clone(), load(gplace(x, i.1.clone(), F32))),
            )],
        ),
    ];
    body.extend(warp_sum(&mut k, &acc, 16));
    body.push(if_(
        eq(special(LaneId), u32c(0)),
        vec![store(
            splace(partial, vec![special(WarpId)], F32),
            acc.1.clone(),
        )],
    ));
    body.push(st(StmtKind::SyncThreads));
    let mut inner = vec![let_(
        v.clone(),
        if_expr(
            lt(special(LaneId), u32c(8)),
            vec![],
            load(splace(partial, vec![special(LaneId)], F32)),
            vec![],
            f32c(0.0),
        ),
    )];
    inner.extend(warp_sum(&mut k, &v, 4));
    inner.push(if_(
        eq(special(LaneId), u32c(0)),
        vec![expr_stmt(atomic(
            AtomicOp::Add,
            gplace(out, u32c(0), F32),
            vec![v.1.clone()],
        ))],
    ));
    body.push(if_(eq(special(WarpId), u32c(0)), inner));
    k.finish(body)
}

/// c = a * b with 16×16 shared tiles (2-D shared indexing).
pub fn sgemm_tiled() -> Kernel {
    let mut k = KernelBuilder::new("sgemm_tiled");
    k.block = Some([16, 16, 1]);
    let a = k.global("a", F32, false);
    let b = k.global("b", F32, false);
    let c = k.global("c", F32, true);
    let m = k.scalar("m", U32);
    let n = k.scalar("n", U32);
    let kk = k.scalar("k", U32);
    let ta = k.shared("ta", F32, &[16, 16]);
    let tb = k.shared("tb", F32, &[16, 16]);
    let tx = k.local("tx", U32);
    let ty = k.local("ty", U32);
    let row = k.local("row", U32);
    let col = k.local("col", U32);
    let acc = k.local("acc", F32);
    let t = k.local("t", U32);
    let ak = k.local("ak", U32);
    let bk = k.local("bk", U32);
    let j = k.local("j", U32);
    let (txv, tyv, rowv, colv) = (tx.1.clone(), ty.1.clone(), row.1.clone(), col.1.clone());
    let and = |p: Expr, q: Expr| bin(BinOp::And, p, q);
    let tiles = bin(BinOp::Div, add(kk.clone(), u32c(15)), u32c(16));
    let loop_body = vec![
        let_(ak.clone(), add(mul(t.1.clone(), u32c(16)), txv.clone())),
        let_(bk.clone(), add(mul(t.1.clone(), u32c(16)), tyv.clone())),
        store(
            splace(ta, vec![tyv.clone(), txv.clone()], F32),
            if_expr(
                and(lt(rowv.clone(), m.clone()), lt(ak.1.clone(), kk.clone())),
                vec![],
                load(gplace(
                    a,
                    add(mul(rowv.clone(), kk.clone()), ak.1.clone()),
                    F32,
                )),
                vec![],
                f32c(0.0),
            ),
        ),
        store(
            splace(tb, vec![tyv.clone(), txv.clone()], F32),
            if_expr(
                and(lt(bk.1.clone(), kk), lt(colv.clone(), n.clone())),
                vec![],
                load(gplace(
                    b,
                    add(mul(bk.1.clone(), n.clone()), colv.clone()),
                    F32,
                )),
                vec![],
                f32c(0.0),
            ),
        ),
        st(StmtKind::SyncThreads),
        for_(
            &j,
            u32c(0),
            u32c(16),
            u32c(1),
            vec![assign(
                &acc,
                add(
                    acc.1.clone(),
                    mul(
                        load(splace(ta, vec![tyv.clone(), j.1.clone()], F32)),
                        load(splace(tb, vec![j.1.clone(), txv.clone()], F32)),
                    ),
                ),
            )],
        ),
        st(StmtKind::SyncThreads),
    ];
    k.finish(vec![
        let_(tx, tid(X)),
        let_(ty, tid(Y)),
        let_(row, add(mul(special(BlockIdx(Y)), u32c(16)), tyv)),
        let_(col, add(mul(special(BlockIdx(X)), u32c(16)), txv)),
        let_(acc.clone(), f32c(0.0)),
        for_(&t, u32c(0), tiles, u32c(1), loop_body),
        if_(
            and(lt(rowv.clone(), m), lt(colv.clone(), n.clone())),
            vec![store(
                gplace(c, add(mul(rowv, n), colv), F32),
                acc.1.clone(),
            )],
        ),
    ])
}

/// Two-stage ring of bulk copies with full/empty barrier groups (cta scope,
/// tracked parities), as in samples/pipeline_sum.kdsl.
pub fn pipeline_sum() -> Kernel {
    let mut k = KernelBuilder::new("pipeline_sum");
    k.block = Some([128, 1, 1]);
    let x = k.global("x", F32, false);
    let out = k.global("out", F32, true);
    let chunks = k.scalar("chunks", U32);
    let buf = k.shared("buf", F32, &[2, 1024]);
    let full = k.barrier("full", Scope::Cta, 2, 1);
    let empty = k.barrier("empty", Scope::Cta, 2, 128);
    let tidl = k.local("tid", U32);
    let first = k.local("first", U32);
    let s0 = k.local("s", U32);
    let acc = k.local("acc", F32);
    let c = k.local("c", U32);
    let s = k.local("s", U32);
    let i = k.local("i", U32);
    let tv = tidl.1.clone();
    let copy = |slot: Expr, chunk: Expr| {
        st(StmtKind::CopyAsync {
            dst: Box::new(splace(buf, vec![slot.clone(), u32c(0)], F32)),
            src: Box::new(gplace(x, mul(chunk, u32c(1024)), F32)),
            bytes: Box::new(u32c(4096)),
            barrier: bref(full, Some(slot)),
        })
    };
    let expect = |slot: Expr| {
        bop(
            BarrierOpKind::ArriveExpectTx { bytes: u32c(4096) },
            bref(full, Some(slot)),
        )
    };
    let and = |p: Expr, q: Expr| bin(BinOp::And, p, q);
    k.finish(vec![
        let_(tidl, tid(X)),
        let_(first.clone(), mul(special(BlockIdx(X)), chunks.clone())),
        if_(
            eq(tv.clone(), u32c(0)),
            vec![for_(
                &s0,
                u32c(0),
                math(MathFn::Min, vec![u32c(2), chunks.clone()]),
                u32c(1),
                vec![
                    expect(s0.1.clone()),
                    copy(s0.1.clone(), add(first.1.clone(), s0.1.clone())),
                ],
            )],
        ),
        let_(acc.clone(), f32c(0.0)),
        for_(
            &c,
            u32c(0),
            chunks.clone(),
            u32c(1),
            vec![
                let_(s.clone(), bin(BinOp::Rem, c.1.clone(), u32c(2))),
                bop(
                    BarrierOpKind::Wait {
                        parity: Parity::Tracked,
                    },
                    bref(full, Some(s.1.clone())),
                ),
                for_(
                    &i,
                    tv.clone(),
                    u32c(1024),
                    u32c(128),
                    vec![assign(
                        &acc,
                        add(
                            acc.1.clone(),
                            load(splace(buf, vec![s.1.clone(), i.1.clone()], F32)),
                        ),
                    )],
                ),
                bop(
                    BarrierOpKind::Arrive { count: None },
                    bref(empty, Some(s.1.clone())),
                ),
                if_(
                    and(
                        eq(tv.clone(), u32c(0)),
                        lt(add(c.1.clone(), u32c(2)), chunks),
                    ),
                    vec![
                        bop(
                            BarrierOpKind::Wait {
                                parity: Parity::Tracked,
                            },
                            bref(empty, Some(s.1.clone())),
                        ),
                        expect(s.1.clone()),
                        copy(s.1.clone(), add(add(first.1.clone(), c.1.clone()), u32c(2))),
                    ],
                ),
            ],
        ),
        if_(
            eq(tv, u32c(0)),
            vec![expr_stmt(atomic(
                AtomicOp::Add,
                gplace(out, u32c(0), F32),
                vec![acc.1.clone()],
            ))],
        ),
    ])
}

/// Clusters of two CTAs: CTA 1 writes its value into CTA 0's shared memory
/// and arrives remotely on CTA 0's cluster-scope barrier.
pub fn cluster_sum() -> Kernel {
    let mut k = KernelBuilder::new("cluster_sum");
    k.block = Some([128, 1, 1]);
    k.cluster = Some([2, 1, 1]);
    let x = k.global("x", F32, false);
    let out = k.global("out", F32, true);
    let peer = k.shared("peer", F32, &[1]);
    let ready = k.barrier("ready", Scope::Cluster, 1, 1);
    let v = k.local("v", F32);
    k.finish(vec![
        let_(v.clone(), load(gplace(x, special(BlockIdx(X)), F32))),
        if_(
            eq(tid(X), u32c(0)),
            vec![if_else(
                eq(special(ClusterRank), u32c(1)),
                vec![
                    store(rplace(peer, u32c(0), vec![u32c(0)], F32), v.1.clone()),
                    bop(
                        BarrierOpKind::ArriveRemote { rank: u32c(0) },
                        bref(ready, None),
                    ),
                ],
                vec![
                    bop(
                        BarrierOpKind::WaitCluster {
                            parity: Parity::Explicit(u32c(0)),
                        },
                        bref(ready, None),
                    ),
                    expr_stmt(atomic(
                        AtomicOp::Add,
                        gplace(out, u32c(0), F32),
                        vec![add(v.1.clone(), load(splace(peer, vec![u32c(0)], F32)))],
                    )),
                ],
            )],
        ),
    ])
}

/// The scalar types with a memory representation, for "every type" kernels.
pub const TYPES: [Scalar; 13] = Scalar::ALL;

/// One `global [T]` input and one `global mut [T]` output per scalar type;
/// returns `(inputs, outputs)` indexed like `TYPES`.
pub fn io_params(k: &mut KernelBuilder) -> (Vec<ParamId>, Vec<ParamId>) {
    let ins = TYPES
        .iter()
        .map(|t| k.global(&format!("in_{t}"), *t, false))
        .collect();
    let outs = TYPES
        .iter()
        .map(|t| k.global(&format!("out_{t}"), *t, true))
        .collect();
    (ins, outs)
}

fn pos(t: Scalar) -> usize {
    TYPES.iter().position(|x| *x == t).unwrap_or(0)
}

/// `out_to[i] = in_from[i] as to` for every pair, plus casts of constants.
pub fn all_casts() -> Kernel {
    let mut k = KernelBuilder::new("all_casts");
    let (ins, outs) = io_params(&mut k);
    let mut body = Vec::new();
    let mut slot = 0u32;
    for from in TYPES {
        for to in TYPES {
            let v = load(gplace(ins[pos(from)], add(tid(X), u32c(slot)), from));
            body.push(store(
                gplace(outs[pos(to)], add(tid(X), u32c(slot)), to),
                cast(v, to),
            ));
            slot += 1;
        }
    }
    // Constants that reach a cast unfolded.
    let consts = [
        float(1.5, F64),
        float(-2.25, F32),
        int(-3, I32),
        int(u32::MAX.into(), U32),
        int(i64::MIN.into(), I64),
        boolc(true),
        float(0.1, F16),
        float(3.0e38, BF16),
    ];
    for c in consts {
        for to in TYPES {
            body.push(store(
                gplace(outs[pos(to)], u32c(slot), to),
                cast(c.clone(), to),
            ));
            slot += 1;
        }
    }
    k.finish(body)
}

fn ops_for(t: Scalar) -> Vec<BinOp> {
    use BinOp::*;
    let cmp = [Eq, Ne, Lt, Le, Gt, Ge];
    let mut ops: Vec<BinOp> = match t {
        Bool => vec![And, Or, BitAnd, BitOr, BitXor],
        t if t.is_int() => vec![Add, Sub, Mul, Div, Rem, BitAnd, BitOr, BitXor, Shl, Shr],
        _ => vec![Add, Sub, Mul, Div, Rem],
    };
    ops.extend(cmp);
    ops
}

/// Every binary operator on every type, from memory and with constants;
/// compound stores; unary operators.
pub fn all_binops() -> Kernel {
    let mut k = KernelBuilder::new("all_binops");
    let (ins, outs) = io_params(&mut k);
    let mut body = Vec::new();
    let mut slot = 0u32;
    let mut next = || {
        slot += 1;
        add(tid(X), u32c(slot))
    };
    for t in TYPES {
        let a = || load(gplace(ins[pos(t)], tid(X), t));
        for op in ops_for(t) {
            let rhs = load(gplace(ins[pos(t)], add(tid(X), u32c(1)), t));
            let e = bin(op, a(), rhs);
            let ty = e.ty;
            body.push(store(gplace(outs[pos(ty)], next(), ty), e));
            // With a constant right operand (and a constant left one).
            let c = match t {
                Bool => boolc(true),
                t if t.is_int() => int(3, t),
                t => float(0.5, t),
            };
            let e = bin(op, a(), c.clone());
            body.push(store(gplace(outs[pos(ty)], next(), ty), e));
            let e = bin(op, c, a());
            body.push(store(gplace(outs[pos(ty)], next(), ty), e));
            if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) {
                let p = gplace(outs[pos(t)], next(), t);
                let v = load(gplace(ins[pos(t)], add(tid(X), u32c(2)), t));
                body.push(store_op(p, op, v));
            }
        }
        if t.is_int() {
            // Shift amounts of every integer type.
            for at in [I32, U32, I64, U64] {
                for op in [BinOp::Shl, BinOp::Shr] {
                    let amount = load(gplace(ins[pos(at)], tid(X), at));
                    body.push(store(gplace(outs[pos(t)], next(), t), bin(op, a(), amount)));
                }
            }
        }
        let unary: &[UnaryOp] = match t {
            Bool => &[UnaryOp::Not],
            t if t.is_int() => &[UnaryOp::Neg, UnaryOp::Not],
            _ => &[UnaryOp::Neg],
        };
        for op in unary {
            body.push(store(gplace(outs[pos(t)], next(), t), un(*op, a())));
        }
        // select on every type.
        let c = load(gplace(ins[pos(Bool)], tid(X), Bool));
        let e = select(c, a(), load(gplace(ins[pos(t)], add(tid(X), u32c(5)), t)));
        body.push(store(gplace(outs[pos(t)], next(), t), e));
    }
    k.finish(body)
}

/// if-expressions with statements, loops with break/continue, early return,
/// lazy `&&`/`||`.
pub fn control_flow() -> Kernel {
    let mut k = KernelBuilder::new("control_flow");
    k.block = Some([64, 2, 1]);
    let x = k.global("x", I32, false);
    let out = k.global("out", I64, true);
    let n = k.scalar("n", I32);
    let flag = k.scalar("flag", Bool);
    let acc = k.local("acc", I64);
    let i = k.local("i", I32);
    let j = k.local("j", I64);
    let w = k.local("w", U32);
    let t = k.local("t", I32);
    let and = |p: Expr, q: Expr| bin(BinOp::And, p, q);
    let or = |p: Expr, q: Expr| bin(BinOp::Or, p, q);
    let x_at = |e: Expr| load(gplace(x, e, I32));
    k.finish(vec![
        let_(acc.clone(), int(0, I64)),
        // for i in -5..n step 3 (signed, dynamic end, constant step > 1)
        for_(
            &i,
            int(-5, I32),
            n.clone(),
            int(3, I32),
            vec![
                if_(
                    eq(bin(BinOp::Rem, i.1.clone(), int(7, I32)), int(0, I32)),
                    vec![st(StmtKind::Continue)],
                ),
                if_(
                    bin(BinOp::Gt, i.1.clone(), int(100, I32)),
                    vec![st(StmtKind::Break)],
                ),
                assign(&acc, add(acc.1.clone(), cast(i.1.clone(), I64))),
            ],
        ),
        // for j in 0..(n as i64) step (n as i64): 64-bit, dynamic step.
        for_(
            &j,
            int(0, I64),
            cast(n.clone(), I64),
            cast(n.clone(), I64),
            vec![assign(&acc, add(acc.1.clone(), j.1.clone()))],
        ),
        // while true { ... break; }
        let_(w.clone(), u32c(0)),
        while_(
            boolc(true),
            vec![
                assign(&w, add(w.1.clone(), u32c(1))),
                if_else(
                    lt(w.1.clone(), u32c(3)),
                    vec![st(StmtKind::Continue)],
                    vec![st(StmtKind::Break)],
                ),
            ],
        ),
        // An if-expression whose branch assigns a local read on its left.
        let_(t.clone(), int(1, I32)),
        assign(
            &t,
            add(
                t.1.clone(),
                if_expr(
                    flag.clone(),
                    vec![assign(&t, int(10, I32))],
                    t.1.clone(),
                    vec![],
                    int(2, I32),
                ),
            ),
        ),
        // Lazy: x[n] only read when n >= 0 (not speculated).
        if_(
            and(
                bin(BinOp::Ge, n.clone(), int(0, I32)),
                lt(x_at(n.clone()), int(5, I32)),
            ),
            vec![assign(&acc, add(acc.1.clone(), int(1, I64)))],
        ),
        if_(
            or(flag.clone(), eq(x_at(int(0, I32)), t.1.clone())),
            vec![assign(&acc, add(acc.1.clone(), int(2, I64)))],
        ),
        // Cheap right operand: evaluated eagerly.
        if_(
            and(flag, lt(t.1.clone(), n)),
            vec![st(StmtKind::Return(None))],
        ),
        // Constant conditions fold away.
        if_else(
            boolc(false),
            vec![st(StmtKind::Return(None))],
            vec![assign(&acc, add(acc.1.clone(), int(4, I64)))],
        ),
        while_(boolc(false), vec![st(StmtKind::Break)]),
        store(
            gplace(out, tid(Y), I64),
            add(acc.1.clone(), cast(special(WarpId), I64)),
        ),
    ])
}

/// All built-in functions, warp operations and special registers.
pub fn math_and_warp() -> Kernel {
    let mut k = KernelBuilder::new("math_and_warp");
    let (ins, outs) = io_params(&mut k);
    let mut body = Vec::new();
    let mut slot = 0u32;
    let mut next = || {
        slot += 1;
        add(tid(X), u32c(slot))
    };
    for t in TYPES {
        let a = || load(gplace(ins[pos(t)], tid(X), t));
        let b = || load(gplace(ins[pos(t)], add(tid(X), u32c(1)), t));
        let mut fns = vec![(MathFn::Min, 2), (MathFn::Max, 2), (MathFn::Abs, 1)];
        if t != Bool {
            fns.push((MathFn::Fma, 3));
        }
        if t.is_float() {
            use MathFn::*;
            fns.extend([
                (Sqrt, 1),
                (Rsqrt, 1),
                (Exp2, 1),
                (Log2, 1),
                (Exp, 1),
                (Log, 1),
                (Sin, 1),
                (Cos, 1),
            ]);
        }
        for (f, arity) in fns {
            let args = [a(), b(), a()].into_iter().take(arity).collect();
            body.push(store(gplace(outs[pos(t)], next(), t), math(f, args)));
        }
        for op in [
            WarpOp::ShflDown,
            WarpOp::ShflUp,
            WarpOp::ShflXor,
            WarpOp::ShflIdx,
        ] {
            body.push(store(
                gplace(outs[pos(t)], next(), t),
                warp(op, vec![a(), u32c(1)]),
            ));
        }
    }
    let p = || load(gplace(ins[pos(Bool)], tid(X), Bool));
    body.push(store(
        gplace(outs[pos(U32)], next(), U32),
        warp(WarpOp::Ballot, vec![p()]),
    ));
    body.push(store(
        gplace(outs[pos(Bool)], next(), Bool),
        warp(WarpOp::Any, vec![p()]),
    ));
    body.push(store(
        gplace(outs[pos(Bool)], next(), Bool),
        warp(WarpOp::All, vec![p()]),
    ));
    body.push(store(
        gplace(outs[pos(U32)], next(), U32),
        warp(
            WarpOp::ShflDown,
            vec![tid(X), load(gplace(ins[pos(U64)], tid(X), U64))],
        ),
    ));
    for s in [
        ThreadIdx(X),
        ThreadIdx(Y),
        ThreadIdx(Z),
        BlockDim(X),
        BlockDim(Y),
        BlockDim(Z),
        BlockIdx(X),
        BlockIdx(Y),
        BlockIdx(Z),
        GridDim(X),
        GridDim(Y),
        GridDim(Z),
        LaneId,
        WarpId,
    ] {
        body.push(store(gplace(outs[pos(U32)], next(), U32), special(s)));
    }
    k.finish(body)
}

/// Every atomic on every type it is defined for, global and shared.
pub fn all_atomics() -> Kernel {
    let mut k = KernelBuilder::new("all_atomics");
    let (ins, outs) = io_params(&mut k);
    let sh = k.shared("sh", F32, &[32]);
    let shu = k.shared("shu", U64, &[32]);
    let mut body = Vec::new();
    let mut slot = 0u32;
    let mut next = || {
        slot += 1;
        add(tid(X), u32c(slot))
    };
    for t in TYPES.into_iter().filter(|t| *t != Bool) {
        let a = || load(gplace(ins[pos(t)], tid(X), t));
        // Every operation on every type its IR domain has (the verifier's):
        // exch on 32/64-bit types, and/or/xor on 32/64-bit integers,
        // inc/dec on u32; the rest on every type (compare-and-swap loops
        // where the hardware lacks it).
        let wide = matches!(t.bits(), 32 | 64);
        for op in AtomicOp::ALL {
            // The narrow integers' only atomic is the 16-bit `atom.cas.b16`.
            let narrow_ok = op == AtomicOp::Cas && t.bits() == 16;
            let ok = match op {
                _ if t.is_narrow_int() => narrow_ok,
                AtomicOp::Exch => wide,
                AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => wide && t.is_int(),
                AtomicOp::Inc | AtomicOp::Dec => t == U32,
                _ => true,
            };
            if !ok {
                continue;
            }
            let args = if op == AtomicOp::Cas {
                vec![a(), a()]
            } else {
                vec![a()]
            };
            let old = atomic(op, gplace(outs[pos(t)], next(), t), args);
            body.push(store(gplace(outs[pos(t)], next(), t), old));
        }
        // Every order at every scope ptxas has on sm_80 (cluster: sm_90).
        for order in [
            MemOrder::Relaxed,
            MemOrder::Acquire,
            MemOrder::Release,
            MemOrder::AcqRel,
        ] {
            for scope in [MemScope::Cta, MemScope::Gpu, MemScope::Sys] {
                let sem = MemSem { order, scope };
                // The narrow integers: the 16-bit compare-and-swap only.
                let (op, args) = match (t.is_narrow_int(), t.bits()) {
                    (false, _) => (AtomicOp::Add, vec![a()]),
                    (true, 16) => (AtomicOp::Cas, vec![a(), a()]),
                    _ => continue,
                };
                let old = atomic_sem(op, sem, gplace(outs[pos(t)], next(), t), args);
                body.push(store(gplace(outs[pos(t)], next(), t), old));
            }
        }
    }
    let f = load(gplace(ins[pos(F32)], tid(X), F32));
    let u = load(gplace(ins[pos(U64)], tid(X), U64));
    body.push(expr_stmt(atomic(
        AtomicOp::Add,
        splace(sh, vec![tid(X)], F32),
        vec![f.clone()],
    )));
    body.push(expr_stmt(atomic(
        AtomicOp::Max,
        splace(sh, vec![u32c(3)], F32),
        vec![f.clone()],
    )));
    body.push(expr_stmt(atomic(
        AtomicOp::Cas,
        splace(sh, vec![u32c(4)], F32),
        vec![f.clone(), f],
    )));
    body.push(expr_stmt(atomic(
        AtomicOp::Min,
        splace(shu, vec![tid(X)], U64),
        vec![u],
    )));
    k.finish(body)
}
