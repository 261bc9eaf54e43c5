//! The IR the pass leaves on compiled kernels, verified.

use crate::ir::print;
use crate::opt::tests::{after_pass, checked};

/// The IR after the pass (verified), and whether it changed.
fn streamed(src: &str) -> (String, bool) {
    after_pass(super::run, src)
}

#[test]
fn grid_stride_loop_becomes_four_copies_and_a_remainder() {
    let (ir, changed) = streamed(
        "kernel k(x: global [f32], out: global mut [f32], n: u32) block(256) {
            let mut acc = 0.0;
            for i in block_idx.x * 256 + thread_idx.x..n step grid_dim.x * 256 {
                acc += x[i];
            }
            out[block_idx.x] = acc;
        }",
    );
    assert!(changed);
    // start, end and step evaluated once, in that order.
    let first = |s: &str| ir.find(s).unwrap_or(usize::MAX);
    let order = [
        first("let %2 $t2: u32 = ((block_idx.x * 256u32) + thread_idx.x)"),
        first("let %3 $t3: u32 = n\n"),
        first("let %4 $t4: u32 = (grid_dim.x * 256u32)"),
        first("while ("),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{ir}");
    assert_eq!(
        ir.matches("x[").count(),
        5,
        "four copies and the remainder:\n{ir}"
    );
    assert_eq!(ir.matches("while (").count(), 1, "{ir}");
    assert_eq!(ir.matches("for ").count(), 1, "{ir}");
    // The copies add to one accumulator in the loop's order.
    let adds: Vec<usize> = ir.match_indices("(%0 + x[").map(|(i, _)| i).collect();
    assert_eq!(adds.len(), 5, "{ir}");
}

#[test]
fn loops_that_do_not_stream_are_left_alone() {
    for (what, src) in [
        (
            "no global load",
            "kernel k(out: global mut [u32], n: u32) block(32) {
                for i in thread_idx.x..n step 32 { out[i] = i; }
            }",
        ),
        (
            "a signed loop",
            "kernel k(x: global [f32], out: global mut [f32], n: i32) block(32) {
                let mut a = 0.0;
                for i in 0..n { a += x[i]; }
                out[0] = a;
            }",
        ),
        (
            "a barrier",
            "kernel k(x: global [f32], out: global mut [f32], n: u32) block(32) {
                shared t: [f32; 32];
                for i in 0..n { t[thread_idx.x] = x[i]; sync_threads(); out[i] = t[0]; }
            }",
        ),
        (
            "a break",
            "kernel k(x: global [f32], out: global mut [f32], n: u32) block(32) {
                for i in 0..n { if x[i] > 0.0 { break; } out[i] = 1.0; }
            }",
        ),
        (
            "an inner loop",
            "kernel k(x: global [f32], out: global mut [f32], n: u32, m: u32) block(32) {
                for i in 0..n { for j in 0..m { out[j] = x[i]; } }
            }",
        ),
    ] {
        let before = print::print(&checked(src));
        let (after, changed) = streamed(src);
        if what == "an inner loop" {
            // The inner loop streams; the outer one, with a loop in it, not.
            assert!(changed && after.contains("for %0 i"), "{what}:\n{after}");
            continue;
        }
        assert!(!changed, "{what}:\n{after}");
        assert_eq!(before, after, "{what}");
    }
}

#[test]
fn an_invariant_base_plus_the_index_is_summed_once_an_iteration() {
    let (ir, changed) = streamed(
        "kernel k(x: global [f32], out: global mut [f32], cols: u32) block(256) {
            let base = block_idx.x * cols;
            let mut m = 0.0;
            for i in thread_idx.x..cols step 256 { m = max(m, x[base + i]); }
            out[block_idx.x] = m;
        }",
    );
    assert!(changed);
    // One `base + $i` in the unrolled loop, the copies add 256, 512, 768.
    assert!(ir.contains("= (%0 + %"), "{ir}");
    for k in [256, 512, 768] {
        assert!(ir.contains(&format!(" + {k}u32)]")), "{ir}");
    }
    // The remainder loop keeps the original index.
    assert!(ir.contains("x[(%0 + %2)]"), "{ir}");
}
