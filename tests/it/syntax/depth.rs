//! The nesting limit (E0124): exact, reported once at the construct that
//! goes too deep, never an abort; and every stage takes the deepest nesting
//! the limit allows.

use crate::common::{kdslc, nested};
use kdsl::syntax::depth::LIMIT;

const KERNEL: &str = "kernel k(out: global mut [u32], x: u32) block(32) {\n";

fn limit() -> usize {
    LIMIT as usize
}

/// `out[0] = x + 1 + ... + 1;` with `ops` operators: the statement nests
/// `ops + 2` levels (the assignment, `ops` operators, the operand `x`).
fn operator_chain(ops: usize) -> String {
    format!(
        "{KERNEL}    out[0] = x\n{};\n}}\n",
        "        + 1\n".repeat(ops)
    )
}

fn codes(src: &str) -> Vec<&'static str> {
    let c = kdsl::compile_str("deep.kdsl", src, &kdsl::Options::default());
    c.diagnostics.iter().map(|d| d.code).collect()
}

/// Compiles `src` with `kdslc` to PTX; returns the exit status and stderr.
fn build(src: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("deep.kdsl"), src).expect("write");
    let out = kdslc(
        dir.path(),
        &["deep.kdsl", "-o", "deep.ptx", "--message-format", "short"],
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_limit_is_exact() {
    let (file, diags) = kdsl::syntax::parse(kdsl::span::FileId(0), &operator_chain(limit() - 2));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.depth(), LIMIT);
    drop(file);
    let (file, diags) = kdsl::syntax::parse(kdsl::span::FileId(0), &operator_chain(limit() - 1));
    let found: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(found, ["E0124"]);
    assert!(file.depth() <= LIMIT);
}

#[test]
fn past_the_limit_is_one_error_at_the_construct() {
    let src = operator_chain(limit() + 10);
    let c = kdsl::compile_str("deep.kdsl", &src, &kdsl::Options::default());
    let found: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(found, ["E0124"], "nothing else: the checker stays silent");
    let d = &c.diagnostics[0];
    assert_eq!(
        d.message,
        format!("nesting too deep: more than {LIMIT} levels")
    );
    let span = d.primary_span().expect("a primary label");
    let text = &src[span.start as usize..span.end as usize];
    // The construct that holds more than the limit: an operator chain that
    // ends where the statement's value ends.
    assert!(text.ends_with("+ 1"), "{text:?}");
    assert!(text.matches("+ 1").count() > limit() - 5, "{}", text.len());
    assert!(d.help.iter().any(|h| h.contains("`let`")), "{:?}", d.help);
}

/// A construct past the limit is read, only not checked: an independent
/// error after it on the same line is still reported (only a lexer's or a
/// parser's error makes the rest of its line suspect).
#[test]
fn an_error_after_a_deep_construct_on_its_line_is_reported() {
    let src = format!(
        "{KERNEL}    let a: u32 = x{}; let b: u32 = 1.5; out[0] = a + b;\n}}\n",
        " + 1".repeat(limit() + 10)
    );
    assert_eq!(codes(&src), ["E0124", "E0110"]);
}

/// The rendered diagnostic, with the construct's first and last lines.
#[test]
fn rendered() {
    let src = operator_chain(limit() + 1);
    let c = kdsl::compile_str("deep.kdsl", &src, &kdsl::Options::default());
    let text = kdsl::diagnostics::render::human(&c.sources, &c.diagnostics, false);
    insta::assert_snapshot!(text);
}

#[test]
fn statements_and_types_too() {
    let mut blocks = String::from(KERNEL);
    blocks.push_str(&"if x > 0 {\n".repeat(limit() + 5));
    blocks.push_str(&"}\n".repeat(limit() + 5));
    blocks.push_str("}\n");
    assert_eq!(codes(&blocks), ["E0124"]);

    let ty = nested("global [", "u32", "]", limit() + 5);
    let deep_type = format!("kernel k(out: {ty}) block(32) {{ }}\n");
    assert_eq!(codes(&deep_type), ["E0124"]);
}

/// 100,000 nested if-expressions used to overflow the stack and abort.
#[test]
fn far_past_the_limit_is_still_one_error() {
    let v = nested("if x > 0 { ", "1", " } else { 0 }", 100_000);
    let src = format!("{KERNEL}    let v: u32 = {v};\n    out[0] = v;\n}}\n");
    let (status, stderr) = build(&src);
    assert_eq!(status, Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(": error[")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("error[E0124]"), "{stderr}");
}

/// Brackets are counted before parsing: from one inside the limit's number
/// of others on, nothing is parsed, so unclosed brackets cannot make the
/// parser's error recovery walk an unbounded stack.
#[test]
fn brackets_past_the_limit() {
    for (open, close) in [("{", ""), ("(", ""), ("out[", ""), ("(", ")")] {
        let n = 100_000;
        let v = nested(open, "x", close, n);
        let src = format!("{KERNEL}    let v = {v};\n}}\n");
        let c = kdsl::compile_str("deep.kdsl", &src, &kdsl::Options::default());
        let found: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(found, ["E0124"], "{open}{close}");
        let span = c.diagnostics[0].primary_span().expect("a label");
        // The first bracket inside the limit's number of others (the
        // kernel's body is the first of them, the parameters' are closed).
        let body = KERNEL.len() + "    let v = ".len();
        let bracket = open.len() - 1;
        let expected = body + (limit() - 1) * open.len() + bracket;
        assert_eq!(span.start as usize, expected, "{open}{close}");
    }
}

/// At exactly the limit, the constructs whose levels cost the most stack in
/// some stage compile to PTX (in a debug build, as the tests run).
#[test]
fn every_stage_takes_the_deepest_nesting_allowed() {
    // With the statement and the operand `x`, exactly the limit.
    let n = limit() - 2;
    let program = |open: &str, leaf: &str, close: &str| {
        let value = nested(open, leaf, close, n);
        format!("fn g(a: u32) -> u32 {{ a + 1 }}\n{KERNEL}    out[0] = {value};\n}}\n")
    };
    let cases = [
        ("builtin calls", program("min(x, ", "x", ")")),
        ("function calls", program("g(", "x", ")")),
        ("selects", program("select(true, x, ", "x", ")")),
        ("parentheses", program("(", "x", ")")),
        ("indices", program("out[", "x", "]")),
        (
            "if-expressions",
            program("if true { ", "x", " } else { 0 }"),
        ),
    ];
    for (what, src) in cases {
        let (status, stderr) = build(&src);
        assert_eq!(status, Some(0), "{what}: {stderr}");
    }
}

/// Chains that grow the parser's stack a few entries a token (prefix
/// operators, `else if`, C's `?:`) are cut where the stack passes its
/// bound: one E0124, and the parser holds a bounded stack whatever the
/// length (16 MiB of `!` took 4.6 GB).
#[test]
fn long_chains_are_cut_where_the_stack_is_too_deep() {
    let n = 2_000_000;
    for (chain, cut) in [
        (format!("    out[0] = {}x;\n", "!".repeat(n)), true),
        (format!("    out[0] = {}x;\n", "- ".repeat(n)), true),
        (
            format!("    out[0] = {}0;\n", "x ? 1 : ".repeat(n / 4)),
            true,
        ),
        // The chain's `if`s are built (past the limit) before the end.
        (
            format!("    if x == 0 {{}}{}\n", " else if x {}".repeat(n / 4)),
            false,
        ),
    ] {
        let src = format!("{KERNEL}{chain}}}\n");
        let c = kdsl::compile_str("chain.kdsl", &src, &kdsl::Options::default());
        let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
        let head: String = chain.chars().take(24).collect();
        assert_eq!(codes, ["E0124"], "{head}…");
        if cut {
            let label = &c.diagnostics[0].labels[0].message;
            assert_eq!(
                label,
                &format!("this is past {LIMIT} levels of nesting"),
                "{head}…"
            );
            let at = c.diagnostics[0].primary_span().expect("a label").start as usize;
            assert!(
                at < 3 * src.len() / 4,
                "{head}…: cut at {at} of {}",
                src.len()
            );
        }
    }
}
