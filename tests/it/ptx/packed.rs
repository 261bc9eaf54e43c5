//! The PTX of packed half math and of the storage conversions, exactly,
//! on every target that has them, assembled by ptxas 13.5 there: the
//! packed instructions and the `.version` each needs (`add.rn.bf16x2` from
//! sm_90 with PTX 7.8, the `fma.rn.bf16x2` forms before; the fp8 `cvt`s
//! from sm_89 with PTX 8.1, 7.8 on sm_90), and in the SASS one HFMA2-class
//! instruction per packed operation (HADD2, HMUL2, HFMA2, HMNMX2).

use crate::common::{for_target, ptxas};
use kdsl::target::Target;

fn ptx_for(src: &str, target: Target) -> String {
    let c = kdsl::compile_str("t.kdsl", src, &for_target(target));
    let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    assert!(c.diagnostics.is_empty(), "{target}: {shown}");
    c.ptx.expect("PTX")
}

/// The instruction lines of a PTX module (no declarations, loads of
/// parameters or address arithmetic), trimmed.
fn instructions(ptx: &str, keep: &[&str]) -> Vec<String> {
    ptx.lines()
        .map(str::trim)
        .filter(|l| keep.iter().any(|k| l.starts_with(k)))
        .map(String::from)
        .collect()
}

const OPS: &str = r#"
kernel ops(x: global [T], out: global mut [T]) block(32) {
    let i = thread_idx.x;
    let a = x[i];
    let b = x[i + 32];
    let c = x[i + 64];
    out[i] = a + b;
    out[i + 32] = a - b;
    out[i + 64] = a * b;
    out[i + 96] = fma(a, b, c);
    out[i + 128] = min(a, b);
    out[i + 160] = max(a, b);
    out[i + 192] = -a;
    out[i + 224] = abs(a);
}
"#;

#[test]
fn packed_operations_are_one_instruction_each_on_every_target() {
    let ptxas = ptxas::require_ptxas();
    let nvdisasm = ptxas::nvdisasm_path();
    for ty in ["f16x2", "bf16x2"] {
        let src = OPS
            .replace(": global [T]", &format!(": global [{ty}]"))
            .replace("[T]", &format!("[{ty}]"));
        for target in Target::ALL {
            let ptx = ptx_for(&src, target);
            let ops = instructions(
                &ptx,
                &[
                    "add.",
                    "sub.",
                    "mul.",
                    "fma.",
                    "min.",
                    "max.",
                    "neg.",
                    "abs.",
                    "mov.b32 %r",
                ],
            );
            let ops: Vec<String> = ops
                .into_iter()
                .filter(|l| l.contains(ty) || l.contains("0x"))
                .collect();
            let want: Vec<String> = if ty == "bf16x2" && target.sm() < 90 {
                // a + b = a * 1 + b, a - b = b * -1 + a, a * b = a * b + -0
                // (`a` is %r4, `b` %r7).
                vec![
                    "mov.b32 %r12, 0x3F803F80;",
                    "fma.rn.bf16x2 %r11, %r4, %r12, %r7;",
                    "mov.b32 %r15, 0xBF80BF80;",
                    "fma.rn.bf16x2 %r14, %r7, %r15, %r4;",
                    "mov.b32 %r18, 0x80008000;",
                    "fma.rn.bf16x2 %r17, %r4, %r7, %r18;",
                ]
                .into_iter()
                .map(String::from)
                .collect()
            } else {
                ["add", "sub", "mul"]
                    .iter()
                    .enumerate()
                    .map(|(k, op)| format!("{op}.rn.{ty} %r{}, %r4, %r7;", 11 + 2 * k))
                    .collect()
            };
            assert_eq!(&ops[..want.len()], &want[..], "{ty} on {target}:\n{ptx}");
            let tail: Vec<&str> = ops[want.len()..]
                .iter()
                .map(|l| l.split(' ').next().unwrap_or(""))
                .collect();
            let fma = format!("fma.rn.{ty}");
            let (min, max, neg, abs) = (
                format!("min.{ty}"),
                format!("max.{ty}"),
                format!("neg.{ty}"),
                format!("abs.{ty}"),
            );
            assert_eq!(
                tail,
                [&fma, &min, &max, &neg, &abs].map(String::as_str),
                "{ty} on {target}"
            );
            // bf16x2 add/sub/mul need PTX 7.8 (sm_90's floor); nothing
            // raises sm_80's 7.0.
            if target == Target::Sm80 {
                assert!(ptx.contains(".version 7.0"), "{ty} on sm_80:\n{ptx}");
            }
            let Some(ptxas) = &ptxas else { continue };
            let asm = ptxas::assemble_with(ptxas, &ptx, target.name(), &[])
                .unwrap_or_else(|e| panic!("{ty} on {target}: {e}"));
            let Some(nvdisasm) = &nvdisasm else { continue };
            let dir = tempfile::tempdir().expect("tempdir");
            let cubin = dir.path().join("k.cubin");
            std::fs::write(&cubin, &asm.cubin).expect("write");
            let sass = std::process::Command::new(nvdisasm)
                .arg(&cubin)
                .output()
                .expect("nvdisasm");
            let sass = String::from_utf8_lossy(&sass.stdout);
            let packed = sass
                .lines()
                .filter(|l| {
                    ["HADD2", "HMUL2", "HFMA2", "HMNMX2"]
                        .iter()
                        .any(|m| l.contains(m))
                })
                .count();
            // Seven arithmetic instructions (negation and abs are sign
            // bit operations: LOP3 or an HADD2 with a modifier).
            assert!(
                (6..=9).contains(&packed),
                "{ty} on {target}: {packed} packed SASS instructions\n{sass}"
            );
        }
    }
}

const CONVERSIONS: &str = r#"
kernel cvt(x: global [f32], h: global [f16], q: global mut [e4m3], r: global mut [e5m2], y: global mut [f16x2], z: global mut [f32], t: global mut [tf32]) block(32) {
    let i = thread_idx.x;
    q[i] = x[i] as e4m3;
    store2(r[2 * i], h[i] as e5m2, x[i] as e5m2);
    z[i] = q[i + 1] as f32;
    y[i] = f16x2(x[i], x[i + 1]);
    t[i] = x[i] as tf32;
}
"#;

#[test]
fn conversions_are_the_hardware_forms_on_every_target_that_has_them() {
    let ptxas = ptxas::require_ptxas();
    for target in Target::ALL {
        let c = kdsl::compile_str("t.kdsl", CONVERSIONS, &for_target(target));
        if target.sm() < 89 {
            let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
            assert_eq!(codes, ["E0200"; 4], "{target}");
            continue;
        }
        let ptx = ptx_for(CONVERSIONS, target);
        let cvts = instructions(&ptx, &["cvt.rn.", "cvt.rna.", "st.global.b16", "mov.b32 {"]);
        assert_eq!(
            cvts,
            [
                // `x[i]` (%f2) to the upper byte, `h[i]` widened (%f3) to
                // the lower.
                "cvt.rn.satfinite.e4m3x2.f32 %h1, 0f00000000, %f1;",
                "cvt.rn.satfinite.e5m2x2.f32 %h3, %f2, %f3;",
                "st.global.b16 [%rd19], %h3;",
                "cvt.rn.f16x2.e4m3x2 %r7, %h4;",
                "mov.b32 {%h5, _}, %r7;",
                "cvt.rn.f16x2.f32 %r9, %f6, %f5;",
                "cvt.rna.tf32.f32 %r10, %f7;",
            ],
            "{target}:\n{ptx}"
        );
        let version = if target == Target::Sm89 {
            ".version 8.1"
        } else {
            &format!(".version {}", target.min_ptx_version())
        };
        assert!(ptx.contains(version), "{target}: want {version}\n{ptx}");
        if let Some(ptxas) = &ptxas {
            if let Err(e) = ptxas::assemble(ptxas, &ptx, target.name()) {
                panic!("{target}: {e}");
            }
        }
    }
}
