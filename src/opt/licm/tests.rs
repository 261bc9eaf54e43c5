//! The IR the pass leaves on compiled kernels, verified.

use crate::ir::print;
use crate::opt::tests::{after_pass, checked};

/// The IR after the pass (verified), and whether it changed.
fn hoisted(src: &str) -> (String, bool) {
    after_pass(super::run, src)
}

#[test]
fn invariant_addresses_are_computed_once_before_the_loop() {
    let (ir, changed) = hoisted(
        "kernel k(out: global mut [f32], n: u32) block(16, 16) {
            shared t: [f32; 16, 16];
            let tx = thread_idx.x;
            let ty = thread_idx.y;
            let mut acc = 0.0;
            for i in 0..n {
                t[ty, tx] = (i as f32);
                sync_threads();
                acc += t[ty, 0] + t[ty, 3] + t[tx, i % 16] + t[ty + 1, tx];
                sync_threads();
            }
            out[ty * 16 + tx] = acc;
        }",
    );
    assert!(changed);
    let lets: Vec<&str> = ir.lines().filter(|l| l.contains(" = &t[")).collect();
    // t[ty, tx] and t[ty + 1, tx] share one base; t[ty, 0] and t[ty, 3]
    // another; t[tx, i % 16] varies.
    assert_eq!(lets.len(), 2, "{ir}");
    let loop_at = ir.find("for ").expect("the loop");
    assert!(
        lets.iter().all(|l| ir.find(l).is_some_and(|p| p < loop_at)),
        "{ir}"
    );
    assert!(ir.contains("t[%0, (%3 % 16u32)]"), "{ir}");
    assert!(ir.contains(" + 12u32)]"), "t[ty, 3]: 12 bytes on:\n{ir}");
    assert!(ir.contains(" + 64u32)]"), "t[ty + 1, tx]: a row on:\n{ir}");
    // The barriers and the accesses stay where they were.
    assert_eq!(ir.matches("sync_threads").count(), 2, "{ir}");
}

#[test]
fn addresses_that_change_or_are_constant_stay() {
    for (what, src) in [
        (
            "an index the loop assigns",
            "kernel k(out: global mut [f32], n: u32) block(32) {
                shared t: [f32; 64];
                let mut j = thread_idx.x;
                for i in 0..n { t[j] = 1.0; j = (j + 1) % 64; }
                out[0] = t[0];
            }",
        ),
        (
            "a constant index",
            "kernel k(out: global mut [f32], n: u32) block(32) {
                shared t: [f32; 64];
                for i in 0..n { t[3] = (i as f32); }
                out[0] = t[3];
            }",
        ),
        (
            "an atomic",
            "kernel k(out: global mut [u32], n: u32) block(32) {
                shared t: [u32; 32];
                for i in 0..n { atomic_add(t[thread_idx.x], 1u32); }
                out[0] = t[0];
            }",
        ),
        (
            "no loop",
            "kernel k(out: global mut [f32]) block(32) {
                shared t: [f32; 32];
                t[thread_idx.x] = 1.0;
                out[0] = t[thread_idx.x];
            }",
        ),
    ] {
        let before = print::print(&checked(src));
        let (after, changed) = hoisted(src);
        assert!(!changed, "{what}:\n{after}");
        assert_eq!(before, after, "{what}");
    }
}
