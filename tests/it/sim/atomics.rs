//! The atomics with their orders and scopes, and `fence`, run in the
//! simulator: many threads contending on each element, the results (final
//! values, and the multiset of old values each thread got back) against a
//! Rust reference, under the in-order and random schedules, with the
//! passes on and off (bit-identical in order); remote atomics at cluster
//! scope; and the PTX forms the simulator must refuse.

use crate::common::sim::*;
use kdsl::launch::ArgValue;
use kdsl::opt::Passes;
use kdsl::sim::{Schedule, SimOptions};
use kdsl::types::Scalar;
use kdsl::Options;

const BLOCKS: u32 = 4;
const THREADS: u32 = 128;
const N: u32 = BLOCKS * THREADS;
const INC_LIMIT: u32 = 12;
const DEC_LIMIT: u32 = 9;
const EXCH_START: u32 = 7;

/// Every new atomic on one element per operation, every thread of the
/// grid contending; old values kept per thread. Two loops of constant
/// trip count: one without a fence (the unroller copies it), one with a
/// fence (left alone: nothing moves across a fence).
const CONTEND: &str = "
kernel contend(x: global mut [u32], olds: global mut [u32], l: global mut [i64], f: global mut [f32], n: u32) block(128) {
    shared s: [u32; 2];
    if thread_idx.x < 2 {
        s[thread_idx.x] = 0;
    }
    sync_threads();
    let g = block_idx.x * 128 + thread_idx.x;
    atomic_xor(x[0], g * 2654435761u32, order = acq_rel);
    olds[g] = atomic_inc(x[1], 12, scope = gpu);
    olds[n + g] = atomic_dec(x[2], 9, order = acquire, scope = sys);
    olds[2u32 * n + g] = atomic_exch(x[3], g + 1000, order = release);
    atomic_and(x[4], !(1u32 << (g % 32)));
    atomic_or(x[5], 1u32 << (g % 29), scope = cta);
    atomic_sub(x[6], g, order = relaxed, scope = gpu);
    atomic_sub(l[0], g as i64 * 3, order = acq_rel, scope = gpu);
    atomic_sub(f[0], 0.5);
    atomic_exch(f[1], 2.5, order = acq_rel, scope = sys);
    for k in 0u32..4 {
        atomic_xor(x[7], (g * 4 + k) * 7, order = relaxed);
    }
    for k in 0u32..4 {
        atomic_add(x[8], k + 1);
        fence(scope = cta);
    }
    atomic_xor(s[0], thread_idx.x * 3 + 1, order = acq_rel, scope = cta);
    atomic_inc(s[1], 5, order = acquire, scope = cta);
    sync_threads();
    if thread_idx.x == 0 {
        x[9 + block_idx.x] = s[0];
        x[9 + 4 + block_idx.x] = s[1];
    }
}";

fn u32_array(name: &str, v: Vec<u32>) -> ArgValue {
    u32s(name, &v)
}

fn args() -> Vec<ArgValue> {
    let mut x = vec![0u32; 17];
    x[3] = EXCH_START;
    x[4] = u32::MAX;
    vec![
        u32_array("x", x),
        u32_array("olds", vec![0; 3 * N as usize]),
        array("l", Scalar::I64, 5i64.to_le_bytes().to_vec()),
        f32s("f", &[1.0, 0.0]),
        u32v(N),
    ]
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

/// The old values `count` sequential `atomic_inc`s from 0 return, and the
/// final value (PTX: `old >= limit ? 0 : old + 1`).
fn inc_sequence(count: u32, limit: u32) -> (Vec<u32>, u32) {
    let mut v = 0u32;
    let olds = (0..count)
        .map(|_| {
            let old = v;
            v = if old >= limit { 0 } else { old + 1 };
            old
        })
        .collect();
    (olds, v)
}

/// The same for `atomic_dec` (PTX: `old == 0 || old > limit ? limit : old - 1`).
fn dec_sequence(count: u32, limit: u32) -> (Vec<u32>, u32) {
    let mut v = 0u32;
    let olds = (0..count)
        .map(|_| {
            let old = v;
            v = if old == 0 || old > limit {
                limit
            } else {
                old - 1
            };
            old
        })
        .collect();
    (olds, v)
}

/// Checks one run's arrays against the reference.
fn check(o: &kdsl::sim::Outcome, what: &str) {
    let x = as_u32(&o.arrays[0]);
    let olds = as_u32(&o.arrays[1]);
    let n = N as usize;
    let ids = 0..N;
    let xor = ids
        .clone()
        .fold(0u32, |a, g| a ^ g.wrapping_mul(2_654_435_761));
    assert_eq!(x[0], xor, "{what}: atomic_xor");
    let (inc_olds, inc_final) = inc_sequence(N, INC_LIMIT);
    assert_eq!(x[1], inc_final, "{what}: atomic_inc's final value");
    assert_eq!(
        sorted(olds[..n].to_vec()),
        sorted(inc_olds),
        "{what}: atomic_inc's old values"
    );
    let (dec_olds, dec_final) = dec_sequence(N, DEC_LIMIT);
    assert_eq!(x[2], dec_final, "{what}: atomic_dec's final value");
    assert_eq!(
        sorted(olds[n..2 * n].to_vec()),
        sorted(dec_olds),
        "{what}: atomic_dec's old values"
    );
    // The exchange chain: the old values and the final value are the start
    // value and every thread's value, each once.
    let mut chain = olds[2 * n..].to_vec();
    chain.push(x[3]);
    let mut expected: Vec<u32> = ids.clone().map(|g| g + 1000).collect();
    expected.push(EXCH_START);
    assert_eq!(sorted(chain), sorted(expected), "{what}: atomic_exch chain");
    assert_eq!(x[4], 0, "{what}: atomic_and");
    assert_eq!(x[5], (1u32 << 29) - 1, "{what}: atomic_or");
    let sum = ids.clone().fold(0u32, |a, g| a.wrapping_add(g));
    assert_eq!(x[6], 0u32.wrapping_sub(sum), "{what}: atomic_sub u32");
    let l = i64::from_le_bytes(o.arrays[2].data[..8].try_into().expect("8 bytes"));
    assert_eq!(l, 5 - 3 * i64::from(sum), "{what}: atomic_sub i64");
    let f = as_f32(&o.arrays[3]);
    assert_eq!(f, [1.0 - 0.5 * N as f32, 2.5], "{what}: float sub, exch");
    let x7 = ids
        .clone()
        .flat_map(|g| (0..4).map(move |k| (g * 4 + k) * 7))
        .fold(0, |a, v| a ^ v);
    assert_eq!(x[7], x7, "{what}: atomic_xor in an unrolled loop");
    assert_eq!(x[8], N * 10, "{what}: atomic_add in a loop with a fence");
    let s0 = (0..THREADS).fold(0, |a, t| a ^ (t * 3 + 1));
    let (_, s1) = inc_sequence(THREADS, 5);
    for b in 0..BLOCKS as usize {
        assert_eq!(x[9 + b], s0, "{what}: shared atomic_xor of block {b}");
        assert_eq!(x[13 + b], s1, "{what}: shared atomic_inc of block {b}");
    }
}

#[test]
fn contending_atomics_match_the_reference_with_and_without_the_passes() {
    let l = launch("contend", BLOCKS, THREADS, 1, args());
    let off = kdsl_str_with("contend.kdsl", CONTEND, &with_passes(Passes::none()));
    let on = kdsl_str_with("contend.kdsl", CONTEND, &with_passes(Passes::all()));
    let a = run_clean(&off, &l);
    let b = run_clean(&on, &l);
    check(&a, "in order, passes off");
    check(&b, "in order, passes on");
    for (x, y) in a.arrays.iter().zip(&b.arrays) {
        assert!(x.data == y.data, "`{}` differs with the passes on", x.name);
    }
    for seed in [1, 7, 2024] {
        for (k, what) in [(&off, "passes off"), (&on, "passes on")] {
            let o = kdsl::sim::run(
                &k.program,
                &l,
                &SimOptions {
                    schedule: Schedule::Random(seed),
                    ..SimOptions::default()
                },
            );
            assert!(o.reports.is_empty(), "{}", rendered(k, &o));
            check(&o, &format!("random:{seed}, {what}"));
        }
    }
}

#[test]
fn the_unroller_copies_atomics_but_never_moves_anything_across_a_fence() {
    let ptx = |passes| {
        kdsl::compile_str("contend.kdsl", CONTEND, &with_passes(passes))
            .ptx
            .expect("PTX")
    };
    let (off, on) = (ptx(Passes::none()), ptx(Passes::all()));
    let count = |text: &str, needle: &str| text.lines().filter(|l| l.contains(needle)).count();
    // The loop without a fence is unrolled: four xors where there was one.
    assert_eq!(count(&off, "atom.global.xor.b32"), 1, "{off}");
    assert_eq!(count(&on, "atom.global.xor.b32"), 4, "{on}");
    // The loop with the fence is not: one fence, and the loop's add (with
    // `atomic_sub`'s, an add of the negation) once.
    assert_eq!(count(&off, "fence.acq_rel.cta;"), 1);
    assert_eq!(count(&on, "fence.acq_rel.cta;"), 1, "{on}");
    assert_eq!(count(&off, "atom.global.add.u32"), 2, "{off}");
    assert_eq!(count(&on, "atom.global.add.u32"), 2, "{on}");
}

/// Atomics on a peer CTA's shared memory at cluster scope: each CTA's
/// array is updated by the other CTA of its cluster.
const REMOTE: &str = "
kernel remote_atomics(out: global mut [u32]) block(64) cluster(2) {
    shared s: [u32; 3];
    shared w: [u64; 1];
    if thread_idx.x < 3 {
        s[thread_idx.x] = 0;
    }
    if thread_idx.x == 0 {
        w[0] = 100;
    }
    cluster_sync();
    let peer = (cluster_rank + 1) % cluster_size;
    let g = block_idx.x * 64 + thread_idx.x;
    atomic_xor(remote(s, peer)[0], g, order = acq_rel, scope = cluster);
    atomic_inc(remote(s, peer)[1], 40, order = release, scope = cluster);
    atomic_exch(remote(s, peer)[2], g + 1, order = acquire, scope = cluster);
    atomic_sub(remote(w, peer)[0], 1, scope = cluster);
    fence(scope = cluster);
    cluster_sync();
    if thread_idx.x == 0 {
        out[block_idx.x * 4] = s[0];
        out[block_idx.x * 4 + 1] = s[1];
        out[block_idx.x * 4 + 2] = s[2];
        out[block_idx.x * 4 + 3] = w[0] as u32;
    }
}";

#[test]
fn remote_atomics_at_cluster_scope() {
    let k = kdsl_str_with("remote.kdsl", REMOTE, &Options::default());
    let l = launch("remote_atomics", 4, 64, 2, vec![u32s("out", &[0; 16])]);
    for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(99)] {
        let o = kdsl::sim::run(
            &k.program,
            &l,
            &SimOptions {
                schedule,
                ..SimOptions::default()
            },
        );
        assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
        let out = as_u32(&o.arrays[0]);
        let (_, inc) = inc_sequence(64, 40);
        for b in 0..4u32 {
            let peer = b ^ 1;
            let xor = (0..64).fold(0, |a, t| a ^ (peer * 64 + t));
            let at = (b * 4) as usize;
            assert_eq!(out[at], xor, "{schedule:?}: block {b}'s xor");
            assert_eq!(out[at + 1], inc, "{schedule:?}: block {b}'s inc");
            assert!(
                (peer * 64 + 1..=peer * 64 + 64).contains(&out[at + 2]),
                "{schedule:?}: block {b}'s exch: {}",
                out[at + 2]
            );
            assert_eq!(out[at + 3], 100 - 64, "{schedule:?}: block {b}'s u64 sub");
        }
    }
}

fn module(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry t(.param .u64 out)\n{{\n\
         \t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd0, [out];\n\tcvta.to.global.u64 %rd1, %rd0;\n\
         \tmov.u32 %r1, 5;\n\tmov.b64 %rd2, 5;\n{body}\n\tret;\n}}\n"
    )
}

#[test]
fn every_order_scope_and_fence_kdslc_writes_loads_and_runs() {
    let mut body = String::new();
    for sem in ["", ".relaxed", ".acquire", ".release", ".acq_rel"] {
        for scope in ["", ".cta", ".cluster", ".gpu", ".sys"] {
            body.push_str(&format!(
                "\tatom{sem}{scope}.global.inc.u32 %r2, [%rd1], 100;\n"
            ));
        }
    }
    for f in [
        "fence.acq_rel.cta",
        "fence.sc.cluster",
        "fence.acq_rel.gpu",
        "fence.sc.sys",
        "fence.proxy.async.shared::cta",
        "membar.gl",
        "membar.cta",
    ] {
        body.push_str(&format!("\t{f};\n"));
    }
    body.push_str("\tatom.acq_rel.sys.global.exch.b64 %rd3, [%rd1+8], %rd2;\n");
    body.push_str("\tred.release.gpu.global.add.u32 [%rd1+4], %r1;\n");
    let k = ptx_str("t.ptx", &module(&body)).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 1, 3, 1, vec![u32s("out", &[0; 4])]);
    let o = run_clean(&k, &l);
    // 25 increments per thread, 3 threads: 75; red adds 5 three times.
    assert_eq!(as_u32(&o.arrays[0]), [75, 15, 5, 0]);
}

#[test]
fn atomic_and_fence_forms_ptxas_rejects_are_load_errors() {
    for (inst, why) in [
        (
            "atom.global.and.u32 %r2, [%rd1], 1;",
            "does not take `.u32`",
        ),
        (
            "atom.global.inc.u64 %rd3, [%rd1], 1;",
            "does not take `.u64`",
        ),
        (
            "atom.global.exch.u32 %r2, [%rd1], 1;",
            "does not take `.u32`",
        ),
        (
            "atom.global.add.b32 %r2, [%rd1], 1;",
            "does not take `.b32`",
        ),
        (
            "atom.global.max.f32 %r2, [%rd1], 1;",
            "does not take `.f32`",
        ),
        (
            "atom.acquire.release.global.add.u32 %r2, [%rd1], 1;",
            "several memory orders",
        ),
        (
            "atom.cta.gpu.global.add.u32 %r2, [%rd1], 1;",
            "several scopes",
        ),
        (
            "red.acquire.gpu.global.add.u32 [%rd1], 1;",
            "`red` with order",
        ),
        ("atom.sc.global.add.u32 %r2, [%rd1], 1;", "modifier `.sc`"),
        ("membar.cluster;", "outside the simulator's subset"),
        ("fence.proxy.alias;", "outside the simulator's subset"),
        ("fence.relaxed.gpu;", "outside the simulator's subset"),
    ] {
        let err = ptx_str("t.ptx", &module(&format!("\t{inst}\n")))
            .err()
            .unwrap_or_else(|| panic!("`{inst}` loads"));
        assert!(err.contains(why), "`{inst}`: {err}");
    }
}

#[test]
fn loops_with_ordered_atomics_are_left_alone() {
    let text = |order: &str| {
        format!(
            "kernel k(x: global mut [u32]) block(32) {{\n    \
             for k in 0u32..4 {{\n        atomic_add(x[k], 1{order});\n    }}\n}}\n"
        )
    };
    let adds = |order: &str| {
        let ptx = kdsl::compile_str("k.kdsl", &text(order), &with_passes(Passes::all()))
            .ptx
            .expect("PTX");
        ptx.lines().filter(|l| l.contains(".add.u32")).count()
    };
    // Relaxed (written or not): copied four times; any other order orders
    // memory, and the loop stays a loop.
    assert_eq!(adds(""), 4);
    assert_eq!(adds(", order = relaxed, scope = cta"), 4);
    for order in ["acquire", "release", "acq_rel"] {
        assert_eq!(adds(&format!(", order = {order}")), 1, "{order}");
    }
}
