//! Hopper's tensor-core instructions in the simulator, on hand-written PTX
//! against references worked out here from the PTX ISA: tensor copies
//! (every swizzle, out-of-bounds fill, 3-D boxes, multicast, stores,
//! reductions, maps by value and by pointer), wgmma (every input type,
//! f32/f16/s32 accumulators, SS and RS, K- and MN-major, every swizzle,
//! scale and transpose immediates, `.satfinite`), setmaxnreg, ldmatrix and
//! stmatrix, and the packed conversions. Every kernel is also assembled by
//! ptxas for sm_90a where it is installed.

use crate::common::ptxas::{assemble, require_ptxas};
use crate::common::sim::*;
use kdsl::fp8::Fp8;
use kdsl::launch::{ArgValue, OobFill, Swizzle, TensorElem};
use kdsl::sim::{Outcome, Schedule};
use kdsl::types::Scalar;

const HEAD: &str = ".version 8.4\n.target sm_90a\n.address_size 64\n";

/// Loads `ptx` (after ptxas accepts it, where installed) and runs it.
fn run_ptx(ptx: &str, l: &kdsl::launch::Launch, schedule: Schedule) -> (Loaded, Outcome) {
    if let Some(ptxas) = require_ptxas() {
        assemble(&ptxas, ptx, "sm_90a").unwrap_or_else(|e| panic!("ptxas:\n{e}\n{ptx}"));
    }
    let k = ptx_str("t.ptx", ptx).unwrap_or_else(|e| panic!("load failed:\n{e}\n{ptx}"));
    let o = run_with(&k, l, schedule, 100_000_000);
    (k, o)
}

fn clean(ptx: &str, l: &kdsl::launch::Launch) -> Outcome {
    let (k, o) = run_ptx(ptx, l, Schedule::InOrder);
    assert!(o.reports.is_empty(), "reports:\n{}", rendered(&k, &o));
    o
}

/// The swizzled offset of linear offset `l` in a box that starts on its
/// pattern's repeat: 16-byte chunk `(l >> 4) & 7` of each 128-byte row
/// XORed with the row's index modulo the span's chunks (PTX ISA §5.5.7).
fn swz(l: u64, span: u64) -> u64 {
    if span == 0 {
        return l;
    }
    let w = span / 16;
    l ^ (((l >> 7) % w) << 4)
}

// ---- tensor copies ---------------------------------------------------------

/// A kernel that loads one box of `box_bytes` into `buf` (a 1024-aligned
/// shared array, first in shared memory) with a `.{rank}d` tensor copy at
/// `coords`, then writes `buf` to `out` word by word.
fn load_kernel(rank: usize, box_bytes: u32) -> String {
    let coords: Vec<String> = (0..rank).map(|i| format!("%r{}", 10 + i)).collect();
    let loads: String = (0..rank)
        .map(|i| format!("\tld.param.u32 %r{}, [c{i}];\n", 10 + i))
        .collect();
    let params: String = (0..rank).map(|i| format!(", .param .u32 c{i}")).collect();
    format!(
        "{HEAD}.visible .entry t(.param .align 64 .b8 tmap[128], .param .u64 out{params})\n.reqntid 64, 1, 1\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<24>;\n\t.reg .b64 %rd<8>;\n\
         \t.shared .align 1024 .b8 buf[{box_bytes}];\n\t.shared .align 8 .b64 bar;\n\
         \tmov.u64 %rd1, tmap;\n\tcvta.param.u64 %rd1, %rd1;\n\tld.param.u64 %rd2, [out];\n{loads}\
         \tmov.u32 %r1, buf;\n\tmov.u32 %r2, bar;\n\tmov.u32 %r3, %tid.x;\n\
         \tsetp.eq.u32 %p1, %r3, 0;\n\t@!%p1 bra WAIT;\n\
         \tmbarrier.init.shared::cta.b64 [%r2], 1;\n\
         \tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], {box_bytes};\n\
         \tcp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {{{}}}], [%r2];\n\
         WAIT:\n\tbar.sync 0;\n\
         LOOP:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\t@!%p2 bra LOOP;\n\
         \tshl.b32 %r4, %r3, 2;\n\
         COPY:\n\tsetp.ge.u32 %p3, %r4, {box_bytes};\n\t@%p3 bra DONE;\n\
         \tadd.u32 %r5, %r1, %r4;\n\tld.shared.u32 %r6, [%r5];\n\
         \tcvt.u64.u32 %rd3, %r4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r6;\n\
         \tadd.u32 %r4, %r4, 256;\n\tbra COPY;\n\
         DONE:\n\tret;\n}}\n",
        coords.join(", ")
    )
}

/// The bytes a tensor load of `boxes` (outermost first) at `coords`
/// (innermost first) from a dense tensor of `dims` leaves in shared
/// memory, swizzled with `span`.
fn expected_box(
    data: &[u8],
    es: usize,
    dims: &[u64],
    boxes: &[u32],
    coords: &[i64],
    fill: &[u8],
    span: u64,
) -> Vec<u8> {
    let rank = dims.len();
    let total: usize = boxes.iter().map(|&b| b as usize).product::<usize>() * es;
    let mut out = vec![0u8; total];
    let count: usize = boxes.iter().map(|&b| b as usize).product();
    for lin in 0..count {
        // Box index, innermost first.
        let mut rem = lin;
        let mut inside = true;
        let mut offset = 0u64;
        let mut stride = es as u64;
        for d in (0..rank).rev() {
            let b = boxes[d] as usize;
            let i = rem % b;
            rem /= b;
            let c = coords[rank - 1 - d] + i as i64;
            if c < 0 || c >= dims[d] as i64 {
                inside = false;
            }
            offset += c.max(0) as u64 * stride;
            stride *= dims[d];
        }
        let at = swz((lin * es) as u64, span) as usize;
        let src = if inside {
            &data[offset as usize..offset as usize + es]
        } else {
            fill
        };
        out[at..at + es].copy_from_slice(src);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn check_load(
    elem: TensorElem,
    data: Vec<u8>,
    dims: &[u64],
    boxes: &[u32],
    coords: &[i64],
    swizzle: Swizzle,
    fill: OobFill,
    fill_bytes: &[u8],
) {
    let es = elem.size() as usize;
    let box_bytes: u32 = boxes.iter().product::<u32>() * es as u32;
    let want = expected_box(
        &data,
        es,
        dims,
        boxes,
        coords,
        fill_bytes,
        u64::from(swizzle.bytes()),
    );
    let mut map = tensor("tmap", elem, data, dims, boxes, swizzle);
    if let ArgValue::TensorMap { map, .. } = &mut map {
        map.fill = fill;
    }
    let mut args = vec![map, u32s("out", &vec![0; box_bytes as usize / 4])];
    args.extend(coords.iter().map(|&c| u32v(c as i32 as u32)));
    let l = launch("t", [1, 1, 1], [64, 1, 1], [1, 1, 1], args);
    let o = clean(&load_kernel(dims.len(), box_bytes), &l);
    assert_eq!(
        o.arrays[1].data, want,
        "{elem} box {boxes:?} at {coords:?} swizzle {swizzle:?}"
    );
}

fn iota_bytes(n: usize, es: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            (i as u64)
                .wrapping_mul(0x0101_0101_0101_0101)
                .wrapping_add(1)
                .to_le_bytes()[..es]
                .to_vec()
        })
        .collect()
}

#[test]
fn tensor_loads_in_every_swizzle_with_out_of_bounds_fill() {
    // 128B: rows of 64 u16 (the GEMM's layout), the box inside the tensor.
    check_load(
        TensorElem::U16,
        iota_bytes(10 * 72, 2),
        &[10, 72],
        &[8, 64],
        &[0, 0],
        Swizzle::B128,
        OobFill::Zero,
        &[0, 0],
    );
    // 64B: 16 f32 a row, sticking out on the left and at the bottom; NaN fill.
    check_load(
        TensorElem::F32,
        iota_bytes(12 * 20, 4),
        &[12, 20],
        &[16, 16],
        &[-4, 5],
        Swizzle::B64,
        OobFill::Nan,
        &0x7fff_ffffu32.to_le_bytes(),
    );
    // 32B: a 3-D box of bytes, partly outside in every dimension.
    check_load(
        TensorElem::U8,
        iota_bytes(3 * 5 * 48, 1),
        &[3, 5, 48],
        &[2, 4, 32],
        &[16, 3, 2],
        Swizzle::B32,
        OobFill::Zero,
        &[0],
    );
    // No swizzle, bf16 with a NaN fill, mostly past the right edge.
    check_load(
        TensorElem::BF16,
        iota_bytes(16 * 40, 2),
        &[16, 40],
        &[8, 32],
        &[24, 3],
        Swizzle::None,
        OobFill::Nan,
        &0x7fffu16.to_le_bytes(),
    );
    // A 5-D box and an e4m3 tensor (its NaN is 0x7f).
    check_load(
        TensorElem::E4M3,
        iota_bytes(2 * 2 * 3 * 2 * 48, 1),
        &[2, 2, 3, 2, 48],
        &[1, 2, 2, 2, 32],
        &[20, 1, 2, -1, 1],
        Swizzle::B32,
        OobFill::Nan,
        &[0x7f],
    );
}

/// A cluster of two CTAs: each expects the box on its own barrier, and
/// rank 0 issues one multicast copy for both (a tensor copy, then a plain
/// bulk copy).
#[test]
fn multicast_copies_land_in_every_cta_of_the_mask() {
    let ptx = format!(
        "{HEAD}.visible .entry t(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u64 src)\n\
         .reqntid 32, 1, 1\n.reqnctapercluster 2, 1, 1\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b16 %rs<2>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \t.shared .align 128 .b8 buf[512];\n\t.shared .align 8 .b64 bar;\n\
         \tmov.u64 %rd1, tmap;\n\tcvta.param.u64 %rd1, %rd1;\n\
         \tld.param.u64 %rd2, [out];\n\tld.param.u64 %rd5, [src];\n\
         \tmov.u32 %r1, buf;\n\tmov.u32 %r2, bar;\n\tmov.u32 %r3, %tid.x;\n\
         \tmov.u32 %r7, %cluster_ctarank;\n\
         \tsetp.eq.u32 %p1, %r3, 0;\n\
         \t@%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n\
         \t@%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 512;\n\
         \tfence.mbarrier_init.release.cluster;\n\
         \tbarrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;\n\
         \tsetp.eq.u32 %p3, %r7, 0;\n\tand.pred %p3, %p3, %p1;\n\
         \tmov.b16 %rs1, 3;\n\tmov.u32 %r10, 0;\n\tmov.u32 %r11, 1;\n\
         \t@%p3 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {{%r10, %r11}}], [%r2], %rs1;\n\
         \t@%p3 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1+256], [%rd5], 256, [%r2], %rs1;\n\
         LOOP:\n\tmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n\t@!%p2 bra LOOP;\n\
         \tmul.lo.u32 %r4, %r3, 16;\n\tadd.u32 %r5, %r1, %r4;\n\tld.shared.v4.u32 {{%r12, %r13, %r14, %r15}}, [%r5];\n\
         \tmad.lo.u32 %r6, %r7, 512, %r4;\n\tcvt.u64.u32 %rd3, %r6;\n\tadd.s64 %rd4, %rd2, %rd3;\n\
         \tst.global.v4.u32 [%rd4], {{%r12, %r13, %r14, %r15}};\n\
         \tbarrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;\n\tret;\n}}\n"
    );
    let data = iota_bytes(4 * 64, 2);
    let src: Vec<u8> = (0..256u32).map(|i| (i * 7) as u8).collect();
    let l = launch(
        "t",
        [2, 1, 1],
        [32, 1, 1],
        [2, 1, 1],
        vec![
            tensor(
                "tmap",
                TensorElem::U16,
                data.clone(),
                &[4, 64],
                &[2, 64],
                Swizzle::B128,
            ),
            array("out", Scalar::U8, vec![0; 1024]),
            array("src", Scalar::U8, src.clone()),
        ],
    );
    let o = clean(&ptx, &l);
    let mut want = expected_box(&data, 2, &[4, 64], &[2, 64], &[0, 1], &[0, 0], 128);
    want.extend_from_slice(&src);
    let out = &o.arrays[1].data;
    assert_eq!(&out[..512], &want[..], "CTA rank 0");
    assert_eq!(&out[512..], &want[..], "CTA rank 1");
}

/// Stores and reductions from shared memory clip the box to the tensor;
/// the map comes by pointer (`const CUtensorMap*`), as fast.cu passes it.
#[test]
fn tensor_stores_and_reductions_clip_to_the_tensor() {
    let ptx = format!(
        "{HEAD}.visible .entry t(.param .u64 pmap)\n.reqntid 64, 1, 1\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<4>;\n\
         \t.shared .align 128 .b8 buf[256];\n\
         \tld.param.u64 %rd1, [pmap];\n\
         \tmov.u32 %r1, buf;\n\tmov.u32 %r3, %tid.x;\n\
         \tshl.b32 %r4, %r3, 2;\n\tadd.u32 %r5, %r1, %r4;\n\
         \tadd.u32 %r6, %r3, 100;\n\tst.shared.u32 [%r5], %r6;\n\
         \tfence.proxy.async.shared::cta;\n\tbar.sync 0;\n\
         \tsetp.ne.u32 %p1, %r3, 0;\n\t@%p1 bra END;\n\
         \tmov.u32 %r10, 4;\n\tmov.u32 %r11, -2;\n\tmov.u32 %r12, 0;\n\
         \tcp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {{%r10, %r11}}], [%r1];\n\
         \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group.read 0;\n\
         \tcp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {{%r12, %r12}}], [%r1];\n\
         \tcp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group [%rd1, {{%r12, %r12}}], [%r1];\n\
         \tcp.async.bulk.commit_group;\n\tcp.async.bulk.wait_group 0;\n\
         END:\n\tret;\n}}\n"
    );
    // A 6 x 12 tensor of u32 (iota), an 8 x 8 box (outermost first).
    let (rows, cols) = (6usize, 12usize);
    let start: Vec<u32> = (0..(rows * cols) as u32).collect();
    let bytes: Vec<u8> = start.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut t = tensor(
        "pmap",
        TensorElem::U32,
        bytes,
        &[6, 12],
        &[8, 8],
        Swizzle::None,
    );
    let l = launch("t", [1, 1, 1], [64, 1, 1], [1, 1, 1], vec![t.clone()]);
    let o = clean(&ptx, &l);
    let mut want = start.clone();
    let boxv = |r: usize, c: usize| (r * 8 + c) as u32 + 100;
    // The store at column 4, row -2: box rows 2.. land on tensor rows 0..5.
    for r in 0..8 {
        for c in 0..8 {
            let (tr, tc) = (r as i64 - 2, c as i64 + 4);
            if (0..rows as i64).contains(&tr) && (0..cols as i64).contains(&tc) {
                want[tr as usize * cols + tc as usize] = boxv(r, c);
            }
        }
    }
    // Then `add`, then `max`, at the origin.
    for r in 0..rows {
        for c in 0..8 {
            let i = r * cols + c;
            want[i] += boxv(r, c);
            want[i] = want[i].max(boxv(r, c));
        }
    }
    assert_eq!(as_u32(&o.arrays[0]), want);
    // A reduction the ISA does not define on the map's type is reported.
    if let ArgValue::TensorMap { array, map, .. } = &mut t {
        map.elem = TensorElem::F64;
        array.elem = Scalar::F64;
        array.data.resize(6 * 12 * 8, 0);
        map.box_dims = [4, 4, 0, 0, 0];
    }
    let l = launch("t", [1, 1, 1], [64, 1, 1], [1, 1, 1], vec![t]);
    let (k, o) = run_ptx(&ptx, &l, Schedule::InOrder);
    let text = rendered(&k, &o);
    assert!(
        text.contains("error[S0022]: `.add` tensor reduction on f64 elements"),
        "{text}"
    );
}

#[test]
fn a_tensor_copy_into_an_unaligned_box_is_reported() {
    let ptx = load_kernel(2, 256).replace("[%r1], [%rd1", "[%r1+16], [%rd1");
    let l = launch(
        "t",
        [1, 1, 1],
        [64, 1, 1],
        [1, 1, 1],
        vec![
            tensor(
                "tmap",
                TensorElem::U8,
                vec![1; 256],
                &[8, 32],
                &[8, 32],
                Swizzle::None,
            ),
            u32s("out", &[0; 64]),
            u32v(0),
            u32v(0),
        ],
    );
    let (k, o) = run_ptx(&ptx.replace("buf[256]", "buf[288]"), &l, Schedule::InOrder);
    let text = rendered(&k, &o);
    assert!(
        text.contains(
            "error[S0012]: tensor copy at shared address 0x410, which is not 128-byte aligned"
        ),
        "{text}"
    );
}

// ---- wgmma -----------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum In {
    F16,
    Bf16,
    Tf32,
    E4m3,
    E5m2,
    S8,
    U8,
}

impl In {
    fn name(self) -> &'static str {
        match self {
            In::F16 => "f16",
            In::Bf16 => "bf16",
            In::Tf32 => "tf32",
            In::E4m3 => "e4m3",
            In::E5m2 => "e5m2",
            In::S8 => "s8",
            In::U8 => "u8",
        }
    }

    fn bytes(self) -> usize {
        match self {
            In::F16 | In::Bf16 => 2,
            In::Tf32 => 4,
            _ => 1,
        }
    }

    /// A small exact value of the type for draw `x`, and its bits.
    fn value(self, x: u64) -> (f64, Vec<u8>) {
        let v = (x % 7) as f64 - 3.0;
        match self {
            In::F16 => (v, half::f16::from_f64(v).to_bits().to_le_bytes().to_vec()),
            In::Bf16 => (v, half::bf16::from_f64(v).to_bits().to_le_bytes().to_vec()),
            // The low 13 bits are noise the instruction truncates away.
            In::Tf32 => {
                let bits = (v as f32).to_bits() | ((x as u32) & 0x1fff);
                (v, bits.to_le_bytes().to_vec())
            }
            In::E4m3 => {
                let v = v / 2.0;
                (v, vec![Fp8::E4M3.encode(v, true)])
            }
            In::E5m2 => {
                let v = v * 4.0;
                (v, vec![Fp8::E5M2.encode(v, true)])
            }
            In::S8 => (v, vec![v as i8 as u8]),
            In::U8 => (v + 3.0, vec![(v + 3.0) as u8]),
        }
    }

    fn k(self) -> usize {
        32 / self.bytes()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    F32,
    F16,
    S32,
}

#[derive(Clone, Copy, Debug)]
struct Mma {
    a: In,
    b: In,
    out: Out,
    n: usize,
    /// The swizzle span in bytes (0: none).
    span: u64,
    rs: bool,
    trans_a: bool,
    trans_b: bool,
    neg_a: bool,
    /// D = A·B + D (from `din`) rather than D = A·B.
    scale_d: bool,
    satfinite: bool,
    /// The accumulator starts near `i32::MAX` (for `.satfinite`).
    big_d: bool,
}

const BASE: Mma = Mma {
    a: In::Bf16,
    b: In::Bf16,
    out: Out::F32,
    n: 64,
    span: 128,
    rs: false,
    trans_a: false,
    trans_b: false,
    neg_a: false,
    scale_d: false,
    satfinite: false,
    big_d: false,
};

/// The byte offset of element `(r, k)` of an operand tile of `rows × k`
/// elements of `es` bytes, laid out as a tensor copy writes it: K-major,
/// rows of `span` bytes (each K slice at its start) or, without a swizzle,
/// 8×16-byte core matrices (the next 16 bytes of K 128 bytes on, the next
/// 8 rows 256 bytes on); MN-major, a 3-D box of K rows of `span` bytes per
/// `span`-wide block of rows (hopper.md §3.4). Returns the offset and the
/// descriptor's (leading, stride) byte offsets.
fn layout(r: usize, k: usize, es: usize, kk: usize, span: u64, mn_major: bool) -> (u64, u64, u64) {
    let span = span as usize;
    if mn_major {
        let per_row = span / es;
        let lin = (r / per_row) * kk * span + k * span + (r % per_row) * es;
        return (
            swz(lin as u64, span as u64),
            (kk * span) as u64,
            (8 * span) as u64,
        );
    }
    if span == 0 {
        let t = 16 / es;
        let lin = (r % 8) * 16 + (r / 8) * 256 + (k / t) * 128 + (k % t) * es;
        return (lin as u64, 128, 256);
    }
    let lin = r * span + k * es;
    (swz(lin as u64, span as u64), 16, (8 * span) as u64)
}

fn mode(span: u64) -> u64 {
    match span {
        128 => 1,
        64 => 2,
        32 => 3,
        _ => 0,
    }
}

/// Runs one wgmma of `m` by 128 threads and checks every accumulator
/// register of every thread.
fn check_mma(m: Mma) {
    let kk = m.a.k();
    let n = m.n;
    let (esa, esb) = (m.a.bytes(), m.b.bytes());
    let mut seed = 0x9e37_79b9u64 ^ n as u64;
    let mut draw = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Operands, as values and in shared memory (as large as the layout
    // reaches, in whole 128-byte rows).
    let extent = |rows: usize, es: usize, mn: bool| {
        (0..rows)
            .flat_map(|r| (0..kk).map(move |k| (r, k)))
            .map(|(r, k)| layout(r, k, es, kk, m.span, mn).0 as usize + es)
            .max()
            .unwrap_or(0)
            .next_multiple_of(128)
    };
    let a_size = extent(64, esa, m.trans_a);
    let b_size = extent(n, esb, m.trans_b);
    let mut av = vec![0f64; 64 * kk];
    let mut a_smem = vec![0u8; a_size];
    for r in 0..64 {
        for k in 0..kk {
            let (v, bits) = m.a.value(draw());
            av[r * kk + k] = if m.neg_a { -v } else { v };
            let at = layout(r, k, esa, kk, m.span, m.trans_a).0 as usize;
            a_smem[at..at + esa].copy_from_slice(&bits);
        }
    }
    // The RS fragment: register j of lane l holds row l/4 + 8(j&1), columns
    // (l%4)·epr + e + (j>>1)·K/2 (CUTLASS ALayout_64xK).
    let epr = 4 / esa;
    let mut a_frag = vec![0u8; 128 * 16];
    for t in (0..128).filter(|_| m.rs) {
        let (w, l) = (t / 32, t % 32);
        for j in 0..4 {
            for e in 0..epr {
                let row = 16 * w + l / 4 + 8 * (j & 1);
                let col = (l % 4) * epr + e + (j >> 1) * (kk / 2);
                let at = layout(row, col, esa, kk, m.span, false).0 as usize;
                let dst = t * 16 + j * 4 + e * esa;
                a_frag[dst..dst + esa].copy_from_slice(&a_smem[at..at + esa]);
            }
        }
    }
    // The fragment holds what the K-major tile would.
    assert!(!(m.rs && m.trans_a), "an RS wgmma has no trans-a");
    let mut bv = vec![0f64; n * kk];
    let mut b_smem = vec![0u8; b_size];
    for r in 0..n {
        for k in 0..kk {
            let (v, bits) = m.b.value(draw());
            bv[r * kk + k] = v;
            let at = layout(r, k, esb, kk, m.span, m.trans_b).0 as usize;
            b_smem[at..at + esb].copy_from_slice(&bits);
        }
    }
    // Accumulators: f32/s32 N/2 per thread, f16 N/4 (two per register).
    let per = if m.out == Out::F16 { 2 } else { 1 };
    let nd = n / 2 / per;
    let mut din = vec![0u32; 128 * nd];
    let mut want = vec![0u32; 128 * nd];
    for t in 0..128 {
        let (w, l) = (t / 32, t % 32);
        for j in 0..nd {
            let mut word_in = 0u32;
            let mut word_out = 0u32;
            for h in 0..per {
                let i = j * per + h;
                let row = 16 * w + l / 4 + 8 * ((i >> 1) & 1);
                let col = 8 * (i >> 2) + 2 * (l % 4) + (i & 1);
                let s: f64 = (0..kk).map(|k| av[row * kk + k] * bv[col * kk + k]).sum();
                let d0 = if m.big_d {
                    i32::MAX as f64 - 5.0 - (i % 3) as f64 * 100.0
                } else {
                    ((draw() % 9) as f64) - 4.0
                };
                let (bits_in, bits_out) = match m.out {
                    Out::F32 => {
                        let d = if m.scale_d { d0 } else { 0.0 };
                        ((d0 as f32).to_bits(), ((d + s) as f32).to_bits())
                    }
                    Out::F16 => {
                        let d = if m.scale_d { d0 } else { 0.0 };
                        (
                            u32::from(half::f16::from_f64(d0).to_bits()),
                            u32::from(half::f16::from_f64(d + s).to_bits()),
                        )
                    }
                    Out::S32 => {
                        let d = if m.scale_d { d0 as i64 } else { 0 };
                        let x = d + s as i64;
                        let x = if m.satfinite {
                            x.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                        } else {
                            x
                        };
                        (d0 as i64 as i32 as u32, x as i32 as u32)
                    }
                };
                word_in |= bits_in << (16 * h);
                word_out |= bits_out << (16 * h);
            }
            din[t * nd + j] = word_in;
            want[t * nd + j] = word_out;
        }
    }
    // The kernel: copy the operands into shared memory, build the
    // descriptors, one wgmma, store the accumulators.
    let (_, lbo_a, sbo_a) = layout(0, 0, esa, kk, m.span, m.trans_a);
    let (_, lbo_b, sbo_b) = layout(0, 0, esb, kk, m.span, m.trans_b);
    let desc = |lbo: u64, sbo: u64| (lbo >> 4) << 16 | (sbo >> 4) << 32 | mode(m.span) << 62;
    let dregs: Vec<String> = (0..nd).map(|i| format!("%d{i}")).collect();
    let dty = if m.out == Out::F32 { ".f32" } else { ".b32" };
    let types = format!(
        "{}.{}.{}",
        match m.out {
            Out::F32 => "f32",
            Out::F16 => "f16",
            Out::S32 => "s32",
        },
        m.a.name(),
        m.b.name()
    );
    let sat = if m.satfinite { ".satfinite" } else { "" };
    let float16 = matches!(m.a, In::F16 | In::Bf16);
    let int = matches!(m.a, In::S8 | In::U8);
    let scale_d = if m.scale_d { "1" } else { "0" };
    let neg = if m.neg_a { "-1" } else { "1" };
    let imms = match (int, float16, m.rs) {
        (true, _, _) => String::new(),
        (false, false, _) => format!(", {neg}, 1"),
        (false, true, false) => format!(
            ", {neg}, 1, {}, {}",
            u8::from(m.trans_a),
            u8::from(m.trans_b)
        ),
        (false, true, true) => format!(", {neg}, 1, {}", u8::from(m.trans_b)),
    };
    let a_op = if m.rs {
        "{%a0, %a1, %a2, %a3}".to_string()
    } else {
        "%rd1".to_string()
    };
    let mut body = String::new();
    for i in 0..nd {
        body.push_str(&format!("\tld.global.b32 %d{i}, [%rd8+{}];\n", 4 * i));
    }
    let ptx = format!(
        "{HEAD}.visible .entry t(.param .u64 ga, .param .u64 gb, .param .u64 gf, .param .u64 gd, .param .u64 out)\n.reqntid 128, 1, 1\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\t.reg .b32 %a<4>;\n\t.reg {dty} %d<{nd}>;\n\
         \t.shared .align 1024 .b8 sa[{a_size}];\n\t.shared .align 1024 .b8 sb[{b_size}];\n\
         \tld.param.u64 %rd10, [ga];\n\tld.param.u64 %rd11, [gb];\n\tld.param.u64 %rd12, [gf];\n\tld.param.u64 %rd13, [gd];\n\tld.param.u64 %rd14, [out];\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, sa;\n\tmov.u32 %r3, sb;\n\
         \tshl.b32 %r4, %r1, 2;\n\
         CA:\n\tsetp.ge.u32 %p1, %r4, {a_size};\n\t@%p1 bra CB0;\n\
         \tcvt.u64.u32 %rd2, %r4;\n\tadd.s64 %rd3, %rd10, %rd2;\n\tld.global.u32 %r5, [%rd3];\n\
         \tadd.u32 %r6, %r2, %r4;\n\tst.shared.u32 [%r6], %r5;\n\tadd.u32 %r4, %r4, 512;\n\tbra CA;\n\
         CB0:\n\tshl.b32 %r4, %r1, 2;\n\
         CB:\n\tsetp.ge.u32 %p1, %r4, {b_size};\n\t@%p1 bra GO;\n\
         \tcvt.u64.u32 %rd2, %r4;\n\tadd.s64 %rd3, %rd11, %rd2;\n\tld.global.u32 %r5, [%rd3];\n\
         \tadd.u32 %r6, %r3, %r4;\n\tst.shared.u32 [%r6], %r5;\n\tadd.u32 %r4, %r4, 512;\n\tbra CB;\n\
         GO:\n\tfence.proxy.async.shared::cta;\n\tbar.sync 0;\n\
         \tshr.u32 %r7, %r2, 4;\n\tcvt.u64.u32 %rd1, %r7;\n\tor.b64 %rd1, %rd1, {:#x};\n\
         \tshr.u32 %r8, %r3, 4;\n\tcvt.u64.u32 %rd4, %r8;\n\tor.b64 %rd4, %rd4, {:#x};\n\
         \tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd12, %rd5;\n\tld.global.v4.b32 {{%a0, %a1, %a2, %a3}}, [%rd6];\n\
         \tmul.wide.u32 %rd7, %r1, {};\n\tadd.s64 %rd8, %rd13, %rd7;\n{body}\
         \twgmma.fence.sync.aligned;\n\
         \twgmma.mma_async.sync.aligned.m64n{n}k{kk}{sat}.{types} {{{}}}, {a_op}, %rd4, {scale_d}{imms};\n\
         \twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\
         \tadd.s64 %rd9, %rd14, %rd7;\n{}\tret;\n}}\n",
        desc(lbo_a, sbo_a),
        desc(lbo_b, sbo_b),
        4 * nd,
        dregs.join(", "),
        (0..nd)
            .map(|i| format!("\tst.global.b32 [%rd9+{}], %d{i};\n", 4 * i))
            .collect::<String>(),
    );
    let words = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let l = launch(
        "t",
        [1, 1, 1],
        [128, 1, 1],
        [1, 1, 1],
        vec![
            array("ga", Scalar::U8, a_smem),
            array("gb", Scalar::U8, b_smem),
            array("gf", Scalar::U8, a_frag),
            array("gd", Scalar::U32, words(&din)),
            u32s("out", &vec![0; 128 * nd]),
        ],
    );
    let o = clean(&ptx, &l);
    let got = as_u32(&o.arrays[4]);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{m:?}: thread {} register {}: {g:#x}, want {w:#x}",
            i / nd,
            i % nd
        );
    }
}

#[test]
fn wgmma_16_bit_inputs_in_every_swizzle() {
    check_mma(BASE);
    check_mma(Mma { n: 256, ..BASE });
    check_mma(Mma {
        a: In::F16,
        b: In::F16,
        n: 32,
        span: 64,
        scale_d: true,
        neg_a: true,
        ..BASE
    });
    check_mma(Mma {
        a: In::F16,
        b: In::F16,
        out: Out::F16,
        n: 16,
        span: 32,
        scale_d: true,
        ..BASE
    });
    check_mma(Mma {
        n: 8,
        span: 0,
        ..BASE
    });
}

#[test]
fn wgmma_mn_major_operands() {
    check_mma(Mma {
        trans_a: true,
        trans_b: true,
        ..BASE
    });
    check_mma(Mma {
        trans_b: true,
        n: 128,
        scale_d: true,
        ..BASE
    });
}

#[test]
fn wgmma_tf32_fp8_and_integer_inputs() {
    check_mma(Mma {
        a: In::Tf32,
        b: In::Tf32,
        n: 24,
        ..BASE
    });
    check_mma(Mma {
        a: In::E4m3,
        b: In::E5m2,
        n: 40,
        scale_d: true,
        ..BASE
    });
    check_mma(Mma {
        a: In::E5m2,
        b: In::E4m3,
        out: Out::F16,
        n: 8,
        span: 0,
        ..BASE
    });
    check_mma(Mma {
        a: In::S8,
        b: In::U8,
        out: Out::S32,
        n: 48,
        span: 64,
        scale_d: true,
        satfinite: true,
        big_d: true,
        ..BASE
    });
    check_mma(Mma {
        a: In::U8,
        b: In::U8,
        out: Out::S32,
        n: 16,
        scale_d: true,
        big_d: true,
        ..BASE
    });
}

#[test]
fn wgmma_with_a_in_registers() {
    check_mma(Mma { rs: true, ..BASE });
    check_mma(Mma {
        rs: true,
        a: In::S8,
        b: In::S8,
        out: Out::S32,
        n: 32,
        ..BASE
    });
    check_mma(Mma {
        rs: true,
        a: In::E4m3,
        b: In::E4m3,
        n: 16,
        span: 32,
        neg_a: true,
        ..BASE
    });
}

/// Shapes and operand counts ptxas refuses are load errors (hopper.md §4.1).
#[test]
fn wgmma_forms_ptxas_refuses_do_not_load() {
    let k = |inst: &str| {
        format!(
            "{HEAD}.visible .entry t()\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<64>;\n\t.reg .f32 %f<128>;\n\t.reg .b64 %rd<4>;\n\t{inst}\n\tret;\n}}\n"
        )
    };
    let f32s = |n: usize| {
        (0..n)
            .map(|i| format!("%f{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (inst, why) in [
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k32.f32.bf16.bf16 {{{}}}, %rd1, %rd2, 1, 1, 1, 0, 0;", f32s(32)),
            "illegal shape `.m64n64k32`",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {{{}}}, %rd1, %rd2, 1;", f32s(20)),
            "illegal shape `.m64n40k32`",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{}}}, %rd1, %rd2, 1, 1, 1, 0, 0;", f32s(30)),
            "takes 32 accumulator registers, not 30",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{{}}}, %rd1, %rd2, 1, 1, 1, 0, 0;", f32s(32)),
            "takes 2 immediates after `scale-d`, not 4",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.f16 {{{}}}, %rd1, %rd2, 1, 1, 1, 0, 0;", f32s(32)),
            "not a type combination",
        ),
        (
            format!("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{}}}, %rd1, %rd2, 1, 2, 1, 0, 0;", f32s(32)),
            "expected to be -1 or 1",
        ),
        (
            "setmaxnreg.inc.sync.aligned.u32 100;".to_string(),
            "expected to be multiple of 8",
        ),
        (
            "setmaxnreg.dec.sync.aligned.u32 16;".to_string(),
            "expected to be in range [24..256]",
        ),
    ] {
        let err = ptx_str("t.ptx", &k(&inst))
            .err()
            .unwrap_or_else(|| panic!("{inst} loads"));
        assert!(err.contains("error[S0014]") && err.contains(why), "{inst}:\n{err}");
    }
}

// ---- setmaxnreg ------------------------------------------------------------

fn budgets(attrs: &str, producer: u32, consumer: u32) -> String {
    format!(
        "{HEAD}.visible .entry t(.param .u64 out)\n{attrs}\n{{\n\
         \t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tshr.u32 %r2, %r1, 7;\n\tsetp.ne.u32 %p1, %r2, 0;\n\
         \t@%p1 bra CONSUMER;\n\
         \tsetmaxnreg.dec.sync.aligned.u32 {producer};\n\tbra STORE;\n\
         CONSUMER:\n\tsetmaxnreg.inc.sync.aligned.u32 {consumer};\n\
         STORE:\n\tld.param.u64 %rd1, [out];\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd1, %rd1, %rd2;\n\
         \tst.global.u32 [%rd1], %r1;\n\tret;\n}}\n"
    )
}

fn budget_launch() -> kdsl::launch::Launch {
    launch(
        "t",
        [1, 1, 1],
        [384, 1, 1],
        [1, 1, 1],
        vec![u32s("out", &[0; 384])],
    )
}

#[test]
fn setmaxnreg_budgets_that_fit_the_pool_run() {
    // 40 + 232 + 232 = 504 = 3 x 168: the design point.
    let o = clean(
        &budgets(".reqntid 384, 1, 1\n.minnctapersm 1", 40, 232),
        &budget_launch(),
    );
    assert_eq!(as_u32(&o.arrays[0]), (0..384).collect::<Vec<u32>>());
    // fast.cu's 24 + 240 + 240 fits too.
    clean(
        &budgets(".maxntid 384, 1, 1\n.minnctapersm 1", 24, 240),
        &budget_launch(),
    );
}

#[test]
fn setmaxnreg_that_can_never_be_served_is_a_deadlock() {
    let (k, o) = run_ptx(
        &budgets(".reqntid 384, 1, 1\n.minnctapersm 1", 40, 240),
        &budget_launch(),
        Schedule::InOrder,
    );
    let text = rendered(&k, &o);
    assert!(text.contains("error[S0001]: deadlock"), "{text}");
    // Warps take their registers one by one: the second consumer
    // warpgroup's first three warps are served, its last waits.
    assert!(
        text.contains(
            "32 threads wait here in `setmaxnreg.inc` for 240 registers per thread, holding 168"
        ),
        "{text}"
    );
    assert!(
        text.contains("warpgroup 0 holds 40, warpgroup 1 holds 240, warpgroup 2: warps 8..10 hold 240, warp 11 holds 168 and asks for 240"),
        "{text}"
    );
    assert!(
        text.contains("add up to 40 + 240 + 240 = 520 registers per thread, more than the 504 (3 × 168) the pool holds"),
        "{text}"
    );
}

/// Without a pinned entry count ptxas drops every setmaxnreg (C7508): so
/// does the simulator, and 40 + 240 + 240 then runs.
#[test]
fn setmaxnreg_without_a_pinned_entry_count_does_nothing() {
    clean(&budgets(".reqntid 384, 1, 1", 40, 240), &budget_launch());
}

#[test]
fn setmaxnreg_warps_of_a_warpgroup_must_agree() {
    // Warp 1 of warpgroup 0 lowers to 32, the others to 40.
    let ptx = budgets(".reqntid 384, 1, 1\n.minnctapersm 1", 40, 232).replace(
        "\tsetmaxnreg.dec.sync.aligned.u32 40;\n",
        "\tshr.u32 %r3, %r1, 5;\n\tsetp.eq.u32 %p1, %r3, 1;\n\t@%p1 bra LOW;\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n\tbra STORE;\nLOW:\n\tsetmaxnreg.dec.sync.aligned.u32 32;\n",
    );
    let (k, o) = run_ptx(&ptx, &budget_launch(), Schedule::InOrder);
    let text = rendered(&k, &o);
    assert!(
        text.contains("error[S0026]: the warps of a warpgroup execute different `setmaxnreg`s"),
        "{text}"
    );
}

// ---- ldmatrix, stmatrix ----------------------------------------------------

/// Each lane's register i of matrix i of 8x8 u16 matrices stored row by
/// row (matrix i at 128 i, row r at 16 r): the two elements at row l/4,
/// columns 2(l%4) and +1; transposed, rows 2(l%4) and +1 of column l/4.
fn matrix_words(num: usize, trans: bool, elem: impl Fn(usize, usize, usize) -> u16) -> Vec<u32> {
    let mut out = Vec::new();
    for l in 0..32 {
        for i in 0..num {
            let (a, b) = if trans {
                (elem(i, 2 * (l % 4), l / 4), elem(i, 2 * (l % 4) + 1, l / 4))
            } else {
                (elem(i, l / 4, 2 * (l % 4)), elem(i, l / 4, 2 * (l % 4) + 1))
            };
            out.push(u32::from(a) | u32::from(b) << 16);
        }
    }
    out
}

#[test]
fn ldmatrix_and_stmatrix() {
    for (num, trans) in [(1, false), (2, true), (4, false), (4, true)] {
        let regs: Vec<String> = (0..num).map(|i| format!("%r{}", 20 + i)).collect();
        let stores: String = (0..num)
            .map(|i| format!("\tst.global.u32 [%rd3+{}], %r{};\n", 4 * i, 20 + i))
            .collect();
        let t = if trans { ".trans" } else { "" };
        // Load the matrices, store them back transposed (or not) into a
        // second array (zeroed first: `.x1` and `.x2` store only some of
        // its rows), and give both to the host.
        let ptx = format!(
            "{HEAD}.visible .entry t(.param .u64 out, .param .u64 back)\n.reqntid 32, 1, 1\n{{\n\
             \t.reg .b32 %r<32>;\n\t.reg .b64 %rd<8>;\n\
             \t.shared .align 128 .b8 m[512];\n\t.shared .align 128 .b8 m2[512];\n\
             \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, m;\n\
             \tshl.b32 %r3, %r1, 4;\n\tadd.u32 %r4, %r2, %r3;\n\
             \tmul.lo.u32 %r5, %r1, 65544;\n\tadd.u32 %r6, %r5, 65536;\n\
             \tadd.u32 %r7, %r5, 131072;\n\tadd.u32 %r8, %r5, 196608;\n\
             \tadd.u32 %r9, %r5, 0x00010001;\n\
             \tst.shared.v4.u32 [%r4], {{%r5, %r6, %r7, %r9}};\n\
             \tbar.sync 0;\n\
             \tldmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 {{{}}}, [%r4];\n\
             \tld.param.u64 %rd1, [out];\n\tmul.wide.u32 %rd2, %r1, {};\n\tadd.s64 %rd3, %rd1, %rd2;\n{stores}\
             \tmov.u32 %r10, m2;\n\tadd.u32 %r11, %r10, %r3;\n\
             \tmov.u32 %r16, 0;\n\tst.shared.v4.u32 [%r11], {{%r16, %r16, %r16, %r16}};\n\
             \tstmatrix.sync.aligned.m8n8.x{num}{t}.shared.b16 [%r11], {{{}}};\n\
             \tbar.sync 0;\n\tld.shared.v4.u32 {{%r12, %r13, %r14, %r15}}, [%r11];\n\
             \tld.param.u64 %rd4, [back];\n\tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd4, %rd5;\n\
             \tst.global.v4.u32 [%rd6], {{%r12, %r13, %r14, %r15}};\n\tret;\n}}\n",
            regs.join(", "),
            4 * num,
            regs.join(", "),
        );
        let l = launch(
            "t",
            [1, 1, 1],
            [32, 1, 1],
            [1, 1, 1],
            vec![u32s("out", &vec![0; 32 * num]), u32s("back", &[0; 128])],
        );
        let o = clean(&ptx, &l);
        // Shared memory: row r (16 bytes) of lane r's words: element c of
        // row r is the u16 the stores above wrote.
        let smem = |row: usize, col: usize| -> u16 {
            let words = [
                (row as u32) * 65544,
                (row as u32) * 65544 + 65536,
                (row as u32) * 65544 + 131072,
                (row as u32) * 65544 + 0x0001_0001,
            ];
            (words[col / 2] >> (16 * (col % 2))) as u16
        };
        let want = matrix_words(num, trans, |i, r, c| smem(8 * i + r, c));
        assert_eq!(as_u32(&o.arrays[0]), want, "ldmatrix x{num} trans {trans}");
        // stmatrix with the same layout writes the matrices back.
        let back = as_u32(&o.arrays[1]);
        for row in 0..8 * num {
            for c in 0..8 {
                let w = back[row * 4 + c / 2];
                assert_eq!(
                    (w >> (16 * (c % 2))) as u16,
                    smem(row, c),
                    "stmatrix x{num} trans {trans} row {row} col {c}"
                );
            }
        }
    }
}

// ---- packed conversions ----------------------------------------------------

#[test]
fn packed_conversions() {
    let body = "
	mov.f32 %f1, 0f3FC00000;            // 1.5
	mov.f32 %f2, 0fC0A00000;            // -5
	mov.f32 %f3, 0f47C35000;            // 100000
	cvt.rn.bf16x2.f32 %r1, %f1, %f2;
	cvt.rn.f16x2.f32 %r2, %f1, %f2;
	cvt.rn.relu.f16x2.f32 %r3, %f1, %f2;
	cvt.rn.satfinite.f16x2.f32 %r4, %f3, %f1;
	cvt.rz.bf16x2.f32 %r5, %f1, %f2;
	cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
	cvt.rn.satfinite.e5m2x2.f32 %h2, %f3, %f2;
	cvt.rn.satfinite.relu.e4m3x2.f32 %h3, %f2, %f1;
	cvt.rn.f16x2.e4m3x2 %r6, %h1;
	cvt.rn.satfinite.e4m3x2.f16x2 %h4, %r2;
	cvt.u32.u16 %r7, %h1;
	cvt.u32.u16 %r8, %h2;
	cvt.u32.u16 %r9, %h3;
	cvt.u32.u16 %r10, %h4;
	mov.b32 %r11, {%h4, %h1};
";
    let regs = [
        "%r1", "%r2", "%r3", "%r4", "%r5", "%r7", "%r8", "%r9", "%r6", "%r10", "%r11",
    ];
    let stores: String = regs
        .iter()
        .enumerate()
        .map(|(i, r)| format!("\tst.global.u32 [%rd0+{}], {r};\n", 4 * i))
        .collect();
    let ptx = format!(
        "{HEAD}.visible .entry t(.param .u64 out)\n{{\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<16>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd0, [out];\n{body}{stores}\tret;\n}}\n"
    );
    let l = launch(
        "t",
        [1, 1, 1],
        [1, 1, 1],
        [1, 1, 1],
        vec![u32s("out", &[0; 11])],
    );
    let o = clean(&ptx, &l);
    let bf = |x: f32| u32::from(half::bf16::from_f32(x).to_bits());
    let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
    let e4 = |x: f64| u32::from(Fp8::E4M3.encode(x, true));
    let e5 = |x: f64| u32::from(Fp8::E5M2.encode(x, true));
    let want = [
        bf(1.5) << 16 | bf(-5.0),
        h(1.5) << 16 | h(-5.0),
        h(1.5) << 16,             // -5 becomes +0
        0x7bff << 16 | h(1.5),    // 100000 saturates to 65504
        bf(1.5) << 16 | bf(-5.0), // both exact
        e4(1.5) << 8 | e4(-5.0),
        e5(100000.0) << 8 | e5(-5.0), // 57344
        e4(1.5),                      // relu: -5 -> 0 in the upper byte
        h(1.5) << 16 | h(-5.0),
        e4(1.5) << 8 | e4(-5.0),
        (e4(1.5) << 8 | e4(-5.0)) << 16 | (e4(1.5) << 8 | e4(-5.0)),
    ];
    let got = as_u32(&o.arrays[0]);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(*g, w, "{}: {g:#x}, want {w:#x}", regs[i]);
    }
}

// ---- the design's verified PTX forms ----------------------------------------

/// The PTX forms of hopper.md §4.1 (`tests/fixtures/hopper-ptx/`, copied
/// from the design's `hopper/ptx/cases/`, each checked there with ptxas
/// 13.5): those ptxas refuses do not load here either, and those it takes
/// load and run with the reports the ISA calls for. The wgmma cases give
/// scale-d from `%tid.x != 0`, which differs between the lanes of a warp:
/// S0026 (they check the assembler, not a computation); `q01`, `q04` and
/// `q06` write the A fragment of their RS wgmma after the `wgmma.fence`
/// (S0028: the ISA wants the fence between the write and the wgmma); all
/// read shared
/// memory nothing wrote (S0032), as `q21` and `q30` (whose reductions
/// read a tile nothing stored) do; the 32 threads of `q23` and `q33` (one
/// warp) store the same value to the same words at one instruction: one
/// warp-wide store, not a race (docs/simulator.md).
#[test]
fn the_designs_ptx_cases_load_and_run_as_the_isa_says() {
    let dir = crate::common::repo_root().join("tests/fixtures/hopper-ptx");
    let out = || u32s("out", &[0; 64]);
    // (file, load error, block, arguments, the codes of the run)
    type Case<'a> = (&'a str, Option<&'a str>, u32, Vec<ArgValue>, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (
            "q01_wgmma_f16_f32acc.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0028", "S0032"],
        ),
        (
            "q02_wgmma_f16_f16acc.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0032"],
        ),
        ("q03_wgmma_f16acc_count.ptx", Some("S0014"), 0, vec![], &[]),
        (
            "q04_wgmma_tf32.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0028", "S0032"],
        ),
        (
            "q05_wgmma_tf32_trans_rejected.ptx",
            Some("S0014"),
            0,
            vec![],
            &[],
        ),
        (
            "q06_wgmma_fp8.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0028", "S0032"],
        ),
        (
            "q07_wgmma_fp8_trans_rejected.ptx",
            Some("S0014"),
            0,
            vec![],
            &[],
        ),
        (
            "q08_wgmma_s8.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0032"],
        ),
        (
            "q09_wgmma_s8_same_sign_v80.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0032"],
        ),
        ("q10_wgmma_s8_bad_n.ptx", Some("S0014"), 0, vec![], &[]),
        (
            "q11_wgmma_f16_n40_ok.ptx",
            None,
            128,
            vec![out()],
            &["S0026", "S0032"],
        ),
        (
            "q12_wgmma_s8_scale_imm_rejected.ptx",
            Some("S0014"),
            0,
            vec![],
            &[],
        ),
        ("q20_stmatrix.ptx", None, 32, vec![out()], &[]),
        ("q21_ldmatrix.ptx", None, 32, vec![out()], &["S0032"]),
        ("q22_stmatrix_m16n8_b8.ptx", Some("S0013"), 0, vec![], &[]),
        (
            "q23_pack_bf16x2.ptx",
            None,
            32,
            vec![out(), f32v(1.5), f32v(-2.0)],
            &[],
        ),
        (
            "q30_tma_reduce_add.ptx",
            None,
            128,
            vec![
                // `.add` and `.min` are both defined on f16.
                tensor(
                    "tmap",
                    TensorElem::F16,
                    vec![0; 64 * 64 * 2],
                    &[64, 64],
                    &[32, 32],
                    Swizzle::None,
                ),
                u32v(0),
                u32v(32),
            ],
            &["S0032"],
        ),
        ("q32_tensormap_replace.ptx", Some("S0013"), 0, vec![], &[]),
        ("q33_dyn_smem_align1024.ptx", None, 32, vec![out()], &[]),
        (
            "q40_setmaxnreg_reqntid_only_dropped.ptx",
            None,
            384,
            vec![out()],
            &[],
        ),
        (
            "q41_setmaxnreg_reqntid_minncta.ptx",
            None,
            384,
            vec![out()],
            &[],
        ),
    ];
    for (file, load_error, block, args, codes) in cases {
        let text = std::fs::read_to_string(dir.join(file)).expect(file);
        match (ptx_str(file, &text), load_error) {
            (Err(e), Some(code)) => {
                assert!(e.contains(&format!("error[{code}]")), "{file}:\n{e}");
                continue;
            }
            (Err(e), None) => panic!("{file} does not load:\n{e}"),
            (Ok(_), Some(code)) => panic!("{file} loads, and ptxas refuses it ({code} expected)"),
            (Ok(k), None) => {
                let mut l = launch("k", [1, 1, 1], [block, 1, 1], [1, 1, 1], args);
                l.dynamic_shared = 1024;
                let o = run_with(&k, &l, Schedule::InOrder, 10_000_000);
                let mut got: Vec<&str> = o.reports.iter().map(|d| d.code).collect();
                got.sort_unstable();
                got.dedup();
                assert_eq!(got, codes, "{file}:\n{}", rendered(&k, &o));
                if file.starts_with("q23") {
                    // `cvt.rn.bf16x2.f32 d, b, a`: b = -2 into the upper
                    // half, a = 1.5 into the lower; then the same packed by
                    // `mov.b32 d, {a, b}` (lower first).
                    let w = 0xc000_u32 << 16 | 0x3fc0;
                    assert_eq!(&as_u32(&o.arrays[0])[..4], &[w, 0, w, w], "{file}");
                }
                if file.starts_with("q33") {
                    // The dynamic shared memory starts 1024-aligned.
                    assert_eq!(as_u32(&o.arrays[0])[0], 0, "{file}");
                }
            }
        }
    }
}

/// The GEMM of hopper.md §4.2 as kdslc would emit it (the design's PTX,
/// `tests/fixtures/hopper-ptx/gemm_g_40_232.ptx`: 4-stage ring, producer
/// at 40 registers, consumers at 232, one arrival per consumer warp) over
/// 2 × 2 tiles and 5 k-tiles, exactly A·Bᵀ on small integers, in order and
/// at random.
#[test]
fn the_designs_gemm_ptx_computes_a_times_b_transposed() {
    case_designs_gemm(&designs_gemm());
}

/// The design's GEMM PTX, `benches/sim.rs`'s `hopper_gemm_1024` kernel.
pub fn designs_gemm() -> Loaded {
    let text = std::fs::read_to_string(
        crate::common::repo_root().join("tests/fixtures/hopper-ptx/gemm_g_40_232.ptx"),
    )
    .expect("the GEMM");
    ptx_str("gemm_g_40_232.ptx", &text).unwrap_or_else(|e| panic!("{e}"))
}

pub fn case_designs_gemm(k: &Loaded) {
    let (m, n, kk) = (256u32, 512u32, 320u32);
    let a = small_int_bf16((m * kk) as usize, 11);
    let b = small_int_bf16((n * kk) as usize, 12);
    let mut l = launch(
        "gemm",
        [(n / 256) * (m / 128), 1, 1],
        [384, 1, 1],
        [1, 1, 1],
        vec![
            tensor(
                "tmA",
                TensorElem::BF16,
                a.clone(),
                &[m.into(), kk.into()],
                &[128, 64],
                Swizzle::B128,
            ),
            tensor(
                "tmB",
                TensorElem::BF16,
                b.clone(),
                &[n.into(), kk.into()],
                &[256, 64],
                Swizzle::B128,
            ),
            array("pc", Scalar::BF16, vec![0; (2 * m * n) as usize]),
            u32v(m),
            u32v(n),
            u32v(kk),
        ],
    );
    l.dynamic_shared = 197_632;
    let value = |v: &[u8], i: usize| {
        f64::from(f32::from_bits(
            u32::from(u16::from_le_bytes([v[2 * i], v[2 * i + 1]])) << 16,
        ))
    };
    let mut want = Vec::new();
    for r in 0..m as usize {
        for c in 0..n as usize {
            let s: f64 = (0..kk as usize)
                .map(|j| value(&a, r * kk as usize + j) * value(&b, c * kk as usize + j))
                .sum();
            want.extend(crate::sim::reference::bf16_bits(s as f32).to_le_bytes());
        }
    }
    for schedule in [Schedule::InOrder, Schedule::Random(5)] {
        let o = run_clean_with(k, &l, schedule, 1_000_000_000);
        assert!(o.arrays[2].data == want, "{schedule:?}: C differs");
    }
}
