//! Generated programs: expressions over runtime parameters, computed by the
//! simulated PTX, must equal the same expressions over the same values
//! folded as constants by the checker (`const R: T = ...`). Integer
//! arithmetic (wrap-around, signed and unsigned division and shifts, casts
//! with truncation and saturation) and f64 arithmetic are compared exactly.
//! (f32 is left out: the constant folder computes f32 expressions in f64.)

use crate::sim_support::*;
use kdsl::launch::ArgValue;
use kdsl::sim::{self, PtxSource, SimOptions};
use kdsl::types::Scalar;

const TYPES: [&str; 5] = ["i32", "u32", "i64", "u64", "f64"];
/// The kernel's parameters: name and type.
const PARAMS: [(&str, &str); 5] = [
    ("a", "i32"),
    ("b", "u32"),
    ("c", "i64"),
    ("d", "u64"),
    ("e", "f64"),
];

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }

    fn bool_expr(&mut self, depth: u32) -> String {
        match self.below(if depth == 0 { 1 } else { 4 }) {
            0 | 1 => {
                let t = self.pick(&TYPES);
                let op = self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!(
                    "({} {op} {})",
                    self.expr(t, depth.saturating_sub(1)),
                    self.expr(t, depth.saturating_sub(1))
                )
            }
            2 => {
                let op = self.pick(&["&&", "||"]);
                format!(
                    "({} {op} {})",
                    self.bool_expr(depth - 1),
                    self.bool_expr(depth - 1)
                )
            }
            _ => format!("!{}", self.bool_expr(depth - 1)),
        }
    }

    /// An expression of type `ty`; `P` stands for the parameter names.
    fn expr(&mut self, ty: &str, depth: u32) -> String {
        let float = ty == "f64";
        let signed = matches!(ty, "i32" | "i64" | "f64");
        if depth == 0 || self.below(5) == 0 {
            let (name, pty) = PARAMS[self.below(PARAMS.len() as u64) as usize];
            return match self.below(3) {
                0 if pty == ty => format!("@{name}"),
                1 => format!("({} as {ty})", self.below(200)),
                _ => format!("(@{name} as {ty})"),
            };
        }
        let d = depth - 1;
        match self.below(10) {
            0..=2 => {
                let ops: &[&str] = if float {
                    &["+", "-", "*", "/"]
                } else {
                    &["+", "-", "*", "&", "|", "^"]
                };
                let op = self.pick(ops);
                format!("({} {op} {})", self.expr(ty, d), self.expr(ty, d))
            }
            3 if !float => {
                let op = self.pick(&["/", "%"]);
                format!("({} {op} {})", self.expr(ty, d), self.below(50) + 1)
            }
            4 if !float => {
                let op = self.pick(&["<<", ">>"]);
                let bits = if ty.ends_with("32") { 32 } else { 64 };
                format!("({} {op} {}u32)", self.expr(ty, d), self.below(bits))
            }
            5 => {
                let from = self.pick(&TYPES);
                format!("({} as {ty})", self.expr(from, d))
            }
            6 => format!(
                "select({}, {}, {})",
                self.bool_expr(d),
                self.expr(ty, d),
                self.expr(ty, d)
            ),
            7 => format!(
                "if {} {{ {} }} else {{ {} }}",
                self.bool_expr(d),
                self.expr(ty, d),
                self.expr(ty, d)
            ),
            8 if signed => {
                if self.below(2) == 0 {
                    format!("(-{})", self.expr(ty, d))
                } else {
                    format!("abs({})", self.expr(ty, d))
                }
            }
            _ => {
                let f = self.pick(&["min", "max"]);
                format!("{f}({}, {})", self.expr(ty, d), self.expr(ty, d))
            }
        }
    }

    /// Values for the parameters, as kdsl literals and as launch arguments.
    fn values(&mut self) -> Vec<(String, ArgValue)> {
        let small = |g: &mut Gen| g.below(3) == 0;
        let a = if small(self) {
            self.below(20) as i32 - 10
        } else {
            self.next() as i32
        };
        let b = if small(self) {
            self.below(20) as u32
        } else {
            self.next() as u32
        };
        let c = if small(self) {
            self.below(20) as i64 - 10
        } else {
            self.next() as i64
        };
        let d = if small(self) {
            self.below(20)
        } else {
            self.next()
        };
        let e = (self.below(20_000) as f64 - 10_000.0) / 8.0;
        let scalar = |ty: Scalar, bits: u64| ArgValue::Scalar { ty, bits };
        vec![
            (format!("{a}"), scalar(Scalar::I32, u64::from(a as u32))),
            (format!("{b}"), scalar(Scalar::U32, u64::from(b))),
            (format!("{c}"), scalar(Scalar::I64, c as u64)),
            (format!("{d}"), scalar(Scalar::U64, d)),
            (format!("{e:?}"), scalar(Scalar::F64, e.to_bits())),
        ]
    }
}

/// Runs a one-thread kernel and returns `out[0]`'s 8 bytes.
fn run_one(src: &str, args: Vec<ArgValue>, ty: &str) -> Result<u64, String> {
    let c = kdsl::compile_str("gen.kdsl", src, &kdsl::Options::default());
    if c.diagnostics.iter().any(|d| d.is_error()) {
        return Err(kdsl::diagnostics::render::short(&c.sources, &c.diagnostics));
    }
    let ptx = c.ptx.ok_or("no PTX")?;
    let p = sim::load(&ptx, PtxSource::Kdsl { line_spans: &[] }).map_err(|d| format!("{d:?}"))?;
    let elem = Scalar::from_name(ty).ok_or("type")?;
    let mut all = vec![array("out", elem, vec![0; 8])];
    all.extend(args);
    let l = launch("gen", [1, 1, 1], [1, 1, 1], [1, 1, 1], all);
    let o = sim::run(&p, &l, &SimOptions::default());
    if !o.reports.is_empty() {
        return Err(format!("reports: {:?}", o.reports));
    }
    let bytes = &o.arrays[0].data;
    let mut v = 0u64;
    for (i, b) in bytes.iter().take(elem.size() as usize).enumerate() {
        v |= u64::from(*b) << (8 * i);
    }
    Ok(v)
}

#[test]
fn simulated_arithmetic_equals_constant_folding() {
    let cases: u64 = 1000;
    let mut compared = 0;
    let mut failures = Vec::new();
    for seed in 1..=cases {
        let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let ty = g.pick(&TYPES);
        let expr = g.expr(ty, 4);
        let values = g.values();
        let runtime = expr.replace('@', "");
        let params: Vec<String> = PARAMS.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let kernel_src = format!(
            "kernel gen(out: global mut [{ty}], {}) block(1) {{\n    out[0] = {runtime};\n}}\n",
            params.join(", ")
        );
        let consts: Vec<String> = PARAMS
            .iter()
            .zip(&values)
            .map(|((n, t), (lit, _))| format!("const {}: {t} = {lit};", n.to_uppercase()))
            .collect();
        let folded = PARAMS.iter().fold(expr.clone(), |e, (n, _)| {
            e.replace(&format!("@{n}"), &n.to_uppercase())
        });
        let const_src = format!(
            "{}\nconst R: {ty} = {folded};\nkernel gen(out: global mut [{ty}], {}) block(1) {{\n    out[0] = R;\n}}\n",
            consts.join("\n"),
            params.join(", ")
        );
        let args: Vec<ArgValue> = values.iter().map(|(_, a)| a.clone()).collect();
        let (Ok(simulated), Ok(constant)) = (
            run_one(&kernel_src, args.clone(), ty),
            run_one(&const_src, args, ty),
        ) else {
            // An expression the checker does not fold (or rejects) is skipped.
            continue;
        };
        compared += 1;
        let same = if ty == "f64" {
            let (x, y) = (f64::from_bits(simulated), f64::from_bits(constant));
            x == y || (x.is_nan() && y.is_nan())
        } else {
            simulated == constant
        };
        if !same {
            failures.push(format!(
                "seed {seed}: simulated {simulated:#x}, folded {constant:#x}\n{kernel_src}{}",
                values
                    .iter()
                    .map(|(l, _)| l.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    assert!(
        compared >= cases * 3 / 4,
        "only {compared} of {cases} programs could be compared"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
