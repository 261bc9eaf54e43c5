//! The PTX writer on hand-built IR: every kernel is assembled by the real
//! ptxas (13.5) for the targets it is meant for, and the tests state which
//! instructions the barrier operations, headers and prologues produce.

mod common;
mod ptx_build;

use common::ptxas;
use kdsl::ir::{AtomicOp, BarrierOpKind, Dim::*, Kernel, Module, Parity, Special::*, StmtKind};
use kdsl::target::Target;
use ptx_build::kernels::*;
use ptx_build::*;

/// Writes `m` for `t` and, when ptxas is available, assembles it for the
/// same architecture; returns the PTX.
#[track_caller]
fn assemble(m: &Module, t: Target) -> String {
    let text = kdsl::ptx::write(m, t);
    if let Some(p) = ptxas::require_ptxas() {
        if let Err(e) = ptxas::assemble(&p, &text, t.name()) {
            panic!("ptxas rejected the PTX for {t}:\n{e}");
        }
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
    assert_eq!(
        kdsl::ptx::write(&m, Target::Sm90),
        kdsl::ptx::write(&m, Target::Sm90)
    );
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
    assert_has(&text, "ld.global.nc.f32");
    assert_has(&text, "st.global.f32");
    // block(256): block_dim.x is the constant 256.
    assert_lacks(&text, "%ntid.x");
    assert_has(&text, "mad.wide.u32");
}

#[test]
fn reduce_sum_assembles() {
    let m = one(reduce_sum());
    let text = assemble(&m, Target::Sm80);
    assemble(&m, Target::Sm90);
    assert_has(&text, "shfl.sync.down.b32");
    assert_has(&text, ", 0x1f, 0xffffffff;");
    assert_has(&text, "atom.global.add.f32");
    assert_has(&text, ".shared .align 128 .b8 $s_partial[32];");
    assert_has(&text, "bar.sync 0;");
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
    let text = assemble(&m, Target::Sm80);
    assemble(&m, Target::Sm90);
    assert_has(&text, ".reqntid 16, 16, 1");
    // ta[ty, j]: row stride 16 floats = 64 bytes.
    assert_has(&text, ", 64, ");
    assert_has(&text, "ld.shared.f32");
    assert_has(&text, "st.shared.f32");
    assert_eq!(lines_with(&text, "bar.sync 0;").len(), 2);
}

#[test]
fn pipeline_sum_assembles_on_sm90() {
    let m = one(pipeline_sum());
    let text = assemble(&m, Target::Sm90);
    assert_has(&text, ".version 8.0");
    assert_has(
        &text,
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
    );
    assert_has(&text, "mbarrier.arrive.expect_tx.shared::cta.b64 _, ");
    assert_has(&text, "mbarrier.try_wait.parity.shared::cta.b64");
    // Bulk copies: the init is fenced for the async proxy.
    assert_has(&text, "fence.mbarrier_init.release.cluster;");
    for t in [Target::Sm90a, Target::Sm100, Target::Sm100a, Target::Sm120] {
        assemble(&m, t);
    }
}

#[test]
fn cluster_sum_assembles_on_sm90() {
    let m = one(cluster_sum());
    let text = assemble(&m, Target::Sm90);
    assert_has(&text, ".reqnctapercluster 2, 1, 1\n.explicitcluster\n");
    assert_has(&text, "mapa.shared::cluster.u32");
    assert_has(&text, "st.shared::cluster.f32");
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
    assert_has(&sm90, "cvt.rn.bf16.s32");
    assert_has(&sm90, "cvt.rn.bf16.f64");
    // cvt.f32.bf16 needs PTX 7.1.
    assert_has(&sm80, ".version 7.1");
    // float → int truncates and saturates; int → float rounds to nearest.
    assert_has(&sm80, "cvt.rzi.s32.f32");
    assert_has(&sm80, "cvt.rn.f32.u64");
    // Widening keeps signedness of the source; narrowing truncates.
    assert_has(&sm80, "cvt.s64.s32");
    assert_has(&sm80, "cvt.u64.u32");
    assert_has(&sm80, "cvt.u32.u64");
    // bool ↔ numbers.
    assert_has(&sm80, "selp.f32 ");
    assert_has(&sm80, "setp.neu.f32");
    // A constant f16 in a register, as bits.
    assert_has(&sm80, "mov.b16 %h");
    for t in [Target::Sm86, Target::Sm89, Target::Sm100a, Target::Sm120] {
        assemble(&m, t);
    }
}

#[test]
fn every_operator_on_every_type_assembles() {
    let m = one(all_binops());
    let text = assemble(&m, Target::Sm80);
    assemble(&m, Target::Sm90);
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
    // 64-bit shift amounts are narrowed: PTX shifts take a 32-bit amount.
    assert_has(&text, "cvt.u32.u64");
    // Half arithmetic widens to f32 and rounds back once.
    assert_has(&text, "cvt.rn.f16.f32");
    assert_has(&text, "cvt.rn.bf16.f32");
    assert_lacks(&text, "add.f16");
}

#[test]
fn control_flow_assembles() {
    let m = one(control_flow());
    let text = assemble(&m, Target::Sm80);
    assemble(&m, Target::Sm90);
    // Bool parameters travel as u32.
    assert_has(&text, ".param .u32 $p_flag");
    assert_has(&text, "setp.ne.b32");
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
    let text = assemble(&m, Target::Sm80);
    assemble(&m, Target::Sm90);
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
    assert_has(&text, "0f3FB8AA3B");
    assert_has(&text, "0f3F317218");
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
    ] {
        assert_has(&text, needle);
    }
    // No float max/min atomics in hardware: compare-and-swap loops.
    assert_lacks(&text, "atom.global.max.f32");
    // bf16 atomic add: a CAS loop on sm_80, native on sm_90.
    assert_lacks(&text, "add.noftz.bf16");
    assert_has(&sm90, "atom.global.add.noftz.bf16");
}

#[test]
fn dump_for_review() {
    if let Ok(dir) = std::env::var("KDSL_PTX_DUMP") {
        for k in [
            saxpy(),
            reduce_sum(),
            sgemm_tiled(),
            pipeline_sum(),
            cluster_sum(),
        ] {
            let name = k.name.clone();
            std::fs::write(
                format!("{dir}/{name}.ptx"),
                kdsl::ptx::write(&one(k), Target::Sm90),
            )
            .unwrap();
        }
    }
}
