//! Vector loads and stores (`let (a, b, c, d) = load4(x[i]);`,
//! `store4(y[i], a, b, c, d);`, `load2`/`store2`): every width × element
//! type × state space the checker accepts assembles with ptxas for every
//! target (with remote shared memory from sm_90, without before) and is the
//! vector instruction it should be; every rejected one is its diagnostic; the simulator runs them
//! against a Rust reference with the passes on and off, and reports a
//! misaligned or out-of-bounds vector access.

use crate::common::sim::*;
use crate::common::{for_target, kernel_head, ptxas};
use kdsl::launch::ArgValue;
use kdsl::opt::Passes;
use kdsl::target::Target;
use kdsl::types::Scalar;
use kdsl::Options;

const TYPES: [Scalar; 13] = [
    Scalar::Bool,
    Scalar::U8,
    Scalar::I8,
    Scalar::U16,
    Scalar::I16,
    Scalar::F16,
    Scalar::BF16,
    Scalar::U32,
    Scalar::I32,
    Scalar::F32,
    Scalar::U64,
    Scalar::I64,
    Scalar::F64,
];

/// The widths a type takes: at most 16 bytes.
fn widths(t: Scalar) -> Vec<usize> {
    [2, 4]
        .into_iter()
        .filter(|n| *n as u32 * t.size() <= 16)
        .collect()
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("{prefix}{k}")).collect()
}

/// One kernel with every accepted vector access: for each type and width,
/// read-only global → shared → global mut → (sm_90) a peer's shared memory
/// and back.
fn program(cluster: bool) -> String {
    let mut params = Vec::new();
    for t in TYPES {
        params.push(format!("r_{t}: global [{t}]", t = t.name()));
        params.push(format!("w_{t}: global mut [{t}]", t = t.name()));
    }
    let mut text = kernel_head("every_vector", &params, cluster, &TYPES, 16);
    for ty in TYPES {
        let t = ty.name();
        for n in widths(ty) {
            let v = |p: &str| names(&format!("{p}{n}_{t}_"), n).join(", ");
            let (a, b, c, d) = (v("a"), v("b"), v("c"), v("d"));
            text.push_str(&format!(
                "    let ({a}) = load{n}(r_{t}[thread_idx.x * {n}]);\n    \
                 store{n}(s_{t}[{n}], {a});\n    \
                 let ({b}) = load{n}(s_{t}[thread_idx.x % 4 * {n}]);\n    \
                 store{n}(w_{t}[thread_idx.x * {n}], {b});\n    \
                 let ({c}) = load{n}(w_{t}[(thread_idx.x + 32) * {n}]);\n"
            ));
            if cluster {
                text.push_str(&format!(
                    "    store{n}(remote(s_{t}, 1)[8], {c});\n    \
                     let ({d}) = load{n}(remote(s_{t}, 1)[thread_idx.x % 2 * {n}]);\n    \
                     store{n}(w_{t}[64 + {n}], {d});\n"
                ));
            } else {
                text.push_str(&format!("    store{n}(w_{t}[64 + {n}], {c});\n"));
            }
        }
    }
    text.push_str("}\n");
    text
}

fn compile(text: &str, target: Target) -> kdsl::Compilation {
    kdsl::compile_str("every_vector.kdsl", text, &for_target(target))
}

#[test]
fn every_accepted_combination_assembles() {
    let ptxas = ptxas::require_ptxas();
    for target in Target::ALL {
        let (cluster, arch) = (target.has_sm90_features(), target.name());
        let text = program(cluster);
        let c = compile(&text, target);
        assert!(c.diagnostics.is_empty(), "{arch}: {:#?}", c.diagnostics);
        let ptx = c.ptx.expect("PTX");
        for t in TYPES {
            let m = match t {
                Scalar::Bool => "u8",
                Scalar::F16 | Scalar::BF16 => "b16",
                Scalar::I8 => "s8",
                Scalar::I16 => "s16",
                Scalar::I32 => "s32",
                Scalar::I64 => "s64",
                other => other.name(),
            };
            for n in widths(t) {
                for ins in [
                    format!("ld.global.nc.v{n}.{m} "),
                    format!("st.shared.v{n}.{m} "),
                    format!("ld.shared.v{n}.{m} "),
                    format!("st.global.v{n}.{m} "),
                    format!("ld.global.v{n}.{m} "),
                ] {
                    assert!(ptx.contains(&ins), "{arch}: no `{ins}`");
                }
                if cluster {
                    for ins in [
                        format!("st.shared::cluster.v{n}.{m} "),
                        format!("ld.shared::cluster.v{n}.{m} "),
                    ] {
                        assert!(ptx.contains(&ins), "{arch}: no `{ins}`");
                    }
                }
            }
        }
        if let Some(p) = &ptxas {
            ptxas::assemble(p, &ptx, arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        }
    }
}

/// The codes of a kernel body over `x: global mut [T]`, `y: global [T]`.
fn codes(t: &str, body: &str) -> Vec<&'static str> {
    let text = format!(
        "kernel k(x: global mut [{t}], y: global [{t}], n: u32) block(32) {{\n    \
         shared s: [{t}; 8, 6];\n{body}\n}}\n"
    );
    let c = compile(&text, Target::Sm90);
    c.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn every_rejected_access_is_its_diagnostic() {
    for t in TYPES {
        for n in [2usize, 4].into_iter().filter(|n| !widths(t).contains(n)) {
            let v = names("v", n).join(", ");
            let body = format!("    let ({v}) = load{n}(x[0]);\n    store{n}(x[{n}], {v});");
            assert_eq!(
                codes(t.name(), &body),
                ["E0147", "E0147"],
                "{} ×{n}",
                t.name()
            );
        }
    }
    let cases: &[(&str, &[&str])] = &[
        // Constant indices, global and shared (row-major, rows of 6:
        // [1, 1] is 7, [1, 2] is 8).
        (
            "let (a, b, c, d) = load4(x[6]); x[0] = a + b + c + d;",
            &["E0148"],
        ),
        ("let (a, b) = load2(x[3]); x[0] = a + b;", &["E0148"]),
        (
            "let (a, b, c, d) = load4(s[1, 1]); x[0] = a + b + c + d;",
            &["E0148"],
        ),
        (
            "let (a, b, c, d) = load4(s[1, 2]); x[0] = a + b + c + d;",
            &[],
        ),
        (
            "let (a, b, c, d) = load4(s[2, 0]); x[0] = a + b + c + d;",
            &[],
        ),
        ("let (a, b) = load2(s[1, 2]); x[0] = a + b;", &[]),
        // Run-time indices: provably misaligned, proved, unproven.
        ("store4(x[4 * thread_idx.x + 1], 1, 2, 3, 4);", &["E0148"]),
        (
            "store4(x[(thread_idx.x << 3) + 6], 1, 2, 3, 4);",
            &["E0148"],
        ),
        ("store4(x[thread_idx.x * 8 + 4], 1, 2, 3, 4);", &[]),
        ("store2(x[(thread_idx.x | 1) * 2], 1, 2);", &[]),
        ("store4(x[thread_idx.x], 1, 2, 3, 4);", &["W0325"]),
        ("store4(s[thread_idx.x % 8, 0], 1, 2, 3, 4);", &["W0325"]),
        ("store2(s[thread_idx.x % 8, 4], 1, 2);", &[]),
        ("let k = thread_idx.x * 4; store4(x[k], 1, 2, 3, 4);", &[]),
        (
            "let mut k = thread_idx.x * 4; k += 1; store4(x[k], 1, 2, 3, 4);",
            &["W0325"],
        ),
        ("for i in 0..n step 4 { store4(x[i], 1, 2, 3, 4); }", &[]),
        ("for i in 2..n step 4 { store2(x[i], 1, 2); }", &[]),
        (
            "for i in 2..n step 4 { store4(x[i], 1, 2, 3, 4); }",
            &["E0148"],
        ),
        (
            "for i in thread_idx.x..n step 4 { store4(x[i], 1, 2, 3, 4); }",
            &["W0325"],
        ),
        // Read-only memory, patterns, arity, named arguments.
        ("store4(y[0], 1, 2, 3, 4);", &["E0103"]),
        ("let (a, b) = load4(x[0]); x[0] = a + b;", &["E0146"]),
        ("let (a, b) = x[0];", &["E0146"]),
        ("let a = load2(x[0]);", &["E0146"]),
        ("x[0] = load2(x[0]);", &["E0146"]),
        ("store2(x[0], 1);", &["E0111"]),
        ("let (a, b) = load2(x[0], 1); x[0] = a + b;", &["E0111"]),
        ("store2(x[0], 1, 2, order = relaxed);", &["E0140"]),
        ("let (a, b) = load2(n); x[0] = a + b;", &["E0110"]),
        (
            "let (a, b) = load2(x[0]); a = 1; x[0] = b;",
            &["W0001", "E0102"],
        ),
        ("let (_a, b) = load2(x[0]); x[0] = b;", &[]),
        ("let (a, a) = load2(x[0]); x[0] = a;", &["E0101"]),
        ("let (_, _, c, _) = load4(x[0]); x[0] = c;", &[]),
        ("let (mut a, b) = load2(x[0]); a += 1; x[0] = a + b;", &[]),
        ("let (a, b) = load2(x[0]); x[0] = a;", &["W0001"]),
    ];
    for (body, want) in cases {
        assert_eq!(codes("u32", &format!("    {body}")), *want, "{body}");
    }
}

/// Copies `n` elements of every width, through shared memory, reading
/// `x` with `load4` and `load2` and writing `y` with `store4`/`store2`
/// (the last partial vector with scalar accesses), in a grid-stride loop
/// the `stream` pass unrolls.
const COPY: &str = "
kernel copy(x: global [u16], y: global mut [u16], z: global mut [u32], n: u32) block(64) {
    shared t: [u16; 256];
    let quads = n / 4;
    for q in block_idx.x * 64 + thread_idx.x..quads step grid_dim.x * 64 {
        let (a, b, c, d) = load4(x[q * 4]);
        store4(t[thread_idx.x * 4], d, c, b, a);
        let (e, f) = load2(t[thread_idx.x * 4 + 2]);
        let (g, h) = load2(t[thread_idx.x * 4]);
        store2(y[q * 4], e, f);
        store2(y[q * 4 + 2], g, h);
        store4(z[q * 4], a as u32, b as u32 * 2, c as u32 * 3, d as u32 * 4);
    }
    let rest = quads * 4 + thread_idx.x;
    if block_idx.x == 0 && rest < n {
        y[rest] = x[rest] ^ 0xFFFF;
    }
}";

fn copy_args(n: u32) -> Vec<ArgValue> {
    let x: Vec<u8> = (0..n)
        .flat_map(|i| ((i * 7919 + 13) as u16).to_le_bytes())
        .collect();
    vec![
        array("x", Scalar::U16, x),
        array("y", Scalar::U16, vec![0; 2 * n as usize]),
        u32s("z", &vec![0; n as usize]),
        u32v(n),
    ]
}

#[test]
fn vector_copies_match_the_reference_with_and_without_the_passes() {
    for n in [0u32, 3, 4, 1021, 1024, 4099] {
        let l = launch("copy", 3, 64, 1, copy_args(n));
        let off = kdsl_str_with("copy.kdsl", COPY, &with_passes(Passes::none()));
        let on = kdsl_str_with("copy.kdsl", COPY, &with_passes(Passes::all()));
        let a = run_clean(&off, &l);
        let b = run_clean(&on, &l);
        let x: Vec<u16> = (0..n).map(|i| (i * 7919 + 13) as u16).collect();
        let mut y = vec![0u16; n as usize];
        let mut z = vec![0u32; n as usize];
        for q in 0..(n / 4) as usize {
            let [a, b, c, d] = [x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]];
            // t = [d, c, b, a]; y[q*4..] = t[2..4] then t[0..2].
            y[4 * q..4 * q + 4].copy_from_slice(&[b, a, d, c]);
            z[4 * q..4 * q + 4].copy_from_slice(&[
                u32::from(a),
                u32::from(b) * 2,
                u32::from(c) * 3,
                u32::from(d) * 4,
            ]);
        }
        for i in (n / 4 * 4) as usize..n as usize {
            y[i] = x[i] ^ 0xFFFF;
        }
        let y_bytes: Vec<u8> = y.iter().flat_map(|v| v.to_le_bytes()).collect();
        for (o, what) in [(&a, "passes off"), (&b, "passes on")] {
            assert_eq!(o.arrays[1].data, y_bytes, "n = {n}, {what}: y");
            assert_eq!(as_u32(&o.arrays[2]), z, "n = {n}, {what}: z");
        }
    }
}

#[test]
fn narrow_and_signed_elements_load_and_store_exactly() {
    // i8 sign-extends, bool is a byte 0/1, f64 pairs, f16 bits.
    let text = "
kernel k(a: global [i8], b: global mut [i32], c: global [bool], d: global mut [u32], e: global [f64], f: global mut [f64]) block(1) {
    let (a0, a1, a2, a3) = load4(a[4]);
    store4(b[0], a0 as i32, a1 as i32, a2 as i32, a3 as i32);
    let (c0, c1) = load2(c[2]);
    store2(d[2], select(c0, 1u32, 5u32), select(c1, 7u32, 9u32));
    let (e0, e1) = load2(e[2]);
    store2(f[0], e1, e0 * 2.0);
}";
    let l = launch(
        "k",
        1,
        1,
        1,
        vec![
            array("a", Scalar::I8, vec![0, 0, 0, 0, 0x80, 0xFF, 1, 0x7F]),
            array("b", Scalar::I32, vec![0; 16]),
            array("c", Scalar::Bool, vec![0, 0, 1, 0]),
            u32s("d", &[0; 4]),
            array(
                "e",
                Scalar::F64,
                [0.0f64, 0.0, 1.5, -2.25]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            ),
            array("f", Scalar::F64, vec![0; 16]),
        ],
    );
    for p in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("k.kdsl", text, &with_passes(p));
        let o = run_clean(&k, &l);
        assert_eq!(as_i32(&o.arrays[1]), [-128, -1, 1, 127]);
        assert_eq!(as_u32(&o.arrays[3]), [0, 0, 1, 9]);
        let f: Vec<f64> = o.arrays[5]
            .data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        assert_eq!(f, [-2.25, 3.0]);
    }
}

/// A run-time index of the form 4k + 2 (the checker warns, W0325) and a
/// vector that reaches past the end of the array.
const FAULTS: &str = "
kernel k(x: global [f32], y: global mut [f32], i: u32) block(1) {
    let (a, b, c, d) = load4(x[i]);
    y[0] = a + b + c + d;
}";

#[test]
fn misaligned_and_out_of_bounds_vectors_are_reported() {
    let k = kdsl_str_with("faults.kdsl", FAULTS, &Options::default());
    let run_at = |i: u32, len: usize| {
        let l = launch(
            "k",
            1,
            1,
            1,
            vec![f32s("x", &vec![1.0; len]), f32s("y", &[0.0]), u32v(i)],
        );
        run(&k, &l)
    };
    let ok = run_at(4, 8);
    assert!(ok.reports.is_empty(), "{}", rendered(&k, &ok));
    assert_eq!(as_f32(&ok.arrays[1]), [4.0]);
    // 4k + 2: misaligned.
    let o = run_at(2, 8);
    assert_eq!(report_codes(&o), ["S0003"], "{}", rendered(&k, &o));
    let text = rendered(&k, &o);
    assert!(text.contains("load4(x[i])"), "{text}");
    // The last partial vector: elements 4..8 of a 6-element array.
    let o = run_at(4, 6);
    assert_eq!(report_codes(&o), ["S0002"], "{}", rendered(&k, &o));
    // The whole vector inside a 6-element array.
    let o = run_at(0, 6);
    assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
}

/// `store4`/`load2` on another CTA's shared memory (`st.shared::cluster.v4`,
/// `ld.shared::cluster.v2`): each CTA of a pair writes its peer's array.
const REMOTE: &str = "
kernel swap(x: global [i32], y: global mut [i32]) block(32) cluster(2) {
    shared s: [i32; 128];
    let g = (block_idx.x * 32 + thread_idx.x) * 4;
    let (a, b, c, d) = load4(x[g]);
    store4(remote(s, cluster_rank ^ 1)[thread_idx.x * 4], d, c, b, a);
    cluster_sync();
    let (e, f) = load2(s[thread_idx.x * 4]);
    let (h, i) = load2(remote(s, cluster_rank ^ 1)[thread_idx.x * 4 + 2]);
    store4(y[g], e, f, h, i);
}";

#[test]
fn remote_vectors_match_the_reference() {
    let n = 4 * 32 * 4;
    let x: Vec<i32> = (0..n).map(|i| i * 3 - 100).collect();
    let l = launch(
        "swap",
        4,
        32,
        2,
        vec![
            array(
                "x",
                Scalar::I32,
                x.iter().flat_map(|v| v.to_le_bytes()).collect(),
            ),
            array("y", Scalar::I32, vec![0; 4 * n as usize]),
        ],
    );
    // CTA b's s[t*4..] holds the peer's x quad reversed; y gets s[t*4..+2]
    // then the peer CTA's s[t*4+2..+4], which holds this CTA's quad
    // reversed.
    let mut y = vec![0i32; n as usize];
    for b in 0..4usize {
        let peer = b ^ 1;
        for t in 0..32usize {
            let own = |c: usize| x[(c * 32 + t) * 4..(c * 32 + t) * 4 + 4].to_vec();
            let (p, o) = (own(peer), own(b));
            let g = (b * 32 + t) * 4;
            y[g..g + 4].copy_from_slice(&[p[3], p[2], o[1], o[0]]);
        }
    }
    for p in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("swap.kdsl", REMOTE, &with_passes(p));
        let o = run_clean(&k, &l);
        assert_eq!(as_i32(&o.arrays[1]), y);
    }
}

/// Vector loads in a loop of constant trip count (the `unroll` pass copies
/// its body with fresh locals for each pattern's names) and through a
/// shared tile whose address `licm` hoists: the same bits with the passes
/// on and off, and the reference.
const UNROLLED: &str = "
kernel sums(x: global [u32], y: global mut [u32]) block(32) {
    shared t: [u32; 32, 8];
    let base = (block_idx.x * 32 + thread_idx.x) * 16;
    let mut acc = 0u32;
    for k in 0u32..4 {
        let (a, b, c, d) = load4(x[base + k * 4]);
        acc += a * (k + 1) + b - c + (d ^ k);
    }
    for k in 0u32..4 {
        let (e, mut f) = load2(x[base + k * 2 + 8]);
        f += 1;
        store2(t[thread_idx.x, k * 2], e, f);
    }
    let (p, q, r, s) = load4(t[thread_idx.x, 4]);
    store4(y[(block_idx.x * 32 + thread_idx.x) * 4], acc, p, q, r + s);
}";

#[test]
fn unrolled_vector_loops_match_the_reference() {
    let threads = 64usize;
    let x: Vec<u32> = (0..threads * 16)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761))
        .collect();
    let l = launch(
        "sums",
        2,
        32,
        1,
        vec![u32s("x", &x), u32s("y", &vec![0; threads * 4])],
    );
    let mut y = vec![0u32; threads * 4];
    for g in 0..threads {
        let base = g * 16;
        let mut acc = 0u32;
        for k in 0..4u32 {
            let v = &x[base + k as usize * 4..];
            acc = acc.wrapping_add(
                v[0].wrapping_mul(k + 1)
                    .wrapping_add(v[1])
                    .wrapping_sub(v[2])
                    .wrapping_add(v[3] ^ k),
            );
        }
        // t[.., 4..8] holds pairs k = 2, 3: (e, f + 1).
        let pair = |k: usize| (x[base + k * 2 + 8], x[base + k * 2 + 9].wrapping_add(1));
        let ((p, q), (r, s)) = (pair(2), pair(3));
        y[g * 4..g * 4 + 4].copy_from_slice(&[acc, p, q, r.wrapping_add(s)]);
    }
    for p in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("sums.kdsl", UNROLLED, &with_passes(p));
        let o = run_clean(&k, &l);
        assert_eq!(as_u32(&o.arrays[1]), y);
    }
    // The passes did unroll: no loop is left.
    let c = kdsl::compile_str("sums.kdsl", UNROLLED, &Options::default());
    let ptx = c.ptx.expect("PTX");
    assert_eq!(ptx.matches("ld.global.nc.v4.u32").count(), 4, "{ptx}");
    assert_eq!(ptx.matches("ld.global.nc.v2.u32").count(), 4, "{ptx}");
    assert!(!ptx.contains("bra"), "{ptx}");
}
