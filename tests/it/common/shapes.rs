//! Programs of a chosen size in the shapes that once made a stage of kdslc
//! take super-linear time or memory (the checker's literal typing and
//! scopes, the barrier pass's walks and call graph, the PTX writer's
//! function order, the diagnostics renderer, `--emit ast`, the zero-divisor
//! check, the unrolling of loops over constant lists, constant locals,
//! "did you mean", a diagnostic per bad byte, the parser's error recovery,
//! the notes of mismatched call arguments). Shared by
//! `tests/it/pipeline/scaling.rs` (each shape compiles at 20,000) and
//! `benches/scaling.rs` (each shape's time from 1,000 to 20,000).

/// What compiling a shape gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No diagnostics, PTX written.
    Clean,
    /// Only diagnostics with this code, at least one.
    Only(&'static str),
}

pub struct Shape {
    pub name: &'static str,
    /// The program with `n` links, levels or statements.
    pub make: fn(usize) -> String,
    /// What compiling it gives at size `n`.
    pub outcome: fn(usize) -> Outcome,
}

const KERNEL: &str = "kernel k(out: global mut [u32], x: u32) block(32) {\n";

fn clean(_: usize) -> Outcome {
    Outcome::Clean
}

/// `let v = if x == 0 { 0 } else if x == 1 { 1 } ... else { 0 };`
fn else_if_expr(n: usize) -> String {
    let links: Vec<String> = (0..n).map(|i| format!("if x == {i} {{ {i} }}")).collect();
    format!(
        "{KERNEL}    let v: u32 = {} else {{ 0 }};\n    out[0] = v;\n}}\n",
        links.join(" else ")
    )
}

/// `if x == 0 { out[0] = 0; } else if x == 1 { ... } ...`
fn else_if_stmt(n: usize) -> String {
    let links: Vec<String> = (0..n)
        .map(|i| format!("if x == {i} {{\n        out[0] = {i};\n    }}"))
        .collect();
    format!("{KERNEL}    {}\n}}\n", links.join(" else "))
}

/// `fn f0` calls `f1`, which calls `f2`, ..., and the kernel calls `f0`.
fn call_chain(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "fn f{i}(a: u32) -> u32 {{\n    f{}(a) + 1\n}}\n",
            i + 1
        ));
    }
    s.push_str(&format!("fn f{n}(a: u32) -> u32 {{\n    a\n}}\n"));
    s.push_str(&format!("{KERNEL}    out[0] = f0(x);\n}}\n"));
    s
}

/// The kernel calls each of `n` functions once.
fn many_callees(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("fn f{i}(a: u32) -> u32 {{\n    a ^ {i}\n}}\n"));
    }
    s.push_str(KERNEL);
    s.push_str("    let mut v = x;\n");
    for i in 0..n {
        s.push_str(&format!("    v = f{i}(v);\n"));
    }
    s.push_str("    out[0] = v;\n}\n");
    s
}

/// `n` nested if-expressions: `if x > 0 { if x > 1 { ... } else { 1 } } else { 0 }`.
fn nested_if_expr(n: usize) -> String {
    let mut s = format!("{KERNEL}    let v: u32 = ");
    for i in 0..n {
        s.push_str(&format!("if x > {i} {{ "));
    }
    s.push('7');
    s.push_str(&" } else { 0 }".repeat(n));
    s.push_str(";\n    out[0] = v;\n}\n");
    s
}

/// `n` nested parenthesised if-expressions (two levels each).
fn paren_if(n: usize) -> String {
    let mut s = format!("{KERNEL}    let v: u32 = ");
    s.push_str(&"(if x > 0 { ".repeat(n));
    s.push('1');
    s.push_str(&" } else { 0 })".repeat(n));
    s.push_str(";\n    out[0] = v;\n}\n");
    s
}

/// Past the nesting limit (two levels a link), E0124; below it, clean.
fn paren_if_outcome(n: usize) -> Outcome {
    if 2 * n + 2 > kdsl::syntax::depth::LIMIT as usize {
        Outcome::Only("E0124")
    } else {
        Outcome::Clean
    }
}

/// `n` nested `if` statements, each reading `x` (a name from `n` scopes up).
fn nested_blocks(n: usize) -> String {
    let mut s = String::from(KERNEL);
    for i in 0..n {
        s.push_str(&format!("if x > {i} {{\n"));
    }
    s.push_str("out[0] = x;\n");
    s.push_str(&"}\n".repeat(n));
    s.push_str("}\n");
    s
}

/// `n` nested loops, each with a `break` only some threads take.
fn nested_loops(n: usize) -> String {
    let mut s = format!("{KERNEL}    let mut i = x;\n");
    for _ in 0..n {
        s.push_str("while i > 0 {\nif thread_idx.x == 0 { break; }\n");
    }
    s.push_str("i = i - 1;\n");
    s.push_str(&"}\n".repeat(n));
    s.push_str("    out[0] = i;\n}\n");
    s
}

/// `x + 1 + 1 + ...`, one operator a line.
fn operator_chain(n: usize) -> String {
    format!(
        "{KERNEL}    out[0] = x\n{};\n}}\n",
        "        + 1\n".repeat(n)
    )
}

/// `x > 0 && x > 1 && ...`: each right operand runs only sometimes.
fn and_chain(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("x > {i}")).collect();
    format!(
        "{KERNEL}    if {} {{\n        out[0] = 1;\n    }}\n}}\n",
        terms.join("\n        && ")
    )
}

/// `n` statements, one after another.
fn statements(n: usize) -> String {
    let mut s = String::from(KERNEL);
    for i in 0..n {
        s.push_str(&format!("    out[{i}] = x + {i};\n"));
    }
    s.push_str("}\n");
    s
}

/// One long line with `n` unknown names: `n` diagnostics that all show it.
fn long_line_errors(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("zz{i}")).collect();
    format!("{KERNEL}    out[0] = {};\n}}\n", names.join(" + "))
}

fn unknown_names(_: usize) -> Outcome {
    Outcome::Only("E0100")
}

/// `n` arrivals and waits on a group of barriers, one straight stretch.
fn barrier_stretch(n: usize) -> String {
    let mut s = String::from(
        "kernel k(out: global mut [u32], x: u32) block(32) {\n    barrier full[8]: cta(arrivals = 32);\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "    full[{}].arrive();\n    full[{}].wait();\n",
            i % 8,
            i % 8
        ));
    }
    s.push_str("    out[0] = x;\n}\n");
    s
}

/// `x / (2 / (2 / (2 / ... 2)))`: constant divisions nested in divisors,
/// `n` levels (a division and its parentheses are two); the values
/// alternate between 1 and 2, so no divisor is zero.
fn division_chain(n: usize) -> String {
    format!("{KERNEL}    out[0] = x / {};\n}}\n", two_chain(n / 2))
}

/// `(2 / (2 / ... 2))` with `links` divisions: 1 or 2.
fn two_chain(links: usize) -> String {
    format!("{}2{}", "(2 / ".repeat(links), ")".repeat(links))
}

/// The same chain ending in a run-time value: no divisor is constant.
fn division_chain_runtime(n: usize) -> String {
    let links = n / 2;
    let mut s = format!("{KERNEL}    out[0] = ");
    for i in 0..links {
        s.push_str(&format!("({} / ", i + 3));
    }
    s.push_str("(x | 1)");
    s.push_str(&")".repeat(links));
    s.push_str(";\n}\n");
    s
}

/// `x / (1 / ((2 / (2 / ... 2)) + 1))`: the outermost divisor, a chain of
/// `n` levels, is the constant 0 (1 / 2 or 1 / 3): one E0117, which only
/// evaluating the whole chain finds.
fn division_chain_zero(n: usize) -> String {
    format!(
        "{KERNEL}    out[0] = x / (1 / ({} + 1));\n}}\n",
        two_chain(n / 2 - 2)
    )
}

fn division_by_zero(_: usize) -> Outcome {
    Outcome::Only("E0117")
}

/// A kernel with `n` parameters (past 4095 of them, E0127).
fn many_params(n: usize) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("p{i}: u64")).collect();
    format!("kernel k({}) block(32) {{\n}}\n", params.join(", "))
}

fn params_outcome(n: usize) -> Outcome {
    if n * 8 > 32764 {
        Outcome::Only("E0127")
    } else {
        Outcome::Clean
    }
}

/// A device function with `n` parameters (`u32` and `u16` in turn),
/// called by the kernel.
fn many_fn_params(n: usize) -> String {
    let params: Vec<String> = (0..n)
        .map(|i| format!("_p{i}: {}", if i % 2 == 0 { "u32" } else { "u16" }))
        .collect();
    let args: Vec<&str> = (0..n)
        .map(|i| if i % 2 == 0 { "x" } else { "(x as u16)" })
        .collect();
    let args = args.join(", ");
    format!(
        "fn f({}) -> u32 {{\n    1\n}}\n{KERNEL}    out[0] = f({args});\n}}\n",
        params.join(", ")
    )
}

/// A device function with `n` parameters, called with `n` floats: `n`
/// mismatched arguments of one call (the note that names the function
/// once, not its signature `n` times).
fn mismatched_fn_args(n: usize) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("_p{i}: u32")).collect();
    let args = vec!["1.5"; n].join(", ");
    format!(
        "fn f({}) -> u32 {{\n    1\n}}\n{KERNEL}    out[0] = x + f({args});\n}}\n",
        params.join(", ")
    )
}

/// A device function with `n` parameters, called `n` times with none:
/// each E0111 notes its signature, which must not grow with `n`.
fn wide_signature_calls(n: usize) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("_p{i}: u32")).collect();
    let calls = "    out[0] = x + f();\n".repeat(n);
    format!(
        "fn f({}) -> u32 {{\n    1\n}}\n{KERNEL}{calls}}}\n",
        params.join(", ")
    )
}

fn mismatches(_: usize) -> Outcome {
    Outcome::Only("E0110")
}

fn arg_counts(_: usize) -> Outcome {
    Outcome::Only("E0111")
}

/// A kernel declaring `n` shared arrays of 128 bytes each, `[u32; 32]`
/// and `[u8; 128]` in turn (past 384 of them, dynamic shared memory; past
/// sm_90's maximum, 1816 of them, one E0122).
fn many_shared(n: usize) -> String {
    let mut s = String::from(KERNEL);
    for i in 0..n {
        let ty = if i % 2 == 0 { "u32; 32" } else { "u8; 128" };
        s.push_str(&format!("    shared s{i}: [{ty}];\n"));
    }
    s.push_str("    s0[0] = x;\n    out[0] = s0[1];\n}\n");
    s
}

fn shared_outcome(n: usize) -> Outcome {
    if n as u64 * 128 > kdsl::target::Target::Sm90.max_shared_per_block() {
        Outcome::Only("E0122")
    } else {
        Outcome::Clean
    }
}

/// `for d in [0u32, 1, ..., n - 1] { out[d] = x + d; }`: one loop over a
/// constant list, unrolled into `n` copies, each analysed once.
fn list_elements(n: usize) -> String {
    format!(
        "{KERNEL}    for d in {} {{\n        out[d] = x + d;\n    }}\n}}\n",
        list(n)
    )
}

/// Four nested loops over lists of `n / 4` (at least 64) elements: more
/// copies than unrolling may make, one E0162, found without copying.
fn list_nest(n: usize) -> String {
    let l = list((n / 4).max(64));
    format!(
        "{KERNEL}    for a in {l} {{\n    for b in {l} {{\n    for c in {l} {{\n    for d in {l} {{\n        out[a + b + c + d] = x;\n    }}\n    }}\n    }}\n    }}\n}}\n"
    )
}

/// `[0u32, 1, ..., n - 1]`.
fn list(n: usize) -> String {
    let items: Vec<String> = (1..n).map(|i| i.to_string()).collect();
    format!("[0u32, {}]", items.join(", "))
}

fn unrolled_too_much(_: usize) -> Outcome {
    Outcome::Only("E0162")
}

/// `n` immutable `let`s in one body, each reading the one before.
fn many_lets(n: usize) -> String {
    let mut s = format!("{KERNEL}    let a0 = x;\n");
    for i in 1..n {
        s.push_str(&format!("    let a{i} = a{} + {i};\n", i - 1));
    }
    s.push_str(&format!("    out[0] = a{};\n}}\n", n.saturating_sub(1)));
    s
}

/// `n` constants, and a use of a misspelt name for each: `n` E0100s, each
/// looking for a similar name among the `n` constants.
fn typos(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("const C{i}: u32 = {i};\n"));
    }
    s.push_str(KERNEL);
    for i in 0..n {
        s.push_str(&format!("    out[{i}] = D{i};\n"));
    }
    s.push_str("}\n");
    s
}

/// One line of `n` characters no token starts with: `n` E0001s.
fn bad_bytes(n: usize) -> String {
    format!("{KERNEL}    {}\n}}\n", "@".repeat(n))
}

fn unexpected_characters(_: usize) -> Outcome {
    Outcome::Only("E0001")
}

/// `n` lines that each fail to parse as a statement (`);`): `n` E0010s.
fn error_lines(n: usize) -> String {
    format!("{KERNEL}{}}}\n", "    );\n".repeat(n))
}

fn syntax_errors(_: usize) -> Outcome {
    Outcome::Only("E0010")
}

/// `n` bare blocks nested in the kernel's body, one `{` a line: a block is
/// not a statement, so each `{` is a syntax error the parser recovers
/// from, deeper each time.
fn bare_blocks(n: usize) -> String {
    format!("{KERNEL}{}{}}}\n", "{\n".repeat(n), "}\n".repeat(n))
}

/// `out[0] = !!…! ) !!…! 1;`, `n` operators in all: the parser recovers
/// from the `)` under a stack `n / 2` deep, and drops every token after it
/// up to the `;`.
fn bang_line(n: usize) -> String {
    let half = "!".repeat(n / 2);
    format!("{KERNEL}    out[0] = {half} ) {half} 1;\n}}\n")
}

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "else_if_expr",
        make: else_if_expr,
        outcome: clean,
    },
    Shape {
        name: "else_if_stmt",
        make: else_if_stmt,
        outcome: clean,
    },
    Shape {
        name: "call_chain",
        make: call_chain,
        outcome: clean,
    },
    Shape {
        name: "many_callees",
        make: many_callees,
        outcome: clean,
    },
    Shape {
        name: "nested_if_expr",
        make: nested_if_expr,
        outcome: clean,
    },
    Shape {
        name: "paren_if",
        make: paren_if,
        outcome: paren_if_outcome,
    },
    Shape {
        name: "nested_blocks",
        make: nested_blocks,
        outcome: clean,
    },
    Shape {
        name: "nested_loops",
        make: nested_loops,
        outcome: clean,
    },
    Shape {
        name: "operator_chain",
        make: operator_chain,
        outcome: clean,
    },
    Shape {
        name: "and_chain",
        make: and_chain,
        outcome: clean,
    },
    Shape {
        name: "statements",
        make: statements,
        outcome: clean,
    },
    Shape {
        name: "long_line_errors",
        make: long_line_errors,
        outcome: unknown_names,
    },
    Shape {
        name: "barrier_stretch",
        make: barrier_stretch,
        outcome: clean,
    },
    Shape {
        name: "division_chain",
        make: division_chain,
        outcome: clean,
    },
    Shape {
        name: "division_chain_runtime",
        make: division_chain_runtime,
        outcome: clean,
    },
    Shape {
        name: "many_params",
        make: many_params,
        outcome: params_outcome,
    },
    Shape {
        name: "many_fn_params",
        make: many_fn_params,
        outcome: clean,
    },
    Shape {
        name: "mismatched_fn_args",
        make: mismatched_fn_args,
        outcome: mismatches,
    },
    Shape {
        name: "wide_signature_calls",
        make: wide_signature_calls,
        outcome: arg_counts,
    },
    Shape {
        name: "many_shared",
        make: many_shared,
        outcome: shared_outcome,
    },
    Shape {
        name: "division_chain_zero",
        make: division_chain_zero,
        outcome: division_by_zero,
    },
    Shape {
        name: "list_elements",
        make: list_elements,
        outcome: clean,
    },
    Shape {
        name: "list_nest",
        make: list_nest,
        outcome: unrolled_too_much,
    },
    Shape {
        name: "many_lets",
        make: many_lets,
        outcome: clean,
    },
    Shape {
        name: "typos",
        make: typos,
        outcome: unknown_names,
    },
    Shape {
        name: "bad_bytes",
        make: bad_bytes,
        outcome: unexpected_characters,
    },
    Shape {
        name: "error_lines",
        make: error_lines,
        outcome: syntax_errors,
    },
    Shape {
        name: "bare_blocks",
        make: bare_blocks,
        outcome: syntax_errors,
    },
    Shape {
        name: "bang_line",
        make: bang_line,
        outcome: syntax_errors,
    },
];
