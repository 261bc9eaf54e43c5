//! Each shape of `common::shapes` at 20,000 links, levels or statements
//! compiles through `kdslc` to the end: no stack overflow, no quadratic
//! blow-up that would keep CI waiting. Time is not asserted here (CI runs on
//! two shared cores); `cargo bench --bench scaling` measures it, and
//! `docs/performance.md` records the table.

use crate::common::kdslc;
use crate::common::shapes::{Outcome, Shape, SHAPES};

const SIZE: usize = 20_000;

fn shape(name: &str) -> &'static Shape {
    SHAPES
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no shape {name}"))
}

/// Compiles the shape at `n` with `kdslc` and checks the outcome.
fn compiles_at(name: &str, n: usize) {
    let s = shape(name);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("shape.kdsl"), (s.make)(n)).expect("write");
    let out = kdslc(
        dir.path(),
        &["shape.kdsl", "-o", "shape.ptx", "--message-format", "short"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    match (s.outcome)(n) {
        Outcome::Clean => {
            assert_eq!(out.status.code(), Some(0), "{name} at {n}: {stderr}");
            assert!(stderr.is_empty(), "{name} at {n}: {stderr}");
            let ptx = std::fs::read_to_string(dir.path().join("shape.ptx")).expect("PTX written");
            assert!(ptx.contains(".entry k("), "{name} at {n}");
        }
        Outcome::Only(code) => {
            assert_eq!(out.status.code(), Some(1), "{name} at {n}: {stderr}");
            let diagnostics: Vec<&str> = stderr
                .lines()
                .filter(|l| l.contains(": error[") || l.contains(": warning["))
                .collect();
            assert!(!diagnostics.is_empty(), "{name} at {n}: {stderr}");
            for d in diagnostics {
                assert!(d.contains(&format!("[{code}]")), "{name} at {n}: {d}");
            }
        }
    }
}

macro_rules! at_20k {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                compiles_at(stringify!($name), SIZE);
            }
        )*
    };
}

at_20k!(
    else_if_expr,
    else_if_stmt,
    call_chain,
    many_callees,
    nested_if_expr,
    paren_if,
    nested_blocks,
    nested_loops,
    operator_chain,
    and_chain,
    statements,
    long_line_errors,
    barrier_stretch,
    division_chain,
    division_chain_runtime,
    division_chain_zero,
    many_params,
    many_fn_params,
    mismatched_fn_args,
    wide_signature_calls,
    many_shared,
    list_elements,
    list_nest,
    many_lets,
    typos,
    bad_bytes,
    error_lines,
    bare_blocks,
    bang_line,
);

#[test]
fn every_shape_has_a_test_here() {
    let source = include_str!("scaling.rs");
    for s in SHAPES {
        assert!(
            source.contains(&format!("    {},\n", s.name)),
            "{} has no test at 20k",
            s.name
        );
    }
}

/// Each shape at a small size gives what it says it gives, in process too.
#[test]
fn every_shape_is_what_it_says() {
    for s in SHAPES {
        let c = kdsl::compile_str("shape.kdsl", &(s.make)(20), &kdsl::Options::default());
        let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
        match (s.outcome)(20) {
            Outcome::Clean => assert!(codes.is_empty(), "{}: {codes:?}", s.name),
            Outcome::Only(code) => {
                assert!(!codes.is_empty(), "{}", s.name);
                assert!(codes.iter().all(|c| *c == code), "{}: {codes:?}", s.name);
            }
        }
    }
}

/// A deep program compiled in process, on this test's own small stack: the
/// trees are dropped without overflowing it.
#[test]
fn deep_trees_drop_on_any_thread() {
    let src = (shape("else_if_stmt").make)(SIZE);
    let c = kdsl::compile_str("chain.kdsl", &src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(c.ptx.is_some());
    drop(c);
    let src = (shape("operator_chain").make)(SIZE);
    let c = kdsl::compile_str("chain.kdsl", &src, &kdsl::Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
}

/// `--emit ast` and `--emit ir` of a deeply nested program finish, and their
/// text grows in proportion to the nesting (indentation is capped).
#[test]
fn emit_ast_and_ir_of_deep_nesting() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut sizes = Vec::new();
    for n in [1_000, 2_000] {
        std::fs::write(
            dir.path().join("deep.kdsl"),
            (shape("nested_if_expr").make)(n),
        )
        .expect("write");
        let mut row = Vec::new();
        for emit in ["ast", "ir"] {
            let out = kdslc(dir.path(), &["deep.kdsl", "--emit", emit]);
            assert_eq!(out.status.code(), Some(0), "--emit {emit} at {n}");
            row.push(out.stdout.len());
        }
        sizes.push(row);
    }
    for (kind, (small, big)) in ["ast", "ir"].iter().zip(sizes[0].iter().zip(&sizes[1])) {
        // Twice the nesting, about twice the text (quadratic would be 4x).
        assert!(
            *big < small * 5 / 2,
            "--emit {kind}: {small} bytes at 1000 levels, {big} at 2000"
        );
    }
}

/// A flood of one error, a million bad bytes, comes out as the first
/// 100 diagnostics and one "and N more" in every format, with the true
/// count in the totals: bounded output, bounded time (it was 328 MB of
/// stderr and an abort at 16 MiB).
#[test]
fn a_flood_of_one_error_is_capped_in_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    let n = 1 << 20;
    std::fs::write(dir.path().join("flood.kdsl"), (shape("bad_bytes").make)(n)).expect("write");
    let shown = kdsl::diagnostics::cap::PER_CODE;

    let human = kdslc(dir.path(), &["check", "flood.kdsl"]);
    assert_eq!(human.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&human.stderr);
    assert!(stderr.len() < 200_000, "{} bytes of stderr", stderr.len());
    assert_eq!(stderr.matches("error[E0001]").count(), shown + 1);
    let more = format!("and {} more errors with this code in this file", n - shown);
    assert!(stderr.contains(&more), "{}", &stderr[stderr.len() - 2000..]);
    assert!(
        stderr.ends_with(&format!("error: aborting due to {n} previous errors\n")),
        "{}",
        &stderr[stderr.len() - 500..]
    );

    let short = kdslc(
        dir.path(),
        &["check", "flood.kdsl", "--message-format", "short"],
    );
    let lines: Vec<String> = String::from_utf8_lossy(&short.stderr)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), shown + 1);
    // The last points at the first byte not shown.
    let column = 4 + shown + 1;
    assert_eq!(
        lines[shown],
        format!("flood.kdsl:2:{column}: error[E0001]: {more}")
    );

    let json = kdslc(
        dir.path(),
        &["check", "flood.kdsl", "--message-format", "json"],
    );
    let objects: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(objects.len(), shown + 2);
    assert_eq!(objects[shown]["omitted"], n - shown);
    assert!(objects[..shown].iter().all(|o| o.get("omitted").is_none()));
    assert_eq!(objects[shown + 1]["type"], "summary");
    assert_eq!(objects[shown + 1]["errors"], n);
}
