//! Memory operations beyond a load or store: atomics with their orders
//! and scopes, vector and matrix accesses, tensor copies.

use super::{BarrierRef, Expr, ParamId, SharedId};
use crate::span::Span;
use crate::types::Scalar;

/// A tensor copy (`docs/language.md` §15.4): one box of tensor map `map`
/// at `coords` (outermost first, 32-bit integers, one per dimension of the
/// map) between it and `smem`, a slice of a shared array whose shape is
/// the box, element type the map's.
#[derive(Clone, Debug)]
pub struct TensorCopy {
    pub kind: TensorCopyKind,
    pub smem: Slice,
    /// A `tensor` parameter ([`ParamType::Tensor`](super::ParamType::Tensor)).
    pub map: ParamId,
    pub coords: Vec<Expr>,
    /// The box as written, `a[m0, k0]`.
    pub box_span: Span,
}

#[derive(Clone, Debug)]
pub enum TensorCopyKind {
    /// Global → shared, completing the box's bytes on `barrier`; with a
    /// `mask` (a `u32` of 16 significant bits, sm_90a, a kernel with
    /// `cluster(...)`), into the same slice of every CTA of the cluster
    /// whose rank's bit is set, completing on each one's barrier.
    Load {
        barrier: BarrierRef,
        mask: Option<Box<Expr>>,
    },
    /// Shared → global, in the current bulk group.
    Store,
    /// Shared → global, added to what global memory holds, in the current
    /// bulk group.
    ReduceAdd,
}

impl TensorCopyKind {
    /// The built-in as written in kdsl.
    pub fn name(&self) -> &'static str {
        match self {
            TensorCopyKind::Load { .. } => "tma_load",
            TensorCopyKind::Store => "tma_store",
            TensorCopyKind::ReduceAdd => "tma_reduce_add",
        }
    }
}

/// `sa[s]`, `sa[s, r]` or `sa`: a shared array with fewer indices than
/// dimensions (the leading ones), the elements whose indices start so.
#[derive(Clone, Debug)]
pub struct Slice {
    pub array: SharedId,
    pub indices: Vec<Expr>,
    pub span: Span,
}

/// A warp's matrix access (`ldmatrix`, `stmatrix`) of 8 x 8 matrices of
/// 16-bit elements: transposed or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Matrix {
    pub trans: bool,
}

impl Matrix {
    /// The elements of one row: 16 bytes, which a lane's address names.
    pub const ROW: u32 = 8;

    /// The type of a register of matrices of `elem`: two elements, as a
    /// pair (`f16x2`, `bf16x2`) or as the `u32` of their bits (`u16`,
    /// `i16`); `None` for an element type the instructions do not move.
    pub fn register(elem: Scalar) -> Option<Scalar> {
        match elem {
            Scalar::F16 | Scalar::BF16 => elem.pair_of(),
            Scalar::U16 | Scalar::I16 => Some(Scalar::U32),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    /// `old - v`: `atom.add` of the negation (PTX has no `atom.sub`).
    Sub,
    Max,
    Min,
    /// Stores `v`, returns the old value.
    Exch,
    And,
    Or,
    Xor,
    /// `u32` only: `old >= v ? 0 : old + 1` (`atom.inc.u32`).
    Inc,
    /// `u32` only: `old == 0 || old > v ? v : old - 1` (`atom.dec.u32`).
    Dec,
    /// `args = [compare, value]`.
    Cas,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::Exch,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Cas,
    ];

    /// The built-in's name (`atomic_add`).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Exch => "atomic_exch",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Inc => "atomic_inc",
            AtomicOp::Dec => "atomic_dec",
            AtomicOp::Cas => "atomic_cas",
        }
    }

    /// Whether the language has this atomic on elements of type `t`.
    pub fn accepts(self, t: crate::types::Scalar) -> bool {
        use crate::types::Scalar::*;
        let ints = matches!(t, U32 | I32 | U64 | I64);
        match self {
            AtomicOp::Add | AtomicOp::Sub => matches!(t, U32 | I32 | U64 | I64 | F32 | F64),
            AtomicOp::Exch => ints || matches!(t, F32 | F64),
            AtomicOp::Max | AtomicOp::Min | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => ints,
            // PTX has `atom.cas.b16` (no other narrow atomic).
            AtomicOp::Cas => ints || matches!(t, U16 | I16),
            AtomicOp::Inc | AtomicOp::Dec => t == U32,
        }
    }
}

/// The memory order of an atomic or fence (PTX's `.sem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// Fences only (`fence.sc`).
    Sc,
}

impl MemOrder {
    pub const ALL: [MemOrder; 5] = [
        MemOrder::Relaxed,
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
        MemOrder::Sc,
    ];

    /// The word in kdsl and in PTX (`acq_rel`).
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::Sc => "sc",
        }
    }
}

/// The scope of an atomic or fence: the threads it is atomic or ordered
/// with respect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    Cta,
    /// sm_90 and newer.
    Cluster,
    Gpu,
    Sys,
}

impl MemScope {
    pub const ALL: [MemScope; 4] = [
        MemScope::Cta,
        MemScope::Cluster,
        MemScope::Gpu,
        MemScope::Sys,
    ];

    /// The word in kdsl and in PTX (`cluster`).
    pub fn name(self) -> &'static str {
        match self {
            MemScope::Cta => "cta",
            MemScope::Cluster => "cluster",
            MemScope::Gpu => "gpu",
            MemScope::Sys => "sys",
        }
    }
}

/// An order and a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemSem {
    pub order: MemOrder,
    pub scope: MemScope,
}

impl MemSem {
    /// An atomic's default, like CUDA's `atomicAdd`: what PTX's `atom`
    /// without qualifiers means.
    pub const ATOMIC: MemSem = MemSem {
        order: MemOrder::Relaxed,
        scope: MemScope::Gpu,
    };
    /// `fence()`'s default: `fence.acq_rel.gpu` (CUDA's
    /// `__threadfence()`).
    pub const FENCE: MemSem = MemSem {
        order: MemOrder::AcqRel,
        scope: MemScope::Gpu,
    };
}

/// The most bytes one vector access (`ld.v4`, `st.v2`, ...) moves.
pub const VECTOR_BYTES: u32 = 16;
