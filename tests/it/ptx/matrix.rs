//! The PTX of `ldmatrix_xN`/`stmatrix_xN`, exactly, on every target, under
//! ptxas 13.5 with the SASS's LDSM/STSM: the forms of the design's
//! verified cases (`q20`, `q21`: `.m8n8.x1/.x2/.x4{.trans}.shared.b16`),
//! `stmatrix` from sm_90 only (E0200 before), each lane's row address
//! through a swizzled array's pattern.

use crate::common::{for_target, ptxas};
use kdsl::target::Target;

const SRC: &str = r#"
kernel m(x: global [bf16], y: global mut [bf16x2]) block(64) {
    shared t: [bf16; 32, 64];
    shared sw: [bf16; 2, 8, 64] swizzle(128);
    for i in thread_idx.x..2048 step 64 {
        t[i / 64, i % 64] = x[i];
    }
    for i in thread_idx.x..1024 step 64 {
        sw[i / 512, (i / 64) % 8, i % 64] = x[i];
    }
    sync_threads();
    let (a, b, c, d) = ldmatrix_x4(t[lane_id, 8 * warp_id]);
    let (e, f) = ldmatrix_x2(t[lane_id % 16, 16], trans = true);
    let (g) = ldmatrix_x1(sw[warp_id, lane_id % 8, 8 * (lane_id / 8)]);
    y[thread_idx.x] = a + b * c - d + e * f + g;
    STORE
}
"#;

#[test]
fn matrix_forms_on_every_target() {
    let ptxas = ptxas::require_ptxas();
    let nvdisasm = ptxas::nvdisasm_path();
    for target in Target::ALL {
        let store = target.sm() >= 90;
        let src = SRC.replace(
            "STORE",
            if store {
                "stmatrix_x4(t[lane_id, 8 * warp_id], d, c, b, a, trans = true);\n    stmatrix_x1(sw[warp_id, lane_id % 8, 8 * (lane_id / 8)], g);"
            } else {
                ""
            },
        );
        let c = kdsl::compile_str("m.kdsl", &src, &for_target(target));
        if target.sm() < 90 {
            let with_store = kdsl::compile_str(
                "m.kdsl",
                &SRC.replace("STORE", "stmatrix_x1(sw[0, lane_id % 8, 0], g);"),
                &for_target(target),
            );
            let codes: Vec<&str> = with_store.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(codes, ["E0200"], "{target}");
        }
        let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
        assert!(c.diagnostics.is_empty(), "{target}: {shown}");
        let ptx = c.ptx.expect("PTX");
        let forms: Vec<String> = ptx
            .lines()
            .map(str::trim)
            .filter(|l| l.contains("matrix."))
            .map(|l| l.split(' ').next().unwrap_or("").to_string())
            .collect();
        let mut want = vec![
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
            "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        ];
        if store {
            want.extend([
                "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                "stmatrix.sync.aligned.m8n8.x1.shared.b16",
            ]);
        }
        assert_eq!(forms, want, "{target}");
        // The swizzled array's rows: the address goes through the XOR.
        let x1 = ptx
            .lines()
            .position(|l| l.contains("m8n8.x1.shared"))
            .expect("the x1 load");
        let before: Vec<&str> = ptx.lines().take(x1).collect();
        assert!(
            before.iter().rev().take(12).any(|l| l.contains("xor.b32")),
            "{target}: no swizzle before the x1 load:\n{}",
            before[before.len().saturating_sub(12)..].join("\n")
        );
        let Some(ptxas) = &ptxas else { continue };
        let asm = ptxas::assemble_with(ptxas, &ptx, target.name(), &[])
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        let Some(nvdisasm) = &nvdisasm else { continue };
        let dir = tempfile::tempdir().expect("tempdir");
        let cubin = dir.path().join("m.cubin");
        std::fs::write(&cubin, &asm.cubin).expect("write");
        let sass = std::process::Command::new(nvdisasm)
            .arg(&cubin)
            .output()
            .expect("nvdisasm");
        let sass = String::from_utf8_lossy(&sass.stdout);
        let count = |m: &str| sass.lines().filter(|l| l.contains(m)).count();
        assert_eq!(count("LDSM"), 3, "{target}: LDSM\n{sass}");
        assert_eq!(count("STSM"), if store { 2 } else { 0 }, "{target}: STSM");
    }
}
