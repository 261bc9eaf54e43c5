//! The PTX writer on hand-built IR: every kernel is assembled by the real
//! ptxas (13.5) for the targets it is meant for, and the tests state which
//! instructions the barrier operations, headers and prologues produce.

use crate::common::ptxas;
use crate::ptx::build::kernels::*;
use crate::ptx::build::*;
use kdsl::ir::{
    AtomicOp, BarrierOpKind, Dim::*, Kernel, MemOrder, MemScope, MemSem, Module, Parity,
    Special::*, StmtKind,
};
use kdsl::target::Target;

/// Verifies `m` ([`kdsl::ir::verify`]), writes it for `t` and, when ptxas is available, assembles it for the
/// same architecture; returns the PTX.
#[track_caller]
fn assemble(m: &Module, t: Target) -> String {
    if let Err(errors) = kdsl::ir::verify::module(m, kdsl::ir::verify::Mode::Complete) {
        panic!("the hand-built module fails verification:\n{errors:#?}");
    }
    let text = write(m, t);
    if let Some(p) = ptxas::require_ptxas() {
        if let Err(e) = ptxas::assemble(&p, &text, t.name()) {
            panic!("ptxas rejected the PTX for {t}:\n{e}");
        }
    }
    text
}

/// [`assemble`] for sm_80 and for sm_90; the sm_80 PTX.
#[track_caller]
fn on_sm80_and_sm90(m: &Module) -> String {
    let text = assemble(m, Target::Sm80);
    assemble(m, Target::Sm90);
    text
}

/// [`assemble`] for sm_90 and every later target; the sm_90 PTX.
#[track_caller]
fn on_sm90_and_later(m: &Module) -> String {
    let text = assemble(m, Target::Sm90);
    for t in [Target::Sm90a, Target::Sm100, Target::Sm100a, Target::Sm120] {
        assemble(m, t);
    }
    text
}

fn one(k: Kernel) -> Module {
    module(vec![k])
}

/// The lines of `text` that contain `needle`, trimmed.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.contains(needle))
        .collect()
}

#[track_caller]
fn assert_has(text: &str, needle: &str) {
    assert!(text.contains(needle), "expected `{needle}` in:\n{text}");
}

#[track_caller]
fn assert_has_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert_has(text, needle);
    }
}

#[track_caller]
fn assert_lacks(text: &str, needle: &str) {
    assert!(
        !text.contains(needle),
        "did not expect `{needle}` in:\n{text}"
    );
}

// ---------------------------------------------------------------- headers

#[test]
fn header_uses_lowest_version_for_target() {
    let m = one(saxpy());
    for (t, v) in [
        (Target::Sm80, "7.0"),
        (Target::Sm86, "7.1"),
        (Target::Sm89, "7.8"),
        (Target::Sm90, "7.8"),
        (Target::Sm90a, "8.0"),
        (Target::Sm100, "8.6"),
        (Target::Sm100a, "8.6"),
        (Target::Sm120, "8.7"),
    ] {
        let text = assemble(&m, t);
        assert_has(
            &text,
            &format!(".version {v}\n.target {}\n.address_size 64\n", t.name()),
        );
    }
}

#[test]
fn output_is_deterministic() {
    let m = module(vec![
        saxpy(),
        reduce_sum(),
        sgemm_tiled(),
        pipeline_sum(),
        cluster_sum(),
    ]);
    assert_eq!(write(&m, Target::Sm90), write(&m, Target::Sm90));
}

#[test]
fn empty_module_is_a_valid_header() {
    let text = assemble(&module(vec![]), Target::Sm80);
    assert_has(&text, ".version 7.0\n.target sm_80\n.address_size 64\n");
}

// ---------------------------------------------------------------- the bench kernels

#[test]
fn saxpy_entry_params_and_prologue() {
    let text = assemble(&one(saxpy()), Target::Sm80);
    assemble(&one(saxpy()), Target::Sm90);
    assert_has(&text, ".visible .entry saxpy(\n\t.param .f32 $p_a,\n\t.param .u64 $p_x,\n\t.param .u64 $p_y,\n\t.param .u32 $p_n\n)\n.reqntid 256, 1, 1\n{");
    assert_eq!(
        lines_with(&text, "cvta.to.global.u64").len(),
        2,
        "one cvta per pointer:\n{text}"
    );
    assert_has_all(&text, &["ld.global.nc.f32", "st.global.f32"]);
    // block(256): block_dim.x is the constant 256.
    assert_lacks(&text, "%ntid.x");
    assert_has(&text, "mul.wide.u32");
}

#[test]
fn reduce_sum_assembles() {
    let m = one(reduce_sum());
    let text = on_sm80_and_sm90(&m);
    assert_has_all(
        &text,
        &[
            "shfl.sync.down.b32",
            ", 0x1f, 0xffffffff;",
            "atom.global.add.f32",
        ],
    );
    // 32 bytes, declared as the 128 the layout gives every array
    // (src/ir/layout.rs), so that ptxas's order cannot change the total.
    assert_has_all(
        &text,
        &[".shared .align 128 .b8 $s_partial[128];", "bar.sync 0;"],
    );
    // warp_id of a 1-D block is tid.x >> 5; %warpid is never used.
    assert_lacks(&text, "%warpid");
    assert_has(&text, "shr.u32");
    assert_eq!(
        lines_with(&text, "%tid.x").len(),
        1,
        "special registers are read once:\n{text}"
    );
    assert_eq!(
        lines_with(&text, "%laneid").len(),
        1,
        "special registers are read once:\n{text}"
    );
}

#[test]
fn sgemm_two_dimensional_shared_indexing() {
    let m = one(sgemm_tiled());
    let text = on_sm80_and_sm90(&m);
    assert_has(&text, ".reqntid 16, 16, 1");
    // ta[ty, j]: row stride 16 floats = 64 bytes.
    assert_has_all(&text, &[", 64, ", "ld.shared.f32", "st.shared.f32"]);
    assert_eq!(lines_with(&text, "bar.sync 0;").len(), 2);
}

#[test]
fn pipeline_sum_assembles_on_sm90() {
    let m = one(pipeline_sum());
    let text = on_sm90_and_later(&m);
    assert_has(&text, ".version 8.0");
    assert_has(
        &text,
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
    );
    assert_has_all(
        &text,
        &[
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, ",
            "mbarrier.try_wait.parity.shared::cta.b64",
        ],
    );
    // Bulk copies: the init is fenced for the async proxy.
    assert_has(&text, "fence.mbarrier_init.release.cluster;");
}

#[test]
fn cluster_sum_assembles_on_sm90() {
    let m = one(cluster_sum());
    let text = assemble(&m, Target::Sm90);
    assert_has_all(
        &text,
        &[
            ".reqnctapercluster 2, 1, 1\n.explicitcluster\n",
            "mapa.shared::cluster.u32",
            "st.shared::cluster.f32",
        ],
    );
    assert_has(
        &text,
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [",
    );
    assert_has(
        &text,
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
    );
    // The kernel uses remote memory: a cluster barrier before it exits.
    assert_has(
        &text,
        "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n\tret;",
    );
    assert_eq!(lines_with(&text, "ret;").len(), 1, "{text}");
    for t in [Target::Sm90a, Target::Sm100a, Target::Sm120] {
        assemble(&m, t);
    }
}

// ---------------------------------------------------------------- every operator, type and conversion

#[test]
fn every_cast_pair_assembles() {
    let m = one(all_casts());
    let sm80 = assemble(&m, Target::Sm80);
    let sm90 = assemble(&m, Target::Sm90);
    // bf16 ← int/f64 has no direct cvt before sm_90: rounded to odd via f32.
    assert_lacks(&sm80, "cvt.rn.bf16.s32");
    assert_lacks(&sm80, "cvt.rn.bf16.f64");
    assert_has(&sm80, "cvt.rz.f32.s32");
    assert_has_all(&sm90, &["cvt.rn.bf16.s32", "cvt.rn.bf16.f64"]);
    // cvt.f32.bf16 needs PTX 7.1.
    assert_has(&sm80, ".version 7.1");
    // float → int truncates and saturates; int → float rounds to nearest.
    assert_has_all(&sm80, &["cvt.rzi.s32.f32", "cvt.rn.f32.u64"]);
    // Widening keeps signedness of the source; narrowing truncates.
    assert_has_all(&sm80, &["cvt.s64.s32", "cvt.u64.u32", "cvt.u32.u64"]);
    // bool ↔ numbers.
    assert_has_all(&sm80, &["selp.f32 ", "setp.neu.f32"]);
    // A constant f16 in a register, as bits.
    assert_has(&sm80, "mov.b16 %h");
    for t in [Target::Sm86, Target::Sm89, Target::Sm100a, Target::Sm120] {
        assemble(&m, t);
    }
}

#[test]
fn every_operator_on_every_type_assembles() {
    let m = one(all_binops());
    let text = on_sm80_and_sm90(&m);
    assemble(&m, Target::Sm120);
    for needle in [
        "div.s32",
        "div.u32",
        "div.s64",
        "rem.u64",
        "div.rn.f32",
        "div.rn.f64",
        "shr.s32",
        "shr.u64",
        "setp.lt.s64",
        "setp.lt.u32",
        "setp.neu.f64",
        "setp.lt.f32",
        "xor.pred",
        "not.pred",
        "not.b64",
        "neg.s32",
        "neg.f64",
        "sub.u32",
        "xor.b16",
        "selp.b16",
        "selp.b64",
        "mul.lo.s64",
    ] {
        assert_has(&text, needle);
    }
    // 64-bit shift amounts are clamped and narrowed: PTX shifts take a
    // 32-bit amount.
    assert_line(&text, "min.u64 %rd", ", 64;");
    assert_has(&text, "cvt.u32.u64");
    // Half arithmetic widens to f32 and rounds back once.
    assert_has_all(&text, &["cvt.rn.f16.f32", "cvt.rn.bf16.f32"]);
    assert_lacks(&text, "add.f16");
}

#[test]
fn scalar_parameters_of_every_type() {
    let mut k = KernelBuilder::new("params");
    let (_, outs) = io_params(&mut k);
    let mut body = Vec::new();
    for (i, t) in TYPES.into_iter().enumerate() {
        let p = k.scalar(&format!("p_{t}"), t);
        body.push(store(gplace(outs[i], tid(X), t), p));
    }
    let m = one(k.finish(body));
    let text = on_sm80_and_sm90(&m);
    for decl in [
        ".param .u32 $p_p_bool",
        ".param .s32 $p_p_i32",
        ".param .u32 $p_p_u32",
        ".param .s64 $p_p_i64",
        ".param .u64 $p_p_u64",
        ".param .b16 $p_p_f16",
        ".param .b16 $p_p_bf16",
        ".param .f32 $p_p_f32",
        ".param .f64 $p_p_f64",
    ] {
        assert_has(&text, decl);
    }
    assert_has_all(&text, &["st.global.u8", "st.global.b16"]);
}

#[test]
fn constant_expressions_are_folded() {
    let mut k = KernelBuilder::new("folds");
    let out = k.global("out", U32, true);
    let fl = k.global("fl", F32, true);
    let m = one(k.finish(vec![
        store(gplace(out, u32c(0), U32), mul(u32c(1024), u32c(4))),
        store(
            gplace(out, u32c(1), U32),
            select(lt(int(-1, I32), int(2, I32)), u32c(7), u32c(9)),
        ),
        store(gplace(out, u32c(2), U32), bin(BinOp::Div, u32c(1), u32c(0))),
        store(gplace(fl, u32c(0), F32), mul(f32c(0.1), f32c(3.0))),
    ]));
    let text = assemble(&m, Target::Sm80);
    assert_line(&text, "st.global.u32 [%rd", "], 4096;");
    assert_line(&text, "st.global.u32 [%rd", "+4], 7;");
    // Floats fold too, rounded as `mul.rn.f32` rounds: f32(0.1) × 3.
    assert_line(&text, "st.global.f32 [%rd", "], 0f3E99999A;");
    assert!(
        !text.contains("mul.f32") && !text.contains("mul.rn.f32"),
        "{text}"
    );
    // Division by zero has no value (the checker rejects it; hand-made IR
    // gets the run-time division).
    assert_has(&text, "div.u32");
}

#[test]
fn division_by_powers_of_two_is_shifts_and_masks() {
    let mut k = KernelBuilder::new("pow2");
    let (ins, outs) = io_params(&mut k);
    let mut body = Vec::new();
    for (t, slot) in [(U32, 0u32), (I32, 1), (U64, 2), (I64, 3)] {
        let p = TYPES.iter().position(|x| *x == t).unwrap();
        let a = || load(gplace(ins[p], tid(X), t));
        body.push(store(
            gplace(outs[p], u32c(slot * 4), t),
            bin(BinOp::Div, a(), int(16, t)),
        ));
        body.push(store(
            gplace(outs[p], u32c(slot * 4 + 1), t),
            bin(BinOp::Rem, a(), int(16, t)),
        ));
        body.push(store(
            gplace(outs[p], u32c(slot * 4 + 2), t),
            bin(BinOp::Div, a(), int(1, t)),
        ));
        body.push(store(
            gplace(outs[p], u32c(slot * 4 + 3), t),
            bin(BinOp::Div, a(), int(12, t)),
        ));
    }
    let text = assemble(&one(k.finish(body)), Target::Sm80);
    assert_line(&text, "shr.u32 %r", ", 4;");
    assert_line(&text, "and.b32 %r", ", 15;");
    assert_line(&text, "shr.u64 %rd", ", 4;");
    // Signed: the sign, shifted down to a bias of 15 for negative values.
    assert_line(&text, "shr.s32 %r", ", 31;");
    assert_line(&text, "shr.u32 %r", ", 28;");
    assert_line(&text, "and.b32 %r", ", -16;");
    assert_line(&text, "shr.s64 %rd", ", 63;");
    // Other divisors stay divisions; no division by 16 is left.
    assert_line(&text, "div.u32 %r", ", 12;");
    assert_line(&text, "div.s64 %rd", ", 12;");
    assert!(
        lines_with(&text, "div.")
            .iter()
            .all(|l| l.ends_with(", 12;")),
        "{text}"
    );
    assert_lacks(&text, "rem.");
}

#[test]
fn control_flow_assembles() {
    let m = one(control_flow());
    let text = on_sm80_and_sm90(&m);
    // Bool parameters travel as u32.
    assert_has_all(&text, &[".param .u32 $p_flag", "setp.ne.b32"]);
    // Lazy && around the load; the cheap one is a plain and.pred.
    assert_has(&text, "and.pred");
    // warp_id of a 64×2 block: (tid.x + 64 * tid.y) >> 5.
    assert_has(&text, ", 64, %r");
    // Constant-false branches are gone: one `ret` for the early return, one at the end.
    assert_eq!(lines_with(&text, "ret;").len(), 2, "{text}");
}

#[test]
fn math_and_warp_operations_assemble() {
    let m = one(math_and_warp());
    let text = on_sm80_and_sm90(&m);
    for needle in [
        "sqrt.rn.f32",
        "sqrt.rn.f64",
        "rsqrt.approx.f32",
        "ex2.approx.f32",
        "lg2.approx.f32",
        "sin.approx.f32",
        "cos.approx.f32",
        "fma.rn.f32",
        "fma.rn.f16",
        "fma.rn.bf16",
        "mad.lo.s32",
        "abs.s32",
        "abs.f64",
        "min.u64",
        "max.f32",
        "and.b16",
        "shfl.sync.up.b32",
        "shfl.sync.bfly.b32",
        "shfl.sync.idx.b32",
        "vote.sync.ballot.b32",
        "vote.sync.any.pred",
        "vote.sync.all.pred",
        "mov.u32 %r",
    ] {
        assert_has(&text, needle);
    }
    // exp(x) = ex2(x * log2 e), log(x) = lg2(x) * ln 2.
    assert_has_all(&text, &["0f3FB8AA3B", "0f3F317218"]);
    // Shuffle clamp: 0 for up, 0x1f otherwise.
    assert!(lines_with(&text, "shfl.sync.up.b32")
        .iter()
        .all(|l| l.ends_with(", 0, 0xffffffff;")));
    assert!(lines_with(&text, "shfl.sync.down.b32")
        .iter()
        .all(|l| l.ends_with(", 0x1f, 0xffffffff;")));
    // warp_id without block(): (tid.x + ntid.x * (tid.y + ntid.y * tid.z)) >> 5.
    assert_has(&text, "%ntid.y");
    assert_lacks(&text, "%warpid");
}

#[test]
fn atomics_assemble() {
    let m = one(all_atomics());
    let text = assemble(&m, Target::Sm80);
    let sm90 = assemble(&m, Target::Sm90);
    for needle in [
        "atom.global.add.u32",
        "atom.global.add.s32",
        "atom.global.add.u64",
        "atom.global.add.f32",
        "atom.global.add.f64",
        "atom.global.add.noftz.f16",
        "atom.global.max.s32",
        "atom.global.min.u64",
        "atom.global.max.s64",
        "atom.global.cas.b32",
        "atom.global.cas.b64",
        "atom.global.cas.b16",
        "atom.shared.add.f32",
        "atom.shared.cas.b32",
        "atom.shared.min.u64",
        "atom.global.exch.b32",
        "atom.global.exch.b64",
        "atom.global.and.b32",
        "atom.global.or.b64",
        "atom.global.xor.b64",
        "atom.global.inc.u32",
        "atom.global.dec.u32",
        "atom.relaxed.cta.global.add.u32",
        "atom.acquire.gpu.global.add.f64",
        "atom.release.sys.global.add.s32",
        "atom.acq_rel.cta.global.add.noftz.f16",
    ] {
        assert_has(&text, needle);
    }
    // `atomic_sub` is an add of the negation; PTX has no `atom.sub`.
    assert_lacks(&text, ".sub.");
    // The default (relaxed, gpu) is written without qualifiers.
    assert_lacks(&text, "atom.relaxed.gpu.");
    // No float max/min atomics in hardware: compare-and-swap loops.
    assert_lacks(&text, "atom.global.max.f32");
    // bf16 atomic add: a CAS loop on sm_80, native on sm_90.
    assert_lacks(&text, "add.noftz.bf16");
    assert_has(&sm90, "atom.global.add.noftz.bf16");
}

// ---------------------------------------------------------------- device functions

/// fn twice(x: f32) -> f32; fn pick(x: f32, flag: bool) -> f32 (calls twice);
/// fn positive(v: i32) -> bool; fn half_up(h: f16) -> f16;
/// fn nothing(a: u32); fn lane_bits() -> u32 (special registers).
fn with_functions() -> Module {
    use kdsl::ir::FuncId;
    let mut twice = FunctionBuilder::new("twice", Some(F32));
    let x = twice.param("x", F32);
    let twice = twice.finish(vec![st(StmtKind::Return(Some(mul(x.1, f32c(2.0)))))]);

    let mut pick = FunctionBuilder::new("pick", Some(F32));
    let x = pick.param("x", F32);
    let flag = pick.param("flag", Bool);
    let pick = pick.finish(vec![
        if_(
            flag.1,
            vec![st(StmtKind::Return(Some(call(
                FuncId(0),
                vec![x.1.clone()],
                F32,
            ))))],
        ),
        st(StmtKind::Return(Some(x.1))),
    ]);

    let mut positive = FunctionBuilder::new("positive", Some(Bool));
    let v = positive.param("v", I32);
    let positive = positive.finish(vec![st(StmtKind::Return(Some(bin(
        BinOp::Gt,
        v.1,
        int(0, I32),
    ))))]);

    let mut half_up = FunctionBuilder::new("half_up", Some(F16));
    let h = half_up.param("h", F16);
    let half_up = half_up.finish(vec![st(StmtKind::Return(Some(add(h.1, float(1.0, F16)))))]);

    let mut nothing = FunctionBuilder::new("nothing", None);
    let a = nothing.param("a", U32);
    let b = nothing.local("b", U32);
    let nothing = nothing.finish(vec![let_(b, add(a.1, u32c(1)))]);

    let lane_bits = FunctionBuilder::new("lane_bits", Some(U32));
    let lane_bits = lane_bits.finish(vec![st(StmtKind::Return(Some(add(
        special(LaneId),
        special(WarpId),
    ))))]);

    let mut k = KernelBuilder::new("calls");
    let out = k.global("out", F32, true);
    let flags = k.global("flags", Bool, true);
    let halves = k.global("halves", F16, true);
    let f = load(gplace(out, tid(X), F32));
    let body = vec![
        store(
            gplace(out, tid(X), F32),
            call(FuncId(1), vec![f, eq(tid(X), u32c(0))], F32),
        ),
        store(
            gplace(flags, tid(X), Bool),
            call(FuncId(2), vec![cast(tid(X), I32)], Bool),
        ),
        store(
            gplace(halves, tid(X), F16),
            call(FuncId(3), vec![load(gplace(halves, tid(X), F16))], F16),
        ),
        st(StmtKind::Call {
            func: FuncId(4),
            args: vec![tid(X)],
        }),
        store(
            gplace(out, u32c(0), F32),
            cast(call(FuncId(5), vec![], U32), F32),
        ),
    ];
    Module {
        functions: vec![twice, pick, positive, half_up, nothing, lane_bits],
        kernels: vec![k.finish(body)],
    }
}

#[test]
fn device_functions_are_funcs_called_with_params() {
    let m = with_functions();
    let text = on_sm80_and_sm90(&m);
    assert_has(
        &text,
        ".func (.param .f32 $r) twice(\n\t.param .f32 $a0\n)\n{",
    );
    assert_has_all(
        &text,
        &[
            ".func (.param .b32 $r) positive(",
            ".func nothing(\n\t.param .b32 $a0\n)",
            ".func (.param .b32 $r) lane_bits()\n{",
            "call.uni ($cr), pick, ($ca0, $ca1);",
            "call.uni nothing, ($ca0);",
            "call.uni ($cr), lane_bits;",
        ],
    );
    // Callees first, kernels last; no prototypes needed.
    let pos = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
    assert!(pos(") twice(") < pos(") pick(") && pos(") pick(") < pos(".entry calls"));
    assert_lacks(&text, "\n);\n");
}

/// `a() -> u32 { return b() + 1; }`, `b() -> u32 { return lane_id; }`
/// (`b` optionally calling `a` back) and a kernel storing `a()`.
fn caller_declared_first(cycle: bool) -> Module {
    use kdsl::ir::FuncId;
    let a = FunctionBuilder::new("a", Some(U32));
    let a = a.finish(vec![st(StmtKind::Return(Some(add(
        call(FuncId(1), vec![], U32),
        u32c(1),
    ))))]);
    let b = FunctionBuilder::new("b", Some(U32));
    let value = if cycle {
        call(FuncId(0), vec![], U32)
    } else {
        special(LaneId)
    };
    let b = b.finish(vec![st(StmtKind::Return(Some(value)))]);
    let mut k = KernelBuilder::new("calls_a");
    let out = k.global("out", U32, true);
    let body = vec![store(
        gplace(out, tid(X), U32),
        call(FuncId(0), vec![], U32),
    )];
    Module {
        functions: vec![a, b],
        kernels: vec![k.finish(body)],
    }
}

#[test]
fn callees_are_written_first_whatever_the_declaration_order() {
    let text = assemble(&caller_declared_first(false), Target::Sm90);
    let pos = |needle: &str| text.find(needle).unwrap_or(usize::MAX);
    assert!(pos(") b()") < pos(") a()"), "{text}");
    assert_lacks(&text, "\n);\n");
}

#[test]
fn a_call_cycle_is_an_error_not_a_prototype() {
    let m = caller_declared_first(true);
    let verified = kdsl::ir::verify::module(&m, kdsl::ir::verify::Mode::Complete);
    assert!(
        verified.is_err_and(|es| es.iter().any(|e| e.message.contains("cycle"))),
        "the verifier reports the cycle"
    );
    let e = try_write(&m, Target::Sm90).expect_err("a cycle cannot be written callees first");
    assert!(
        matches!(&e.kind, kdsl::ptx::ErrorKind::InvalidIr(m) if m.contains("cycle")),
        "{e}"
    );
}

// ---------------------------------------------------------------- barrier lowering (language.md §7)

/// Some line of `text` starts with `prefix` and ends with `suffix`.
#[track_caller]
fn assert_line(text: &str, prefix: &str, suffix: &str) {
    assert!(
        text.lines()
            .map(str::trim)
            .any(|l| l.starts_with(prefix) && l.ends_with(suffix)),
        "expected a line `{prefix}...{suffix}` in:\n{text}"
    );
}

/// A cta group `bars[4]: cta(arrivals = 32)` used by every operation.
fn cta_barrier_kernel() -> Kernel {
    let mut k = KernelBuilder::new("cta_barriers");
    k.block = Some([32, 1, 1]);
    let out = k.global("out", Bool, true);
    let bars = k.barrier("bars", Scope::Cta, 4, 32);
    let one = k.barrier("one", Scope::Cta, 1, 1);
    let r = |i: u32| bref(bars, Some(u32c(i)));
    let dynamic = || bref(bars, Some(bin(BinOp::Rem, tid(X), u32c(4))));
    let body = vec![
        bop(BarrierOpKind::Arrive { count: None }, r(1)),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Explicit(u32c(1)),
            },
            r(2),
        ),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            r(2),
        ),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            dynamic(),
        ),
        bop(BarrierOpKind::Arrive { count: None }, dynamic()),
        bop(BarrierOpKind::Arrive { count: None }, bref(one, None)),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            bref(one, None),
        ),
        store(
            gplace(out, u32c(0), Bool),
            test(r(3), Parity::Explicit(u32c(0))),
        ),
        store(gplace(out, u32c(1), Bool), test(r(3), Parity::Tracked)),
    ];
    k.finish(body)
}

#[test]
fn cta_barrier_lowering_sm90() {
    let text = assemble(&one(cta_barrier_kernel()), Target::Sm90);
    assert_has_all(
        &text,
        &[
            ".shared .align 8 .b64 $b_bars[4];",
            ".shared .align 8 .b64 $b_one[1];",
        ],
    );
    // Init: one thread, every barrier, then the CTA synchronises.
    assert_has(
        &text,
        "mbarrier.init.shared::cta.b64 [$b_bars], 32;\n\tmbarrier.init.shared::cta.b64 [$b_bars+8], 32;\n\t\
         mbarrier.init.shared::cta.b64 [$b_bars+16], 32;\n\tmbarrier.init.shared::cta.b64 [$b_bars+24], 32;\n\t\
         mbarrier.init.shared::cta.b64 [$b_one], 1;\n$L_1:\n\tbar.sync 0;",
    );
    assert_has(&text, "setp.eq.u32 %p1, %r1, 0;\n\t@!%p1 bra $L_1;");
    // No cluster and no bulk copies: no fence, PTX 7.8 suffices.
    assert_lacks(&text, "fence.mbarrier_init");
    assert_has_all(
        &text,
        &[
            ".version 7.8",
            "mbarrier.arrive.shared::cta.b64 _, [$b_bars+8];",
        ],
    );
    assert_line(
        &text,
        "mbarrier.try_wait.parity.shared::cta.b64 %p",
        ", [$b_bars+16], 1;",
    );
    // Dynamic index: base + 8 * index.
    assert_has(&text, ", 8, ");
    assert_line(&text, "mbarrier.arrive.shared::cta.b64 _, [%r", "];");
    // Tracked parity: bit 2 of the group's mask (a shift and a mask, not
    // `bfe`, which costs ptxas six or seven instructions), flipped after
    // the wait.
    assert_line(&text, "shr.u32 %r", ", 2;");
    assert_line(&text, "and.b32 %r", ", 1;");
    assert!(!text.contains("bfe."), "{text}");
    assert_line(&text, "xor.b32 %r", ", 0x4;");
    // A group of one: its mask is its parity.
    assert_line(&text, "xor.b32 %r", ", 0x1;");
    assert_line(
        &text,
        "mbarrier.test_wait.parity.shared::cta.b64 %p",
        ", [$b_bars+24], 0;",
    );
    // A tracked test flips the bit only when it succeeds.
    assert_line(&text, "@%p", ", 0x8;");
    // Every wait is a loop back to its own label.
    let waits = lines_with(&text, "mbarrier.try_wait");
    assert_eq!(waits.len(), 4, "{text}");
    assert_eq!(
        lines_with(&text, "mov.b32 %r")
            .iter()
            .filter(|l| l.ends_with(", 0;"))
            .count(),
        2,
        "two tracked groups"
    );
}

#[test]
fn cta_barrier_lowering_sm80() {
    let text = assemble(&one(cta_barrier_kernel()), Target::Sm80);
    assert_has_all(
        &text,
        &[".version 7.1", "mbarrier.init.shared.b64 [$b_bars], 32;"],
    );
    assert_line(&text, "mbarrier.arrive.shared.b64 %rd", ", [$b_bars+8];");
    assert_line(
        &text,
        "mbarrier.test_wait.parity.shared.b64 %p",
        ", [$b_bars+16], 1;",
    );
    assert_lacks(&text, "try_wait");
    assert_lacks(&text, "shared::cta");
    assert_lacks(&text, " _,");
}

/// A group of more than 32 barriers tracks its parities in two 32-bit
/// words: with one 64-bit word, ptxas 13.5 for sm_80–89 crashed on a
/// kernel with some 48 barriers whose tracked parity a `test()` read.
#[test]
fn barrier_group_of_more_than_32_tracks_parity_in_two_words() {
    let mut k = KernelBuilder::new("big");
    let big = k.barrier("big", Scope::Cta, 40, 1);
    let m = one(k.finish(vec![
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            bref(big, Some(u32c(39))),
        ),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            bref(big, Some(bin(BinOp::Rem, tid(X), u32c(40)))),
        ),
    ]));
    let text = assemble(&m, Target::Sm90);
    assemble(&m, Target::Sm80);
    assert_eq!(
        lines_with(&text, "mov.b32 %r")
            .iter()
            .filter(|l| l.ends_with(", 0;"))
            .count(),
        2,
        "{text}"
    );
    // Barrier 39 is bit 7 of the second word.
    assert_line(&text, "shr.u32 %r", ", 7;");
    assert_line(&text, "and.b32 %r", ", 1;");
    assert_line(&text, "xor.b32 %r", ", 0x80;");
    assert_lacks(&text, ".b64 %rd");
    // A run-time index picks the word, then the bit in it.
    assert_line(&text, "setp.lt.u32 %p", ", 32;");
    assert_line(&text, "and.b32 %r", ", 31;");
    assert!(
        lines_with(&text, "shl.b32 %r")
            .iter()
            .any(|l| l.contains(", 1, %r")),
        "{text}"
    );
    // Thread 0 of a block of unknown shape: tid.x | tid.y | tid.z == 0.
    assert_has(&text, "%tid.z");
}

/// A cluster group used by every cluster operation, plus tx and bulk ops.
fn cluster_barrier_kernel() -> Kernel {
    let mut k = KernelBuilder::new("cluster_barriers");
    k.block = Some([128, 1, 1]);
    k.cluster = Some([2, 1, 1]);
    let src = k.global("src", F32, false);
    let dst = k.global("dst", F32, true);
    let tile = k.shared("tile", F32, &[2, 256]);
    let c = k.barrier("c", Scope::Cluster, 1, 2);
    let pair = k.barrier("pair", Scope::Cluster, 2, 1);
    let full = k.barrier("full", Scope::Cta, 2, 1);
    let body = vec![
        bop(BarrierOpKind::Arrive { count: None }, bref(c, None)),
        bop(
            BarrierOpKind::Arrive {
                count: Some(u32c(2)),
            },
            bref(c, None),
        ),
        bop(
            BarrierOpKind::ArriveExpectTx { bytes: u32c(16) },
            bref(c, None),
        ),
        bop(BarrierOpKind::ArriveRemote { rank: u32c(1) }, bref(c, None)),
        bop(
            BarrierOpKind::ArriveRemote { rank: u32c(1) },
            bref(pair, Some(u32c(1))),
        ),
        bop(
            BarrierOpKind::WaitCluster {
                parity: Parity::Explicit(u32c(0)),
            },
            bref(c, None),
        ),
        bop(
            BarrierOpKind::Arrive {
                count: Some(u32c(3)),
            },
            bref(full, Some(u32c(1))),
        ),
        bop(
            BarrierOpKind::ExpectTx { bytes: u32c(1024) },
            bref(full, Some(u32c(1))),
        ),
        bop(
            BarrierOpKind::ArriveExpectTx { bytes: u32c(1024) },
            bref(full, Some(u32c(0))),
        ),
        st(StmtKind::CopyAsync {
            dst: Box::new(splace(tile, vec![u32c(1), u32c(0)], F32)),
            src: Box::new(gplace(src, mul(special(BlockIdx(X)), u32c(256)), F32)),
            bytes: Box::new(u32c(1024)),
            barrier: bref(full, Some(u32c(1))),
        }),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            bref(full, Some(u32c(1))),
        ),
        st(StmtKind::FenceProxyAsync),
        st(StmtKind::CopyAsyncStore {
            dst: Box::new(gplace(dst, mul(special(BlockIdx(X)), u32c(256)), F32)),
            src: Box::new(splace(tile, vec![u32c(1), u32c(0)], F32)),
            bytes: Box::new(u32c(1024)),
        }),
        st(StmtKind::CopyAsyncCommit),
        st(StmtKind::CopyAsyncWait(0)),
        st(StmtKind::ClusterSync),
        // Remote loads, stores and atomics, constant and run-time indices.
        store(
            rplace(tile, u32c(1), vec![u32c(0), tid(X)], F32),
            load(rplace(
                tile,
                special(ClusterRank),
                vec![u32c(1), u32c(3)],
                F32,
            )),
        ),
        expr_stmt(atomic(
            AtomicOp::Add,
            rplace(tile, u32c(0), vec![u32c(0), u32c(0)], F32),
            vec![f32c(1.0)],
        )),
        st(StmtKind::Store {
            place: Box::new(rplace(tile, u32c(0), vec![u32c(0), u32c(1)], F32)),
            op: Some(BinOp::Mul),
            value: f32c(2.0),
        }),
        st(StmtKind::ClusterSync),
        if_(
            eq(tid(X), u32c(5)),
            vec![st(StmtKind::ClusterSync), st(StmtKind::Return(None))],
        ),
        st(StmtKind::ClusterSync),
    ];
    k.finish(body)
}

#[test]
fn cluster_barrier_and_bulk_copy_lowering() {
    let m = one(cluster_barrier_kernel());
    let text = on_sm90_and_later(&m);
    assert_has(&text, ".version 8.0");
    // Init is fenced for the cluster, then the whole cluster synchronises.
    assert_has(
        &text,
        "mbarrier.init.shared::cta.b64 [$b_c], 2;\n\tmbarrier.init.shared::cta.b64 [$b_pair], 1;\n\t\
         mbarrier.init.shared::cta.b64 [$b_pair+8], 1;\n\tmbarrier.init.shared::cta.b64 [$b_full], 1;\n\t\
         mbarrier.init.shared::cta.b64 [$b_full+8], 1;\n\tfence.mbarrier_init.release.cluster;\n$L_2:\n\t\
         barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;\n",
    );
    assert_has(
        &text,
        "mbarrier.arrive.release.cluster.shared::cta.b64 _, [$b_c];",
    );
    assert_has(
        &text,
        "mbarrier.arrive.release.cluster.shared::cta.b64 _, [$b_c], 2;",
    );
    assert_has(
        &text,
        "mbarrier.arrive.expect_tx.release.cluster.shared::cta.b64 _, [$b_c], 16;",
    );
    assert_line(&text, "mapa.shared::cluster.u32 %r", ", $b_c, 1;");
    assert_line(
        &text,
        "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r",
        "];",
    );
    assert_line(
        &text,
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p",
        ", [$b_c], 0;",
    );
    assert_has(&text, "mbarrier.arrive.shared::cta.b64 _, [$b_full+8], 3;");
    assert_has(
        &text,
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$b_full+8], 1024;",
    );
    assert_has(
        &text,
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$b_full], 1024;",
    );
    assert_line(
        &text,
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$s_tile+1024], [%rd",
        "], 1024, [$b_full+8];",
    );
    assert_has(&text, "fence.proxy.async.shared::cta;");
    assert_line(
        &text,
        "cp.async.bulk.global.shared::cta.bulk_group [%rd",
        "], [$s_tile+1024], 1024;",
    );
    assert_has_all(
        &text,
        &[
            "cp.async.bulk.commit_group;",
            "cp.async.bulk.wait_group.read 0;",
            "ld.shared::cluster.f32",
            "st.shared::cluster.f32",
            "atom.shared::cluster.add.f32",
        ],
    );
    assert_line(&text, "mapa.shared::cluster.u32 %r", ", $s_tile, 0;");
    // A barrier at a constant offset: its address in a register for mapa,
    // symbol and offset in one `mov` (as the simulator must see them for
    // a kernel in dynamic shared memory: `$dsmem+offset`).
    assert_line(&text, "mov.u32 %r", ", $b_pair+8;");
    // cluster_sync: aligned at the top level, not under a branch or after a return.
    let arrives = lines_with(&text, "barrier.cluster.arrive.release");
    assert_eq!(
        arrives,
        [
            "barrier.cluster.arrive.release.aligned;",
            "barrier.cluster.arrive.release.aligned;",
            "barrier.cluster.arrive.release;",
            "barrier.cluster.arrive.release;",
            "barrier.cluster.arrive.release;",
        ],
        "{text}"
    );
    // Remote accesses: every exit goes through the cluster barrier.
    assert_lacks(&text, "ret;\n$L_");
    assert_eq!(lines_with(&text, "ret;").len(), 1);
    assert_has(
        &text,
        "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n\tret;\n}",
    );
}

/// `wait_cluster()`/`wait_cluster(p)` and `test_cluster()`/`test_cluster(p)`
/// on a cluster group of two, with constant and run-time indices, and a
/// `wait()` on the same barrier to show that the tracked bit is shared.
fn cluster_acquire_kernel() -> Kernel {
    let mut k = KernelBuilder::new("cluster_acquire");
    k.block = Some([64, 1, 1]);
    k.cluster = Some([2, 1, 1]);
    let out = k.global("out", Bool, true);
    let c = k.barrier("c", Scope::Cluster, 2, 64);
    let r = |i: u32| bref(c, Some(u32c(i)));
    let dynamic = || bref(c, Some(bin(BinOp::Rem, tid(X), u32c(2))));
    let body = vec![
        bop(BarrierOpKind::Arrive { count: None }, r(1)),
        bop(
            BarrierOpKind::WaitCluster {
                parity: Parity::Tracked,
            },
            r(1),
        ),
        bop(
            BarrierOpKind::WaitCluster {
                parity: Parity::Explicit(u32c(1)),
            },
            r(0),
        ),
        bop(
            BarrierOpKind::Wait {
                parity: Parity::Tracked,
            },
            r(1),
        ),
        store(
            gplace(out, u32c(0), Bool),
            test_cluster(r(1), Parity::Tracked),
        ),
        store(
            gplace(out, u32c(1), Bool),
            test_cluster(r(0), Parity::Explicit(u32c(1))),
        ),
        bop(
            BarrierOpKind::WaitCluster {
                parity: Parity::Tracked,
            },
            dynamic(),
        ),
    ];
    k.finish(body)
}

#[test]
fn cluster_acquire_lowering_with_tracked_parity() {
    let m = one(cluster_acquire_kernel());
    let text = on_sm90_and_later(&m);
    assert_has(&text, ".version 8.0");
    // One tracked group: one mask register, initialised once.
    assert_eq!(
        lines_with(&text, "mov.b32 %r")
            .iter()
            .filter(|l| l.ends_with(", 0;"))
            .count(),
        1,
        "{text}"
    );
    // wait_cluster(): bit 1 of the mask, a cluster-acquire loop, the flip.
    assert_line(&text, "shr.u32 %r", ", 1;");
    let waits = lines_with(
        &text,
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
    );
    assert_eq!(waits.len(), 3, "{text}");
    assert!(waits.iter().any(|l| l.contains(", [$b_c+8], %r")), "{text}");
    assert_line(
        &text,
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p",
        ", [$b_c], 1;",
    );
    // The cta `wait()` reads and flips the same bit as `wait_cluster()`.
    assert!(
        lines_with(&text, "mbarrier.try_wait.parity.shared::cta.b64 %p")
            .iter()
            .any(|l| l.contains(", [$b_c+8], %r")),
        "{text}"
    );
    let flips: Vec<&str> = lines_with(&text, "xor.b32 %r")
        .into_iter()
        .filter(|l| l.ends_with(", 0x2;"))
        .collect();
    assert_eq!(flips.len(), 3, "two waits and a test flip bit 1: {text}");
    // test_cluster(): non-blocking cluster acquire, flipped only on success.
    assert!(
        lines_with(
            &text,
            "mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 %p"
        )
        .iter()
        .any(|l| l.contains(", [$b_c+8], %r")),
        "{text}"
    );
    assert_line(
        &text,
        "mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 %p",
        ", [$b_c], 1;",
    );
    assert_line(&text, "@%p", ", 0x2;");
    // A run-time index: the bit is shifted into place.
    assert!(
        lines_with(&text, "shl.b32 %r")
            .iter()
            .any(|l| l.contains(", 1, %r")),
        "{text}"
    );
}

#[test]
fn kernel_without_remote_access_exits_plainly() {
    let text = assemble(&one(pipeline_sum()), Target::Sm90);
    assert_lacks(&text, "barrier.cluster");
}

#[test]
fn sm90_only_operations_on_sm80_are_errors() {
    // The checker rejects these (E0200): the writer must not write them
    // as comments (or at all), but say what it cannot do.
    let cta = |kind: BarrierOpKind| {
        let mut k = KernelBuilder::new("k");
        let b = k.barrier("b", Scope::Cta, 1, 1);
        k.finish(vec![bop(kind, bref(b, None))])
    };
    let cluster = |kind: BarrierOpKind| {
        let mut k = KernelBuilder::new("k");
        let b = k.barrier("b", Scope::Cluster, 1, 1);
        k.finish(vec![bop(kind, bref(b, None))])
    };
    let stmt = |kind: StmtKind| KernelBuilder::new("k").finish(vec![st(kind)]);
    let bulk = |store: bool| {
        let mut k = KernelBuilder::new("k");
        let g = k.global("g", F32, true);
        let tile = k.shared("tile", F32, &[64]);
        let b = k.barrier("b", Scope::Cta, 1, 1);
        let (sh, gl) = (splace(tile, vec![u32c(0)], F32), gplace(g, u32c(0), F32));
        k.finish(vec![st(if store {
            StmtKind::CopyAsyncStore {
                dst: Box::new(gl),
                src: Box::new(sh),
                bytes: Box::new(u32c(256)),
            }
        } else {
            StmtKind::CopyAsync {
                dst: Box::new(sh),
                src: Box::new(gl),
                bytes: Box::new(u32c(256)),
                barrier: bref(b, None),
            }
        })])
    };
    let remote = {
        let mut k = KernelBuilder::new("k");
        let out = k.global("out", F32, true);
        let peer = k.shared("peer", F32, &[1]);
        let v = load(rplace(peer, u32c(1), vec![u32c(0)], F32));
        k.finish(vec![store(gplace(out, u32c(0), F32), v)])
    };
    let rank = {
        let mut k = KernelBuilder::new("k");
        let out = k.global("out", U32, true);
        k.finish(vec![store(gplace(out, u32c(0), U32), special(ClusterRank))])
    };
    let cluster_sem = MemSem {
        order: MemOrder::AcqRel,
        scope: MemScope::Cluster,
    };
    let cluster_atomic = {
        let mut k = KernelBuilder::new("k");
        let out = k.global("out", U32, true);
        let a = atomic_sem(
            AtomicOp::Exch,
            cluster_sem,
            gplace(out, u32c(0), U32),
            vec![u32c(1)],
        );
        k.finish(vec![expr_stmt(a)])
    };
    let mut with_cluster = KernelBuilder::new("k");
    with_cluster.cluster = Some([2, 1, 1]);
    let with_cluster = with_cluster.finish(vec![]);
    let cases: Vec<(Kernel, &str)> = vec![
        (
            cta(BarrierOpKind::Arrive {
                count: Some(u32c(2)),
            }),
            "arrive(count)",
        ),
        (
            cta(BarrierOpKind::ArriveExpectTx { bytes: u32c(16) }),
            "arrive_expect_tx",
        ),
        (
            cta(BarrierOpKind::ExpectTx { bytes: u32c(16) }),
            "expect_tx",
        ),
        (
            cluster(BarrierOpKind::Arrive { count: None }),
            "a cluster-scope barrier",
        ),
        (
            cluster(BarrierOpKind::ArriveRemote { rank: u32c(1) }),
            "arrive_remote",
        ),
        (
            cluster(BarrierOpKind::WaitCluster {
                parity: Parity::Tracked,
            }),
            "wait_cluster",
        ),
        (bulk(false), "copy_async"),
        (bulk(true), "copy_async_store"),
        (stmt(StmtKind::CopyAsyncCommit), "copy_async_commit"),
        (stmt(StmtKind::CopyAsyncWait(0)), "copy_async_wait"),
        (stmt(StmtKind::FenceProxyAsync), "fence_proxy_async"),
        (stmt(StmtKind::Fence(cluster_sem)), "the `cluster` scope"),
        (cluster_atomic, "the `cluster` scope"),
        (stmt(StmtKind::ClusterSync), "cluster_sync"),
        (remote, "remote shared memory"),
        (rank, "%cluster_ctarank"),
        (with_cluster, "a cluster launch attribute"),
    ];
    for (k, what) in cases {
        let m = one(k);
        let e = try_write(&m, Target::Sm80).expect_err(what);
        assert_eq!(
            e.kind,
            kdsl::ptx::ErrorKind::NeedsSm90 {
                what: what.to_string(),
                target: Target::Sm80
            },
            "{e}"
        );
        assert!(e
            .to_string()
            .contains("requires sm_90 or newer (compiling for sm_80)"));
        // The same module is fine where the hardware has it.
        let info = kdsl::analysis::analyze(&m);
        assert!(kdsl::ptx::write(&m, &info, Target::Sm90).is_ok(), "{what}");
    }
    // The whole cluster kernel: its first sm_90 operation is the error.
    let e = try_write(&one(cluster_barrier_kernel()), Target::Sm80).unwrap_err();
    assert!(
        matches!(e.kind, kdsl::ptx::ErrorKind::NeedsSm90 { .. }),
        "{e}"
    );
}

/// `KDSL_PTX_DUMP=dir cargo test --test it ptx::writer::dump` writes the sample
/// kernels' PTX (sm_90) into `dir` for reading.
#[test]
fn dump_for_review() {
    let Ok(dir) = std::env::var("KDSL_PTX_DUMP") else {
        return;
    };
    let mut modules: Vec<(String, Module)> = [
        saxpy(),
        reduce_sum(),
        sgemm_tiled(),
        pipeline_sum(),
        cluster_sum(),
        control_flow(),
        cluster_barrier_kernel(),
        cta_barrier_kernel(),
    ]
    .into_iter()
    .map(|k| (k.name.clone(), one(k)))
    .collect();
    modules.push(("calls".to_string(), with_functions()));
    for (name, m) in modules {
        std::fs::write(format!("{dir}/{name}.ptx"), write(&m, Target::Sm90)).unwrap();
    }
}

// ---------------------------------------------------------------- exact uniformity

/// `cluster_sync()` is `.aligned` exactly where the uniformity analysis
/// (the one behind W0320) shows that every thread of the CTA runs it.
#[test]
fn cluster_sync_is_aligned_where_every_thread_runs_it() {
    let src = "kernel k(out: global mut [u32], n: u32) block(64) cluster(2) {
    cluster_sync();
    if n > 4 { cluster_sync(); }
    for i in 0..n { cluster_sync(); }
    if block_idx.x == 0 && n < 9 { cluster_sync(); }
    if thread_idx.x < 32 { cluster_sync(); }
    let mut m = n;
    if lane_id == 0 { m = 1; }
    while m > 0 { cluster_sync(); m = m - 1; }
    if thread_idx.x == 3 { return; }
    cluster_sync();
    out[thread_idx.x] = n;
}";
    let c = kdsl::compile_str("aligned.kdsl", src, &kdsl::Options::default());
    let text = c
        .ptx
        .clone()
        .unwrap_or_else(|| panic!("{:#?}", c.diagnostics));
    let arrives: Vec<bool> = lines_with(&text, "barrier.cluster.arrive.release")
        .iter()
        .map(|l| l.ends_with(".aligned;"))
        .collect();
    // Entry sync (relaxed) not counted; the seven `cluster_sync()`s in
    // order: top level, under a parameter, in a uniform loop, under
    // `block_idx`, under `thread_idx`, in a loop whose count `lane_id`
    // made vary, after a return some threads took.
    assert_eq!(
        arrives,
        vec![true, true, true, true, false, false, false],
        "{text}"
    );
    let waits = lines_with(&text, "barrier.cluster.wait.acquire");
    assert_eq!(
        waits.iter().filter(|l| l.ends_with(".aligned;")).count(),
        4,
        "{text}"
    );
    // Three W0320s: the divergent ones.
    let w0320 = c.diagnostics.iter().filter(|d| d.code == "W0320").count();
    assert_eq!(w0320, 3, "{:#?}", c.diagnostics);
    if let Some(p) = ptxas::require_ptxas() {
        if let Err(e) = ptxas::assemble(&p, &text, "sm_90") {
            panic!("ptxas rejected:\n{e}");
        }
    }
}

// ---------------------------------------------------------------- errors, not comments

/// IR that breaks an invariant is an error naming what is wrong: before,
/// the writer emitted a comment, clamped the value or invented a register.
#[test]
fn invalid_ir_is_an_error_not_a_comment() {
    use kdsl::ir::{BarrierId, ExprKind, FuncId, LocalId, Stmt};
    let plain = |stmts: Vec<Stmt>| KernelBuilder::new("k").finish(stmts);
    let group = |count: u32, arrivals: u32, index: u32| {
        let mut k = KernelBuilder::new("k");
        let b = k.barrier("b", Scope::Cta, count, arrivals);
        k.finish(vec![bop(
            BarrierOpKind::Arrive { count: None },
            bref(b, Some(u32c(index))),
        )])
    };
    let shared_indices = {
        let mut k = KernelBuilder::new("k");
        let a = k.shared("a", F32, &[4, 4]);
        let out = k.global("out", F32, true);
        k.finish(vec![store(
            gplace(out, u32c(0), F32),
            load(splace(a, vec![tid(X)], F32)),
        )])
    };
    let atomic_without_value = {
        let mut k = KernelBuilder::new("k");
        let out = k.global("out", U32, true);
        k.finish(vec![expr_stmt(atomic(
            AtomicOp::Add,
            gplace(out, u32c(0), U32),
            vec![],
        ))])
    };
    let cases: Vec<(Kernel, &str)> = vec![
        (plain(vec![st(StmtKind::Break)]), "outside a loop"),
        (
            plain(vec![st(StmtKind::Poisoned {
                groups: vec![],
                blocks: vec![],
            })]),
            "failed to check",
        ),
        (group(1, 0, 0), "expects 0 arrivals"),
        (group(1, (1 << 20) + 5, 0), "expects 1048581 arrivals"),
        (group(65, 1, 0), "holds 65 barriers"),
        (group(2, 1, 7), "index 7 of `b` of 2 barriers"),
        (
            plain(vec![st(StmtKind::Call {
                func: FuncId(3),
                args: vec![],
            })]),
            "function 3 does not exist",
        ),
        (
            plain(vec![expr_stmt(ex(ExprKind::Local(LocalId(9)), U32))]),
            "local 9 does not exist",
        ),
        (shared_indices, "1 indices for `a` of 2 dimensions"),
        (atomic_without_value, "with 0 operands"),
        (
            plain(vec![bop(
                BarrierOpKind::Arrive { count: None },
                bref(BarrierId(4), None),
            )]),
            "barrier group 4 does not exist",
        ),
    ];
    for (k, what) in cases {
        let e = try_write(&one(k), Target::Sm90).expect_err(what);
        assert!(
            matches!(&e.kind, kdsl::ptx::ErrorKind::InvalidIr(m) if m.contains(what)),
            "expected `{what}`, got: {e}"
        );
        assert_eq!(e.item, "kernel k");
    }
}

/// Facts computed from one module do not describe another.
#[test]
fn facts_of_another_module_are_an_error() {
    let info = kdsl::analysis::analyze(&one(saxpy()));
    let e = kdsl::ptx::write(&module(vec![]), &info, Target::Sm90).unwrap_err();
    assert!(matches!(e.kind, kdsl::ptx::ErrorKind::StaleInfo(_)), "{e}");
    // Same shape, another body.
    let mut grown = one(saxpy());
    let k = &mut grown.kernels[0];
    let span = k.span;
    let extra = k.body.stmt(StmtKind::SyncThreads, span);
    k.body.block.stmts.push(extra);
    let e = kdsl::ptx::write(&grown, &info, Target::Sm90).unwrap_err();
    assert!(matches!(e.kind, kdsl::ptx::ErrorKind::StaleInfo(_)), "{e}");
    let fresh = kdsl::analysis::analyze(&grown);
    assert!(kdsl::ptx::write(&grown, &fresh, Target::Sm90).is_ok());
}

/// A kernel that touches a peer CTA's shared memory synchronises its
/// cluster at entry, before its first remote access, and at exit, barrier
/// groups or not: without the entry barrier a remote store can reach a
/// CTA that has not started.
#[test]
fn remote_memory_without_barrier_groups_synchronises_the_cluster_at_entry() {
    let src = "kernel peer(out: global mut [u32]) block(32) cluster(2) {
    shared s: [u32; 32];
    remote(s, 1 - cluster_rank)[thread_idx.x] = thread_idx.x + 100 * cluster_rank;
    cluster_sync();
    out[cluster_rank * 32 + thread_idx.x] = s[thread_idx.x];
}";
    let c = kdsl::compile_str("peer.kdsl", src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let text = c.ptx.expect("PTX");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in\n{text}"))
    };
    let entry = at("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;");
    assert!(entry < at("mapa.shared::cluster"), "{text}");
    assert_has(
        &text,
        "barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n\tret;",
    );
    if let Some(p) = ptxas::require_ptxas() {
        if let Err(e) = ptxas::assemble(&p, &text, "sm_90") {
            panic!("ptxas rejected the PTX:\n{e}");
        }
    }
}
