//! Property tests over the whole pipeline:
//! - random and mutated inputs never make the compiler panic;
//! - deeply nested input neither overflows the stack nor fails to compile.
//!
//! Generated *valid* programs are in `generated.rs`.

use crate::common::nested;
use proptest::prelude::*;

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
    let dir = crate::common::repo_root().join("samples");
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
    #![proptest_config(crate::common::proptest_config(256))]

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

// Generated valid programs, which cover the language and its limits, are
// in `generated.rs`.

/// Deeply nested expressions must not overflow the stack (a stack overflow
/// aborts the process, which no `catch_unwind` can turn into a diagnostic).
#[test]
fn deep_nesting_does_not_crash() {
    let n = 3000;
    let value = nested("(", "1.0", ")", n);
    let rest = vec!["-1.0"; 1000].join(" + ");
    let src = format!("kernel k(out: global mut [f32]) block(32) {{ out[0] = {value} + {rest}; }}");
    let c = kdsl::compile_str("deep.kdsl", &src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(c.ptx.is_some());
    // Unbalanced, too: only diagnostics.
    let broken = format!("kernel k() {{ let x = {}1;", "(".repeat(n));
    let c = kdsl::compile_str("deep.kdsl", &broken, &kdsl::Options::default());
    assert!(c.error_count() > 0);
}
