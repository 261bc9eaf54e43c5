//! Kernels with constants in the PTX (language.md §2.6): every
//! instantiation `samples/Makefile` builds (`CONSTS_<sample>`) against its
//! golden PTX (`tests/golden/<sample>.instances.<target>.ptx`, the target
//! of the sample's `// target:` line, else sm_90) and under ptxas (that
//! target, and sm_80 where an sm_90 sample allows it); the instantiation
//! with the defaults written the same, byte for byte, with others beside
//! it as alone; tensor maps, `wgmma` shapes and register budgets taken
//! from constants, every instantiation assembled for sm_90a; determinism.
//!
//! Regenerate the golden files with `KDSL_BLESS=1 cargo test --test it
//! ptx::instances::`, and review the diff.

use crate::common::{self, for_target, repo_root};
use kdsl::target::Target;

/// The `--const` flags `samples/Makefile` gives each sample
/// (`CONSTS_<stem> := --const A=1 --const A=2`).
fn makefile_consts() -> Vec<(String, Vec<String>)> {
    let makefile =
        std::fs::read_to_string(repo_root().join("samples/Makefile")).expect("samples/Makefile");
    let mut out = Vec::new();
    for line in makefile.lines() {
        let Some(rest) = line.strip_prefix("CONSTS_") else {
            continue;
        };
        let (stem, flags) = rest.split_once(":=").expect("CONSTS_x := flags");
        let mut words = flags.split_whitespace();
        let mut consts = Vec::new();
        while let Some(w) = words.next() {
            assert_eq!(w, "--const", "CONSTS_{stem}: only --const flags");
            consts.push(words.next().expect("a value").to_string());
        }
        out.push((stem.trim().to_string(), consts));
    }
    assert!(
        !out.is_empty(),
        "samples/Makefile lists no instantiations (CONSTS_...)"
    );
    out
}

fn options(target: Target, consts: &[String]) -> kdsl::Options {
    kdsl::Options {
        consts: consts
            .iter()
            .map(|c| c.parse().expect("a --const"))
            .collect(),
        ..for_target(target)
    }
}

fn compile_str(src: &str, opts: &kdsl::Options) -> kdsl::Compilation {
    let c = kdsl::compile_str("t.kdsl", src, opts);
    let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    assert!(c.diagnostics.is_empty(), "diagnostics:\n{shown}");
    c
}

/// The text of `.entry NAME` to its closing brace.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let head = format!(".visible .entry {name}(");
    let start = ptx
        .find(&head)
        .unwrap_or_else(|| panic!("no .entry {name}"));
    let len = ptx[start..].find("\n}\n").expect("the entry's end") + 3;
    &ptx[start..start + len]
}

fn entries(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.strip_prefix(".visible .entry "))
        .map(|l| l.trim_end_matches('('))
        .collect()
}

#[test]
fn sample_instances_match_golden_ptx() {
    let bless = std::env::var_os("KDSL_BLESS").is_some();
    let mut stale = Vec::new();
    for (stem, consts) in makefile_consts() {
        let path = repo_root().join("samples").join(format!("{stem}.kdsl"));
        let target = common::source_target(&path);
        let c = kdsl::compile(&path, &options(target, &consts)).expect("readable");
        let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
        assert!(c.diagnostics.is_empty(), "{stem}: {shown}");
        let ptx = c.ptx.expect("PTX");
        assert_eq!(
            entries(&ptx).len(),
            consts.len(),
            "{stem}: one .entry per value"
        );
        let golden = repo_root()
            .join("tests/golden")
            .join(format!("{stem}.instances.{target}.ptx"));
        if bless {
            std::fs::write(&golden, &ptx).expect("write golden");
        } else if std::fs::read_to_string(&golden).ok().as_deref() != Some(ptx.as_str()) {
            stale.push(golden.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "golden PTX out of date (KDSL_BLESS=1 and review): {stale:?}"
    );
}

/// The defaults' instantiation is the kernel's PTX without constants: the
/// same `.entry`, named like the kernel, whatever else the module holds.
#[test]
fn the_default_instantiation_is_written_as_alone() {
    for (stem, consts) in makefile_consts() {
        let path = repo_root().join("samples").join(format!("{stem}.kdsl"));
        let target = common::source_target(&path);
        let alone = kdsl::compile(&path, &for_target(target))
            .expect("readable")
            .ptx
            .expect("PTX");
        let with = kdsl::compile(&path, &options(target, &consts))
            .expect("readable")
            .ptx
            .expect("PTX");
        let golden =
            std::fs::read_to_string(repo_root().join(format!("tests/golden/{stem}.{target}.ptx")))
                .expect("golden");
        assert_eq!(alone, golden, "{stem}: the defaults' PTX changed");
        for name in entries(&alone) {
            assert_eq!(entry(&alone, name), entry(&with, name), "{stem}: {name}");
        }
    }
}

#[test]
fn ptxas_assembles_every_instantiation() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    for (stem, consts) in makefile_consts() {
        let path = repo_root().join("samples").join(format!("{stem}.kdsl"));
        let own = common::source_target(&path);
        let targets: &[Target] = if own == Target::Sm90 {
            &[Target::Sm90, Target::Sm80]
        } else {
            std::slice::from_ref(&own)
        };
        for &target in targets {
            let arch = target.name();
            let c = kdsl::compile(&path, &options(target, &consts)).expect("readable");
            if c.diagnostics.iter().any(|d| d.code == "E0200") {
                continue;
            }
            let ptx = c
                .ptx
                .unwrap_or_else(|| panic!("{stem} ({arch}): no PTX: {:?}", c.diagnostics));
            if let Err(e) = common::ptxas::assemble(&ptxas, &ptx, arch) {
                panic!("{stem} ({arch}):\n{e}");
            }
        }
    }
}

/// A warp-specialised tensor-core kernel whose element type, tile width,
/// stage count and register budgets are constants: the tensor maps, the
/// swizzled stages, the `wgmma` shape and form and the `setmaxnreg`s of
/// each instantiation follow, and ptxas takes every one (bf16, f16 and
/// e4m3 operands; N = 64, 128 and 256).
const HOPPER: &str = "
kernel tiles<const ELEM: type = bf16, const N: u32 = 128, const STAGES: u32 = 2,
             const BK: u32 = 128 / size_of(ELEM), const KSTEP: u32 = 32 / size_of(ELEM),
             const REGS: u32 = 232, const FEW: u32 = 40, const CAUSAL: bool = false>(
    a: tensor [ELEM; 64, BK], b: tensor [ELEM; N, BK], c: global mut [f32], kt: u32) block(256) {
    shared sa: [ELEM; STAGES, 64, BK] swizzle(128);
    shared sb: [ELEM; STAGES, N, BK] swizzle(128);
    barrier full[STAGES]: cta(arrivals = 1) guards(sa, sb);
    barrier empty[STAGES]: cta(arrivals = 128);
    accum acc: [f32; 64, N];
    let wg = warp_id / 4;
    if wg == 0 {
        set_max_regs(FEW);
        if warp_id == 0 && elect_one() {
            for k in 0..kt {
                let s = k % STAGES;
                if k >= STAGES {
                    empty[s].wait();
                }
                full[s].arrive_expect_tx(bytes_of(sa[s]) + bytes_of(sb[s]));
                tma_load(sa[s], a[0, k * BK], full[s]);
                tma_load(sb[s], b[0, k * BK], full[s]);
            }
        }
    } else {
        set_max_regs(REGS);
        for k in 0..kt {
            let s = k % STAGES;
            full[s].wait();
            for kk in 0..BK / KSTEP {
                wgmma(acc, sa[s, 0, kk * KSTEP], sb[s, 0, kk * KSTEP], accumulate = k > 0 || kk > 0);
            }
            wgmma_commit();
            wgmma_wait(0);
            empty[s].arrive();
        }
        if kt > 0 {
            for i in 0..N / 2 {
                let r = acc_row(acc, i);
                let col = acc_col(acc, i);
                if CAUSAL {
                    if col <= r {
                        c[r * N + col] = acc[i];
                    }
                } else {
                    c[r * N + col] = acc[i];
                }
            }
        }
    }
}
";

const HOPPER_CONSTS: &[&str] = &[
    "ELEM=bf16",
    "ELEM=f16",
    "ELEM=e4m3",
    "N=64",
    "N=256",
    "CAUSAL=false",
    "CAUSAL=true",
];

#[test]
fn tensor_core_instantiations_follow_their_constants() {
    let consts: Vec<String> = HOPPER_CONSTS.iter().map(|s| s.to_string()).collect();
    let c = compile_str(HOPPER, &options(Target::Sm90a, &consts));
    let ptx = c.ptx.expect("PTX");
    let names = entries(&ptx);
    assert_eq!(names.len(), 3 * 2 * 2, "{names:?}");
    let fp8 = entry(&ptx, "tiles__ELEM_e4m3__N_256__CAUSAL_true");
    assert!(
        fp8.contains("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"),
        "{fp8}"
    );
    assert!(fp8.contains("setmaxnreg.dec.sync.aligned.u32 40"));
    assert!(fp8.contains("setmaxnreg.inc.sync.aligned.u32 232"));
    let half = entry(&ptx, "tiles__ELEM_f16__N_64");
    assert!(
        half.contains("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
        "{half}"
    );
    // The causal test is compiled only where CAUSAL is true.
    let count = |e: &str, what: &str| e.matches(what).count();
    let plain = entry(&ptx, "tiles__N_64");
    let causal = entry(&ptx, "tiles__N_64__CAUSAL_true");
    assert!(
        count(causal, "setp.") > count(plain, "setp."),
        "a false CAUSAL costs nothing"
    );
    let m = kdsl::manifest::of_module(c.module.as_ref().unwrap(), &ptx, Target::Sm90a).unwrap();
    let fp8 = m
        .kernels
        .iter()
        .find(|k| k.name == "tiles__ELEM_e4m3__N_256__CAUSAL_true")
        .unwrap();
    let a = fp8.params[0].tensor_map.as_ref().expect("a tensor map");
    assert_eq!(
        (a.data_type, a.box_dim.as_slice()),
        ("CU_TENSOR_MAP_DATA_TYPE_UINT8", &[128u32, 64][..])
    );
    assert!(fp8.shared.dynamic_bytes >= 2 * (64 + 256) * 128);
    assert!(fp8.shared.dynamic_bytes < 2 * (64 + 256) * 2 * 128);
    if let Some(ptxas) = common::ptxas::require_ptxas() {
        if let Err(e) = common::ptxas::assemble(&ptxas, &ptx, "sm_90a") {
            panic!("ptxas:\n{e}");
        }
    }
}

#[test]
fn instantiations_are_written_deterministically() {
    let consts: Vec<String> = HOPPER_CONSTS.iter().map(|s| s.to_string()).collect();
    let opts = options(Target::Sm90a, &consts);
    let a = compile_str(HOPPER, &opts).ptx;
    let b = compile_str(HOPPER, &opts).ptx;
    assert_eq!(a, b);
    // The order of the values given is the order of the entries.
    let mut reversed = consts.clone();
    reversed.reverse();
    let c = compile_str(HOPPER, &options(Target::Sm90a, &reversed))
        .ptx
        .expect("PTX");
    let a = a.expect("PTX");
    let (mut x, mut y) = (entries(&a), entries(&c));
    assert_ne!(x, y);
    x.sort_unstable();
    y.sort_unstable();
    assert_eq!(x, y);
}
