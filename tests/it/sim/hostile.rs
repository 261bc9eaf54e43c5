//! Hostile PTX and launches: what ptxas refuses the simulator refuses too
//! (each case also assembled by ptxas to show it does), attributes and
//! ranks out of range, and work that grows without bound.

use crate::common::ptxas::{assemble, require_ptxas};
use crate::common::sim::*;
use crate::sim::cli::{kdslc, status, stderr};
use kdsl::sim::Schedule;

/// `mapa` to a rank past the cluster: reported where it is asked for, and
/// the store through the address it returns is out of bounds — not
/// wrapped modulo 256 into the own or a peer's shared memory. One thread
/// of each CTA writes `s`, and one thread of the cluster writes through
/// `mapa`: the kernel is race-free, so the checks add nothing.
#[test]
fn mapa_past_the_cluster_is_out_of_bounds() {
    let ptx = ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 rank)
.reqnctapercluster 2, 1, 1
{
	.reg .b32 %r<8>;
	.shared .align 4 .b8 s[64];
	ld.param.u32 %r1, [rank];
	mov.u32 %r2, s;
	mov.u32 %r5, %tid.x;
	mov.u32 %r6, %cluster_ctarank;
	setp.eq.u32 %p2, %r5, 0;
	@%p2 st.shared.u32 [%r2], 7;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	mapa.shared::cluster.u32 %r3, %r2, %r1;
	or.b32 %r7, %r5, %r6;
	setp.eq.u32 %p2, %r7, 0;
	@%p2 st.shared::cluster.u32 [%r3], 99;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	ld.shared.u32 %r4, [%r2];
	setp.ne.u32 %p1, %r4, 7;
	@%p1 trap;
	ret;
}
"
    .replace(".reg .b32 %r<8>;", ".reg .b32 %r<8>;\n\t.reg .pred %p<3>;");
    let k = ptx_str("m.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
    for rank in [2u32, 3, 257, 300, 0xffff_ffff] {
        let o = run(&k, &launch("k", 2, 32, 2, vec![u32v(rank)]));
        let text = rendered(&k, &o);
        assert_eq!(report_codes(&o), ["S0002", "S0002"], "rank {rank}:\n{text}");
        assert!(
            text.contains(&format!(
                "error[S0002]: out-of-bounds `mapa` in shared::cluster memory: CTA rank {rank} of a cluster of 2 CTAs"
            )),
            "{text}"
        );
        assert!(text.contains("m.ptx:18:2"), "{text}");
        // No CTA's `s` was overwritten (that would be a trap).
        assert!(!text.contains("S0016"), "{text}");
    }
    // Ranks in the cluster are fine.
    let o = run(&k, &launch("k", 2, 32, 2, vec![u32v(1)]));
    assert_eq!(report_codes(&o), ["S0016"], "the peer's `s` is written");
}

/// `.reqnctapercluster` with a zero dimension (ptxas takes it): exit 2
/// naming the attribute, with or without `--cluster`, never a panic.
#[test]
fn a_zero_cluster_attribute_is_a_usage_error() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry k()\n.reqnctapercluster 0, 1, 1\n{\n\tret;\n}\n";
    if let Some(ptxas) = require_ptxas() {
        assemble(&ptxas, ptx, "sm_90").expect("ptxas takes it");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("z.ptx");
    std::fs::write(&path, ptx).expect("writes");
    let p = path.to_str().expect("UTF-8");
    for extra in [&[][..], &["--cluster", "2"]] {
        let args = [&["sim", p, "--grid", "2", "--block", "32"][..], extra].concat();
        let o = kdslc(&args);
        assert_eq!(status(&o), 2, "{}", stderr(&o));
        assert!(
            stderr(&o).contains("the kernel's `.reqnctapercluster 0, 1, 1` has a dimension of 0"),
            "{}",
            stderr(&o)
        );
    }
}

/// A module that passes both ptxas and the simulator; each case below
/// changes one line of it.
const BASE: &str = ".version 8.0
.target sm_90
.address_size 64

.global .align 4 .u32 tbl[2] = {1, 2};

.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.reg .f32 %f<4>;
	.reg .b16 %rs<4>;
	.reg .pred %p<2>;
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, bar;
	mbarrier.init.shared.b64 [%r2], 1;
	bar.sync 0, 64;
	add.u32 %r3, %r1, 1;
	mul.wide.u32 %rd3, %r1, 4;
	add.u64 %rd3, %rd2, %rd3;
	st.global.u32 [%rd3], %r3;
	ret;
}
";

/// `BASE` with `from` replaced by `to` (once; `from` must be there).
fn mutate(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

/// What ptxas refuses does not load here either: each case is refused by
/// ptxas (checked when it is installed) and by the simulator's loader,
/// with ptxas's reason and the line ptxas names.
#[test]
fn modules_ptxas_refuses_do_not_load() {
    let ptxas = require_ptxas();
    let ret = "\tret;\n}\n";
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "missing .version",
            mutate(".version 8.0\n", ""),
            "missing `.version` directive",
            "m.ptx:1:1",
        ),
        (
            ".address_size 33",
            mutate(".address_size 64", ".address_size 33"),
            "illegal value 33 for `.address_size` (must be 32 or 64)",
            "m.ptx:3:1",
        ),
        (
            "unknown .version",
            mutate(".version 8.0", ".version 9.9"),
            "unsupported `.version 9.9`",
            "m.ptx:1:1",
        ),
        (
            "a .version older than the .target",
            mutate(".version 8.0", ".version 7.0"),
            "PTX `.version 7.0` does not support `.target sm_90` (it needs 7.8 or later)",
            "m.ptx:1:1",
        ),
        (
            "sm_90a before 8.0",
            mutate(".version 8.0\n.target sm_90", ".version 7.8\n.target sm_90a"),
            "PTX `.version 7.8` does not support `.target sm_90a` (it needs 8.0 or later)",
            "m.ptx:1:1",
        ),
        (
            "unknown .target",
            mutate(".target sm_90", ".target sm_91"),
            "unsupported `.target sm_91`",
            "m.ptx:2:1",
        ),
        (
            "barrier number 16",
            mutate("bar.sync 0, 64", "bar.sync 16, 64"),
            "barrier number 16 out of range, expected to be in range [0..15]",
            "m.ptx:20:2",
        ),
        (
            "barrier thread count not a multiple of 32",
            mutate("bar.sync 0, 64", "bar.sync 0, 33"),
            "33 threads take part in the barrier: the number must be a multiple of the warp size (32)",
            "m.ptx:20:2",
        ),
        (
            "mbarrier.init count 0",
            mutate("[%r2], 1;", "[%r2], 0;"),
            "argument 1 of `mbarrier.init`: value 0 out of range, expected to be in range [1..1048575]",
            "m.ptx:19:2",
        ),
        (
            "mbarrier.init count 2^20",
            mutate("[%r2], 1;", "[%r2], 1048576;"),
            "argument 1 of `mbarrier.init`: value 1048576 out of range, expected to be in range [1..1048575]",
            "m.ptx:19:2",
        ),
        (
            "a duplicate entry",
            mutate(ret, "\tret;\n}\n.visible .entry k(.param .u64 out)\n{\n\tret;\n}\n"),
            "duplicate definition of function `k`",
            "m.ptx:27:10",
        ),
        (
            "an initializer longer than its array",
            mutate("tbl[2] = {1, 2}", "tbl[2] = {1, 2, 3}"),
            "the initializer of `tbl` has 3 elements, more than its 2",
            "m.ptx:5:1",
        ),
        (
            "a float register where add.u32 takes an integer",
            mutate("add.u32 %r3, %r1, 1;", "add.u32 %r3, %f1, 1;"),
            "`%f1` is a `.f32` register, and `add` takes `.u32` there",
            "m.ptx:21:2",
        ),
        (
            "a 32-bit register for mul.wide's result",
            mutate("mul.wide.u32 %rd3, %r1, 4;", "mul.wide.u32 %r3, %r1, 4;"),
            "`%r3` is a `.b32` register, and `mul` takes `.u64` there",
            "m.ptx:22:2",
        ),
        (
            "a float register stored as u32",
            mutate("st.global.u32 [%rd3], %r3;", "st.global.u32 [%rd3], %f1;"),
            "`%f1` is a `.f32` register, and `st` takes `.u32` there",
            "m.ptx:24:2",
        ),
        (
            "a 64-bit load into a 32-bit register",
            mutate("st.global.u32 [%rd3], %r3;", "ld.global.u64 %r3, [%rd3];"),
            "`%r3` is a `.b32` register, and `ld` takes `.u64` there",
            "m.ptx:24:2",
        ),
        (
            "a 64-bit source of a 32-bit conversion",
            mutate("st.global.u32 [%rd3], %r3;", "cvt.f32.u32 %f1, %rd1;"),
            "`%rd1` is a `.b64` register, and `cvt` takes `.u32` there",
            "m.ptx:24:2",
        ),
        (
            "a predicate as an integer",
            mutate("add.u32 %r3, %r1, 1;", "add.u32 %r3, %p1, 1;"),
            "`%p1` is a `.pred` register, and `add` takes `.u32` there",
            "m.ptx:21:2",
        ),
        (
            "a duplicate label, at the duplicate",
            mutate(ret, "L1:\n\tadd.u32 %r3, %r3, 1;\nL1:\n\tret;\n}\n"),
            "duplicate definition of label `L1`",
            "m.ptx:27:1",
        ),
    ];
    for (what, ptx, message, at) in &cases {
        if let Some(ptxas) = &ptxas {
            assert!(
                assemble(ptxas, ptx, "sm_90a").is_err(),
                "{what}: ptxas takes it"
            );
        }
        let e = match ptx_str("m.ptx", ptx) {
            Ok(_) => panic!("{what}: the simulator loads it"),
            Err(e) => e,
        };
        assert!(e.contains("error[S0014]"), "{what}:\n{e}");
        assert!(e.contains(message), "{what}: wants `{message}`:\n{e}");
        assert!(e.contains(at), "{what}: wants {at}:\n{e}");
    }
}

/// The operand types ptxas takes load here too: bit registers for floats
/// and integers of their size, wider registers for sub-word loads, stores
/// and conversions, packing moves, predicates where predicates go.
#[test]
fn operand_types_ptxas_takes_still_load() {
    let ptxas = require_ptxas();
    let body = "\tadd.f32 %f2, %r1, %f1;
	mov.b32 %r4, %f2;
	ld.global.u8 %r5, [%rd2];
	ld.global.u32 %rd1, [%rd2];
	ld.global.f32 %rd1, [%rd2];
	st.global.f32 [%rd2], %rd1;
	st.global.u32 [%rd2], %rd1;
	st.global.f32 [%rd2], %r5;
	mov.f32 %f1, %r5;
	ld.global.u16 %rs1, [%rd2];
	st.global.u8 [%rd2], %r5;
	cvt.u16.u32 %rs2, %r5;
	cvt.rn.f32.u16 %f3, %rs2;
	cvt.u32.u8 %r6, %rs1;
	cvt.s64.s32 %rd1, %rd3;
	cvt.u32.u32 %r6, %rd3;
	cvt.rzi.s32.f32 %rd1, %f1;
	cvt.rn.f32.s8 %f1, %rd3;
	mov.b64 %rd3, {%r4, %r5};
	mov.b64 {%r4, %r5}, %rd3;
	setp.eq.s32 %p1, %r5, 0;
	selp.b32 %r6, %r4, %r5, %p1;
	and.pred %p1, %p1, %p1;
	shl.b64 %rd3, %rd3, %r6;
	mul.lo.s32 %r6, %r6, %r4;
	add.s32 %r6, %r6, %r4;
	fma.rn.f32 %f1, %r6, %f2, %f3;
	st.global.b32 [%rd2], %f1;
	ld.global.v2.f32 {%f1, %f2}, [%rd2];
	popc.b64 %r6, %rd3;
	bar.sync 1, 32;
	mbarrier.init.shared.b64 [%r2], 1048575;
	ret;
}
";
    let ptx = mutate("\tret;\n}\n", body);
    if let Some(ptxas) = &ptxas {
        assemble(ptxas, &ptx, "sm_90a").unwrap_or_else(|e| panic!("ptxas: {e}"));
    }
    ptx_str("m.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
}

/// `kdslc sim --ptxas` assembles the module first: what the simulator's
/// own checks do not cover (here an instruction the `.target` lacks) is
/// refused with ptxas's messages at the input's lines, exit 2; a module
/// ptxas takes runs; a ptxas that is not there is a usage error.
#[test]
fn sim_ptxas_refuses_what_ptxas_refuses() {
    let Some(ptxas) = require_ptxas() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let old = mutate(".target sm_90", ".target sm_70");
    let good = dir.path().join("good.ptx");
    let bad = dir.path().join("old.ptx");
    std::fs::write(&good, BASE).expect("writes");
    std::fs::write(&bad, &old).expect("writes");
    let flag = format!("--ptxas={}", ptxas.display());
    let sim = |file: &std::path::Path, extra: &[&str]| {
        let f = file.to_str().expect("UTF-8");
        let args = [
            &[
                "sim",
                f,
                "--grid",
                "1",
                "--block",
                "64",
                "--arg",
                "0=u32:zeros:64",
            ][..],
            extra,
        ]
        .concat();
        kdslc(&args)
    };
    // Without --ptxas the simulator runs it (its checks do not know which
    // target each instruction needs).
    assert_eq!(status(&sim(&bad, &[])), 0);
    let o = sim(&bad, &[&flag]);
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("rejects `") && e.contains("old.ptx` (exit status"),
        "{e}"
    );
    assert!(
        e.contains(
            "old.ptx, line 19; error   : Feature 'mbarrier.init' requires .target sm_80 or higher"
        ),
        "{e}"
    );
    let o = sim(&good, &[&flag]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    // `--ptxas` alone finds it as `build --emit cubin` does.
    let o = crate::common::kdslc_command(dir.path())
        .env("PTXAS", &ptxas)
        .args([
            "sim",
            good.to_str().expect("UTF-8"),
            "--ptxas",
            "--grid",
            "1",
            "--block",
            "64",
            "--arg",
            "0=u32:zeros:64",
        ])
        .output()
        .expect("kdslc runs");
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let o = sim(&good, &["--ptxas=/nonexistent/ptxas"]);
    assert_eq!(status(&o), 2);
    assert!(
        stderr(&o).contains("ptxas `/nonexistent/ptxas` (from --ptxas) does not exist"),
        "{}",
        stderr(&o)
    );
}

/// One thread issuing bulk stores in a loop, waiting only for all but
/// its newest two groups of 1024: thousands of copies in flight (bounded:
/// the oldest lands when 4096 are pending), and under a random schedule
/// each step lands a random one in constant time, so 300k copies take a
/// time linear in them (once quadratic: 52 s in a release build; here, in
/// a debug build, a few seconds). The kernel is race-free, so the run is
/// clean with the checks on: the buffer is written and fenced for the
/// async proxy before the copies read it, and the copies cycle over 4096
/// destinations, each one's previous copy covered by a `wait_group`
/// before it is written again.
#[test]
fn many_pending_bulk_copies_cost_constant_time_per_step() {
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
    let k = ptx_str("stores.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch(
        "stores",
        1,
        1,
        1,
        vec![f32s("out", &vec![1.0; 16 * 4096]), u32v(300_000)],
    );
    for schedule in [Schedule::Random(1), Schedule::InOrder] {
        let start = std::time::Instant::now();
        let o = run_with(&k, &l, schedule, 10_000_000);
        let took = start.elapsed();
        assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
        assert!(
            as_f32(&o.arrays[0]).iter().all(|&v| v == 0.0),
            "the buffer's zeros landed"
        );
        assert!(
            took < std::time::Duration::from_secs(60),
            "{schedule:?}: 300k bulk stores took {took:?}"
        );
    }
}

/// The "by N threads" of a report counts distinct threads, and says how
/// many times in all when a thread repeats: an access to an exited peer's
/// shared memory in a loop (S0010) keeps the count of the threads that
/// made it, whatever the trips of the loop.
#[test]
fn a_report_counts_threads_not_repetitions() {
    let ptx = |trips: u32| {
        format!(
            ".version 8.0
.target sm_90
.address_size 64
.visible .entry k()
.reqntid 32, 1, 1
.reqnctapercluster 2, 1, 1
{{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.shared .align 4 .b8 s[128];
	mov.u32 %r1, %cluster_ctarank;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, s;
	barrier.cluster.arrive.relaxed.aligned;
	barrier.cluster.wait.aligned;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 bra DONE;
	mad.lo.s32 %r4, %r2, 4, %r3;
	mapa.shared::cluster.u32 %r5, %r4, 0;
	mov.u32 %r6, 0;
L:
	st.shared::cluster.u32 [%r5], %r6;
	add.u32 %r6, %r6, 1;
	setp.lt.u32 %p2, %r6, {trips};
	@%p2 bra L;
DONE:
	ret;
}}
"
        )
    };
    let mut labels = Vec::new();
    for trips in [1u32, 10] {
        let k = ptx_str("m.ptx", &ptx(trips)).unwrap_or_else(|e| panic!("{e}"));
        let o = run_with(
            &k,
            &launch("k", 2, 32, 2, vec![]),
            Schedule::InOrder,
            1_000_000,
        );
        let text = rendered(&k, &o);
        assert_eq!(report_codes(&o), ["S0010"], "{text}");
        let label = text
            .lines()
            .find_map(|l| l.split_once("in CTA rank 0 by ").map(|x| x.1.to_string()))
            .unwrap_or_else(|| panic!("{text}"));
        labels.push(label);
    }
    // Once per thread: "31 threads"; ten times per thread: the same
    // threads, ten times as often.
    let threads = labels[0].clone();
    assert!(threads.ends_with("threads"), "{labels:?}");
    let n: u64 = threads
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{labels:?}"));
    assert!(n <= 32, "{labels:?}");
    assert!(
        labels[1].starts_with(&format!("{threads} (")) && labels[1].ends_with(" times)"),
        "{labels:?}"
    );
}

/// One thread issuing 300 bulk stores of a buffer nothing wrote: one
/// S0032 report "by 1 thread (300 times)", not "by 300 threads".
#[test]
fn a_thread_repeating_a_copy_is_one_thread() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry stores(.param .u64 out, .param .u32 n)\n{\n\
               \t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\
               \t.shared .align 16 .b8 buf[64];\n\
               \tld.param.u64 %rd1, [out];\n\tld.param.u32 %r2, [n];\n\
               \tmov.u32 %r1, buf;\n\tmov.u32 %r3, 0;\n\
               L:\n\tcp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 64;\n\
               \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n\
               \tadd.u32 %r3, %r3, 1;\n\tsetp.lt.u32 %p1, %r3, %r2;\n\t@%p1 bra L;\n\
               \tret;\n}\n";
    let k = ptx_str("stores.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("stores", 1, 1, 1, vec![f32s("out", &[1.0; 16]), u32v(300)]);
    let o = run_with(&k, &l, Schedule::InOrder, 1_000_000);
    let text = rendered(&k, &o);
    assert_eq!(report_codes(&o), ["S0032"], "{text}");
    assert!(text.contains("by 1 thread (300 times)"), "{text}");
    assert!(!text.contains("300 threads"), "{text}");
}
