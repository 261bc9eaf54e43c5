//! Register budgets (`set_max_regs`, language.md §16) against ptxas 13.5
//! on sm_90a: the programs of `tests/sm90a/` against their golden PTX,
//! assembled without an advisory, each `setmaxnreg` kept in the SASS with
//! the count it was written with; the count at entry the compiler checks
//! the pool with (`ir::entry_registers`) against what ptxas allocates, for
//! every block of whole warpgroups; and ptxas's own advisories about
//! budgets, on the hand-generated GEMM's variants
//! (`tests/fixtures/hopper-gemm/`, from `shared/design/hopper/gemm`),
//! mapped to the spans of their lines.

use crate::common::ptxas;
use kdsl::target::Target;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/sm90a"))
        .expect("tests/sm90a")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kdsl"))
        .collect();
    v.sort();
    v
}

fn compile_str(source: &str) -> kdsl::Compilation {
    let opts = kdsl::Options {
        target: Target::Sm90a,
        ..kdsl::Options::default()
    };
    kdsl::compile_str("t.kdsl", source, &opts)
}

fn compile(path: &Path) -> String {
    let opts = kdsl::Options {
        target: Target::Sm90a,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile(path, &opts).expect("readable");
    assert!(
        c.diagnostics.is_empty(),
        "{}: {}",
        path.display(),
        kdsl::diagnostics::render::short(&c.sources, &c.diagnostics)
    );
    c.ptx.expect("PTX")
}

/// The ptxas messages kdslc turns into diagnostics (`ptx::advice`).
fn advisories(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| kdsl::ptx::advice::Advisory::parse(l).is_some())
        .collect()
}

#[test]
fn sm90a_programs_match_golden_ptx() {
    let bless = std::env::var_os("KDSL_BLESS").is_some();
    let mut stale = Vec::new();
    for path in programs() {
        let ptx = compile(&path);
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("stem");
        let golden = root()
            .join("tests/sm90a/golden")
            .join(format!("{stem}.sm_90a.ptx"));
        if bless {
            std::fs::write(&golden, &ptx).expect("write golden");
            continue;
        }
        if std::fs::read_to_string(&golden).ok().as_deref() != Some(ptx.as_str()) {
            stale.push(golden.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "golden PTX out of date (KDSL_BLESS=1 and review): {stale:?}"
    );
}

/// Each program assembles for sm_90a with no advisory, and every
/// `setmaxnreg` it was written with is in the SASS (ptxas drops them all
/// when it cannot tell the count at entry: C7508).
#[test]
fn ptxas_keeps_every_setmaxnreg() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let nvdisasm = ptxas::nvdisasm_path();
    for path in programs() {
        let ptx = compile(&path);
        let asm = ptxas::assemble_with(&ptxas, &ptx, "sm_90a", &["-v"])
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            advisories(&asm.log).is_empty(),
            "{}: {}",
            path.display(),
            asm.log
        );
        let Some(nvdisasm) = &nvdisasm else {
            continue;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let cubin = dir.path().join("k.cubin");
        std::fs::write(&cubin, &asm.cubin).expect("write cubin");
        let out = std::process::Command::new(nvdisasm)
            .arg(&cubin)
            .output()
            .expect("nvdisasm runs");
        let sass = String::from_utf8_lossy(&out.stdout);
        for line in ptx.lines().filter(|l| l.contains("setmaxnreg.")) {
            let n: u32 = line
                .trim()
                .trim_end_matches(';')
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .expect("a count");
            let kind = if line.contains(".inc.") {
                "TRY_ALLOC"
            } else {
                "DEALLOC"
            };
            let want = format!("{n:#x}");
            assert!(
                sass.lines()
                    .any(|l| l.contains("USETMAXREG") && l.contains(kind) && l.contains(&want)),
                "{}: no USETMAXREG.{kind} {want} in the SASS for `{}`",
                path.display(),
                line.trim()
            );
        }
    }
}

/// The count at entry the pool check uses is what ptxas allocates: for
/// every block of 1 to 8 warpgroups, a kernel whose warpgroup 0 gives
/// registers back and whose others take the rest of the pool uses
/// `min(255, 8 * floor(65536 / (8 * T)))` registers (and ptxas honours
/// the budgets: no C7507/C7508).
#[test]
fn the_count_at_entry_is_what_ptxas_allocates() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    for w in 1..=8u32 {
        let t = 128 * w;
        let e = kdsl::ir::entry_registers(t, None).expect("a count");
        let consumer = if w == 1 {
            e / 8 * 8
        } else {
            ((w * e - 24) / (w - 1) / 8 * 8).min(256)
        };
        let source = format!(
            "kernel k(y: global mut [u32]) block({t}) {{\n    let wg = warp_id / 4;\n    if wg == 0 {{\n        set_max_regs(24);\n    }} else {{\n        set_max_regs({consumer});\n    }}\n    y[thread_idx.x] = wg;\n}}\n"
        );
        let c = compile_str(&source);
        assert!(c.diagnostics.is_empty(), "{t} threads: {:?}", c.diagnostics);
        let ptx = c.ptx.expect("PTX");
        let asm = ptxas::assemble_with(&ptxas, &ptx, "sm_90a", &["-v"])
            .unwrap_or_else(|e| panic!("{t} threads: {e}"));
        let used = format!("Used {} registers", e.min(consumer.max(24)));
        assert!(
            asm.log.contains(&used) && advisories(&asm.log).is_empty(),
            "{t} threads: expected `{used}`, ptxas says:\n{}",
            asm.log
        );
    }
}

/// The hand-generated GEMM's variants, as ptxas 13.5 reports them
/// (`shared/design/hopper/gemm/regs_results.txt`): each advisory becomes
/// its diagnostic, at the span of the line it names.
#[test]
fn ptxas_advisories_map_to_their_lines() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let dir = root().join("tests/fixtures/hopper-gemm");
    let cases = [
        ("c152.ptx", "W0426", None),
        ("two_acc_232.ptx", "W0428", Some(118)),
        ("mx152.ptx", "E0425", Some(119)),
        ("t512_3cons.ptx", "E0425", Some(119)),
        ("q40_setmaxnreg_reqntid_only_dropped.ptx", "W0427", None),
        ("w05_wgmma_implicit_wait.ptx", "W0429", Some(39)),
        ("base.ptx", "", None),
        ("over_40_240.ptx", "", None),
    ];
    for (file, code, line) in cases {
        let ptx = std::fs::read_to_string(dir.join(file)).expect("fixture");
        let log = match ptxas::assemble_with(&ptxas, &ptx, "sm_90a", &["-v"]) {
            Ok(a) => a.log,
            Err(e) => e,
        };
        // Each PTX line gets a span of its own: byte `i` for line `i + 1`.
        let spans: Vec<Option<kdsl::span::Span>> = (0..ptx.lines().count())
            .map(|i| Some(kdsl::span::Span::new(kdsl::span::FileId(0), i, i + 1)))
            .collect();
        let found = kdsl::ptx::advice::diagnostics(&log, &ptx, &spans);
        if code.is_empty() {
            assert!(found.is_empty(), "{file}: {found:?}");
            continue;
        }
        assert_eq!(found.len(), 1, "{file}: {found:?}\n{log}");
        let d = &found[0];
        assert_eq!(d.code, code, "{file}");
        let primary = d.primary_span().expect("a primary span");
        match line {
            Some(l) => assert_eq!(primary.start, l - 1, "{file}: the line ptxas names"),
            // C7507, C7508: every setmaxnreg, the first as the primary.
            None => {
                let first = ptx
                    .lines()
                    .position(|l| l.trim_start().starts_with("setmaxnreg."))
                    .expect("a setmaxnreg") as u32;
                assert_eq!(primary.start, first, "{file}");
                let all = ptx
                    .lines()
                    .filter(|l| l.trim_start().starts_with("setmaxnreg."))
                    .count();
                assert_eq!(d.labels.len(), all, "{file}");
            }
        }
    }
}
