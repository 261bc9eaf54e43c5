//! Host programs built from generated headers and run against the stub
//! driver (`tests/driver/libcuda_stub.c`, which logs what it is given):
//! `examples/host/` built by its Makefile (the one docs/build-systems.md
//! shows) in one rule chain from the `.kdsl` files, each launch's
//! configuration, parameters and tensor-map encodings as the manifest says;
//! and the header's own checks, which return `CUDA_ERROR_INVALID_VALUE`
//! without calling the driver. On a GPU, `scripts/gpu-check.sh` runs the
//! same programs with `check`.

use crate::common::{self, repo_root, text};
use std::path::Path;
use std::process::{Command, Output};

/// The stub driver as `dir/libcuda.so`.
fn stub_driver(dir: &Path) {
    let source = repo_root().join("tests/driver/libcuda_stub.c");
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(dir.join("libcuda.so"))
        .arg(&source)
        .output()
        .expect("cc runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Runs `program` (in `dir`) on the stub in `lib`, logging to `dir/log`.
fn run_on_stub(dir: &Path, lib: &Path, program: &str, params: &str) -> (Output, String) {
    let log = dir.join("log");
    let _ = std::fs::remove_file(&log);
    let out = Command::new(dir.join(program))
        .current_dir(dir)
        .env("LD_LIBRARY_PATH", lib)
        .env("KDSL_STUB_LOG", &log)
        .env("KDSL_STUB_PARAMS", params)
        .env("KDSL_STUB_CONFIG", "1")
        .output()
        .expect("the program runs");
    (out, std::fs::read_to_string(&log).unwrap_or_default())
}

/// The low 32 bits of parameter `i` in the stub's log (the stub prints 8
/// bytes; a 4-byte parameter's are the low ones).
fn low32(log: &str, i: usize) -> u32 {
    let line = log
        .lines()
        .find(|l| l.starts_with(&format!("param {i} ")))
        .unwrap_or_else(|| panic!("no param {i} in\n{log}"));
    let hex = line.split(' ').nth(2).unwrap();
    u32::from_str_radix(&hex[8..], 16).unwrap()
}

fn param64(log: &str, i: usize) -> u64 {
    let line = log
        .lines()
        .find(|l| l.starts_with(&format!("param {i} ")))
        .unwrap_or_else(|| panic!("no param {i} in\n{log}"));
    u64::from_str_radix(line.split(' ').nth(2).unwrap(), 16).unwrap()
}

/// The Makefile of docs/build-systems.md's "A host program" is
/// `examples/host/Makefile`; built with it, saxpy (C) and the GEMM (C++)
/// launch as their manifests say.
#[test]
fn the_makefile_builds_host_programs_that_launch_as_the_manifest_says() {
    let Some(inc) = common::ptxas::require_cuda_include() else {
        return;
    };
    let makefile = std::fs::read_to_string(repo_root().join("examples/host/Makefile")).unwrap();
    let docs = std::fs::read_to_string(repo_root().join("docs/build-systems.md")).unwrap();
    let shown = docs
        .split("## A host program")
        .nth(1)
        .and_then(|s| s.split("```make\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("docs/build-systems.md shows the Makefile");
    assert!(
        makefile.contains(shown),
        "docs/build-systems.md's Makefile is not examples/host/Makefile's"
    );

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("host");
    std::fs::create_dir(&dir).unwrap();
    for f in ["Makefile", "saxpy.c", "gemm.cpp"] {
        std::fs::copy(repo_root().join("examples/host").join(f), dir.join(f)).unwrap();
    }
    let lib = tmp.path().join("lib");
    std::fs::create_dir(&lib).unwrap();
    stub_driver(&lib);
    let cuda = inc.parent().unwrap();
    let make = |args: &[&str]| {
        Command::new("make")
            .arg("-C")
            .arg(&dir)
            .arg(format!("KDSLC={}", env!("CARGO_BIN_EXE_kdslc")))
            .arg(format!("CUDA={}", cuda.display()))
            .arg(format!("SAMPLES={}", repo_root().join("samples").display()))
            .arg(format!("LDLIBS=-L{} -lcuda", lib.display()))
            .args(args)
            .output()
            .expect("make runs")
    };
    let out = make(&[]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // One kdslc run per kernel wrote the PTX and the header, one depfile each.
    let dep = std::fs::read_to_string(dir.join("saxpy.d")).unwrap();
    assert_eq!(
        dep,
        format!(
            "saxpy.ptx saxpy.h: {}/samples/saxpy.kdsl\n",
            repo_root().display()
        )
    );
    // Nothing left to do.
    let again = make(&[]);
    assert!(
        text(&again.stdout).contains("Nothing to be done"),
        "{}",
        text(&again.stdout)
    );

    // saxpy: grid ceil(1000 / 256), block(256), a = 2.5, n = 1000.
    let (out, log) = run_on_stub(&dir, &lib, "saxpy", "4");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        log.starts_with("launch grid=4,1,1 block=256,1,1 shared=0 attrs=0\n"),
        "{log}"
    );
    assert_eq!(low32(&log, 0), 2.5f32.to_bits());
    assert_ne!(param64(&log, 1), 0);
    assert_ne!(param64(&log, 2), param64(&log, 1));
    assert_eq!(low32(&log, 3), 1000);

    // The GEMM: two maps encoded from the shapes, 197,632 bytes of dynamic
    // shared memory, grid ceil(520 / 256) x ceil(300 / 128).
    let (out, log) = run_on_stub(&dir, &lib, "gemm", "6");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "encode type=9 rank=2 aligned16=1 dims=200,300 strides=400 box=64,128 elementStrides=1,1 interleave=0 swizzle=3 l2=3 fill=0 map_aligned64=1",
            "encode type=9 rank=2 aligned16=1 dims=200,520 strides=400 box=64,256 elementStrides=1,1 interleave=0 swizzle=3 l2=3 fill=0 map_aligned64=1",
            "launch grid=3,3,1 block=384,1,1 shared=197632 attrs=0",
        ],
        "{log}"
    );
    // The maps by value: the stub's encoding starts "STUBTMAP".
    assert_eq!(param64(&log, 0), u64::from_le_bytes(*b"STUBTMAP"));
    assert_eq!(param64(&log, 1), u64::from_le_bytes(*b"STUBTMAP"));
    assert_eq!(
        (low32(&log, 3), low32(&log, 4), low32(&log, 5)),
        (300, 520, 200)
    );
}

/// The header's own checks: a tensor map's address, dimensions and strides
/// against cuTensorMapEncodeTiled's rules, a grid of part clusters, missing
/// arguments: each `CUDA_ERROR_INVALID_VALUE` with no call to the driver.
#[test]
fn the_header_refuses_what_the_driver_would_before_calling_it() {
    let Some(inc) = common::ptxas::require_cuda_include() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    stub_driver(dir.path());
    for (sample, target) in [("hopper_gemm", "sm_90a"), ("cluster_sum", "sm_90")] {
        let out = common::kdslc(
            dir.path(),
            &[
                repo_root()
                    .join(format!("samples/{sample}.kdsl"))
                    .to_str()
                    .unwrap(),
                "--target",
                target,
                "--emit",
                "header",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let program = r#"
#include "hopper_gemm.h"
#include "cluster_sum.h"
#include <stdio.h>
int main(void)
{
    /* C99's CUtensorMap has no alignment (C11's and C++11's: 128). */
    static char room[512];
    CUtensorMap *map = (CUtensorMap *)(((uintptr_t)room + 127) & ~(uintptr_t)127);
    CUtensorMap *off = (CUtensorMap *)((char *)map + 32);
    const cuuint64_t dims[2] = {64, 64}, strides[1] = {128};
    const cuuint64_t zero[2] = {0, 64}, huge[2] = {64, ((cuuint64_t)1 << 31) + 1};
    const cuuint64_t odd[1] = {120}, far[1] = {(cuuint64_t)1 << 40};
    const cuuint64_t wide[2] = {2, ((cuuint64_t)1 << 31)};
    kdsl_cluster_sum_args args = {4096, 8192, 100};
    CUresult r[] = {
        kdsl_hopper_gemm_a_encode(map, 4104, dims, strides),    /* base not 16-byte aligned */
        kdsl_hopper_gemm_a_encode(off, 4096, dims, strides),    /* map not 64-byte aligned */
        kdsl_hopper_gemm_a_encode(map, 4096, zero, strides),    /* a dimension of 0 */
        kdsl_hopper_gemm_a_encode(map, 4096, huge, strides),    /* past 2^31 */
        kdsl_hopper_gemm_a_encode(map, 4096, dims, odd),        /* stride not a multiple of 16 */
        kdsl_hopper_gemm_a_encode(map, 4096, dims, far),        /* stride of 2^40 */
        kdsl_hopper_gemm_a_encode(NULL, 4096, dims, strides),
        kdsl_hopper_gemm_a_encode(map, 4096, NULL, strides),
        kdsl_hopper_gemm_a_encode(map, 4096, dims, NULL),
        kdsl_hopper_gemm_a_encode_dense(map, 4096, NULL),
        kdsl_hopper_gemm_a_encode_dense(map, 4096, wide),       /* rows of 2^32 bytes: fine ... */
        kdsl_hopper_gemm_b_encode_dense(map, 4096, huge),       /* ... 2^31 + 1 columns: not */
        kdsl_cluster_sum_launch(NULL, NULL, kdsl_dim3_make(3, 1, 1), 4096, 8192, 100), /* cluster(2) */
        kdsl_cluster_sum_launch_args(NULL, NULL, kdsl_dim3_make(2, 1, 1), NULL),
        kdsl_cluster_sum_launch_args(NULL, NULL, kdsl_dim3_make(2, 1, 1), &args),
    };
    unsigned int i;
    for (i = 0; i < sizeof r / sizeof r[0]; i++)
        printf("%d\n", (int)r[i]);
    return 0;
}
"#;
    std::fs::write(dir.path().join("checks.c"), program).unwrap();
    let built = Command::new("gcc")
        .current_dir(dir.path())
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", inc.display()))
        .args(["-I.", "-o", "checks", "checks.c", "-L.", "-lcuda"])
        .output()
        .expect("gcc runs");
    assert!(built.status.success(), "{}", text(&built.stderr));
    let (out, log) = run_on_stub(dir.path(), dir.path(), "checks", "3");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Vec<&str> = text(&out.stdout).leak().lines().collect();
    // Every check fails but the fine one (11th) and the whole clusters.
    let mut want = vec!["1"; 15];
    want[10] = "0";
    want[14] = "0";
    assert_eq!(results, want);
    // The driver saw only those two.
    let seen: Vec<&str> = log.lines().filter(|l| !l.starts_with("param")).collect();
    assert_eq!(
        seen,
        [
            "encode type=9 rank=2 aligned16=1 dims=2147483648,2 strides=4294967296 box=64,128 elementStrides=1,1 interleave=0 swizzle=3 l2=3 fill=0 map_aligned64=1",
            "launch grid=2,1,1 block=128,1,1 shared=0 attrs=0",
        ],
        "{log}"
    );
}

/// Every kind of scalar parameter reaches the driver as the bytes the
/// kernel reads: a `bool` as a `u32` 1, halves and fp8s as their bits,
/// narrow integers as themselves; and a kernel without `block(...)` takes
/// the launch's block.
#[test]
fn every_kind_of_parameter_reaches_the_driver_as_the_kernel_reads_it() {
    let Some(inc) = common::ptxas::require_cuda_include() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    stub_driver(dir.path());
    let fixture = repo_root().join("tests/fixtures/header/kinds.kdsl");
    let out = common::kdslc(
        dir.path(),
        &[
            fixture.to_str().unwrap(),
            "--emit",
            "header,manifest=kinds.json",
            "-o",
            "kinds.h",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let program = r#"
#include "kinds.h"
int main(int argc, char **argv)
{
    /* Through the argument struct, as C++'s kdsl::launch does too. */
    kdsl_kinds_args a = {true, -2, 200, -300, 60000, -70000, 4000000000u, -5000000000ll,
                         18000000000000000000ull, 0x3c00, 0x3f80, 1.5f, -2.25, 0x40003c00u, 0xbf803f80u,
                         7, 8, 9, 0x1000};
    (void)argv;
    if (argc == 1)
        return (int)kdsl_kinds_launch_args(NULL, NULL, kdsl_dim3_make(3, 2, 1), kdsl_dim3_make(64, 2, 1), &a);
    return (int)kdsl_bits_launch(NULL, NULL, kdsl_dim3_make(1, 1, 1), 0x38, 0x3c, 0x3f800000u, 0x1000);
}
"#;
    std::fs::write(dir.path().join("kinds.c"), program).unwrap();
    let built = Command::new("gcc")
        .current_dir(dir.path())
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror"])
        .arg(format!("-I{}", inc.display()))
        .args(["-I.", "-o", "kinds", "kinds.c", "-L.", "-lcuda"])
        .output()
        .expect("gcc runs");
    assert!(built.status.success(), "{}", text(&built.stderr));
    let (out, first) = run_on_stub(dir.path(), dir.path(), "kinds", "19");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = &first;
    assert!(
        first.starts_with("launch grid=3,2,1 block=64,2,1 shared=0 attrs=0\n"),
        "{first}"
    );
    // Each parameter's bytes, as many as the manifest says it has.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("kinds.json")).unwrap())
            .unwrap();
    let want: [u64; 18] = [
        1,
        (-2i8) as u8 as u64,
        200,
        (-300i16) as u16 as u64,
        60000,
        (-70000i32) as u32 as u64,
        4_000_000_000,
        (-5_000_000_000i64) as u64,
        18_000_000_000_000_000_000,
        0x3c00,
        0x3f80,
        1.5f32.to_bits() as u64,
        (-2.25f64).to_bits(),
        0x4000_3c00,
        0xbf80_3f80,
        7,
        8,
        9,
    ];
    let params = manifest["kernels"][0]["params"].as_array().unwrap();
    for (i, w) in want.iter().enumerate() {
        let size = params[i]["size"].as_u64().unwrap();
        let mask = if size == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * size)) - 1
        };
        let line = first
            .lines()
            .find(|l| l.starts_with(&format!("param {i} ")))
            .unwrap_or_else(|| panic!("param {i} in {log}"));
        let got = u64::from_str_radix(line.split(' ').nth(2).unwrap(), 16).unwrap();
        assert_eq!(
            got & mask,
            *w,
            "{} ({size} bytes): {line}",
            params[i]["name"]
        );
    }
    assert_eq!(param64(&first, 18), 0x1000);
    // The storage-only types: their bits.
    let mut cmd = Command::new(dir.path().join("kinds"));
    cmd.arg("bits");
    let log_path = dir.path().join("log2");
    let out = cmd
        .current_dir(dir.path())
        .env("LD_LIBRARY_PATH", dir.path())
        .env("KDSL_STUB_LOG", &log_path)
        .env("KDSL_STUB_PARAMS", "4")
        .env("KDSL_STUB_CONFIG", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let second = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        second.starts_with("launch grid=1,1,1 block=32,1,1 shared=0 attrs=0\n"),
        "{second}"
    );
    assert_eq!(param64(&second, 0) & 0xff, 0x38);
    assert_eq!(param64(&second, 1) & 0xff, 0x3c);
    assert_eq!(low32(&second, 2), 0x3f80_0000);
    assert_eq!(param64(&second, 3), 0x1000);
}
