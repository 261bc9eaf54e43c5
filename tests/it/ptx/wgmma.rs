//! `wgmma` on sm_90a against ptxas 13.5: every form (accumulator and
//! operand types, PTX ISA 9.7.15.5.1) at every width N it has, each
//! assembled without an advisory and with one HGMMA per `wgmma` in the
//! SASS; and the PTX of each form against what ptxas-verified cases write
//! (`shared/design/hopper/ptx/cases/q01`-`q12`).

use crate::common::ptxas;
use kdsl::ir::Accum;
use kdsl::target::Target;

/// The forms: accumulator, A and B types.
const FORMS: [(&str, &str, &str); 14] = [
    ("f32", "f16", "f16"),
    ("f16", "f16", "f16"),
    ("f32", "bf16", "bf16"),
    ("f32", "tf32", "tf32"),
    ("f32", "e4m3", "e4m3"),
    ("f32", "e5m2", "e4m3"),
    ("f16", "e4m3", "e5m2"),
    ("f16", "e5m2", "e5m2"),
    ("i32", "i8", "i8"),
    ("i32", "u8", "u8"),
    ("i32", "u8", "i8"),
    ("i32", "i8", "u8"),
    ("f32", "e4m3", "e5m2"),
    ("f16", "e5m2", "e4m3"),
];

fn size(t: &str) -> u32 {
    match t {
        "tf32" => 4,
        "f16" | "bf16" => 2,
        _ => 1,
    }
}

/// A module with one kernel per width: `acc += A x B` on tiles of 64 and
/// N rows of 128B-swizzled arrays, waited for, stored.
fn module(d: &str, a: &str, b: &str) -> (String, usize) {
    let widths: Vec<u32> = if d == "i32" {
        Accum::INT_N.to_vec()
    } else {
        (1..=32).map(|i| 8 * i).collect()
    };
    let row = 128 / size(a);
    let rowb = 128 / size(b);
    let k = 32 / size(a);
    let mut s = String::new();
    for n in &widths {
        let out = if d == "i32" { "i32" } else { "f32" };
        let cast = if d == "f32" { "" } else { " as f32" };
        let cast = if d == "i32" { "" } else { cast };
        s.push_str(&format!(
            "kernel n{n}(c: global mut [{out}]) block(128) {{
    shared sa: [{a}; 64, {row}] swizzle(128);
    shared sb: [{b}; {n}, {rowb}] swizzle(128);
    accum acc: [{d}; 64, {n}];
    wgmma(acc, sa[0, 0], sb[0, 0], accumulate = false);
    wgmma(acc, sa[0, {k}], sb[0, {k}]);
    wgmma_commit();
    wgmma_wait(0);
    for i in 0..{half}u32 {{
        c[acc_row(acc, i) * {n} + acc_col(acc, i)] = acc[i]{cast};
    }}
}}
",
            half = n / 2
        ));
    }
    (s, widths.len())
}

#[test]
fn every_form_at_every_width_assembles() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let nvdisasm = ptxas::nvdisasm_path();
    let opts = kdsl::Options {
        target: Target::Sm90a,
        ..kdsl::Options::default()
    };
    let mut failures = Vec::new();
    for (d, a, b) in FORMS {
        let (source, kernels) = module(d, a, b);
        let c = kdsl::compile_str("forms.kdsl", &source, &opts);
        if !c.diagnostics.is_empty() {
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            failures.push(format!("{d} += {a} x {b}: {shown}"));
            continue;
        }
        let ptx = c.ptx.expect("PTX");
        let k = 32 / size(a);
        let mnemonic = format!("k{k}.{}.", if d == "i32" { "s32" } else { d });
        assert_eq!(
            ptx.matches("wgmma.mma_async").count(),
            2 * kernels,
            "{d} += {a} x {b}"
        );
        assert!(ptx.contains(&mnemonic), "{d} += {a} x {b}: no `{mnemonic}`");
        // Mixed signedness needs PTX ISA 8.4 (q08).
        if a != b && d == "i32" {
            assert!(ptx.contains(".version 8.4"), "{d} += {a} x {b}");
        }
        match ptxas::assemble_with(&ptxas, &ptx, "sm_90a", &["-v"]) {
            Ok(asm) => {
                let advisories: Vec<&str> = asm
                    .log
                    .lines()
                    .filter(|l| kdsl::ptx::advice::Advisory::parse(l).is_some())
                    .collect();
                if !advisories.is_empty() {
                    failures.push(format!("{d} += {a} x {b}: {advisories:?}"));
                }
                if let Some(nvdisasm) = &nvdisasm {
                    let dir = tempfile::tempdir().expect("tempdir");
                    let cubin = dir.path().join("k.cubin");
                    std::fs::write(&cubin, &asm.cubin).expect("write");
                    let sass = std::process::Command::new(nvdisasm)
                        .arg(&cubin)
                        .output()
                        .expect("nvdisasm");
                    let sass = String::from_utf8_lossy(&sass.stdout);
                    let mmas = sass
                        .lines()
                        .filter(|l| {
                            l.contains("HGMMA") || l.contains("QGMMA") || l.contains("IGMMA")
                        })
                        .count();
                    assert_eq!(mmas, 2 * kernels, "{d} += {a} x {b}: the SASS's MMAs");
                }
            }
            Err(e) => failures.push(format!("{d} += {a} x {b}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The instruction written for each kind of form, as the ptxas-verified
/// cases write it: four immediates for f16/bf16 (scale A, scale B,
/// transpose A, transpose B), two for tf32 and fp8, none for the integer
/// forms; `scale-d` an immediate for a constant `accumulate`, a predicate
/// otherwise.
#[test]
fn each_form_writes_the_verified_operands() {
    let opts = kdsl::Options {
        target: Target::Sm90a,
        ..kdsl::Options::default()
    };
    let cases = [
        ("f32", "bf16", ", 0, 1, 1, 0, 0;"),
        ("f32", "tf32", ", 0, 1, 1;"),
        ("f16", "e4m3", ", 0, 1, 1;"),
        ("i32", "u8", ", 0;"),
    ];
    for (d, a, tail) in cases {
        let (source, _) = module(d, a, a);
        let c = kdsl::compile_str("forms.kdsl", &source, &opts);
        let ptx = c.ptx.expect("PTX");
        let first = ptx
            .lines()
            .find(|l| l.contains("wgmma.mma_async"))
            .expect("a wgmma");
        assert!(first.ends_with(tail), "{d} += {a}: {first}");
    }
    // A run-time `accumulate` is a predicate.
    let source = "kernel k(c: global mut [f32], first: bool) block(128) {
    shared sa: [bf16; 64, 64] swizzle(128);
    accum acc: [f32; 64, 8];
    wgmma(acc, sa[0, 0], sa[0, 0], accumulate = !first);
    wgmma_commit();
    wgmma_wait(0);
    c[thread_idx.x] = acc[0];
}
";
    let ptx = kdsl::compile_str("p.kdsl", source, &opts).ptx.expect("PTX");
    let line = ptx
        .lines()
        .find(|l| l.contains("wgmma.mma_async"))
        .expect("a wgmma");
    assert!(line.contains(", %p"), "{line}");
}

/// A module of transposed (MN-major) operands, one kernel per width:
/// `[T; blocks, 32, span]` arrays in swizzle `s`, one `wgmma` with both
/// operands transposed, one with A alone.
fn transposed_module(d: &str, t: &str, s: u32) -> (String, usize) {
    let span = s / size(t);
    let mut out = String::new();
    let widths: Vec<u32> = (1..=32).map(|i| 8 * i).collect();
    for n in &widths {
        let cast = if d == "f32" { "" } else { " as f32" };
        out.push_str(&format!(
            "kernel n{n}(c: global mut [f32]) block(128) {{
    shared sa: [{t}; {ab}, 32, {span}] swizzle({s});
    shared sb: [{t}; {bb}, 32, {span}] swizzle({s});
    shared sk: [{t}; {n}, 64] swizzle(128);
    accum acc: [{d}; 64, {n}];
    wgmma(acc, transpose(sa[0, 0, 0]), transpose(sb[0, 0, 0]), accumulate = false);
    wgmma(acc, transpose(sa[0, 16, 0]), sk[0, 16]);
    wgmma_commit();
    wgmma_wait(0);
    for i in 0..{half}u32 {{
        c[acc_row(acc, i) * {n} + acc_col(acc, i)] = acc[i]{cast};
    }}
}}
",
            ab = 64u32.div_ceil(span),
            bb = n.div_ceil(span),
            half = n / 2
        ));
    }
    (out, widths.len())
}

/// Transposed operands: `f16`/`bf16` forms, each swizzle, every width,
/// assembled by ptxas without an advisory, one HGMMA per `wgmma`, with
/// `imm-trans-a`/`imm-trans-b` and the leading-dimension offset of the
/// MN-major layout (the bytes between spans of rows: 32 rows of K).
#[test]
fn transposed_operands_assemble() {
    let opts = kdsl::Options {
        target: Target::Sm90a,
        ..kdsl::Options::default()
    };
    let ptxas = ptxas::require_ptxas();
    let nvdisasm = ptxas::nvdisasm_path();
    let cases = [
        ("f32", "f16", 128),
        ("f16", "f16", 128),
        ("f32", "bf16", 128),
        ("f32", "bf16", 64),
        ("f16", "f16", 32),
    ];
    let mut failures = Vec::new();
    for (d, t, s) in cases {
        let (source, kernels) = transposed_module(d, t, s);
        let c = kdsl::compile_str("transposed.kdsl", &source, &opts);
        if !c.diagnostics.is_empty() {
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            failures.push(format!("{d} += {t}, swizzle({s}): {shown}"));
            continue;
        }
        let ptx = c.ptx.expect("PTX");
        assert_eq!(ptx.matches(", 1, 1, 1, 1;").count(), kernels, "{d} {t} {s}");
        assert_eq!(ptx.matches(", 1, 1, 1, 0;").count(), kernels, "{d} {t} {s}");
        // LBO: 32 rows of one span; SBO 8 rows; the swizzle's mode.
        let mode: u64 = match s {
            128 => 1,
            64 => 2,
            _ => 3,
        };
        let fields =
            (mode << 62) | (((u64::from(s) * 8) >> 4) << 32) | (((u64::from(s) * 32) >> 4) << 16);
        // The low word (the leading offset) is or-ed into the start
        // address, the high word (stride offset, mode) into the descriptor.
        let (lo, hi) = (fields & 0xffff_ffff, fields & !0xffff_ffff);
        assert!(
            ptx.contains(&format!(", {lo:#x};")) && ptx.contains(&format!("{hi:#018x}")),
            "{d} {t} {s}: no descriptor fields {lo:#x} and {hi:#018x}"
        );
        let Some(ptxas) = &ptxas else {
            continue;
        };
        match ptxas::assemble_with(ptxas, &ptx, "sm_90a", &["-v"]) {
            Ok(asm) => {
                let advisories: Vec<&str> = asm
                    .log
                    .lines()
                    .filter(|l| kdsl::ptx::advice::Advisory::parse(l).is_some())
                    .collect();
                if !advisories.is_empty() {
                    failures.push(format!("{d} += {t}, swizzle({s}): {advisories:?}"));
                }
                if let Some(nvdisasm) = &nvdisasm {
                    let dir = tempfile::tempdir().expect("tempdir");
                    let cubin = dir.path().join("k.cubin");
                    std::fs::write(&cubin, &asm.cubin).expect("write");
                    let sass = std::process::Command::new(nvdisasm)
                        .arg(&cubin)
                        .output()
                        .expect("nvdisasm");
                    let sass = String::from_utf8_lossy(&sass.stdout);
                    let mmas = sass.lines().filter(|l| l.contains("HGMMA")).count();
                    assert_eq!(
                        mmas,
                        2 * kernels,
                        "{d} += {t}, swizzle({s}): the SASS's MMAs"
                    );
                }
            }
            Err(e) => failures.push(format!("{d} += {t}, swizzle({s}): {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
