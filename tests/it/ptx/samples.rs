//! Golden PTX for every sample, and real ptxas on every sample and every
//! valid test program (`tests/valid/*.kdsl`): for the program's target
//! always (sm_90, or what a `// target: sm_90a` line in its leading comment
//! names: the tensor-core GEMM), sm_80 whenever an sm_90 program uses
//! nothing newer (compiling it for sm_80 gives no E0200);
//! and ptxas on the programs it once crashed on (tests/fixtures/ptxas-crash).
//!
//! Regenerate the golden files after an intended change with
//! `KDSL_BLESS=1 cargo test --test it ptx::samples::`, and review the diff.

use crate::common::{self, for_target, kdsl_files, kdsl_suite, repo_root};
use kdsl::target::Target;
use std::path::Path;

fn compile(path: &Path, target: Target) -> kdsl::Compilation {
    kdsl::compile(path, &for_target(target)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .expect("utf-8 file name")
        .to_string()
}

/// Compiles for the program's target (`// target: sm_90a` in its leading
/// comment, else sm_90; must be clean) and, for an sm_90 program, for sm_80
/// (clean, or only E0200). Returns the target, its PTX, and the sm_80 PTX
/// when the program allows sm_80.
fn build(path: &Path) -> (Target, String, Option<String>) {
    let target = common::source_target(path);
    let c = compile(path, target);
    let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    assert!(
        c.diagnostics.is_empty(),
        "{}: diagnostics for {target}:\n{shown}",
        path.display()
    );
    let ptx = c
        .ptx
        .unwrap_or_else(|| panic!("{}: no PTX", path.display()));
    if target != Target::Sm90 {
        return (target, ptx, None);
    }
    let c80 = compile(path, Target::Sm80);
    let shown = kdsl::diagnostics::render::short(&c80.sources, &c80.diagnostics);
    assert!(
        c80.diagnostics.iter().all(|d| d.code == "E0200"),
        "{}: sm_80 gives diagnostics other than E0200:\n{shown}",
        path.display()
    );
    (target, ptx, c80.ptx)
}

#[test]
fn samples_match_golden_ptx() {
    let bless = std::env::var_os("KDSL_BLESS").is_some();
    let samples = kdsl_suite("samples", 8);
    let mut stale = Vec::new();
    for path in &samples {
        let (target, ptx, _) = build(path);
        let golden = repo_root()
            .join("tests/golden")
            .join(format!("{}.{target}.ptx", stem(path)));
        if bless {
            std::fs::write(&golden, &ptx).expect("write golden file");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == ptx => {}
            Ok(_) => stale.push(format!(
                "{} differs from {}",
                path.display(),
                golden.display()
            )),
            Err(_) => stale.push(format!("{} is missing", golden.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "golden PTX out of date (rerun with KDSL_BLESS=1 and review the diff):\n{}",
        stale.join("\n")
    );
}

#[test]
fn output_is_deterministic() {
    for path in kdsl_files(&repo_root().join("samples")) {
        let target = common::source_target(&path);
        let a = compile(&path, target).ptx;
        let b = compile(&path, target).ptx;
        assert!(a.is_some(), "{}: no PTX", path.display());
        assert_eq!(a, b, "{}: two compilations differ", path.display());
    }
}

#[test]
fn ptxas_accepts_samples_and_valid_programs() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    let mut files = kdsl_files(&repo_root().join("samples"));
    files.extend(kdsl_files(&repo_root().join("tests/valid")));
    let mut failures = Vec::new();
    let mut sm80 = 0;
    for path in &files {
        let (target, ptx, ptx80) = build(path);
        if let Err(e) = common::ptxas::assemble(&ptxas, &ptx, target.name()) {
            failures.push(format!("{} ({target}):\n{e}", path.display()));
        }
        if let Some(ptx80) = ptx80 {
            sm80 += 1;
            if let Err(e) = common::ptxas::assemble(&ptxas, &ptx80, "sm_80") {
                failures.push(format!("{} (sm_80):\n{e}", path.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas rejected:\n{}",
        failures.join("\n\n")
    );
    assert!(
        sm80 >= 5,
        "expected most programs to assemble for sm_80 too, got {sm80}"
    );
    eprintln!(
        "ptxas accepted {} programs for their targets and {sm80} for sm_80",
        files.len()
    );
}

/// Every target compiles every sample that does not need more than it has
/// (a newer target, E0200, or more shared memory, E0122).
#[test]
fn every_target_compiles_the_samples() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    for target in Target::ALL {
        for path in kdsl_files(&repo_root().join("samples")) {
            let c = compile(&path, target);
            if c.diagnostics
                .iter()
                .any(|d| d.code == "E0200" || d.code == "E0122")
            {
                continue;
            }
            let ptx = c
                .ptx
                .unwrap_or_else(|| panic!("{} for {target}: no PTX", path.display()));
            common::ptxas::assemble(&ptxas, &ptx, target.name())
                .unwrap_or_else(|e| panic!("{} for {target}: {e}", path.display()));
        }
    }
}

/// The programs on which ptxas 13.5 itself crashed (SIGSEGV) before the
/// writer routed around it (tests/fixtures/ptxas-crash: three generated
/// programs and the shape they reduce to; docs/architecture.md, "ptxas
/// workarounds"): each compiles without errors (their warnings are the
/// generator's), and ptxas assembles it for sm_90 and, unless it needs
/// sm_90 (E0200 and nothing else), for sm_80.
#[test]
fn ptxas_assembles_the_programs_it_crashed_on() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    let files = kdsl_suite("tests/fixtures/ptxas-crash", 4);
    let mut failures = Vec::new();
    let mut sm80 = 0;
    for path in &files {
        for target in [Target::Sm90, Target::Sm80] {
            let c = compile(path, target);
            let errors: Vec<_> = c.diagnostics.iter().filter(|d| d.is_error()).collect();
            if target == Target::Sm80 && !errors.is_empty() {
                assert!(
                    errors.iter().all(|d| d.code == "E0200"),
                    "{}: sm_80 gives errors other than E0200",
                    path.display()
                );
                continue;
            }
            assert!(errors.is_empty(), "{} for {target}: errors", path.display());
            let ptx = c
                .ptx
                .unwrap_or_else(|| panic!("{} for {target}: no PTX", path.display()));
            sm80 += usize::from(target == Target::Sm80);
            if let Err(e) = common::ptxas::assemble(&ptxas, &ptx, target.name()) {
                // ptxas's output and the command, not the 3,000 numbered lines.
                let head: String = e.lines().take(3).collect::<Vec<_>>().join("\n");
                failures.push(format!("{} for {target}: {head}", path.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "ptxas failed:\n{}",
        failures.join("\n")
    );
    // seed31007138 and while_never need nothing newer than sm_80.
    assert!(sm80 >= 2, "only {sm80} of them assembled for sm_80");
}
