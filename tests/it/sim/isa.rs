//! The simulator's instruction semantics, class by class, on hand-written
//! PTX: each kernel stores its results into `out` (32-bit words) and the
//! test compares them with values worked out from the PTX ISA. Also: load
//! errors name the instruction and its line, and mutated PTX never makes
//! the simulator panic.

use crate::common::sim::*;
use crate::common::{assert_contains, for_target};
use kdsl::sim::{Schedule, SimOptions};

/// A kernel `t(.param .u64 out)` with registers of every kind declared and
/// `%rd0` holding `out`.
fn kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry t(.param .u64 out)\n{{\n\
         \t.reg .pred %p<16>;\n\t.reg .b16 %h<16>;\n\t.reg .b32 %r<64>;\n\
         \t.reg .b64 %rd<32>;\n\t.reg .f32 %f<32>;\n\t.reg .f64 %fd<16>;\n\
         \tld.param.u64 %rd0, [out];\n{body}\n\tret;\n}}\n"
    )
}

/// Runs `ptx` with `block` threads and returns `out` (`words` u32s).
fn run_words(ptx: &str, block: u32, words: usize) -> Vec<u32> {
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("load failed:\n{e}"));
    let l = launch(
        "t",
        1,
        block,
        1,
        vec![u32s("out", &vec![0xdead_beef; words])],
    );
    let o = run_with(&k, &l, Schedule::InOrder, 1_000_000);
    assert!(o.reports.is_empty(), "reports:\n{}", rendered(&k, &o));
    as_u32(&o.arrays[0])
}

/// Stores `%rN` (for each listed register) at consecutive words.
fn stores(regs: &[&str]) -> String {
    regs.iter()
        .enumerate()
        .map(|(i, r)| format!("\tst.global.b32 [%rd0+{}], {r};\n", 4 * i))
        .collect()
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn integer_arithmetic() {
    let body = "
	mov.u32 %r1, 0xfffffffe;
	add.u32 %r2, %r1, 5;              // wraps to 3
	sub.s32 %r3, 2, 7;                // -5
	mul.lo.u32 %r4, %r1, 3;           // 0xfffffffa
	mul.hi.u32 %r5, %r1, 4;           // 3
	mul.hi.s32 %r6, -2, 4;            // -1 (high word of -8)
	div.s32 %r7, -7, 2;               // -3
	rem.s32 %r8, -7, 2;               // -1
	div.u32 %r9, 7, 0;                // all ones
	min.s32 %r10, -1, 1;              // -1
	min.u32 %r11, -1, 1;              // 1
	max.s32 %r12, -1, 1;              // 1
	add.sat.s32 %r13, 0x7ffffff0, 0x100;  // saturates
	sub.sat.s32 %r14, 0x80000010, 0x100;  // saturates
	mad.lo.s32 %r15, 3, 4, 5;         // 17
	mad.hi.u32 %r16, 0x80000000, 4, 1; // 3
	shl.b32 %r17, 1, 31;
	shr.u32 %r18, 0x80000000, 31;     // 1
	shr.s32 %r19, 0x80000000, 31;     // -1
	shl.b32 %r20, 1, 32;              // 0
	abs.s32 %r21, -9;
	neg.s32 %r22, 9;
	not.b32 %r23, 0x0f0f0f0f;
	popc.b32 %r24, 0xff00ff01;        // 17
	clz.b32 %r25, 0x00010000;         // 15
	brev.b32 %r26, 1;
	bfind.u32 %r27, 0x00010000;       // 16
	bfind.shiftamt.u32 %r28, 0x00010000; // 15
	bfe.u32 %r29, 0xabcd1234, 8, 8;   // 0x12
	bfe.s32 %r30, 0x0000f000, 12, 4;  // -1
	bfi.b32 %r31, 0xf, 0x12345678, 4, 8; // 0x123450f8
	prmt.b32 %r32, 0x44332211, 0x88776655, 0x5410; // 0x66552211
	cnot.b32 %r33, 0;
	and.b32 %r34, 0xff00, 0x0ff0;
	or.b32 %r35, 0xff00, 0x0ff0;
	xor.b32 %r36, 0xff00, 0x0ff0;
	rem.u32 %r37, 7, 0;               // the dividend
";
    let regs: Vec<String> = (2..=37).map(|i| format!("%r{i}")).collect();
    let regs: Vec<&str> = regs.iter().map(String::as_str).collect();
    let got = run_words(&kernel(&format!("{body}{}", stores(&regs))), 1, regs.len());
    let want: Vec<u32> = vec![
        3,
        (-5i32) as u32,
        0xffff_fffa,
        3,
        u32::MAX,
        (-3i32) as u32,
        (-1i32) as u32,
        u32::MAX,
        u32::MAX,
        1,
        1,
        0x7fff_ffff,
        0x8000_0000,
        17,
        3,
        0x8000_0000,
        1,
        u32::MAX,
        0,
        9,
        (-9i32) as u32,
        0xf0f0_f0f0,
        17,
        15,
        0x8000_0000,
        16,
        15,
        0x12,
        u32::MAX,
        0x1234_50f8,
        0x6655_2211,
        1,
        0x0f00,
        0xfff0,
        0xf0f0,
        7,
    ];
    assert_eq!(got, want);
}

#[test]
fn wide_and_64_bit_integers() {
    let body = "
	mul.wide.s32 %rd1, -3, 5;          // -15
	mul.wide.u32 %rd2, 0xffffffff, 2;  // 0x1fffffffe
	mad.wide.u32 %rd3, 0x10000, 0x10000, 7; // 2^32 + 7
	add.s64 %rd4, %rd2, %rd3;
	shr.s64 %rd5, %rd1, 1;             // -8
	div.s64 %rd6, %rd1, 4;             // -3
	mov.b64 {%r1, %r2}, %rd2;          // unpack: lo, hi
	mov.b64 %rd7, {%r2, %r1};          // pack swapped
	cvt.u32.u64 %r3, %rd4;
	cvt.s64.s32 %rd8, -1;
	cvt.u64.u32 %rd9, -1;
	cvt.sat.u8.s32 %r4, 300;
	cvt.s16.s32 %r5, 0x18000;          // wraps to -32768, sign-extended
	setp.lt.s64 %p1, %rd1, 0;
	selp.u32 %r6, 1, 2, %p1;
	st.global.u64 [%rd0], %rd1;
	st.global.u64 [%rd0+8], %rd2;
	st.global.u64 [%rd0+16], %rd3;
	st.global.u64 [%rd0+24], %rd4;
	st.global.u64 [%rd0+32], %rd5;
	st.global.u64 [%rd0+40], %rd6;
	st.global.u64 [%rd0+48], %rd7;
	st.global.u64 [%rd0+56], %rd8;
	st.global.u64 [%rd0+64], %rd9;
	st.global.v4.u32 [%rd0+80], {%r3, %r4, %r5, %r6};
";
    let got = run_words(&kernel(body), 1, 24);
    let w64 = |i: usize| u64::from(got[2 * i]) | u64::from(got[2 * i + 1]) << 32;
    assert_eq!(w64(0), (-15i64) as u64);
    assert_eq!(w64(1), 0x1_ffff_fffe);
    assert_eq!(w64(2), (1u64 << 32) + 7);
    assert_eq!(w64(3), 0x1_ffff_fffe + (1u64 << 32) + 7);
    assert_eq!(w64(4), (-8i64) as u64);
    assert_eq!(w64(5), (-3i64) as u64);
    assert_eq!(w64(6), 0xffff_fffe_0000_0001);
    assert_eq!(w64(7), u64::MAX);
    assert_eq!(w64(8), 0xffff_ffff);
    assert_eq!(
        &got[20..24],
        &[
            ((0x1_ffff_fffeu64 + (1 << 32) + 7) as u32),
            255,
            0xffff_8000,
            1
        ]
    );
}

#[test]
fn comparisons_and_predicates() {
    let body = "
	setp.lt.u32 %p1, 1, -1;            // true (unsigned)
	setp.lt.s32 %p2, 1, -1;            // false
	setp.ne.and.u32 %p3|%p4, 1, 2, %p1;  // p3 = (1!=2)&&p1, p4 = !(1!=2)&&p1
	setp.eq.or.u32 %p5, 1, 2, !%p2;    // false || !false
	setp.nan.f32 %p6, 0f7fc00000, 0f00000000;
	setp.lt.f32 %p7, 0f7fc00000, 0f3f800000;   // NaN: ordered false
	setp.ltu.f32 %p8, 0f7fc00000, 0f3f800000;  // NaN: unordered true
	and.pred %p9, %p1, %p8;
	not.pred %p10, %p9;
	xor.pred %p11, %p1, %p2;
	selp.u32 %r1, 1, 0, %p1;
	selp.u32 %r2, 1, 0, %p2;
	selp.u32 %r3, 1, 0, %p3;
	selp.u32 %r4, 1, 0, %p4;
	selp.u32 %r5, 1, 0, %p5;
	selp.u32 %r6, 1, 0, %p6;
	selp.u32 %r7, 1, 0, %p7;
	selp.u32 %r8, 1, 0, %p8;
	selp.u32 %r9, 1, 0, %p9;
	selp.u32 %r10, 1, 0, %p10;
	selp.u32 %r11, 1, 0, %p11;
	mov.u32 %r12, 5;
	@%p2 mov.u32 %r12, 6;              // skipped
	@!%p2 add.u32 %r12, %r12, 10;       // taken
";
    let regs: Vec<String> = (1..=12).map(|i| format!("%r{i}")).collect();
    let regs: Vec<&str> = regs.iter().map(String::as_str).collect();
    let got = run_words(&kernel(&format!("{body}{}", stores(&regs))), 1, regs.len());
    assert_eq!(got, vec![1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 15]);
}

#[test]
fn float_arithmetic_and_rounding() {
    let body = "
	add.f32 %f1, 0f3f800000, 0f40000000;        // 3
	add.rp.f32 %f2, 0f3f800000, 0f30800000;     // 1 + 2^-30 rounded up
	add.rz.f32 %f3, 0f3f800000, 0f30800000;     // 1
	add.rm.f32 %f4, 0fbf800000, 0fb0800000;     // -1 - 2^-30 rounded down
	mul.rz.f32 %f5, 0f3faaaaab, 0f3faaaaab;     // toward zero
	fma.rn.f32 %f6, 0f40000000, 0f40400000, 0f3f800000; // 7
	div.rn.f32 %f7, 0f3f800000, 0f40400000;     // 1/3
	sqrt.rn.f32 %f8, 0f40800000;                // 2
	min.f32 %f9, 0f7fc00000, 0f40000000;        // NaN loses: 2
	max.NaN.f32 %f10, 0f7fc00000, 0f40000000;   // NaN wins
	abs.f32 %f11, 0fc0000000;
	neg.f32 %f12, 0f40000000;
	mul.sat.f32 %f13, 0f40000000, 0f40000000;   // clamps to 1
	add.ftz.f32 %f14, 0f00000001, 0f00000000;   // subnormal flushed
	div.rn.f32 %f15, 0f00000000, 0f00000000;    // canonical NaN
	ex2.approx.f32 %f16, 0f40400000;            // 8
	lg2.approx.f32 %f17, 0f41000000;            // 3
	rcp.rn.f32 %f18, 0f40800000;                // 0.25
	rsqrt.approx.f32 %f19, 0f40800000;          // 0.5
	sin.approx.f32 %f20, 0f00000000;
	cos.approx.f32 %f21, 0f00000000;
	copysign.f32 %f22, 0fbf800000, 0f40000000;  // -2
	sub.f32 %f23, 0f3f800000, 0f3f800000;
	mul.rn.f64 %fd1, 0d3ff8000000000000, 0d4000000000000000; // 3.0
	fma.rn.f64 %fd2, %fd1, %fd1, 0d3ff0000000000000;         // 10.0
	cvt.rn.f32.f64 %f24, %fd2;
";
    let regs: Vec<String> = (1..=24).map(|i| format!("%f{i}")).collect();
    let regs: Vec<&str> = regs.iter().map(String::as_str).collect();
    let got = run_words(&kernel(&format!("{body}{}", stores(&regs))), 1, regs.len());
    let x = 1.333_333_4f32;
    let prod = f64::from(x) * f64::from(x);
    let rz = if (prod as f32 as f64) > prod {
        f32::from_bits((prod as f32).to_bits() - 1)
    } else {
        prod as f32
    };
    let want = vec![
        f(3.0),
        f(1.0) + 1,
        f(1.0),
        f(-1.0) + 1,
        f(rz),
        f(7.0),
        f(1.0 / 3.0),
        f(2.0),
        f(2.0),
        0x7fff_ffff,
        f(2.0),
        f(-2.0),
        f(1.0),
        f(0.0),
        0x7fff_ffff,
        f(8.0),
        f(3.0),
        f(0.25),
        f(0.5),
        f(0.0),
        f(1.0),
        f(-2.0),
        f(0.0),
        f(10.0),
    ];
    assert_eq!(got, want);
}

#[test]
fn conversions() {
    let body = "
	cvt.rzi.s32.f32 %r1, 0fc02ccccd;    // -2.7 → -2
	cvt.rni.s32.f32 %r2, 0f40200000;    // 2.5 → 2 (ties to even)
	cvt.rmi.s32.f32 %r3, 0fc0200000;    // -2.5 → -3
	cvt.rpi.u32.f32 %r4, 0f40100000;    // 2.25 → 3
	cvt.rzi.u32.f32 %r5, 0fc0a00000;    // -5 → 0 (saturates)
	cvt.rzi.s32.f32 %r6, 0f7f800000;    // +inf → INT_MAX
	cvt.rzi.s32.f32 %r7, 0f7fc00000;    // NaN → 0
	cvt.rn.f32.s32 %f1, -3;
	cvt.rz.f32.u32 %f2, 0xffffffff;     // 2^32 - 256 (toward zero)
	cvt.rn.f32.u32 %f3, 16777217;       // ties to even: 16777216
	cvt.rp.f32.u32 %f4, 16777217;       // 16777218
	cvt.rn.f16.f32 %h1, 0f3f800000;     // 0x3c00
	cvt.f32.f16 %f5, %h1;
	cvt.rn.bf16.f32 %h2, 0f3f808000;    // tie to even: 0x3f80
	cvt.f32.bf16 %f6, %h2;
	cvt.rni.f32.f32 %f7, 0f40300000;    // 2.75 → 3.0
	cvt.rn.f16.f32 %h3, 0f477fe000;     // 65504 (max f16)
	cvt.rn.f16.f32 %h4, 0f47800000;     // 65536 → inf
	cvt.u32.u16 %r8, %h1;
	cvt.u32.u16 %r9, %h2;
	cvt.u32.u16 %r10, %h3;
	cvt.u32.u16 %r11, %h4;
	cvt.sat.f32.f32 %f8, 0f40000000;     // 1
";
    let regs = [
        "%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%f1", "%f2", "%f3", "%f4", "%f5", "%f6",
        "%f7", "%r8", "%r9", "%r10", "%r11", "%f8",
    ];
    let got = run_words(&kernel(&format!("{body}{}", stores(&regs))), 1, regs.len());
    let want = vec![
        (-2i32) as u32,
        2,
        (-3i32) as u32,
        3,
        0,
        0x7fff_ffff,
        0,
        f(-3.0),
        f(4_294_967_040.0),
        f(16_777_216.0),
        f(16_777_218.0),
        f(1.0),
        f(1.0),
        f(3.0),
        0x3c00,
        0x3f80,
        0x7bff,
        0x7c00,
        f(1.0),
    ];
    assert_eq!(got, want);
}

#[test]
fn half_precision_arithmetic() {
    let body = "
	mov.b16 %h1, 0x3c00;                // 1.0
	mov.b16 %h2, 0x4000;                // 2.0
	add.f16 %h3, %h1, %h2;              // 3.0 = 0x4200
	mul.f16 %h4, %h2, %h2;              // 4.0 = 0x4400
	fma.rn.f16 %h5, %h2, %h2, %h1;      // 5.0 = 0x4500
	mov.b16 %h6, 0x3f80;                // bf16 1.0
	add.bf16 %h7, %h6, %h6;             // 2.0 = 0x4000
	cvt.u32.u16 %r1, %h3;
	cvt.u32.u16 %r2, %h4;
	cvt.u32.u16 %r3, %h5;
	cvt.u32.u16 %r4, %h7;
";
    let got = run_words(
        &kernel(&format!("{body}{}", stores(&["%r1", "%r2", "%r3", "%r4"]))),
        1,
        4,
    );
    assert_eq!(got, vec![0x4200, 0x4400, 0x4500, 0x4000]);
}

/// The packed half forms nvcc writes for `__hadd2`, `__hmul2`, `__hfma2`,
/// `__hmax2`, `__hmax2_nan`, `__hneg2`, `__habs2`, `__hlt2` (and their bf16
/// twins, `fma.rn.bf16x2` with 1.0 before sm_90), the fp8 conversions of
/// `cuda_fp8.h` and `cvt.rna.tf32.f32`: each half computed on its own, the
/// low halves into the low 16 bits.
#[test]
fn packed_halves_and_fp8_conversions() {
    let body = "
	mov.b32 %r1, 0x40003c00;            // f16x2 (lo 1.0, hi 2.0)
	mov.b32 %r2, 0xc2004400;            // (4.0, -3.0)
	add.f16x2 %r3, %r1, %r2;            // (5.0, -1.0) = 0xbc004500
	sub.rn.f16x2 %r4, %r1, %r2;         // (-3.0, 5.0) = 0x4500c200
	mul.f16x2 %r5, %r1, %r2;            // (4.0, -6.0) = 0xc6004400
	fma.rn.f16x2 %r6, %r1, %r2, %r1;    // (5.0, -4.0) = 0xc4004500
	max.f16x2 %r7, %r1, %r2;            // (4.0, 2.0) = 0x40004400
	mov.b32 %r8, 0x7e003c00;            // (1.0, NaN)
	min.f16x2 %r9, %r8, %r2;            // NaN ignored: (1.0, -3.0) = 0xc2003c00
	max.NaN.f16x2 %r10, %r8, %r2;       // (4.0, NaN) = 0x7fff4400
	neg.f16x2 %r11, %r1;                // 0xc000bc00
	abs.f16x2 %r12, %r2;                // 0x42004400
	mov.b32 %r13, 0x40003f80;           // bf16x2 (1.0, 2.0)
	mov.b32 %r14, 0x3f803f80;           // bf16x2 (1.0, 1.0)
	fma.rn.bf16x2 %r15, %r13, %r14, %r13; // __hadd2 before sm_90: (2.0, 4.0)
	add.rn.bf16x2 %r16, %r13, %r13;     // the same on sm_90
	mul.bf16x2 %r17, %r13, %r13;        // (1.0, 4.0) = 0x40803f80
	setp.lt.f16x2 %p1|%p2, %r1, %r2;    // 1 < 4, 2 < -3
	selp.u32 %r18, 1, 0, %p1;
	selp.u32 %r19, 1, 0, %p2;
	mov.f32 %f1, 0f43E00000;            // 448.0
	mov.f32 %f2, 0f3F880000;            // 1.0625: a tie, to even (1.0)
	cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;   // 0x7e38
	cvt.u32.u16 %r20, %h1;
	mov.f32 %f3, 0f7F800000;            // inf: the largest finite
	cvt.rn.satfinite.e5m2x2.f32 %h2, %f3, %f2;   // (1.0625 → 1.0 = 0x3c, 57344 = 0x7b)
	cvt.u32.u16 %r21, %h2;
	cvt.rn.f16x2.e4m3x2 %r22, %h1;      // (1.0, 448.0) = 0x5f003c00
	mov.f32 %f4, 0f3F801000;            // 1 + 2^-11: a tf32 tie, away
	cvt.rna.tf32.f32 %r23, %f4;         // 0x3f802000
	mov.b32 {%h3, _}, %r2;              // the low half: 4.0
	cvt.u32.u16 %r24, %h3;
";
    let regs: Vec<String> = (3..=24)
        .filter(|r| ![8, 13, 14].contains(r))
        .map(|r| format!("%r{r}"))
        .collect();
    let regs: Vec<&str> = regs.iter().map(String::as_str).collect();
    let got = run_words(&kernel(&format!("{body}{}", stores(&regs))), 1, regs.len());
    assert_eq!(
        got,
        vec![
            0xbc00_4500,
            0x4500_c200,
            0xc600_4400,
            0xc400_4500,
            0x4000_4400,
            0xc200_3c00,
            0x7fff_4400,
            0xc000_bc00,
            0x4200_4400,
            0x4080_4000,
            0x4080_4000,
            0x4080_3f80,
            1,
            0,
            0x7e38,
            0x7b3c,
            0x5f00_3c00,
            0x3f80_2000,
            0x4400,
        ]
    );
}

#[test]
fn memory_spaces_vectors_and_atomics() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.const .align 4 .u32 table[4] = {10, 20, 30, 40};
.global .align 4 .u32 counter = 100;
.visible .entry t(.param .u64 out, .param .u32 scale)
{
	.reg .pred %p<4>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<16>;
	.local .align 8 .b8 scratch[16];
	.shared .align 16 .b8 sm[64];
	ld.param.u64 %rd0, [out];
	ld.param.u32 %r1, [scale];
	ld.const.u32 %r2, [table+8];          // 30
	mov.u64 %rd1, table;
	cvta.const.u64 %rd2, %rd1;
	ld.u32 %r3, [%rd2+12];                // 40, generic
	mov.u64 %rd3, scratch;
	st.local.v2.u32 [%rd3], {%r1, %r2};
	ld.local.v2.u32 {%r4, %r5}, [scratch];
	mov.u32 %r6, sm;
	st.shared.v4.u32 [%r6], {%r1, %r2, %r3, %r4};
	cvta.shared.u64 %rd4, %rd3;            // a local address is not shared...
	mov.u64 %rd5, sm;
	cvta.shared.u64 %rd5, %rd5;
	ld.u32 %r7, [%rd5+8];                 // 40, generic shared
	isspacep.shared %p1, %rd5;
	selp.u32 %r8, 1, 0, %p1;
	cvta.to.shared.u64 %rd6, %rd5;
	cvt.u32.u64 %r9, %rd6;
	ld.shared.u32 %r10, [%r9+4];          // 30
	atom.shared.add.u32 %r11, [%r6], 5;   // old: scale
	ld.shared.u32 %r12, [%r6];            // scale + 5
	atom.global.add.u32 %r13, [counter], 1;   // 100
	atom.global.exch.b32 %r14, [counter], 7;  // 101
	atom.global.cas.b32 %r15, [counter], 7, 9; // 7, then 9
	atom.global.min.s32 %r16, [counter], -4;  // 9, then -4
	atom.global.inc.u32 %r17, [counter], 0;   // old -4; -4 >= 0 (unsigned): 0
	red.global.max.u32 [counter], 42;
	ld.global.u32 %r18, [counter];            // 42
	atom.global.dec.u32 %r19, [counter], 10;  // 42 > 10: 10
	ld.global.u32 %r20, [counter];
	atom.global.add.f32 %r21, [%rd0+120], 0f3f800000;
	ld.global.f32 %r22, [%rd0+120];
	st.global.v4.u32 [%rd0], {%r2, %r3, %r4, %r5};
	st.global.v4.u32 [%rd0+16], {%r7, %r8, %r10, %r11};
	st.global.v4.u32 [%rd0+32], {%r12, %r13, %r14, %r15};
	st.global.v4.u32 [%rd0+48], {%r16, %r17, %r18, %r19};
	st.global.v2.u32 [%rd0+64], {%r20, %r22};
	ret;
}
";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let mut init = vec![0u32; 32];
    init[30] = f(2.0);
    let l = launch("t", 1, 1, 1, vec![u32s("out", &init), u32v(3)]);
    let o = run_clean(&k, &l);
    let got = as_u32(&o.arrays[0]);
    assert_eq!(
        &got[..18],
        &[
            30,
            40,
            3,
            30,
            40,
            1,
            30,
            3,
            8,
            100,
            101,
            7,
            9,
            0xffff_fffc,
            42,
            42,
            10,
            f(3.0)
        ][..]
    );
}

#[test]
fn calls_scopes_and_control_flow() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 r) twice(.param .b32 a)
{
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [a];
	add.u32 %r2, %r1, %r1;
	st.param.b32 [r], %r2;
	ret;
}
.visible .entry t(.param .u64 out)
{
	.reg .pred %p<3>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, 0;
	mov.u32 %r2, 0;
LOOP:
	add.u32 %r2, %r2, %r1;
	add.u32 %r1, %r1, 1;
	setp.lt.u32 %p1, %r1, 10;
	@%p1 bra.uni LOOP;
	{
		.reg .b32 %r1;            // shadows the outer %r1
		mov.u32 %r1, 21;
		{
		.param .b32 a0;
		st.param.b32 [a0], %r1;
		.param .b32 r0;
		call.uni (r0), twice, (a0);
		ld.param.b32 %r3, [r0];
		}
	}
	mov.u32 %r4, %tid.x;
	setp.ne.u32 %p2, %r4, 1;
	@%p2 bra FOUR;
	st.global.u32 [%rd0+16], 7;
	exit;
FOUR:
	st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r3};
	ret;
}
";
    let got = run_words(ptx, 2, 5);
    assert_eq!(got, vec![10, 45, 42, 42, 7]);
}

#[test]
fn special_registers() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 out)
{
	.reg .b32 %r<16>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %ctaid.y;
	mov.u32 %r5, %nctaid.y;
	mov.u32 %r6, %laneid;
	mov.u32 %r7, %warpid;
	mov.u32 %r8, %lanemask_lt;
	mad.lo.u32 %r9, %r2, %r3, %r1;        // linear id
	mad.lo.u32 %r9, %r4, 64, %r9;         // + cta * 64
	mul.wide.u32 %rd1, %r9, 32;
	add.s64 %rd1, %rd0, %rd1;
	st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
	st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
	ret;
}
";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch(
        "t",
        [1, 2, 1],
        [16, 4, 1],
        1,
        vec![u32s("out", &vec![0; 128 * 8])],
    );
    let o = run_clean(&k, &l);
    let got = as_u32(&o.arrays[0]);
    // CTA (0,1,0), thread (3,2,0): linear id 35, lane 3 of warp 1.
    let at = (64 + 35) * 8;
    assert_eq!(&got[at..at + 8], &[3, 2, 16, 1, 2, 3, 1, 0b111]);
}

#[test]
fn warp_synchronous_instructions() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 out)
{
	.reg .pred %p<8>;
	.reg .b32 %r<24>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, %laneid;
	mul.lo.u32 %r2, %r1, 10;
	shfl.sync.down.b32 %r3|%p1, %r2, 1, 0x1f, 0xffffffff;
	shfl.sync.up.b32 %r4, %r2, 2, 0, 0xffffffff;
	shfl.sync.bfly.b32 %r5, %r2, 1, 0x1f, 0xffffffff;
	shfl.sync.idx.b32 %r6, %r2, 5, 0x181f, 0xffffffff;  // width 8: lane 5 of each 8
	setp.lt.u32 %p2, %r1, 4;
	vote.sync.ballot.b32 %r7, %p2, 0xffffffff;
	vote.sync.any.pred %p3, %p2, 0xffffffff;
	vote.sync.all.pred %p4, %p2, 0xffffffff;
	vote.sync.uni.pred %p5, !%p2, 0xffffffff;
	selp.u32 %r8, 1, 0, %p3;
	selp.u32 %r9, 1, 0, %p4;
	selp.u32 %r10, 1, 0, %p5;
	selp.u32 %r11, 1, 0, %p1;
	activemask.b32 %r12;
	redux.sync.add.u32 %r13, %r1, 0xffffffff;        // 0 + ... + 31
	redux.sync.max.s32 %r14, %r1, 0x0000ffff;        // lanes 0..15 only (those lanes)
	elect.sync %r15|%p6, 0xffffffff;
	selp.u32 %r16, 1, 0, %p6;
	bar.warp.sync 0xffffffff;
	setp.lt.u32 %p7, %r1, 16;
	@!%p7 bra SKIP;
	redux.sync.max.s32 %r14, %r1, 0x0000ffff;
SKIP:
	mul.wide.u32 %rd1, %r1, 64;
	add.s64 %rd1, %rd0, %rd1;
	st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};
	st.global.v4.u32 [%rd1+16], {%r7, %r8, %r9, %r10};
	st.global.v4.u32 [%rd1+32], {%r11, %r12, %r13, %r14};
	st.global.v2.u32 [%rd1+48], {%r15, %r16};
	ret;
}
";
    // The unguarded redux with mask 0xffff is executed by all 32 lanes: the
    // upper 16 leave themselves out of the mask (S0009); use the guarded one.
    let ptx = ptx.replacen(
        "\tredux.sync.max.s32 %r14, %r1, 0x0000ffff;        // lanes 0..15 only (those lanes)\n",
        "\tmov.u32 %r14, 0;\n",
        1,
    );
    let got = run_words(&ptx, 32, 32 * 16);
    for lane in 0..32u32 {
        let w = &got[(lane * 16) as usize..(lane * 16 + 14) as usize];
        let down = if lane < 31 {
            (lane + 1) * 10
        } else {
            lane * 10
        };
        let up = if lane >= 2 {
            (lane - 2) * 10
        } else {
            lane * 10
        };
        let bfly = (lane ^ 1) * 10;
        let idx = ((lane & !7) + 5) * 10;
        let max16 = if lane < 16 { 15 } else { 0 };
        assert_eq!(
            w,
            &[
                down,
                up,
                bfly,
                idx,
                0xf,
                1,
                0,
                0,
                u32::from(lane < 31),
                u32::MAX,
                496,
                max16,
                0,
                u32::from(lane == 0)
            ],
            "lane {lane}"
        );
    }
}

#[test]
fn cta_barriers_with_counts() {
    // Warps 0 and 1 meet at barrier 1 (64 threads); warp 2 (its first
    // thread) writes first and arrives at barrier 2 without waiting, where
    // warp 0 waits for it.
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 out)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 4 .b32 flag;
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, %tid.x;
	shr.u32 %r2, %r1, 5;
	setp.eq.u32 %p1, %r2, 2;
	@!%p1 bra CONSUMERS;
	setp.eq.u32 %p3, %r1, 64;
	@%p3 st.shared.u32 [flag], 77;
	bar.arrive 2, 64;
	bra END;
CONSUMERS:
	bar.sync 1, 64;
	setp.eq.u32 %p2, %r2, 0;
	@!%p2 bra END;
	bar.sync 2, 64;
	ld.shared.u32 %r3, [flag];
	mul.wide.u32 %rd1, %r1, 4;
	add.s64 %rd1, %rd0, %rd1;
	st.global.u32 [%rd1], %r3;
END:
	ret;
}
";
    let got = run_words(ptx, 96, 32);
    assert_eq!(got, vec![77; 32]);
}

#[test]
fn mbarrier_tokens_transactions_and_drops() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 out)
{
	.reg .pred %p<8>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd0, [out];
	mbarrier.init.shared::cta.b64 [bar], 2;
	mbarrier.arrive.shared::cta.b64 %rd1, [bar];          // token of phase 0
	mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd1;  // not yet
	mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 64;
	mbarrier.arrive.shared::cta.b64 %rd2, [bar];          // arrivals done, 64 bytes pending
	mbarrier.test_wait.shared::cta.b64 %p2, [bar], %rd1;  // still not
	mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [bar], 64;
	mbarrier.test_wait.shared::cta.b64 %p3, [bar], %rd1;  // phase 0 complete
	mbarrier.test_wait.parity.shared::cta.b64 %p4, [bar], 0;  // yes
	mbarrier.test_wait.parity.shared::cta.b64 %p5, [bar], 1;  // the current phase 1: no
	mbarrier.arrive_drop.shared::cta.b64 %rd3, [bar];     // phase 1: 1 of 2, and 1 fewer later
	mbarrier.arrive.shared::cta.b64 %rd4, [bar];          // completes phase 1
	mbarrier.arrive.shared::cta.b64 %rd5, [bar];          // phase 2 needs only 1 now
	mbarrier.test_wait.shared::cta.b64 %p6, [bar], %rd5;
	selp.u32 %r1, 1, 0, %p1;
	selp.u32 %r2, 1, 0, %p2;
	selp.u32 %r3, 1, 0, %p3;
	selp.u32 %r4, 1, 0, %p4;
	selp.u32 %r5, 1, 0, %p5;
	selp.u32 %r6, 1, 0, %p6;
	st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};
	st.global.v2.u32 [%rd0+16], {%r5, %r6};
	ret;
}
";
    assert_eq!(run_words(ptx, 1, 6), vec![0, 0, 1, 1, 0, 1]);
}

#[test]
fn bulk_copies_both_ways() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 src, .param .u64 dst)
{
	.reg .pred %p<4>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	.shared .align 16 .b8 buf[256];
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd1, [src];
	ld.param.u64 %rd2, [dst];
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 1;
	bar.sync 0;
	@!%p1 bra WAIT;
	mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 256;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 256, [bar];
WAIT:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra WAIT;
	mov.u32 %r2, buf;
	mad.lo.s32 %r3, %r1, 4, %r2;
	ld.shared.u32 %r4, [%r3];
	add.u32 %r4, %r4, 1000;
	st.shared.u32 [%r3], %r4;
	fence.proxy.async.shared::cta;
	bar.sync 0;
	@!%p1 bra END;
	cp.async.bulk.global.shared::cta.bulk_group [%rd2], [buf], 256;
	cp.async.bulk.commit_group;
	cp.async.bulk.wait_group.read 0;
	cp.async.bulk.wait_group 0;
END:
	ret;
}
";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let src: Vec<u32> = (0..64).collect();
    let l = launch(
        "t",
        1,
        64,
        1,
        vec![u32s("src", &src), u32s("dst", &[0; 64])],
    );
    let o = run_clean(&k, &l);
    let want: Vec<u32> = (1000..1064).collect();
    assert_eq!(as_u32(&o.arrays[1]), want);
    assert!(
        o.stats.blocking_mbarrier_waits > 0,
        "the waiters blocked until the copy landed"
    );
}

#[test]
fn clusters_distributed_shared_memory_and_remote_arrivals() {
    // Every CTA of a cluster of 4 adds its rank into CTA 0's counter with a
    // remote atomic and arrives on CTA 0's barrier; CTA 0 waits, then reads.
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 out)
.reqntid 32, 1, 1
.reqnctapercluster 4, 1, 1
{
	.reg .pred %p<4>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	.shared .align 4 .b32 counter;
	.shared .align 8 .b64 bar;
	ld.param.u64 %rd0, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %cluster_ctarank;
	mov.u32 %r3, %cluster_nctarank;
	mov.u32 %r4, %clusterid.x;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 mbarrier.init.shared::cta.b64 [bar], 4;
	@%p1 st.shared.u32 [counter], 0;
	fence.mbarrier_init.release.cluster;
	barrier.cluster.arrive.aligned;
	barrier.cluster.wait.aligned;
	@!%p1 bra DONE;
	mapa.shared::cluster.u32 %r5, counter, 0;
	atom.shared::cluster.add.u32 %r6, [%r5], %r2;
	getctarank.shared::cluster.u32 %r7, %r5;
	mapa.shared::cluster.u32 %r8, bar, 0;
	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r8];
	setp.ne.u32 %p2, %r2, 0;
	@%p2 bra DONE;
WAIT:
	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p3, [bar], 0;
	@!%p3 bra WAIT;
	ld.shared.u32 %r9, [counter];
	mad.lo.u32 %r10, %r4, 4, 0;
	mul.wide.u32 %rd1, %r10, 4;
	add.s64 %rd1, %rd0, %rd1;
	st.global.v4.u32 [%rd1], {%r9, %r3, %r7, %r4};
DONE:
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	ret;
}
";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 8, 32, 4, vec![u32s("out", &[0; 8])]);
    let o = run_clean(&k, &l);
    // Two clusters: each sums ranks 0+1+2+3 = 6.
    assert_eq!(as_u32(&o.arrays[0]), vec![6, 4, 0, 0, 6, 4, 0, 1]);
    assert!(o.stats.instructions.memory.shared_cluster > 0);
}

#[test]
fn stats_count_classes_and_the_longest_thread() {
    let ptx = kernel(
        "
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 3;
	@!%p1 bra END;
	add.u32 %r2, %r1, 1;
	add.u32 %r2, %r2, 1;
	red.global.add.u32 [%rd0], %r2;
END:
",
    );
    let k = ptx_str("t.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 2, 4, 1, vec![u32s("out", &[0])]);
    let o = run_clean(&k, &l);
    let s = &o.stats;
    // Per thread: ld.param, mov, setp, bra, ret = 5; thread 3 also 2 adds
    // and an atomic add (thread 3 of both CTAs adds into `out[0]`) but
    // takes no branch... (the bra is predicated off).
    assert_eq!(s.steps, 8 * 5 + 2 * 3);
    assert_eq!(s.instructions.memory.param, 8);
    assert_eq!(s.instructions.memory.global, 2);
    assert_eq!(s.instructions.control, 16);
    assert_eq!(
        s.longest_thread
            .as_ref()
            .map(|t| (t.thread, t.instructions)),
        Some((3, 8))
    );
    assert_eq!((s.ctas, s.threads, s.clusters), (2, 8, 2));
    let json = serde_json::to_string(s).expect("stats serialise");
    assert!(json.contains("\"blocking_mbarrier_waits\":0"), "{json}");
}

#[test]
fn unsupported_instructions_are_load_errors_with_their_line() {
    let ptx =
        kernel("\tmov.u32 %r1, 1;\n\ttex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f5, %f6}];\n");
    let err = ptx_str("t.ptx", &ptx).err().expect("a load error");
    assert!(
        err.contains(
            "error[S0013]: PTX instruction `tex.2d.v4.f32.f32` is outside the simulator's subset"
        ),
        "{err}"
    );
    assert!(
        err.contains("t.ptx:14:"),
        "the error points at PTX line 14:\n{err}"
    );
    for (inst, name) in [
        ("\tmul24.lo.u32 %r1, %r1, 3;\n", "mul24.lo.u32"),
        ("\tadd.cc.u32 %r1, %r1, 1;\n", "add.cc.u32"),
        (
            "\tld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;\n",
            "ld.global.L2::cache_hint.u32",
        ),
        (
            "\ttensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;\n",
            "tensormap.replace.tile.global_address.global.b1024.b64",
        ),
    ] {
        let err = ptx_str("t.ptx", &kernel(inst))
            .err()
            .unwrap_or_else(|| panic!("{inst} loads"));
        assert!(
            err.contains(&format!("`{name}` is outside")),
            "{inst}: {err}"
        );
    }
    let err = ptx_str("t.ptx", &kernel("\tadd.u32 %r1, [%rd1+%rd2];\n"))
        .err()
        .expect("a syntax error");
    assert!(err.contains("error[S0014]"), "{err}");
    let err = ptx_str("t.ptx", &kernel("\tbra NOWHERE;\n"))
        .err()
        .expect("an unknown label");
    assert!(err.contains("unknown label `NOWHERE`"), "{err}");
}

#[test]
fn recursion_is_a_load_error() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .func f()\n{\n\tcall.uni f, ();\n\tret;\n}\n\
        .visible .entry t()\n{\n\tcall.uni f, ();\n\tret;\n}\n";
    let err = ptx_str("t.ptx", ptx).err().expect("a load error");
    assert!(err.contains("recursive call of `f`"), "{err}");
}

#[test]
fn deadlock_at_a_cta_barrier_and_no_progress() {
    // Half the threads skip the barrier and exit; the others wait for a
    // count of 64 that the exited ones can never make up.
    let ptx = kernel(
        "
	mov.u32 %r1, %tid.x;
	setp.lt.u32 %p1, %r1, 32;
	@%p1 bra END;
	bar.sync 1, 64;
END:
",
    );
    let k = ptx_str("t.ptx", &ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 1, 64, 1, vec![u32s("out", &[0])]);
    let o = run(&k, &l);
    let text = rendered(&k, &o);
    assert_contains(
        &text,
        &[
            "error[S0001]",
            "CTA barrier 1, where 32 of 64 threads arrived",
            "cta (0,0,0) threads 0..31 exited",
        ],
    );

    let spin = kernel(
        "
	mov.u32 %r1, %tid.x;
	setp.eq.u32 %p1, %r1, 1;
	@%p1 st.relaxed.gpu.global.u32 [%rd0], 1;
SPIN:
	ld.relaxed.gpu.global.u32 %r2, [%rd0];
	setp.eq.u32 %p2, %r2, 0;
	@%p2 bra SPIN;
",
    );
    let k = ptx_str("t.ptx", &spin).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 1, 2, 1, vec![u32s("out", &[0])]);
    // Both schedules let thread 1 run and the spin end: the in-order one
    // moves on from a thread that polls with a strong load (as
    // cooperative groups' barriers do), a random one anyway.
    for schedule in [Schedule::InOrder, Schedule::Random(7)] {
        let o = run_with(&k, &l, schedule, 1_000_000);
        assert!(o.reports.is_empty(), "{schedule:?}: {}", rendered(&k, &o));
    }
    // A spin on a flag that no thread sets makes no progress.
    let never = spin.replace("@%p1 st.relaxed.gpu.global.u32 [%rd0], 1;", "");
    let k = ptx_str("t.ptx", &never).unwrap_or_else(|e| panic!("{e}"));
    for schedule in [Schedule::InOrder, Schedule::Random(7)] {
        let o = run_with(&k, &l, schedule, 10_000);
        let text = rendered(&k, &o);
        assert!(
            text.contains("error[S0011]: no progress within 10000 steps"),
            "{schedule:?}: {text}"
        );
    }
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// A module that uses most of what the simulator knows.
    fn seed() -> String {
        std::fs::read_to_string(repo_root().join("tests/golden/pipeline_sum.sm_90.ptx"))
            .expect("golden PTX")
    }

    proptest! {
        #![proptest_config(crate::common::proptest_config(200))]

        /// Deleting, duplicating or replacing a piece of a real module never
        /// panics: it loads and runs (with a small step budget), or it is a
        /// load error.
        #[test]
        fn mutated_ptx(at in 0usize..6000, len in 0usize..40, what in 0u8..4, junk in "[ -~]{0,12}") {
            let text = seed();
            let at = at.min(text.len());
            let end = (at + len).min(text.len());
            if !text.is_char_boundary(at) || !text.is_char_boundary(end) {
                return Ok(());
            }
            let mutated = match what {
                0 => format!("{}{}", &text[..at], &text[end..]),
                1 => format!("{}{}{}", &text[..end], &text[at..end], &text[end..]),
                2 => format!("{}{}{}", &text[..at], junk, &text[end..]),
                _ => text.replacen(&text[at..end], &junk, 3),
            };
            if let Ok(k) = ptx_str("m.ptx", &mutated) {
                for kernel in k.program.kernels() {
                    let Some(sig) = k.program.signature(kernel) else { continue };
                    let args = sig.params.iter().map(|_| u32s("a", &[1; 64])).collect();
                    let l = launch(kernel, 2, sig.reqntid.unwrap_or([32, 1, 1]), sig.cluster.unwrap_or([1, 1, 1]), args);
                    let _ = kdsl::sim::run(&k.program, &l, &SimOptions { schedule: Schedule::InOrder, max_steps: 20_000, ..SimOptions::default() });
                }
            }
        }
    }
}

/// Everything the PTX writer emits is inside the simulator's subset: every
/// valid test program and every sample loads, for every target the program
/// compiles for (with the writer's line map, as `kdslc sim` loads it).
#[test]
fn all_kdslc_output_loads() {
    use kdsl::target::Target;
    let mut files = Vec::new();
    for dir in ["tests/valid", "samples"] {
        for e in std::fs::read_dir(repo_root().join(dir)).expect("dir") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "kdsl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut loaded = 0;
    for path in &files {
        for target in Target::ALL {
            let c = kdsl::compile(path, &for_target(target)).expect("readable");
            let Some(ptx) = c.ptx else { continue };
            let spans = kdsl::sim::PtxSource::Kdsl {
                line_spans: &c.ptx_line_spans,
            };
            if let Err(d) = kdsl::sim::load(&ptx, spans) {
                panic!("{} ({}): {:?}", path.display(), target.name(), d);
            }
            loaded += 1;
        }
    }
    assert!(loaded >= files.len(), "only {loaded} modules compiled");
}

/// The sm_80 barrier protocol spins on `mbarrier.test_wait`: the pollers
/// yield to the threads that have still to arrive, and the run completes.
#[test]
fn test_wait_polling_completes() {
    use kdsl::target::Target;
    let opts = kdsl::Options {
        target: Target::Sm80,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile(&repo_root().join("tests/valid/barriers_sm80.kdsl"), &opts)
        .expect("compiles");
    let ptx = c.ptx.expect("PTX");
    assert!(ptx.contains("mbarrier.test_wait"), "the sm_80 PTX polls");
    let program =
        kdsl::sim::load(&ptx, kdsl::sim::PtxSource::Kdsl { line_spans: &[] }).expect("loads");
    let l = launch("barriers_sm80", 1, 128, 1, vec![u32s("out", &[0; 128])]);
    for schedule in [Schedule::InOrder, Schedule::Random(3)] {
        let o = kdsl::sim::run(
            &program,
            &l,
            &SimOptions {
                schedule,
                max_steps: 10_000_000,
                ..SimOptions::default()
            },
        );
        assert!(o.reports.is_empty(), "{:?}", o.reports);
        for (t, v) in as_u32(&o.arrays[0]).iter().enumerate() {
            // s[127 - t] plus the thread's spin count.
            assert!(*v >= 127 - t as u32, "out[{t}] = {v}");
        }
    }
}

/// A launch whose threads would not fit in the simulator's memory is
/// refused with a report instead of exhausting the machine.
#[test]
fn oversized_launches_are_refused() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry t()\n{\n\t.reg .b32 %r<200000>;\n\tmov.u32 %r199999, 1;\n\tret;\n}\n";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let l = launch("t", 16, 1024, 16, vec![]);
    let o = run(&k, &l);
    let text = rendered(&k, &o);
    assert!(o.faulted);
    assert!(
        text.contains(
            "error[S0015]: launch does not fit kernel `t`: a cluster of 16384 threads needs"
        ),
        "{text}"
    );
}

/// A launch built in a program, not from the flags, is checked against the
/// same limits as the flags (`launch::shape`): the simulator has no second
/// set of its own.
#[test]
fn a_library_launch_meets_the_flags_limits() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry t()\n{\n\tret;\n}\n";
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("{e}"));
    let sig = k.program.signature("t").expect("a signature");
    let refused = [
        ([1, 1, 1], [1, 1, 128], [1, 1, 1]),
        ([1, 65536, 1], [1, 1, 1], [1, 1, 1]),
        ([1, 1, 1], [0, 1, 1], [1, 1, 1]),
        ([32, 1, 1], [1, 1, 1], [32, 1, 1]),
    ];
    for (grid, block, cluster) in refused {
        let shapes = kdsl::launch::shape::Shapes {
            grid,
            block,
            cluster,
        };
        let why = kdsl::launch::shape::check(&sig, kdsl::launch::Origin::Ptx, shapes)
            .expect_err("the flags refuse it");
        let o = run(&k, &launch("t", grid, block, cluster, vec![]));
        let text = rendered(&k, &o);
        assert!(o.faulted, "{grid:?} {block:?} {cluster:?} ran");
        let want = format!("error[S0015]: launch does not fit kernel `t`: {why}");
        assert!(text.contains(&want), "{text}");
    }
    let o = run(&k, &launch("t", 4, [8, 8, 16], 4, vec![]));
    assert!(!o.faulted, "{}", rendered(&k, &o));
}

/// The forms kdslc writes for `u8`/`i8`/`u16`/`i16` in 32-bit registers: a
/// `cvt` from a narrow type reads the register's low bits and extends them
/// by the type's signedness; `ld.s8`/`ld.u8` extend into the register,
/// `st.u8`/`st.u16` store the low bytes only; float → narrow `cvt.rzi`
/// saturates to the narrow range (NaN from `f64` is `1 << (width - 1)`)
/// and extends; `atom.cas.b16` swaps two bytes of a word. ptxas accepts
/// every form.
#[test]
fn narrow_integers_in_32_bit_registers() {
    let body = "
	mov.b32 %r1, 0x1234ABCD;
	cvt.s32.s8 %r2, %r1;
	cvt.u32.u8 %r3, %r1;
	cvt.s32.s16 %r4, %r1;
	cvt.u32.u16 %r5, %r1;
	st.global.u8 [%rd0+64], %r1;
	st.global.u16 [%rd0+68], %r1;
	ld.global.s8 %r6, [%rd0+64];
	ld.global.u8 %r7, [%rd0+64];
	ld.global.s16 %r8, [%rd0+68];
	ld.global.u16 %r9, [%rd0+68];
	cvt.rzi.s8.f32 %r10, 0fC3960000;
	cvt.rzi.u8.f32 %r11, 0f43960000;
	cvt.rzi.u16.f64 %r12, 0dFFF8000000000000;
	cvt.rn.f32.s8 %f1, %r1;
	mov.b32 %r13, %f1;
	mov.b32 %r14, 0x5A5A5A5A;
	st.global.u32 [%rd0+72], %r14;
	cvt.u16.u32 %h2, %r14;
	mov.b16 %h3, 0x1234;
	atom.global.cas.b16 %h1, [%rd0+72], %h2, %h3;
	cvt.u32.u16 %r15, %h1;
"
    .to_string()
        + &stores(&[
            "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%r10", "%r11", "%r12", "%r13",
            "%r15",
        ]);
    let ptx = kernel(&body);
    if let Some(ptxas) = crate::common::ptxas::require_ptxas() {
        crate::common::ptxas::assemble(&ptxas, &ptx, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }
    let got = run_words(&ptx, 1, 19);
    assert_eq!(
        got,
        [
            0xFFFF_FFCD,
            0xCD,
            0xFFFF_ABCD,
            0xABCD,
            0xFFFF_FFCD,
            0xCD,
            0xFFFF_ABCD,
            0xABCD,
            0xFFFF_FF80,
            0xFF,
            0x8000,
            (-51.0f32).to_bits(),
            0x5A5A,
            0xdead_beef,
            0xdead_beef,
            0xdead_beef,
            0xdead_becd,
            0xdead_abcd,
            0x5A5A_1234,
        ]
    );
}
