//! Named barriers (`barrier b: named(threads = k)`) end to end: the ids and
//! the `.aligned`/non-`.aligned` forms the writer picks, ptxas on sm_80 and
//! sm_90, and the simulator: a producer/consumer handoff through
//! `arrive()`/`sync()` against a Rust reference under random schedules, the
//! valid test program, and the deadlock report of a consumer warp that
//! skips its arrival.

use crate::common::sim::*;
use crate::common::{assert_contains, for_target, ptxas};
use kdsl::sim::Schedule;
use kdsl::target::Target;
use kdsl::Options;
use std::path::Path;

fn ptx(src: &str, target: Target) -> String {
    let c = kdsl::compile_str("named.kdsl", src, &for_target(target));
    assert!(
        c.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        c.diagnostics
    );
    c.ptx.expect("PTX")
}

fn bar_lines(ptx: &str) -> Vec<String> {
    ptx.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("bar") || l.starts_with("barrier."))
        .map(String::from)
        .collect()
}

const HANDOFF: &str = "
kernel handoff(x: global [f32], y: global mut [f32]) block(256) {
    shared buf: [f32; 128];
    barrier other: named(threads = 64);
    barrier full: named(threads = 256);
    barrier stage[3]: named(threads = 256);
    if warp_id < 4 {
        buf[thread_idx.x] = x[block_idx.x * 128 + thread_idx.x] * 2.0;
        full.arrive();
    } else {
        full.sync();
        y[block_idx.x * 128 + thread_idx.x - 128] = buf[thread_idx.x - 128] + 1.0;
    }
    stage[2].sync();
    stage[block_idx.x % 3].sync();
    sync_threads();
}
";

/// Ids in declaration order from 1 (`other` 1, `full` 2, `stage` 3..=5),
/// `bar.sync 0` kept for `sync_threads()`, a run-time index as `id + i`
/// in a register; the `.aligned` forms under conditions uniform in each
/// warp, the non-`.aligned` ones under a condition that splits a warp or
/// after a `return`.
#[test]
fn ids_and_forms() {
    let text = ptx(HANDOFF, Target::Sm90);
    let lines = bar_lines(&text);
    assert_eq!(lines[0], "bar.arrive 2, 256;", "{lines:?}");
    assert_eq!(lines[1], "bar.sync 2, 256;", "{lines:?}");
    assert_eq!(lines[2], "bar.sync 5, 256;", "{lines:?}");
    assert!(
        lines[3].starts_with("bar.sync %r") && lines[3].ends_with(", 256;"),
        "{lines:?}"
    );
    assert_eq!(lines[4], "bar.sync 0;", "{lines:?}");
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(
        text.contains(", 3;"),
        "the index plus the group's first id:\n{text}"
    );

    let split = "
kernel split(n: u32) block(64) {
    barrier a: named(threads = 64);
    barrier b: named(threads = 64);
    if lane_id < 16 {
        a.arrive();
    }
    if n == 0 {
        return;
    }
    if warp_id == 1 {
        b.sync();
    }
}
";
    assert_eq!(
        bar_lines(&ptx(split, Target::Sm90)),
        ["barrier.arrive 1, 64;", "barrier.sync 2, 64;"]
    );
}

#[test]
fn ptxas_accepts_both_targets() {
    let Some(p) = ptxas::require_ptxas() else {
        return;
    };
    for t in [Target::Sm80, Target::Sm90] {
        let text = ptx(HANDOFF, t);
        ptxas::assemble(&p, &text, t.name()).unwrap_or_else(|e| panic!("{e}"));
    }
}

fn handoff_reference(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0 + 1.0).collect()
}

/// The producers' writes are visible to the consumers after the handoff,
/// whatever the interleaving.
#[test]
fn handoff_matches_reference() {
    let l = kdsl_str_with("handoff.kdsl", HANDOFF, &Options::default());
    let grid = 3u32;
    let x = rand_f32(128 * grid as usize, 5);
    let want = handoff_reference(&x);
    for schedule in [
        Schedule::InOrder,
        Schedule::Random(1),
        Schedule::Random(7),
        Schedule::Random(42),
    ] {
        let launch = launch(
            "handoff",
            grid,
            256,
            1,
            vec![f32s("x", &x), f32s("y", &vec![0.0; x.len()])],
        );
        let o = run_with(&l, &launch, schedule, 50_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let y = as_f32(&o.arrays[1]);
        assert_eq!(y, want, "{schedule:?}");
    }
}

/// `tests/valid/named_barriers.kdsl` runs to the same result under every
/// schedule.
#[test]
fn valid_program_runs() {
    let l = kdsl_file(Path::new("tests/valid/named_barriers.kdsl"));
    let x = rand_f32(512, 3);
    let mut first: Option<Vec<f32>> = None;
    for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(9)] {
        let launch = launch(
            "named_barriers",
            2,
            256,
            1,
            vec![f32s("x", &x), f32s("y", &[0.0; 512]), u32v(3)],
        );
        let o = run_with(&l, &launch, schedule, 50_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let y = as_f32(&o.arrays[1]);
        // y[t] = x[t - 128] (consumers) then + buf[255 - t] + 3.
        for t in 0..256usize {
            for b in 0..2usize {
                let base = if t >= 128 { x[b * 256 + t - 128] } else { 0.0 };
                let want = base + (x[b * 256 + 255 - t] + 3.0);
                assert_eq!(y[b * 256 + t], want, "block {b} thread {t} {schedule:?}");
            }
        }
        match &first {
            None => first = Some(y),
            Some(f) => assert_eq!(f, &y),
        }
    }
}

/// A consumer warp skips its arrival: the others wait forever, and the
/// deadlock report shows them at the named barrier with its count.
#[test]
fn skipped_arrival_deadlocks() {
    let broken = HANDOFF.replace(
        "    } else {\n        full.sync();",
        "    } else if warp_id != 7 {\n        full.sync();",
    );
    assert_ne!(broken, HANDOFF);
    let l = kdsl_str_with("handoff.kdsl", &broken, &Options::default());
    let x = rand_f32(128, 5);
    let launch = launch(
        "handoff",
        1,
        256,
        1,
        vec![f32s("x", &x), f32s("y", &[0.0; 128])],
    );
    let o = run(&l, &launch);
    let text = rendered(&l, &o);
    assert_contains(
        &text,
        &[
            "error[S0001]: deadlock",
            "at CTA barrier 2, where 224 of 256 threads arrived",
        ],
    );
}

/// A loop with a named barrier is synchronisation to the passes: it is not
/// unrolled (one `bar.sync` in the loop, not four), and the result is the
/// same with the passes on and off.
#[test]
fn loops_with_named_barriers_stay_loops() {
    let src = "
kernel rounds(y: global mut [u32]) block(64) {
    shared s: [u32; 64];
    barrier turn: named(threads = 64);
    s[thread_idx.x] = thread_idx.x;
    for r in 0u32..4 {
        turn.sync();
        let v = s[(thread_idx.x + 1) % 64];
        turn.sync();
        s[thread_idx.x] = v + r;
    }
    y[thread_idx.x] = s[thread_idx.x];
}
";
    let text = ptx(src, Target::Sm90);
    assert_eq!(bar_lines(&text), ["bar.sync 1, 64;", "bar.sync 1, 64;"]);
    let want: Vec<u32> = (0..64u32).map(|t| (t + 4) % 64 + 6).collect();
    for passes in [kdsl::opt::Passes::all(), kdsl::opt::Passes::none()] {
        let opts = Options {
            passes,
            ..Options::default()
        };
        let l = kdsl_str_with("rounds.kdsl", src, &opts);
        for schedule in [Schedule::InOrder, Schedule::Random(11)] {
            let launch = launch("rounds", 1, 64, 1, vec![u32s("y", &[0; 64])]);
            let o = run_with(&l, &launch, schedule, 10_000_000);
            assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
            assert_eq!(as_u32(&o.arrays[0]), want, "{schedule:?}");
        }
    }
}

/// The sample under random schedules: one sum per chunk.
#[test]
fn ws_named_sample_under_random_schedules() {
    let l = kdsl_file(Path::new("samples/ws_named.kdsl"));
    let (grid, chunks) = (2u32, 6u32);
    let x = rand_f32((grid * chunks * 8192) as usize, 21);
    let sig = l.program.signature("ws_named").expect("the kernel");
    // The barrier groups padded to 128 bytes, the ring, `partial`; the named
    // barrier takes no memory.
    assert_eq!(sig.dynamic_shared, Some(128 + 4 * 32768 + 128));
    for schedule in [Schedule::Random(1), Schedule::Random(2)] {
        let mut launch = launch(
            "ws_named",
            grid,
            288,
            1,
            vec![f32s("x", &x), f32s("out", &[0.0; 12]), u32v(chunks)],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let o = run_with(&l, &launch, schedule, 100_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let out = as_f32(&o.arrays[1]);
        for c in 0..(grid * chunks) as usize {
            let want: f64 = x[c * 8192..(c + 1) * 8192]
                .iter()
                .map(|&v| f64::from(v))
                .sum();
            let got = f64::from(out[c]);
            assert!(
                (got - want).abs() <= 1e-4 * want.abs(),
                "chunk {c}: {got} vs {want}"
            );
        }
    }
}

/// Threads arrive at a CTA barrier a warp at a time: a warp's arrival is
/// marked once every lane of it that has not exited arrived, and counts 32
/// threads towards a barrier's count even when the warp is partial (a
/// block of 48: warp 1 has 16 threads and completes a phase of 32 alone).
/// Lanes that exited do not hold their warp back.
#[test]
fn arrivals_count_whole_warps() {
    let src = "
kernel warps(y: global mut [u32]) block(48) {
    barrier b: named(threads = 32);
    if thread_idx.x % 32 >= 24 {
        return;
    }
    b.sync();
    b.sync();
    y[thread_idx.x] = thread_idx.x + 1;
}
";
    let l = kdsl_str_with("warps.kdsl", src, &Options::default());
    let want: Vec<u32> = (0..48u32)
        .map(|t| if t % 32 >= 24 { 0 } else { t + 1 })
        .collect();
    for schedule in [Schedule::InOrder, Schedule::Random(5), Schedule::Random(6)] {
        let launch = launch("warps", 1, 48, 1, vec![u32s("y", &[0; 48])]);
        let o = run_with(&l, &launch, schedule, 10_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        assert_eq!(as_u32(&o.arrays[0]), want, "{schedule:?}");
    }
}

/// A two-phase hand-off on one named barrier (id 1, 64 threads): warp 1
/// publishes and arrives (phase 0), then syncs on the same barrier
/// (phase 1) for warp 0's answer; warp 0 syncs (phase 0), answers after a
/// warp-wide barrier and arrives (phase 1). In order, warp 0 is at its
/// sync first (as at a launch on a GPU); warp 1's lanes then arrive and
/// sync one after another, so lane 32's sync comes before lane 33's
/// arrival: it is the warp's next arrival, not part of the one its
/// warpmates are still making. (Before, it was merged into that one and
/// released with phase 0: warp 1 read the answer before it was written.)
/// A random schedule may let warp 1 arrive twice before warp 0's sync —
/// completing phase 0 without warp 0, as on a GPU: see below.
#[test]
fn two_phase_handoff_on_one_barrier() {
    let ptx = r".version 8.0
.target sm_90
.address_size 64

.visible .entry t(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b32 buf[64];
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, %tid.x;
	and.b32 %r2, %r1, 31;
	shl.b32 %r3, %r2, 2;
	mov.u32 %r4, buf;
	add.u32 %r4, %r4, %r3;
	setp.lt.u32 %p1, %r1, 32;
	@%p1 bra CONSUMER;
	add.u32 %r5, %r2, 100;
	st.shared.u32 [%r4], %r5;
	bar.arrive 1, 64;
	bar.sync 1, 64;
	ld.shared.u32 %r6, [%r4+128];
	mul.wide.u32 %rd1, %r2, 4;
	add.s64 %rd2, %rd0, %rd1;
	st.global.u32 [%rd2], %r6;
	ret;
CONSUMER:
	bar.sync 1, 64;
	ld.shared.u32 %r5, [%r4];
	mul.lo.u32 %r6, %r5, 3;
	bar.sync 2, 32;
	st.shared.u32 [%r4+128], %r6;
	bar.arrive 1, 64;
	ret;
}
";
    let k = ptx_str("two_phase.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 1, 64, 1, vec![u32s("out", &[0; 32])]);
    let want: Vec<u32> = (0..32).map(|l| (l + 100) * 3).collect();
    let o = run_with(&k, &l, Schedule::InOrder, 1_000_000);
    assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
    assert_eq!(as_u32(&o.arrays[0]), want);
    // Under random schedules: whenever warp 0 is at its sync before warp
    // 1 has made both arrivals, however the lanes of each warp
    // interleave, the hand-off completes without a report and with the
    // same results (the per-warp arrival record keeps the two phases
    // apart). When warp 1 runs ahead, its two arrivals complete phase 0
    // by themselves, as on a GPU: it reads the answer nothing wrote yet
    // (S0032), and warp 0's sync waits for a phase no thread will
    // complete (S0001) — the reports of the schedule that ran, never a
    // deadlock of the hand-off that did happen.
    let (mut clean, mut ahead) = (0, 0);
    for seed in 0..12 {
        let o = run_with(&k, &l, Schedule::Random(seed), 1_000_000);
        let text = rendered(&k, &o);
        if o.reports.is_empty() {
            assert_eq!(as_u32(&o.arrays[0]), want, "random:{seed}");
            clean += 1;
        } else {
            assert_eq!(
                report_codes(&o),
                ["S0032", "S0001"],
                "random:{seed}:\n{text}"
            );
            assert!(
                text.contains(
                    "threads 0..31 wait at CTA barrier 1, where 32 of 64 threads arrived"
                ) && text.contains("threads 32..63 exited"),
                "random:{seed}:\n{text}"
            );
            ahead += 1;
        }
    }
    assert!(clean >= 6 && ahead >= 1, "{clean} clean, {ahead} ahead");
}
