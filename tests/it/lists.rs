//! Loops over constant lists (`for d in [16u32, 8, 4, 2, 1] { ... }`) stay
//! one loop in the checked IR (what `kdslc check`, the barrier pass and the
//! language server see) and are unrolled by the optimiser, whatever passes
//! run: no loop is left in the IR that is written, each copy sees its
//! element as an immediate, and the simulated kernel computes what a Rust
//! reference does in the same order, bit for bit.

use crate::sim_passes::with;
use crate::sim_support::*;
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
        let c = kdsl::compile(Path::new(FILE), &with(passes)).expect("reads");
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
        let l = kdsl_file_with(Path::new(FILE), &with(passes.clone()));
        for schedule in [Schedule::InOrder, Schedule::Random(5)] {
            let launch = launch(
                "const_lists",
                [1, 1, 1],
                [64, 1, 1],
                [1, 1, 1],
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
