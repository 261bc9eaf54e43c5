//! Tensor data on Hopper: the swizzle of a shared array and the tensor map
//! of a `tensor [T; box]` parameter. One definition of each, which the
//! checker (shapes, E0400–E0405), the layout (alignment to the swizzle's
//! repeat), the PTX writer (element addresses, the `.param` of a map), the
//! manifest (the fields host code passes to `cuTensorMapEncodeTiled`) and
//! the tests' references all read (`docs/language.md` §15).

use crate::types::Scalar;

/// The swizzle of a shared array (`swizzle(128)`), written once on its
/// declaration: the tensor maps that copy into or out of it, and every
/// element access, follow from it.
///
/// PTX ISA §5.5.7 "Swizzling Modes": the rows of a swizzled array are one
/// span (32, 64 or 128 bytes), and the pattern repeats every 8 rows (256,
/// 512, 1024 bytes). Within it, the 16-byte chunk `c` of 128-byte line `l`
/// (bits 4-6 and 7-9 of the address) is stored at chunk
/// `c ^ (l mod (span / 16))`: as a function of the absolute shared address
/// `a` (CuTe's `Swizzle<B, 4, 3>`), `a ^ (((a >> 7) & (span / 16 - 1)) << 4)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Swizzle {
    /// No clause: the array is row-major, as every shared array is.
    #[default]
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    pub const ALL: [Swizzle; 4] = [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128];

    /// `swizzle(32)`, `swizzle(64)`, `swizzle(128)`.
    pub fn from_bytes(bytes: i128) -> Option<Swizzle> {
        Some(match bytes {
            32 => Swizzle::B32,
            64 => Swizzle::B64,
            128 => Swizzle::B128,
            _ => return None,
        })
    }

    /// The span in bytes: the length of a row (0 for [`Swizzle::None`]).
    pub fn span(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The bytes after which the pattern repeats: 8 rows of the span
    /// (256, 512, 1024); an array, and every stage of it, starts on one.
    /// 16 for [`Swizzle::None`] (a tensor copy's alignment).
    pub fn repeat(self) -> u64 {
        match self {
            Swizzle::None => 16,
            other => other.span() * 8,
        }
    }

    /// The shared array's alignment: its repeat, and at least the 128
    /// bytes of every shared array.
    pub fn align(self) -> u64 {
        self.repeat().max(super::layout::ARRAY_ALIGN)
    }

    /// The bits of an address that [`Swizzle::apply`] XORs into bits 4-6:
    /// `(a >> 3) & mask` is `((a >> 7) & (span / 16 - 1)) << 4`.
    pub fn mask(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 0x10,
            Swizzle::B64 => 0x30,
            Swizzle::B128 => 0x70,
        }
    }

    /// The address an element at (unswizzled) shared address `a` is
    /// stored at.
    pub fn apply(self, a: u32) -> u32 {
        a ^ ((a >> 3) & self.mask())
    }

    /// The clause's argument, for messages (`128`), or `none`.
    pub fn name(self) -> &'static str {
        match self {
            Swizzle::None => "none",
            Swizzle::B32 => "32",
            Swizzle::B64 => "64",
            Swizzle::B128 => "128",
        }
    }

    /// `CU_TENSOR_MAP_SWIZZLE_*`.
    pub fn cuda_name(self) -> &'static str {
        match self {
            Swizzle::None => "CU_TENSOR_MAP_SWIZZLE_NONE",
            Swizzle::B32 => "CU_TENSOR_MAP_SWIZZLE_32B",
            Swizzle::B64 => "CU_TENSOR_MAP_SWIZZLE_64B",
            Swizzle::B128 => "CU_TENSOR_MAP_SWIZZLE_128B",
        }
    }
}

/// What a tensor copy reads for the elements of its box outside the
/// tensor: `fill(zero)` (the default) or `fill(nan)` (floats only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OobFill {
    #[default]
    Zero,
    Nan,
}

impl OobFill {
    pub fn name(self) -> &'static str {
        match self {
            OobFill::Zero => "zero",
            OobFill::Nan => "nan",
        }
    }

    /// `CU_TENSOR_MAP_FLOAT_OOB_FILL_*`.
    pub fn cuda_name(self) -> &'static str {
        match self {
            OobFill::Zero => "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
            OobFill::Nan => "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA",
        }
    }
}

/// `l2(0 | 64 | 128 | 256)`: how far a tensor copy's L2 requests are
/// widened (`CU_TENSOR_MAP_L2_PROMOTION_*`); 256 by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum L2Promotion {
    None,
    B64,
    B128,
    #[default]
    B256,
}

impl L2Promotion {
    pub fn from_bytes(bytes: i128) -> Option<L2Promotion> {
        Some(match bytes {
            0 => L2Promotion::None,
            64 => L2Promotion::B64,
            128 => L2Promotion::B128,
            256 => L2Promotion::B256,
            _ => return None,
        })
    }

    pub fn bytes(self) -> u32 {
        match self {
            L2Promotion::None => 0,
            L2Promotion::B64 => 64,
            L2Promotion::B128 => 128,
            L2Promotion::B256 => 256,
        }
    }

    pub fn cuda_name(self) -> &'static str {
        match self {
            L2Promotion::None => "CU_TENSOR_MAP_L2_PROMOTION_NONE",
            L2Promotion::B64 => "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
            L2Promotion::B128 => "CU_TENSOR_MAP_L2_PROMOTION_L2_128B",
            L2Promotion::B256 => "CU_TENSOR_MAP_L2_PROMOTION_L2_256B",
        }
    }
}

/// A tensor-map kernel parameter, `a: tensor [bf16; 128, 64]`: everything
/// about its map that is known at compile time. The host supplies the
/// rest (the global address, dimensions and strides) when it encodes the
/// map; the kernel receives the map's 128 bytes by value
/// (`.param .align 128 .b8 a[128]`, CUDA's `__grid_constant__`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMap {
    pub elem: Scalar,
    /// The box, outermost first; the first `rank` entries.
    box_dims: [u32; TensorMap::MAX_RANK],
    rank: u8,
    /// `tensor mut`: tensor stores and reductions may write through it.
    pub mutable: bool,
    pub fill: OobFill,
    pub l2: L2Promotion,
    /// The swizzle of the shared arrays it is copied to and from (a map
    /// has one): found by the checker from its copies (E0404), `None`
    /// when it has none.
    pub swizzle: Swizzle,
}

impl TensorMap {
    /// Tensor maps have rank 1 to 5 (`cuTensorMapEncodeTiled`; PTX's
    /// `.1d`–`.5d`).
    pub const MAX_RANK: usize = 5;
    /// The largest box dimension.
    pub const MAX_BOX: u32 = 256;
    /// The bytes of a tensor map (`CUtensorMap`), and its `.param`
    /// alignment: `cuda.h` 13.5 declares `CUtensorMap` `alignas(128)` and
    /// nvcc 13.5 a `__grid_constant__ CUtensorMap` parameter
    /// `.param .align 128 .b8 p[128]` (the driver needs 64).
    pub const BYTES: u64 = 128;
    pub const ALIGN: u64 = 128;

    /// A map with this box (outermost first, 1 to [`TensorMap::MAX_RANK`]
    /// dimensions: `None` otherwise), no swizzle until its copies give one.
    pub fn new(
        elem: Scalar,
        dims: &[u32],
        mutable: bool,
        fill: OobFill,
        l2: L2Promotion,
    ) -> Option<TensorMap> {
        if dims.is_empty() || dims.len() > TensorMap::MAX_RANK {
            return None;
        }
        let mut box_dims = [1; TensorMap::MAX_RANK];
        for (d, s) in box_dims.iter_mut().zip(dims) {
            *d = *s;
        }
        Some(TensorMap {
            elem,
            box_dims,
            rank: dims.len() as u8,
            mutable,
            fill,
            l2,
            swizzle: Swizzle::None,
        })
    }

    /// The box, outermost first.
    pub fn box_dims(&self) -> &[u32] {
        self.box_dims.get(..self.rank as usize).unwrap_or(&[])
    }

    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// The bytes one copy of the box moves (what it completes on its
    /// barrier).
    pub fn box_bytes(&self) -> u64 {
        self.box_dims()
            .iter()
            .fold(u64::from(self.elem.size()), |b, &d| b * u64::from(d))
    }

    /// The bytes of the innermost box dimension (a multiple of 16, E0405).
    pub fn inner_bytes(&self) -> u64 {
        self.box_dims()
            .last()
            .map_or(0, |&d| u64::from(d) * u64::from(self.elem.size()))
    }

    /// `CU_TENSOR_MAP_DATA_TYPE_*` of an element type: fp8 and `i8` are
    /// bytes (`UINT8`), `i16` 16-bit (`UINT16`); `None` for `bool`, which a
    /// tensor map cannot hold (E0400), nor for the packed pairs.
    pub fn data_type(elem: Scalar) -> Option<&'static str> {
        Some(match elem {
            Scalar::U8 | Scalar::I8 | Scalar::E4M3 | Scalar::E5M2 => {
                "CU_TENSOR_MAP_DATA_TYPE_UINT8"
            }
            Scalar::U16 | Scalar::I16 => "CU_TENSOR_MAP_DATA_TYPE_UINT16",
            Scalar::U32 => "CU_TENSOR_MAP_DATA_TYPE_UINT32",
            Scalar::I32 => "CU_TENSOR_MAP_DATA_TYPE_INT32",
            Scalar::U64 => "CU_TENSOR_MAP_DATA_TYPE_UINT64",
            Scalar::I64 => "CU_TENSOR_MAP_DATA_TYPE_INT64",
            Scalar::F16 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
            Scalar::BF16 => "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
            Scalar::F32 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
            Scalar::F64 => "CU_TENSOR_MAP_DATA_TYPE_FLOAT64",
            Scalar::TF32 => "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32",
            Scalar::Bool | Scalar::F16x2 | Scalar::BF16x2 => return None,
        })
    }

    /// Whether `fill(nan)` is allowed: the driver fills NaN only for float
    /// data types (fp8 maps are bytes).
    pub fn nan_fill_allowed(elem: Scalar) -> bool {
        matches!(
            elem,
            Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 | Scalar::TF32
        )
    }

    /// The kdsl type as written: `tensor mut [bf16; 128, 64] fill(nan)`
    /// (the clauses that are not the defaults).
    pub fn type_text(&self) -> String {
        let dims: Vec<String> = self.box_dims().iter().map(u32::to_string).collect();
        let mut t = format!(
            "tensor {}[{}; {}]",
            if self.mutable { "mut " } else { "" },
            self.elem,
            dims.join(", ")
        );
        if self.fill != OobFill::default() {
            t.push_str(&format!(" fill({})", self.fill.name()));
        }
        if self.l2 != L2Promotion::default() {
            t.push_str(&format!(" l2({})", self.l2.bytes()));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ISA's table for 128B (§5.5.7): row r of a repeat permutes its
    /// chunk c to c ^ r.
    #[test]
    fn swizzles_permute_chunks_within_their_repeat() {
        for s in [Swizzle::B32, Swizzle::B64, Swizzle::B128] {
            let rows_per_phase = s.span() / 16;
            for a in 0..(s.repeat() as u32 * 2) {
                let (row, chunk, byte) = (a / 128, (a / 16) % 8, a % 16);
                let want_chunk = chunk ^ (row % rows_per_phase as u32);
                assert_eq!(
                    s.apply(a),
                    (a & !0x7f) | (want_chunk << 4) | byte,
                    "{s:?} {a}"
                );
            }
            // A permutation of each repeat.
            let mut seen: Vec<u32> = (0..s.repeat() as u32).map(|a| s.apply(a)).collect();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..s.repeat() as u32));
            assert_eq!(s.align(), s.repeat().max(128));
        }
        assert_eq!(Swizzle::None.apply(12345), 12345);
        assert_eq!(Swizzle::B128.apply(0x80), 0x90);
        assert_eq!(Swizzle::B64.apply(0x180), 0x1b0);
        assert_eq!(Swizzle::B32.apply(0x80), 0x90);
        assert_eq!(Swizzle::B32.apply(0x100), 0x100);
    }

    #[test]
    fn maps_know_their_box() {
        let m = TensorMap::new(
            Scalar::BF16,
            &[128, 64],
            false,
            OobFill::Zero,
            L2Promotion::B256,
        )
        .unwrap();
        assert_eq!((m.rank(), m.box_dims()), (2, &[128, 64][..]));
        assert_eq!((m.box_bytes(), m.inner_bytes()), (16384, 128));
        assert_eq!(m.type_text(), "tensor [bf16; 128, 64]");
        assert!(TensorMap::new(Scalar::U8, &[], false, OobFill::Zero, L2Promotion::B256).is_none());
        assert!(
            TensorMap::new(Scalar::U8, &[1; 6], false, OobFill::Zero, L2Promotion::B256).is_none()
        );
        let n = TensorMap::new(Scalar::F32, &[8], true, OobFill::Nan, L2Promotion::None).unwrap();
        assert_eq!(n.type_text(), "tensor mut [f32; 8] fill(nan) l2(0)");
        assert_eq!(
            TensorMap::data_type(Scalar::E4M3),
            TensorMap::data_type(Scalar::U8)
        );
        assert_eq!(TensorMap::data_type(Scalar::Bool), None);
    }
}
