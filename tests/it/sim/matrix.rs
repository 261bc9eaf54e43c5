//! `ldmatrix_xN` and `stmatrix_xN` in the simulator against a Rust
//! reference of the PTX ISA's fragment layout (§9.7.14.5.15–16): lane `l`
//! holds, in register `i`, the elements of matrix `i` at row `l / 4`,
//! columns `2 (l % 4)` and `+ 1` (low half first), or with `.trans` at rows
//! `2 (l % 4)` and `+ 1` of column `l / 4`; the rows of matrix `i` are at
//! the addresses lanes `8i .. 8i + 7` give. Rows come from plain and
//! swizzled shared arrays, at columns that differ from lane to lane, and
//! the stores write back what the loads read (the layout's inverse).

use crate::common::sim::*;
use kdsl::types::Scalar;

const SRC: &str = r#"
kernel m(x: global [u16], out: global mut [u32], back: global mut [u16], halves: global mut [f16]) block(64) {
    shared t: [u16; 32, 64];
    shared sw: [u16; 2, 8, 64] swizzle(128);
    shared o: [u16; 32, 32];
    shared h: [f16; 16, 8];
    let tid = thread_idx.x;
    for i in tid..2048 step 64 {
        t[i / 64, i % 64] = x[i];
    }
    for i in tid..1024 step 64 {
        sw[i / 512, (i / 64) % 8, i % 64] = x[2048 + i];
    }
    for i in tid..128 step 64 {
        h[i / 8, i % 8] = (x[i] % 1024) as f16;
    }
    // The stores below leave rows 16.. of the `.trans` halves unwritten,
    // and `back` reads all of `o`: zero it first (shared memory starts
    // undefined, S0032).
    for i in tid..1024 step 64 {
        o[i / 32, i % 32] = 0;
    }
    sync_threads();
    let w = warp_id;
    let (a, b, c, d) = ldmatrix_x4(t[lane_id, 8 * (w + 2 * (lane_id % 3))]);
    let (e, f) = ldmatrix_x2(t[(lane_id * 5) % 32, 8 * ((lane_id + w) % 8)], trans = true);
    let (g) = ldmatrix_x1(sw[w, lane_id % 8, 8 * ((lane_id * 3) % 8)]);
    let (p, q) = ldmatrix_x2(sw[1 - w, lane_id % 8, 8 * (lane_id / 8)]);
    let base = 9 * tid;
    out[base] = a;
    out[base + 1] = b;
    out[base + 2] = c;
    out[base + 3] = d;
    out[base + 4] = e;
    out[base + 5] = f;
    out[base + 6] = g;
    out[base + 7] = p;
    out[base + 8] = q;
    stmatrix_x4(o[lane_id, 16 * w], a, b, c, d);
    stmatrix_x2(o[lane_id % 16, 16 * w + 8], e, f, trans = true);
    let (r, s) = ldmatrix_x2(h[lane_id % 16, 0]);
    halves[2 * tid] = r.lo + s.hi;
    halves[2 * tid + 1] = (r * s).hi;
    sync_threads();
    for i in tid..1024 step 64 {
        back[i] = o[i / 32, i % 32];
    }
}
"#;

/// The registers of a warp's `ldmatrix` of `n` matrices whose row `j` of
/// matrix `i` starts at `rows[8i + j]` (as a function giving an element
/// of that row at a column): `regs[lane][i]`.
fn load(n: usize, trans: bool, elem: &dyn Fn(usize, usize, usize) -> u16) -> Vec<Vec<u32>> {
    (0..32)
        .map(|l| {
            (0..n)
                .map(|i| {
                    let (r0, c0, r1, c1) = if trans {
                        (2 * (l % 4), l / 4, 2 * (l % 4) + 1, l / 4)
                    } else {
                        (l / 4, 2 * (l % 4), l / 4, 2 * (l % 4) + 1)
                    };
                    u32::from(elem(i, r0, c0)) | u32::from(elem(i, r1, c1)) << 16
                })
                .collect()
        })
        .collect()
}

#[test]
fn matrix_loads_and_stores_follow_the_fragment_layout() {
    let k = kdsl_str_with("m.kdsl", SRC, &kdsl::Options::default());
    let x: Vec<u16> = (0..3072u32).map(|i| (i * 7 + 3) as u16).collect();
    let bytes = |v: &[u16]| v.iter().flat_map(|h| h.to_le_bytes()).collect::<Vec<u8>>();
    let mut l = launch(
        "m",
        1,
        64,
        1,
        vec![
            array("x", Scalar::U16, bytes(&x)),
            u32s("out", &[0; 9 * 64]),
            array("back", Scalar::U16, vec![0; 2048]),
            array("halves", Scalar::F16, vec![0; 256]),
        ],
    );
    l.dynamic_shared = k
        .program
        .signature("m")
        .and_then(|s| s.dynamic_shared)
        .unwrap_or(0);
    let o = run_clean(&k, &l);
    let out = as_u32(&o.arrays[1]);
    let back: Vec<u16> = o.arrays[2]
        .data
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let t = |r: usize, c: usize| x[64 * r + c];
    let sw = |s: usize, r: usize, c: usize| x[2048 + 512 * s + 64 * r + c];
    let mut o_ref = vec![0u16; 1024];
    for w in 0..2usize {
        // The row each lane names, as the kernel computes it.
        let abcd = load(4, false, &|i, j, c| {
            let lane = 8 * i + j;
            t(lane, 8 * (w + 2 * (lane % 3)) + c)
        });
        let ef = load(2, true, &|i, j, c| {
            let lane = 8 * i + j;
            t((lane * 5) % 32, 8 * ((lane + w) % 8) + c)
        });
        let g = load(1, false, &|_, j, c| sw(w, j, 8 * ((j * 3) % 8) + c));
        let pq = load(2, false, &|i, j, c| {
            let lane = 8 * i + j;
            sw(1 - w, lane % 8, 8 * (lane / 8) + c)
        });
        for l in 0..32 {
            let tid = 32 * w + l;
            let want: Vec<u32> = abcd[l]
                .iter()
                .chain(&ef[l])
                .chain(&g[l])
                .chain(&pq[l])
                .copied()
                .collect();
            assert_eq!(
                &out[9 * tid..9 * tid + 9],
                &want[..],
                "warp {w} lane {l}: a b c d e f g p q"
            );
        }
        // stmatrix_x4 non-transposed: lane l's register i is row l / 4,
        // columns 2 (l % 4) and + 1 of matrix i, whose row j goes to
        // o[8i + j, 16w ..]; stmatrix_x2 transposed: rows and columns
        // swapped, rows at o[(8i + j) % 16, 16w + 8 ..].
        for (l, regs) in abcd.iter().enumerate() {
            for (i, reg) in regs.iter().enumerate() {
                for h in 0..2 {
                    let (r, c) = (l / 4, 2 * (l % 4) + h);
                    o_ref[32 * (8 * i + r) + 16 * w + c] = (reg >> (16 * h)) as u16;
                }
            }
        }
        for (l, regs) in ef.iter().enumerate() {
            for (i, reg) in regs.iter().enumerate() {
                for h in 0..2 {
                    let (r, c) = (2 * (l % 4) + h, l / 4);
                    o_ref[32 * ((8 * i + r) % 16) + 16 * w + 8 + c] = (reg >> (16 * h)) as u16;
                }
            }
        }
    }
    // Rows 16..31 of the transposed store's columns are never written:
    // they keep shared memory's zeros.
    assert_eq!(back, o_ref, "o after the stores");
    // f16 matrices: registers are f16x2 pairs, used in packed math.
    let hv = |r: usize, c: usize| half::f16::from_f32(f32::from(x[8 * r + c] % 1024));
    let halves: Vec<u16> = o.arrays[3]
        .data
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for tid in 0..64 {
        let l = tid % 32;
        // Lanes 0..15 name rows 0..15; matrix 0 is rows 0..7, matrix 1 rows 8..15.
        let (r, c) = (l / 4, 2 * (l % 4));
        let (r_lo, r_hi) = (hv(r, c), hv(r, c + 1));
        let s_hi = hv(8 + r, c + 1);
        assert_eq!(
            halves[2 * tid],
            (r_lo + s_hi).to_bits(),
            "thread {tid}: r.lo + s.hi"
        );
        assert_eq!(
            halves[2 * tid + 1],
            (r_hi * s_hi).to_bits(),
            "thread {tid}: (r * s).hi"
        );
    }
}

const LOOP: &str = r#"
kernel l(x: global [f16], y: global mut [f16x2], n: u32) block(64) {
    shared t: [f16; 16, 16];
    for i in thread_idx.x..256 step 64 {
        t[i / 16, i % 16] = x[i];
    }
    sync_threads();
    let mut acc = f16x2(0.0, 0.0);
    for _k in 0..n {
        let (a, b) = ldmatrix_x2(t[lane_id % 16, 8]);
        acc = fma(a, b, acc);
    }
    for _k in 0..3u32 {
        let (c) = ldmatrix_x1(t[lane_id % 8, 0], trans = true);
        acc = acc * c;
    }
    y[thread_idx.x] = acc;
}
"#;

/// The optimiser moves matrix accesses as shared accesses: `licm` hoists
/// their invariant row address out of the loop, `unroll` copies them; the
/// results are the reference's with the passes on and off.
#[test]
fn matrix_accesses_in_loops_survive_the_passes() {
    use kdsl::opt::Passes;
    let x: Vec<u16> = (0..256u32)
        .map(|i| half::f16::from_f32((i % 7) as f32 * 0.25).to_bits())
        .collect();
    let bytes: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
    let xv = |r: usize, c: usize| half::f16::from_bits(x[16 * r + c]);
    for passes in [Passes::none(), Passes::all()] {
        let k = kdsl_str_with("l.kdsl", LOOP, &with_passes(passes.clone()));
        let l = launch(
            "l",
            1,
            64,
            1,
            vec![
                array("x", Scalar::F16, bytes.clone()),
                array("y", Scalar::F16x2, vec![0; 256]),
                u32v(5),
            ],
        );
        let o = run_clean(&k, &l);
        let y = as_u32(&o.arrays[1]);
        for (tid, got) in y.iter().enumerate() {
            let lane = tid % 32;
            let (r, c) = (lane / 4, 2 * (lane % 4));
            let mut acc = [half::f16::ZERO; 2];
            for (h, a) in acc.iter_mut().enumerate() {
                // Matrices 0 and 1: rows 0..7 and 8..15, columns 8..15.
                let (av, bv) = (xv(r, 8 + c + h), xv(8 + r, 8 + c + h));
                for _ in 0..5 {
                    let exact = f64::from(av) * f64::from(bv) + f64::from(*a);
                    *a = half::f16::from_f64(exact);
                }
                // Transposed: rows 2 (l % 4) + h of column l / 4.
                let cv = xv(2 * (lane % 4) + h, lane / 4);
                for _ in 0..3 {
                    *a *= cv;
                }
            }
            let want = u32::from(acc[0].to_bits()) | u32::from(acc[1].to_bits()) << 16;
            assert_eq!(*got, want, "{passes:?} thread {tid}");
        }
    }
}
