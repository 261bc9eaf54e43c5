//! Proves the ptxas harness in tests/it/common/ptxas.rs tells a good PTX module
//! from a bad one, so tests built on it can be trusted.

use crate::common::ptxas;

/// A complete, valid sm_80 kernel: out[i] = a * x[i] + out[i] for i < n.
const VALID_SM80: &str = r#"
.version 7.0
.target sm_80
.address_size 64

.visible .entry saxpy(
    .param .u64 p_out,
    .param .u64 p_x,
    .param .f32 p_a,
    .param .u32 p_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [p_out];
    ld.param.u64 %rd2, [p_x];
    ld.param.f32 %f1, [p_a];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd7];
    ld.global.f32 %f3, [%rd6];
    fma.rn.f32 %f4, %f1, %f2, %f3;
    st.global.f32 [%rd6], %f4;
DONE:
    ret;
}
"#;

/// Invalid: uses register %r9, which was never declared (only %r0..%r1 exist).
const INVALID_UNDECLARED_REG: &str = r#"
.version 7.0
.target sm_80
.address_size 64

.visible .entry broken(.param .u32 p_n)
{
    .reg .b32 %r<2>;
    ld.param.u32 %r1, [p_n];
    add.s32 %r9, %r1, 1;
    ret;
}
"#;

#[test]
fn valid_sm80_kernel_assembles() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    eprintln!(
        "using {} ({})",
        ptxas.display(),
        ptxas::version(&ptxas).unwrap_or_else(|| "version unknown".into())
    );
    if let Err(e) = ptxas::assemble(&ptxas, VALID_SM80, "sm_80") {
        panic!("a valid sm_80 kernel was rejected:\n{e}");
    }
    // sm_80 code also assembles for newer GPUs.
    ptxas::assemble(&ptxas, VALID_SM80, "sm_90").expect("sm_80 PTX for -arch=sm_90");
}

#[test]
fn valid_kernel_yields_an_elf_cubin_and_a_log() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let out = ptxas::assemble_with(&ptxas, VALID_SM80, "sm_80", &["-v"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.cubin.starts_with(b"\x7fELF"),
        "cubin is not an ELF file"
    );
    assert!(
        out.log.contains("saxpy") && out.log.contains("registers"),
        "ptxas -v should report the kernel's registers, got:\n{}",
        out.log
    );
}

#[test]
fn invalid_kernel_is_rejected_with_ptxas_message() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let err = ptxas::assemble(&ptxas, INVALID_UNDECLARED_REG, "sm_80")
        .expect_err("ptxas accepted a kernel that uses an undeclared register");
    assert!(
        err.contains("%r9"),
        "the error should come from ptxas and name the bad register, got:\n{err}"
    );
    // The failure report carries the numbered PTX for debugging.
    assert!(err.contains("add.s32 %r9, %r1, 1;"), "got:\n{err}");
}

#[test]
fn target_newer_than_arch_is_rejected() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let sm90 = VALID_SM80
        .replace(".version 7.0", ".version 7.8")
        .replace(".target sm_80", ".target sm_90");
    ptxas::assemble(&ptxas, &sm90, "sm_90").expect("sm_90 module for -arch=sm_90");
    let err = ptxas::assemble(&ptxas, &sm90, "sm_80").expect_err("sm_90 module for -arch=sm_80");
    assert!(
        err.contains("SM version specified by .target"),
        "got:\n{err}"
    );
}

#[test]
fn ci_uses_the_pinned_ptxas() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let version = ptxas::version(&ptxas).unwrap_or_default();
    if ptxas::in_ci() {
        assert!(
            version.contains(ptxas::PINNED_RELEASE),
            "CI must use ptxas {} (scripts/cuda-tools.sh), found {:?} at {}",
            ptxas::PINNED_RELEASE,
            version,
            ptxas.display()
        );
    } else if !version.contains(ptxas::PINNED_RELEASE) {
        eprintln!(
            "note: ptxas at {} is {version:?}, not the pinned {}",
            ptxas.display(),
            ptxas::PINNED_RELEASE
        );
    }
}
