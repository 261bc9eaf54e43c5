//! Simulator speed: simulated PTX instructions per second on one core, for
//! a 256×256×256 `sgemm_tiled` and a `pipeline_sum` over 2^20 floats (both
//! the kdslc PTX of the samples), and the Hopper GEMM at 1024×1024×1024
//! (the design's PTX of it as kdslc emits it, `tests/fixtures/hopper-ptx/`:
//! TMA, 4 × wgmma.m64n256k16 per k-tile, setmaxnreg), whose time is the
//! wgmmas' 2^30 multiply-adds more than its 6.7 M instructions.
//! Each kernel is measured with the run-time checks on (`NAME/checks`, the
//! default of `kdslc sim`: races, uninitialised reads, transaction
//! overflows, barrier divergence) and off (`NAME/no-checks`).
//! Criterion's throughput is set to the instructions one run executes, so
//! "elem/s" is instructions per second. These run with `jobs: 1` (one
//! core); `sgemm_tiled_256/jobs-N/no-checks` and `.../checks` run
//! `sgemm_tiled` with N groups at once (`--jobs N`; with the checks on its
//! CTAs' shared reads of A and B are replayed in the serial order), one per
//! core up to 4.
//!
//!
//!     cargo bench --bench sim

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kdsl::launch::{ArgValue, Array, Launch};
use kdsl::sim::{self, Checks, Program, PtxSource, SimOptions};
use kdsl::types::Scalar;
use std::path::PathBuf;
use std::time::Duration;

fn program(sample: &str) -> Program {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(format!("{sample}.kdsl"));
    let c = kdsl::compile(&path, &kdsl::Options::default()).expect("sample readable");
    let ptx = c.ptx.as_deref().expect("the sample compiles");
    let spans = PtxSource::Kdsl {
        line_spans: &c.ptx_line_spans,
    };
    sim::load(ptx, spans).expect("the sample loads")
}

fn floats(name: &str, n: usize) -> ArgValue {
    let data = (0..n)
        .flat_map(|i| ((i % 13) as f32 * 0.25).to_le_bytes())
        .collect();
    ArgValue::Array(Array {
        name: name.into(),
        elem: Scalar::F32,
        data,
        writable: true,
    })
}

fn u32v(v: u32) -> ArgValue {
    ArgValue::Scalar {
        ty: Scalar::U32,
        bits: u64::from(v),
    }
}

/// `name/checks` with every run-time check on (`kdslc sim`'s default) and
/// `name/no-checks` with them off (`--checks none`).
fn bench_one(c: &mut Criterion, name: &str, p: &Program, launch: &Launch) {
    for (suffix, checks) in [("checks", Checks::all()), ("no-checks", Checks::none())] {
        let opts = SimOptions {
            checks,
            jobs: 1,
            ..SimOptions::default()
        };
        let first = sim::run(p, launch, &opts);
        assert!(first.reports.is_empty(), "{name}: {:?}", first.reports);
        let steps = first.stats.steps;
        let mut g = c.benchmark_group("sim");
        g.throughput(Throughput::Elements(steps));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(20));
        g.bench_function(format!("{name}/{suffix}"), |b| {
            b.iter(|| sim::run(p, launch, &opts))
        });
        g.finish();
    }
}

fn benches(c: &mut Criterion) {
    let n = 256u32;
    let sgemm = program("sgemm_tiled");
    let launch = Launch {
        kernel: "sgemm_tiled".into(),
        grid: [n / 16, n / 16, 1],
        block: [16, 16, 1],
        cluster: [1, 1, 1],
        dynamic_shared: 0,
        cooperative: false,
        args: vec![
            floats("a", (n * n) as usize),
            floats("b", (n * n) as usize),
            floats("c", (n * n) as usize),
            u32v(n),
            u32v(n),
            u32v(n),
        ],
    };
    bench_one(c, "sgemm_tiled_256", &sgemm, &launch);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let jobs_checks = [1, 2, 4]
        .into_iter()
        .filter(|&j| j <= cores.max(2))
        .flat_map(|j| [(j, false), (j, true)]);
    for (jobs, checks) in jobs_checks {
        let opts = SimOptions {
            checks: if checks {
                Checks::all()
            } else {
                Checks::none()
            },
            jobs,
            ..SimOptions::default()
        };
        let which = if checks { "checks" } else { "no-checks" };
        let steps = sim::run(&sgemm, &launch, &opts).stats.steps;
        let mut g = c.benchmark_group("sim");
        g.throughput(Throughput::Elements(steps));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(20));
        g.bench_function(format!("sgemm_tiled_256/jobs-{jobs}/{which}"), |b| {
            b.iter(|| sim::run(&sgemm, &launch, &opts))
        });
        g.finish();
    }

    let pipeline = program("pipeline_sum");
    let (grid, chunks) = (64u32, 16u32);
    let launch = Launch {
        kernel: "pipeline_sum".into(),
        grid: [grid, 1, 1],
        block: [128, 1, 1],
        cluster: [1, 1, 1],
        dynamic_shared: 0,
        cooperative: false,
        args: vec![
            floats("x", (grid * chunks * 1024) as usize),
            floats("out", 1),
            u32v(chunks),
        ],
    };
    bench_one(c, "pipeline_sum_1m", &pipeline, &launch);

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hopper-ptx/gemm_g_40_232.ptx");
    let ptx = std::fs::read_to_string(&path).expect("the GEMM's PTX");
    let gemm = sim::signatures(&ptx).expect("the GEMM parses");
    let sig = gemm.first().expect("one kernel");
    let gemm_program = {
        let mut sources = kdsl::source::SourceMap::new();
        let file = sources.add(kdsl::source::SourceFile::new("gemm.ptx", None, &ptx));
        sim::load(
            &ptx,
            PtxSource::File {
                file,
                sources: &mut sources,
            },
        )
        .expect("the GEMM loads")
    };
    let n = 1024u32;
    let map = |name: &str, rows: u32, seed: u32, box_rows: u32| {
        let param = &sig.params[if name == "a" { 0 } else { 1 }];
        kdsl::launch::value::parse(
            param,
            &format!("tmap:bf16:rand:{rows},{n}:{seed}:box={box_rows},64:swizzle=128"),
        )
        .expect("a tensor map")
    };
    let launch = Launch {
        kernel: "gemm".into(),
        grid: [(n / 256) * (n / 128), 1, 1],
        block: [384, 1, 1],
        cluster: [1, 1, 1],
        dynamic_shared: 197_632,
        cooperative: false,
        args: vec![
            map("a", n, 1, 128),
            map("b", n, 2, 256),
            ArgValue::Array(Array {
                name: "c".into(),
                elem: Scalar::BF16,
                data: vec![0; (2 * n * n) as usize],
                writable: true,
            }),
            u32v(n),
            u32v(n),
            u32v(n),
        ],
    };
    bench_one(c, "hopper_gemm_1024", &gemm_program, &launch);

    // A thread issuing bulk stores in a loop, waiting only for all but its
    // newest two groups of 1024, keeps thousands of copies in flight;
    // under a random schedule each step lands one at random, in constant
    // time (it once cost a shift of the queue per step, quadratic in the
    // copies pending). The kernel is race-free (its buffer written and
    // fenced first, 4096 destinations each reused only after a wait): the
    // checks find nothing.
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry stores(.param .u64 out, .param .u32 n)\n{\n\
               \t.reg .pred %p<3>;\n\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<4>;\n\
               \t.shared .align 16 .b8 buf[64];\n\
               \tld.param.u64 %rd1, [out];\n\tld.param.u32 %r2, [n];\n\
               \tmov.u32 %r1, buf;\n\tmov.u32 %r3, 0;\n\
               \tst.shared.v4.u32 [%r1], {%r3, %r3, %r3, %r3};\n\
               \tst.shared.v4.u32 [%r1+16], {%r3, %r3, %r3, %r3};\n\
               \tst.shared.v4.u32 [%r1+32], {%r3, %r3, %r3, %r3};\n\
               \tst.shared.v4.u32 [%r1+48], {%r3, %r3, %r3, %r3};\n\
               \tfence.proxy.async.shared::cta;\n\
               L:\n\tand.b32 %r4, %r3, 4095;\n\tmul.wide.u32 %rd2, %r4, 64;\n\
               \tadd.s64 %rd3, %rd1, %rd2;\n\
               \tcp.async.bulk.global.shared::cta.bulk_group [%rd3], [%r1], 64;\n\
               \tand.b32 %r5, %r3, 1023;\n\tsetp.ne.u32 %p2, %r5, 1023;\n\t@%p2 bra NEXT;\n\
               \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 2;\n\
               NEXT:\n\tadd.u32 %r3, %r3, 1;\n\tsetp.lt.u32 %p1, %r3, %r2;\n\t@%p1 bra L;\n\
               \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n\tret;\n}\n";
    let stores = sim::load(ptx, PtxSource::Kdsl { line_spans: &[] }).expect("the stores load");
    let launch = Launch {
        kernel: "stores".into(),
        grid: [1, 1, 1],
        block: [1, 1, 1],
        cluster: [1, 1, 1],
        dynamic_shared: 0,
        cooperative: false,
        args: vec![floats("out", 16 * 4096), u32v(1 << 20)],
    };
    let opts = SimOptions {
        schedule: sim::Schedule::Random(1),
        ..SimOptions::default()
    };
    let first = sim::run(&stores, &launch, &opts);
    assert!(first.reports.is_empty(), "stores: {:?}", first.reports);
    let mut g = c.benchmark_group("sim");
    g.throughput(Throughput::Elements(first.stats.steps));
    g.sample_size(10);
    g.bench_function("bulk_stores_random_1m", |b| {
        b.iter(|| sim::run(&stores, &launch, &opts))
    });
    g.finish();
}

criterion_group!(sim_benches, benches);
criterion_main!(sim_benches);
