//! Kernels with constants in the simulator (language.md §2.6): two
//! instantiations of `samples/sgemm_tiled.kdsl` (TILE = 8 and 32) and one
//! tensor-core kernel with its element type a constant (bf16 and e4m3,
//! the fp8 tile twice as deep) against Rust references, under the in-order
//! and random schedules; and `kdslc sim` choosing an instantiation by its
//! name, by the kernel's name and `--const`, with the usage errors.

use crate::common::sim::*;
use crate::common::{kdslc, project, repo_root, text};
use crate::sim::reference::check_arrays;
use kdsl::launch::{Swizzle, TensorElem};
use kdsl::sim::Schedule;
use kdsl::types::Scalar;

fn with_consts(consts: &[&str]) -> kdsl::Options {
    kdsl::Options {
        consts: consts
            .iter()
            .map(|c| c.parse().expect("a --const"))
            .collect(),
        ..kdsl::Options::default()
    }
}

#[test]
fn sgemm_instantiations_match_the_reference() {
    let path = repo_root().join("samples/sgemm_tiled.kdsl");
    let k = kdsl_file_with(&path, &with_consts(&["TILE=8", "TILE=32"]));
    // Sizes that are multiples of neither tile: partial tiles at every edge.
    let (m, n, kk) = (45u32, 70u32, 37u32);
    let a = rand_f32((m * kk) as usize, 11);
    let b = rand_f32((kk * n) as usize, 12);
    for (tile, schedule) in [
        (8u32, Schedule::InOrder),
        (32, Schedule::InOrder),
        (8, Schedule::Random(3)),
    ] {
        let l = launch(
            &format!("sgemm_tiled__TILE_{tile}"),
            [n.div_ceil(tile), m.div_ceil(tile), 1],
            [tile, tile, 1],
            1,
            vec![
                f32s("a", &a),
                f32s("b", &b),
                f32s("c", &vec![0.0; (m * n) as usize]),
                u32v(m),
                u32v(n),
                u32v(kk),
            ],
        );
        let o = run_with(&k, &l, schedule, 1_000_000_000);
        assert!(o.reports.is_empty(), "TILE={tile}:\n{}", rendered(&k, &o));
        if let Err(e) = check_arrays(&l, &o.arrays) {
            panic!("TILE={tile} {schedule:?}: {e}");
        }
    }
}

/// C (64 × N, f32) = A (64 × K) · Bᵀ (B: N × K) on the tensor cores, K one
/// 128-byte swizzle row of the element type: 64 for bf16, 128 for e4m3.
const MMA: &str = "
kernel mma<const ELEM: type = bf16, const N: u32 = 64,
           const BK: u32 = 128 / size_of(ELEM), const KSTEP: u32 = 32 / size_of(ELEM)>(
    a: tensor [ELEM; 64, BK], b: tensor [ELEM; N, BK], c: global mut [f32]) block(128) {
    shared sa: [ELEM; 64, BK] swizzle(128);
    shared sb: [ELEM; N, BK] swizzle(128);
    barrier full: cta(arrivals = 1);
    accum acc: [f32; 64, N];
    if thread_idx.x == 0 {
        full.arrive_expect_tx(bytes_of(sa) + bytes_of(sb));
        tma_load(sa, a[0, 0], full);
        tma_load(sb, b[0, 0], full);
    }
    full.wait();
    for kk in 0..BK / KSTEP {
        wgmma(acc, sa[0, kk * KSTEP], sb[0, kk * KSTEP], accumulate = kk > 0);
    }
    wgmma_commit();
    wgmma_wait(0);
    for i in 0..N / 2 {
        c[acc_row(acc, i) * N + acc_col(acc, i)] = acc[i];
    }
}
";

/// `n` small integers in -3..=3 (exact in bf16 and e4m3, and so are their
/// products and sums), reproducible from `seed`.
fn small_ints(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 7) as f64 - 3.0
        })
        .collect()
}

fn encode(values: &[f64], elem: TensorElem) -> Vec<u8> {
    match elem {
        TensorElem::BF16 => values
            .iter()
            .flat_map(|&v| (((v as f32).to_bits() >> 16) as u16).to_le_bytes())
            .collect(),
        TensorElem::E4M3 => values
            .iter()
            .map(|&v| kdsl::fp8::Fp8::E4M3.encode(v, false))
            .collect(),
        other => panic!("no encoding for {other:?}"),
    }
}

#[test]
fn a_type_constant_runs_each_element_type_on_the_tensor_cores() {
    let opts = kdsl::Options {
        target: kdsl::target::Target::Sm90a,
        ..with_consts(&["ELEM=bf16", "ELEM=e4m3", "N=64", "N=128"])
    };
    let c = kdsl::compile_str("mma.kdsl", MMA, &opts);
    let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    assert!(c.diagnostics.is_empty(), "{shown}");
    let module = c.module.clone().expect("a module");
    let Ok(k) = load_compilation(c) else {
        panic!("the PTX did not load");
    };
    for (elem, name, kdim, n) in [
        (TensorElem::BF16, "mma", 64usize, 64usize),
        (TensorElem::E4M3, "mma__ELEM_e4m3", 128, 64),
        (TensorElem::E4M3, "mma__ELEM_e4m3__N_128", 128, 128),
    ] {
        let kernel = module
            .kernels
            .iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| panic!("no instantiation {name}"));
        let dynamic = kdsl::ir::layout::SharedLayout::of(kernel).dynamic_bytes();
        let a = small_ints(64 * kdim, 1);
        let b = small_ints(n * kdim, 2);
        let mut l = launch(
            name,
            1,
            128,
            1,
            vec![
                tensor(
                    "a",
                    elem,
                    encode(&a, elem),
                    &[64, kdim as u64],
                    &[64, kdim as u32],
                    Swizzle::B128,
                ),
                tensor(
                    "b",
                    elem,
                    encode(&b, elem),
                    &[n as u64, kdim as u64],
                    &[n as u32, kdim as u32],
                    Swizzle::B128,
                ),
                array("c", Scalar::F32, vec![0; 4 * 64 * n]),
            ],
        );
        l.dynamic_shared = u32::try_from(dynamic).expect("fits");
        let want: Vec<f32> = (0..64 * n)
            .map(|i| {
                let (r, col) = (i / n, i % n);
                (0..kdim)
                    .map(|j| a[r * kdim + j] * b[col * kdim + j])
                    .sum::<f64>() as f32
            })
            .collect();
        for schedule in [Schedule::InOrder, Schedule::Random(5)] {
            let o = run_with(&k, &l, schedule, 1_000_000_000);
            assert!(o.reports.is_empty(), "{name}:\n{}", rendered(&k, &o));
            let got = as_f32(&o.arrays[2]);
            assert_eq!(got, want, "{name} {schedule:?}");
        }
    }
}

const TWO: &str =
    "kernel fill<const V: u32 = 7, const NEG: bool = false>(out: global mut [u32]) block(32) {
    if NEG {
        out[thread_idx.x] = 0 - V;
    } else {
        out[thread_idx.x] = V;
    }
}
";

#[test]
fn kdslc_sim_runs_the_instantiation_it_is_asked_for() {
    let dir = project(&[("k.kdsl", TWO)]);
    let sim = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "k.kdsl",
            "--grid",
            "1",
            "--arg",
            "out=zeros:32",
            "--dump",
            "out",
        ];
        args.extend_from_slice(extra);
        kdslc(dir.path(), &args)
    };
    let first = |o: &std::process::Output| {
        let out = text(&o.stdout);
        let values = out.split_once("= [").map_or("", |(_, v)| v);
        values
            .split([',', ']'])
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    // The defaults, then by name, then by the kernel's name and --const.
    let o = sim(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(first(&o), "7");
    let o = sim(&["--kernel", "fill__V_9"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(first(&o), "9");
    let o = sim(&["--kernel", "fill__V_2__NEG_true"]);
    assert_eq!(first(&o), "4294967294");
    let o = sim(&["--kernel", "fill", "--const", "V=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(first(&o), "3");
    let o = sim(&["--const", "NEG=true"]);
    assert_eq!(first(&o), "4294967289");
    // Two instantiations: the kernel's name is not enough.
    let o = sim(&["--kernel", "fill", "--const", "V=3", "--const", "V=4"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("kernel `fill` has 2 instantiations here (`fill__V_3`, `fill__V_4`)"),
        "{err}"
    );
    let o = sim(&["--const", "V=3", "--const", "V=4"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = sim(&["--const", "V=3", "--const", "V=4", "--kernel", "fill__V_4"]);
    assert_eq!(first(&o), "4");
    // A name that is no instantiation's, and a bad --const: usage errors.
    let o = sim(&["--kernel", "fill__W_1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("fill__W_1"), "{}", text(&o.stderr));
    let ptx = text(&kdslc(dir.path(), &["k.kdsl", "-o", "k.ptx"]).stderr);
    assert!(ptx.is_empty(), "{ptx}");
    let o = kdslc(
        dir.path(),
        &[
            "sim",
            "k.ptx",
            "--grid",
            "1",
            "--arg",
            "0=u32:zeros:32",
            "--const",
            "V=1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("the module has no `.const` variable `V` (it has none); on a .ptx input `--const` sets `__constant__` memory (kernel constants are a .kdsl kernel's)"),
        "{}",
        text(&o.stderr)
    );
    // `kdslc run` does not write `__constant__` memory: refused before it
    // looks for a GPU.
    let o = kdslc(
        dir.path(),
        &[
            "run",
            "k.ptx",
            "--grid",
            "1",
            "--arg",
            "0=u32:zeros:32",
            "--const",
            "V=1",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("set by `kdslc sim` only"),
        "{}",
        text(&o.stderr)
    );
    // The .ptx form on a .kdsl input is a kernel constant no kernel has.
    let o = sim(&["--const", "coef=f32:[1, 2]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("`--const coef=f32:[1, 2]`: no kernel has a constant `coef`"),
        "{}",
        text(&o.stderr)
    );
    let o = sim(&["--const", "V=-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("invalid value for `V` (u32) of kernel `fill`"),
        "{}",
        text(&o.stderr)
    );
}
