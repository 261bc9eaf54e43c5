//! The register-tiled SGEMM sample (`samples/sgemm_regtile.kdsl`, its 64
//! accumulators a register array, language.md §5.8) against the same
//! kernel generated the way it had to be written before register arrays:
//! 64 accumulator variables, 64 fma statements, 64 guarded stores, made
//! here from the sample's text. Assembled by ptxas for sm_90, the hot loop
//! of both has the same SASS instructions per FFMA (512 FFMAs and the same
//! count of instructions per 8-wide step of k), and neither touches local
//! memory.

use crate::common::ptxas;
use kdsl::target::Target;
use std::path::Path;

const SAMPLE: &str = "samples/sgemm_regtile.kdsl";

/// Replaces `from` (which must occur once) by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{SAMPLE} no longer holds:\n{from}"
    );
    text.replacen(from, to, 1)
}

/// The sample with every register array written out as scalars.
fn generated(sample: &str) -> String {
    let mut decl = String::new();
    let mut fmas = String::new();
    let mut stores = String::new();
    for i in 0..8 {
        stores.push_str(&format!("    let row{i} = row0 + 8 * ty + {i};\n"));
        for j in 0..8 {
            decl.push_str(&format!("    let mut acc{i}{j} = 0.0;\n"));
            fmas.push_str(&format!("            acc{i}{j} += a{i} * b{j};\n"));
            stores.push_str(&format!(
                "    if row{i} < m && col0 + 8 * tx + {j} < n {{\n        c[row{i} * n + col0 + 8 * tx + {j}] = acc{i}{j};\n    }}\n"
            ));
        }
    }
    let t = replace_once(
        sample,
        "    let mut acc: [f32; 8, 8] = [0.0; 8, 8];\n",
        &decl,
    );
    let t = replace_once(
        &t,
        "            let ra = [a0, a1, a2, a3, a4, a5, a6, a7];
            let rb = [b0, b1, b2, b3, b4, b5, b6, b7];
            for i in 0..8u32 {
                for j in 0..8u32 {
                    acc[i, j] += ra[i] * rb[j];
                }
            }
",
        &fmas,
    );
    let t = replace_once(
        &t,
        "    for i in 0..8u32 {
        let row = row0 + 8 * ty + i;
        for j in 0..8u32 {
            let col = col0 + 8 * tx + j;
            if row < m && col < n {
                c[row * n + col] = acc[i, j];
            }
        }
    }
",
        &stores,
    );
    assert!(!t.contains("acc["), "a register array left in:\n{t}");
    t
}

fn ptx_of(name: &str, text: &str) -> String {
    let opts = kdsl::Options {
        target: Target::Sm90,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile_str(name, text, &opts);
    assert!(
        c.diagnostics.is_empty(),
        "{name}: {}",
        kdsl::diagnostics::render::short(&c.sources, &c.diagnostics)
    );
    c.ptx.expect("PTX")
}

/// The SASS (`nvdisasm -c`) of `ptx` for sm_90, NOPs left out.
fn sass(ptxas: &Path, nvdisasm: &Path, ptx: &str) -> Vec<String> {
    let asm = ptxas::assemble_with(ptxas, ptx, "sm_90", &["-v"]).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        asm.log
            .contains("0 bytes spill stores, 0 bytes spill loads"),
        "spills: {}",
        asm.log
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let cubin = dir.path().join("k.cubin");
    std::fs::write(&cubin, &asm.cubin).expect("write cubin");
    let out = std::process::Command::new(nvdisasm)
        .arg("-c")
        .arg(&cubin)
        .output()
        .expect("nvdisasm runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| (l.starts_with(".L_x_") && l.ends_with(':')) || l.starts_with("/*"))
        .filter(|l| !l.contains(" NOP"))
        .map(String::from)
        .collect()
}

/// The instructions of the loop that holds the FFMAs: from its label to
/// the branch back to it.
fn hot_loop(sass: &[String]) -> Vec<&str> {
    for (k, l) in sass.iter().enumerate() {
        let Some(label) = l.strip_suffix(':') else {
            continue;
        };
        let back = format!("BRA `({label})");
        let Some(end) = sass[k..].iter().position(|l| l.contains(&back)) else {
            continue;
        };
        let body: Vec<&str> = sass[k + 1..=k + end]
            .iter()
            .filter(|l| l.starts_with("/*"))
            .map(String::as_str)
            .collect();
        if body.iter().any(|l| l.contains("FFMA")) {
            return body;
        }
    }
    panic!("no loop with FFMAs in\n{}", sass.join("\n"));
}

fn count(body: &[&str], op: &str) -> usize {
    body.iter().filter(|l| l.contains(op)).count()
}

#[test]
fn register_array_sgemm_has_the_sass_of_the_generated_one() {
    let sample = std::fs::read_to_string(SAMPLE).expect("sample");
    let arrays = ptx_of("sgemm_regtile.kdsl", &sample);
    let scalars = ptx_of("sgemm_generated.kdsl", &generated(&sample));
    for ptx in [&arrays, &scalars] {
        assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        assert_eq!(ptx.matches("fma.rn.f32").count(), 512, "{ptx}");
    }
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let Some(nvdisasm) = ptxas::nvdisasm_path() else {
        assert!(!ptxas::in_ci(), "nvdisasm not found under CI");
        eprintln!("SKIPPED: nvdisasm not found; the SASS was not compared");
        return;
    };
    let (a, s) = (
        sass(&ptxas, &nvdisasm, &arrays),
        sass(&ptxas, &nvdisasm, &scalars),
    );
    let (la, ls) = (hot_loop(&a), hot_loop(&s));
    for (what, all, body) in [("arrays", &a, &la), ("generated", &s, &ls)] {
        assert_eq!(count(body, "FFMA"), 512, "{what}: FFMAs per step of k");
        assert!(
            !all.iter().any(|l| l.contains("LDL") || l.contains("STL")),
            "{what}: local memory in the SASS"
        );
    }
    assert_eq!(
        la.len(),
        ls.len(),
        "SASS per step of k: register arrays {}, generated {}",
        la.len(),
        ls.len()
    );
    assert_eq!(
        count(&la, "LDS"),
        count(&ls, "LDS"),
        "shared loads per step"
    );
}
