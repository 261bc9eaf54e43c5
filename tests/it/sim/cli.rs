//! `kdslc sim` as a user runs it: every launch of `scripts/sim-launches.txt`
//! (each sample, each bench kernel and its nvcc twin) through the binary
//! with its outputs written by `--out` and checked against the Rust
//! reference (`sim::reference`); a faulting kernel in each message format;
//! `--stats`, `--schedule random:SEED`, `--max-steps`; bad input of every
//! kind (a clear error, exit 2 or 4, and no output file); `.ptx` input from
//! nvcc with and without `-lineinfo`; and random and mutated PTX with
//! random launch flags, which must never make `kdslc` panic.

use crate::common::ptxas::require_nvcc;
use crate::common::rng::XorShift;
use crate::common::{assert_contains, repo_root};
use crate::sim::reference;
use kdsl::launch::{self, ArgSpec, ArgValue, KernelSignature, Launch, Origin, Request};
use kdsl::types::Scalar;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `program` to run in `dir` as these tests run kdslc: no colour, no input.
pub fn command(program: &str, dir: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    c
}

/// Runs `kdslc` in the repository root.
pub fn kdslc(args: &[&str]) -> Output {
    command(env!("CARGO_BIN_EXE_kdslc"), &repo_root())
        .args(args)
        .output()
        .expect("kdslc runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn status(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The lines of the launch table: `(file, flags)`.
pub fn table() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(repo_root().join("scripts/sim-launches.txt"))
        .expect("scripts/sim-launches.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace().map(str::to_string);
            let file = words.next().expect("a file");
            (file, words.collect())
        })
        .collect()
}

/// The launch flags as the library's request.
pub fn request(flags: &[String], origin: Origin) -> Request {
    let mut req = Request {
        grid: [1, 1, 1],
        block: None,
        cluster: None,
        args: Vec::new(),
        shared_bytes: None,
        origin,
        cooperative: false,
    };
    let mut words = flags.iter();
    while let Some(flag) = words.next() {
        if flag == "--cooperative" {
            req.cooperative = true;
            continue;
        }
        let value = words.next().expect("a flag's value");
        match flag.as_str() {
            "--grid" => req.grid = launch::shape::parse_dims(value).expect("dims"),
            "--block" => req.block = Some(launch::shape::parse_dims(value).expect("dims")),
            "--cluster" => req.cluster = Some(launch::shape::parse_dims(value).expect("dims")),
            "--arg" => req.args.push(value.parse::<ArgSpec>().expect("NAME=VALUE")),
            "--shared-bytes" => req.shared_bytes = Some(value.parse().expect("bytes")),
            // A compile flag: the kernel's PTX is for it (`target_of`).
            "--target" => {}
            // Which entry of a PTX file with several (`ptx_signature`).
            "--kernel" => {}
            other => panic!("the table uses `{other}`, which this test does not know"),
        }
    }
    req
}

/// The `--target` of a table line's flags (the tensor-core GEMM's
/// `sm_90a`), else the default.
pub fn target_of(flags: &[String]) -> kdsl::target::Target {
    flags
        .iter()
        .position(|f| f == "--target")
        .and_then(|i| flags.get(i + 1))
        .map(|t| kdsl::target::Target::from_name(t).expect("a known target"))
        .unwrap_or_default()
}

/// A `.kdsl` file's kernel signature (its only kernel), compiled for the
/// target its table line names.
pub fn kdsl_signature(file: &str, flags: &[String]) -> KernelSignature {
    let c = kdsl::compile(
        Path::new(file),
        &crate::common::for_target(target_of(flags)),
    )
    .expect("readable");
    let module = c.module.expect("compiles");
    let sigs = launch::signature::of_module(&module);
    assert_eq!(sigs.len(), 1, "{file}: one kernel");
    sigs.into_iter().next().expect("one kernel")
}

/// A PTX file's kernel signature: its only kernel, or the one the line's
/// `--kernel NAME` picks (a twin with an entry per instantiation).
fn ptx_signature(ptx: &str, flags: &[String]) -> KernelSignature {
    let sigs = kdsl::sim::signatures(ptx).expect("PTX parses");
    let named = flags
        .iter()
        .position(|f| f == "--kernel")
        .and_then(|i| flags.get(i + 1));
    match named {
        Some(n) => sigs
            .into_iter()
            .find(|s| &s.name == n)
            .unwrap_or_else(|| panic!("no kernel {n} in the PTX")),
        None => {
            assert_eq!(sigs.len(), 1, "one kernel");
            sigs.into_iter().next().expect("one kernel")
        }
    }
}

/// `DIR/NAME.npy` as f32 elements, if the run wrote it; a `u32` array
/// (ticket_sum's counter) as its bits, which the reference states the same
/// way.
fn npy_f32(path: &Path) -> Option<Vec<f32>> {
    let bytes = std::fs::read(path).ok()?;
    let data = launch::npy::read(&bytes, Scalar::F32)
        .or_else(|_| launch::npy::read(&bytes, Scalar::U32))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(
        data.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Runs `target` with `flags` and `--out`, and checks every output against
/// the reference for `l`.
fn run_and_check(what: &str, target: &str, flags: &[String], sig: &KernelSignature, l: &Launch) {
    let out = tempfile::tempdir().expect("temp dir");
    let dir = out.path().join("results");
    let mut args: Vec<&str> = vec!["sim", target];
    args.extend(flags.iter().map(String::as_str));
    let dir_text = dir.to_str().expect("UTF-8 path");
    args.extend(["--out", dir_text]);
    args.push("--stats");
    let o = kdslc(&args);
    assert_eq!(status(&o), 0, "{what}: kdslc sim failed:\n{}", stderr(&o));
    let written = std::fs::read_dir(&dir).map_or(0, Iterator::count);
    assert!(written > 0, "{what}: no --out files");
    same_without_checks(what, &args, &dir, &o);
    let result = reference::check(l, |arg| {
        let name = &sig.params.get(arg)?.name;
        let Some(ArgValue::Array(a)) = l.args.get(arg) else {
            return None;
        };
        let bytes = std::fs::read(dir.join(format!("{name}.npy"))).ok()?;
        Some(launch::npy::read(&bytes, a.elem).unwrap_or_else(|e| panic!("{name}.npy: {e}")))
    });
    if let Err(e) = result {
        panic!("{what}: {e}");
    }
}

/// The run of `args` again with `--checks none --jobs 1`, which takes the
/// interpreter loop compiled without the per-instruction hooks
/// (`machine/exec.rs`): the same outputs byte for byte, the same stdout
/// and the same instruction counts as the run with the checks (`o`, its
/// outputs in `dir`).
fn same_without_checks(what: &str, args: &[&str], dir: &Path, o: &std::process::Output) {
    let out = tempfile::tempdir().expect("temp dir");
    let bare_dir = out.path().join("results");
    let bare_text = bare_dir.to_str().expect("UTF-8 path");
    let mut bare: Vec<&str> = args.to_vec();
    if let Some(i) = bare.iter().position(|a| *a == "--out") {
        if let Some(d) = bare.get_mut(i + 1) {
            *d = bare_text;
        }
    }
    // One job: the jobs' access tracking is a hook too.
    bare.extend(["--checks", "none", "--jobs", "1"]);
    let b = kdslc(&bare);
    assert_eq!(status(&b), 0, "{what} --checks none: {}", stderr(&b));
    assert_eq!(
        o.stdout, b.stdout,
        "{what}: stdout differs with --checks none"
    );
    let counts = |e: &str| -> Vec<String> {
        e.lines()
            .filter(|l| l.trim_start().starts_with("instructions executed"))
            .map(str::to_owned)
            .collect()
    };
    let with = counts(&stderr(o));
    assert!(!with.is_empty(), "{what}: no --stats in:\n{}", stderr(o));
    assert_eq!(
        with,
        counts(&stderr(&b)),
        "{what}: instruction counts differ"
    );
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("outputs")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    for n in names {
        let a = std::fs::read(dir.join(&n)).expect("output");
        let c = std::fs::read(bare_dir.join(&n)).unwrap_or_else(|e| panic!("{what}: {n:?}: {e}"));
        assert!(a == c, "{what}: {n:?} differs with --checks none");
    }
}

/// nvcc's PTX of a `.cu` file, written to `dir`.
fn nvcc_ptx(nvcc: &Path, cu: &str, lineinfo: bool, dir: &Path) -> PathBuf {
    let stem = Path::new(cu)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("k");
    let out = dir.join(format!("{stem}{}.ptx", if lineinfo { ".li" } else { "" }));
    let mut cmd = Command::new(nvcc);
    let arch = format!("-arch={}", crate::common::sim::nvcc_arch(Path::new(cu)));
    cmd.current_dir(repo_root())
        .args(["-ptx", arch.as_str(), cu, "-o"])
        .arg(&out);
    if lineinfo {
        cmd.arg("-lineinfo");
    }
    let o = cmd.output().expect("nvcc runs");
    assert!(o.status.success(), "nvcc {cu}: {}", stderr(&o));
    out
}

/// Every line of the launch table, through the binary: exit 0 and outputs
/// equal to the reference, and the same outputs, stdout and instruction
/// counts with `--checks none`. A `.cu` line runs nvcc's PTX (with and
/// without `-lineinfo`) with its typed `--arg`s.
#[test]
fn every_table_launch_matches_the_reference() {
    let lines = table();
    let kdsl_lines = lines.iter().filter(|(f, _)| f.ends_with(".kdsl")).count();
    let samples = std::fs::read_dir(repo_root().join("samples"))
        .expect("samples")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "kdsl"))
        })
        .count();
    assert!(kdsl_lines >= samples, "every sample has a launch");
    let nvcc = require_nvcc();
    let tmp = tempfile::tempdir().expect("temp dir");
    for (file, flags) in &lines {
        if file.ends_with(".kdsl") {
            let sig = kdsl_signature(file, flags);
            let l = launch::build(&sig, &request(flags, Origin::Kdsl)).expect("the launch builds");
            run_and_check(file, file, flags, &sig, &l);
        } else {
            let Some(nvcc) = &nvcc else { continue };
            for lineinfo in [false, true] {
                let ptx = nvcc_ptx(nvcc, file, lineinfo, tmp.path());
                let text = std::fs::read_to_string(&ptx).expect("PTX");
                let sig = ptx_signature(&text, flags);
                let l =
                    launch::build(&sig, &request(flags, Origin::Ptx)).expect("the launch builds");
                let target = ptx.to_str().expect("UTF-8 path");
                run_and_check(
                    &format!("{file} (nvcc, lineinfo {lineinfo})"),
                    target,
                    flags,
                    &sig,
                    &l,
                );
            }
        }
    }
}

/// Every sample and bench kernel is in the table, each twin after the
/// `.kdsl` line of its source (`scripts/sim-check.py` pairs them).
#[test]
fn the_table_covers_every_sample_and_bench_kernel() {
    let lines = table();
    let files: Vec<&str> = lines.iter().map(|(f, _)| f.as_str()).collect();
    for dir in ["samples", "bench/kernels"] {
        for e in std::fs::read_dir(repo_root().join(dir)).expect("dir") {
            let p = e.expect("entry").path();
            let Some(ext) = p.extension().and_then(|x| x.to_str()) else {
                continue;
            };
            if ext != "kdsl" && ext != "cu" {
                continue;
            }
            let name = format!(
                "{dir}/{}",
                p.file_name().and_then(|n| n.to_str()).unwrap_or("")
            );
            let at = files
                .iter()
                .position(|f| *f == name)
                .unwrap_or_else(|| panic!("{name} has no line in scripts/sim-launches.txt"));
            if ext == "cu" {
                // The twin's kdsl source: beside it, or the sample.
                let stem = p.file_stem().and_then(|n| n.to_str()).unwrap_or("");
                if crate::docs::setup::TWINS_AWAITING_THEIR_SAMPLE.contains(&stem) {
                    continue;
                }
                let beside = name.replace(".cu", ".kdsl");
                let sample = format!("samples/{stem}.kdsl");
                let k = files.iter().position(|f| *f == beside || *f == sample);
                assert!(
                    k.is_some_and(|k| k < at),
                    "{name}: `{sample}` must come first"
                );
            }
        }
    }
}

/// docs/simulator.md shows the launches of the table, and no other: each
/// `.kdsl` line as `kdslc sim FILE FLAGS`, each twin as `kdslc sim
/// NAME.ptx FLAGS` (whitespace aside).
#[test]
fn the_docs_show_the_table_launches() {
    let docs =
        std::fs::read_to_string(repo_root().join("docs/simulator.md")).expect("docs/simulator.md");
    let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let shown: Vec<String> = docs
        .lines()
        .filter(|l| l.starts_with("kdslc sim ") && !l.contains("tests/sim/broken"))
        .map(normal)
        .collect();
    let mut wanted: Vec<String> = Vec::new();
    for (file, flags) in table() {
        let target = match file.strip_suffix(".cu") {
            Some(cu) => format!("{}.ptx", cu.rsplit('/').next().unwrap_or(cu)),
            None => file,
        };
        wanted.push(normal(&format!("kdslc sim {target} {}", flags.join(" "))));
    }
    for w in &wanted {
        assert!(shown.contains(w), "docs/simulator.md does not show `{w}`");
    }
    for s in &shown {
        assert!(
            wanted.contains(s),
            "docs/simulator.md shows `{s}`, which is not in scripts/sim-launches.txt"
        );
    }
}

/// `--dump NAME` prints the array after the run: the same elements as the
/// `.npy` file `--out` writes.
#[test]
fn dump_prints_what_out_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_str().expect("UTF-8");
    let o = kdslc(&[
        "sim",
        "samples/saxpy.kdsl",
        "--grid",
        "1",
        "--arg",
        "a=2",
        "--arg",
        "x=iota:8",
        "--arg",
        "y=fill:8:0.5",
        "--arg",
        "n=6",
        "--dump",
        "y",
        "--out",
        out,
    ]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "y: f32[8] = [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 0.5, 0.5]"
    );
    let y = npy_f32(&dir.path().join("y.npy")).expect("y.npy");
    assert_eq!(y, [0.5, 2.5, 4.5, 6.5, 8.5, 10.5, 0.5, 0.5]);
    assert!(!dir.path().join("x.npy").exists(), "x is read-only");
}

const BROKEN: &str = "tests/sim/broken/missing_arrival.kdsl";

/// A launch that faults exits 4, reports in each format with the span on
/// the `.kdsl` line, and writes no output file.
#[test]
fn a_fault_is_exit_4_in_every_format_with_nothing_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    let out_text = out.to_str().expect("UTF-8");
    let base = [
        "sim",
        BROKEN,
        "--grid",
        "1",
        "--arg",
        "out=zeros:128",
        "--out",
        out_text,
    ];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        kdslc(&a)
    };

    let human = with(&[]);
    assert_eq!(status(&human), 4);
    let e = stderr(&human);
    assert!(
        e.contains("error[S0001]: deadlock: no thread can make progress"),
        "{e}"
    );
    assert!(e.contains(&format!("┌─ {BROKEN}:8:5")), "{e}");
    assert_contains(
        &e,
        &[
            "128 threads wait here on `done` for the phase of parity 0",
            "`done` declared here",
        ],
    );
    assert!(!e.contains("PTX line"), "{e}");
    assert!(
        e.ends_with("error: aborting due to 1 previous error\n"),
        "{e}"
    );

    let short = with(&["--message-format", "short"]);
    assert_eq!(status(&short), 4);
    assert_eq!(
        stderr(&short).lines().next(),
        Some(format!("{BROKEN}:8:5: error[S0001]: deadlock: no thread can make progress").as_str())
    );

    let json = with(&["--message-format", "json"]);
    assert_eq!(status(&json), 4);
    assert_eq!(stderr(&json), "", "JSON goes to stdout");
    let objects: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let d = &objects[0];
    assert_eq!(d["type"], "diagnostic");
    assert_eq!(d["code"], "S0001");
    assert_eq!(d["file"], BROKEN);
    assert_eq!(d["range"]["start"]["line"], 8);
    let labels = d["labels"].as_array().expect("labels");
    assert!(labels
        .iter()
        .any(|l| l["primary"] == true && l["range"]["start"]["line"] == 8));
    assert!(labels
        .iter()
        .any(|l| l["message"] == "`done` declared here"));
    assert_eq!(objects.last().expect("a summary")["type"], "summary");

    assert!(!out.exists(), "no --out folder after a fault");
}

/// `--stats`: a table for people, one JSON object under JSON, with the
/// same counts.
#[test]
fn stats_for_people_and_as_json() {
    let base = [
        "sim",
        "samples/pipeline_sum.kdsl",
        "--grid",
        "3",
        "--arg",
        "x=rand:15360:5",
        "--arg",
        "out=zeros:1",
        "--arg",
        "chunks=5",
        "--stats",
    ];
    let human = kdslc(&base);
    assert_eq!(status(&human), 0, "{}", stderr(&human));
    let e = stderr(&human);
    assert!(
        e.starts_with("stats for `pipeline_sum`: 3 CTAs of 128 threads (384 threads)\n"),
        "{e}"
    );
    let executed: u64 = e
        .lines()
        .find_map(|l| l.trim().strip_prefix("instructions executed"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no instruction count in:\n{e}"));

    let mut args = base.to_vec();
    args.extend(["--message-format", "json"]);
    let json = kdslc(&args);
    assert_eq!(status(&json), 0);
    let objects: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let stats = objects
        .iter()
        .find(|o| o["type"] == "stats")
        .expect("a stats object");
    let s = &stats["stats"];
    assert_eq!(s["kernel"], "pipeline_sum");
    assert_eq!(s["steps"].as_u64(), Some(executed));
    assert_eq!(s["ctas"], 3);
    assert_eq!(s["threads"], 3 * 128);
    assert!(
        s["instructions"]["memory"]["bulk"].as_u64() > Some(0),
        "{s}"
    );
    assert!(s["instructions"]["barrier"].as_u64() > Some(0), "{s}");
    assert!(s["blocking_mbarrier_waits"].as_u64() > Some(0), "{s}");
    assert!(
        s["longest_thread"]["instructions"].as_u64() > Some(0),
        "{s}"
    );
}

/// A kernel whose output records the order in which its threads ran.
const ORDER: &str = "\
kernel order(counter: global mut [u32], order: global mut [u32]) block(64) {
    let slot = atomic_add(counter[0], 1u32);
    order[slot] = thread_idx.x;
}
";

fn order_run(dir: &Path, schedule: &str) -> Vec<u8> {
    let out = dir.join(format!("out-{}", schedule.replace(':', "-")));
    let o = Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .current_dir(dir)
        .args([
            "sim",
            "order.kdsl",
            "--grid",
            "1",
            "--arg",
            "counter=zeros:1",
        ])
        .args(["--arg", "order=zeros:64", "--schedule", schedule, "--out"])
        .arg(&out)
        .output()
        .expect("kdslc runs");
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    std::fs::read(out.join("order.npy")).expect("order.npy")
}

/// `--schedule random:SEED` runs the threads in another order, the same
/// for the same seed; `in-order` runs them in thread order.
#[test]
fn random_schedules_are_reproducible_per_seed() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("order.kdsl"), ORDER).expect("write");
    let in_order = order_run(dir.path(), "in-order");
    let ids = |npy: &[u8]| -> Vec<u32> {
        launch::npy::read(npy, Scalar::U32)
            .expect("u32 npy")
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    assert_eq!(ids(&in_order), (0..64).collect::<Vec<u32>>());
    let mut orders = Vec::new();
    for seed in ["random:1", "random:2", "random:3"] {
        let first = order_run(dir.path(), seed);
        assert_eq!(first, order_run(dir.path(), seed), "{seed} is reproducible");
        let mut sorted = ids(&first);
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..64).collect::<Vec<u32>>(),
            "{seed}: each thread once"
        );
        orders.push(ids(&first));
    }
    assert!(
        orders.iter().any(|o| *o != ids(&in_order)),
        "a random schedule reorders the threads"
    );
    assert!(
        orders.iter().skip(1).any(|o| *o != orders[0]),
        "seeds give different orders"
    );
}

/// A thread spinning on memory no one writes: `--max-steps` ends the run
/// with a no-progress report at the loop, exit 4, nothing written.
#[test]
fn max_steps_ends_a_spinning_kernel() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("spin.kdsl"),
        "kernel spin(flag: global mut [u32]) block(32) {\n    while flag[0] == 0 {\n    }\n}\n",
    )
    .expect("write");
    let out = dir.path().join("results");
    let o = Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["sim", "spin.kdsl", "--grid", "1", "--arg", "flag=zeros:1"])
        .args(["--max-steps", "20000", "--out"])
        .arg(&out)
        .output()
        .expect("kdslc runs");
    assert_eq!(status(&o), 4);
    let e = stderr(&o);
    assert_contains(
        &e,
        &[
            "error[S0011]: no progress within 20000 steps",
            "┌─ spin.kdsl:2:5",
            "1 thread running here",
            "cta (0,0,0) threads 1..31 have not started",
        ],
    );
    let first_help = e.lines().find(|l| l.contains("= help:")).unwrap_or("");
    assert!(first_help.contains("spins on memory"), "{e}");
    assert!(!out.exists());
}

/// The grid runs a cluster at a time, so a huge grid is bounded by
/// `--max-steps`, and the report says how far it got.
#[test]
fn a_huge_grid_is_bounded_by_max_steps() {
    let o = kdslc(&[
        "sim",
        "samples/saxpy.kdsl",
        "--grid",
        "2147483647",
        "--arg",
        "a=1",
        "--arg",
        "x=zeros:16",
        "--arg",
        "y=zeros:16",
        "--arg",
        "n=0",
        "--max-steps",
        "100000",
    ]);
    assert_eq!(status(&o), 4);
    let e = stderr(&o);
    assert_contains(
        &e,
        &[
            "error[S0011]: no progress within 100000 steps",
            "the grid's 2147483647 CTAs run one at a time",
            "= help: if the kernel is just long, raise `--max-steps` (or launch a smaller grid)",
        ],
    );
    for (flags, message) in [
        (["--grid", "2147483648"], "--grid"),
        (["--block", "2048"], "block(256)"),
        (["--cluster", "32"], "at most"),
    ] {
        let mut args = vec![
            "sim",
            "samples/saxpy.kdsl",
            "--grid",
            "1",
            "--arg",
            "a=1",
            "--arg",
            "x=zeros:16",
            "--arg",
            "y=zeros:16",
            "--arg",
            "n=0",
        ];
        if flags[0] == "--grid" {
            args[3] = flags[1];
        } else {
            args.extend(flags);
        }
        let o = kdslc(&args);
        assert_eq!(status(&o), 2, "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{flags:?}: {}", stderr(&o));
    }
}

/// Bad input of each kind: a clear message, exit 2 (usage) or 4 (the
/// kernel faulted), and no output file.
#[test]
fn bad_input_is_a_clear_error_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    let out_text = out.to_str().expect("UTF-8").to_string();
    let saxpy = |args: &[&str]| {
        let mut a = vec![
            "sim",
            "samples/saxpy.kdsl",
            "--grid",
            "4",
            "--out",
            &out_text,
        ];
        a.extend_from_slice(args);
        kdslc(&a)
    };
    let cases: [(&[&str], i32, &[&str]); 5] = [
        // A launch that contradicts `block(...)`.
        (
            &["--block", "128", "--arg", "a=2", "--arg", "x=zeros:1000", "--arg", "y=zeros:1000", "--arg", "n=1000"],
            2,
            &["`--block 128` contradicts the kernel's `block(256)`"],
        ),
        // A missing argument.
        (
            &["--arg", "a=2", "--arg", "x=zeros:1000", "--arg", "y=zeros:1000"],
            2,
            &["kernel `saxpy` needs a value for `n` (u32)"],
        ),
        // Not a number.
        (
            &["--arg", "a=2", "--arg", "x=zeros:1000", "--arg", "y=zeros:1000", "--arg", "n=ten"],
            2,
            &["invalid value for `n` (u32): `ten` is not a u32 literal"],
        ),
        (
            &["--arg", "a=two", "--arg", "x=zeros:1000", "--arg", "y=zeros:1000", "--arg", "n=1000"],
            2,
            &["invalid value for `a` (f32): `two` is not an f32 literal"],
        ),
        // An array shorter than what the kernel reads: an out-of-bounds
        // report at the read.
        (
            &["--arg", "a=2", "--arg", "x=rand:100:1", "--arg", "y=zeros:1000", "--arg", "n=1000"],
            4,
            &[
                "error[S0002]: out-of-bounds load in global memory",
                "┌─ samples/saxpy.kdsl:5:20",
                "^^^^ 4-byte load by 900 threads",
                "byte offset 400 (element 100) of the array argument `x`, which has 100 elements of 4 bytes",
            ],
        ),
    ];
    for (args, code, messages) in cases {
        let o = saxpy(args);
        let e = stderr(&o);
        assert_eq!(status(&o), code, "{args:?}:\n{e}");
        for m in messages {
            assert!(e.contains(m), "{args:?}: no `{m}` in:\n{e}");
        }
        assert!(!out.exists(), "{args:?}: --out written");
    }
}

/// kdslc's own PTX of saxpy with one instruction replaced.
fn edited_ptx(dir: &Path, from: &str, to: &str) -> (PathBuf, usize) {
    let c = kdsl::compile(Path::new("samples/saxpy.kdsl"), &kdsl::Options::default())
        .expect("readable");
    let ptx = c.ptx.expect("PTX");
    let line = ptx
        .lines()
        .position(|l| l.contains(from))
        .unwrap_or_else(|| panic!("no `{from}` in\n{ptx}"))
        + 1;
    let path = dir.join("saxpy.ptx");
    std::fs::write(&path, ptx.replacen(from, to, 1)).expect("write");
    (path, line)
}

/// A PTX instruction outside the simulator's subset is an error that names
/// it and its PTX line, at load time: exit 2, nothing run or written.
#[test]
fn an_unsupported_instruction_is_named_with_its_ptx_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ptx, line) = edited_ptx(dir.path(), "mul.lo.u32", "mul24.lo.u32");
    let out = dir.path().join("results");
    let o = kdslc(&[
        "sim",
        ptx.to_str().expect("UTF-8"),
        "--grid",
        "4",
        "--arg",
        "0=2.5",
        "--arg",
        "1=f32:zeros:1000",
        "--arg",
        "2=f32:zeros:1000",
        "--arg",
        "3=1000",
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    assert_eq!(status(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains(
            "error[S0013]: PTX instruction `mul24.lo.u32` is outside the simulator's subset"
        ),
        "{e}"
    );
    assert!(e.contains(&format!("saxpy.ptx:{line}:2")), "{e}");
    assert!(e.contains(&format!("(PTX line {line})")), "{e}");
    assert!(!out.exists());

    // Text that is not PTX at all: S0014 at its position.
    let (bad, line) = edited_ptx(dir.path(), "ret;", "ret");
    let o = kdslc(&[
        "sim",
        bad.to_str().expect("UTF-8"),
        "--grid",
        "1",
        "--arg",
        "0=2.5",
        "--arg",
        "1=f32:zeros:8",
        "--arg",
        "2=f32:zeros:8",
        "--arg",
        "3=8",
    ]);
    assert_eq!(status(&o), 2);
    let e = stderr(&o);
    assert!(
        e.contains("error[S0014]: cannot load the PTX module"),
        "{e}"
    );
    assert!(e.contains(&format!("saxpy.ptx:{}:", line + 1)), "{e}");
}

/// nvcc's PTX takes positional, typed arguments; with `-lineinfo` a report
/// points into the `.cu` file; a pointer without a type prefix is a usage
/// error that says so.
#[test]
fn nvcc_ptx_with_typed_arguments_and_lineinfo() {
    let Some(nvcc) = require_nvcc() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let ptx = nvcc_ptx(&nvcc, "bench/kernels/saxpy.cu", true, dir.path());
    let ptx = ptx.to_str().expect("UTF-8");
    let run = |x: &str| {
        kdslc(&[
            "sim",
            ptx,
            "--grid",
            "4",
            "--block",
            "256",
            "--arg",
            "0=2.5",
            "--arg",
            x,
            "--arg",
            "2=f32:zeros:1000",
            "--arg",
            "3=1000",
        ])
    };
    let o = run("1=f32:rand:100:1");
    assert_eq!(status(&o), 4);
    let e = stderr(&o);
    assert_contains(
        &e,
        &[
            "error[S0002]: out-of-bounds load in global memory",
            "bench/kernels/saxpy.cu:5:",
            "y[i] = a * x[i] + y[i];",
            "the array argument `saxpy_param_1`, which has 100 elements",
        ],
    );

    let o = run("1=rand:1000:1");
    assert_eq!(status(&o), 2);
    assert_contains(&stderr(&o), &["a PTX pointer carries no element type: write it before the array, as in `f32:rand:1000:1`"]);
    let o = kdslc(&[
        "sim",
        ptx,
        "--grid",
        "4",
        "--arg",
        "0=2.5",
        "--arg",
        "1=f32:zeros:1000",
        "--arg",
        "2=f32:zeros:1000",
        "--arg",
        "3=1000",
    ]);
    assert_eq!(status(&o), 2);
    assert_contains(
        &stderr(&o),
        &["`.maxntid 256, 1, 1` is only an upper bound"],
    );
}

/// A small deterministic generator for the attack below.
struct Rng(XorShift);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Mutates `text`: deletes, duplicates or replaces a piece, swaps lines.
fn mutate(rng: &mut Rng, text: &str) -> String {
    const JUNK: [&str; 14] = [
        "%r1",
        "[%rd1]",
        "0f7FC00000",
        "-1",
        ".u32",
        ".v4",
        "{",
        "}",
        ";",
        "bra $L_1;",
        "bar.sync 0;",
        "trap;",
        "mbarrier.init.shared::cta.b64 [%r1], 0;",
        "shfl.sync.idx.b32 %r1, %r1, 40, 0x1f, 0;",
    ];
    let mut t = text.to_string();
    for _ in 0..1 + rng.below(2) {
        let at = rng.below(t.len());
        let end = (at + rng.below(40)).min(t.len());
        if !t.is_char_boundary(at) || !t.is_char_boundary(end) {
            continue;
        }
        t = match rng.below(4) {
            0 => format!("{}{}", &t[..at], &t[end..]),
            1 => format!("{}{}{}", &t[..end], &t[at..end], &t[end..]),
            2 => format!("{}{}{}", &t[..at], rng.pick(&JUNK), &t[end..]),
            _ => {
                let mut lines: Vec<&str> = t.lines().collect();
                let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(i, j);
                lines.join("\n")
            }
        };
    }
    t
}

/// Random and mutated PTX (kdslc's and nvcc's) with random launch flags,
/// through the binary: `kdslc` never panics (exit 3) and never writes
/// `--out` files after a run that did not complete.
#[test]
fn mutated_ptx_and_random_flags_never_panic() {
    let mut seeds: Vec<String> = Vec::new();
    for name in [
        "saxpy",
        "pipeline_sum",
        "cluster_sum",
        "reduce_sum",
        "sgemm_tiled",
    ] {
        let path = PathBuf::from(format!("samples/{name}.kdsl"));
        let c = kdsl::compile(&path, &kdsl::Options::default()).expect("readable");
        seeds.push(c.ptx.expect("PTX"));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = Rng(XorShift(0x9E37_79B9_7F4A_7C15));
    let (mut completed, mut faulted) = (0, 0);
    for case in 0..200 {
        let seed = &seeds[rng.below(seeds.len())];
        let text = if rng.below(5) < 2 {
            seed.clone()
        } else {
            mutate(&mut rng, seed)
        };
        let file = dir.path().join("m.ptx");
        std::fs::write(&file, &text).expect("write");
        let params = kdsl::sim::signatures(seed).expect("parses")[0]
            .params
            .clone();
        let mut args: Vec<String> = vec!["sim".into(), file.to_str().expect("UTF-8").into()];
        // Mostly launches that fit, sometimes one that does not.
        let odd = rng.below(8) == 0;
        args.push("--grid".into());
        args.push(
            if odd {
                rng.pick(&["0", "3,0", "4294967296"])
            } else {
                rng.pick(&["1", "2", "3", "2,2", "4,1,1"])
            }
            .into(),
        );
        if rng.below(10) == 0 {
            args.push("--block".into());
            args.push(
                rng.pick(&["1", "32", "64,2", "256", "1025", "16,16"])
                    .into(),
            );
        }
        if rng.below(10) == 0 {
            args.push("--cluster".into());
            args.push(rng.pick(&["1", "2", "3", "17"]).into());
        }
        for (i, p) in params.iter().enumerate() {
            if rng.below(40) == 0 {
                continue;
            }
            let v = match p.kind {
                launch::ParamKind::PtxU64 => {
                    let ty = rng.pick(&["f32:", "f32:", "u32:", "i32:", "f64:", "f32:", "u8:"]);
                    let n = rng.pick(&["0", "64", "5000", "70000", "70000"]);
                    match rng.below(3) {
                        0 => format!("{ty}zeros:{n}"),
                        1 => format!("{ty}iota:{n}"),
                        _ => format!("{ty}rand:{n}:{}", rng.below(9)),
                    }
                }
                _ if rng.below(30) == 0 => rng.pick(&["x", "-1", "1e99", ""]).into(),
                launch::ParamKind::Scalar(Scalar::F32) => {
                    rng.pick(&["0", "1.5", "-2", "nan"]).into()
                }
                _ => rng
                    .pick(&["0", "1", "3", "16", "16", "40", "4294967295"])
                    .into(),
            };
            args.push("--arg".into());
            args.push(format!("{i}={v}"));
        }
        args.push("--max-steps".into());
        args.push(
            rng.pick(&["1", "5000", "2000000", "2000000", "2000000"])
                .into(),
        );
        if rng.below(3) == 0 {
            args.push("--schedule".into());
            args.push(format!("random:{}", rng.below(100)));
        }
        if rng.below(5) == 0 {
            args.push("--stats".into());
        }
        if rng.below(5) == 0 {
            args.push("--message-format".into());
            args.push(rng.pick(&["json", "short"]).into());
        }
        let out = dir.path().join(format!("out{case}"));
        args.push("--out".into());
        args.push(out.to_str().expect("UTF-8").into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = kdslc(&refs);
        let code = status(&o);
        let all = format!("{}{}", stderr(&o), stdout(&o));
        assert!(
            matches!(code, 0 | 2 | 4)
                && !all.contains("panicked")
                && !all.contains("internal error"),
            "case {case}: exit {code}, {args:?}\n{all}\n--- PTX:\n{text}"
        );
        let written = std::fs::read_dir(&out).map_or(0, Iterator::count);
        assert_eq!(
            written > 0,
            code == 0,
            "case {case}: exit {code} with {written} output files: {args:?}"
        );
        completed += usize::from(code == 0);
        faulted += usize::from(code == 4);
    }
    // The attack reaches the simulator, both ways.
    assert!(
        completed >= 8 && faulted >= 20,
        "{completed} completed, {faulted} faulted"
    );
}

/// The sources a PTX module's `.file` directives name are read as any
/// source file is (`kdsl::input`): a FIFO is refused at once instead of
/// hanging the simulator, a file past the 16 MiB of a source is not read
/// whole; either way the report points at the PTX line instead.
#[cfg(target_os = "linux")]
#[test]
fn file_directives_read_only_regular_bounded_sources() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"k.cu\"\n\
        .visible .entry k()\n{\n\t.loc 1 3 5\n\ttrap;\n\tret;\n}\n";
    std::fs::write(dir.path().join("k.ptx"), ptx).expect("writes");
    let source = "// k.cu\n__global__ void k() {\n    __trap();\n}\n";
    let sim = || {
        let (_, o) = kdslc_watched(dir.path(), &["sim", "k.ptx", "--grid", "1", "--block", "1"]);
        assert_eq!(status(&o), 4, "{}", stderr(&o));
        stderr(&o)
    };
    let cu = dir.path().join("k.cu");
    std::fs::write(&cu, source).expect("writes");
    let e = sim();
    assert_contains(&e, &["┌─ k.cu:3:5", "__trap();"]);

    // Larger than a source may be: the same text, then 16 MiB of spaces.
    let mut big = source.as_bytes().to_vec();
    big.resize(kdsl::input::MAX_SOURCE_BYTES as usize + 1, b' ');
    std::fs::write(&cu, &big).expect("writes");
    let e = sim();
    assert!(e.contains("┌─ k.ptx:8:2"), "{e}");
    assert!(!e.contains("k.cu"), "{e}");

    std::fs::remove_file(&cu).expect("removes");
    let made = Command::new("mkfifo")
        .arg(&cu)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let e = sim();
    assert!(e.contains("┌─ k.ptx:8:2"), "{e}");
}

/// Runs `kdslc ARGS` in `dir`, watching it: the most resident memory it
/// reaches (sampled from `/proc/PID/status`, in KiB) and how it exited. It
/// is killed, and the test failed, if it has not finished within a minute:
/// a hang is what some tests look for.
#[cfg(target_os = "linux")]
fn kdslc_watched(dir: &Path, args: &[&str]) -> (u64, Output) {
    use std::time::{Duration, Instant};
    let mut child = command(env!("CARGO_BIN_EXE_kdslc"), dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kdslc runs");
    let status = format!("/proc/{}/status", child.id());
    let start = Instant::now();
    let mut peak = 0;
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().expect("kills");
            panic!("`kdslc {}` hangs", args.join(" "));
        }
        let rss = std::fs::read_to_string(&status).ok().and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        peak = peak.max(rss.unwrap_or(0));
        std::thread::sleep(Duration::from_millis(5));
    }
    (peak, child.wait_with_output().expect("output"))
}

/// A thread issuing bulk copies (and committing groups) in a loop that
/// never blocks holds bounded memory until `--max-steps` ends it: the
/// copies in flight are capped (the oldest lands first) and a copy carries
/// its group's number, where every copy once stayed queued with its id
/// kept in its thread's group lists (about 60 bytes a step: at the default
/// 10^9 steps, an abort).
#[cfg(target_os = "linux")]
#[test]
fn bulk_copies_in_a_loop_hold_bounded_memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, commit) in [
        ("open.ptx", ""),
        ("groups.ptx", "\tcp.async.bulk.commit_group;\n"),
    ] {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 out)\n{{\n\
             \t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\
             \t.shared .align 16 .b8 buf[64];\n\
             \tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, buf;\n\
             L:\n\tcp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 16;\n\
             {commit}\tbra L;\n}}\n"
        );
        std::fs::write(dir.path().join(name), ptx).expect("writes");
        // The copies alone (checks off), and with the run-time checks,
        // whose per-copy state (clock snapshots, landed groups) is bounded
        // too; a debug build checks 2·10^6 steps within the minute.
        for (checks, steps, kib) in [
            ("none", 8_000_000, 128 * 1024),
            ("all", 2_000_000, 64 * 1024),
        ] {
            let args = format!(
                "sim {name} --grid 1 --block 1 --arg 0=u8:zeros:64 --max-steps {steps} --checks {checks}"
            );
            let (peak, o) = kdslc_watched(dir.path(), &words(&args));
            faulted(
                &o,
                &format!("error[S0011]: no progress within {steps} steps"),
            );
            assert!(peak < kib, "{name} (checks {checks}): {peak} KiB resident");
        }
    }
}

/// `kdslc ARGS` in `dir` under an address-space limit of `kib`, so that an
/// allocation past it fails (where an unbounded one would take the
/// machine).
#[cfg(target_os = "linux")]
fn kdslc_limited(dir: &Path, kib: u64, args: &[&str]) -> Output {
    let mut line = format!("ulimit -v {kib}; exec \"$0\"");
    for i in 1..=args.len() {
        line.push_str(&format!(" \"${{{i}}}\""));
    }
    command("bash", dir)
        .arg("-c")
        .arg(line)
        .arg(env!("CARGO_BIN_EXE_kdslc"))
        .args(args)
        .output()
        .expect("bash runs")
}

/// What the input sizes is allocated when it fits and fallibly: a module
/// declaring 1 TiB of `.global` variables loads without allocating them
/// and is refused at the launch (they were each allocated at load and
/// copied at the launch, infallibly: an abort), and an array argument the
/// simulator cannot copy is a report (the copy was an infallible clone).
#[cfg(target_os = "linux")]
#[test]
fn what_the_input_sizes_is_allocated_fallibly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut ptx = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    for i in 0..1024 {
        ptx.push_str(&format!(".global .align 4 .b8 g{i}[1073741824];\n"));
    }
    ptx.push_str(".visible .entry k()\n{\n\tret;\n}\n");
    std::fs::write(dir.path().join("vars.ptx"), ptx).expect("writes");
    let o = kdslc_limited(
        dir.path(),
        4 << 20,
        &words("sim vars.ptx --grid 1 --block 1"),
    );
    faulted(&o, "error[S0015]: launch does not fit kernel `k`: the simulator needs a copy of the arrays, the module's variables and the cluster's state: ");

    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 x)\n{\n\tret;\n}\n";
    std::fs::write(dir.path().join("one.ptx"), ptx).expect("writes");
    // 1.5 GiB of zeros, and no room for the simulator's copy.
    let args = "sim one.ptx --grid 1 --block 1 --arg 0=u8:zeros:1610612736";
    let o = kdslc_limited(dir.path(), 4 << 20, &words(args));
    faulted(&o, "error[S0015]: launch does not fit kernel `k`: the copy of array `x`: cannot allocate 1610612736 bytes");
}

/// The words of a command line.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// `o` is a faulted run (exit 4) whose reports include `report`.
fn faulted(o: &Output, report: &str) {
    assert_eq!(status(o), 4, "{}", stderr(o));
    assert!(
        stderr(o).contains(report),
        "no `{report}` in:\n{}",
        stderr(o)
    );
}

/// However many `.file` directives a module has, the sources they name are
/// read once each and within a budget: one 10 MiB source named by a
/// hundred different paths (links to it) was read and kept a hundred
/// times.
#[cfg(target_os = "linux")]
#[test]
fn file_directives_read_each_source_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut source = b"// k.cu\n__global__ void k() {\n    __trap();\n}\n".to_vec();
    source.resize(10 << 20, b' ');
    std::fs::write(dir.path().join("k.cu"), &source).expect("writes");
    let mut ptx = String::from(".version 8.0\n.target sm_90\n.address_size 64\n");
    for i in 1..=100 {
        std::os::unix::fs::symlink("k.cu", dir.path().join(format!("k{i}.cu"))).expect("links");
        ptx.push_str(&format!(".file {i} \"k{i}.cu\"\n"));
    }
    ptx.push_str(".visible .entry k()\n{\n\t.loc 100 3 5\n\ttrap;\n\tret;\n}\n");
    std::fs::write(dir.path().join("k.ptx"), ptx).expect("writes");
    let (peak, o) = kdslc_watched(dir.path(), &words("sim k.ptx --grid 1 --block 1"));
    faulted(&o, "__trap();");
    assert!(peak < 200 * 1024, "{peak} KiB resident");
}

/// `--out` never replaces an input: `--arg y=@DIR/y.npy --out DIR` would
/// write the result over the array it read, so it is refused before the
/// run, and the file is left as it was (through another spelling too).
#[test]
fn out_never_replaces_an_argument_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8");
    let base = [
        "sim",
        "samples/saxpy.kdsl",
        "--grid",
        "1",
        "--arg",
        "a=2",
        "--arg",
        "x=rand:8:1",
        "--arg",
        "n=8",
    ];
    let first = kdslc(&[&base[..], &["--arg", "y=rand:8:2", "--out", d]].concat());
    assert!(first.status.success(), "{}", stderr(&first));
    let y = dir.path().join("y.npy");
    let before = std::fs::read(&y).expect("y.npy");
    for spelling in [
        format!("{d}/y.npy"),
        format!(
            "{d}/../{}/y.npy",
            dir.path()
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
        ),
    ] {
        let o = kdslc(&[&base[..], &["--arg", &format!("y=@{spelling}"), "--out", d]].concat());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_contains(&stderr(&o), &["would replace the input"]);
        assert_eq!(std::fs::read(&y).expect("y.npy"), before);
    }
    // Into another folder it runs.
    let other = tempfile::tempdir().expect("temp dir");
    let o = kdslc(
        &[
            &base[..],
            &[
                "--arg",
                &format!("y=@{d}/y.npy"),
                "--out",
                other.path().to_str().expect("UTF-8"),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `--out` is all or nothing: with one destination blocked (a folder named
/// `total.npy`), the run exits 2 and the outputs written before it by an
/// earlier run are left as they were — where once the arrays before the
/// blocked one were already replaced.
#[test]
fn out_with_one_target_blocked_replaces_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8");
    let run = |seed: u32| {
        kdslc(&[
            "sim",
            "samples/ticket_sum.kdsl",
            "--grid",
            "2",
            "--arg",
            &format!("x=rand:500:{seed}"),
            "--arg",
            "partial=zeros:2",
            "--arg",
            "tickets=zeros:1",
            "--arg",
            "total=zeros:1",
            "--arg",
            "n=500",
            "--out",
            d,
        ])
    };
    let first = run(1);
    assert!(first.status.success(), "{}", stderr(&first));
    let partial = dir.path().join("partial.npy");
    let before = std::fs::read(&partial).expect("partial.npy");
    std::fs::remove_file(dir.path().join("total.npy")).expect("removes");
    std::fs::create_dir(dir.path().join("total.npy")).expect("a folder in the way");
    let second = run(2);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    assert_contains(&stderr(&second), &["total.npy`: it is a folder"]);
    assert_eq!(std::fs::read(&partial).expect("partial.npy"), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("lists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".tmp") && !n.ends_with(".bak")),
        "{names:?}"
    );
}

/// The run-time checks are on by default and `--checks` selects them: a
/// kernel with a race and an uninitialised read gives both reports (exit
/// 4); `--checks none` runs it without them (exit 0, the arrays written),
/// `--checks uninit` keeps only S0032; an unknown check is a usage error
/// that names the valid ones.
#[test]
fn checks_are_on_by_default_and_selected_by_flag() {
    let args = |extra: &[&'static str]| {
        let mut v = vec![
            "sim",
            "tests/sim/broken/race_double_buffer.kdsl",
            "--grid",
            "1",
            "--arg",
            "x=iota:1024",
            "--arg",
            "out=zeros:128",
            "--arg",
            "chunks=8",
        ];
        v.extend_from_slice(extra);
        v
    };
    let all = kdslc(&args(&[]));
    faulted(&all, "error[S0030]: data race on shared memory `buf`");
    assert!(stderr(&all).contains("error[S0032]"), "{}", stderr(&all));
    let none = kdslc(&args(&["--checks", "none", "--dump", "out"]));
    assert_eq!(status(&none), 0, "{}", stderr(&none));
    assert!(
        stdout(&none).starts_with("out: f32[128] = ["),
        "{}",
        stdout(&none)
    );
    let uninit = kdslc(&args(&["--checks", "uninit"]));
    faulted(&uninit, "error[S0032]");
    assert!(!stderr(&uninit).contains("S0030"), "{}", stderr(&uninit));
    let bad = kdslc(&args(&["--checks", "races,colours"]));
    assert_eq!(status(&bad), 2, "{}", stderr(&bad));
    for word in ["colours", "races", "uninit", "tx", "barriers"] {
        assert!(stderr(&bad).contains(word), "{word}: {}", stderr(&bad));
    }
}

/// Mutated pipelines (kdslc's PTX of the mbarrier-pipeline samples, cut,
/// duplicated and spliced as `mutated_ptx_and_random_flags_never_panic`
/// does, or with instructions dropped, doubled, swapped or given other
/// numbers) end under random schedules as they do in order: a run that
/// completes or faults in order within the step budget does so under
/// every random schedule too, in at most `RATIO` times its steps (plus a
/// constant for the polling a different interleaving may add), and each
/// step costs what it costs in order (a generous wall bound per run
/// catches a per-step cost that grows with the run). Steps, not time,
/// are the measure, so the test holds on a loaded machine.
#[test]
fn mutated_pipelines_end_under_random_schedules() {
    use crate::common::sim::{launch, ptx_str, rand_f32, run_with, u32v};
    use kdsl::sim::Schedule;
    // Far above any in-order run of the unmutated samples at these sizes
    // (under 100k steps), and low enough that a mutant spinning on bulk
    // copies (a producer loop that no longer advances issues a 4 KiB copy
    // every 16 instructions; the race checks update 1024 shadow granules
    // per copy) ends in seconds in a debug build.
    const BUDGET: u64 = 1_000_000;
    const RATIO: u64 = 8;
    const SLACK: u64 = 200_000;
    // (sample, block, chunks, elements per chunk, `out` elements).
    let pipelines = [
        ("pipeline_sum", 128u32, 3u32, 1024usize, 1usize),
        ("ws_pipeline", 160, 4, 1024, 1),
        ("ws_named", 288, 3, 8192, 6),
        ("big_pipeline", 160, 5, 8192, 1),
    ];
    let mut rng = Rng(XorShift(0x5DEE_CE66_D1CE_4E5B));
    let (mut ran, mut worst) = (0u32, (0u64, 0u64, String::new()));
    for (name, block, chunks, per, outs) in pipelines {
        let path = PathBuf::from(format!("samples/{name}.kdsl"));
        let c = kdsl::compile(&path, &kdsl::Options::default()).expect("compiles");
        let seed = c.ptx.expect("PTX");
        let dynamic = kdsl::sim::signatures(&seed).expect("parses")[0]
            .dynamic_shared
            .unwrap_or(0);
        let mut loaded = 0;
        for case in 0..60 {
            if loaded == 12 {
                break;
            }
            // Half the mutants from the byte-level mutator, half that keep
            // every line whole (more of them load).
            let text = if case % 2 == 0 {
                mutate(&mut rng, &seed)
            } else {
                mutate_lines(&mut rng, &seed)
            };
            let Ok(k) = ptx_str(&format!("{name}.ptx"), &text) else {
                continue;
            };
            if k.program.signature(name).is_none() {
                continue;
            }
            loaded += 1;
            let x = rand_f32(chunks as usize * per, case as u64);
            let mut l = launch(
                name,
                1,
                block,
                1,
                vec![
                    crate::common::sim::f32s("x", &x),
                    crate::common::sim::f32s("out", &vec![0.0; outs]),
                    u32v(chunks),
                ],
            );
            l.dynamic_shared = dynamic;
            let start = std::time::Instant::now();
            let o = run_with(&k, &l, Schedule::InOrder, BUDGET);
            let in_order = o.stats.steps;
            let in_order_wall = start.elapsed();
            let ran_out = o.reports.iter().any(|d| d.code == "S0011");
            for seed in [1u64, 2, 3] {
                let start = std::time::Instant::now();
                let r = run_with(&k, &l, Schedule::Random(seed), BUDGET);
                let wall = start.elapsed();
                let what = format!("{name} case {case} random:{seed}");
                ran += 1;
                if !ran_out {
                    let bound = RATIO * in_order + SLACK;
                    assert!(
                        r.stats.steps <= bound,
                        "{what}: {} steps where in order took {in_order}:\n--- PTX:\n{text}",
                        r.stats.steps
                    );
                    if r.stats.steps * 1000 / in_order.max(1) > worst.0 * 1000 / worst.1.max(1) {
                        worst = (r.stats.steps, in_order, what.clone());
                    }
                }
                // Each step costs about what it costs in order: at most
                // 20 times the in-order time per step, and 10 s in all.
                let per_step = |w: std::time::Duration, s: u64| w.as_secs_f64() / s.max(1) as f64;
                assert!(
                    wall.as_secs_f64() < 10.0
                        || per_step(wall, r.stats.steps)
                            < 20.0 * per_step(in_order_wall, in_order),
                    "{what}: {wall:?} for {} steps (in order {in_order_wall:?} for {in_order}):\n--- PTX:\n{text}",
                    r.stats.steps
                );
            }
        }
    }
    eprintln!(
        "{ran} random runs of mutated pipelines; the most steps against in order: {} vs {} ({})",
        worst.0, worst.1, worst.2
    );
    assert!(ran >= 60, "too few mutants loaded: {ran} runs");
}

/// Mutates the instructions of `text` line by line, so that the result
/// mostly still loads: drops one, doubles one, swaps two neighbours, or
/// replaces a number in one (a parity, a count, a size, an offset).
fn mutate_lines(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let body: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            t.ends_with(';') && !t.starts_with('.') && !t.starts_with("//")
        })
        .map(|(i, _)| i)
        .collect();
    for _ in 0..1 + rng.below(2) {
        if body.len() < 2 {
            break;
        }
        let k = rng.below(body.len() - 1);
        let (i, j) = (body[k], body[k + 1]);
        match rng.below(4) {
            0 => lines[i] = String::new(),
            1 => {
                let l = lines[i].clone();
                lines[i] = format!("{l}\n{l}");
            }
            2 => lines.swap(i, j),
            _ => {
                let l = &lines[i];
                // The first run of digits that is a whole number.
                let start = l.char_indices().find(|&(p, c)| {
                    c.is_ascii_digit()
                        && !l[..p].ends_with(|b: char| b.is_ascii_alphanumeric() || b == '_')
                });
                if let Some((p, _)) = start {
                    let end = l[p..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(l.len(), |e| p + e);
                    let n = rng.pick(&["0", "1", "2", "3", "7", "64", "4096", "65536"]);
                    lines[i] = format!("{}{n}{}", &l[..p], &l[end..]);
                }
            }
        }
    }
    lines.join("\n")
}
