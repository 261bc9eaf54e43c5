//! Loops over constant lists (`for d in [16u32, 8, 4, 2, 1] { ... }`) stay
//! one loop in the checked IR (what `kdslc check`, the barrier pass and the
//! language server see) and are unrolled by the optimiser, whatever passes
//! run: no loop is left in the IR that is written, each copy sees its
//! element as an immediate, and the simulated kernel computes what a Rust
//! reference does in the same order, bit for bit.

use crate::common::sim::*;
use kdsl::opt::Passes;
use kdsl::sim::Schedule;
use std::path::Path;

const FILE: &str = "tests/valid/const_lists.kdsl";

/// `tests/valid/const_lists.kdsl` for one warp's values.
fn reference(x: &[f32]) -> f32 {
    let mut v = x.to_vec();
    for d in [16usize, 8, 4, 2, 1] {
        v = (0..32)
            .map(|l| v[l] + if l + d < 32 { v[l + d] } else { v[l] })
            .collect();
    }
    let v = v[0];
    let mut acc = 0.0f32;
    for k in [1.5f32, -2.0, 0.25] {
        acc += v * k;
    }
    for i in [3i32, -1, 2] {
        for j in [10i32, 20] {
            if i == 2 {
                acc += 1.0;
            }
            acc += (i * j) as f32;
        }
    }
    v + acc
}

#[test]
fn no_loop_is_left_and_offsets_are_immediates() {
    for passes in [Passes::none(), Passes::all()] {
        let c = kdsl::compile(Path::new(FILE), &with_passes(passes)).expect("reads");
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let ptx = c.ptx.expect("ptx");
        for d in [16, 8, 4, 2, 1] {
            let imm = format!(", {d}, 0x1f, 0xffffffff;");
            assert!(
                ptx.lines()
                    .any(|l| l.contains("shfl.sync.down.b32") && l.ends_with(&imm)),
                "{ptx}"
            );
        }
        let ir = c.module.expect("ir");
        let mut loops = 0;
        for k in &ir.kernels {
            kdsl::ir::visit::Visit::visit_block(&mut CountLoops(&mut loops), &k.body.block);
        }
        assert_eq!(loops, 0, "a loop is left");
    }
}

#[test]
fn the_checked_ir_keeps_each_loop_once() {
    let opts = kdsl::Options {
        check_only: true,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile(Path::new(FILE), &opts).expect("reads");
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let ir = c.module.expect("ir");
    let mut lists = Vec::new();
    let mut shuffles = 0;
    for k in &ir.kernels {
        kdsl::ir::visit::Visit::visit_block(
            &mut Lists {
                lists: &mut lists,
                shuffles: &mut shuffles,
            },
            &k.body.block,
        );
    }
    // `[16, 8, 4, 2, 1]`, `[1.5, -2.0, 0.25]`, `[3, -1, 2]` around
    // `[10, 20]`; the empty list's loop runs nothing and is left out.
    assert_eq!(lists, [5, 3, 3, 2]);
    assert_eq!(shuffles, 1, "the body is in the IR once");
    let printed = kdsl::ir::print::print(&ir);
    assert!(
        printed.contains("in [16u32, 8u32, 4u32, 2u32, 1u32] {"),
        "{printed}"
    );
}

/// The element count of each loop over a list, and the shuffles.
struct Lists<'a> {
    lists: &'a mut Vec<usize>,
    shuffles: &'a mut usize,
}

impl<'ir> kdsl::ir::visit::Visit<'ir> for Lists<'_> {
    fn visit_stmt(&mut self, s: &'ir kdsl::ir::Stmt) {
        if let kdsl::ir::StmtKind::ForList { items, .. } = &s.kind {
            self.lists.push(items.len());
        }
        kdsl::ir::visit::walk_stmt(self, s);
    }
    fn visit_expr(&mut self, e: &'ir kdsl::ir::Expr) {
        if matches!(e.kind, kdsl::ir::ExprKind::Warp(..)) {
            *self.shuffles += 1;
        }
        kdsl::ir::visit::walk_expr(self, e);
    }
}

struct CountLoops<'a>(&'a mut usize);

impl<'ir> kdsl::ir::visit::Visit<'ir> for CountLoops<'_> {
    fn visit_stmt(&mut self, s: &'ir kdsl::ir::Stmt) {
        if matches!(
            s.kind,
            kdsl::ir::StmtKind::For { .. }
                | kdsl::ir::StmtKind::While { .. }
                | kdsl::ir::StmtKind::ForList { .. }
        ) {
            *self.0 += 1;
        }
        kdsl::ir::visit::walk_stmt(self, s);
    }
}

#[test]
fn unrolled_lists_match_the_reference() {
    let x = rand_f32(64, 11);
    let want = [reference(&x[..32]), reference(&x[32..])];
    for passes in [Passes::none(), Passes::all()] {
        let l = kdsl_file_with(Path::new(FILE), &with_passes(passes.clone()));
        for schedule in [Schedule::InOrder, Schedule::Random(5)] {
            let launch = launch(
                "const_lists",
                1,
                64,
                1,
                vec![f32s("x", &x), f32s("out", &[0.0; 2])],
            );
            let o = run_with(&l, &launch, schedule, 10_000_000);
            assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
            let got = as_f32(&o.arrays[1]);
            assert_eq!(
                got.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                "{passes:?} {schedule:?}: {got:?} vs {want:?}"
            );
        }
    }
}

/// `--emit ir --passes none` prints the loop as the checker built it; with
/// any pass the optimiser has unrolled it first.
#[test]
fn emit_ir_shows_the_loop_until_the_optimiser_unrolls_it() {
    let ir = |passes: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdslc"))
            .args([FILE, "--emit", "ir", "--passes", passes])
            .current_dir(crate::common::repo_root())
            .output()
            .expect("kdslc runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let none = ir("none");
    assert!(
        none.contains(" in [16u32, 8u32, 4u32, 2u32, 1u32] {"),
        "{none}"
    );
    assert_eq!(none.matches("shfl_down(").count(), 1, "{none}");
    let special = ir("special");
    assert!(!special.contains(" in ["), "{special}");
    assert_eq!(special.matches("shfl_down(").count(), 5, "{special}");
}

/// The bound on unrolling counts what unrolling really makes: for nests of
/// lists of two elements, 1 to 20 deep, every nest that compiles unrolls
/// to at most the limit (262,144 statements and expressions, plus the
/// little the source has), and the deeper ones are E0162.
#[test]
fn the_unrolling_bound_counts_what_unrolling_makes() {
    let opts = kdsl::Options {
        passes: Passes::none(),
        ..kdsl::Options::default()
    };
    let mut deepest = 0;
    for depth in 1..=20 {
        let mut src = String::from("kernel k(out: global mut [u32], x: u32) block(32) {\n");
        for i in 0..depth {
            src.push_str(&format!("for a{i} in [1u32, 2] {{\n"));
        }
        src.push_str("out[a0] = x;\n");
        src.push_str(&"}\n".repeat(depth + 1));
        let c = kdsl::compile_str("nest.kdsl", &src, &opts);
        let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
        if codes.contains(&"E0162") {
            assert_eq!(
                codes.iter().filter(|c| **c == "E0162").count(),
                1,
                "{codes:?}"
            );
            continue;
        }
        assert!(codes.iter().all(|c| *c == "W0001"), "{codes:?}");
        deepest = depth;
        let mut nodes = 0usize;
        for k in &c.module.expect("ir").kernels {
            kdsl::ir::visit::Visit::visit_block(&mut Nodes(&mut nodes), &k.body.block);
        }
        assert!(nodes <= (1 << 18) + 1000, "{depth} deep: {nodes} nodes");
    }
    assert!((10..20).contains(&deepest), "{deepest}");
}

struct Nodes<'a>(&'a mut usize);

impl<'ir> kdsl::ir::visit::Visit<'ir> for Nodes<'_> {
    fn visit_stmt(&mut self, s: &'ir kdsl::ir::Stmt) {
        *self.0 += 1;
        kdsl::ir::visit::walk_stmt(self, s);
    }
    fn visit_expr(&mut self, e: &'ir kdsl::ir::Expr) {
        *self.0 += 1;
        kdsl::ir::visit::walk_expr(self, e);
    }
}
