//! The barrier pass, end to end: kdsl source in, diagnostics out. Each test
//! checks codes, exact first lines, and what the labels and fixes cover (by
//! slicing the source with their spans); the last tests compile correct
//! kernels and expect no barrier diagnostic at all.

use crate::common::{kdsl_files, repo_root};
use kdsl::diagnostics::{Diagnostic, Severity};
use std::path::PathBuf;

fn compile(src: &str) -> Vec<Diagnostic> {
    let opts = kdsl::Options {
        check_only: true,
        ..kdsl::Options::default()
    };
    kdsl::compile_str("t.kdsl", src, &opts).diagnostics
}

fn text(src: &str, span: kdsl::span::Span) -> &str {
    src.get(span.range())
        .unwrap_or_else(|| panic!("span {span:?} is not in the source"))
}

fn primary<'s>(src: &'s str, d: &Diagnostic) -> &'s str {
    text(src, d.primary_span().expect("a primary label"))
}

/// The texts of the secondary labels.
fn secondaries<'s>(src: &'s str, d: &Diagnostic) -> Vec<&'s str> {
    d.labels
        .iter()
        .filter(|l| !l.primary)
        .map(|l| text(src, l.span))
        .collect()
}

fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code).collect()
}

/// Exactly these codes, in source order.
#[track_caller]
fn expect_codes(src: &str, want: &[&str]) -> Vec<Diagnostic> {
    let diags = compile(src);
    assert_eq!(codes(&diags), want, "diagnostics: {diags:#?}");
    diags
}

/// Exactly one diagnostic, with this code.
#[track_caller]
fn only(src: &str, code: &str) -> Diagnostic {
    let mut diags = expect_codes(src, &[code]);
    diags.remove(0)
}

#[track_caller]
fn clean(name: &str, src: &str) {
    let diags = compile(src);
    assert!(
        diags.is_empty(),
        "{name}: expected no diagnostics, got {diags:#?}"
    );
}

// ---------------------------------------------------------------- E0301

#[test]
fn e0301_wait_on_cluster_group() {
    let src = "kernel k(out: global mut [f32]) block(128) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    if cluster_rank == 1 {
        ready.arrive_remote(0);
    } else {
        ready.wait(0);
        out[0] = 1.0;
    }
}";
    let d = only(src, "E0301");
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(d.message, "Can only await on CTA-local barriers");
    assert_eq!(primary(src, &d), "ready.wait(0)");
    // The scope, and the operation that keeps it cluster.
    assert_eq!(secondaries(src, &d), ["cluster", "arrive_remote"]);
    assert_eq!(
        d.labels
            .iter()
            .find(|l| !l.primary)
            .map(|l| l.message.as_str()),
        Some("declared with scope `cluster` here")
    );
    // The fixes are the help, said once: no line of prose repeats them.
    assert!(d.help.is_empty(), "{:?}", d.help);
    assert!(
        d.fixes.iter().any(|f| f.message.contains("wait_cluster")),
        "{:?}",
        d.fixes
    );
    let fixes: Vec<(&str, &str)> = d
        .fixes
        .iter()
        .map(|f| {
            assert_eq!(f.edits.len(), 1);
            (text(src, f.edits[0].span), f.edits[0].replacement.as_str())
        })
        .collect();
    // Not "declare the group `cta`": `arrive_remote` needs scope `cluster`,
    // so that fix would lead into E0307.
    assert_eq!(fixes, [("wait", "wait_cluster")]);
}

#[test]
fn e0301_test_and_tracked_wait() {
    let src = "kernel k(out: global mut [u32]) block(128) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    if thread_idx.x == 0 { ready.arrive(); }
    let done = ready.test();
    ready.wait();
    let again = ready.test(1);
    out[0] = select(done && again, 1, 0);
}";
    let diags = expect_codes(src, &["E0301", "E0301", "E0301"]);
    let calls: Vec<&str> = diags.iter().map(|d| primary(src, d)).collect();
    assert_eq!(calls, ["ready.test()", "ready.wait()", "ready.test(1)"]);
    let want = [
        ["test_cluster", "cta"],
        ["wait_cluster", "cta"],
        ["test_cluster", "cta"],
    ];
    for (d, want) in diags.iter().zip(want) {
        // Tracked and explicit parities alike have a cluster-acquire
        // spelling; nothing in the kernel needs scope `cluster`, so the
        // scope fix is offered too.
        let edits: Vec<&str> = d
            .fixes
            .iter()
            .flat_map(|f| &f.edits)
            .map(|e| e.replacement.as_str())
            .collect();
        assert_eq!(edits, want);
        assert_eq!(secondaries(src, d), ["cluster"]);
    }
}

// ---------------------------------------------------------------- E0303 / E0305

#[test]
fn e0303_unindexed_reference_to_a_group() {
    let src = "kernel k(out: global mut [f32]) block(32) {
    barrier full[2]: cta(arrivals = 32);
    full.arrive();
    full[0].wait();
    out[0] = 1.0;
}";
    let d = only(src, "E0303");
    assert_eq!(
        d.message,
        "operation on barrier group `full` without an index"
    );
    assert_eq!(primary(src, &d), "full");
    assert_eq!(
        d.primary_span().map(|s| s.start),
        src.find("full.arrive").map(|p| p as u32)
    );
    assert_eq!(secondaries(src, &d), ["2"]);
}

#[test]
fn unindexed_group_of_one_is_fine() {
    clean(
        "group of one",
        "kernel k(out: global mut [f32]) block(32) {
    barrier done: cta(arrivals = 32);
    done.arrive();
    done[0].wait();
    out[0] = 1.0;
}",
    );
}

#[test]
fn e0305_constant_index_out_of_bounds() {
    let src = "const LAST: u32 = 2;
kernel k(x: global [f32], out: global mut [f32]) block(32) {
    shared buf: [f32; 64];
    barrier full[2]: cta(arrivals = 32);
    full[1].arrive();
    full[LAST].arrive();
    if thread_idx.x == 0 {
        full[0].arrive_expect_tx(256);
        copy_async(buf[0], x[0], 256, full[1 + 4]);
    }
    let ok = full[0].test(0);
    out[0] = select(ok, 1.0, 0.0);
}";
    let diags = expect_codes(src, &["E0305", "E0305"]);
    assert_eq!(
        diags[0].message,
        "barrier index 2 is out of bounds for group `full` of 2 barriers"
    );
    assert_eq!(primary(src, &diags[0]), "LAST");
    assert_eq!(
        diags[1].message,
        "barrier index 5 is out of bounds for group `full` of 2 barriers"
    );
    assert_eq!(primary(src, &diags[1]), "1 + 4");
    assert_eq!(secondaries(src, &diags[1]), ["2"]);
}

// ---------------------------------------------------------------- E0307

#[test]
fn e0307_cluster_operations_on_a_cta_group() {
    let src = "kernel k(out: global mut [f32]) block(32) cluster(2) {
    barrier local: cta(arrivals = 1);
    if cluster_rank == 1 {
        local.arrive_remote(0);
    } else {
        local.wait_cluster(0);
    }
    out[0] = 1.0;
}";
    let diags = expect_codes(src, &["E0307", "E0307"]);
    assert_eq!(
        diags[0].message,
        "`arrive_remote` requires a cluster-scope barrier"
    );
    assert_eq!(primary(src, &diags[0]), "local.arrive_remote(0)");
    assert_eq!(
        diags[1].message,
        "`wait_cluster` requires a cluster-scope barrier"
    );
    assert_eq!(primary(src, &diags[1]), "local.wait_cluster(0)");
    for d in &diags {
        assert_eq!(secondaries(src, d), ["cta"]);
        let fix = &d.fixes[0];
        assert_eq!(
            (
                text(src, fix.edits[0].span),
                fix.edits[0].replacement.as_str()
            ),
            ("cta", "cluster")
        );
    }
}

// ---------------------------------------------------------------- E0309 / E0310

#[test]
fn e0309_transaction_sizes() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(32) {
    shared buf: [f32; 256];
    barrier full: cta(arrivals = 1);
    if thread_idx.x == 0 {
        full.arrive_expect_tx(100);
        copy_async(buf[0], x[0], 100, full);
        full.expect_tx(0);
        full.expect_tx(1048576);
        full.expect_tx(1048560);
        copy_async_store(out[0], buf[0], 8);
    }
    full.wait();
    out[0] = buf[thread_idx.x];
}";
    let diags = expect_codes(src, &["E0309", "E0309", "E0309", "E0309", "E0309"]);
    let got: Vec<(&str, &str)> = diags
        .iter()
        .map(|d| (d.message.as_str(), primary(src, d)))
        .collect();
    let msg = |n: &str| {
        format!("transaction size {n} must be a positive multiple of 16 no larger than 1048575")
    };
    let want = [
        (msg("100"), "100"),
        (msg("100"), "100"),
        (msg("0"), "0"),
        (msg("1048576"), "1048576"),
        (msg("8"), "8"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(m, t)| (m.as_str(), *t))
            .collect::<Vec<_>>()
    );
}

#[test]
fn e0310_parities() {
    let src = "kernel k(out: global mut [f32]) block(32) cluster(2) {
    barrier done: cta(arrivals = 32);
    barrier peer: cluster(arrivals = 32);
    done.arrive();
    done.wait(2);
    let t = done.test(3);
    peer.arrive();
    peer.wait_cluster(1 + 1);
    done.wait(1);
    out[0] = select(t, 1.0, 0.0);
}";
    let diags = expect_codes(src, &["E0310", "E0310", "E0310"]);
    let got: Vec<(&str, &str)> = diags
        .iter()
        .map(|d| (d.message.as_str(), primary(src, d)))
        .collect();
    assert_eq!(
        got,
        [
            ("wait parity must be 0 or 1, found 2", "2"),
            ("wait parity must be 0 or 1, found 3", "3"),
            ("wait parity must be 0 or 1, found 2", "1 + 1"),
        ]
    );
}

#[test]
fn several_barrier_errors_in_one_kernel() {
    let src = "kernel k(out: global mut [f32]) block(128) cluster(2) {
    barrier full[2]: cta(arrivals = 1);
    barrier ready: cluster(arrivals = 1);
    full.arrive();
    full[3].arrive();
    ready.wait(0);
    full[0].wait(7);
    full[1].arrive_remote(1);
    full[1].arrive_expect_tx(12);
    out[0] = 1.0;
}";
    let diags = expect_codes(src, &["E0303", "E0305", "E0301", "E0310", "E0307", "E0309"]);
    let spans: Vec<&str> = diags.iter().map(|d| primary(src, d)).collect();
    assert_eq!(
        spans,
        [
            "full",
            "3",
            "ready.wait(0)",
            "7",
            "full[1].arrive_remote(1)",
            "12"
        ]
    );
}

// ---------------------------------------------------------------- W0320

#[test]
fn w0320_sync_under_thread_condition() {
    let src = "kernel k(out: global mut [f32]) block(128) {
    shared s: [f32; 128];
    s[thread_idx.x] = 1.0;
    if thread_idx.x < 64 {
        sync_threads();
    }
    out[thread_idx.x] = s[127 - thread_idx.x];
}";
    let d = only(src, "W0320");
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(d.message, "barrier operation in divergent control flow");
    assert_eq!(primary(src, &d), "sync_threads()");
    assert_eq!(secondaries(src, &d), ["thread_idx.x < 64"]);
}

#[test]
fn w0320_through_locals_loops_and_early_exits() {
    let src = "kernel k(out: global mut [f32], n: u32) block(128) cluster(2) {
    let tid = thread_idx.x;
    let lane = tid % 32;
    if lane == 0 {
        cluster_sync();
    }
    let mut flag = 0u32;
    if warp_id == 1 {
        flag = 1;
    }
    if flag == 1 {
        sync_threads();
    }
    for _i in tid..n step 128 {
        sync_threads();
    }
    let mut j = 0u32;
    while j < 100 {
        sync_threads();
        if tid == j {
            break;
        }
        j += 1;
    }
    if tid >= n {
        return;
    }
    sync_threads();
    out[tid] = 1.0;
}";
    let diags = expect_codes(src, &["W0320", "W0320", "W0320", "W0320", "W0320"]);
    let got: Vec<(&str, Vec<&str>)> = diags
        .iter()
        .map(|d| (primary(src, d), secondaries(src, d)))
        .collect();
    assert_eq!(
        got,
        [
            ("cluster_sync()", vec!["lane == 0"]),
            ("sync_threads()", vec!["flag == 1"]),
            ("sync_threads()", vec!["tid..n"]),
            ("sync_threads()", vec!["tid == j"]),
            ("sync_threads()", vec!["tid >= n"]),
        ]
    );
}

#[test]
fn w0320_loop_carried_divergence_needs_the_fixpoint() {
    // `k` only becomes varying at the end of the loop body; the loop's
    // condition, checked first, must see it.
    let src = "kernel k(out: global mut [f32]) block(128) {
    let mut k = 0u32;
    let mut m = 0u32;
    while k < 4 {
        sync_threads();
        k = m;
        m = thread_idx.x;
    }
    out[0] = 1.0;
}";
    let d = only(src, "W0320");
    assert_eq!(primary(src, &d), "sync_threads()");
    assert_eq!(secondaries(src, &d), ["k < 4"]);
}

#[test]
fn w0320_call_of_a_synchronising_function() {
    let src = "fn stage(v: f32) -> f32 {
    sync_threads();
    v * 2.0
}
fn lane_value() -> u32 {
    lane_id
}
kernel k(out: global mut [f32]) block(128) {
    let mut v = 1.0;
    if lane_value() == 3 {
        v = stage(v);
    }
    v = stage(v);
    out[thread_idx.x] = v;
}";
    let d = only(src, "W0320");
    assert_eq!(primary(src, &d), "stage(v)");
    assert_eq!(
        d.primary_span().map(|s| s.start),
        src.find("stage(v);").map(|p| p as u32)
    );
    assert_eq!(secondaries(src, &d), ["lane_value() == 3"]);
    assert!(
        d.notes
            .iter()
            .any(|n| n == "`stage` calls `sync_threads()`"),
        "{:?}",
        d.notes
    );
}

#[test]
fn w0320_inside_a_device_function() {
    let src = "fn leader_sync(v: f32) -> f32 {
    if lane_id == 0 {
        sync_threads();
    }
    v
}
kernel k(out: global mut [f32]) block(32) {
    out[0] = leader_sync(1.0);
    out[1] = leader_sync(2.0);
}";
    let d = only(src, "W0320");
    assert_eq!(primary(src, &d), "sync_threads()");
    assert_eq!(secondaries(src, &d), ["lane_id == 0"]);
}

#[test]
fn uniform_conditions_are_not_divergent() {
    clean(
        "uniform",
        "kernel k(x: global [f32], out: global mut [f32], n: u32) block(128) cluster(2) {
    shared flag: [u32; 1];
    if thread_idx.x == 0 { flag[0] = n; }
    sync_threads();
    if block_idx.x * 128 < n {
        sync_threads();
    }
    if cluster_rank == 0 && n > 4 {
        sync_threads();
    }
    if flag[0] > 3 {
        sync_threads();
    }
    let mut acc = 0.0;
    for i in 0..n {
        acc += x[i];
        sync_threads();
    }
    if thread_idx.x < 32 {
        acc += 1.0;
    }
    sync_threads();
    if n == 0 {
        return;
    }
    cluster_sync();
    out[thread_idx.x] = acc;
}",
    );
}

#[test]
fn mbarrier_operations_in_divergent_code_are_fine() {
    // One elected thread expecting bytes is the normal pattern, not W0320.
    clean(
        "elected thread",
        "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 1024];
    barrier full: cta(arrivals = 1);
    if thread_idx.x == 0 {
        full.arrive_expect_tx(4096);
        copy_async(buf[0], x[0], 4096, full);
    }
    full.wait();
    out[thread_idx.x] = buf[thread_idx.x];
}",
    );
}

// ---------------------------------------------------------------- W0321

#[test]
fn w0321_unconditional_arrivals_mismatch() {
    let src = "kernel k(out: global mut [f32]) block(16, 8) {
    barrier done: cta(arrivals = 64);
    done.arrive();
    done.wait();
    out[thread_idx.x] = 1.0;
}";
    let d = only(src, "W0321");
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(
        d.message,
        "barrier `done` expects 64 arrivals per phase but 128 threads arrive"
    );
    assert_eq!(primary(src, &d), "done.arrive()");
    assert_eq!(secondaries(src, &d), ["64"]);
}

#[test]
fn w0321_in_a_loop_that_waits() {
    let src = "kernel k(out: global mut [f32], n: u32) block(64) {
    barrier phase[2]: cta(arrivals = 32);
    for c in 0..n {
        phase[c % 2].arrive();
        phase[c % 2].wait();
    }
    out[thread_idx.x] = 1.0;
}";
    let d = only(src, "W0321");
    assert_eq!(
        d.message,
        "barrier `phase` expects 32 arrivals per phase but 64 threads arrive"
    );
    assert_eq!(primary(src, &d), "phase[c % 2].arrive()");
}

#[test]
fn w0321_not_when_arrivals_are_uncountable() {
    // Conditional arrivals, counted arrivals, arrivals at a varying index,
    // a loop that may arrive twice per phase, an unknown block size: nothing.
    clean(
        "conditional",
        "kernel k(out: global mut [f32]) block(128) {
    barrier a: cta(arrivals = 4);
    if lane_id == 0 { a.arrive(); }
    a.wait();
    out[0] = 1.0;
}",
    );
    clean(
        "counted",
        "kernel k(out: global mut [f32]) block(128) {
    barrier a: cta(arrivals = 129);
    a.arrive();
    if thread_idx.x == 0 { a.arrive(1); }
    a.wait();
    out[0] = 1.0;
}",
    );
    clean(
        "varying index",
        "kernel k(out: global mut [f32]) block(128) {
    barrier a[4]: cta(arrivals = 32);
    a[warp_id].arrive();
    a[0].wait();
    out[0] = 1.0;
}",
    );
    clean(
        "loop without a wait",
        "kernel k(out: global mut [f32]) block(128) {
    barrier a: cta(arrivals = 256);
    for _i in 0..2 { a.arrive(); }
    a.wait();
    out[0] = 1.0;
}",
    );
    clean(
        "unknown block",
        "kernel k(out: global mut [f32]) {
    barrier a: cta(arrivals = 7);
    a.arrive();
    a.wait();
    out[0] = 1.0;
}",
    );
    clean(
        "after a divergent return",
        "kernel k(out: global mut [f32], n: u32) block(128) {
    barrier a: cta(arrivals = 64);
    if thread_idx.x >= 64 { return; }
    a.arrive();
    a.wait();
    out[0] = 1.0;
}",
    );
}

// ---------------------------------------------------------------- W0322 / W0323

#[test]
fn w0322_copy_without_expect() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 1024];
    barrier full: cta(arrivals = 1);
    if thread_idx.x == 0 {
        full.arrive();
        copy_async(buf[0], x[0], 2048, full);
        copy_async(buf[512], x[512], 2048, full);
    }
    full.wait();
    out[thread_idx.x] = buf[thread_idx.x];
}";
    let d = only(src, "W0322");
    assert_eq!(
        d.message,
        "bulk copy completes on barrier `full`, which never expects transactions"
    );
    assert_eq!(primary(src, &d), "copy_async(buf[0], x[0], 2048, full)");
    assert_eq!(secondaries(src, &d), ["barrier full: cta(arrivals = 1);"]);
    assert!(d
        .help
        .iter()
        .any(|h| h.contains("full.arrive_expect_tx(bytes)")));
}

#[test]
fn w0323_expected_bytes_differ_from_copies() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 2, 1024];
    barrier full[2]: cta(arrivals = 1);
    if thread_idx.x == 0 {
        let s = block_idx.x % 2;
        full[s].arrive_expect_tx(8192);
        copy_async(buf[s, 0], x[0], 2048, full[s]);
        copy_async(buf[s, 512], x[512], 2048, full[s]);
    }
    full[block_idx.x % 2].wait();
    out[thread_idx.x] = buf[0, thread_idx.x];
}";
    let d = only(src, "W0323");
    assert_eq!(
        d.message,
        "barrier `full` expects 8192 transaction bytes but the copies complete 4096"
    );
    assert_eq!(primary(src, &d), "full[s].arrive_expect_tx(8192)");
    // The label names the barrier of the group, with its index.
    assert_eq!(
        d.labels
            .iter()
            .find(|l| l.primary)
            .map(|l| l.message.as_str()),
        Some("`full[s]` expects 8192 bytes here")
    );
    assert_eq!(
        secondaries(src, &d),
        [
            "copy_async(buf[s, 0], x[0], 2048, full[s])",
            "copy_async(buf[s, 512], x[512], 2048, full[s])"
        ]
    );
}

#[test]
fn w0323_pairs_only_the_same_barrier_in_one_stretch() {
    // Constant indices pair with their own barrier; copies spread over a loop
    // or a branch, or with a size known only at run time, are not compared.
    clean(
        "pairs",
        "kernel k(x: global [f32], out: global mut [f32], n: u32) block(128) {
    shared buf: [f32; 2, 1024];
    barrier full[2]: cta(arrivals = 1);
    if thread_idx.x == 0 {
        full[0].arrive_expect_tx(4096);
        full[1].arrive_expect_tx(2048);
        copy_async(buf[1, 0], x[0], 2048, full[1]);
        copy_async(buf[0, 0], x[0], 4096, full[0]);
    }
    if thread_idx.x == 32 {
        full[0].arrive_expect_tx(4096);
        for i in 0..4 {
            copy_async(buf[0, i * 256], x[i * 256], 1024, full[0]);
        }
        full[1].expect_tx(n * 16);
        copy_async(buf[1, 0], x[0], 2048, full[1]);
    }
    full[0].wait();
    full[1].wait();
    out[thread_idx.x] = buf[0, thread_idx.x] + buf[1, thread_idx.x];
}",
    );
}

#[test]
fn w0323_with_constant_indices() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 2, 1024];
    barrier full[2]: cta(arrivals = 1);
    if thread_idx.x == 0 {
        full[0].arrive_expect_tx(4096);
        full[1].arrive_expect_tx(4096);
        copy_async(buf[0, 0], x[0], 4096, full[0]);
        copy_async(buf[1, 0], x[1024], 1024, full[1]);
    }
    full[0].wait();
    full[1].wait();
    out[thread_idx.x] = buf[0, thread_idx.x] + buf[1, thread_idx.x];
}";
    let d = only(src, "W0323");
    assert_eq!(
        d.message,
        "barrier `full` expects 4096 transaction bytes but the copies complete 1024"
    );
    assert_eq!(primary(src, &d), "full[1].arrive_expect_tx(4096)");
    assert_eq!(
        secondaries(src, &d),
        ["copy_async(buf[1, 0], x[1024], 1024, full[1])"]
    );
}

// ---------------------------------------------------------------- no false positives

/// The files among `paths` that give any diagnostic, with the codes. Files
/// are compiled from disk, so their imports resolve.
fn unclean(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|path| {
            // Each for the target it names (`// target: sm_90a`).
            let opts = kdsl::Options {
                check_only: true,
                target: crate::common::source_target(path),
                ..kdsl::Options::default()
            };
            let c =
                kdsl::compile(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            (!c.diagnostics.is_empty()).then(|| format!("{}:\n{shown}", path.display()))
        })
        .collect()
}

#[test]
fn bench_kernels_and_samples_have_no_diagnostics() {
    let samples = kdsl_files(&repo_root().join("samples"));
    let names: Vec<String> = samples
        .iter()
        .filter_map(|p| p.file_stem()?.to_str().map(String::from))
        .collect();
    for bench in [
        "pipeline_sum",
        "cluster_sum",
        "reduce_sum",
        "saxpy",
        "sgemm_tiled",
        "softmax_rows",
        "hopper_gemm",
    ] {
        assert!(
            names.iter().any(|n| n == bench),
            "samples/{bench}.kdsl is missing"
        );
    }
    let bad = unclean(&samples);
    assert!(
        bad.is_empty(),
        "expected no diagnostics:\n{}",
        bad.join("\n")
    );
}

#[test]
fn warp_specialised_pipeline_has_no_diagnostics() {
    let bad = unclean(&[repo_root().join("tests/fixtures/ws_pipeline.kdsl")]);
    assert!(
        bad.is_empty(),
        "expected no diagnostics:\n{}",
        bad.join("\n")
    );
}

#[test]
fn valid_programs_have_no_diagnostics() {
    let valid = kdsl_files(&repo_root().join("tests/valid"));
    assert!(!valid.is_empty(), "tests/valid/*.kdsl");
    let bad = unclean(&valid);
    assert!(
        bad.is_empty(),
        "expected no diagnostics:\n{}",
        bad.join("\n")
    );
}

// ---------------------------------------------------------------- help texts

#[test]
fn help_texts_name_indexed_groups_with_their_index() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 2, 512];
    barrier stages[2]: cta(arrivals = 1);
    barrier rings[2]: cta(arrivals = 1);
    let all = rings[0..2].test();
    let s = block_idx.x % 2;
    if thread_idx.x == 0 {
        stages[s].arrive();
        copy_async(buf[s, 0], x[0], 2048, stages[ s ]);
    }
    stages[s].wait(3);
    out[thread_idx.x] = buf[s, thread_idx.x];
}";
    let diags = expect_codes(src, &["E0304", "W0322", "E0310"]);
    // W0322 names the barrier the copy completes on, as written.
    assert!(
        diags[1]
            .help
            .iter()
            .any(|h| h.contains("`stages[ s ].arrive_expect_tx(bytes)`")),
        "{:?}",
        diags[1].help
    );
    // E0310 shows the tracked spelling of the same operation.
    assert!(
        diags[2]
            .help
            .iter()
            .any(|h| h.contains("`stages[s].wait()`")),
        "{:?}",
        diags[2].help
    );
    // E0304's example uses the group's own name.
    assert!(
        diags[0].help.iter().any(|h| h.contains("`rings[i]`")),
        "{:?}",
        diags[0].help
    );
    assert!(diags
        .iter()
        .all(|d| d.help.iter().all(|h| !h.contains("full"))));
}

#[test]
fn a_group_used_as_a_value_is_shown_with_its_index_and_scope() {
    let src = "kernel k(out: global mut [u32]) block(32) cluster(2) {
    barrier ring[4]: cluster(arrivals = 32);
    out[0] = ring;
}";
    let d = only(src, "E0110");
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("`ring[i].wait_cluster()`")),
        "{:?}",
        d.notes
    );
}

// ---------------------------------------------------------------- no cascades

/// A barrier operation that failed to check is not "missing": the
/// whole-kernel warnings (W0321, W0322, W0323) say nothing about its group.
#[test]
fn failed_operations_do_not_make_whole_kernel_warnings() {
    let src = "kernel k(x: global [f32], out: global mut [f32]) block(128) {
    shared buf: [f32; 2, 512];
    barrier full[2]: cta(arrivals = 1);
    barrier done: cta(arrivals = 1);
    barrier lone: cta(arrivals = 1);
    if thread_idx.x == 0 {
        lone.arrive_expect_tx(BYTES);
        copy_async(buf[0, 0], x[0], 2048, lone);
        full[1].arrive_expect_tx(2048);
        copy_async(buf[1, 0], x[512], 1024 + missing, full[1]);
        copy_async(buf[1, 256], x[768], 1024, full[1]);
    }
    done.arrive(undefined);
    done.arrive();
    lone.wait();
    out[thread_idx.x] = buf[0, thread_idx.x];
}";
    // Without the three failed statements this kernel has W0322 (`lone`),
    // W0323 (`full[1]`) and W0321 (`done`).
    let diags = expect_codes(src, &["E0100", "E0100", "E0100"]);
    let names: Vec<&str> = diags.iter().map(|d| primary(src, d)).collect();
    assert_eq!(names, ["BYTES", "missing", "undefined"]);
}

/// A `cluster(...)` that is written but invalid is reported once: the
/// cluster features it would allow are not errors again.
#[test]
fn an_invalid_cluster_attribute_does_not_cascade() {
    let src = "kernel k(out: global mut [f32]) block(32) cluster(32) {
    barrier ready: cluster(arrivals = 32);
    ready.arrive_remote(cluster_rank ^ 1);
    ready.wait_cluster();
    cluster_sync();
    out[0] = remote(out_buf, 0)[0];
}";
    let diags = expect_codes(src, &["E0120", "E0100"]);
    assert_eq!(primary(src, &diags[1]), "out_buf");
}

/// E0308's fix to scope `cta` is offered only when nothing in the kernel
/// needs the group cluster-scope.
#[test]
fn e0308_offers_the_cta_fix_only_when_it_leads_nowhere_worse() {
    let plain = "kernel k(out: global mut [f32]) block(32) {
    barrier ready: cluster(arrivals = 32);
    ready.arrive();
    ready.wait();
    out[0] = 1.0;
}";
    let d = only(plain, "E0308");
    let edits: Vec<&str> = d
        .fixes
        .iter()
        .flat_map(|f| &f.edits)
        .map(|e| e.replacement.as_str())
        .collect();
    assert_eq!(edits, ["cta"]);
    let clustered = "kernel k(out: global mut [f32]) block(32) {
    barrier ready: cluster(arrivals = 32);
    ready.arrive();
    let done = ready.test_cluster();
    out[0] = select(done, 1.0, 0.0);
}";
    let d = only(clustered, "E0308");
    assert!(d.fixes.is_empty(), "{:?}", d.fixes);
}

/// Applying a scope fix never leads into another scope error: for every
/// E0301/E0307 fix in these kernels, the fixed source has no E0301, E0307
/// or E0308 at all (and the fix removed the error it was offered for).
#[test]
fn scope_fixes_lead_into_no_other_error() {
    let kernels = [
        "kernel k(out: global mut [u32]) block(32) cluster(2) {
    barrier ready: cluster(arrivals = 32);
    ready.arrive_remote(cluster_rank ^ 1);
    ready.wait();
    out[0] = 1;
}",
        "kernel k(out: global mut [u32]) block(32) cluster(2) {
    barrier ready: cluster(arrivals = 32);
    ready.arrive();
    let t = ready.test();
    ready.wait();
    out[0] = select(t, 1, 0);
}",
        "kernel k(out: global mut [u32]) block(32) cluster(2) {
    barrier local: cta(arrivals = 32);
    local.arrive();
    local.wait_cluster();
    let t = local.test_cluster(1);
    out[0] = select(t, 1, 0);
}",
        "kernel k(out: global mut [u32]) block(32) {
    barrier local: cta(arrivals = 32);
    local.arrive();
    local.wait_cluster(0);
    out[0] = 1;
}",
        "kernel k(out: global mut [u32]) block(32) cluster(2) {
    barrier local: cta(arrivals = 32);
    local.arrive_remote(0);
    local.wait();
    out[0] = 1;
}",
    ];
    let scope_errors = |diags: &[Diagnostic]| {
        diags
            .iter()
            .filter(|d| matches!(d.code, "E0301" | "E0307" | "E0308"))
            .count()
    };
    let mut fixes_tried = 0;
    for src in kernels {
        let diags = compile(src);
        assert!(scope_errors(&diags) > 0, "{src}");
        for d in diags.iter().filter(|d| matches!(d.code, "E0301" | "E0307")) {
            for f in &d.fixes {
                let mut fixed = src.to_string();
                let mut edits: Vec<_> = f.edits.iter().collect();
                edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
                for e in edits {
                    fixed.replace_range(e.span.range(), &e.replacement);
                }
                let after = compile(&fixed);
                let before_count = scope_errors(&diags);
                assert!(
                    scope_errors(&after) < before_count,
                    "fix `{}` did not remove its error:\n{fixed}\n{after:#?}",
                    f.message
                );
                let new_kinds: Vec<&str> = after
                    .iter()
                    .map(|d| d.code)
                    .filter(|c| !diags.iter().any(|b| b.code == *c))
                    .collect();
                assert!(
                    new_kinds.is_empty(),
                    "fix `{}` led into {new_kinds:?}:\n{fixed}",
                    f.message
                );
                fixes_tried += 1;
            }
        }
    }
    assert!(fixes_tried >= 8, "{fixes_tried}");
}

/// An unrelated error anywhere in a kernel hides no barrier diagnostic and
/// adds none: for UI tests with barrier errors, a type error inserted
/// before each statement leaves the barrier pass's diagnostics (by code and
/// source line) exactly as they were.
#[test]
fn an_unrelated_error_anywhere_hides_no_barrier_error() {
    const PASS_CODES: [&str; 10] = [
        "E0301", "E0303", "E0305", "E0307", "E0309", "E0310", "W0320", "W0321", "W0322", "W0323",
    ];
    let files = [
        "barrier_many_errors",
        "await_cluster_barrier",
        "await_cluster_barrier_test",
        "needs_cluster_scope",
        "barrier_index_oob",
        "bad_parity",
        "bad_tx_size",
        "unindexed_barrier",
        "cluster_acquire",
        "barrier_let_constants",
        "arrival_mismatch",
        "tx_mismatch",
        "copy_without_expect_tx",
        "divergent_sync",
    ];
    // The barrier diagnostics, each as (code, its line's text).
    let pass = |src: &str| -> Vec<(&'static str, String)> {
        let mut v: Vec<(&'static str, String)> = compile(src)
            .iter()
            .filter(|d| PASS_CODES.contains(&d.code))
            .map(|d| {
                let at = d.primary_span().expect("span").start as usize;
                let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
                let end = src[at..].find('\n').map_or(src.len(), |i| at + i);
                (d.code, src[start..end].to_string())
            })
            .collect();
        v.sort();
        v
    };
    let dir = crate::common::repo_root().join("tests/ui");
    let mut variants = 0;
    for name in files {
        let src = std::fs::read_to_string(dir.join(format!("{name}.kdsl"))).expect("ui file");
        let want = pass(&src);
        assert!(!want.is_empty(), "{name} has barrier diagnostics");
        let lines: Vec<&str> = src.lines().collect();
        let code = |l: &str| l.split("//").next().unwrap_or("").trim_end().to_string();
        let mut depth = 0i32;
        for i in 1..lines.len() {
            let prev = code(lines[i - 1]);
            depth += prev.matches('{').count() as i32 - prev.matches('}').count() as i32;
            // Only between statements of a body.
            if depth < 1 || !(prev.ends_with(';') || prev.ends_with('{') || prev.ends_with('}')) {
                continue;
            }
            let mut broken: Vec<&str> = lines.clone();
            broken.insert(i, "    let zz: u32 = 1.5;");
            let broken = broken.join("\n");
            let diags = compile(&broken);
            assert!(diags.iter().any(|d| d.code == "E0110"), "{broken}");
            assert_eq!(
                pass(&broken),
                want,
                "{name}, error before line {}:\n{broken}",
                i + 1
            );
            variants += 1;
        }
    }
    assert!(variants > 100, "{variants}");
}
