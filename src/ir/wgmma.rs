//! Warpgroup matrix operations: accumulators and fragments in registers,
//! `wgmma` and its forms, and the whole-fragment operations.

use super::{AccumId, Expr, Place, PlaceKind};
use crate::span::Span;
use crate::types::Scalar;

/// `accum name: [T; 64, N];`: a 64 x N matrix that a warpgroup's `wgmma`
/// instructions accumulate into, spread over the registers of its 128
/// threads: each thread holds [`Accum::elements`] of it, element `i` at
/// the row and column of the fragment map (PTX ISA 9.7.15.5.1.1; CUTLASS
/// `CLayout_64xN`): row `16 w + l / 4 + 8 ((i >> 1) & 1)`, column
/// `8 (i >> 2) + 2 (l % 4) + (i & 1)` for warp `w` of the warpgroup and
/// lane `l`. `elem` is `f32`, `f16` (two per 32-bit register) or `i32`;
/// `n` a width some `wgmma` shape has (the checker's E0412). A `bf16`
/// one (two per register, like `f16`) is a *fragment* only: no `wgmma`
/// accumulates into it, one reads it as its A operand (the RS form,
/// [`Wgmma`]). A *row vector* (`accum m: [f32; 64];`, `row`) holds one
/// value per row: element `r` (0 or 1) of a thread is the row of the
/// elements `i` of its fragments with `(i >> 1) & 1 == r`, the same in the
/// four lanes that share the row ([`FragOp`]).
#[derive(Clone, Debug)]
pub struct Accum {
    pub name: String,
    pub elem: Scalar,
    /// The columns; 1 for a row vector.
    pub n: u32,
    /// A row vector: `[T; 64]`.
    pub row: bool,
    pub span: Span,
    /// A `wgmma` naming it failed to check (a module with errors): no
    /// check concludes from what it holds.
    pub failed: bool,
}

impl Accum {
    /// The rows of every accumulator (`wgmma`'s M).
    pub const M: u32 = 64;

    /// The element types `wgmma` accumulates into.
    pub const ELEMS: [Scalar; 3] = [Scalar::F32, Scalar::F16, Scalar::I32];

    /// The widths of the integer forms (`.s32` accumulators: PTX ISA
    /// 9.7.15.5.1, verified with ptxas 13.5, `m64n40k32` rejected: q10).
    pub const INT_N: [u32; 18] = [
        8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
    ];

    /// Whether some `wgmma` shape has an accumulator of `N = n` columns of
    /// `elem`: any multiple of 8 up to 256 for the float forms, the
    /// sparser [`Accum::INT_N`] for `i32`.
    pub fn valid_n(elem: Scalar, n: i128) -> bool {
        match elem {
            Scalar::I32 => u32::try_from(n).is_ok_and(|n| Accum::INT_N.contains(&n)),
            _ => (8..=256).contains(&n) && n % 8 == 0,
        }
    }

    /// Why `n` is not a width of `elem` (for E0412).
    pub fn n_rule(elem: Scalar, n: i128) -> String {
        match elem {
            Scalar::I32 => format!(
                "an `i32` accumulator has 8, 16, 24 or a multiple of 16 up to 256 columns (the integer `wgmma` shapes), not {n}"
            ),
            _ => format!(
                "a `{elem}` accumulator has a multiple of 8 columns, from 8 to 256 (the `wgmma` shapes m64nNk), not {n}"
            ),
        }
    }

    /// The elements each thread holds: `64 * n / 128`; a row vector's two
    /// rows.
    pub fn elements(&self) -> u32 {
        if self.row {
            return 2;
        }
        self.n / 2
    }

    /// The 32-bit registers each thread holds them in (`f16` and `bf16`
    /// pack two).
    pub fn registers(&self) -> u32 {
        if self.row {
            2
        } else if self.elem.size() == 2 {
            self.n / 4
        } else {
            self.n / 2
        }
    }

    /// The fragment map: the row of element `i` in warp `w` (0..4) of the
    /// warpgroup, lane `l`.
    pub fn row(i: u32, w: u32, l: u32) -> u32 {
        16 * w + l / 4 + 8 * ((i >> 1) & 1)
    }

    /// The column of element `i` in lane `l`.
    pub fn col(i: u32, l: u32) -> u32 {
        8 * (i >> 2) + 2 * (l % 4) + (i & 1)
    }

    /// Which of a thread's two rows element `i` lies in: the element of a
    /// row vector that goes with it.
    pub fn row_slot(&self, i: u32) -> u32 {
        if self.row {
            i
        } else {
            (i >> 1) & 1
        }
    }

    /// The element types a fragment that is a register operand (RS
    /// `wgmma`'s A) may have: pairs of 16-bit floats, in the fragment map.
    pub const OPERAND_ELEMS: [Scalar; 2] = [Scalar::BF16, Scalar::F16];

    /// The elements of one K slice of an RS operand (`64 x 16` 16-bit
    /// values over 128 threads: columns `16 kk ..` are elements `8 kk ..
    /// 8 kk + 7`, registers `4 kk .. 4 kk + 3`).
    pub const SLICE_ELEMENTS: u32 = 8;
}

/// Threads in a warpgroup: four consecutive warps.
pub const WARPGROUP: u32 = 128;
/// The most wgmma groups `wgmma_wait(n)` may leave pending (`wait_group`
/// takes any immediate, but ptxas treats one above 7 as 7).
pub const WGMMA_MAX_PENDING: u32 = 7;

/// `wgmma(acc, a, b, accumulate = c)`: `acc` (64 x N) = `a` (64 x K) times
/// `b` (N x K) transposed, plus `acc` where `accumulate` holds. `a` and `b`
/// name the first element of their tile in a swizzled shared array whose
/// innermost dimension is K (K-major: the array's rows are the tile's
/// rows, contiguous along K; the tile is `[r0 .. r0 + rows, k0 .. k0 + K]`
/// of the last two dimensions, K = 32 bytes of the element type), or,
/// transposed (`trans_a`/`trans_b`, `transpose(...)` in the source), an
/// MN-major tile of an `f16`/`bf16` array whose innermost dimension is
/// along M or N: the last two dimensions are K and one span of rows, the
/// one before them (when the tile is wider than a span) the tile's blocks
/// of a span; the tile is `[b0 .., k0 .. k0 + K, 0 ..]`. The form
/// ([`WgmmaForm`]) follows from the types, which the checker matched
/// (E0411).
///
/// `a` may instead be an element of a 16-bit fragment (an `f16`/`bf16`
/// [`Accum`]: [`PlaceKind::Accum`]), the RS form: the 64 x 16 slice of
/// the fragment whose first element it is (element `8 kk` for columns
/// `16 kk ..`, [`Accum::SLICE_ELEMENTS`]), read from the four `.b32`
/// registers that hold it, which are in the layout the A operand wants
/// (PTX ISA 9.7.15.5.1.1: the A fragment of `.m64nNk16` is the
/// accumulator map of a 64 x 16 matrix).
#[derive(Clone, Debug)]
pub struct Wgmma {
    pub acc: AccumId,
    pub a: Place,
    pub b: Place,
    /// `a` MN-major (`imm-trans-a = 1`).
    pub trans_a: bool,
    /// `b` MN-major (`imm-trans-b = 1`).
    pub trans_b: bool,
    pub accumulate: Expr,
    /// The accumulator's name as written (for spans).
    pub acc_span: Span,
}

impl Wgmma {
    /// The fragment an RS `wgmma` reads its A operand from, and the
    /// index of the slice's first element.
    pub fn a_fragment(&self) -> Option<(AccumId, &Expr)> {
        match &self.a.kind {
            PlaceKind::Accum { acc, index } => Some((*acc, index)),
            _ => None,
        }
    }
}

/// A whole-fragment operation (language.md §16.7): every element of the
/// thread's part of `dst`, and the shuffles across the four lanes that
/// share a row, so that a kernel computes on rows without knowing which
/// thread holds which element. Row vectors are [`Accum::row`].
#[derive(Clone, Debug)]
pub struct FragOp {
    pub kind: FragKind,
    pub dst: AccumId,
    pub src: AccumId,
    /// `row_exp2`'s factor.
    pub factor: Option<Expr>,
    /// The operands as written (for spans).
    pub dst_span: Span,
    pub src_span: Span,
}

/// Why `kind` does not apply to `dst` and `src` (the checker's E0450; the
/// verifier's invariant).
pub fn fragment_mismatch(kind: FragKind, dst: &Accum, src: &Accum) -> Option<&'static str> {
    let f32_ = Scalar::F32;
    match kind {
        FragKind::RowMax | FragKind::RowSum if !dst.row || dst.elem != f32_ || src.elem != f32_ => {
            Some("a row vector and an `f32` fragment")
        }
        FragKind::RowScale | FragKind::RowExp2 if dst.elem != f32_ || !src.row => {
            Some("an `f32` fragment and a row vector")
        }
        FragKind::Convert
            if dst.row
                || src.row
                || !Accum::OPERAND_ELEMS.contains(&dst.elem)
                || src.elem != f32_
                || dst.n != src.n =>
        {
            Some("a 16-bit fragment and an `f32` fragment of its shape")
        }
        _ => None,
    }
}

/// The whole-fragment operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FragKind {
    /// `row_max(m, s)`: row vector `m` becomes, per row, the maximum of
    /// `m` and the row's elements of `s` (an `f32` fragment or row vector).
    RowMax,
    /// `row_sum(l, s)`: `l` plus the sum of the row's elements of `s`.
    RowSum,
    /// `row_scale(o, c)`: every element of `o` (fragment or row vector)
    /// times its row's value of row vector `c`.
    RowScale,
    /// `row_exp2(s, m, k)`: every element `x` of `s` becomes `2^(x k - m
    /// k)` with `m` its row's value of row vector `m` (`ex2.approx.ftz`).
    RowExp2,
    /// `acc_convert(p, s)`: 16-bit fragment `p` becomes `f32` fragment `s`
    /// of its shape, each element rounded to nearest even (pairs: one
    /// `cvt.rn.bf16x2.f32` per register).
    Convert,
}

impl FragKind {
    /// The built-in as written.
    pub fn name(self) -> &'static str {
        match self {
            FragKind::RowMax => "row_max",
            FragKind::RowSum => "row_sum",
            FragKind::RowScale => "row_scale",
            FragKind::RowExp2 => "row_exp2",
            FragKind::Convert => "acc_convert",
        }
    }

    /// Whether `dst`'s old elements are read (all but the conversion).
    pub fn reads_dst(self) -> bool {
        self != FragKind::Convert
    }
}

/// The `wgmma` forms: accumulator type, operand types (PTX ISA
/// 9.7.15.5.1, each verified with ptxas 13.5 on sm_90a: q01-q12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaForm {
    pub d: Scalar,
    pub a: Scalar,
    pub b: Scalar,
}

impl WgmmaForm {
    /// The form of these types, or why there is none.
    pub fn of(d: Scalar, a: Scalar, b: Scalar) -> Result<WgmmaForm, String> {
        use Scalar::*;
        let fp8 = |t: Scalar| matches!(t, E4M3 | E5M2);
        let int8 = |t: Scalar| matches!(t, I8 | U8);
        let ok = match (d, a, b) {
            (F32 | F16, F16, F16) | (F32, BF16, BF16) | (F32, TF32, TF32) => true,
            (F32 | F16, x, y) if fp8(x) && fp8(y) => true,
            (I32, x, y) if int8(x) && int8(y) => true,
            _ => false,
        };
        if ok {
            return Ok(WgmmaForm { d, a, b });
        }
        Err(match (a, b) {
            (F16 | BF16 | TF32, _) | (_, F16 | BF16 | TF32) if a != b => format!(
                "`{a}` and `{b}` operands: `f16`, `bf16` and `tf32` multiply only with their own type"
            ),
            (F16, _) => format!("`f16` operands accumulate into `f32` or `f16`, not `{d}`"),
            (BF16 | TF32, _) => format!("`{a}` operands accumulate into `f32`, not `{d}`"),
            (x, y) if fp8(x) && fp8(y) => {
                format!("fp8 operands accumulate into `f32` or `f16`, not `{d}`")
            }
            (x, y) if int8(x) && int8(y) => {
                format!("`i8` and `u8` operands accumulate into `i32`, not `{d}`")
            }
            _ => format!(
                "no `wgmma` multiplies `{a}` by `{b}`: its operands are `f16`, `bf16`, `tf32`, `e4m3`/`e5m2` or `i8`/`u8`"
            ),
        })
    }

    /// K of the instruction: 32 bytes of the operand type (16 `f16`, 8
    /// `tf32`, 32 fp8 or bytes).
    pub fn k(&self) -> u32 {
        32 / self.a.size()
    }

    /// The PTX type of an operand or accumulator (`.s8` for `i8`).
    pub fn ptx(t: Scalar) -> &'static str {
        match t {
            Scalar::F32 => "f32",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::TF32 => "tf32",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
            Scalar::I8 => "s8",
            Scalar::U8 => "u8",
            _ => "s32",
        }
    }

    /// An integer form: no scale or transpose immediates.
    pub fn integer(&self) -> bool {
        self.d == Scalar::I32
    }

    /// The `f16`/`bf16` forms take the transpose immediates too.
    pub fn transposable(&self) -> bool {
        matches!(self.a, Scalar::F16 | Scalar::BF16)
    }

    /// Mixed signedness (`.s32.u8.s8`) needs PTX ISA 8.4 (q08).
    pub fn mixed_signedness(&self) -> bool {
        self.integer() && self.a != self.b
    }
}
