//! The optimisation passes change how a kernel computes, never what: every
//! `.kdsl` launch of `scripts/sim-launches.txt` (every sample and bench
//! kernel) runs in the simulator with the passes off and on, and every
//! array comes back bit for bit the same. The loop-exit test that needs no
//! pass (an unsigned `for` whose increment may wrap) is checked against a
//! Rust reference at the edges of the type, and so is the guarded shape of
//! the `while` loops a `return` leaves.

use crate::common::sim::*;
use crate::sim::cli::{kdsl_signature, request, table, target_of};
use kdsl::launch::{self, ArgValue, Origin};
use kdsl::opt::Passes;
use kdsl::sim::Schedule;
use kdsl::Options;
use std::path::Path;

#[test]
fn every_table_launch_computes_the_same_with_and_without_the_passes() {
    let mut rewritten = 0;
    for (file, flags) in table().iter().filter(|(f, _)| f.ends_with(".kdsl")) {
        let sig = kdsl_signature(file, flags);
        let l = launch::build(&sig, &request(flags, Origin::Kdsl)).expect("the launch builds");
        let opts = |passes| Options {
            target: target_of(flags),
            ..with_passes(passes)
        };
        let off = kdsl_file_with(Path::new(file), &opts(Passes::none()));
        let on = kdsl_file_with(Path::new(file), &opts(Passes::all()));
        let ptx = |opts: &Options| kdsl::compile(Path::new(file), opts).expect("reads").ptx;
        if ptx(&opts(Passes::none())) != ptx(&opts(Passes::all())) {
            rewritten += 1;
        }
        let (a, b) = (run_clean(&off, &l), run_clean(&on, &l));
        assert_eq!(a.arrays.len(), b.arrays.len());
        for (x, y) in a.arrays.iter().zip(&b.arrays) {
            assert!(
                x.data == y.data,
                "{file}: `{}` differs with the passes on",
                x.name
            );
        }
    }
    // The comparison means something only where the passes did something:
    // every sample with a warp reduction (most of them) is rewritten.
    assert!(rewritten >= 6, "only {rewritten} launches were rewritten");
}

#[test]
fn passes_are_deterministic() {
    for (file, flags) in table().iter().filter(|(f, _)| f.ends_with(".kdsl")) {
        let ptx = || {
            kdsl::compile(
                Path::new(file),
                &crate::common::for_target(target_of(flags)),
            )
            .expect("reads")
            .ptx
        };
        assert!(ptx().is_some(), "{file}");
        assert_eq!(ptx(), ptx(), "{file}");
    }
}

/// `for i in start..end step step` in one thread, its values and its trip
/// count written out; the loop variable must never wrap around.
const COUNT: &str = "kernel count(out: global mut [u32], start: u32, end: u32, by: u32) block(32) {
    if thread_idx.x == 0 {
        let mut k = 0u32;
        for i in start..end step by {
            if k < 8 { out[k] = i; }
            k += 1;
        }
        out[8] = k;
    }
}";

fn reference(start: u32, end: u32, step: u32) -> Vec<u32> {
    let mut out = vec![0u32; 9];
    let mut k = 0u32;
    let mut i = u64::from(start);
    while i < u64::from(end) {
        if k < 8 {
            out[k as usize] = i as u32;
        }
        k += 1;
        i += u64::from(step);
    }
    out[8] = k;
    out
}

#[test]
fn unsigned_for_loops_stop_before_wrapping_around() {
    let max = u32::MAX;
    let cases = [
        (max - 10, max, 4),
        (max - 1, max, 1),
        (0, max, 0x8000_0000),
        (0, max, max),
        (1, max, max - 1),
        (0, 7, 7),
        (0, 7, 8),
        (0, 100, 200),
        (5, 3, 1),
        (3, 10, 2),
        (max - 3, max, 3),
        (max - 4, max, 3),
    ];
    for passes in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("count.kdsl", COUNT, &with_passes(passes));
        for (start, end, step) in cases {
            let l = launch(
                "count",
                1,
                32,
                1,
                vec![u32s("out", &[0; 9]), u32v(start), u32v(end), u32v(step)],
            );
            let o = run_clean(&k, &l);
            let got = as_u32(&o.arrays[0]);
            assert_eq!(
                got,
                reference(start, end, step),
                "{start}..{end} step {step}"
            );
        }
    }
}

/// `while` loops that a `return` leaves, which the writer guards (a test
/// before the loop and one at its end, for ptxas 13.5: docs/architecture.md,
/// "ptxas workarounds"), with `continue`, `break`, a zero-trip case, a
/// condition that runs a statement, and one in a device function.
const WALK: &str = "fn find(t: u32, n: u32) -> u32 {
    let mut w = t;
    while w < n {
        if w % 11 == 3 {
            return w;
        }
        w += 2;
    }
    n
}

kernel walk(out: global mut [u32], n: u32, stop: u32) block(64) {
    let t = thread_idx.x;
    let mut h = find(t, n);
    for i in 0..4u32 {
        let mut w = t + i;
        while w < n {
            w += 3;
            if w % 5 == 0 {
                continue;
            }
            h = h * 31 + w;
            if h % 64 == stop {
                out[t] = h + 7;
                return;
            }
            if w % 7 == 1 {
                break;
            }
        }
        h = h ^ w;
        let mut v = i;
        while (if v % 2 == 0 { let q = v + t; q < n } else { v < n / 2 }) {
            v += 5;
            if v > 60 {
                out[t] = h ^ v;
                return;
            }
        }
        h += v;
    }
    out[t] = h;
}";

/// What [`WALK`] stores for thread `t`.
fn walk_reference(t: u32, n: u32, stop: u32) -> u32 {
    let mut h = {
        let mut w = t;
        loop {
            if w >= n {
                break n;
            }
            if w % 11 == 3 {
                break w;
            }
            w = w.wrapping_add(2);
        }
    };
    for i in 0..4u32 {
        let mut w = t + i;
        while w < n {
            w = w.wrapping_add(3);
            if w.is_multiple_of(5) {
                continue;
            }
            h = h.wrapping_mul(31).wrapping_add(w);
            if h % 64 == stop {
                return h.wrapping_add(7);
            }
            if w % 7 == 1 {
                break;
            }
        }
        h ^= w;
        let mut v = i;
        while if v.is_multiple_of(2) {
            v.wrapping_add(t) < n
        } else {
            v < n / 2
        } {
            v = v.wrapping_add(5);
            if v > 60 {
                return h ^ v;
            }
        }
        h = h.wrapping_add(v);
    }
    h
}

#[test]
fn while_loops_left_by_return_run_as_written() {
    for passes in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("walk.kdsl", WALK, &with_passes(passes));
        for n in [0, 1, 5, 40, 200, u32::MAX] {
            for stop in [3, 17, 64] {
                let l = launch(
                    "walk",
                    1,
                    64,
                    1,
                    vec![u32s("out", &[0; 64]), u32v(n), u32v(stop)],
                );
                let o = run_clean(&k, &l);
                let want: Vec<u32> = (0..64).map(|t| walk_reference(t, n, stop)).collect();
                assert_eq!(as_u32(&o.arrays[0]), want, "n = {n}, stop = {stop}");
            }
        }
    }
}

/// A streaming loop (`stream` unrolls it ×4 with a remainder) with an
/// order-sensitive hash of its values and of what it loads.
const STREAM: &str = "kernel stream(x: global [u32], out: global mut [u32], start: u32, end: u32, by: u32) block(32) {
    if thread_idx.x == 0 {
        let mut k = 0u32;
        let mut h = 7u32;
        for i in start..end step by {
            h = h * 31 + x[i % 64] + i;
            k += 1;
        }
        out[0] = k;
        out[1] = h;
    }
}";

fn stream_reference(x: &[u32], start: u32, end: u32, step: u32) -> Vec<u32> {
    let (mut k, mut h) = (0u32, 7u32);
    let mut i = u64::from(start);
    while i < u64::from(end) {
        let v = i as u32;
        h = h
            .wrapping_mul(31)
            .wrapping_add(x[(v % 64) as usize])
            .wrapping_add(v);
        k += 1;
        i += u64::from(step);
    }
    vec![k, h]
}

/// Runs the `stream` kernel (`STREAM`, hinted or not) over each
/// `(start, end, step)` and compares with [`stream_reference`].
fn assert_stream_runs(k: &Loaded, x: &[u32], cases: &[(u32, u32, u32)], what: &str) {
    for &(start, end, step) in cases {
        let l = launch(
            "stream",
            1,
            32,
            1,
            vec![
                u32s("x", x),
                u32s("out", &[0; 2]),
                u32v(start),
                u32v(end),
                u32v(step),
            ],
        );
        let o = run_clean(k, &l);
        assert_eq!(
            as_u32(&o.arrays[1]),
            stream_reference(x, start, end, step),
            "{what}{start}..{end} step {step}"
        );
    }
}

#[test]
fn streaming_loops_unrolled_by_four_run_every_iteration_in_order() {
    let max = u32::MAX;
    let x: Vec<u32> = (0..64u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
    let cases = [
        (0, 100, 1),
        (0, 100, 3),
        (5, 6, 1),
        (0, 3, 1),
        (0, 4, 1),
        (0, 5, 1),
        (0, 7, 1),
        (1, 8, 1),
        (0, 13, 2),
        (0, 31, 4),
        (9, 3, 1),
        (max - 40, max, 4),
        (max - 41, max, 10),
        (max - 20, max, 1),
        (max - 20, max, 2),
        (0, 0xD000_0000, 0x3000_0000),
        (0, 0xB000_0000, 0x5000_0000),
        (0, max, 0x4000_0000),
        (0x1000, 0x1000 + 4 * 77, 4),
    ];
    let mut unrolled = false;
    for passes in [Passes::none(), Passes::all()] {
        let c = kdsl::compile_str("stream.kdsl", STREAM, &with_passes(passes.clone()));
        unrolled |= c.ptx.is_some_and(|p| p.matches("ld.global").count() >= 5);
        let k = kdsl_str_with("stream.kdsl", STREAM, &with_passes(passes));
        assert_stream_runs(&k, &x, &cases, "");
    }
    assert!(unrolled, "the pass unrolled the loop");
}

/// `#[unroll(N)]` on the same streaming loop runs `N` copies per test for
/// every `N` (the ×4 pass generalised), at the edges of `u32` too, and
/// `#[unroll(1)]` keeps it a loop; each the same as without the passes.
#[test]
fn hinted_loops_run_every_iteration_in_order() {
    let max = u32::MAX;
    let x: Vec<u32> = (0..64u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
    let cases = [
        (0, 100, 1),
        (0, 100, 7),
        (0, 2, 1),
        (0, 17, 1),
        (3, 40, 3),
        (max - 40, max, 4),
        (max - 41, max, 10),
        (max - 20, max, 1),
        (0, 0xD000_0000, 0x3000_0000),
        (0, max, 0x1000_0000),
    ];
    for n in [1u32, 2, 3, 5, 8, 16] {
        let src = STREAM.replace("for i in", &format!("#[unroll({n})]\n        for i in"));
        let c = kdsl::compile_str("hinted.kdsl", &src, &Options::default());
        assert!(c.diagnostics.is_empty(), "{n}: {:?}", c.diagnostics);
        let loads = c.ptx.map_or(0, |p| p.matches("ld.global").count());
        // N copies plus the remainder's load; one load when kept a loop.
        let want = if n == 1 { 1 } else { n as usize + 1 };
        assert_eq!(loads, want, "#[unroll({n})]");
        for passes in [Passes::none(), Passes::all()] {
            let k = kdsl_str_with("hinted.kdsl", &src, &with_passes(passes.clone()));
            assert_stream_runs(&k, &x, &cases, &format!("#[unroll({n})] {passes:?}: "));
        }
    }
}

/// `#[unroll]` writes out a constant loop past the default limit of 16
/// iterations; the result is the loop's.
#[test]
fn full_unroll_hint_past_the_default_limit() {
    let src = "kernel full(x: global [u32], out: global mut [u32]) block(32) {
    let mut h = 7u32;
    #[unroll]
    for i in 0u32..40 {
        h = h * 31 + x[i];
    }
    out[thread_idx.x] = h;
}";
    let x: Vec<u32> = (0..40u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
    let want = x
        .iter()
        .fold(7u32, |h, v| h.wrapping_mul(31).wrapping_add(*v));
    let c = kdsl::compile_str("full.kdsl", src, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let ptx = c.ptx.expect("ptx");
    assert_eq!(ptx.matches("ld.global").count(), 40, "{ptx}");
    assert!(!ptx.contains("bra $L"), "a loop is left:\n{ptx}");
    for passes in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("full.kdsl", src, &with_passes(passes));
        let l = launch("full", 1, 32, 1, vec![u32s("x", &x), u32s("out", &[0; 32])]);
        let o = run_clean(&k, &l);
        assert!(as_u32(&o.arrays[1]).iter().all(|&h| h == want));
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// Generated loop nests: `for` loops over constant, thread-dependent and
/// run-time bounds and steps, shift and countdown `while` loops (some with
/// shuffles), global loads, shared stores and loads (each thread its own
/// row: no races), branches and barriers, all folded into an
/// order-sensitive hash per thread. Everything the passes look for, and
/// the shapes next to it they must leave alone.
struct Gen {
    rng: Rng,
    vars: Vec<String>,
    next: u32,
}

impl Gen {
    fn value(&mut self) -> String {
        // The innermost loop's variable half the time: the loops' own
        // indices are what the passes rewrite.
        let v = match self.vars.last() {
            Some(last) if self.rng.below(2) == 0 => last.clone(),
            _ => self.vars[self.rng.below(self.vars.len() as u64) as usize].clone(),
        };
        match self.rng.below(4) {
            0 => v,
            1 => format!("({v} + {}u32)", self.rng.below(5)),
            // An invariant base plus the loop variable: `stream` computes
            // the sum once an iteration.
            2 => format!("(tid * 5u32 + {v})"),
            _ => format!("({v} * 3u32)"),
        }
    }

    fn body(&mut self, depth: u32, uniform: bool, out: &mut String) {
        for _ in 0..1 + self.rng.below(3) {
            self.stmt(depth, uniform, out);
        }
    }

    fn stmt(&mut self, depth: u32, uniform: bool, out: &mut String) {
        let k = self.next;
        self.next += 1;
        let choice = if depth >= 2 {
            self.rng.below(4)
        } else {
            self.rng.below(8)
        };
        match choice {
            0 => {
                let v = self.value();
                out.push_str(&format!("h = h * 31u32 + x[{v} % 256u32] + {v};\n"));
            }
            1 => {
                let v = self.value();
                out.push_str(&format!("t[tid, {v} % 8u32] = h;\n"));
            }
            2 => {
                let v = self.value();
                out.push_str(&format!("h = (h ^ t[tid, ({v} + 1u32) % 8u32]) + 1u32;\n"));
            }
            3 => {
                let v = self.value();
                out.push_str(&format!(
                    "if {v} % 3u32 == 1u32 {{ h = h + x[({v} + 7u32) % 256u32]; }}\n"
                ));
            }
            4 | 5 => {
                let start = self
                    .rng
                    .pick(&["0u32", "tid", "tid % 8u32", "5u32", "lane_id"]);
                let end = self
                    .rng
                    .pick(&["0u32", "1u32", "8u32", "13u32", "40u32", "n", "n + 3u32"]);
                let step = self.rng.pick(&["1u32", "2u32", "5u32", "64u32", "s"]);
                let var = format!("i{k}");
                out.push_str(&format!("for {var} in {start}..{end} step {step} {{\n"));
                self.vars.push(var);
                // A thread-dependent start makes the loop divergent.
                let uniform = uniform && !start.contains("tid") && !start.contains("lane");
                self.body(depth + 1, uniform, out);
                self.vars.pop();
                out.push_str("}\n");
            }
            6 => {
                let var = format!("d{k}");
                let (init, next) = match self.rng.below(3) {
                    0 => (16, format!("{var} >> 1u32")),
                    1 => (4, format!("{var} - 1u32")),
                    _ => (20, format!("{var} - 1u32")),
                };
                out.push_str(&format!(
                    "let mut {var} = {init}u32;\nwhile {var} > 0u32 {{\n"
                ));
                self.vars.push(var.clone());
                if uniform && self.rng.below(2) == 0 {
                    out.push_str(&format!("h = h + shfl_down(h, {var} % 32u32);\n"));
                }
                self.body(depth + 1, uniform, out);
                self.vars.pop();
                out.push_str(&format!("{var} = {next};\n}}\n"));
            }
            _ => {
                if uniform && depth == 0 {
                    out.push_str("sync_threads();\n");
                } else {
                    out.push_str("h = h + 1u32;\n");
                }
            }
        }
    }

    fn kernel(&mut self) -> String {
        let mut body = String::new();
        self.vars = vec!["tid".to_string(), "h".to_string()];
        self.body(0, true, &mut body);
        format!(
            "kernel gen(x: global [u32], out: global mut [u32], n: u32, s: u32) block(64) {{
    shared t: [u32; 64, 8];
    let tid = thread_idx.x;
    let mut h = tid;
    for w in 0..8u32 {{ t[tid, w] = w; }}
{body}    out[block_idx.x * 64u32 + tid] = h;
}}"
        )
    }
}

#[test]
fn generated_loop_nests_compute_the_same_with_and_without_the_passes() {
    let x: Vec<u32> = (0..256u32)
        .map(|v| v.wrapping_mul(0x9e37_79b9) ^ 0x55)
        .collect();
    let mut g = Gen {
        rng: Rng(0x1234_5678_9abc_def1),
        vars: Vec::new(),
        next: 0,
    };
    let mut rewritten = [0; 3];
    for case in 0..60 {
        let src = g.kernel();
        let name = format!("gen{case}.kdsl");
        let c = |p: Passes| kdsl::compile_str(&name, &src, &with_passes(p));
        let (off_c, on_c) = (c(Passes::none()), c(Passes::all()));
        if off_c.error_count() > 0 {
            // The generator writes only valid programs: show the first bad one.
            panic!("{src}\n{:?}", off_c.diagnostics);
        }
        for (i, pass) in ["unroll", "stream", "licm"].iter().enumerate() {
            let one = c(Passes::parse(pass).expect("a pass"));
            rewritten[i] += usize::from(one.ptx != off_c.ptx);
        }
        assert!(on_c.ptx.is_some(), "{src}");
        let off = kdsl_str_with(&name, &src, &with_passes(Passes::none()));
        let on = kdsl_str_with(&name, &src, &with_passes(Passes::all()));
        for (n, s) in [(0u32, 1u32), (3, 3), (37, 1)] {
            let l = launch(
                "gen",
                2,
                64,
                1,
                vec![u32s("x", &x), u32s("out", &[0; 128]), u32v(n), u32v(s)],
            );
            let (a, b) = (run_clean(&off, &l), run_clean(&on, &l));
            assert!(
                a.arrays[1].data == b.arrays[1].data,
                "case {case}, n = {n}, s = {s}: results differ with the passes on:\n{src}"
            );
        }
    }
    // Each pass on its own found work in many of the programs (the first
    // loop of every program is unrolled, so `all` alone says little).
    for (pass, n) in ["unroll", "stream", "licm"].iter().zip(rewritten) {
        assert!(n >= 10, "`{pass}` rewrote only {n} of 60 programs");
    }
}

/// 64-bit indices that are sums of widened 32-bit values and constants
/// (what unrolled copies of a loop over `i as u64` index with): the writer
/// adds each widened term with one `mul.wide` and puts the constants in the
/// instruction's offset; the elements must be exactly those of the sum.
#[test]
fn widened_sums_as_global_indices_address_exactly() {
    let src = "kernel wide(x: global [u32], out: global mut [u32], k: i32) block(32) {
        let t = thread_idx.x;
        out[(t as u64) + 1u64 - 1u64] = x[(t as u64) + 1u64];
        out[(k as u64) + (t as u64) + 80u64] = x[2u64 + (t as u64) + (k as u64) + 16u64];
    }";
    let x: Vec<u32> = (0..64u32).map(|v| v * 7 + 1).collect();
    for passes in [Passes::none(), Passes::all()] {
        let kernel = kdsl_str_with("wide.kdsl", src, &with_passes(passes));
        let l = launch(
            "wide",
            1,
            32,
            1,
            vec![
                u32s("x", &x),
                u32s("out", &[0; 128]),
                ArgValue::Scalar {
                    ty: kdsl::types::Scalar::I32,
                    bits: u64::from((-16i32) as u32),
                },
            ],
        );
        let got = as_u32(&run_clean(&kernel, &l).arrays[1]);
        let mut want = vec![0u32; 128];
        want[..32].copy_from_slice(&x[1..33]);
        want[64..96].copy_from_slice(&x[2..34]);
        assert_eq!(got, want);
    }
}

/// A group of 40 barriers keeps its tracked parities in two 32-bit words,
/// read by shift-and-mask with a run-time index (`bar[i]`, `i` up to 39)
/// and a constant one: one thread publishes a value and arrives, the
/// others wait and read it, three phases of every barrier. A parity one
/// phase off lets a wait pass early and read a stale value (the explicit
/// `wait(0)` variant shows the test sees it).
#[test]
fn tracked_parity_in_two_words_waits_for_every_phase() {
    let src = "kernel phases(out: global mut [u32]) block(64) {
    barrier bar[40]: cta(arrivals = 1);
    shared s: [u32; 1];
    let mut acc = 0u32;
    for round in 0u32..3 {
        for i in 0u32..40 {
            if thread_idx.x == (i * 7 + round) % 64 {
                s[0] = round * 100 + i;
                bar[i].arrive();
            }
            bar[i].WAIT;
            acc += s[0];
            sync_threads();
        }
        if thread_idx.x == 5 {
            s[0] = 1000;
            bar[35].arrive();
        }
        bar[35].WAIT;
        acc += s[0];
        sync_threads();
    }
    out[thread_idx.x] = acc;
}
";
    let want: u32 = (0..3u32)
        .map(|r| (0..40u32).map(|i| r * 100 + i).sum::<u32>() + 1000)
        .sum();
    let out = |text: &str, passes: Passes, schedule| {
        let l = kdsl_str_with("phases.kdsl", text, &with_passes(passes));
        let launch = launch("phases", 1, 64, 1, vec![u32s("out", &[0; 64])]);
        let o = run_with(&l, &launch, schedule, 10_000_000);
        (o.reports.is_empty(), as_u32(&o.arrays[0]))
    };
    let good = src.replace("WAIT", "wait()");
    for passes in [Passes::all(), Passes::none()] {
        for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
            let (clean, got) = out(&good, passes.clone(), schedule);
            assert!(clean, "{schedule:?}: reports");
            assert!(got.iter().all(|&v| v == want), "{schedule:?}: {got:?}");
        }
    }
    let (clean, got) = out(
        &src.replace("WAIT", "wait(0)"),
        Passes::all(),
        Schedule::InOrder,
    );
    assert!(
        !clean || got.iter().any(|&v| v != want),
        "the broken variant passed"
    );
}
