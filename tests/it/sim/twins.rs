//! Differential tests against nvcc: the CUDA C++ twins of the benchmark
//! kernels (`bench/kernels/*.cu`, which `bench/peer.py` also compares)
//! are compiled with the pinned nvcc at test time, and their PTX — which
//! the simulator did not write and which uses inline PTX for the mbarrier
//! and bulk-copy operations — runs on the same inputs as the kdslc PTX of
//! the samples, checked against the same references (`sim::samples`).

use crate::common::ptxas::require_nvcc;
use crate::common::sim::*;
use crate::sim::samples::*;
use std::path::Path;
use std::process::Command;

/// nvcc's PTX of a twin (`-lineinfo` adds `.loc`/`.file`).
pub fn nvcc_ptx(nvcc: &Path, name: &str, lineinfo: bool) -> String {
    let src = repo_root().join("bench/kernels").join(format!("{name}.cu"));
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join(format!("{name}.ptx"));
    let mut cmd = Command::new(nvcc);
    let arch = format!("-arch={}", nvcc_arch(&src));
    cmd.args(["-ptx", arch.as_str(), "-o"]).arg(&out).arg(&src);
    if lineinfo {
        cmd.arg("-lineinfo");
    }
    let result = cmd.output().expect("run nvcc");
    assert!(
        result.status.success(),
        "nvcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::read_to_string(&out).expect("read nvcc output")
}

fn twin(name: &str, case: fn(&Loaded)) {
    let Some(nvcc) = require_nvcc() else { return };
    for lineinfo in [false, true] {
        let ptx = nvcc_ptx(&nvcc, name, lineinfo);
        let k = ptx_str(&format!("{name}.ptx"), &ptx).unwrap_or_else(|e| panic!("{name}: {e}"));
        case(&k);
    }
}

#[test]
fn saxpy() {
    twin("saxpy", case_saxpy);
}

#[test]
fn reduce_sum() {
    twin("reduce_sum", case_reduce_sum);
}

#[test]
fn cluster_sum() {
    twin("cluster_sum", case_cluster_sum);
}

#[test]
fn pipeline_sum() {
    twin("pipeline_sum", case_pipeline_sum);
}

#[test]
fn sgemm_tiled() {
    twin("sgemm_tiled", case_sgemm_tiled);
}

#[test]
fn sgemm_regtile() {
    twin("sgemm_regtile", case_sgemm_regtile);
}

#[test]
fn softmax_rows() {
    twin("softmax_rows", case_softmax_rows);
}

/// The Hopper GEMM's twin: TMA tensor copies, mbarriers, wgmma and
/// setmaxnreg from nvcc's PTX (sm_90a).
#[test]
fn hopper_gemm() {
    twin("hopper_gemm", case_hopper_gemm);
}

/// The attention sample's twin: SS and RS wgmma, quad shuffles and
/// ex2.approx from nvcc's PTX, each of its four entries against the f64
/// reference the sample meets (in-order schedule).
#[test]
fn flash_attention_fwd() {
    twin("flash_attention_fwd", |k| {
        crate::sim::attention::case_flash_attention(k, false)
    });
}

/// With `-lineinfo`, a report points into the `.cu` file (the `.loc` of the
/// access): an array too short for what the kernel reads.
#[test]
fn lineinfo_reports_point_at_the_cuda_source() {
    let Some(nvcc) = require_nvcc() else { return };
    let k = ptx_str("saxpy.ptx", &nvcc_ptx(&nvcc, "saxpy", true)).expect("loads");
    let n = 300u32;
    let l = launch(
        "saxpy",
        2,
        256,
        1,
        vec![
            f32v(1.0),
            f32s("x", &vec![1.0; 200]),
            f32s("y", &vec![0.0; n as usize]),
            u32v(n),
        ],
    );
    let o = run(&k, &l);
    assert!(o.faulted);
    let text = rendered(&k, &o);
    assert!(text.contains("error[S0002]"), "{text}");
    assert!(
        text.contains("saxpy.cu:"),
        "the report points into the .cu file:\n{text}"
    );
}

/// The GEMM's twin with B's stages swizzled by 64 bytes, the mistake of
/// `tests/ui/hopper_gemm_swizzle.kdsl` (E0403), made where CUDA makes it:
/// in the host's tensor map. A 64-byte swizzle has rows of 32 bf16, the box
/// rows of 64; `kdslc sim` (and `kdslc run`, as the driver's
/// `cuTensorMapEncodeTiled` would) refuses the map before the launch, with
/// the reason, and writes nothing.
#[test]
fn hopper_gemm_with_a_swizzle_narrower_than_its_box_is_refused() {
    let Some(nvcc) = require_nvcc() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let ptx = dir.path().join("hopper_gemm.ptx");
    std::fs::write(&ptx, nvcc_ptx(&nvcc, "hopper_gemm", false)).expect("write");
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .arg("sim")
        .arg(&ptx)
        .args([
            "--grid",
            "2,2",
            "--block",
            "384",
            "--shared-bytes",
            "196672",
        ])
        .args(["--arg", "0=tmap:bf16:rand:200,136:1:box=128,64:swizzle=128"])
        .args(["--arg", "1=tmap:bf16:rand:300,136:2:box=256,64:swizzle=64"])
        .args(["--arg", "2=bf16:zeros:60000", "--arg", "3=200"])
        .args(["--arg", "4=300", "--arg", "5=136", "--out"])
        .arg(&out)
        .env("NO_COLOR", "1")
        .output()
        .expect("kdslc runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the box's innermost dimension takes 128 bytes, more than the 64-byte swizzle span"
        ),
        "{stderr}"
    );
    assert!(!out.exists(), "no outputs");
}
