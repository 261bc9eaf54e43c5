//! Real CUDA C++ through nvcc into the simulator: what ordinary CUDA code
//! compiles to besides the bench twins — `match.sync`, the special
//! registers the CUDA headers read, cooperative groups' multi-warp tiles
//! (reserved shared memory, funnel shifts, a spin on an acquire load),
//! Ampere `cp.async`, `printf` and `assert`, grid synchronisation. Each
//! source is compiled at test time with the pinned nvcc.

use crate::common::ptxas::require_nvcc;
use crate::common::sim::*;
use kdsl::sim::Schedule;
use std::process::Command;

/// nvcc's PTX (`-arch=sm_90`) of the CUDA source `cu`, loaded.
pub fn cuda(name: &str, cu: &str) -> Option<Loaded> {
    let ptx = cuda_ptx(name, cu)?;
    Some(ptx_str(&format!("{name}.ptx"), &ptx).unwrap_or_else(|e| panic!("{e}")))
}

/// nvcc's PTX (`-arch=sm_90`) of the CUDA source `cu` (`NAME.cu`).
pub fn cuda_ptx(name: &str, cu: &str) -> Option<String> {
    let nvcc = require_nvcc()?;
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join(format!("{name}.cu"));
    let out = dir.path().join(format!("{name}.ptx"));
    std::fs::write(&src, cu).expect("writes");
    // Relative names, as a user compiling in the folder gives them (they
    // end up in `assert`'s file name).
    let o = Command::new(nvcc)
        .current_dir(dir.path())
        .args(["-ptx", "-arch=sm_90", "-o"])
        .arg(format!("{name}.ptx"))
        .arg(format!("{name}.cu"))
        .output()
        .expect("nvcc runs");
    assert!(
        o.status.success(),
        "nvcc {name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(std::fs::read_to_string(&out).expect("reads the PTX"))
}

const SPECIALS: &str = r#"
__global__ void specials(unsigned* out, unsigned long long* clocks) {
  extern __shared__ unsigned dyn[];
  __shared__ unsigned st[40];
  unsigned t = threadIdx.x, lane = t % 32;
  if (t < 40) st[t] = t;
  dyn[t] = t;
  __syncthreads();
  unsigned *o = out + t * 8;
  o[0] = __match_any_sync(0xffffffff, lane / 4);
  int pred;
  o[1] = __match_all_sync(0xffffffff, 42ull, &pred);
  o[2] = pred;
  o[3] = __match_all_sync(0xffffffff, lane < 16 ? 1u : 2u, &pred) + pred;
  unsigned v;
  asm("mov.u32 %0, %%total_smem_size;" : "=r"(v)); o[4] = v;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(v)); o[5] = v;
  asm("mov.u32 %0, %%aggr_smem_size;" : "=r"(v)); o[6] = v;
  asm("mov.u32 %0, %%nsmid;" : "=r"(v)); o[7] = v + st[39] + dyn[63];
  long long c0 = clock64();
  unsigned g; asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(g));
  clocks[t] = (clock64() - c0) + ((unsigned long long)g << 20);
}
"#;

/// `__match_any_sync`/`__match_all_sync` (b32 and b64), the shared-memory
/// sizes a GPU gives (`%total_smem_size` in 128-byte units without the
/// reserved KiB, `%aggr_smem_size` with it), `%nsmid`, and clocks that are
/// the same under every schedule.
#[test]
fn match_sync_and_special_registers() {
    let Some(k) = cuda("specials", SPECIALS) else {
        return;
    };
    let mut l = launch(
        "_Z8specialsPjPy",
        1,
        64,
        1,
        vec![
            u32s("out", &[0; 512]),
            array("clocks", kdsl::types::Scalar::U64, vec![0; 512]),
        ],
    );
    l.dynamic_shared = 256;
    let mut clocks = Vec::new();
    for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
        let o = run_with(&k, &l, schedule, 10_000_000);
        assert!(!o.faulted, "{}", rendered(&k, &o));
        let out = as_u32(&o.arrays[0]);
        for t in 0..64usize {
            let lane = t % 32;
            let o = &out[t * 8..t * 8 + 8];
            assert_eq!(o[0], 0xf << (4 * (lane / 4)), "thread {t}");
            assert_eq!(o[1..4], [u32::MAX, 1, 0], "thread {t}");
            // 40 words static + 256 bytes dynamic = 416, in 128-byte units.
            assert_eq!(o[4..7], [512, 256, 512 + 1024], "thread {t}");
            assert_eq!(o[7], 1 + 39 + 63, "thread {t}");
        }
        clocks.push(o.arrays[1].data.clone());
    }
    assert!(
        clocks.windows(2).all(|w| w[0] == w[1]),
        "clocks differ by schedule"
    );
    assert!(clocks[0].iter().any(|&b| b != 0));
}

pub const TILES: &str = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void tiles(const int* x, int* out) {
  cg::thread_block b = cg::this_thread_block();
  cg::thread_block_tile<64> tile = cg::tiled_partition<64>(b);
  int v = x[b.thread_rank()];
  int s = cg::reduce(tile, v, cg::plus<int>());
  tile.sync();
  if (tile.thread_rank() == 0) out[b.thread_rank() / 64] = s;
}
"#;

/// Cooperative groups' 64-thread tiles: their barrier and scratch live in
/// the reserved shared memory at `%reserved_smem_offset_1`, their masks are
/// funnel shifts (`shf.l.wrap`), and a warp waits for the others by
/// spinning on an `ld.acquire` — which the in-order schedule follows.
#[test]
fn cooperative_group_tiles_of_64() {
    if let Some(k) = cuda("tiles", TILES) {
        case_cg_tiles(&k);
    }
}

/// [`TILES`] on 256 threads, in order and under a random schedule: the
/// tiles' sums, and no report (every lane of a warp stores the warp's
/// partial sum into the warp's scratch slot: one warp-wide store; the
/// reserved shared memory comes initialised).
pub fn case_cg_tiles(k: &Loaded) {
    let x: Vec<u32> = (0..256).map(|i| i * 3 + 1).collect();
    let l = launch(
        "_Z5tilesPKiPi",
        1,
        256,
        1,
        vec![u32s("x", &x), u32s("out", &[0; 4])],
    );
    for schedule in [Schedule::InOrder, Schedule::Random(7)] {
        let o = run_clean_with(k, &l, schedule, 10_000_000);
        let want: Vec<u32> = x.chunks(64).map(|c| c.iter().sum()).collect();
        assert_eq!(as_u32(&o.arrays[1]), want);
    }
}

/// The special registers of the PTX ISA that CUDA code may read, by hand:
/// the environment registers (0 outside a cooperative launch), the
/// reserved shared memory (the first KiB, readable and writable through
/// `%reserved_smem_offset_1`), performance counters (0), no CUDA graph,
/// and the clocks' upper halves.
#[test]
fn special_registers_by_hand() {
    let ptx = ".version 8.1
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %envreg0;
	mov.u32 %r2, %envreg31;
	mov.u32 %r3, %reserved_smem_offset_begin;
	mov.u32 %r4, %reserved_smem_offset_end;
	mov.u32 %r5, %reserved_smem_offset_cap;
	mov.u32 %r6, %reserved_smem_offset_0;
	mov.u32 %r7, %reserved_smem_offset_1;
	mov.u32 %r8, %pm3;
	mov.u64 %rd2, %pm7_64;
	mov.u64 %rd3, %current_graph_exec;
	mov.u32 %r9, %clock_hi;
	mov.u32 %r10, %globaltimer_hi;
	st.shared.u32 [%r7], 77;
	ld.shared.u32 %r11, [%r7];
	cvt.u32.u64 %r12, %rd2;
	cvt.u32.u64 %r13, %rd3;
	st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
	st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
	st.global.v4.u32 [%rd1+32], {%r12, %r13, %r9, %r10};
	st.global.u32 [%rd1+48], %r11;
	ret;
}
";
    let k = ptx_str("s.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let o = run(&k, &launch("k", 1, 1, 1, vec![u32s("out", &[9; 13])]));
    assert!(!o.faulted, "{}", rendered(&k, &o));
    assert_eq!(
        as_u32(&o.arrays[0]),
        [0, 0, 0, 1024, 1024, 0, 512, 0, 0, 0, 0, 0, 77]
    );
    // Without those registers the first KiB stays outside every variable.
    let plain = ptx
        .lines()
        .filter(|l| !l.contains("reserved_smem"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("[%r7]", "[16]");
    let k = ptx_str("s.ptx", &plain).unwrap_or_else(|e| panic!("{e}"));
    let o = run(&k, &launch("k", 1, 1, 1, vec![u32s("out", &[9; 13])]));
    assert_eq!(report_codes(&o), ["S0002", "S0002"]);
}

pub const CP_ASYNC: &str = r#"
#include <cuda_pipeline.h>
#include <cuda/barrier>
__global__ void staged(const float* x, float* y, int n) {
  __shared__ __align__(16) float s[2][512];
  int t = threadIdx.x, i = t * 4;
  int avail = n > i ? min(4, n - i) : 0;
  // 16-byte copies with a zero-filled tail, then 4- and 8-byte ones.
  __pipeline_memcpy_async(&s[0][i], &x[avail ? i : 0], 16, 16 - 4 * avail);
  __pipeline_commit();
  __pipeline_memcpy_async(&s[1][i], &x[(i + 512) % n], 4);
  __pipeline_memcpy_async(&s[1][i + 2], &x[(i + 514) % n & ~1], 8);
  __pipeline_commit();
  __pipeline_wait_prior(1);
  __syncthreads();
  float a = s[0][511 - i];
  __pipeline_wait_prior(0);
  __syncthreads();
  y[t] = a + s[1][i] + s[1][i + 2] + s[1][i + 3];
}
__global__ void with_barrier(const int* x, int* y) {
  __shared__ int s[256];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> b;
  if (threadIdx.x == 0) init(&b, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(&s[threadIdx.x], &x[threadIdx.x], cuda::aligned_size_t<4>(4), b);
  b.arrive_and_wait();
  y[threadIdx.x] = s[255 - threadIdx.x];
}
"#;

/// Ampere `cp.async` as `cuda_pipeline.h` and `cuda::memcpy_async` emit
/// it: `.cg` 16-byte copies with a source size (zero-filled tails), `.ca`
/// 4- and 8-byte ones, two commit groups waited for one at a time, and
/// `cp.async.mbarrier.arrive` before a `cuda::barrier`'s arrival.
#[test]
fn cp_async_from_cuda() {
    if let Some(k) = cuda("cp_async", CP_ASYNC) {
        case_cp_async(&k);
    }
}

/// [`CP_ASYNC`]'s kernels on several sizes, in order and under random
/// schedules: the values, and no report (the copies are ordered by the
/// waits and barriers after them, and initialise what they write).
pub fn case_cp_async(k: &Loaded) {
    for n in [1000usize, 250, 6] {
        let x: Vec<f32> = (0..n).map(|v| v as f32 * 0.5 + 1.0).collect();
        let l = launch(
            "_Z6stagedPKfPfi",
            1,
            128,
            1,
            vec![f32s("x", &x), f32s("y", &[0.0; 128]), u32v(n as u32)],
        );
        let mut s0 = vec![0f32; 512];
        let mut s1 = vec![0f32; 512];
        for t in 0..128 {
            let i = t * 4;
            for k in 0..4 {
                if i + k < n {
                    s0[i + k] = x[i + k];
                }
            }
            s1[i] = x[(i + 512) % n];
            let j = ((i + 514) % n) & !1;
            s1[i + 2] = x[j];
            s1[i + 3] = x[j + 1];
        }
        let want: Vec<f32> = (0..128)
            .map(|t| {
                let i = t * 4;
                s0[511 - i] + s1[i] + s1[i + 2] + s1[i + 3]
            })
            .collect();
        for schedule in [Schedule::InOrder, Schedule::Random(3)] {
            let o = run_clean_with(k, &l, schedule, 10_000_000);
            assert_eq!(as_f32(&o.arrays[1]), want, "n = {n}");
        }
    }
    let x: Vec<u32> = (0..256).map(|v| v * 7).collect();
    let l = launch(
        "_Z12with_barrierPKiPi",
        1,
        256,
        1,
        vec![u32s("x", &x), u32s("y", &[0; 256])],
    );
    for schedule in [Schedule::InOrder, Schedule::Random(5)] {
        let o = run_clean_with(k, &l, schedule, 10_000_000);
        let want: Vec<u32> = x.iter().rev().copied().collect();
        assert_eq!(as_u32(&o.arrays[1]), want);
    }
}

/// `cp.async` by hand: the data lands at the wait, not before (a read of
/// the destination in between sees the old bytes); `ignore-src` writes
/// zeros; `.noinc` arrivals count towards the mbarrier's expected ones;
/// a misaligned or out-of-bounds copy is reported at its issue.
#[test]
fn cp_async_by_hand() {
    let ptx = ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 out)
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	.shared .align 16 .b8 s[64];
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, s;
	mov.u32 %r9, bar;
	mbarrier.init.shared.b64 [%r9], 1;
	st.shared.u32 [%r1], 5;
	cp.async.ca.shared.global [%r1], [%rd1], 4;
	ld.shared.u32 %r2, [%r1];
	cp.async.commit_group;
	cp.async.wait_group 0;
	ld.shared.u32 %r3, [%r1];
	setp.eq.u32 %p1, %r3, %r3;
	cp.async.cg.shared.global [%r1+16], [%rd1], 16, %p1;
	cp.async.ca.shared.global [%r1+32], [%rd1], 8, 3;
	cp.async.mbarrier.arrive.noinc.shared.b64 [%r9];
	mbarrier.try_wait.parity.shared.b64 %p2, [%r9], 0;
	ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r1+16];
	ld.shared.v2.u32 {%r10, %r11}, [%r1+32];
	st.global.v4.u32 [%rd2], {%r2, %r3, %r4, %r7};
	st.global.v2.u32 [%rd2+16], {%r10, %r11};
	ret;
}
";
    let k = ptx_str("c.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let x = u32s("x", &[0x1122_3344, 0x5566_7788, 9, 9]);
    let o = run(
        &k,
        &launch("k", 1, 1, 1, vec![x.clone(), u32s("out", &[0; 6])]),
    );
    assert_eq!(as_u32(&o.arrays[1]), [5, 0x1122_3344, 0, 0, 0x0022_3344, 0]);
    // Reading the destination between the issue and the wait is what
    // shows the landing time, and it is a race with the copy (a GPU may
    // land it any time after the issue): the one report, at the copy,
    // naming the read. The copies initialise what they write (no S0032)
    // and the wait and the mbarrier phase order the later reads.
    let text = rendered(&k, &o);
    assert_eq!(report_codes(&o), ["S0030"], "{text}");
    for needle in [
        "c.ptx:17:2",
        "the cp.async copy (of cta (0,0,0) thread 0)",
        "ld.shared.u32 %r2, [%r1];",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    // Without the early read: clean.
    let waited = ptx.replace("\tld.shared.u32 %r2, [%r1];\n", "\tmov.u32 %r2, 5;\n");
    let k2 = ptx_str("c.ptx", &waited).unwrap_or_else(|e| panic!("{e}"));
    let o = run_clean(
        &k2,
        &launch("k", 1, 1, 1, vec![x.clone(), u32s("out", &[0; 6])]),
    );
    assert_eq!(as_u32(&o.arrays[1]), [5, 0x1122_3344, 0, 0, 0x0022_3344, 0]);
    // The issue's checks (with the run-time checks off: the copies that
    // are refused leave their destination unwritten).
    let bad = ptx
        .replace("[%r1+32], [%rd1], 8, 3", "[%r1+36], [%rd1], 8, 3")
        .replace("[%r1+16], [%rd1], 16, %p1", "[%r1+16], [%rd1+16], 16, !%p1");
    let k = ptx_str("c.ptx", &bad).unwrap_or_else(|e| panic!("{e}"));
    let o = kdsl::sim::run(
        &k.program,
        &launch("k", 1, 1, 1, vec![x, u32s("out", &[0; 6])]),
        &kdsl::sim::SimOptions {
            checks: kdsl::sim::Checks::none(),
            ..kdsl::sim::SimOptions::default()
        },
    );
    assert_eq!(report_codes(&o), ["S0002", "S0003"], "{}", rendered(&k, &o));
}

/// A `cp.async` copy is ordered before another thread's read only through
/// a barrier after the issuer's wait: without the barrier the read races
/// with the copy (S0030 at the read, naming the copy), under every
/// schedule; with it, the run is clean and the value is the copy's.
#[test]
fn cp_async_orders_other_threads_only_through_a_barrier() {
    let ptx = |barrier: &str| {
        format!(
            ".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 out)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 s[16];
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, s;
	mov.u32 %r2, %tid.x;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra READ;
	cp.async.ca.shared.global [%r1], [%rd1], 4;
	cp.async.wait_all;
READ:
	{barrier}
	ld.shared.u32 %r3, [%r1];
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd3, %rd2, %rd3;
	st.global.u32 [%rd3], %r3;
	ret;
}}
"
        )
    };
    let l = launch(
        "k",
        1,
        64,
        1,
        vec![u32s("x", &[77, 0, 0, 0]), u32s("out", &[0; 64])],
    );
    let racy = ptx_str("r.ptx", &ptx("")).unwrap_or_else(|e| panic!("{e}"));
    for schedule in [Schedule::InOrder, Schedule::Random(4)] {
        let o = run_with(&racy, &l, schedule, 1_000_000);
        let text = rendered(&racy, &o);
        assert!(report_codes(&o).contains(&"S0030"), "{schedule:?}: {text}");
        assert!(
            text.contains("the cp.async copy (of cta (0,0,0) thread 0)"),
            "{text}"
        );
    }
    let synced = ptx_str("s.ptx", &ptx("bar.sync 0;")).unwrap_or_else(|e| panic!("{e}"));
    for schedule in [Schedule::InOrder, Schedule::Random(4)] {
        let o = run_clean_with(&synced, &l, schedule, 1_000_000);
        assert_eq!(as_u32(&o.arrays[1]), [77; 64]);
    }
}

pub const PRINTF: &str = r#"
#include <cstdio>
#include <cassert>
__global__ void show(const float* x, int n) {
  int t = threadIdx.x;
  if (t % 2 == 0) printf("[%d,%u] x=%f %.2e %g|%5.1f|%-4d|%04x|%X|%o|%c|%s|%lld|%llu|%ld\n",
      blockIdx.x, t, x[t], x[t], x[t], x[t], t, 255 * t, 48879u + t, 8u, 'a' + t,
      t ? "odd" : "zero", -1234567890123ll, 18446744073709551615ull, (long)n);
  printf("%d%%%i%+d% d|%8.3s|%p|%p\n", t, -t, t, t, "abcdef", (void*)0, (void*)0x1000);
}
__global__ void checked(const float* x) {
  assert(x[threadIdx.x] < 100.0f);
}
"#;

/// The text every line of `show` prints, in the simulator's order.
fn show_lines(grid: u32, block: u32, x: &[f32], n: i64) -> String {
    let mut out = String::new();
    for b in 0..grid {
        for t in 0..block {
            let v = f64::from(x[t as usize]);
            if t % 2 == 0 {
                let e = format!("{v:.2e}");
                let (m, ex) = e.split_once('e').unwrap();
                let ex: i32 = ex.parse().unwrap();
                out.push_str(&format!(
                    "[{b},{t}] x={v:.6} {m}e{}{:02} {}|{v:5.1}|{t:<4}|{:04x}|{:X}|10|{}|{}|-1234567890123|18446744073709551615|{n}\n",
                    if ex < 0 { '-' } else { '+' },
                    ex.abs(),
                    v,
                    255 * t,
                    48879 + t,
                    (b'a' + t as u8) as char,
                    if t > 0 { "odd" } else { "zero" },
                ));
            }
            out.push_str(&format!(
                "{t}%{}{:+} {t}|     abc|(nil)|0x1000\n",
                -(t as i64),
                t,
            ));
        }
    }
    out
}

/// CUDA's `printf` (`vprintf` with nvcc's argument buffer): C's
/// conversions with flags, widths and precisions, by CTA, then thread,
/// then call — the same text under every schedule.
#[test]
fn printf_from_cuda() {
    if let Some(k) = cuda("printf", PRINTF) {
        case_printf(&k);
    }
}

/// [`PRINTF`]'s `show` on 3 CTAs of 6 threads under three schedules: the
/// same text, and no report.
pub fn case_printf(k: &Loaded) {
    let x = [1.5f32, 2.0, 0.25, 3.0, 123.0, 0.5];
    let l = launch("_Z4showPKfi", 3, 6, 1, vec![f32s("x", &x), u32v(77)]);
    let want = show_lines(3, 6, &x, 77);
    for schedule in [
        Schedule::InOrder,
        Schedule::Random(11),
        Schedule::Random(12),
    ] {
        let o = run_clean_with(k, &l, schedule, 10_000_000);
        let text: String = o.printed.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(text, want);
        assert_eq!(o.printed.len(), 3 * (6 + 3));
        assert_eq!((o.printed[0].cta, o.printed[0].thread), ([0, 0, 0], 0));
        assert_eq!((o.printed[26].cta, o.printed[26].thread), ([2, 0, 0], 5));
    }
}

/// A failed `assert`: S0041 with the condition, the function, file and
/// line `assert` passes, the threads, and the line a GPU prints; the run
/// is faulted, the other threads run to the end.
#[test]
fn assert_from_cuda() {
    let Some(k) = cuda("assert", PRINTF) else {
        return;
    };
    let x = [1.0f32, 200.0, 3.0, 400.0];
    let l = launch("_Z7checkedPKf", 2, 4, 1, vec![f32s("x", &x)]);
    let o = run(&k, &l);
    assert!(o.faulted);
    assert_eq!(report_codes(&o), ["S0041"]);
    let text = rendered(&k, &o);
    for needle in [
        "error[S0041]: assertion `x[threadIdx.x] < 100.0f` failed",
        "failed here in 4 threads",
        "`assert` in `void checked(const float *)` at assert.cu:12",
        "by cta (0,0,0) threads 1, 3; cta (1,0,0) threads 1, 3",
        "a GPU prints: assert.cu:12: void checked(const float *): block: [0,0,0], thread: [1,0,0] Assertion `x[threadIdx.x] < 100.0f` failed.",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
}

/// From the command line: the printed text on stdout (also when the run
/// faults: before the reports), and under `--message-format json` one
/// object per call with its CTA and thread.
#[test]
fn printf_and_assert_from_the_command_line() {
    use crate::sim::cli::{kdslc, status, stderr, stdout};
    let Some(ptx) = cuda_ptx("printf", PRINTF) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("printf.ptx");
    std::fs::write(&path, ptx).expect("writes");
    let p = path.to_str().expect("UTF-8");
    let args = |json: bool| {
        let mut a = vec![
            "sim",
            p,
            "--kernel",
            "_Z4showPKfi",
            "--grid",
            "2",
            "--block",
            "3",
            "--arg",
            "0=f32:[1.5,2,0.25]",
            "--arg",
            "1=5",
        ];
        if json {
            a.extend(["--message-format", "json"]);
        }
        a
    };
    let o = kdslc(&args(false));
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), show_lines(2, 3, &[1.5, 2.0, 0.25], 5));
    let o = kdslc(&args(true));
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let objects: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let printf: Vec<&serde_json::Value> =
        objects.iter().filter(|v| v["type"] == "printf").collect();
    assert_eq!(printf.len(), 2 * (3 + 2));
    assert_eq!(printf[0]["cta"], serde_json::json!([0, 0, 0]));
    assert_eq!(printf[0]["thread"], 0);
    assert_eq!(printf[9]["cta"], serde_json::json!([1, 0, 0]));
    assert_eq!(printf[9]["thread"], 2);
    assert_eq!(printf[9]["text"], "2%-2+2 2|     abc|(nil)|0x1000\n");
    let o = kdslc(&[
        "sim",
        p,
        "--kernel",
        "_Z7checkedPKf",
        "--grid",
        "1",
        "--block",
        "2",
        "--arg",
        "0=f32:[1,500]",
    ]);
    assert_eq!(status(&o), 4, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error[S0041]: assertion"),
        "{}",
        stderr(&o)
    );
}

const CONSTANTS: &str = r#"
struct Params { float scale; unsigned n; double bias[2]; };
__constant__ float coef[4];
__constant__ int offs = 5;
__global__ void k(Params p, const float* x, float* y) {
  unsigned t = threadIdx.x;
  if (t < p.n) y[t] = x[t] * p.scale * coef[t % 4] + (float)p.bias[t % 2] + offs;
}
"#;

/// `__constant__` memory from the command line (`--const NAME=ARRAY`) and
/// a struct passed by value (`struct:` fields, or `bytes:` from a file),
/// from nvcc's PTX; the forms left out or mistaken are usage errors that
/// say which forms a parameter takes.
#[test]
fn constant_memory_and_struct_parameters() {
    use crate::sim::cli::{kdslc, status, stderr, stdout};
    let Some(ptx) = cuda_ptx("constants", CONSTANTS) else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("constants.ptx");
    std::fs::write(&path, &ptx).expect("writes");
    let p = path.to_str().expect("UTF-8");
    let want = |coef: [f32; 4], offs: f32, scale: f32, n: usize, bias: [f64; 2]| {
        (0..8)
            .map(|t| {
                if t < n {
                    (t as f32 * scale * coef[t % 4] + bias[t % 2] as f32 + offs).to_string()
                } else {
                    "0".to_string()
                }
            })
            .collect::<Vec<_>>()
    };
    let values = |o: &std::process::Output| -> Vec<String> {
        let text = stdout(o);
        let v: serde_json::Value = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
            .find(|v| v["type"] == "array")
            .expect("the array");
        v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|x| x.as_f64().expect("a number").to_string())
            .collect()
    };
    let base = [
        "sim",
        p,
        "--grid",
        "1",
        "--block",
        "8",
        "--arg",
        "1=f32:iota:8",
        "--arg",
        "2=f32:zeros:8",
        "--dump",
        "_Z1k6ParamsPKfPf_param_2",
        "--message-format",
        "json",
    ];
    let o = kdslc(
        &[
            &base[..],
            &[
                "--arg",
                "0=struct:f32=2,u32=6,f64=[0.5, 1.5]",
                "--const",
                "coef=f32:[1, 2, 3, 4]",
            ],
        ]
        .concat(),
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        values(&o),
        want([1.0, 2.0, 3.0, 4.0], 5.0, 2.0, 6, [0.5, 1.5])
    );

    // The same struct from a file of its 24 bytes; `offs` set too.
    let mut bytes = 3f32.to_le_bytes().to_vec();
    bytes.extend(8u32.to_le_bytes());
    bytes.extend(0.25f64.to_le_bytes());
    bytes.extend((-1f64).to_le_bytes());
    let file = dir.path().join("params.bin");
    std::fs::write(&file, &bytes).expect("writes");
    let arg = format!("0=bytes:@{}", file.display());
    let o = kdslc(
        &[
            &base[..],
            &[
                "--arg",
                &arg,
                "--const",
                "coef=f32:fill:4:0.5",
                "--const",
                "offs=i32:[-2]",
            ],
        ]
        .concat(),
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(values(&o), want([0.5; 4], -2.0, 3.0, 8, [0.25, -1.0]));

    // Mistakes: exit 2, each saying what is expected.
    for (extra, needle) in [
        (&[][..], "`_Z1k6ParamsPKfPf_param_0` (PTX .b8[24]: a struct passed by value, as `bytes:@FILE` or `struct:f32=1.5,u32=7`)"),
        (&["--arg", "0=1.5"][..], "a struct passed by value takes its 24 bytes"),
        (&["--arg", "0=bytes:zeros:16"][..], "`bytes:` gives 16 bytes, and the parameter has 24"),
        (&["--arg", "0=struct:f64=[1,2,3,4]"][..], "the fields take 32 bytes, and the parameter has 24"),
        (&["--arg", "0=bytes:zeros:24", "--const", "coef=[1, 2]"][..], "`coef` is declared `.b8`, so the array needs its element type"),
        (&["--arg", "0=bytes:zeros:24", "--const", "coef=f32:iota:5"][..], "gives 20 bytes, and `coef` has 16"),
        (&["--arg", "0=bytes:zeros:24", "--const", "cof=f32:[1]"][..], "the module has no `.const` variable `cof` (it has `coef`, `offs`)"),
    ] {
        let o = kdslc(&[&base[..], extra].concat());
        assert_eq!(status(&o), 2, "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle) || stdout(&o).contains(needle), "{needle}:\n{}{}", stderr(&o), stdout(&o));
    }
}

/// Cooperative groups' grid barrier: every CTA reads what another wrote
/// before the last `grid.sync()`, round after round.
pub const GRID_SYNC: &str = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void shift(float* a, float* b, int rounds) {
    cg::grid_group g = cg::this_grid();
    unsigned n = g.size(), i = g.thread_rank();
    for (int r = 0; r < rounds; r++) {
        b[i] = a[(i + blockDim.x) % n] + 1.0f;
        g.sync();
        a[i] = b[i];
        g.sync();
    }
}
"#;

/// [`GRID_SYNC`] on 6 CTAs of 64 threads, 5 rounds, cooperative, under
/// three schedules: every round's shift, and no report (`grid.sync()`
/// orders the rounds across CTAs).
pub fn case_grid_sync(k: &Loaded) {
    let (grid, block, rounds) = (6u32, 64u32, 5u32);
    let n = (grid * block) as usize;
    let a0: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut l = launch(
        "shift",
        grid,
        block,
        1,
        vec![f32s("a", &a0), f32s("b", &vec![0.0; n]), u32v(rounds)],
    );
    l.cooperative = true;
    let want: Vec<f32> = (0..n)
        .map(|i| ((i + (rounds * block) as usize) % n) as f32 + rounds as f32)
        .collect();
    for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(11)] {
        let o = run_clean_with(k, &l, schedule, 50_000_000);
        assert_eq!(as_f32(&o.arrays[0]), want, "{schedule:?}");
    }
}

/// `grid.sync()` in a cooperative launch (`Launch::cooperative`, `kdslc
/// sim --cooperative`): every CTA of the grid is resident at once and the
/// grid workspace exists, under every schedule. Without it the workspace
/// is null and cooperative groups trap, as on a GPU; a grid past what the
/// simulator holds at once, and clusters, are refused.
#[test]
fn grid_sync_in_a_cooperative_launch() {
    let Some(k) = cuda("grid_sync", GRID_SYNC) else {
        return;
    };
    case_grid_sync(&k);
    // Not cooperative: `grid.sync()` traps.
    let n = 6 * 64;
    let l = launch(
        "shift",
        6,
        64,
        1,
        vec![f32s("a", &vec![0.0; n]), f32s("b", &vec![0.0; n]), u32v(5)],
    );
    let o = run_with(&k, &l, Schedule::InOrder, 50_000_000);
    assert_eq!(report_codes(&o), ["S0016"], "{}", rendered(&k, &o));
    // Too many CTAs at once, or clusters: the launch does not fit.
    for (g, c) in [(255u32, 1u32), (4, 2)] {
        let mut l = launch(
            "shift",
            g,
            32,
            c,
            vec![
                f32s("a", &vec![0.0; (g * 32) as usize]),
                f32s("b", &vec![0.0; (g * 32) as usize]),
                u32v(1),
            ],
        );
        l.cooperative = true;
        let o = run(&k, &l);
        assert_eq!(report_codes(&o), ["S0015"], "{}", rendered(&k, &o));
        let text = rendered(&k, &o);
        assert!(
            text.contains("at most 254") || text.contains("a cooperative launch with clusters"),
            "{text}"
        );
    }
    // The flag.
    let ptx = cuda_ptx("grid_sync", GRID_SYNC).expect("nvcc");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("grid_sync.ptx");
    std::fs::write(&path, ptx).expect("writes");
    let o = crate::sim::cli::kdslc(&[
        "sim",
        path.to_str().expect("UTF-8"),
        "--grid",
        "4",
        "--block",
        "32",
        "--arg",
        "0=f32:iota:128",
        "--arg",
        "1=f32:zeros:128",
        "--arg",
        "2=1",
        "--cooperative",
        "--dump",
        "shift_param_0",
    ]);
    assert_eq!(
        crate::sim::cli::status(&o),
        0,
        "{}",
        crate::sim::cli::stderr(&o)
    );
    let out = crate::sim::cli::stdout(&o);
    assert!(
        out.starts_with("shift_param_0: f32[128] = [33.0, 34.0, 35.0"),
        "{out}"
    );
}
