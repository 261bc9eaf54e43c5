//! How each stage of kdslc scales: every shape of `tests/it/common/shapes.rs`
//! (the programs that once took super-linear time or memory) compiled at
//! 1,000 to 20,000 links, levels or statements, through PTX, with its
//! diagnostics rendered; and `--emit ast` / `--emit ir` of deep nesting.
//!
//! `cargo bench --bench scaling` runs it; `docs/performance.md` records the
//! table (time per size and the 20k/1k ratio: 20 means linear).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

#[path = "../tests/it/common/shapes.rs"]
#[allow(dead_code)]
mod shapes;

const SIZES: [usize; 5] = [1_000, 2_000, 5_000, 10_000, 20_000];

/// Compiles `src` to PTX and renders its diagnostics, as `kdslc` does.
fn compile(src: &str) -> usize {
    let c = kdsl::compile_str("shape.kdsl", src, &kdsl::Options::default());
    let shown = kdsl::diagnostics::render::human(&c.sources, &c.diagnostics, false);
    c.ptx.map_or(0, |p| p.len()) + shown.len()
}

fn shapes(c: &mut Criterion) {
    for shape in shapes::SHAPES {
        let mut group = c.benchmark_group(shape.name);
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(2));
        for n in SIZES {
            let src = (shape.make)(n);
            group.bench_with_input(BenchmarkId::from_parameter(n), &src, |b, src| {
                b.iter(|| compile(src))
            });
        }
        group.finish();
    }
}

/// `--emit ast` and `--emit ir` of `n` nested if-expressions.
fn printers(c: &mut Criterion) {
    let nested = shapes::SHAPES
        .iter()
        .find(|s| s.name == "nested_if_expr")
        .map(|s| s.make);
    let Some(make) = nested else { return };
    let mut group = c.benchmark_group("emit_ast_and_ir");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for n in SIZES {
        let src = make(n);
        let compiled = kdsl::compile_str("shape.kdsl", &src, &kdsl::Options::default());
        group.bench_with_input(BenchmarkId::from_parameter(n), &compiled, |b, c| {
            b.iter(|| {
                let ast: usize = c
                    .files
                    .iter()
                    .map(|(_, f)| kdsl::syntax::dump::dump(f).len())
                    .sum();
                let ir = c
                    .module
                    .as_ref()
                    .map_or(0, |m| kdsl::ir::print::print(m).len());
                ast + ir
            })
        });
    }
    group.finish();
}

criterion_group!(benches, shapes, printers);
criterion_main!(benches);
