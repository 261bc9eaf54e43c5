//! The optimisation passes change how a kernel computes, never what: every
//! `.kdsl` launch of `scripts/sim-launches.txt` (every sample and bench
//! kernel) runs in the simulator with the passes off and on, and every
//! array comes back bit for bit the same. The loop-exit test that needs no
//! pass (an unsigned `for` whose increment may wrap) is checked against a
//! Rust reference at the edges of the type.

use crate::sim_cli::{kdsl_signature, request, table};
use crate::sim_support::*;
use kdsl::launch::{self, Origin};
use kdsl::opt::Passes;
use kdsl::Options;
use std::path::Path;

fn with(passes: Passes) -> Options {
    Options {
        passes,
        ..Options::default()
    }
}

#[test]
fn every_table_launch_computes_the_same_with_and_without_the_passes() {
    let mut rewritten = 0;
    for (file, flags) in table().iter().filter(|(f, _)| f.ends_with(".kdsl")) {
        let sig = kdsl_signature(file);
        let l = launch::build(&sig, &request(flags, Origin::Kdsl)).expect("the launch builds");
        let off = kdsl_file_with(Path::new(file), &with(Passes::none()));
        let on = kdsl_file_with(Path::new(file), &with(Passes::all()));
        let ptx = |opts: &Options| kdsl::compile(Path::new(file), opts).expect("reads").ptx;
        if ptx(&with(Passes::none())) != ptx(&with(Passes::all())) {
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
    for (file, _) in table().iter().filter(|(f, _)| f.ends_with(".kdsl")) {
        let ptx = || {
            kdsl::compile(Path::new(file), &Options::default())
                .expect("reads")
                .ptx
        };
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
        let k = kdsl_str_with("count.kdsl", COUNT, &with(passes));
        for (start, end, step) in cases {
            let l = launch(
                "count",
                [1, 1, 1],
                [32, 1, 1],
                [1, 1, 1],
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
        let c = kdsl::compile_str("stream.kdsl", STREAM, &with(passes.clone()));
        unrolled |= c.ptx.is_some_and(|p| p.matches("ld.global").count() >= 5);
        let k = kdsl_str_with("stream.kdsl", STREAM, &with(passes));
        for (start, end, step) in cases {
            let l = launch(
                "stream",
                [1, 1, 1],
                [32, 1, 1],
                [1, 1, 1],
                vec![
                    u32s("x", &x),
                    u32s("out", &[0; 2]),
                    u32v(start),
                    u32v(end),
                    u32v(step),
                ],
            );
            let o = run_clean(&k, &l);
            assert_eq!(
                as_u32(&o.arrays[1]),
                stream_reference(&x, start, end, step),
                "{start}..{end} step {step}"
            );
        }
    }
    assert!(unrolled, "the pass unrolled the loop");
}
