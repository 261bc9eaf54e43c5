//! Generated programs: expressions over every scalar type (`bool`, the eight
//! integers (`u8`, `i8`, `u16` and `i16` included), `f16`, `bf16`, `f32`, `f64`) with every operator, cast,
//! shift, signed and unsigned division and remainder, `min`/`max`/`abs`,
//! `fma`, `select` and the contracted `a * b + c`, from the generator of
//! `common::gen_expr`, whose reference evaluator is written independently
//! of the compiler. Each literal of an expression becomes, at random, a
//! kernel parameter, so that the PTX computes at run time what the writer
//! would otherwise fold, with a mix of register and immediate operands. The
//! simulated result must be the reference's, bit for bit (a NaN for a
//! NaN). A mismatch names the expression, its kernel, the reference, the
//! simulated and the folded value (the same expression as a `const`), so
//! that the culprit — folder, writer or simulator — is plain.

use crate::common::gen_expr::{self, describe, GenExpr, Ty, Val};
use crate::sim_support::*;
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
    let l = launch("gen", [1, 1, 1], [1, 1, 1], [1, 1, 1], all);
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
    let mut compared = [0u32; Ty::ALL.len()];
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
        let index = Ty::ALL.iter().position(|t| *t == g.ty).unwrap_or(0);
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
    for (t, n) in Ty::ALL.iter().zip(compared) {
        assert!(
            u64::from(n) >= cases / Ty::ALL.len() as u64 / 3,
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

/// The same, many more and deeper: `cargo test --test it -- --ignored sim_generated`.
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
            &kernel(ty, "(p0 OP p1)".replace("OP", op).as_str(), &[("p0".into(), ta), ("p1".into(), tb)]),
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
            &kernel(to, &format!("(p0 as {})", to.name()), &[("p0".into(), v.ty())]),
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
