//! `kdslc sim --jobs N`: groups (clusters, or CTAs) simulated at once give
//! the serial run's outcome byte for byte — exit status, stdout (printf,
//! `--stats`), stderr (every report) and every `--out` file — under the
//! in-order and random schedules: the samples of `scripts/sim-launches.txt`,
//! larger grids of the multi-CTA ones (independent CTAs, CTAs that meet
//! through global atomics, clusters), broken kernels with races across
//! CTAs, faults and deadlocks, `--max-steps` cutting a run in the middle
//! of a group, and CUDA `printf` from every CTA.

use crate::common::sim::*;
use crate::sim::cli::{kdslc, table};
use kdsl::launch::{ArgValue, Launch};
use kdsl::sim::{JobStats, Outcome, Schedule, SimOptions};

/// What a run shows: the exit status, stdout, stderr and the files it
/// wrote (name, bytes), by name.
#[derive(Debug, PartialEq)]
struct Shown {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    files: Vec<(String, Vec<u8>)>,
}

fn run(target: &str, flags: &[String], schedule: &str, jobs: u32) -> Shown {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    let jobs = jobs.to_string();
    let mut args: Vec<&str> = vec!["sim", target];
    args.extend(flags.iter().map(String::as_str));
    args.extend([
        "--stats",
        "--schedule",
        schedule,
        "--jobs",
        &jobs,
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    let o = kdslc(&args);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
        .map(|d| {
            d.map(|e| {
                let e = e.expect("entry");
                let bytes = std::fs::read(e.path()).expect("reads");
                (e.file_name().to_string_lossy().into_owned(), bytes)
            })
            .collect()
        })
        .unwrap_or_default();
    files.sort();
    Shown {
        status: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        files,
    }
}

/// Runs `target` with `flags` with `--jobs 1` and `--jobs 4`, in order
/// and under a random schedule, and asserts the same outcome; the serial
/// run's, for the caller's checks.
fn same(target: &str, flags: &[&str]) -> Vec<Shown> {
    let flags: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    let mut serial = Vec::new();
    for schedule in ["in-order", "random:7"] {
        let one = run(target, &flags, schedule, 1);
        let four = run(target, &flags, schedule, 4);
        assert!(
            one == four,
            "{target} {} --schedule {schedule}: --jobs 4 differs from --jobs 1\n--jobs 1: {one:#?}\n--jobs 4: {four:#?}",
            flags.join(" ")
        );
        serial.push(one);
    }
    serial
}

/// Every sample launch of `scripts/sim-launches.txt` (the `.kdsl` ones:
/// the CUDA twins need nvcc).
#[test]
fn every_sample_launch_is_the_same_with_jobs() {
    let mut n = 0;
    for (file, flags) in table() {
        if !file.ends_with(".kdsl") {
            continue;
        }
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let shown = same(&file, &flags);
        assert_eq!(shown[0].status, Some(0), "{file}: {}", shown[0].stderr);
        assert!(!shown[0].files.is_empty(), "{file}: no --out files");
        n += 1;
    }
    assert!(n >= 15, "only {n} sample launches");
}

/// Grids of many groups: independent CTAs (a reduction into one atomic
/// sum, tiles of a GEMM), CTAs that meet through a global ticket counter
/// (the last one sums the partials: the result depends on the order the
/// serial run gives them), global histogram atomics, and clusters.
#[test]
fn many_groups_are_the_same_with_jobs() {
    let cases: &[(&str, &[&str])] = &[
        (
            "samples/reduce_sum.kdsl",
            &[
                "--grid",
                "40",
                "--arg",
                "x=rand:50000:3",
                "--arg",
                "out=fill:1:1.5",
                "--arg",
                "n=50000",
            ],
        ),
        (
            "samples/ticket_sum.kdsl",
            &[
                "--grid",
                "24",
                "--arg",
                "x=rand:20000:14",
                "--arg",
                "partial=zeros:24",
                "--arg",
                "tickets=zeros:1",
                "--arg",
                "total=zeros:1",
                "--arg",
                "n=20000",
            ],
        ),
        (
            "samples/sgemm_tiled.kdsl",
            &[
                "--grid",
                "6,5",
                "--arg",
                "a=rand:4000:6",
                "--arg",
                "b=rand:4800:7",
                "--arg",
                "c=zeros:7680",
                "--arg",
                "m=80",
                "--arg",
                "n=96",
                "--arg",
                "k=50",
            ],
        ),
        (
            "samples/histogram.kdsl",
            &[
                "--grid",
                "12",
                "--arg",
                "data=rand:20000:14",
                "--arg",
                "bins=fill:256:7",
                "--arg",
                "n=19999",
            ],
        ),
        (
            "samples/cluster_sum.kdsl",
            &[
                "--grid",
                "16",
                "--arg",
                "x=rand:40000:4",
                "--arg",
                "out=zeros:1",
                "--arg",
                "n=40000",
            ],
        ),
        (
            "samples/pipeline_sum.kdsl",
            &[
                "--grid",
                "9",
                "--arg",
                "x=rand:46080:5",
                "--arg",
                "out=zeros:1",
                "--arg",
                "chunks=5",
            ],
        ),
        (
            "samples/transpose.kdsl",
            &[
                "--grid",
                "4,6",
                "--arg",
                "input=iota:12600",
                "--arg",
                "output=zeros:12600",
                "--arg",
                "rows=140",
                "--arg",
                "cols=90",
            ],
        ),
    ];
    for (file, flags) in cases {
        let shown = same(file, flags);
        assert_eq!(shown[0].status, Some(0), "{file}: {}", shown[0].stderr);
    }
}

/// Broken kernels: a race between CTAs in global memory (the race check's
/// global shadow spans groups), a fault in every CTA (one report with the
/// threads of all), a cluster deadlock, and `--max-steps` stopping in the
/// middle of a later group (the report counts the steps of the whole run).
#[test]
fn reports_are_the_same_with_jobs() {
    let cases: &[(&str, &[&str], i32, &str)] = &[
        (
            "tests/sim/broken/race_global_sum.kdsl",
            &[
                "--grid",
                "16",
                "--arg",
                "x=f32:iota:2048",
                "--arg",
                "out=f32:zeros:1",
            ],
            4,
            "S0030",
        ),
        (
            "tests/sim/broken/out_of_bounds_index.kdsl",
            &[
                "--grid",
                "8",
                "--arg",
                "x=f32:iota:128",
                "--arg",
                "out=f32:zeros:1024",
            ],
            4,
            "S0002",
        ),
        (
            "tests/sim/broken/cluster_missing_arrival.kdsl",
            &["--grid", "8", "--arg", "out=f32:zeros:1"],
            4,
            "S0001",
        ),
        (
            "samples/reduce_sum.kdsl",
            &[
                "--grid",
                "40",
                "--arg",
                "x=rand:50000:3",
                "--arg",
                "out=fill:1:1.5",
                "--arg",
                "n=50000",
                "--max-steps",
                "300000",
            ],
            4,
            "S0011",
        ),
    ];
    for (file, flags, status, code) in cases {
        let shown = same(file, flags);
        for s in &shown {
            assert_eq!(s.status, Some(*status), "{file}: {}", s.stderr);
            assert!(s.stderr.contains(code), "{file}: no {code}:\n{}", s.stderr);
        }
    }
}

/// CUDA `printf` (nvcc's PTX, kept as a file) from two threads of each of
/// 12 CTAs: the text in the serial order, with the reads of its format
/// string from global memory.
#[test]
fn printf_is_the_same_with_jobs() {
    let flags = [
        "--grid",
        "12",
        "--block",
        "64",
        "--arg",
        "0=i32:iota:768",
        "--arg",
        "1=i32:zeros:768",
    ];
    let shown = same("tests/sim/jobs/printf_blocks.ptx", &flags);
    let lines: Vec<&str> = shown[0].stdout.lines().take(24).collect();
    assert_eq!(lines.len(), 24);
    assert_eq!(lines[0], "cta 0 thread 0 x=0");
    assert_eq!(lines[23], "cta 11 thread 1 x=705");
}

/// `--jobs 0` is a usage error; `--jobs` larger than the groups is fine.
#[test]
fn jobs_flag_values() {
    let base = [
        "sim",
        "samples/saxpy.kdsl",
        "--grid",
        "2",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:8",
    ];
    let mut zero = base.to_vec();
    zero.extend(["--arg", "y=zeros:8", "--arg", "n=8", "--jobs", "0"]);
    let o = kdslc(&zero);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("'0' for '--jobs <N>'"));
    let mut many = base.to_vec();
    many.extend([
        "--arg",
        "y=zeros:8",
        "--arg",
        "n=8",
        "--jobs",
        "64",
        "--dump",
        "y",
    ]);
    let o = kdslc(&many);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "y: f32[8] = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]"
    );
}

/// A CTA that spins on a flag an earlier CTA sets: run speculatively from
/// the batch's start it would spin until `--max-steps`; its speculation
/// is abandoned at its budget and the group runs serially, after the CTA
/// that sets the flag, as in the serial run.
#[test]
fn a_group_waiting_for_an_earlier_one_runs_serially() {
    for file in [
        "tests/sim/clean/flag_release_acquire_gpu.ptx",
        "tests/sim/clean/flag_relaxed_with_fences.ptx",
    ] {
        let shown = same(
            file,
            &[
                "--grid",
                "2",
                "--block",
                "32",
                "--arg",
                "data=u32:zeros:32",
                "--arg",
                "flag=u32:zeros:1",
            ],
        );
        assert_eq!(shown[0].status, Some(0), "{file}: {}", shown[0].stderr);
    }
}

/// `kdsl::sim::run` of `l` under `schedule` with `jobs` workers, every
/// check on; the rendered reports.
fn run_lib(loaded: &Loaded, l: &Launch, schedule: Schedule, jobs: usize) -> (Outcome, String) {
    let o = kdsl::sim::run(
        &loaded.program,
        l,
        &SimOptions {
            schedule,
            jobs,
            ..SimOptions::default()
        },
    );
    let text = rendered(loaded, &o);
    (o, text)
}

/// The library's outcome of `l` with `--jobs 4` is the serial one
/// (arrays, reports, `--stats`), in order and under a random schedule;
/// per schedule, the counts of groups merged from parallel runs and run
/// serially, and the rendered reports.
fn same_launch(loaded: &Loaded, l: &Launch) -> Vec<(JobStats, String)> {
    let mut out = Vec::new();
    for schedule in [Schedule::InOrder, Schedule::Random(7)] {
        let (one, one_text) = run_lib(loaded, l, schedule, 1);
        let (four, four_text) = run_lib(loaded, l, schedule, 4);
        assert_eq!(one_text, four_text, "{schedule:?}: the reports differ");
        assert_eq!(one.stats, four.stats, "{schedule:?}: the stats differ");
        assert!(one.arrays == four.arrays, "{schedule:?}: the arrays differ");
        assert_eq!(one.jobs, JobStats::default(), "--jobs 1 runs no worker");
        out.push((four.jobs, one_text));
    }
    out
}

/// [`same_launch`] of the loaded kernel over `grid` with `args`.
fn same_lib(
    loaded: &Loaded,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[ArgValue],
) -> Vec<(JobStats, String)> {
    let l = launch(loaded.program.kernels()[0], grid, block, 1, args.to_vec());
    same_launch(loaded, &l)
}

/// With every check on (the race check records each read of global memory
/// in the shadow), the CTAs of a GEMM all read A and B: they used to run
/// one after another under `--jobs`. Groups that only share reads now run
/// at once and their read records are replayed in the serial order: every
/// group of the grid after the first (run before the workers start) is
/// merged from its parallel run, and the outcome is the serial one byte for
/// byte (the CLI, in order and random).
#[test]
fn groups_sharing_reads_run_in_parallel_with_the_checks_on() {
    let flags = [
        "--grid",
        "8,8",
        "--arg",
        "a=rand:6144:6",
        "--arg",
        "b=rand:8192:7",
        "--arg",
        "c=zeros:16384",
        "--arg",
        "m=128",
        "--arg",
        "n=128",
        "--arg",
        "k=48",
    ];
    let shown = same("samples/sgemm_tiled.kdsl", &flags);
    assert_eq!(shown[0].status, Some(0), "{}", shown[0].stderr);
    let loaded = kdsl_file(std::path::Path::new("samples/sgemm_tiled.kdsl"));
    let args = vec![
        f32s("a", &rand_f32(128 * 48, 6)),
        f32s("b", &rand_f32(48 * 128, 7)),
        f32s("c", &[0.0; 128 * 128]),
        u32v(128),
        u32v(128),
        u32v(48),
    ];
    for (jobs, text) in same_lib(&loaded, [8, 8, 1], [16, 16, 1], &args) {
        assert_eq!(text, "", "sgemm_tiled is clean");
        assert_eq!(
            jobs,
            JobStats {
                parallel: 63,
                serial: 1
            },
            "every group after the first merged from its parallel run"
        );
    }
}

/// A race on a shared input: every CTA reads all of `x` (each thread
/// `x[0]` too, so the race check forgets reads of it), then one CTA
/// writes `x[0]` and `x[3]`. The reports name the read the shadow kept —
/// which one depends on the order the groups' reads were recorded in —
/// and are the serial run's under `--jobs 4`: the groups before the
/// writer but the first (run before the workers start) are merged from
/// their parallel runs (their reads replayed), the
/// writer and, when it is not the last, the groups after it (they read
/// what it wrote) run again serially.
#[test]
fn races_on_a_shared_input_are_the_same_with_jobs() {
    let file = "tests/sim/jobs/shared_reads_then_write.kdsl";
    for (last, expect) in [(15u32, (14, 2)), (7, (6, 10))] {
        let last_arg = format!("last={last}");
        let flags = [
            "--grid",
            "16",
            "--arg",
            "x=f32:iota:64",
            "--arg",
            "out=f32:zeros:1024",
            "--arg",
            &last_arg,
        ];
        for s in same(file, &flags) {
            assert_eq!(s.status, Some(4), "{}", s.stderr);
            assert!(s.stderr.contains("S0030"), "no race:\n{}", s.stderr);
        }
        let loaded = kdsl_file(std::path::Path::new(file));
        let iota: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let args = vec![f32s("x", &iota), f32s("out", &[0.0; 1024]), u32v(last)];
        for (jobs, text) in same_lib(&loaded, [16, 1, 1], [64, 1, 1], &args) {
            assert!(text.contains("S0030"), "no race:\n{text}");
            assert_eq!(
                (jobs.parallel, jobs.serial),
                expect,
                "last = {last}: merged and serial groups"
            );
        }
    }
}

/// The log of a group's reads is bounded (with `--jobs 4`, 4 MiB a
/// group, about 64 bytes a read): 128 threads reading 100 shared values
/// each stay within it and the 3 CTAs after the first (run before the
/// workers start) are merged from their parallel runs; reading 1200 each
/// (153,600 reads) they outgrow it, and the CTAs after the second, which
/// read what it read, run again serially — the outcome the serial run's
/// either way.
#[test]
fn a_group_past_its_read_log_bound_runs_serially() {
    let file = "tests/sim/jobs/many_shared_reads.kdsl";
    let loaded = kdsl_file(std::path::Path::new(file));
    for (n, expect) in [(100u32, (3, 1)), (1200, (1, 3))] {
        let args = vec![
            f32s("x", &rand_f32(1200, 3)),
            f32s("out", &[0.0; 512]),
            u32v(n),
        ];
        for (jobs, text) in same_lib(&loaded, [4, 1, 1], [128, 1, 1], &args) {
            assert_eq!(text, "", "clean");
            assert_eq!((jobs.parallel, jobs.serial), expect, "n = {n}");
        }
    }
}

/// Tensor (TMA) copies of a shared input: the 4 CTAs of the Hopper GEMM
/// load tiles of A and B with bulk tensor copies, logged as the copies'
/// reads; every CTA after the first is merged from its parallel run.
#[test]
fn tensor_copies_of_a_shared_input_run_in_parallel() {
    let path = crate::common::repo_root().join("samples/hopper_gemm.kdsl");
    let opts = crate::common::for_target(crate::common::source_target(&path));
    let loaded = kdsl_file_with(&path, &opts);
    let (m, n, k) = (200u32, 300u32, 136u32);
    let a = small_int_bf16((m * k) as usize, 1);
    let b = small_int_bf16((n * k) as usize, 2);
    let l = crate::sim::samples::gemm_launch(&loaded, (m, n, k), a, b);
    assert_eq!(l.grid, [2, 2, 1]);
    for (jobs, text) in same_launch(&loaded, &l) {
        assert_eq!(text, "", "hopper_gemm is clean");
        assert_eq!((jobs.parallel, jobs.serial), (3, 1));
    }
}

/// Forking a worker copies global memory and, with the race check, its
/// shadow (8 bytes a byte): a `saxpy` of 64 CTAs over arrays of a million
/// floats does far less work than four copies of 72 MiB would cost, so
/// after its first group (whose steps measure that) it runs serially on
/// the machine itself — it used to fork the workers anyway, many times
/// slower than `--jobs 1` with a core each, and with gigabytes of copies
/// on a machine of many cores. The outcome is the serial one either way.
#[test]
fn workers_not_worth_their_copies_of_memory_are_not_forked() {
    let loaded = kdsl_file(std::path::Path::new("samples/saxpy.kdsl"));
    let len = 1 << 20;
    let args = vec![
        ArgValue::Scalar {
            ty: kdsl::types::Scalar::F32,
            bits: u64::from(2.5f32.to_bits()),
        },
        f32s("x", &rand_f32(len, 1)),
        f32s("y", &rand_f32(len, 2)),
        u32v(64 * 256),
    ];
    for (jobs, text) in same_lib(&loaded, [64, 1, 1], [256, 1, 1], &args) {
        assert_eq!(text, "", "saxpy is clean");
        assert_eq!(
            jobs,
            JobStats {
                parallel: 0,
                serial: 64
            },
            "every group run on the machine itself"
        );
    }
}
