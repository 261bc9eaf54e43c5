//! kdsl's tensor cores in the simulator against Rust references, on
//! integer-valued inputs (every sum exact, so the simulator's result is
//! the only right one whatever the hardware's summation order): every
//! kind of `wgmma` form, a K loop that keeps one group in flight
//! (`wgmma_wait(1)`), and a warp-specialised kernel with register budgets
//! and mbarriers, under in-order and random schedules.

use crate::common::sim::*;
use kdsl::fp::{self, Format};
use kdsl::sim::Schedule;
use kdsl::types::Scalar;

fn opts() -> kdsl::Options {
    kdsl::Options {
        target: kdsl::target::Target::Sm90a,
        ..kdsl::Options::default()
    }
}

/// Small integers, reproducible from `seed`: in `lo..=hi`.
fn ints(n: usize, lo: i32, hi: i32, seed: u64) -> Vec<i32> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (x % (hi - lo + 1) as u64) as i32
        })
        .collect()
}

/// The bytes of `v` as elements of `t` (each exactly representable).
fn encode(t: Scalar, v: &[i32]) -> Vec<u8> {
    let fp8 = |v: i32, bias: i32, mant: u32| -> u8 {
        if v == 0 {
            return 0;
        }
        let a = v.unsigned_abs();
        let e = 31 - a.leading_zeros();
        let m = (a << mant) >> e & ((1 << mant) - 1);
        let bits = ((e as i32 + bias) as u32) << mant | m;
        (bits as u8) | if v < 0 { 0x80 } else { 0 }
    };
    v.iter()
        .flat_map(|&x| match t {
            Scalar::F16 | Scalar::BF16 => {
                let f = Format::of(t).expect("a half");
                (fp::to_bits(f64::from(x), f) as u16).to_le_bytes().to_vec()
            }
            Scalar::TF32 | Scalar::F32 => (x as f32).to_le_bytes().to_vec(),
            Scalar::E4M3 => vec![fp8(x, 7, 3)],
            Scalar::E5M2 => vec![fp8(x, 15, 2)],
            Scalar::I8 | Scalar::U8 => vec![x as u8],
            other => panic!("no encoding of {other}"),
        })
        .collect()
}

fn size(t: Scalar) -> usize {
    t.size() as usize
}

/// `acc (64 x n) = A (64 x kt) B (n x kt)ᵀ`, both loaded with element
/// stores into 128B-swizzled arrays, one wgmma per 32 bytes of K.
fn form_kernel(d: Scalar, a: Scalar, b: Scalar, n: usize) -> String {
    let kt = 128 / size(a);
    let k = 32 / size(a);
    let out = if d == Scalar::I32 { "i32" } else { "f32" };
    let cast = if d == Scalar::F16 { " as f32" } else { "" };
    format!(
        "kernel mm(a: global [{a}], b: global [{b}], c: global mut [{out}]) block(128) {{
    shared sa: [{a}; 64, {kt}] swizzle(128);
    shared sb: [{b}; {n}, {kt}] swizzle(128);
    accum acc: [{d}; 64, {n}];
    for i in thread_idx.x..{sa_len} step 128 {{
        sa[i / {kt}, i % {kt}] = a[i];
    }}
    for i in thread_idx.x..{sb_len} step 128 {{
        sb[i / {kt}, i % {kt}] = b[i];
    }}
    fence_proxy_async();
    sync_threads();
    for kk in [0u32, 1, 2, 3] {{
        wgmma(acc, sa[0, kk * {k}], sb[0, kk * {k}], accumulate = kk > 0);
    }}
    wgmma_commit();
    wgmma_wait(0);
    for i in 0..{half}u32 {{
        c[acc_row(acc, i) * {n} + acc_col(acc, i)] = acc[i]{cast};
    }}
}}
",
        sa_len = 64 * kt,
        sb_len = n * kt,
        half = n / 2
    )
}

/// `A Bᵀ` of row-major `a` (`m x k`) and `b` (`n x k`).
fn reference(a: &[i32], b: &[i32], m: usize, n: usize, k: usize) -> Vec<i64> {
    let mut c = vec![0i64; m * n];
    for r in 0..m {
        for col in 0..n {
            c[r * n + col] = (0..k)
                .map(|j| i64::from(a[r * k + j]) * i64::from(b[col * k + j]))
                .sum();
        }
    }
    c
}

#[test]
fn every_kind_of_form_multiplies_exactly() {
    use Scalar::*;
    let forms = [
        (F32, BF16, BF16, 64),
        (F32, F16, F16, 256),
        (F16, F16, F16, 24),
        (F32, TF32, TF32, 40),
        (F32, E4M3, E5M2, 64),
        (F16, E5M2, E4M3, 16),
        (I32, I8, I8, 48),
        (I32, U8, I8, 32),
    ];
    for (i, (d, a, b, n)) in forms.into_iter().enumerate() {
        let kt = 128 / size(a);
        let (lo, hi) = if a == U8 { (0, 5) } else { (-3, 3) };
        let av = ints(64 * kt, lo, hi, 2 * i as u64 + 1);
        let bv = ints(n * kt, -3, 3, 2 * i as u64 + 2);
        let source = form_kernel(d, a, b, n);
        let l = kdsl_str_with("form.kdsl", &source, &opts());
        let sig = l.program.signature("mm").expect("the kernel");
        let out_elem = if d == I32 { I32 } else { F32 };
        let mut launch = launch(
            "mm",
            [1, 1, 1],
            [128, 1, 1],
            [1, 1, 1],
            vec![
                array("a", a, encode(a, &av)),
                array("b", b, encode(b, &bv)),
                array("c", out_elem, vec![0; 64 * n * 4]),
            ],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let o = run_clean(&l, &launch);
        let want = reference(&av, &bv, 64, n, kt);
        let got: Vec<i64> = if d == I32 {
            as_u32(&o.arrays[2])
                .iter()
                .map(|&x| i64::from(x as i32))
                .collect()
        } else {
            as_f32(&o.arrays[2]).iter().map(|&x| x as i64).collect()
        };
        assert_eq!(got, want, "{d} += {a} x {b}, N = {n}");
    }
}

/// C (64 x 64) over K = 64 `tiles`: two stages, each loaded by every
/// thread while the wgmma group of the other stage may still run
/// (`wgmma_wait(1)`), the epilogue after `wgmma_wait(0)`.
const LAGGED: &str = "
kernel lagged(a: global [bf16], b: global [bf16], c: global mut [f32], tiles: u32) block(128) {
    shared sa: [bf16; 2, 64, 64] swizzle(128);
    shared sb: [bf16; 2, 64, 64] swizzle(128);
    accum acc: [f32; 64, 64];
    let k = tiles * 64;
    for kt in 0..tiles {
        let s = kt % 2;
        for i in thread_idx.x..4096 step 128 {
            sa[s, i / 64, i % 64] = a[(i / 64) * k + kt * 64 + i % 64];
            sb[s, i / 64, i % 64] = b[(i / 64) * k + kt * 64 + i % 64];
        }
        fence_proxy_async();
        sync_threads();
        for kk in [0u32, 1, 2, 3] {
            wgmma(acc, sa[s, 0, kk * 16], sb[s, 0, kk * 16], accumulate = kt > 0 || kk > 0);
        }
        wgmma_commit();
        wgmma_wait(1);
        // Every warp's group of the stage filled next is complete.
        sync_threads();
    }
    wgmma_wait(0);
    for i in 0..32u32 {
        c[acc_row(acc, i) * 64 + acc_col(acc, i)] = acc[i];
    }
}
";

#[test]
fn a_lagged_k_loop_accumulates_exactly() {
    let l = kdsl_str_with("lagged.kdsl", LAGGED, &opts());
    let sig = l.program.signature("lagged").expect("the kernel");
    let tiles = 5usize;
    let k = 64 * tiles;
    let av = ints(64 * k, -3, 3, 7);
    let bv = ints(64 * k, -3, 3, 8);
    for schedule in [Schedule::InOrder, Schedule::Random(3)] {
        let mut launch = launch(
            "lagged",
            [1, 1, 1],
            [128, 1, 1],
            [1, 1, 1],
            vec![
                array("a", Scalar::BF16, encode(Scalar::BF16, &av)),
                array("b", Scalar::BF16, encode(Scalar::BF16, &bv)),
                f32s("c", &[0.0; 64 * 64]),
                u32v(tiles as u32),
            ],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let o = run_with(&l, &launch, schedule, 200_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let got: Vec<i64> = as_f32(&o.arrays[2]).iter().map(|&x| x as i64).collect();
        assert_eq!(got, reference(&av, &bv, 64, 64, k), "{schedule:?}");
    }
}

/// A warp-specialised tile: warpgroup 0 gives registers back and fills a
/// two-stage ring with element stores; warpgroups 1 and 2 take registers
/// and each multiplies its 64 rows of A by B on the tensor cores, then
/// releases the stage. 40 + 232 + 232 = 3 x 168.
const ROLES: &str = "
kernel roles(a: global [bf16], b: global [bf16], c: global mut [f32], tiles: u32) block(384) {
    shared sa: [bf16; 2, 128, 64] swizzle(128);
    shared sb: [bf16; 2, 64, 64] swizzle(128);
    barrier full[2]: cta(arrivals = 128);
    barrier empty[2]: cta(arrivals = 256);
    accum acc: [f32; 64, 64];
    let k = tiles * 64;
    let wg = warp_id / 4;
    if wg == 0 {
        set_max_regs(40);
        for kt in 0..tiles {
            let s = kt % 2;
            if kt >= 2 {
                empty[s].wait();
            }
            for i in thread_idx.x..8192 step 128 {
                sa[s, i / 64, i % 64] = a[(i / 64) * k + kt * 64 + i % 64];
            }
            for i in thread_idx.x..4096 step 128 {
                sb[s, i / 64, i % 64] = b[(i / 64) * k + kt * 64 + i % 64];
            }
            fence_proxy_async();
            full[s].arrive();
        }
    } else {
        set_max_regs(232);
        let cw = wg - 1;
        for kt in 0..tiles {
            let s = kt % 2;
            full[s].wait();
            for kk in [0u32, 1, 2, 3] {
                wgmma(acc, sa[s, cw * 64, kk * 16], sb[s, 0, kk * 16], accumulate = kt > 0 || kk > 0);
            }
            wgmma_commit();
            wgmma_wait(0);
            empty[s].arrive();
        }
        for i in 0..32u32 {
            c[(cw * 64 + acc_row(acc, i)) * 64 + acc_col(acc, i)] = acc[i];
        }
    }
}
";

#[test]
fn a_warp_specialised_tile_with_budgets_multiplies_exactly() {
    let l = kdsl_str_with("roles.kdsl", ROLES, &opts());
    let sig = l.program.signature("roles").expect("the kernel");
    let tiles = 4usize;
    let k = 64 * tiles;
    let av = ints(128 * k, -3, 3, 11);
    let bv = ints(64 * k, -3, 3, 12);
    for schedule in [Schedule::InOrder, Schedule::Random(5)] {
        let mut launch = launch(
            "roles",
            [1, 1, 1],
            [384, 1, 1],
            [1, 1, 1],
            vec![
                array("a", Scalar::BF16, encode(Scalar::BF16, &av)),
                array("b", Scalar::BF16, encode(Scalar::BF16, &bv)),
                f32s("c", &[0.0; 128 * 64]),
                u32v(tiles as u32),
            ],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let o = run_with(&l, &launch, schedule, 400_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l, &o));
        let got: Vec<i64> = as_f32(&o.arrays[2]).iter().map(|&x| x as i64).collect();
        assert_eq!(got, reference(&av, &bv, 128, 64, k), "{schedule:?}");
    }
}

/// `acc (64 x n) = A Bᵀ` with `A` and/or `B` transposed (MN-major):
/// `at` is A stored K x 64 and `bt` B stored K x n, row-major, each loaded
/// into `[T; blocks, K, span] swizzle(s)`, a span of M or N per row; the
/// K-major operand as in [`form_kernel`].
fn transposed_kernel(t: Scalar, d: Scalar, swizzle: u64, n: usize, ta: bool, tb: bool) -> String {
    let span = swizzle as usize / size(t);
    let kt = 64;
    let k = 16;
    let cast = if d == Scalar::F16 { " as f32" } else { "" };
    let decl = |name: &str, rows: usize, trans: bool| {
        if trans {
            format!(
                "shared {name}: [{t}; {}, {kt}, {span}] swizzle({swizzle});",
                rows.div_ceil(span)
            )
        } else {
            format!("shared {name}: [{t}; {rows}, {kt}] swizzle(128);")
        }
    };
    // Global element i of the stored matrix: row-major K x rows when
    // transposed, rows x K otherwise.
    let fill = |name: &str, g: &str, rows: usize, trans: bool| {
        if trans {
            format!(
                "for i in thread_idx.x..{len} step 128 {{
        let r = i % {rows};
        let kk = i / {rows};
        {name}[r / {span}, kk, r % {span}] = {g}[i];
    }}",
                len = rows * kt
            )
        } else {
            format!(
                "for i in thread_idx.x..{len} step 128 {{
        {name}[i / {kt}, i % {kt}] = {g}[i];
    }}",
                len = rows * kt
            )
        }
    };
    let operand = |name: &str, trans: bool| {
        if trans {
            format!("transpose({name}[0, kk * {k}, 0])")
        } else {
            format!("{name}[0, kk * {k}]")
        }
    };
    format!(
        "kernel mm(a: global [{t}], b: global [{t}], c: global mut [f32]) block(128) {{
    {da}
    {db}
    accum acc: [{d}; 64, {n}];
    {fa}
    {fb}
    fence_proxy_async();
    sync_threads();
    for kk in [0u32, 1, 2, 3] {{
        wgmma(acc, {oa}, {ob}, accumulate = kk > 0);
    }}
    wgmma_commit();
    wgmma_wait(0);
    for i in 0..{half}u32 {{
        c[acc_row(acc, i) * {n} + acc_col(acc, i)] = acc[i]{cast};
    }}
}}
",
        da = decl("sa", 64, ta),
        db = decl("sb", n, tb),
        fa = fill("sa", "a", 64, ta),
        fb = fill("sb", "b", n, tb),
        oa = operand("sa", ta),
        ob = operand("sb", tb),
        half = n / 2
    )
}

/// The transpose of a row-major `rows x cols` matrix.
fn transposed(v: &[i32], rows: usize, cols: usize) -> Vec<i32> {
    (0..cols)
        .flat_map(|c| (0..rows).map(move |r| (r, c)))
        .map(|(r, c)| v[r * cols + c])
        .collect()
}

#[test]
fn transposed_operands_multiply_exactly() {
    use Scalar::*;
    let cases = [
        (BF16, F32, 128, 256, true, true),
        (BF16, F32, 128, 64, false, true),
        (F16, F32, 64, 64, true, false),
        (F16, F16, 64, 40, true, true),
        (BF16, F32, 32, 24, false, true),
        (F16, F32, 32, 128, true, true),
    ];
    for (i, (t, d, swizzle, n, ta, tb)) in cases.into_iter().enumerate() {
        let kt = 64;
        // A (64 x K) and B (n x K), row-major, as the reference takes them.
        let av = ints(64 * kt, -3, 3, 40 + 2 * i as u64);
        let bv = ints(n * kt, -3, 3, 41 + 2 * i as u64);
        let ga = if ta {
            transposed(&av, 64, kt)
        } else {
            av.clone()
        };
        let gb = if tb {
            transposed(&bv, n, kt)
        } else {
            bv.clone()
        };
        let source = transposed_kernel(t, d, swizzle, n, ta, tb);
        let l = kdsl_str_with("transposed.kdsl", &source, &opts());
        let sig = l.program.signature("mm").expect("the kernel");
        let mut launch = launch(
            "mm",
            [1, 1, 1],
            [128, 1, 1],
            [1, 1, 1],
            vec![
                array("a", t, encode(t, &ga)),
                array("b", t, encode(t, &gb)),
                array("c", F32, vec![0; 64 * n * 4]),
            ],
        );
        launch.dynamic_shared = sig.dynamic_shared.unwrap_or(0);
        let o = run_clean(&l, &launch);
        let want = reference(&av, &bv, 64, n, kt);
        let got: Vec<i64> = as_f32(&o.arrays[2]).iter().map(|&x| x as i64).collect();
        assert_eq!(
            got, want,
            "{d} += {t} x {t}, swizzle({swizzle}), N = {n}, transposed A {ta}, B {tb}\n{source}"
        );
    }
}
