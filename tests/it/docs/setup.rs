//! What the setup documentation promises, checked: the `rust-version` in
//! Cargo.toml is at least what the locked dependency tree needs (only one
//! toolchain is installed where this runs, so the claim is recomputed from
//! `Cargo.lock` instead of being tried with an old compiler), and the README
//! states the same version.

use crate::common::{output_ok, repo_root};
use std::process::Command;

/// `1.85` or `1.85.0` as comparable numbers.
fn version(text: &str) -> Vec<u32> {
    let mut v: Vec<u32> = text
        .trim()
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("not a version: {text}"))
        })
        .collect();
    while v.len() < 3 {
        v.push(0);
    }
    v
}

/// The `rust-version` of `[package]` in Cargo.toml.
fn declared() -> String {
    let toml = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    toml.lines()
        .find_map(|l| l.strip_prefix("rust-version"))
        .and_then(|rest| rest.split('"').nth(1))
        .expect("Cargo.toml declares rust-version")
        .to_string()
}

/// The highest `rust-version` of any package in the lock file (dependencies
/// of every kind: `cargo test` builds the dev-dependencies too), with its
/// name.
fn locked_minimum() -> (Vec<u32>, String) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = output_ok(
        Command::new(cargo).current_dir(repo_root()).args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
        ]),
        "cargo metadata",
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p["source"].is_string())
        .filter_map(|p| {
            let v = p["rust_version"].as_str()?;
            Some((version(v), format!("{} {}", p["name"], p["version"])))
        })
        .max()
        .expect("some package declares a rust-version")
}

#[test]
fn rust_version_covers_the_locked_dependency_tree() {
    let claimed = declared();
    let (needed, by) = locked_minimum();
    assert!(
        version(&claimed) >= needed,
        "Cargo.toml says rust-version = \"{claimed}\", but {by} needs Rust {needed:?}: \
         raise rust-version (and the README) or lower that dependency"
    );
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    assert!(
        readme.contains(&format!("Rust {claimed} or newer")),
        "the README must state the same minimum Rust, {claimed}"
    );
}

/// CUDA twins whose kdsl kernel is not written yet: they need no sample
/// for now (none today; `hopper_gemm` waited here until issue 16 wrote
/// `samples/hopper_gemm.kdsl`). Each must still lack its sample, so that
/// the entry goes when the sample comes and the twin is checked like the
/// others.
pub const TWINS_AWAITING_THEIR_SAMPLE: &[&str] = &[];

/// The comparison benchmark is the project's own: `bench/peer.py` uses the
/// project's `scripts/cuda-tools.sh`, every CUDA twin it compares
/// (`bench/kernels/NAME.cu`) has its kdsl source among the samples
/// (`samples/NAME.kdsl`, the one copy) and its `.meta`, no kdsl file is
/// kept beside the twins, and every such sample compiles cleanly (a failure
/// there would only show in CI's benchmark step otherwise).
#[test]
fn the_benchmark_lives_in_the_repository() {
    let bench = repo_root().join("bench");
    let peer = std::fs::read_to_string(bench.join("peer.py")).expect("bench/peer.py");
    assert!(
        peer.contains("\"scripts\", \"cuda-tools.sh\""),
        "peer.py uses scripts/cuda-tools.sh"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).expect(".ci/run");
    let perf = std::fs::read_to_string(repo_root().join("docs/performance.md")).expect("docs");
    for text in [&ci, &perf] {
        assert!(text.contains("bench/peer.py") && !text.contains("shared/bench"));
    }
    let mut kernels = 0;
    for entry in std::fs::read_dir(bench.join("kernels")).expect("bench/kernels") {
        let path = entry.expect("entry").path();
        assert!(
            path.extension().is_none_or(|e| e != "kdsl"),
            "{}: the bench kernels' kdsl source is samples/, one copy",
            path.display()
        );
        if path.extension().is_none_or(|e| e != "cu") {
            continue;
        }
        assert!(
            path.with_extension("meta").is_file(),
            "{} has no .meta",
            path.display()
        );
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        let source = repo_root().join("samples").join(format!("{stem}.kdsl"));
        if TWINS_AWAITING_THEIR_SAMPLE.contains(&stem) {
            assert!(
                !source.exists(),
                "{} exists: take `{stem}` off TWINS_AWAITING_THEIR_SAMPLE",
                source.display()
            );
            continue;
        }
        let target = crate::common::source_target(&source);
        let c = kdsl::compile(&source, &crate::common::for_target(target))
            .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        assert!(
            c.diagnostics.is_empty(),
            "{}: {:#?}",
            source.display(),
            c.diagnostics
        );
        assert!(c.ptx.is_some());
        kernels += 1;
    }
    assert!(kernels >= 7, "the seven benchmark kernels");
}
