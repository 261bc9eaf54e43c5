//! No false positives: with every run-time check on (`kdslc sim`'s
//! default), every sample, every CUDA twin of `bench/kernels/`, the
//! kernels `cargo bench --bench sim` measures and the correct twins of the
//! broken kernels (`tests/sim/clean/`) run without a single report under
//! the in-order schedule and random ones. The checks report races,
//! uninitialised reads, transaction overflows and barrier divergence that
//! are there; a correct kernel gets none of them.

use super::broken::cuda;
use super::hopper::{case_designs_gemm, designs_gemm};
use super::samples::*;
use super::twins::nvcc_ptx;
use crate::common::ptxas::require_nvcc;
use crate::common::sim::*;
use kdsl::sim::Schedule;

type Case = fn(&Loaded);

/// Every sample with the case that runs it (its inputs cover every CTA
/// and pipeline-stage path, `sim::samples`).
const SAMPLES: &[(&str, Case)] = &[
    ("big_pipeline", case_big_pipeline),
    ("blend_rows", case_blend_rows),
    ("cluster_sum", case_cluster_sum),
    ("flash_attention_fwd", case_flash_attention_all),
    ("histogram", case_histogram),
    ("histogram_v4", case_histogram_v4),
    ("hopper_gemm", case_hopper_gemm),
    ("hopper_gemm_persistent", case_hopper_gemm_persistent),
    ("pipeline_sum", case_pipeline_sum),
    ("reduce_sum", case_reduce_sum),
    ("saxpy", case_saxpy),
    ("sgemm_regtile", case_sgemm_regtile),
    ("sgemm_tiled", case_sgemm_tiled),
    ("softmax_rows", case_softmax_rows),
    ("ticket_sum", case_ticket_sum),
    ("transpose", case_transpose),
    ("ws_named", case_ws_named),
    ("ws_pipeline", case_ws_pipeline),
];

/// The attention sample's four instantiations, two of them also under a
/// random schedule.
fn case_flash_attention_all(k: &Loaded) {
    super::attention::case_flash_attention(k, true);
}

/// The `--const`s a sample is compiled with (each instantiation the
/// tests run).
fn sample_consts(name: &str) -> &'static [&'static str] {
    match name {
        "flash_attention_fwd" => &["HEAD_DIM=64", "HEAD_DIM=128", "CAUSAL=false", "CAUSAL=true"],
        _ => &[],
    }
}

/// The CUDA kernels of the simulator's PTX support (`sim::cuda`), each
/// with the case that runs it clean: Ampere `cp.async` (pipeline and
/// `cuda::memcpy_async` with a barrier), `printf`, a cooperative
/// `grid.sync()` and cooperative groups' 64-thread tiles.
const CUDA: &[(&str, &str, Case)] = &[
    (
        "cp_async",
        super::cuda::CP_ASYNC,
        super::cuda::case_cp_async,
    ),
    ("printf", super::cuda::PRINTF, super::cuda::case_printf),
    (
        "grid_sync",
        super::cuda::GRID_SYNC,
        super::cuda::case_grid_sync,
    ),
    ("tiles", super::cuda::TILES, super::cuda::case_cg_tiles),
];

/// The schedules every clean run is repeated under, besides in order (the
/// GEMMs pick their own: in order, and random ones on the multi-tile
/// shapes).
const RANDOM: [Schedule; 2] = [Schedule::Random(1), Schedule::Random(2)];

fn files(dir: &str, ext: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo_root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| ext.iter().any(|x| e == *x)))
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(String::from))
        .collect();
    out.sort();
    out
}

/// The false-positive count over every sample, twin and bench kernel is
/// zero: `runs` clean runs (printed for docs/simulator.md), each of which
/// would have failed the test with its reports.
#[test]
fn no_false_positives_on_samples_twins_and_bench_kernels() {
    let mut counted: Vec<(String, u64)> = Vec::new();
    let mut total = (0u64, 0u64);
    let mut tally = |name: String, (runs, steps): (u64, u64)| {
        assert!(runs > 0, "{name}: no clean run was made");
        total = (total.0 + runs, total.1 + steps);
        counted.push((name, runs));
    };

    // Every sample (a new sample without a case fails here).
    let samples = files("samples", &["kdsl"]);
    let named: Vec<String> = SAMPLES.iter().map(|s| format!("{}.kdsl", s.0)).collect();
    assert_eq!(samples, named, "every sample has a case in SAMPLES");
    for &(name, case) in SAMPLES {
        let path = repo_root().join("samples").join(format!("{name}.kdsl"));
        let opts = kdsl::Options {
            consts: sample_consts(name)
                .iter()
                .map(|c| c.parse().expect("a --const"))
                .collect(),
            ..crate::common::for_target(crate::common::source_target(&path))
        };
        let k = kdsl_file_with(&path, &opts);
        tally(format!("samples/{name}.kdsl"), sweep(&RANDOM, || case(&k)));
    }

    // The benchmark's own kernels: sgemm_tiled and pipeline_sum are samples
    // (above, at test sizes); the design's GEMM PTX.
    let gemm = designs_gemm();
    tally(
        "tests/fixtures/hopper-ptx/gemm_g_40_232.ptx".into(),
        sweep(&RANDOM, || case_designs_gemm(&gemm)),
    );

    // The CUDA twins, nvcc's PTX with line info.
    if let Some(nvcc) = require_nvcc() {
        for file in files("bench/kernels", &["cu"]) {
            let name = file.trim_end_matches(".cu");
            let (_, case) = SAMPLES
                .iter()
                .find(|s| s.0 == name)
                .unwrap_or_else(|| panic!("{file}: a twin of no sample"));
            let k = ptx_str(&format!("{name}.ptx"), &nvcc_ptx(&nvcc, name, true))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            tally(format!("bench/kernels/{file}"), sweep(&RANDOM, || case(&k)));
        }
    }

    // The correct twins of the broken kernels, and the other hand-overs the
    // checks know (mbarriers, atomics, release–acquire flags, warp
    // barriers), each with its launch in its `// sim` header.
    let clean = files("tests/sim/clean", &["kdsl", "ptx", "cu"]);
    assert!(clean.len() >= 10, "the twins went missing: {clean:?}");
    for name in clean {
        let rel = format!("tests/sim/clean/{name}");
        let text = std::fs::read_to_string(repo_root().join(&rel)).expect("readable");
        let k = if name.ends_with(".ptx") {
            ptx_str(&rel, &text).unwrap_or_else(|e| panic!("{e}"))
        } else if name.ends_with(".cu") {
            match cuda(&rel) {
                Ok(Some(k)) => k,
                Ok(None) => continue,
                Err(e) => panic!("{e}"),
            }
        } else {
            let path = repo_root().join(&rel);
            kdsl_file_with(
                &path,
                &crate::common::for_target(crate::common::source_target(&path)),
            )
        };
        let l = header_launch(&text, &k.program);
        tally(rel, sweep(&RANDOM, || drop(run_clean(&k, &l))));
    }

    // The CUDA kernels of the PTX support, and the warp-convergence
    // kernels (`tests/sim/convergence/`), nvcc's PTX.
    if require_nvcc().is_some() {
        for &(name, src, case) in CUDA {
            if let Some(k) = super::cuda::cuda(name, src) {
                tally(
                    format!("tests/it/sim/cuda.rs: {name}"),
                    sweep(&RANDOM, || case(&k)),
                );
            }
        }
        for name in files("tests/sim/convergence", &["cu"]) {
            tally(
                format!("tests/sim/convergence/{name}"),
                sweep(&RANDOM, || drop(super::convergence::runs(&name))),
            );
        }
    }

    for (name, runs) in &counted {
        eprintln!("{runs:5} clean runs  {name}");
    }
    eprintln!(
        "{} clean runs of {} kernels ({} instructions), 0 false positives",
        total.0,
        counted.len(),
        total.1
    );
}
