//! Where a kernel's data lives: its shared memory and its parameter space.
//! One computation for every user, so that what the checker accepts is
//! exactly what the PTX writer emits, ptxas lays out, the launch sets up
//! and the manifest tells host code:
//!
//! - the checker reports E0122 (shared memory over the target's maximum)
//!   and E0127 (parameters over the target's parameter space) from these
//!   layouts;
//! - the writer declares the `.shared` variables in [`SharedLayout`]'s order,
//!   or, for a kernel placed in dynamic shared memory, addresses each
//!   declaration at its offset in the one `.extern .shared` array, and
//!   raises the PTX `.version` when [`ParamLayout`] needs it;
//! - `kdslc sim`/`kdslc run` launch with [`SharedLayout::dynamic_bytes`],
//!   and `--emit manifest` writes all of it (`src/manifest.rs`).
//!
//! ptxas counts every declared `.shared` variable, used or not, and places
//! each at the next offset its alignment allows: first the variables the
//! code uses, in declaration order, then the unused ones. "Used" is decided
//! after ptxas's own dead-code elimination (a load whose value is never
//! needed does not count), so the order is not ours to know. The layout is
//! therefore made one whose total does not depend on that order: barrier
//! groups first (every one is used, by its `mbarrier.init`), then the
//! arrays, each declared with its size rounded up to its 128-byte alignment,
//! so that any order of them takes the same bytes. `tests/it/check/limits.rs`
//! compares the total with `ptxas -v` on generated kernels.
//!
//! Static shared memory is limited to 48 KiB per CTA ([`SHARED_LIMIT`]).
//! A kernel whose layout needs more is placed in **dynamic** shared memory
//! ([`Placement::Dynamic`]): the same offsets, relative to one
//! `.extern .shared .align 128` array whose size the launch gives, up to
//! the target's opt-in maximum ([`crate::target::Target::max_shared_per_block`]); its
//! static shared memory is then 0 bytes.
//!
//! A swizzled array (`swizzle(128)`, [`super::Swizzle`]) is aligned to its
//! swizzle's repeat (1024, 512 or 256 bytes) and takes a multiple of it.
//! With two alignments the bytes ptxas allocates for static variables would
//! depend on the order it picks, so a kernel with a swizzled array is
//! always placed in dynamic shared memory, whose offsets kdslc alone
//! decides; its `.extern .shared` array is then aligned to the largest
//! repeat ([`SharedLayout::align`]).
//!
//! Parameters are packed in order at their natural alignment (a tensor
//! map's 128 bytes at 128).
//!
//! All byte arithmetic is checked: a size that does not fit in 64 bits is
//! `None`, never a wrapped small number.

use super::tensor::TensorMap;
use super::{BarrierId, Kernel, ParamType, SharedId};
use crate::target::PtxVersion;
use crate::types::Scalar;

/// Static shared memory per CTA: 48 KiB (`ptxas`: "0xc000 max"). Past it a
/// kernel's shared memory is dynamic ([`Placement::Dynamic`]).
pub const SHARED_LIMIT: u64 = 48 * 1024;
/// The alignment of the `.extern .shared` array a dynamic layout lives in:
/// that of the arrays in it, so every offset keeps its alignment (more
/// for a kernel with a swizzled array: [`SharedLayout::align`]).
pub const DYNAMIC_ALIGN: u64 = ARRAY_ALIGN;
/// Every shared array is 128-byte aligned.
pub const ARRAY_ALIGN: u64 = 128;
/// An mbarrier is 8 bytes, 8-byte aligned.
pub const BARRIER_BYTES: u64 = 8;

/// The kernel parameter space up to PTX ISA 8.0 (ptxas: "0x1100 max").
pub const PARAM_LIMIT_CLASSIC: u64 = 4352;
/// The kernel parameter space from PTX ISA 8.1 on, for every target kdsl
/// supports (CUDA 12.1's "large kernel parameters"; ptxas: "0x7ffc max").
pub const PARAM_LIMIT_LARGE: u64 = 32764;
/// The PTX ISA version that allows [`PARAM_LIMIT_LARGE`].
pub const LARGE_PARAMS_VERSION: PtxVersion = PtxVersion::new(8, 1);

/// Where a kernel's shared memory is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// `.shared` variables inside the `.entry`: at most [`SHARED_LIMIT`].
    Static,
    /// Offsets into the module's `.extern .shared` array; the launch gives
    /// [`SharedLayout::dynamic_bytes`] and opts in past 48 KiB.
    Dynamic,
}

/// One `.shared` variable of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedDecl {
    Array(SharedId),
    /// A barrier group: `count` mbarriers in one `.b64` array.
    Barriers(BarrierId),
}

/// Where one `.shared` variable goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedSlot {
    pub decl: SharedDecl,
    /// Byte offset from the start of the kernel's shared memory; `None`
    /// once the total no longer fits in 64 bits.
    pub offset: Option<u64>,
    /// Its size in bytes (`None`: more than 64 bits can count).
    pub size: Option<u64>,
    pub align: u64,
}

impl SharedSlot {
    /// The first byte after it (`None` past 64 bits).
    pub fn end(&self) -> Option<u64> {
        self.offset?.checked_add(self.size?)
    }
}

/// A kernel's static shared memory: the barrier groups first, in
/// declaration order, 8 bytes per barrier, then the shared arrays in
/// declaration order, each 128-byte aligned and taking a multiple of 128
/// bytes (see the module documentation for why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedLayout {
    pub slots: Vec<SharedSlot>,
    /// The bytes used, padding included (`None`: more than 64 bits can count).
    pub total: Option<u64>,
}

impl SharedLayout {
    pub fn of(kernel: &Kernel) -> SharedLayout {
        // A group whose count failed to check (in a module with errors)
        // has no size to place.
        let barriers = kernel.barriers.iter().enumerate();
        let barriers = barriers.filter(|(_, b)| !b.failed.count).map(|(i, b)| {
            let decl = SharedDecl::Barriers(BarrierId(i as u32));
            let bytes = BARRIER_BYTES.checked_mul(u64::from(b.count.max(1)));
            (decl, bytes, BARRIER_BYTES)
        });
        let arrays = kernel.shared.iter().enumerate().map(|(i, a)| {
            let decl = SharedDecl::Array(SharedId(i as u32));
            let align = a.swizzle.align();
            let bytes = array_bytes(a.elem, &a.dims).and_then(|b| align_up(b, align));
            (decl, bytes, align)
        });
        SharedLayout::place(barriers.chain(arrays))
    }

    /// Places variables in the given order, each at the next offset its
    /// alignment (a power of two) allows.
    pub fn place(decls: impl IntoIterator<Item = (SharedDecl, Option<u64>, u64)>) -> SharedLayout {
        let mut slots = Vec::new();
        let mut next = Some(0u64);
        for (decl, size, align) in decls {
            let offset = next.and_then(|n| align_up(n, align));
            let slot = SharedSlot {
                decl,
                offset,
                size,
                align,
            };
            next = slot.end();
            slots.push(slot);
        }
        SharedLayout { slots, total: next }
    }

    /// Static up to [`SHARED_LIMIT`] bytes, dynamic past it (or when the
    /// total does not even fit 64 bits: the checker reports that, E0122),
    /// and dynamic whatever its size when a declaration is aligned past
    /// [`ARRAY_ALIGN`] (a swizzled array: see the module documentation).
    pub fn placement(&self) -> Placement {
        match self.total {
            Some(total) if total <= SHARED_LIMIT && self.align() <= ARRAY_ALIGN => {
                Placement::Static
            }
            _ => Placement::Dynamic,
        }
    }

    /// The largest alignment of its declarations, at least
    /// [`DYNAMIC_ALIGN`]: what the dynamic shared memory must be aligned
    /// to.
    pub fn align(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.align)
            .fold(DYNAMIC_ALIGN, u64::max)
    }

    /// The static shared memory ptxas allocates (`ptxas -v`'s `smem`):
    /// the whole layout when it is static, else nothing.
    pub fn static_bytes(&self) -> u64 {
        match self.placement() {
            Placement::Static => self.total.unwrap_or(0),
            Placement::Dynamic => 0,
        }
    }

    /// The dynamic shared memory every launch must give (`sharedMemBytes`):
    /// the whole layout when it is dynamic, else nothing (saturating at
    /// `u64::MAX` past 64 bits, which no target allows).
    pub fn dynamic_bytes(&self) -> u64 {
        match self.placement() {
            Placement::Static => 0,
            Placement::Dynamic => self.total.unwrap_or(u64::MAX),
        }
    }

    /// Whether a launch must opt in to more than 48 KiB
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): when the layout
    /// is dynamic and larger than that.
    pub fn needs_opt_in(&self) -> bool {
        self.placement() == Placement::Dynamic && self.dynamic_bytes() > SHARED_LIMIT
    }

    /// The first variable that ends past `limit` bytes: the one to blame
    /// when the kernel does not fit.
    pub fn first_over(&self, limit: u64) -> Option<&SharedSlot> {
        self.slots
            .iter()
            .find(|s| s.end().is_none_or(|end| end > limit))
    }
}

/// `n` rounded up to a multiple of `align` (a power of two); `None` past
/// 64 bits.
fn align_up(n: u64, align: u64) -> Option<u64> {
    let mask = align.max(1) - 1;
    n.checked_add(mask).map(|n| n & !mask)
}

/// The bytes of a shared array of `elem` with these dimensions.
pub fn array_bytes(elem: Scalar, dims: &[u64]) -> Option<u64> {
    dims.iter()
        .try_fold(u64::from(elem.size()), |acc, &d| acc.checked_mul(d))
}

/// One kernel parameter as passed: its `.param` size.
pub fn param_size(ty: ParamType) -> u64 {
    match ty {
        // `bool` travels as a `.u32`, f16/bf16 as `.b16` (ptx::suffix).
        ParamType::Scalar(Scalar::Bool) => 4,
        ParamType::Scalar(s) => u64::from(s.size()),
        // A 64-bit device pointer.
        ParamType::Global { .. } => 8,
        // The map itself, by value (`__grid_constant__`).
        ParamType::Tensor(_) => TensorMap::BYTES,
    }
}

/// One kernel parameter's `.param` alignment: its size, except a tensor
/// map's (128 bytes, 128-aligned: [`TensorMap::ALIGN`]).
pub fn param_align(ty: ParamType) -> u64 {
    match ty {
        ParamType::Tensor(_) => TensorMap::ALIGN,
        other => param_size(other),
    }
}

/// A kernel's parameter space: each parameter at the next offset its size
/// (its alignment) allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// The byte offset of each parameter.
    pub offsets: Vec<u64>,
    /// The bytes used, padding included.
    pub total: u64,
}

impl ParamLayout {
    pub fn of(kernel: &Kernel) -> ParamLayout {
        ParamLayout::place_aligned(
            kernel
                .params
                .iter()
                .map(|p| (param_size(p.ty), param_align(p.ty))),
        )
    }

    /// Places parameters of these sizes (each its own alignment) in order.
    pub fn place(sizes: impl IntoIterator<Item = u64>) -> ParamLayout {
        ParamLayout::place_aligned(sizes.into_iter().map(|s| (s, s)))
    }

    /// Places parameters of these sizes and alignments in order.
    pub fn place_aligned(params: impl IntoIterator<Item = (u64, u64)>) -> ParamLayout {
        let mut offsets = Vec::new();
        let mut next = 0u64;
        for (size, align) in params {
            // Parameters are at most 128 bytes and a kernel has fewer than
            // 2^32 of them (spans are 32-bit): no overflow here, but
            // saturate rather than wrap all the same.
            let at = align_up(next, align).unwrap_or(u64::MAX);
            offsets.push(at);
            next = at.saturating_add(size);
        }
        ParamLayout {
            offsets,
            total: next,
        }
    }

    /// The PTX version these parameters need beyond the target's own floor
    /// (`None`: any version will do).
    pub fn version_needed(&self) -> Option<PtxVersion> {
        (self.total > PARAM_LIMIT_CLASSIC).then_some(LARGE_PARAMS_VERSION)
    }

    /// Like [`ParamLayout::version_needed`], or `Err(limit)` when no PTX
    /// version allows this much.
    pub fn needs(&self) -> Result<Option<PtxVersion>, u64> {
        if self.total <= PARAM_LIMIT_CLASSIC {
            Ok(None)
        } else if self.total <= PARAM_LIMIT_LARGE {
            Ok(Some(LARGE_PARAMS_VERSION))
        } else {
            Err(PARAM_LIMIT_LARGE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;

    fn arrays(sizes: &[Option<u64>]) -> SharedLayout {
        SharedLayout::place(
            sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| (SharedDecl::Array(SharedId(i as u32)), s, ARRAY_ALIGN)),
        )
    }

    #[test]
    fn arrays_are_aligned_and_padding_counts() {
        let l = arrays(&[Some(1), Some(200), Some(4)]);
        let offsets: Vec<Option<u64>> = l.slots.iter().map(|s| s.offset).collect();
        assert_eq!(offsets, [Some(0), Some(128), Some(384)]);
        assert_eq!(l.total, Some(388));
        assert_eq!(l.first_over(387).map(|s| s.offset), Some(Some(384)));
        assert!(l.first_over(388).is_none());
    }

    #[test]
    fn barriers_follow_at_eight_bytes() {
        let l = SharedLayout::place([
            (SharedDecl::Array(SharedId(0)), Some(49000), ARRAY_ALIGN),
            (SharedDecl::Barriers(BarrierId(0)), Some(8), BARRIER_BYTES),
            (SharedDecl::Barriers(BarrierId(1)), Some(16), BARRIER_BYTES),
        ]);
        assert_eq!(l.total, Some(49000 + 8 + 16));
    }

    #[test]
    fn sizes_past_64_bits_are_not_wrapped() {
        assert_eq!(
            array_bytes(Scalar::F64, &[u64::from(u32::MAX), u64::from(u32::MAX), 2]),
            None
        );
        assert_eq!(
            array_bytes(Scalar::F32, &[u64::from(u32::MAX), 2]),
            Some(4 * u64::from(u32::MAX) * 2)
        );
        let l = arrays(&[Some(u64::MAX - 10), Some(1)]);
        assert_eq!(l.total, None);
        assert_eq!(l.first_over(SHARED_LIMIT).map(|s| s.offset), Some(Some(0)));
        let l = arrays(&[None, Some(1)]);
        assert_eq!((l.total, l.slots[1].offset), (None, None));
    }

    #[test]
    fn static_up_to_48_kib_then_dynamic() {
        let at = arrays(&[Some(SHARED_LIMIT)]);
        assert_eq!(at.placement(), Placement::Static);
        assert_eq!((at.static_bytes(), at.dynamic_bytes()), (SHARED_LIMIT, 0));
        assert!(!at.needs_opt_in());
        let past = arrays(&[Some(SHARED_LIMIT), Some(1)]);
        assert_eq!(past.placement(), Placement::Dynamic);
        assert_eq!(
            (past.static_bytes(), past.dynamic_bytes()),
            (0, SHARED_LIMIT + 1)
        );
        assert!(past.needs_opt_in());
        let none = arrays(&[]);
        assert_eq!((none.placement(), none.total), (Placement::Static, Some(0)));
        let huge = arrays(&[None]);
        assert_eq!(huge.placement(), Placement::Dynamic);
        assert_eq!(huge.dynamic_bytes(), u64::MAX);
        assert!(huge
            .first_over(Target::Sm90.max_shared_per_block())
            .is_some());
    }

    #[test]
    fn each_target_has_its_opt_in_maximum() {
        for t in Target::ALL {
            let max = t.max_shared_per_block();
            assert!(arrays(&[Some(max)]).first_over(max).is_none(), "{t}");
            let past = arrays(&[Some(max), Some(1)]);
            assert_eq!(
                past.first_over(max).and_then(|s| s.offset),
                Some(max),
                "{t}"
            );
        }
        assert_eq!(Target::Sm80.max_shared_per_block(), 166_912);
        assert_eq!(Target::Sm86.max_shared_per_block(), 101_376);
        assert_eq!(Target::Sm90.max_shared_per_block(), 232_448);
        assert_eq!(Target::Sm120.max_shared_per_block(), 101_376);
    }

    #[test]
    fn parameters_are_naturally_aligned() {
        let l = ParamLayout::place([2, 8, 4, 2, 8]);
        assert_eq!(l.offsets, [0, 8, 16, 20, 24]);
        assert_eq!(l.total, 32);
        assert_eq!(ParamLayout::place([4; 1088]).needs(), Ok(None));
        assert_eq!(
            ParamLayout::place([4; 1089]).needs(),
            Ok(Some(LARGE_PARAMS_VERSION))
        );
        assert_eq!(
            ParamLayout::place([4; 8191]).needs(),
            Ok(Some(LARGE_PARAMS_VERSION))
        );
        assert_eq!(
            ParamLayout::place([4; 8192]).needs(),
            Err(PARAM_LIMIT_LARGE)
        );
    }
}
