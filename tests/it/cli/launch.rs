//! `kdslc sim` and `kdslc run` from the command line, up to the executor:
//! the launch flags, their usage errors (exit 2, nothing written), compile
//! errors (exit 1), and `kdslc run` on a machine without a CUDA driver.
//! (The forms of each flag are unit-tested in `src/launch/`.)

use crate::common::{self, assert_contains, kdslc, SAXPY};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const TWO: &str = "\
kernel first(out: global mut [u32]) block(32) {
    out[thread_idx.x] = 1u32;
}
kernel second(out: global mut [u32]) block(64) cluster(2) {
    out[thread_idx.x] = 2u32;
}
";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn project() -> tempfile::TempDir {
    common::project(&[
        ("saxpy.kdsl", SAXPY),
        ("two.kdsl", TWO),
        ("bad.kdsl", "kernel k() block(32) { let x = y; }\n"),
    ])
}

/// Runs `kdslc SUB ARGS...` under both subcommands, expecting the same
/// usage error and that `--out o` was not created.
fn usage_error(dir: &Path, args: &[&str], message: &str) {
    for sub in ["sim", "run"] {
        let mut full = vec![sub];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--out", "o"]);
        let o = kdslc(dir, &full);
        assert_eq!(o.status.code(), Some(2), "{sub} {args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), format!("error: {message}\n"), "{sub} {args:?}");
        assert!(!dir.join("o").exists(), "{sub} {args:?} created --out");
    }
}

const ARGS: [&str; 8] = [
    "--arg",
    "a=2",
    "--arg",
    "x=iota:1024",
    "--arg",
    "y=zeros:1024",
    "--arg",
    "3=1024",
];

/// The words of a command line.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut v = vec!["saxpy.kdsl", "--grid", "4"];
    v.extend_from_slice(&ARGS);
    v.extend_from_slice(extra);
    v
}

#[test]
fn launch_usage_errors_are_the_same_for_sim_and_run() {
    let p = project();
    let d = p.path();
    usage_error(
        d,
        &["saxpy.kdsl", "--grid", "4", "--arg", "a=2"],
        "kernel `saxpy` needs a value for `x` (global [f32]), `y` (global mut [f32]), `n` (u32); give each with `--arg NAME=VALUE`",
    );
    usage_error(
        d,
        &with(&["--block", "128"]),
        "`--block 128` contradicts the kernel's `block(256)`; leave `--block` out to use it",
    );
    usage_error(
        d,
        &words("saxpy.kdsl --grid 4 --arg a=two --arg x=[1] --arg y=[1] --arg n=1"),
        "invalid value for `a` (f32): `two` is not an f32 literal (for example `1.5`)",
    );
    usage_error(
        d,
        &words("saxpy.kdsl --grid 4 --arg a=1 --arg x=[1] --arg y=[1] --arg n=4294967296"),
        "invalid value for `n` (u32): `4294967296` is out of range for u32 (0 to 4294967295)",
    );
    usage_error(
        d,
        &words("saxpy.kdsl --grid 4 --arg a=1 --arg x=@missing.npy --arg y=[1] --arg n=1"),
        "invalid value for `x` (global [f32]): cannot read `missing.npy`: no such file",
    );
    usage_error(
        d,
        &with(&["--dump", "q"]),
        "`--dump q`: no array argument of kernel `saxpy` has that name (they are `x`, `y`)",
    );
    usage_error(
        d,
        &with(&["--dump", "n"]),
        "`--dump n`: `n` is a scalar argument, and --dump prints arrays (`x`, `y`)",
    );
    usage_error(
        d,
        &with(&["--kernel", "sax"]),
        "no kernel `sax` in the module; did you mean `saxpy`? (its kernels: `saxpy`)",
    );
    usage_error(
        d,
        &["two.kdsl", "--grid", "2", "--arg", "out=zeros:64"],
        "the module has 2 kernels, so `--kernel NAME` must say which to launch: `first`, `second`",
    );
    usage_error(
        d,
        &["two.kdsl", "--kernel", "second", "--grid", "3", "--arg", "out=zeros:64"],
        "the grid (3, 1, 1) is not a whole number of clusters (2, 1, 1): x = 3 is not a multiple of 2",
    );
    usage_error(
        d,
        &words("two.kdsl --kernel second --grid 4 --cluster 4 --arg out=zeros:64"),
        "`--cluster 4` contradicts the kernel's `cluster(2)`; leave `--cluster` out to use it",
    );
    usage_error(
        d,
        &["missing.kdsl", "--grid", "4"],
        "cannot read `missing.kdsl`: no such file",
    );
}

#[test]
fn out_must_be_a_folder() {
    let p = project();
    fs::write(p.path().join("file"), "keep").unwrap();
    for sub in ["sim", "run"] {
        let mut args = vec![sub];
        args.extend(with(&["--out", "file"]));
        let o = kdslc(p.path(), &args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            stderr(&o),
            "error: `--out file`: it exists and is not a folder\n"
        );
    }
    assert_eq!(fs::read_to_string(p.path().join("file")).unwrap(), "keep");
}

#[test]
fn flag_syntax_errors_come_from_clap_with_status_2() {
    let p = project();
    for args in [
        &["sim", "saxpy.kdsl"][..],
        &["sim", "saxpy.kdsl", "--grid", "0"],
        &["sim", "saxpy.kdsl", "--grid", "4", "--arg", "n"],
        &["run", "saxpy.kdsl", "--grid", "4", "--bench", "0"],
    ] {
        let o = kdslc(p.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = kdslc(p.path(), &["sim", "saxpy.kdsl", "--grid", "4,0"]);
    assert_contains(&stderr(&o), &["every dimension is at least 1"]);
}

#[test]
fn compile_errors_are_exit_1_and_reported() {
    let p = project();
    for sub in ["sim", "run"] {
        let o = kdslc(p.path(), &[sub, "bad.kdsl", "--grid", "1", "--out", "o"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_contains(&stderr(&o), &["error[E0"]);
        assert!(!p.path().join("o").exists());
    }
}

/// Whether this machine can load libcuda (then the no-driver test does not
/// apply).
fn has_driver() -> bool {
    // SAFETY: only tries to load the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn run_without_a_driver_is_exit_2_and_points_to_sim() {
    if has_driver() {
        eprintln!("a CUDA driver is present: the no-driver case cannot be tested here");
        return;
    }
    let p = project();
    let mut args = vec!["run"];
    args.extend(with(&["--out", "o", "--bench", "3"]));
    let o = kdslc(p.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: no CUDA driver found (libcuda could not be loaded); use `kdslc sim` to run on the CPU\n"
    );
    assert!(o.stdout.is_empty());
    assert!(!p.path().join("o").exists());
}

#[test]
fn gpu_check_fails_clearly_without_a_gpu() {
    let has_smi = Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_smi {
        eprintln!("an NVIDIA GPU is present: the no-GPU case cannot be tested here");
        return;
    }
    let script = crate::common::repo_root().join("scripts/gpu-check.sh");
    let o = Command::new("bash")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("gpu-check: no NVIDIA GPU or driver here"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// `scripts/gpu-check.sh` and its arguments, with or without a GPU: `--help`,
/// an unknown argument, `--only` without a kernel or with one that does not
/// exist, a GEMM size TMA cannot take.
#[test]
fn gpu_check_handles_its_arguments() {
    let script = crate::common::repo_root().join("scripts/gpu-check.sh");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        Command::new("bash")
            .arg(&script)
            .args(args)
            .envs(env.iter().copied())
            .output()
            .expect("bash runs")
    };
    let o = run(&["--help"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let usage = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        usage.starts_with("usage: scripts/gpu-check.sh [--sim] [--only KERNEL]..."),
        "{usage}"
    );
    assert!(
        usage.contains("--sim") && usage.contains("--only KERNEL"),
        "{usage}"
    );
    for (args, env, said) in [
        (
            &["--bogus"][..],
            &[][..],
            "gpu-check: unknown argument `--bogus`",
        ),
        (&["--only"], &[], "gpu-check: --only needs a kernel name"),
        (
            &["--only", "nosuch"],
            &[],
            "gpu-check: --only nosuch: no samples/nosuch.kdsl",
        ),
        (
            &["--sim", "--only", "hopper_gemm"],
            &[("GEMM_CHECK_SIZE", "100")],
            "gpu-check: GEMM sizes must be positive multiples of 8 (TMA's 16-byte rows), not 100",
        ),
    ] {
        let o = run(args, env);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(said), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

/// Without a GPU, `gpu-check.sh --sim` runs the check's launches of the
/// tensor-core GEMM — the sample and nvcc's PTX of its twin, on the
/// integer-valued `.npy` inputs the script writes — in `kdslc sim`, and
/// builds its timing launches (here at small sizes: the GPU check's are
/// 1024^3, then 4096^3 and 8192^3).
#[test]
fn gpu_check_sim_runs_the_gemm_launches() {
    let Some(nvcc) = crate::common::ptxas::require_nvcc() else {
        return;
    };
    let script = crate::common::repo_root().join("scripts/gpu-check.sh");
    let o = Command::new("bash")
        .arg(&script)
        .args(["--sim", "--only", "hopper_gemm"])
        .env("KDSLC", env!("CARGO_BIN_EXE_kdslc"))
        .env("NVCC", &nvcc)
        .env("GEMM_CHECK_SIZE", "136")
        .env("GEMM_BENCH_SIZES", "256")
        .output()
        .expect("bash runs");
    let said = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    for line in [
        "ok    hopper_gemm (samples/hopper_gemm.kdsl)",
        "built hopper_gemm (samples/hopper_gemm.kdsl, 256)",
        "gpu-check: every check launch ran in the simulator",
    ] {
        assert!(said.contains(line), "no `{line}` in:\n{said}");
    }
    // The twin too, from nvcc's PTX.
    assert_eq!(said.matches("ok    hopper_gemm (").count(), 2, "{said}");
    assert_eq!(said.matches("built hopper_gemm (").count(), 2, "{said}");
    assert!(!said.contains("FAIL"), "{said}");
}

/// The GEMM's variants in `gpu-check.sh --sim`: the persistent cluster
/// GEMM (a sample) and the fp8 instantiation of the GEMM
/// (`hopper_gemm__ELEM_e4m3`, `--const ELEM=e4m3` on its sample, e4m3
/// `.npy` inputs), their check launches in `kdslc sim` and their timing
/// launches built; `--only` takes the variant's name.
#[test]
fn gpu_check_sim_runs_the_gemm_variants() {
    let Some(nvcc) = crate::common::ptxas::require_nvcc() else {
        return;
    };
    let script = crate::common::repo_root().join("scripts/gpu-check.sh");
    let o = Command::new("bash")
        .arg(&script)
        .args(["--sim", "--only", "hopper_gemm_persistent"])
        .args(["--only", "hopper_gemm__ELEM_e4m3"])
        .env("KDSLC", env!("CARGO_BIN_EXE_kdslc"))
        .env("NVCC", &nvcc)
        .env("GEMM_CHECK_SIZE", "272")
        .env("GEMM_BENCH_SIZES", "256")
        .output()
        .expect("bash runs");
    let said = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    for line in [
        "ok    hopper_gemm_persistent (samples/hopper_gemm_persistent.kdsl)",
        "ok    hopper_gemm__ELEM_e4m3 (samples/hopper_gemm.kdsl)",
        "built hopper_gemm_persistent (samples/hopper_gemm_persistent.kdsl, 256)",
        "built hopper_gemm__ELEM_e4m3 (samples/hopper_gemm.kdsl, 256)",
        "gpu-check: every check launch ran in the simulator",
    ] {
        assert!(said.contains(line), "no `{line}` in:\n{said}");
    }
    assert!(!said.contains("ok    hopper_gemm ("), "{said}");
    assert!(!said.contains("FAIL"), "{said}");
}

/// `tests/driver/libcuda_stub.c` built as `DIR/libcuda.so`: with `DIR`
/// first in `LD_LIBRARY_PATH`, the dynamic loader gives it to kdslc in
/// place of any real driver (cudarc opens `libcuda.so` by name).
fn stub_driver(dir: &Path) {
    let source = crate::common::repo_root().join("tests/driver/libcuda_stub.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("`{cc}` (the C compiler that links Rust) runs: {e}"));
    assert!(built.status.success(), "{}", stderr(&built));
}

/// `kdslc run` of saxpy against the stub driver, its results chosen by
/// `env` (see the stub).
fn run_on_stub(p: &Path, env: &[(&str, &str)]) -> Output {
    let mut args = vec!["run"];
    args.extend(with(&["--out", "o"]));
    let lib = p.join("lib");
    let mut path = lib.clone().into_os_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(old);
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdslc"));
    cmd.current_dir(p).args(&args).env("LD_LIBRARY_PATH", path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("kdslc runs")
}

/// Every result of the driver, known or not, is a clear error naming its
/// number (and its name where `cuda.h` has one), never a crash: codes
/// outside cudarc's bundled enum once died with SIGILL (35, 36) or
/// SIGSEGV inside its `Debug` formatting. A driver that fails to
/// initialise cannot be used at all: exit 2, like no driver; a failure
/// after is the kernel's, exit 4.
#[cfg(target_os = "linux")]
#[test]
fn run_names_every_driver_result_and_never_crashes() {
    let p = project();
    fs::create_dir(p.path().join("lib")).unwrap();
    stub_driver(&p.path().join("lib"));
    let sim = "use `kdslc sim` to run on the CPU";
    let cases: [((&str, &str), i32, String); 6] = [
        (
            ("KDSL_STUB_INIT", "35"),
            2,
            format!("the CUDA driver cannot be used: cuInit: error 35 (a code this kdslc does not know): the driver has no description of it; {sim}"),
        ),
        (
            ("KDSL_STUB_INIT", "36"),
            2,
            format!("the CUDA driver cannot be used: cuInit: CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER (error 36): stub: a newer driver is needed; {sim}"),
        ),
        (
            ("KDSL_STUB_INIT", "3"),
            2,
            format!("the CUDA driver cannot be used: cuInit: CUDA_ERROR_NOT_INITIALIZED (error 3): the driver has no description of it; {sim}"),
        ),
        (
            ("KDSL_STUB_INIT", "4000000000"),
            2,
            format!("the CUDA driver cannot be used: cuInit: error 4000000000 (a code this kdslc does not know): the driver has no description of it; {sim}"),
        ),
        (
            ("KDSL_STUB_LOAD", "424242"),
            4,
            "kernel `saxpy` on the GPU: cuModuleLoadDataEx: error 424242 (a code this kdslc does not know): the driver has no description of it\nthe driver's JIT log:\nstub: the JIT refused this module".to_string(),
        ),
        (
            ("KDSL_STUB_LOAD", "218"),
            4,
            "kernel `saxpy` on the GPU: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (error 218): stub: a PTX JIT compilation failed\nthe driver's JIT log:\nstub: the JIT refused this module".to_string(),
        ),
    ];
    for (env, status, message) in cases {
        let o = run_on_stub(p.path(), &[env]);
        assert_eq!(o.status.code(), Some(status), "{env:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), format!("error: {message}\n"), "{env:?}");
        assert!(!p.path().join("o").exists(), "{env:?} wrote --out");
    }
    // A driver that succeeds throughout (and runs nothing): the arrays come
    // back as they went.
    let o = run_on_stub(p.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(p.path().join("o/y.npy").is_file());
}

/// `kdslc run` with tensor maps against the stub driver: each map is
/// encoded by `cuTensorMapEncodeTiled` with exactly the arguments cuda.h
/// wants (innermost first, element strides 1, no interleave, the swizzle,
/// L2 promotion and fill of the map, a 16-byte aligned global address, a
/// 64-byte aligned map) and passed by value as the kernel's 128-byte
/// parameter, or by the address of a device copy for a `.u64` one; the
/// driver's refusal is exit 4, a map against cuda.h's rules a usage error
/// naming the rule before anything runs.
#[cfg(target_os = "linux")]
#[test]
fn run_encodes_tensor_maps_through_the_driver() {
    let p = project();
    fs::create_dir(p.path().join("lib")).unwrap();
    stub_driver(&p.path().join("lib"));
    let gemm = crate::common::repo_root().join("tests/fixtures/hopper-ptx/gemm_g_40_232.ptx");
    let gemm = gemm.to_str().unwrap().to_string();
    let log = p.path().join("driver.log");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let _ = fs::remove_file(&log);
        let lib = p.path().join("lib");
        let mut path = lib.into_os_string();
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            path.push(":");
            path.push(old);
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdslc"));
        cmd.current_dir(p.path())
            .arg("run")
            .args(args)
            .env("LD_LIBRARY_PATH", path)
            .env("KDSL_STUB_LOG", &log);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.output().expect("kdslc runs");
        (o, fs::read_to_string(&log).unwrap_or_default())
    };
    let a = "0=tmap:bf16:fill:128,64:1:box=128,64:swizzle=128";
    let b = "1=tmap:bf16:fill:256,64:2:box=256,64:swizzle=128:fill=nan:l2=256";
    let gemm_args = [
        gemm.as_str(),
        "--grid",
        "1",
        "--block",
        "384",
        "--shared-bytes",
        "197632",
        "--arg",
        a,
        "--arg",
        b,
        "--arg",
        "2=bf16:zeros:32768",
        "--arg",
        "3=128",
        "--arg",
        "4=256",
        "--arg",
        "5=64",
    ];
    let (o, text) = run(&gemm_args, &[("KDSL_STUB_PARAMS", "3")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..2],
        [
            "encode type=9 rank=2 aligned16=1 dims=64,128 strides=128 box=64,128 elementStrides=1,1 interleave=0 swizzle=3 l2=0 fill=0 map_aligned64=1",
            "encode type=9 rank=2 aligned16=1 dims=64,256 strides=128 box=64,256 elementStrides=1,1 interleave=0 swizzle=3 l2=3 fill=1 map_aligned64=1",
        ],
        "{text}"
    );
    // The kernel's 128-byte parameters are the maps themselves.
    let magic = u64::from_le_bytes(*b"STUBTMAP");
    assert_eq!(
        lines[2],
        format!("param 0 {magic:016x} aligned64=1"),
        "{text}"
    );
    assert_eq!(
        lines[3],
        format!("param 1 {magic:016x} aligned64=1"),
        "{text}"
    );
    // A `.u64` parameter gets the address of a device copy of the map.
    fs::write(
        p.path().join("ptr.ptx"),
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 pmap, .param .u32 n)\n.reqntid 32, 1, 1\n{\n\tret;\n}\n",
    )
    .unwrap();
    let (o, text) = run(
        &[
            "ptr.ptx",
            "--grid",
            "1",
            "--arg",
            "0=tmap:u8:zeros:4,5,32:box=2,2,16",
            "--arg",
            "1=7",
        ],
        &[("KDSL_STUB_PARAMS", "2"), ("KDSL_STUB_DEREF", "0")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        text.starts_with("encode type=0 rank=3 aligned16=1 dims=32,5,4 strides=32,160 box=16,2,2 elementStrides=1,1,1 interleave=0 swizzle=0 l2=0 fill=0 map_aligned64=1\n"),
        "{text}"
    );
    assert!(text.contains(&format!("deref {magic:016x}")), "{text}");
    // The driver refuses the map: the kernel's fault.
    let (o, _) = run(&gemm_args, &[("KDSL_STUB_ENCODE", "1")]);
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(
        stderr(&o),
        "error: kernel `gemm` on the GPU: cuTensorMapEncodeTiled: CUDA_ERROR_INVALID_VALUE (error 1): stub: invalid argument\n"
    );
    // cuda.h's rules, checked before the driver is opened.
    let mut bad = gemm_args;
    bad[8] = "0=tmap:bf16:fill:128,64:1:box=128,64:swizzle=64";
    let (o, text) = run(&bad, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("swizzle: the box's innermost dimension takes 128 bytes, more than the 64-byte swizzle span"),
        "{}",
        stderr(&o)
    );
    assert!(text.is_empty(), "the driver was called: {text}");
    // --check-sim: the stub ran nothing, the simulator computed C; with
    // integer-valued inputs to a wgmma kernel, floats compare bit for bit.
    let mut check = gemm_args.to_vec();
    check.push("--check-sim");
    let (o, _) = run(&check, &[]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`pc` (bf16[32768]): 32768 elements differ (compared bit for bit: the inputs are integer-valued)"),
        "{}",
        stderr(&o)
    );
}
