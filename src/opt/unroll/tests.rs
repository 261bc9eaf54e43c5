//! The IR the pass leaves, on compiled kernels: what is unrolled, what is
//! not, and the verifier's verdict.

use crate::ir::{print, verify};
use crate::opt::special;
use crate::opt::tests::{after_pass, checked};

/// The IR after the unrolling pass (verified), and whether it changed.
fn unrolled(src: &str) -> (String, bool) {
    after_pass(super::run, src)
}

#[test]
fn shift_recurrence_while_loop_becomes_copies_with_constant_offsets() {
    let (ir, changed) = unrolled(
        "kernel k(out: global mut [f32]) block(32) {
            let mut acc = 1.0;
            let mut d = 16u32;
            while d > 0 { acc += shfl_down(acc, d); d = d >> 1; }
            out[thread_idx.x + d] = acc;
        }",
    );
    assert!(changed);
    assert!(!ir.contains("while"), "{ir}");
    for c in [16, 8, 4, 2, 1] {
        assert!(ir.contains(&format!("shfl_down(%0, {c}u32)")), "{ir}");
    }
    // The local keeps its last value for reads after the loop.
    assert!(ir.contains("%1 = 0u32"), "{ir}");
}

#[test]
fn for_loop_with_the_same_trip_count_in_every_thread_is_unrolled() {
    // thread_idx.x < 128: every thread runs i = tid, tid+128, ..., 8 times.
    let (ir, changed) = unrolled(
        "kernel k(out: global mut [f32]) block(128) {
            shared buf: [f32; 1024];
            let tid = thread_idx.x;
            let mut acc = 0.0;
            for i in tid..1024 step 128 { let x = buf[i]; acc += x; }
            out[tid] = acc;
        }",
    );
    assert!(changed);
    assert!(!ir.contains("for "), "{ir}");
    // One evaluation of the start, then `start + k*128` in copy k.
    assert!(ir.contains("let %4 $t4: u32 = %0"), "{ir}");
    assert!(
        ir.contains("buf[%4]") && ir.contains("buf[(%4 + 128u32)]"),
        "{ir}"
    );
    assert!(ir.contains(" + 896u32)]"), "{ir}");
    assert!(!ir.contains(" + 1024u32)]"), "{ir}");
    // Each copy declares its own fresh local for `x`.
    assert_eq!(ir.matches("let %").count(), 3 + 8, "{ir}");
    assert!(!ir.contains(" x: f32"), "{ir}");
}

#[test]
fn constant_for_loop_gets_constant_indices() {
    let (ir, _) = unrolled(
        "kernel k(out: global mut [u32]) block(32) {
            let mut s = 0u32;
            for w in 1..4u32 { s += w * w; }
            out[0] = s;
        }",
    );
    assert!(
        ir.contains("(1u32 * 1u32)") && ir.contains("(3u32 * 3u32)"),
        "{ir}"
    );
    assert!(!ir.contains("4u32 * 4u32"), "{ir}");
}

#[test]
fn loops_that_do_not_qualify_are_left_alone() {
    for (what, src) in [
        (
            "a trip count that differs between threads",
            "kernel k(out: global mut [u32]) block(128) {
                for i in thread_idx.x..1000 step 100 { out[i] = i; }
            }",
        ),
        (
            "a run-time bound",
            "kernel k(out: global mut [u32], n: u32) block(32) {
                for i in 0..n { out[i] = i; }
            }",
        ),
        (
            "a break",
            "kernel k(out: global mut [u32]) block(32) {
                for i in 0..4u32 { if out[i] == 0 { break; } out[i] = i; }
            }",
        ),
        (
            "a barrier",
            "kernel k(out: global mut [u32]) block(32) {
                shared t: [u32; 32];
                for i in 0..4u32 { t[thread_idx.x] = i; sync_threads(); out[i] = t[0]; }
            }",
        ),
        (
            "too many iterations",
            "kernel k(out: global mut [u32]) block(32) {
                for i in 0..17u32 { out[i] = i; }
            }",
        ),
        (
            "a while loop whose local is changed before it by a branch",
            "kernel k(out: global mut [u32]) block(32) {
                let mut d = 4u32;
                if thread_idx.x == 0 { d = 2; }
                while d > 0 { out[d] = d; d = d >> 1; }
            }",
        ),
        (
            "a while loop that assigns its local in the middle",
            "kernel k(out: global mut [u32]) block(32) {
                let mut d = 4u32;
                while d > 0 { d = d - 1; out[d] = d; d = d >> 1; }
            }",
        ),
    ] {
        let before = print::print(&checked(src));
        let (after, changed) = unrolled(src);
        assert!(!changed, "{what}:\n{after}");
        assert_eq!(before, after, "{what}");
    }
}

#[test]
fn special_registers_follow_the_block_shape() {
    let src = |shape: &str| {
        format!(
            "kernel k(out: global mut [u32]) block({shape}) {{
                out[warp_id * 32 + lane_id] = lane_id;
            }}"
        )
    };
    let mut m = checked(&src("64"));
    assert!(special::run(&mut m));
    verify::module(&m, verify::Mode::Complete).expect("verifies");
    let ir = print::print(&m);
    assert!(
        ir.contains("(thread_idx.x & 31u32)") && ir.contains("(thread_idx.x >> 5u32)"),
        "{ir}"
    );
    // 2-D: the lane still, not the warp.
    let mut m = checked(&src("32, 2"));
    assert!(special::run(&mut m));
    let ir = print::print(&m);
    assert!(
        ir.contains("(thread_idx.x & 31u32)") && ir.contains("warp_id"),
        "{ir}"
    );
    // Not a multiple of 32: neither.
    let mut m = checked(&src("48"));
    assert!(!special::run(&mut m));
}
