//! Type inference that is right every time:
//! - literal typing from context, checked by an oracle: thousands of
//!   generated valid programs whose literals take their types from context
//!   (if-expressions, nested operators, every integer and float type) must
//!   all compile clean;
//! - the same programs (and broken ones) compile to byte-identical PTX and
//!   diagnostics however often they are compiled, in one process and across
//!   processes;
//! - if-expressions nest to any depth, as values and as function tails.

use crate::common;
use crate::common::rng::XorShift;
use proptest::prelude::*;
use std::fmt::Write as _;
use std::process::Command;

// ---- the generator ------------------------------------------------------

/// The scalar types a value can have.
const TYPES: [&str; 12] = [
    "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64",
];

fn is_float(t: &str) -> bool {
    matches!(t, "f16" | "bf16" | "f32" | "f64")
}

fn is_signed(t: &str) -> bool {
    matches!(t, "i8" | "i16" | "i32" | "i64") || is_float(t)
}

/// A generated expression: its text and whether it is an untyped literal
/// expression (its type then comes from the context).
struct E {
    text: String,
    untyped: bool,
}

/// A small deterministic generator (xorshift): a seed is a program.
struct Gen {
    state: XorShift,
    lets: usize,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            state: XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            lets: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.state.next()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// An untyped literal expression that fits every type it may take:
    /// small, never negative unless `signed`, a float literal only if
    /// `float`. `depth` bounds its size (the largest value is 9^4).
    fn literal(&mut self, signed: bool, float: bool, depth: u32) -> E {
        let text = match self.below(if depth == 0 { 1 } else { 6 }) {
            0 | 1 if float && self.chance(2) => format!("{}.{}", self.below(10), self.below(10)),
            0 | 1 => self.below(10).to_string(),
            2 => {
                let (a, b) = (
                    self.literal(signed, float, depth - 1),
                    self.literal(signed, float, depth - 1),
                );
                let op = if signed {
                    self.pick(&["+", "-", "*"])
                } else {
                    self.pick(&["+", "*"])
                };
                format!("({} {op} {})", a.text, b.text)
            }
            3 if signed => format!("-{}", self.below(10)),
            3 => format!("({})", self.literal(signed, float, depth - 1).text),
            _ => {
                let c = self.cond(depth - 1);
                let (a, b) = (
                    self.literal(signed, float, depth - 1),
                    self.literal(signed, float, depth - 1),
                );
                format!("if {c} {{ {} }} else {{ {} }}", a.text, b.text)
            }
        };
        E {
            text,
            untyped: true,
        }
    }

    /// A typed expression of type `t` (it reads a variable of that type).
    fn typed(&mut self, t: &'static str, depth: u32) -> E {
        let var = format!("a_{t}");
        if depth == 0 {
            return E {
                text: var,
                untyped: false,
            };
        }
        let text = match self.below(8) {
            0 => var,
            1 => {
                let from = self.pick(&TYPES);
                format!("({} as {t})", self.typed(from, depth - 1).text)
            }
            2 if is_float(t) && !matches!(t, "f16" | "bf16") => {
                format!(
                    "min({}, {})",
                    self.any(t, depth - 1).text,
                    self.typed(t, depth - 1).text
                )
            }
            2 => format!(
                "select(c, {}, {})",
                self.typed(t, depth - 1).text,
                self.any(t, depth - 1).text
            ),
            _ => {
                let e = self.any_typed(t, depth);
                if !e.untyped {
                    return e;
                }
                format!("({} + {var})", e.text)
            }
        };
        E {
            text,
            untyped: false,
        }
    }

    /// An expression of type `t` that may be untyped (then the context
    /// types it), built so that either side of an operator or branch of an
    /// `if` may be the literal one.
    fn any(&mut self, t: &'static str, depth: u32) -> E {
        if depth == 0 || self.chance(4) {
            return if self.chance(2) {
                self.literal(is_signed(t), is_float(t), depth.min(2))
            } else {
                self.typed(t, 0)
            };
        }
        self.any_typed(t, depth)
    }

    /// An operator, `if`, block or call over `any` operands; typed when one
    /// of its operands is.
    fn any_typed(&mut self, t: &'static str, depth: u32) -> E {
        let d = depth - 1;
        let (a, b) = (self.any(t, d), self.any(t, d));
        let untyped = a.untyped && b.untyped;
        let text = match self.below(7) {
            0 | 1 => {
                let mut ops = vec!["+", "*"];
                if !untyped || is_signed(t) {
                    ops.push("-");
                }
                if !is_float(t) {
                    ops.extend(["&", "|", "^"]);
                }
                let op = self.pick(&ops);
                format!("({} {op} {})", a.text, b.text)
            }
            2 => format!("if {} {{ {} }} else {{ {} }}", self.cond(d), a.text, b.text),
            // An `else if` chain.
            3 => {
                let e = self.any(t, d);
                let (c1, c2) = (self.cond(d), self.cond(d));
                return E {
                    untyped: untyped && e.untyped,
                    text: format!(
                        "if {c1} {{ {} }} else if {c2} {{ {} }} else {{ {} }}",
                        a.text, b.text, e.text
                    ),
                };
            }
            // A block whose value is a final `if` statement, nested.
            4 => {
                self.lets += 1;
                let n = self.lets;
                let inner = self.any(t, d);
                let c = self.cond(d);
                return E {
                    untyped: false,
                    text: format!(
                        "if {c} {{ let b{n}: {t} = {}; if c {{ b{n} + {} }} else {{ {} }} }} else {{ {} }}",
                        inner.text, a.text, b.text, self.typed(t, 0).text
                    ),
                };
            }
            5 if !is_float(t) => format!("({} << {})", self.typed(t, d).text, self.below(4)),
            5 | 6 if untyped => format!("({} + {})", a.text, b.text),
            // `max` takes no halves.
            5 if matches!(t, "f16" | "bf16") => format!("select(c, {}, {})", a.text, b.text),
            5 => format!("max({}, {})", a.text, b.text),
            _ => format!("select(c, {}, {})", a.text, b.text),
        };
        E { text, untyped }
    }

    /// A `bool`: a comparison of two values of one type (never two untyped
    /// ones, which would have no type), or `c`.
    fn cond(&mut self, depth: u32) -> String {
        if depth == 0 || self.chance(3) {
            return "c".into();
        }
        let t = self.pick(&TYPES);
        let a = self.typed(t, depth - 1);
        let b = self.any(t, depth - 1);
        let op = self.pick(&["<", "<=", ">", ">=", "==", "!="]);
        if self.chance(2) {
            format!("({} {op} {})", a.text, b.text)
        } else {
            format!("({} {op} {})", b.text, a.text)
        }
    }

    /// A kernel (and a device function) full of literals typed by context.
    fn program(&mut self) -> String {
        let mut src = String::new();
        // A function whose tail is a nested `if` statement with literals.
        let ft = self.pick(&TYPES);
        let tail = self.any(ft, 3);
        let params: Vec<String> = TYPES.iter().map(|t| format!("a_{t}: {t}")).collect();
        let args: Vec<String> = TYPES.iter().map(|t| format!("a_{t}")).collect();
        // Every parameter read, so that none is unused (W0001).
        let reads: Vec<String> = TYPES.iter().map(|t| format!("(a_{t} as f32)")).collect();
        let _ = writeln!(
            src,
            "fn f({}, c: bool) -> {ft} {{\n    let _all = {};\n    if c {{\n        if a_{ft} > 1 {{ {} }} else {{ 2 }}\n    }} else {{\n        {}\n    }}\n}}\n",
            params.join(", "),
            reads.join(" + "),
            self.literal(is_signed(ft), is_float(ft), 2).text,
            tail.text
        );
        let outs: Vec<String> = TYPES
            .iter()
            .map(|t| format!("o_{t}: global mut [{t}]"))
            .collect();
        let _ = writeln!(
            src,
            "kernel k({}, {}, c: bool) block(64) {{",
            params.join(", "),
            outs.join(", ")
        );
        let mut stored = Vec::new();
        for i in 0..(3 + self.below(5)) {
            let t = self.pick(&TYPES);
            let e = self.any(t, 4);
            let _ = writeln!(src, "    let v{i}: {t} = {};", e.text);
            stored.push((format!("v{i}"), t));
        }
        for k in 0..2 {
            let t = self.pick(&TYPES);
            let e = self.any(t, 3);
            let _ = writeln!(src, "    o_{t}[{k}] = {};", e.text);
        }
        for (i, (v, t)) in stored.iter().enumerate() {
            let _ = writeln!(src, "    o_{t}[{}] = {v};", i + 2);
        }
        let _ = writeln!(src, "    o_{ft}[9] = f({}, c);\n}}", args.join(", "));
        src
    }
}

// ---- the oracle ----------------------------------------------------------

fn check_clean(seed: u64) -> Result<(), TestCaseError> {
    let src = Gen::new(seed).program();
    let c = kdsl::compile_str("gen.kdsl", &src, &kdsl::Options::default());
    let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    prop_assert!(
        c.diagnostics.is_empty(),
        "seed {}: a valid program was rejected:\n{}\n{}",
        seed,
        shown,
        src
    );
    prop_assert!(c.ptx.is_some(), "seed {seed}: no PTX");
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(3000))]

    /// Every generated program, valid by construction, compiles clean.
    #[test]
    fn literal_typing_oracle(seed in any::<u64>()) {
        check_clean(seed)?;
    }
}

/// A fixed set of seeds (run every time, whatever proptest picks), through
/// ptxas too when it is installed.
#[test]
fn generated_programs_assemble() {
    let ptxas = common::ptxas::require_ptxas();
    for seed in 1..=40 {
        let src = Gen::new(seed).program();
        let c = kdsl::compile_str("gen.kdsl", &src, &kdsl::Options::default());
        let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
        assert!(c.diagnostics.is_empty(), "seed {seed}:\n{shown}\n{src}");
        let ptx = c.ptx.unwrap_or_else(|| panic!("seed {seed}: no PTX"));
        if let Some(ptxas) = &ptxas {
            if let Err(e) = common::ptxas::assemble(ptxas, &ptx, "sm_90") {
                panic!("seed {seed}: ptxas rejected the PTX:\n{e}\n{src}");
            }
        }
    }
}

// ---- the cases the oracle found -----------------------------------------

fn diagnostics_of(src: &str) -> Vec<String> {
    let c = kdsl::compile_str("case.kdsl", src, &kdsl::Options::default());
    c.diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

/// Literal typing in one `if` does not leak into the next.
#[test]
fn literal_typing_does_not_leak_between_ifs() {
    let src = "kernel k(o64: global mut [u64], o32: global mut [u32], x: u64, y: u32, c: bool) block(32) {
    let v = if c { 1 - x } else { 2 - x };
    let w = if c { y + 3 } else { y };
    o64[0] = v;
    o32[0] = w;
}
";
    for _ in 0..20 {
        assert_eq!(diagnostics_of(src), Vec::<String>::new());
    }
    // The same with the typed operand on either side, in either branch,
    // nested, and the other way round.
    let bodies = [
        "let v = if c { x - 1 } else { 2 - x };\n    let w = if c { 3 + y } else { y };",
        "let v = if c { 1 - x } else { x };\n    let w = if c { y } else { y + 3 };",
        "let w = if c { y + 3 } else { y };\n    let v = if c { 1 - x } else { 2 - x };",
        "let v = if c { if c { 1 - x } else { 2 } } else { 3 };\n    let w = if c { 4 } else { if c { y + 5 } else { 6 } };",
        "let v = (if c { 1 } else { 2 }) - x;\n    let w = y + (if c { 3 } else { 4 });",
        "let v = if c { 1 } else if c { 2 - x } else { 3 };\n    let w = if c { 4 } else if c { y } else { 5 };",
    ];
    for body in bodies {
        let src = format!(
            "kernel k(o64: global mut [u64], o32: global mut [u32], x: u64, y: u32, c: bool) block(32) {{\n    {body}\n    o64[0] = v;\n    o32[0] = w;\n}}\n"
        );
        assert_eq!(diagnostics_of(&src), Vec::<String>::new(), "{src}");
    }
}

/// Errors still point where they should: the branch that does not fit.
#[test]
fn a_branch_of_the_wrong_type_is_still_an_error() {
    let src = "kernel k(o: global mut [u64], x: u64, y: u32, c: bool) block(32) {
    let v = if c { 1 - x } else { y };
    o[0] = v;
}
";
    let c = kdsl::compile_str("case.kdsl", src, &kdsl::Options::default());
    let d: Vec<_> = c
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert_eq!(
        d,
        [(
            "E0110",
            "mismatched types: expected `u64`, found `u32`".to_string()
        )]
    );
    let span = c.diagnostics[0].primary_span().expect("a label");
    assert_eq!(&src[span.start as usize..span.end as usize], "y");
}

// ---- determinism ----------------------------------------------------------

/// A generated program with one error put in (so that diagnostics are
/// compared too): a float literal where an integer goes, or an unknown name.
fn broken(seed: u64) -> String {
    let src = Gen::new(seed).program();
    match seed % 3 {
        0 => src.replacen("o_i32[", "o_i32[0.5 + ", 1).replacen(
            "kernel k(",
            "kernel k(o_extra: global mut [u32], ",
            1,
        ),
        1 => src.replacen("= ", "= zz + ", 1),
        _ => src.replacen("a_u32", "a_u32 + 1.5", 1),
    }
}

/// Everything a compilation shows: PTX, and diagnostics in both formats.
fn output_of(src: &str) -> String {
    let c = kdsl::compile_str("det.kdsl", src, &kdsl::Options::default());
    format!(
        "{}\n{}\n{}",
        c.ptx.as_deref().unwrap_or("no PTX"),
        kdsl::diagnostics::render::human(&c.sources, &c.diagnostics, false),
        kdsl::diagnostics::render::json(&c.sources, &c.diagnostics)
    )
}

fn programs() -> Vec<String> {
    (1..=12u64)
        .flat_map(|seed| [Gen::new(seed).program(), broken(seed)])
        .collect()
}

/// Compiled again and again in one process (other compilations in between,
/// so that memory is reused differently), a program gives the same bytes.
#[test]
fn deterministic_in_one_process() {
    let programs = programs();
    let first: Vec<String> = programs.iter().map(|p| output_of(p)).collect();
    for round in 0..5 {
        for (i, p) in programs.iter().enumerate().rev() {
            assert_eq!(output_of(p), first[i], "program {i}, round {round}:\n{p}");
        }
    }
}

/// `kdslc` run several times on each program (each run its own process,
/// with its own address layout) gives the same PTX and the same messages,
/// and the same as in this process.
#[test]
fn deterministic_across_processes() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (i, p) in programs().iter().enumerate().take(12) {
        let file = format!("p{i}.kdsl");
        std::fs::write(dir.path().join(&file), p).expect("write");
        let mut runs = Vec::new();
        for _ in 0..3 {
            let out = Command::new(env!("CARGO_BIN_EXE_kdslc"))
                .args([&file, "-o", "-"])
                .current_dir(dir.path())
                .env("NO_COLOR", "1")
                .output()
                .expect("kdslc runs");
            runs.push((out.status.code(), out.stdout, out.stderr));
        }
        assert!(
            runs.windows(2).all(|w| w[0] == w[1]),
            "program {i} differs between runs:\n{p}"
        );
        let (code, stdout, stderr) = &runs[0];
        let c = kdsl::compile_str(&file, p, &kdsl::Options::default());
        assert_eq!(
            *code,
            Some(if c.error_count() > 0 { 1 } else { 0 }),
            "program {i}"
        );
        if let Some(ptx) = &c.ptx {
            assert_eq!(String::from_utf8_lossy(stdout), *ptx, "program {i}");
        }
        let rendered = kdsl::diagnostics::render::human(&c.sources, &c.diagnostics, false);
        assert!(
            String::from_utf8_lossy(stderr).starts_with(&rendered),
            "program {i}: the messages differ from this process's"
        );
    }
}

// ---- if-expressions nest to any depth -------------------------------------

/// `depth` nested `if`s with literal branches at every level (the innermost
/// pair untyped), closed by a typed one, as a `let`'s value.
fn nested_value(depth: usize, t: &str) -> String {
    let mut e = String::from("7");
    for i in 0..depth {
        e = match i % 4 {
            0 => format!("if a > {i} {{ {e} }} else {{ {i} }}"),
            1 => format!("if a < {i} {{ {i} }} else {{ {e} }}"),
            2 => format!("(if a == {i} {{ {e} }} else if a > {i} {{ 1 }} else {{ 2 }})"),
            _ => format!("if a != {i} {{ let z{i}: {t} = {i}; z{i} + {e} }} else {{ a }}"),
        };
    }
    e
}

#[test]
fn if_expressions_nest_to_any_depth() {
    for t in ["u32", "i64", "f32", "f16"] {
        for depth in 1..=50 {
            // As a `let`'s value, as a function's tail (an `if` statement
            // that is the body's value), and in statement position.
            let value = nested_value(depth, t);
            let src = format!(
                "fn tail(a: {t}) -> {t} {{\n    {value}\n}}\n\
                 fn early(a: {t}) -> {t} {{\n    if a > 1 {{ return 1; }}\n    if a > 2 {{ 3 }} else {{ {value} }}\n}}\n\
                 kernel k(out: global mut [{t}], a: {t}) block(32) {{\n    let v: {t} = {value};\n    out[0] = v + tail(a) + early(a);\n}}\n"
            );
            let c = kdsl::compile_str("nest.kdsl", &src, &kdsl::Options::default());
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            assert!(
                c.diagnostics.is_empty(),
                "{t}, depth {depth}:\n{shown}\n{src}"
            );
            assert!(c.ptx.is_some());
        }
    }
}

/// Three levels of `if` as a function's tail failed before: the middle one
/// was a statement whose block had no tail expression.
#[test]
fn three_levels_as_a_function_tail() {
    let src = "fn f(x: u32) -> u32 {
    if x > 0 {
        if x > 1 {
            if x > 2 { 3 } else { 2 }
        } else {
            1
        }
    } else {
        0
    }
}
kernel k(out: global mut [u32], x: u32) block(32) {
    out[0] = f(x);
}
";
    assert_eq!(diagnostics_of(src), Vec::<String>::new());
}
