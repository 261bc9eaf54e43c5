//! Generated programs: expressions over every scalar type (`bool`, the eight
//! integers (`u8`, `i8`, `u16` and `i16` included), `f16`, `bf16`, `f32`, `f64`,
//! and the pairs `f16x2`, `bf16x2`) with every operator, cast,
//! shift, signed and unsigned division and remainder, `min`/`max`/`abs`,
//! `fma`, `select`, the contracted `a * b + c`, packing and `.lo`/`.hi`,
//! and round trips through `e4m3`, `e5m2` and `tf32`, from the generator of
//! `common::gen_expr`, whose reference evaluator is written independently
//! of the compiler. Each literal of an expression becomes, at random, a
//! kernel parameter, so that the PTX computes at run time what the writer
//! would otherwise fold, with a mix of register and immediate operands. The
//! simulated result must be the reference's, bit for bit (a NaN for a
//! NaN). A mismatch names the expression, its kernel, the reference, the
//! simulated and the folded value (the same expression as a `const`), so
//! that the culprit — folder, writer or simulator — is plain.

use crate::common::gen_expr::{self, describe, GenExpr, Ty, Val};
use crate::common::sim::*;
use kdsl::launch::ArgValue;
use kdsl::sim::{self, PtxSource, SimOptions};
use kdsl::types::Scalar;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

fn scalar(ty: Ty) -> Scalar {
    match ty {
        Ty::Bool => Scalar::Bool,
        Ty::I8 => Scalar::I8,
        Ty::U8 => Scalar::U8,
        Ty::I16 => Scalar::I16,
        Ty::U16 => Scalar::U16,
        Ty::I32 => Scalar::I32,
        Ty::U32 => Scalar::U32,
        Ty::I64 => Scalar::I64,
        Ty::U64 => Scalar::U64,
        Ty::F16 => Scalar::F16,
        Ty::BF16 => Scalar::BF16,
        Ty::F32 => Scalar::F32,
        Ty::F64 => Scalar::F64,
        Ty::F16x2 => Scalar::F16x2,
        Ty::BF16x2 => Scalar::BF16x2,
    }
}

/// A one-thread kernel that stores `expr` (of type `ty`) in `out[0]`; a
/// `bool` is stored as a `u32` 0 or 1.
fn kernel(ty: Ty, expr: &str, params: &[(String, Ty)]) -> String {
    let (elem, value) = match ty {
        Ty::Bool => ("u32".to_string(), format!("select({expr}, 1u32, 0u32)")),
        t => (t.name().to_string(), expr.to_string()),
    };
    let mut sig = format!("out: global mut [{elem}]");
    for (name, t) in params {
        sig.push_str(&format!(", {name}: {}", t.name()));
    }
    format!("kernel gen({sig}) block(1) {{\n    out[0] = {value};\n}}\n")
}

/// `g`'s source with the literals that `keep` does not keep turned into
/// parameters `p0`, `p1`, ... (in source order), and the arguments.
fn with_params(g: &GenExpr, keep: impl Fn(usize) -> bool) -> (String, Vec<(String, Ty, Val)>) {
    let mut out = String::new();
    let mut rest = g.source.as_str();
    let mut params = Vec::new();
    for (i, (text, v)) in g.leaves.iter().enumerate() {
        // Between two literals there are only operators, parentheses,
        // casts and call names, none of which contains a literal's text:
        // the next occurrence is this literal.
        let at = rest
            .find(text.as_str())
            .unwrap_or_else(|| panic!("literal `{text}` not in `{rest}`"));
        out.push_str(&rest[..at]);
        if keep(i) {
            out.push_str(text);
        } else {
            let name = format!("p{}", params.len());
            out.push_str(&name);
            params.push((name, v.ty(), *v));
        }
        rest = &rest[at + text.len()..];
    }
    out.push_str(rest);
    (out, params)
}

/// Compiles `src`, runs it on one thread with `args` after `out`, and
/// returns `out[0]` as a value of `ty`.
fn run_kernel(src: &str, ty: Ty, args: &[(String, Ty, Val)]) -> Result<Val, String> {
    let c = kdsl::compile_str("gen.kdsl", src, &kdsl::Options::default());
    if c.diagnostics.iter().any(|d| d.is_error()) {
        return Err(kdsl::diagnostics::render::short(&c.sources, &c.diagnostics));
    }
    let ptx = c.ptx.ok_or("no PTX")?;
    let p = sim::load(
        &ptx,
        PtxSource::Kdsl {
            line_spans: &c.ptx_line_spans,
        },
    )
    .map_err(|d| kdsl::diagnostics::render::short(&c.sources, &d))?;
    let out_elem = if ty == Ty::Bool {
        Scalar::U32
    } else {
        scalar(ty)
    };
    let mut all = vec![array("out", out_elem, vec![0; 8])];
    all.extend(args.iter().map(|(_, t, v)| ArgValue::Scalar {
        ty: scalar(*t),
        bits: v.bits(),
    }));
    let l = launch("gen", 1, 1, 1, all);
    let o = sim::run(&p, &l, &SimOptions::default());
    if !o.reports.is_empty() {
        return Err(kdsl::diagnostics::render::short(&c.sources, &o.reports));
    }
    let mut bits = 0u64;
    for (i, b) in o.arrays[0].data.iter().take(8).enumerate() {
        bits |= u64::from(*b) << (8 * i);
    }
    let width = if ty == Ty::Bool { 32 } else { ty.bits() };
    if width < 64 {
        bits &= (1u64 << width) - 1;
    }
    Ok(Val::from_bits(ty, bits))
}

/// A small deterministic choice per (case, literal): about one literal in
/// four stays a literal.
fn keeps(case: u64, i: usize) -> bool {
    let mut x = case
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i as u64);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    x.is_multiple_of(4)
}

/// Runs `cases` generated expressions of at most `depth` operators.
fn compare(cases: u64, depth: u32, seed: u64) {
    let mut runner = TestRunner::new_with_rng(
        proptest::test_runner::Config::default(),
        proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &{
            let mut s = [0u8; 32];
            s[..8].copy_from_slice(&seed.to_le_bytes());
            s
        }),
    );
    let strategy = gen_expr::any_expr(depth);
    let mut compared = [0u32; Ty::EXPRS.len()];
    let mut failures = Vec::new();
    for case in 0..cases {
        let g = strategy
            .new_tree(&mut runner)
            .expect("a generated expression")
            .current();
        // Expressions that must not compile (a literal out of range, a
        // constant division by zero) have no value to compare.
        let Ok(want) = g.value else { continue };
        let (expr, params) = with_params(&g, |i| keeps(case, i));
        let src = kernel(
            g.ty,
            &expr,
            &params
                .iter()
                .map(|(n, t, _)| (n.clone(), *t))
                .collect::<Vec<_>>(),
        );
        let got = run_kernel(&src, g.ty, &params);
        let index = Ty::EXPRS.iter().position(|t| *t == g.ty).unwrap_or(0);
        match got {
            Ok(v) if v.same(want) => compared[index] += 1,
            other => {
                let folded = run_kernel(&kernel(g.ty, &g.source, &[]), g.ty, &[]);
                let args: Vec<String> = params
                    .iter()
                    .map(|(n, _, v)| format!("{n} = {v:?}"))
                    .collect();
                failures.push(format!(
                    "{}\n  simulated {other:?}\n  folded    {folded:?}\n  kernel:\n{src}  arguments: {}",
                    describe(&g),
                    args.join(", ")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} generated expressions differ from the reference:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Every type was compared, and most expressions were.
    for (t, n) in Ty::EXPRS.iter().zip(compared) {
        assert!(
            u64::from(n) >= cases / Ty::EXPRS.len() as u64 / 3,
            "only {n} `{}` expressions compared: {compared:?}",
            t.name()
        );
    }
}

#[test]
fn simulated_expressions_of_every_type_equal_the_reference() {
    compare(1500, 3, 1);
}

#[test]
fn deeper_simulated_expressions_equal_the_reference() {
    compare(500, 4, 2);
}

/// The same, many more and deeper: `cargo test --test it -- --ignored sim::generated`.
#[test]
#[ignore = "long: 30,000 expressions"]
fn simulated_expressions_equal_the_reference_long() {
    compare(20_000, 3, 3);
    compare(10_000, 4, 4);
}

/// The narrow integers' edges, run with the operands as kernel parameters
/// (so the PTX computes them) and folded from literals: both equal the
/// reference. Wrap-around at `MIN`/`MAX`, `MIN / -1`, shifts by the width
/// and past it and by negative amounts, conversions from out-of-range and
/// NaN floats.
#[test]
fn narrow_integer_edges_run_as_they_fold() {
    use Val::*;
    let nan32 = F32(f32::NAN);
    let nan64 = F64(f64::NAN);
    let cases: Vec<(&str, Val, Val)> = vec![
        ("+", I8(127), I8(1)),
        ("-", I8(-128), I8(1)),
        ("*", I8(-128), I8(-1)),
        ("/", I8(-128), I8(-1)),
        ("%", I8(-128), I8(-1)),
        ("/", I8(-7), I8(2)),
        ("%", I8(-7), I8(2)),
        ("+", U8(255), U8(1)),
        ("-", U8(0), U8(1)),
        ("*", U8(16), U8(16)),
        ("/", U8(255), U8(16)),
        ("%", U8(255), U8(16)),
        ("*", U16(65535), U16(65535)),
        ("+", I16(32767), I16(1)),
        ("/", I16(-32768), I16(-1)),
        ("/", I16(-32768), I16(8)),
        ("%", I16(-32767), I16(8)),
        ("^", I8(-1), I8(127)),
        ("&", U8(200), U8(100)),
        ("|", I16(-32768), I16(1)),
        ("<<", U8(1), U32(7)),
        ("<<", U8(1), U32(8)),
        ("<<", U8(3), U8(7)),
        ("<<", U8(1), I32(-1)),
        ("<<", U8(129), I8(1)),
        (">>", U8(255), U32(8)),
        (">>", U8(255), U32(7)),
        (">>", I8(-128), U32(7)),
        (">>", I8(-128), U32(8)),
        (">>", I8(-128), U8(200)),
        (">>", I8(64), I8(-1)),
        ("<<", I8(64), U32(1)),
        ("<<", I16(1), U8(15)),
        (">>", I16(-2), U64(100)),
        ("<<", U16(1), U8(16)),
        ("<<", U16(1), U64(1 << 32)),
        ("<<", U32(1), U8(200)),
        ("<<", U32(1), I8(-1)),
        ("<<", I64(1), I16(-1)),
        ("<", I8(-1), I8(0)),
        (">", U8(255), U8(0)),
        ("<=", I16(-32768), I16(32767)),
    ];
    let mut failures = Vec::new();
    for (op, a, b) in cases {
        let want = gen_expr::binary_value(op, a, b).expect("no division by zero");
        let (ty, ta, tb) = (want.ty(), a.ty(), b.ty());
        let lit = |v: Val| gen_expr::literal_source(v);
        let folded = format!("({} {op} {})", lit(a), lit(b));
        let params = vec![("p0".to_string(), ta, a), ("p1".to_string(), tb, b)];
        let run = run_kernel(
            &kernel(
                ty,
                "(p0 OP p1)".replace("OP", op).as_str(),
                &[("p0".into(), ta), ("p1".into(), tb)],
            ),
            ty,
            &params,
        );
        let fold = run_kernel(&kernel(ty, &folded, &[]), ty, &[]);
        for (how, got) in [("run", run), ("folded", fold)] {
            if !matches!(got, Ok(v) if v.same(want)) {
                failures.push(format!("{folded} {how}: {got:?}, want {want:?}"));
            }
        }
    }
    let conversions: Vec<(Val, Ty)> = vec![
        (F32(300.0), Ty::U8),
        (F32(-1.0), Ty::U8),
        (F32(255.9), Ty::U8),
        (F32(-128.9), Ty::I8),
        (F32(-1e9), Ty::I8),
        (F64(1e9), Ty::I16),
        (F32(70000.5), Ty::U16),
        (F32(f32::INFINITY), Ty::U16),
        (F32(f32::NEG_INFINITY), Ty::I16),
        (nan32, Ty::U8),
        (nan32, Ty::I16),
        (nan64, Ty::U8),
        (nan64, Ty::I8),
        (nan64, Ty::U16),
        (nan64, Ty::I16),
        (I32(300), Ty::U8),
        (I32(-1), Ty::U16),
        (U8(200), Ty::I8),
        (I8(-56), Ty::U32),
        (I8(-1), Ty::U64),
        (I8(-1), Ty::U16),
        (U16(65535), Ty::I16),
        (U64(0xFFFF_FFFF_FFFF_FF80), Ty::I8),
        (I64(-129), Ty::I8),
        (U8(255), Ty::F16),
        (I16(-32768), Ty::BF16),
        (U16(65535), Ty::F32),
        (I8(-128), Ty::F64),
        (U8(0), Ty::Bool),
        (I16(-256), Ty::Bool),
    ];
    for (v, to) in conversions {
        let want = gen_expr::convert(v, to);
        let folded = format!("({} as {})", gen_expr::literal_source(v), to.name());
        let run = run_kernel(
            &kernel(
                to,
                &format!("(p0 as {})", to.name()),
                &[("p0".into(), v.ty())],
            ),
            to,
            &[("p0".to_string(), v.ty(), v)],
        );
        let fold = run_kernel(&kernel(to, &folded, &[]), to, &[]);
        for (how, got) in [("run", run), ("folded", fold)] {
            if !matches!(got, Ok(g) if g.same(want)) {
                failures.push(format!("{folded} {how}: {got:?}, want {want:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Narrow values through memory and the parameter space: parameters of one
/// and two bytes at odd offsets between 64-bit ones, global arrays of each
/// narrow type loaded (sign- or zero-extended) and stored (the low bytes
/// only, the neighbours untouched), shared arrays of `u8` and `i16` before
/// and after `u32`/`u64` ones, and a loop over a `u8` counter near 255:
/// the simulator's results equal the reference computed here in Rust.
#[test]
fn narrow_memory_and_parameters_run_as_the_reference_says() {
    let src = r#"
kernel mem(a: u8, big: u64, b: i8, c: u16, wide: u64, d: i16, e: u8,
           ins8: global [i8], insu8: global [u8], ins16: global [i16], insu16: global [u16],
           out8: global mut [i8], outu8: global mut [u8], out16: global mut [i16], outu16: global mut [u16],
           out: global mut [i64]) block(64) {
    shared s8: [u8; 65];
    shared s32: [u32; 64];
    shared s16: [i16; 64];
    shared s64: [u64; 64];
    let t = thread_idx.x;
    s8[t] = insu8[t] + a;
    s32[t] = t * 3;
    s16[t] = ins16[t] - d;
    s64[t] = big + (t as u64);
    sync_threads();
    let u = s8[63 - t];
    let s = s16[63 - t];
    out8[t * 2] = ins8[t] * b + (e as i8);
    outu8[t * 2] = u * insu8[t];
    out16[t * 2] = s >> (t as u8 % 17);
    outu16[t * 2] = insu16[t] / (c | 1) + (insu16[t] << 3u8);
    let mut n: u32 = 0;
    for i in (250u8 - (t as u8 % 4))..e {
        n += i as u32;
    }
    out[t] = (ins8[t] as i64) + (insu8[t] as i64) * 1000 + (ins16[t] as i64) * 1000000
        + (insu16[t] as i64) * 100000000000 + (s32[(t + 1) % 64] as i64) + (s64[t] - wide) as i64
        + (n as i64) * 1000000000000000;
}
"#;
    let k = kdsl_str_with("mem.kdsl", src, &kdsl::Options::default());
    let n = 64usize;
    let ins8: Vec<i8> = (0..n).map(|i| (i as i32 * 37 - 128) as i8).collect();
    let insu8: Vec<u8> = (0..n).map(|i| (i * 53 + 200) as u8).collect();
    let ins16: Vec<i16> = (0..n).map(|i| (i as i32 * 9001 - 32768) as i16).collect();
    let insu16: Vec<u16> = (0..n).map(|i| (i * 40503 + 65000) as u16).collect();
    let (a, big, b, c, wide, d, e) = (
        250u8,
        0xDEAD_BEEF_0000_0001u64,
        -3i8,
        7u16,
        5u64,
        -32768i16,
        255u8,
    );
    let le16 = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // Outputs twice as long: every other element must stay as it was.
    let fill8 = vec![0x5Au8; 2 * n];
    let fill16 = vec![0x5Au8; 4 * n];
    let scalar = |ty: Scalar, bits: u64| ArgValue::Scalar { ty, bits };
    let l = launch(
        "mem",
        1,
        64,
        1,
        vec![
            scalar(Scalar::U8, u64::from(a)),
            scalar(Scalar::U64, big),
            scalar(Scalar::I8, b as i64 as u64),
            scalar(Scalar::U16, u64::from(c)),
            scalar(Scalar::U64, wide),
            scalar(Scalar::I16, d as i64 as u64),
            scalar(Scalar::U8, u64::from(e)),
            array("ins8", Scalar::I8, ins8.iter().map(|x| *x as u8).collect()),
            array("insu8", Scalar::U8, insu8.clone()),
            array(
                "ins16",
                Scalar::I16,
                le16(&ins16.iter().map(|x| *x as u16).collect::<Vec<_>>()),
            ),
            array("insu16", Scalar::U16, le16(&insu16)),
            array("out8", Scalar::I8, fill8.clone()),
            array("outu8", Scalar::U8, fill8),
            array("out16", Scalar::I16, fill16.clone()),
            array("outu16", Scalar::U16, fill16),
            array("out", Scalar::I64, vec![0; 8 * n]),
        ],
    );
    let o = run_clean(&k, &l);
    let mut w8 = vec![0x5Au8; 2 * n];
    let mut wu8 = vec![0x5Au8; 2 * n];
    let mut w16 = vec![0x5A5Au16; 2 * n];
    let mut wu16 = vec![0x5A5Au16; 2 * n];
    let mut w64 = vec![0i64; n];
    for t in 0..n {
        let u = insu8[63 - t].wrapping_add(a);
        let s = ins16[63 - t].wrapping_sub(d);
        w8[t * 2] = ins8[t].wrapping_mul(b).wrapping_add(e as i8) as u8;
        wu8[t * 2] = u.wrapping_mul(insu8[t]);
        let k = (t % 17) as u32;
        w16[t * 2] = (if k >= 16 { s >> 15 } else { s >> k }) as u16;
        wu16[t * 2] = (insu16[t] / (c | 1)).wrapping_add(insu16[t] << 3);
        let start = 250u8 - (t % 4) as u8;
        let nsum: i64 = (start..e).map(i64::from).sum();
        w64[t] = i64::from(ins8[t])
            + i64::from(insu8[t]) * 1000
            + i64::from(ins16[t]) * 1_000_000
            + i64::from(insu16[t]) * 100_000_000_000
            + i64::from((((t + 1) % 64) * 3) as u32)
            + (big.wrapping_add(t as u64).wrapping_sub(wide)) as i64
            + nsum * 1_000_000_000_000_000;
    }
    let outs = &o.arrays[4..];
    assert_eq!(outs[0].data, w8, "out8");
    assert_eq!(outs[1].data, wu8, "outu8");
    assert_eq!(outs[2].data, le16(&w16), "out16");
    assert_eq!(outs[3].data, le16(&wu16), "outu16");
    let got64: Vec<i64> = outs[4]
        .data
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got64, w64, "out");
}
