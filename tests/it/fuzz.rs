//! Property tests over the whole pipeline:
//! - random and mutated inputs never make the compiler panic;
//! - randomly generated *valid* programs compile without diagnostics and the
//!   PTX they produce is accepted by ptxas.

use crate::common;
use proptest::prelude::*;
use std::path::Path;

fn compile_both_ways(text: &str) {
    // Through code generation when the program checks, and check-only.
    let full = kdsl::Options::default();
    let _ = kdsl::compile_str("fuzz.kdsl", text, &full);
    let sm80 = kdsl::Options {
        target: kdsl::target::Target::Sm80,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile_str("fuzz.kdsl", text, &sm80);
    // Rendering must not panic either, whatever the spans.
    let _ = kdsl::diagnostics::render::human(&c.sources, &c.diagnostics, false);
    let _ = kdsl::diagnostics::render::json(&c.sources, &c.diagnostics);
}

fn samples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .expect("samples/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "kdsl"))
        .map(|p| std::fs::read_to_string(p).expect("readable sample"))
        .collect();
    out.sort();
    out
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    ".",
    "..",
    "=",
    "+=",
    "<<=",
    "->",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "!",
    "<",
    ">=",
    "==",
    "kernel",
    "fn",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "step",
    "break",
    "return",
    "shared",
    "barrier",
    "global",
    "as",
    "import",
    "x",
    "full",
    "cta",
    "cluster",
    "0",
    "16u32",
    "1.5",
    "0x",
    "1e",
    "\"s\"",
    "/*",
    "*/",
    "//",
    "é",
    "\u{0}",
    "wait",
    "arrive",
    "wait_cluster",
    "remote",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, l)| Mutation::Delete(a, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<usize>(), 0usize..80).prop_map(|(a, l)| Mutation::Duplicate(a, l)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut s: String, m: &Mutation) -> String {
    if s.is_empty() {
        return s;
    }
    match *m {
        Mutation::Delete(at, len) => {
            let a = floor_char(&s, at % s.len());
            let b = floor_char(&s, a + len);
            s.replace_range(a..b, "");
        }
        Mutation::Insert(at, tok) => {
            let a = floor_char(&s, at % s.len());
            s.insert_str(a, TOKENS[tok % TOKENS.len()]);
        }
        Mutation::Duplicate(at, len) => {
            let a = floor_char(&s, at % s.len());
            let b = floor_char(&s, a + len);
            let piece = s[a..b].to_string();
            s.insert_str(b, &piece);
        }
        Mutation::Truncate(at) => {
            let a = floor_char(&s, at % s.len());
            s.truncate(a);
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        compile_both_ways(&text);
    }

    #[test]
    fn random_tokens_never_panic(toks in proptest::collection::vec(0usize..TOKENS.len(), 0..60)) {
        let text: Vec<&str> = toks.iter().map(|&t| TOKENS[t]).collect();
        compile_both_ways(&text.join(" "));
    }

    #[test]
    fn mutated_samples_never_panic(which in any::<usize>(), muts in proptest::collection::vec(mutation(), 1..6)) {
        let all = samples();
        let mut text = all[which % all.len()].clone();
        for m in &muts {
            text = apply(text, m);
        }
        compile_both_ways(&text);
    }
}

// ---- generated valid programs -------------------------------------------

/// A tiny deterministic generator (xorshift), so a failing seed reproduces.
struct Gen {
    state: u64,
    fresh: usize,
}

const INT_TYPES: [&str; 4] = ["i32", "u32", "i64", "u64"];
const FLOAT_TYPES: [&str; 2] = ["f32", "f64"];

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            fresh: 0,
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }

    fn ty(&mut self) -> &'static str {
        if self.below(3) == 0 {
            self.pick(&FLOAT_TYPES)
        } else {
            self.pick(&INT_TYPES)
        }
    }

    fn literal(&mut self, ty: &str) -> String {
        match ty {
            "f32" | "f64" => format!("{}.{}", self.below(100), self.below(10)),
            "bool" => (if self.below(2) == 0 { "true" } else { "false" }).to_string(),
            _ => format!("{}", self.below(1000) + 1),
        }
    }

    /// An expression of type `ty` using the variables in scope.
    fn expr(&mut self, ty: &str, vars: &[(String, &'static str)], depth: u32) -> String {
        let candidates: Vec<&String> = vars
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n)
            .collect();
        if depth == 0 || self.below(4) == 0 {
            if !candidates.is_empty() && self.below(3) != 0 {
                return candidates[self.below(candidates.len() as u64) as usize].clone();
            }
            return match ty {
                "bool" => self.literal(ty),
                _ => format!("{} as {ty}", self.literal_any()),
            };
        }
        let d = depth - 1;
        let is_float = FLOAT_TYPES.contains(&ty);
        match (ty, self.below(9)) {
            ("bool", 0..=4) => {
                let t = self.ty();
                let op = self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.expr(t, vars, d), self.expr(t, vars, d))
            }
            ("bool", 5 | 6) => {
                let op = self.pick(&["&&", "||", "&", "|", "^"]);
                format!(
                    "({} {op} {})",
                    self.expr("bool", vars, d),
                    self.expr("bool", vars, d)
                )
            }
            ("bool", _) => format!("!{}", self.expr("bool", vars, d)),
            (_, 0..=2) => {
                let ops: &[&str] = if is_float {
                    &["+", "-", "*", "/"]
                } else {
                    &["+", "-", "*", "&", "|", "^"]
                };
                let op = self.pick(ops);
                format!(
                    "({} {op} {})",
                    self.expr(ty, vars, d),
                    self.expr(ty, vars, d)
                )
            }
            (_, 3) if !is_float => {
                // Division and remainder by a non-zero constant only.
                let op = self.pick(&["/", "%"]);
                format!("({} {op} {})", self.expr(ty, vars, d), self.below(50) + 1)
            }
            (_, 3) => format!(
                "min({}, {})",
                self.expr(ty, vars, d),
                self.expr(ty, vars, d)
            ),
            (_, 4) => {
                let from = self.ty();
                format!("({} as {ty})", self.expr(from, vars, d))
            }
            (_, 5) => format!(
                "if {} {{ {} }} else {{ {} }}",
                self.expr("bool", vars, d),
                self.expr(ty, vars, d),
                self.expr(ty, vars, d)
            ),
            (_, 6) => format!(
                "select({}, {}, {})",
                self.expr("bool", vars, d),
                self.expr(ty, vars, d),
                self.expr(ty, vars, d)
            ),
            (_, 7) if !is_float => {
                let op = self.pick(&["<<", ">>"]);
                format!("({} {op} {}u32)", self.expr(ty, vars, d), self.below(8))
            }
            ("f32", 7) => {
                let f = self.pick(&["sqrt", "exp", "log2", "sin", "cos", "rsqrt"]);
                format!("{f}(abs({}) + 1.0)", self.expr("f32", vars, d))
            }
            (_, _) => format!(
                "max({}, {})",
                self.expr(ty, vars, d),
                self.expr(ty, vars, d)
            ),
        }
    }

    fn literal_any(&mut self) -> String {
        format!("{}", self.below(100))
    }

    fn program(&mut self) -> String {
        let out_ty = self.ty();
        let mut vars: Vec<(String, &'static str)> = vec![
            ("p".into(), "i32"),
            ("q".into(), "f32"),
            ("i".into(), "u32"),
        ];
        let mut body = String::new();
        body.push_str(&format!("        let x0 = x[i] as {out_ty};\n"));
        vars.push(("x0".into(), out_ty));
        for _ in 0..(2 + self.below(4)) {
            self.fresh += 1;
            let t = if self.below(5) == 0 {
                "bool"
            } else {
                self.ty()
            };
            let name = format!("v{}", self.fresh);
            let e = self.expr(t, &vars, 3);
            let m = self.below(2) == 0;
            body.push_str(&format!(
                "        let {}{name}: {t} = {e};\n",
                if m { "mut " } else { "" }
            ));
            if m && t != "bool" {
                let e2 = self.expr(t, &vars, 2);
                let op = if FLOAT_TYPES.contains(&t) {
                    "+="
                } else {
                    self.pick(&["+=", "^=", "|=", "-="])
                };
                body.push_str(&format!("        {name} {op} {e2};\n"));
            }
            vars.push((name, t));
        }
        if self.below(2) == 0 {
            body.push_str(&format!(
                "        let mut acc: {out_ty} = x0;\n        for k in 0..{}u32 {{\n            acc = acc + {};\n            if k > 2 {{ break; }}\n        }}\n",
                self.below(8) + 1,
                self.expr(out_ty, &vars, 2)
            ));
            vars.push(("acc".into(), out_ty));
        }
        let result = self.expr(out_ty, &vars, 3);
        // Every variable is used in the result to avoid W0001.
        let uses: Vec<String> = vars
            .iter()
            .filter(|(n, _)| n != "i")
            .map(|(n, t)| {
                if *t == "bool" {
                    format!("select({n}, 1.0, 0.0)")
                } else {
                    format!("({n} as f32)")
                }
            })
            .collect();
        format!(
            "kernel gen(x: global [f32], out: global mut [f32], n: u32, p: i32, q: f32) block(128) {{\n    let i = block_idx.x * 128 + thread_idx.x;\n    if i < n {{\n{body}        let r = {result};\n        out[i] = (r as f32) + {};\n    }}\n}}\n",
            uses.join(" + ")
        )
    }
}

#[test]
fn generated_programs_compile_and_assemble() {
    let ptxas = common::ptxas::require_ptxas();
    let cases = 48;
    for seed in 1..=cases {
        let src = Gen::new(seed).program();
        let c = kdsl::compile_str("gen.kdsl", &src, &kdsl::Options::default());
        let rendered = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
        assert!(
            c.diagnostics.is_empty(),
            "seed {seed}: generated program has diagnostics:\n{rendered}\n{src}"
        );
        let ptx = c.ptx.unwrap_or_else(|| panic!("seed {seed}: no PTX"));
        if let Some(ptxas) = &ptxas {
            if let Err(e) = common::ptxas::assemble(ptxas, &ptx, "sm_90") {
                panic!("seed {seed}: ptxas rejected the PTX:\n{e}\nsource:\n{src}");
            }
        }
    }
}

/// Deeply nested expressions must not overflow the stack (a stack overflow
/// aborts the process, which no `catch_unwind` can turn into a diagnostic).
#[test]
fn deep_nesting_does_not_crash() {
    let n = 3000;
    let src = format!(
        "kernel k(out: global mut [f32]) block(32) {{ out[0] = {}1.0{} + {}; }}",
        "(".repeat(n),
        ")".repeat(n),
        vec!["-1.0"; 1000].join(" + ")
    );
    let c = kdsl::compile_str("deep.kdsl", &src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(c.ptx.is_some());
    // Unbalanced, too: only diagnostics.
    let broken = format!("kernel k() {{ let x = {}1;", "(".repeat(n));
    let c = kdsl::compile_str("deep.kdsl", &broken, &kdsl::Options::default());
    assert!(c.error_count() > 0);
}
