//! Broken kernels (`tests/sim/broken/`): each makes one of the mistakes the
//! simulator exists to explain, and must give its report. A kernel names
//! its launch in a `// sim ...` header and its expected report with an
//! inline `//~ CODE TEXT` on the line the report is about (TEXT names the
//! PTX instruction, for the reader): the report's primary span must be on
//! that line of that file, and a report for a `.kdsl` kernel must not fall
//! back to naming PTX lines anywhere. The rendered report is snapshotted in
//! `tests/sim/broken/snapshots/` (`INSTA_UPDATE=always cargo test --test it
//! sim::broken::` after an intended change, then review). A `.kdsl` kernel
//! with a `// target: TARGET` line is compiled for that target; a `.cu`
//! file (a broken copy of a CUDA twin) runs as nvcc's PTX with `-lineinfo`,
//! so its report points into the `.cu` file (skipped without nvcc, never
//! in CI).

use crate::common::sim::*;
use kdsl::sim::{Schedule, SimOptions};
use std::path::Path;

/// `(line, code, text)` for each code of each `//~ CODE... TEXT`.
fn expectations(text: &str) -> Vec<(usize, String, String)> {
    let is_code =
        |w: &str| w.len() == 5 && w.starts_with('S') && w[1..].bytes().all(|b| b.is_ascii_digit());
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let Some((_, ann)) = l.split_once("//~ ") else {
            continue;
        };
        let words: Vec<&str> = ann.split_whitespace().collect();
        let codes: Vec<&str> = words.iter().copied().take_while(|w| is_code(w)).collect();
        let hint = words[codes.len()..].join(" ");
        for c in codes {
            out.push((i + 1, c.to_string(), hint.clone()));
        }
    }
    out
}

/// nvcc's PTX of the `.cu` file `path` (for the architecture its first line
/// names) with `-lineinfo`, its `.file` named relative to the PTX, which
/// the simulator reads from `tests/sim/broken/` (nvcc writes the absolute
/// path): reports and their snapshots point at `tests/sim/broken/NAME.cu`
/// wherever the repository is.
pub(crate) fn nvcc_lineinfo_ptx(nvcc: &Path, path: &Path) -> Result<String, String> {
    let root = repo_root();
    let rel = path.strip_prefix(&root).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("k.ptx");
    let o = std::process::Command::new(nvcc)
        .current_dir(&root)
        .arg("-ptx")
        .arg(format!("-arch={}", nvcc_arch(rel)))
        .arg("-lineinfo")
        .arg(rel)
        .arg("-o")
        .arg(&out)
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(format!(
            "nvcc {}: {}",
            rel.display(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let ptx = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    let folder = path.parent().ok_or("a file in a folder")?;
    let prefix = format!("\"{}/", folder.display());
    Ok(ptx.replace(&prefix, "\""))
}

fn check(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    // A `// target: sm_90a` line compiles a `.kdsl` kernel for that target.
    let target = text
        .lines()
        .find_map(|l| l.strip_prefix("// target: "))
        .and_then(|t| kdsl::target::Target::from_name(t.trim()));
    let k = if name.ends_with(".ptx") {
        ptx_str(&format!("tests/sim/broken/{name}"), &text)?
    } else if name.ends_with(".cu") {
        // A broken copy of a CUDA twin: nvcc's PTX of it, with line info.
        let Some(nvcc) = crate::common::ptxas::require_nvcc() else {
            return Ok(());
        };
        let ptx = nvcc_lineinfo_ptx(&nvcc, path)?;
        ptx_str(&format!("tests/sim/broken/{name}.ptx"), &ptx)?
    } else if let Some(target) = target {
        let opts = kdsl::Options {
            target,
            ..kdsl::Options::default()
        };
        kdsl_file_with(path, &opts)
    } else {
        kdsl_file(path)
    };
    let l = header_launch(&text, &k.program);
    let o = kdsl::sim::run(
        &k.program,
        &l,
        &SimOptions {
            schedule: header_schedule(&text),
            max_steps: 10_000_000,
            ..SimOptions::default()
        },
    );
    let rendered = rendered(&k, &o);
    let expected = expectations(&text);
    let mut codes: Vec<&str> = o.reports.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    codes.dedup();
    let mut want: Vec<&str> = expected.iter().map(|(_, c, _)| c.as_str()).collect();
    want.sort_unstable();
    if codes != want {
        return Err(format!(
            "{name}: expected {want:?}, got {codes:?}:\n{rendered}"
        ));
    }
    if !o.faulted {
        return Err(format!("{name}: not marked faulted"));
    }
    for (line, code, hint) in &expected {
        let d = o
            .reports
            .iter()
            .find(|d| d.code == code)
            .ok_or("no report")?;
        let Some(span) = d.primary_span() else {
            return Err(format!("{name}: {code} has no primary span:\n{rendered}"));
        };
        let file = k.sources.get(span.file).ok_or("span file")?;
        let got = file.line_col(span.start as usize).0;
        if !file.name.ends_with(&name) || got != *line {
            return Err(format!(
                "{name}: {code} ({hint}) points at {}:{got}, expected line {line}:\n{rendered}",
                file.name
            ));
        }
    }
    // For kdsl input (and CUDA with line info) every instruction and
    // declaration a report mentions has a source span: no report falls
    // back to naming PTX lines.
    if !name.ends_with(".ptx") && rendered.contains("PTX line") {
        return Err(format!("{name}: a report names a PTX line:\n{rendered}"));
    }
    let stem = name.replace('.', "_");
    insta::with_settings!({
        snapshot_path => "../../sim/broken/snapshots",
        prepend_module_to_snapshot => false,
        description => text.clone(),
        omit_expression => true,
    }, {
        insta::assert_snapshot!(stem, rendered);
    });
    Ok(())
}

#[test]
fn every_broken_kernel_gives_its_report() {
    let dir = repo_root().join("tests/sim/broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/sim/broken")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "kdsl" || e == "ptx" || e == "cu")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the suite lost kernels: {files:?}");
    let failures: Vec<String> = files.iter().filter_map(|p| check(p).err()).collect();
    assert!(
        failures.is_empty(),
        "{} failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A CUDA kernel (`path`, relative to the repository root) as nvcc's PTX
/// with line info, so that reports point into the `.cu` file; `None`
/// without nvcc (which CI has).
pub fn cuda(path: &str) -> Result<Option<Loaded>, String> {
    let Some(nvcc) = crate::common::ptxas::require_nvcc() else {
        return Ok(None);
    };
    let ptx = nvcc_lineinfo_ptx(&nvcc, &repo_root().join(path))?;
    ptx_str(&format!("{path}.ptx"), &ptx).map(Some)
}

/// docs/simulator.md shows real reports: the rendered reports of broken
/// kernels (hangs and faults — a deadlock cycle among them —, one for each
/// run-time check, a shuffle from a lane that exited, a failed `assert`)
/// appear in it verbatim.
#[test]
fn the_docs_show_real_reports() {
    let docs =
        std::fs::read_to_string(repo_root().join("docs/simulator.md")).expect("docs/simulator.md");
    for name in [
        "producer_never_refills.kdsl",
        "consumer_skips_phase.kdsl",
        "cluster_peer_exits_early.ptx",
        "release_skipped_cycle.kdsl",
        // The convergence model (S0050) and the CUDA runtime (S0041).
        "shuffle_thread_gone.kdsl",
        "assert_fails.cu",
        // One per run-time check (the section "Run-time checks").
        "race_missing_sync.kdsl",
        "tma_store_without_proxy_fence.cu",
        "uninit_partial_tile.kdsl",
        "tx_phase_completes_early.kdsl",
        "divergent_sync_threads.kdsl",
    ] {
        let path = repo_root().join("tests/sim/broken").join(name);
        let text = std::fs::read_to_string(&path).expect("readable");
        let k = if name.ends_with(".ptx") {
            ptx_str(&format!("tests/sim/broken/{name}"), &text).expect("loads")
        } else if name.ends_with(".cu") {
            match cuda(&format!("tests/sim/broken/{name}")) {
                Ok(Some(k)) => k,
                Ok(None) => continue,
                Err(e) => panic!("{e}"),
            }
        } else {
            kdsl_file(&path)
        };
        let o = run(&k, &header_launch(&text, &k.program));
        let report = rendered(&k, &o);
        assert!(
            docs.contains(report.trim_end()),
            "docs/simulator.md does not show the current report of {name}:\n{report}"
        );
    }
}

/// The hangs and faults that do not depend on the interleaving are found
/// under random schedules too, with the same reports.
#[test]
fn random_schedules_find_the_same_faults() {
    for name in [
        "missing_arrival.kdsl",
        "arrival_count_too_high.kdsl",
        "wrong_parity.kdsl",
        "expect_tx_too_large.kdsl",
        "producer_never_refills.kdsl",
        "shuffle_thread_gone.kdsl",
        "out_of_bounds_index.kdsl",
        "out_of_bounds_shared.kdsl",
        "arrive_count_overflows.kdsl",
        "uninit_partial_tile.kdsl",
        "divergent_sync_threads.kdsl",
        "sync_threads_skipped.kdsl",
    ] {
        let path = repo_root().join("tests/sim/broken").join(name);
        let text = std::fs::read_to_string(&path).expect("readable");
        let k = kdsl_file(&path);
        let l = header_launch(&text, &k.program);
        let mut want: Vec<String> = expectations(&text).into_iter().map(|(_, c, _)| c).collect();
        want.sort();
        for seed in 0..4 {
            let o = run_with(&k, &l, Schedule::Random(seed), 10_000_000);
            let mut got: Vec<String> = o.reports.iter().map(|d| d.code.to_string()).collect();
            got.sort();
            got.dedup();
            assert_eq!(got, want, "{name}, seed {seed}:\n{}", rendered(&k, &o));
        }
    }
}
