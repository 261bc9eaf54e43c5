//! Tensor-map arguments: the element types, swizzles and fills of a map,
//! the `tmap:` form of a `.ptx` input's map parameter, and the rules of
//! `cuTensorMapEncodeTiled` (cuda.h 13.5), checked with a named message
//! before any executor sees the map.
//!
//! A map has compile-time fields (a kdsl tensor parameter's, or the
//! `tmap:` form's: [`TensorMapSig`]) and run-time ones the host supplies:
//! the array, its dimensions and its byte strides, outermost first
//! ([`super::ArgValue::TensorMap`]). `kdslc sim` writes its own 128-byte
//! encoding of the map (`sim::tmap`); `kdslc run` has the driver encode
//! it (`driver::run`).

use super::{literal, value, Array};
use crate::fp8::Fp8;
use crate::types::Scalar;

/// The element type of a tensor map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorElem {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    BF16,
    F32,
    TF32,
    F64,
    E4M3,
    E5M2,
}

impl TensorElem {
    pub const ALL: [TensorElem; 15] = [
        TensorElem::U8,
        TensorElem::I8,
        TensorElem::U16,
        TensorElem::I16,
        TensorElem::U32,
        TensorElem::I32,
        TensorElem::U64,
        TensorElem::I64,
        TensorElem::F16,
        TensorElem::BF16,
        TensorElem::F32,
        TensorElem::TF32,
        TensorElem::F64,
        TensorElem::E4M3,
        TensorElem::E5M2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TensorElem::U8 => "u8",
            TensorElem::I8 => "i8",
            TensorElem::U16 => "u16",
            TensorElem::I16 => "i16",
            TensorElem::U32 => "u32",
            TensorElem::I32 => "i32",
            TensorElem::U64 => "u64",
            TensorElem::I64 => "i64",
            TensorElem::F16 => "f16",
            TensorElem::BF16 => "bf16",
            TensorElem::F32 => "f32",
            TensorElem::TF32 => "tf32",
            TensorElem::F64 => "f64",
            TensorElem::E4M3 => "e4m3",
            TensorElem::E5M2 => "e5m2",
        }
    }

    pub fn from_name(name: &str) -> Option<TensorElem> {
        TensorElem::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Bytes per element.
    pub fn size(self) -> u32 {
        self.storage().size()
    }

    /// How the elements are stored in an [`Array`]: the scalar type of
    /// the same bits (`tf32` as `f32`, the 8-bit floats as their bits,
    /// `u8`).
    pub fn storage(self) -> Scalar {
        match self {
            TensorElem::U8 | TensorElem::E4M3 | TensorElem::E5M2 => Scalar::U8,
            TensorElem::I8 => Scalar::I8,
            TensorElem::U16 => Scalar::U16,
            TensorElem::I16 => Scalar::I16,
            TensorElem::U32 => Scalar::U32,
            TensorElem::I32 => Scalar::I32,
            TensorElem::U64 => Scalar::U64,
            TensorElem::I64 => Scalar::I64,
            TensorElem::F16 => Scalar::F16,
            TensorElem::BF16 => Scalar::BF16,
            TensorElem::F32 | TensorElem::TF32 => Scalar::F32,
            TensorElem::F64 => Scalar::F64,
        }
    }

    /// The 8-bit float format, for `e4m3`/`e5m2`.
    pub fn fp8(self) -> Option<Fp8> {
        match self {
            TensorElem::E4M3 => Some(Fp8::E4M3),
            TensorElem::E5M2 => Some(Fp8::E5M2),
            _ => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            TensorElem::F16
                | TensorElem::BF16
                | TensorElem::F32
                | TensorElem::TF32
                | TensorElem::F64
                | TensorElem::E4M3
                | TensorElem::E5M2
        )
    }

    /// The `CUtensorMapDataType` the driver is given. cuda.h has no signed
    /// 8- and 16-bit types and no 8-bit floats: those move as unsigned
    /// bytes of the same size, as CUTLASS does.
    pub fn cuda_type(self) -> (u32, &'static str) {
        match self {
            TensorElem::U8 | TensorElem::I8 | TensorElem::E4M3 | TensorElem::E5M2 => {
                (0, "CU_TENSOR_MAP_DATA_TYPE_UINT8")
            }
            TensorElem::U16 | TensorElem::I16 => (1, "CU_TENSOR_MAP_DATA_TYPE_UINT16"),
            TensorElem::U32 => (2, "CU_TENSOR_MAP_DATA_TYPE_UINT32"),
            TensorElem::I32 => (3, "CU_TENSOR_MAP_DATA_TYPE_INT32"),
            TensorElem::U64 => (4, "CU_TENSOR_MAP_DATA_TYPE_UINT64"),
            TensorElem::I64 => (5, "CU_TENSOR_MAP_DATA_TYPE_INT64"),
            TensorElem::F16 => (6, "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"),
            TensorElem::F32 => (7, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"),
            TensorElem::F64 => (8, "CU_TENSOR_MAP_DATA_TYPE_FLOAT64"),
            TensorElem::BF16 => (9, "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"),
            TensorElem::TF32 => (11, "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32"),
        }
    }
}

impl std::fmt::Display for TensorElem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a tensor copy permutes the 16-byte chunks of shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The span in bytes (0 for none).
    pub fn bytes(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The span in 16-byte chunks (1 for none): the `W` of `hopper.md` §3.3.
    pub fn chunks(self) -> u64 {
        u64::from(self.bytes().max(16) / 16)
    }

    /// The swizzled byte address: bits 4.. of `addr` XOR bits 7.. (as many
    /// bits as the span has chunks, `log2 W`), PTX ISA §5.5.7; a function
    /// of the absolute shared address.
    #[inline]
    pub fn apply(self, addr: u64) -> u64 {
        let w = self.chunks();
        addr ^ (((addr >> 7) & (w - 1)) << 4)
    }

    /// The pattern's repeat in bytes (256, 512, 1024; 16 for none).
    pub fn repeat(self) -> u64 {
        self.chunks() * 128
    }

    pub fn cuda_name(self) -> (u32, &'static str) {
        match self {
            Swizzle::None => (0, "CU_TENSOR_MAP_SWIZZLE_NONE"),
            Swizzle::B32 => (1, "CU_TENSOR_MAP_SWIZZLE_32B"),
            Swizzle::B64 => (2, "CU_TENSOR_MAP_SWIZZLE_64B"),
            Swizzle::B128 => (3, "CU_TENSOR_MAP_SWIZZLE_128B"),
        }
    }

    fn from_text(text: &str) -> Option<Swizzle> {
        Some(match text {
            "none" | "0" => Swizzle::None,
            "32" => Swizzle::B32,
            "64" => Swizzle::B64,
            "128" => Swizzle::B128,
            _ => return None,
        })
    }
}

/// What a tensor load writes for the elements of its box outside the
/// tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OobFill {
    Zero,
    /// The element type's NaN (float types only).
    Nan,
}

impl OobFill {
    pub fn cuda_name(self) -> (u32, &'static str) {
        match self {
            OobFill::Zero => (0, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"),
            OobFill::Nan => (1, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"),
        }
    }
}

/// `CUtensorMapL2promotion` of an L2 promotion in bytes (0, 64, 128, 256).
pub fn l2_cuda_name(bytes: u16) -> (u32, &'static str) {
    match bytes {
        64 => (1, "CU_TENSOR_MAP_L2_PROMOTION_L2_64B"),
        128 => (2, "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"),
        256 => (3, "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"),
        _ => (0, "CU_TENSOR_MAP_L2_PROMOTION_NONE"),
    }
}

/// The compile-time fields of a tensor map: what a kdsl tensor parameter
/// declares, or a `.ptx` input's `tmap:` form gives. Plain data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapSig {
    pub elem: TensorElem,
    /// 1..=5.
    pub rank: u8,
    /// The box, outermost first; the first `rank` are used (the rest 0).
    pub box_dims: [u32; 5],
    pub swizzle: Swizzle,
    pub fill: OobFill,
    /// 0, 64, 128 or 256 bytes.
    pub l2_promotion: u16,
    /// Tensor stores and reductions write through the map (kdsl `tensor
    /// mut`); the array is written back by `--out`.
    pub writable: bool,
}

impl TensorMapSig {
    /// The box, outermost first.
    pub fn boxes(&self) -> &[u32] {
        self.box_dims
            .get(..usize::from(self.rank))
            .unwrap_or(&self.box_dims)
    }

    /// Bytes of one box (what a load's complete-tx counts).
    pub fn box_bytes(&self) -> u64 {
        self.boxes().iter().map(|&b| u64::from(b)).product::<u64>() * u64::from(self.elem.size())
    }

    /// `bf16 box 128x64 swizzle 128`.
    pub fn describe(&self) -> String {
        let dims: Vec<String> = self.boxes().iter().map(u32::to_string).collect();
        let mut s = format!("{} box {}", self.elem, dims.join("x"));
        if self.swizzle != Swizzle::None {
            s.push_str(&format!(" swizzle {}", self.swizzle.bytes()));
        }
        if self.fill == OobFill::Nan {
            s.push_str(" fill nan");
        }
        s
    }
}

/// Dense row-major byte strides of `dims` (outermost first): one per
/// dimension but the innermost.
pub fn dense_strides(dims: &[u64], elem: TensorElem) -> Vec<u64> {
    let mut strides = Vec::new();
    let mut s = u64::from(elem.size());
    for d in dims.iter().skip(1).rev() {
        s = s.saturating_mul(*d);
        strides.push(s);
    }
    strides.reverse();
    strides
}

/// Checks a map against the rules of `cuTensorMapEncodeTiled` (cuda.h
/// 13.5), each broken one with its name, and that the tensor lies inside
/// its array. `dims` and `strides` are outermost first, as everywhere in
/// kdsl (cuda.h takes them innermost first).
pub fn check_encode(
    map: &TensorMapSig,
    dims: &[u64],
    strides: &[u64],
    array_bytes: u64,
) -> Result<(), String> {
    let rank = usize::from(map.rank);
    if !(1..=5).contains(&rank) {
        return Err(format!(
            "tensorRank: a tensor map has 1 to 5 dimensions, not {rank}"
        ));
    }
    if dims.len() != rank {
        return Err(format!(
            "globalDim: the map has rank {rank} but the array's shape {} has {}",
            shape_text(dims),
            crate::diagnostics::plural(dims.len(), "dimension")
        ));
    }
    if strides.len() + 1 != rank {
        return Err(format!(
            "globalStrides: a rank-{rank} map takes {} strides, not {}",
            rank - 1,
            strides.len()
        ));
    }
    for (i, &d) in dims.iter().enumerate() {
        if d == 0 || d > 1 << 31 {
            return Err(format!(
                "globalDim: dimension {i} of the tensor is {d}; each must be 1 to 2^31"
            ));
        }
    }
    let es = u64::from(map.elem.size());
    for (i, &s) in strides.iter().enumerate() {
        if s % 16 != 0 || s >= 1 << 40 {
            return Err(format!(
                "globalStrides: the stride of dimension {i} is {s} bytes; each must be a multiple of 16 below 2^40 (the innermost dimension of a dense tensor must take a multiple of 16 bytes: {} elements of {})",
                16 / es.max(1),
                map.elem
            ));
        }
    }
    for (i, &b) in map.boxes().iter().enumerate() {
        if b == 0 || b > 256 {
            return Err(format!(
                "boxDim: dimension {i} of the box is {b}; each must be 1 to 256"
            ));
        }
    }
    let inner = u64::from(map.boxes().last().copied().unwrap_or(0)) * es;
    if inner % 16 != 0 {
        return Err(format!(
            "boxDim: the box's innermost dimension takes {inner} bytes; it must take a multiple of 16"
        ));
    }
    if map.swizzle != Swizzle::None && inner > u64::from(map.swizzle.bytes()) {
        return Err(format!(
            "swizzle: the box's innermost dimension takes {inner} bytes, more than the {}-byte swizzle span",
            map.swizzle.bytes()
        ));
    }
    if map.fill == OobFill::Nan && !map.elem.is_float() {
        return Err(format!(
            "oobFill: a NaN fill needs a float element type, and {} is not one",
            map.elem
        ));
    }
    if !matches!(map.l2_promotion, 0 | 64 | 128 | 256) {
        return Err(format!(
            "l2Promotion: {} bytes; it must be 0, 64, 128 or 256",
            map.l2_promotion
        ));
    }
    // The last byte the map can address must be inside the array.
    let mut last = es;
    for (i, &d) in dims.iter().enumerate() {
        let stride = if i + 1 == rank {
            es
        } else {
            strides.get(i).copied().unwrap_or(0)
        };
        last = last.saturating_add((d - 1).saturating_mul(stride));
    }
    if last > array_bytes {
        return Err(format!(
            "the tensor ({} with strides {}) reaches byte {last}, past the array's {array_bytes} bytes",
            shape_text(dims),
            shape_text(strides)
        ));
    }
    Ok(())
}

/// `[512, 256]`.
pub fn shape_text(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// The elements of an array form for a tensor of `elem`, with the array's
/// shape: `value::array` for the types an [`Array`] stores as themselves;
/// the 8-bit floats from their values (generated forms and lists), or from
/// their bits (files).
pub fn tensor_array(name: &str, elem: TensorElem, text: &str) -> Result<(Array, Vec<u64>), String> {
    let storage = elem.storage();
    let (data, shape) = match elem.fp8() {
        Some(f) => fp8_array(f, text)?,
        None => value::array_shaped(storage, text, npy_accepts(elem))?,
    };
    Ok((
        Array {
            name: name.to_string(),
            elem: storage,
            data,
            writable: false,
        },
        shape,
    ))
}

/// The `.npy` dtypes a tensor's file may have besides its storage type's:
/// the named dtypes of ml_dtypes, which NumPy saves as raw bytes
/// (`bfloat16` as `<V2`, `float8_e4m3fn` as `<V1`, `float8_e5m2` as
/// `<f1`).
pub fn npy_accepts(elem: TensorElem) -> &'static [&'static str] {
    match elem {
        TensorElem::BF16 => &["<V2", "|V2"],
        TensorElem::E4M3 => &["<V1", "|V1"],
        TensorElem::E5M2 => &["<f1", "|f1", "<V1", "|V1"],
        _ => &[],
    }
}

/// An 8-bit float array: a file holds the bits (`u8` or the ml_dtypes
/// dtypes); the other forms give values, rounded to the format.
fn fp8_array(f: Fp8, text: &str) -> Result<(Vec<u8>, Vec<u64>), String> {
    let elem = match f {
        Fp8::E4M3 => TensorElem::E4M3,
        Fp8::E5M2 => TensorElem::E5M2,
    };
    let t = text.trim();
    if t.starts_with('@') {
        return value::array_shaped(Scalar::U8, t, npy_accepts(elem));
    }
    if t.starts_with("rand:") {
        // Random bytes, each made a value k/2 for k in 0..8 (exact in
        // both formats): `super::random`'s table.
        let (bytes, shape) = value::array_shaped(Scalar::U8, t, &[])?;
        let out = bytes
            .iter()
            .map(|b| f.encode(f64::from(b >> 5) * 0.5, false))
            .collect();
        return Ok((out, shape));
    }
    // The values as f64 (an f64 array form), then rounded.
    let (wide, shape) = value::array_shaped(Scalar::F64, t, &[])?;
    let mut out = Vec::new();
    out.try_reserve_exact(wide.len() / 8)
        .map_err(|_| "the array does not fit in memory".to_string())?;
    for c in wide.chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = f64::from_le_bytes(w);
        if x.is_finite() && x.abs() > f.max() {
            return Err(format!(
                "{x} is beyond the largest finite {elem} value, {}",
                f.max()
            ));
        }
        out.push(f.encode(x, false));
    }
    Ok((out, shape))
}

/// A parsed `tmap:` form: the array, its shape, the map.
pub type Tmap = (Array, Vec<u64>, TensorMapSig);

/// `tmap:TYPE:ARRAY:box=B0,B1[,...][:swizzle=none|32|64|128][:fill=zero|nan][:l2=0|64|128|256]`:
/// a map for a `.ptx` input's parameter (by value or by pointer). `None`
/// when `text` is not of that form.
pub fn parse_tmap(name: &str, text: &str) -> Option<Result<Tmap, String>> {
    let rest = text.trim().strip_prefix("tmap:")?;
    Some(tmap(name, rest))
}

const TMAP_FORM: &str =
    "tmap:TYPE:ARRAY:box=B0,B1[,...][:swizzle=none|32|64|128][:fill=zero|nan][:l2=0|64|128|256]";

fn tmap(name: &str, rest: &str) -> Result<Tmap, String> {
    let (ty, rest) = rest
        .split_once(':')
        .ok_or_else(|| format!("a tensor map is written `{TMAP_FORM}`"))?;
    let elem = TensorElem::from_name(ty.trim()).ok_or_else(|| {
        let names: Vec<&str> = TensorElem::ALL.iter().map(|e| e.name()).collect();
        format!(
            "`{ty}` is not a tensor element type: the types are {}",
            names.join(", ")
        )
    })?;
    // The options are the `key=value` parts at the end; the array is what
    // comes before them (array forms hold no `=`).
    let parts: Vec<&str> = rest.split(':').collect();
    let first_opt = parts
        .iter()
        .position(|p| p.contains('='))
        .unwrap_or(parts.len());
    let array_text = parts.get(..first_opt).unwrap_or(&[]).join(":");
    if array_text.trim().is_empty() {
        return Err(format!(
            "the tensor map names no array: `{TMAP_FORM}`, as in `tmap:bf16:rand:512,256:3:box=128,64`"
        ));
    }
    let mut boxes: Option<Vec<u32>> = None;
    let mut swizzle = Swizzle::None;
    let mut fill = OobFill::Zero;
    let mut l2 = 0u16;
    for opt in parts.get(first_opt..).unwrap_or(&[]) {
        let (k, v) = opt
            .split_once('=')
            .ok_or_else(|| format!("`{opt}` is not an option of a tensor map (`KEY=VALUE`)"))?;
        match k.trim() {
            "box" => {
                let mut b = Vec::new();
                for d in v.split(',') {
                    let n = literal::parse(d.trim(), Scalar::U32)
                        .map_err(|_| format!("the box dimension `{d}` is not a whole number"))?;
                    b.push(n as u32);
                }
                boxes = Some(b);
            }
            "swizzle" => {
                swizzle = Swizzle::from_text(v.trim()).ok_or_else(|| {
                    format!("`swizzle={v}`: the swizzles are none, 32, 64 and 128")
                })?
            }
            "fill" => {
                fill = match v.trim() {
                    "zero" => OobFill::Zero,
                    "nan" => OobFill::Nan,
                    _ => return Err(format!("`fill={v}`: the fills are zero and nan")),
                }
            }
            "l2" => {
                l2 = match v.trim() {
                    "0" | "none" => 0,
                    "64" => 64,
                    "128" => 128,
                    "256" => 256,
                    _ => return Err(format!("`l2={v}`: the L2 promotions are 0, 64, 128 and 256")),
                }
            }
            other => {
                return Err(format!(
                    "`{other}` is not an option of a tensor map: the options are box, swizzle, fill and l2"
                ))
            }
        }
    }
    let boxes = boxes.ok_or_else(|| {
        format!("the tensor map has no box: add `:box=B0,B1,...` (outermost first), as in `{TMAP_FORM}`")
    })?;
    if boxes.is_empty() || boxes.len() > 5 {
        return Err(format!(
            "tensorRank: the box has {} dimensions; a tensor map has 1 to 5",
            boxes.len()
        ));
    }
    let mut box_dims = [0u32; 5];
    for (d, b) in box_dims.iter_mut().zip(&boxes) {
        *d = *b;
    }
    let map = TensorMapSig {
        elem,
        rank: boxes.len() as u8,
        box_dims,
        swizzle,
        fill,
        l2_promotion: l2,
        writable: true,
    };
    let (mut array, shape) = tensor_array(name, elem, &array_text)?;
    array.writable = true;
    Ok((array, shape, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(elem: TensorElem, boxes: &[u32], swizzle: Swizzle) -> TensorMapSig {
        let mut box_dims = [0; 5];
        box_dims[..boxes.len()].copy_from_slice(boxes);
        TensorMapSig {
            elem,
            rank: boxes.len() as u8,
            box_dims,
            swizzle,
            fill: OobFill::Zero,
            l2_promotion: 256,
            writable: false,
        }
    }

    #[test]
    fn swizzle_formulas() {
        // Row r of a 128B-swizzled 1024-byte block: chunk c goes to c ^ r.
        for r in 0..8u64 {
            for c in 0..8u64 {
                assert_eq!(
                    Swizzle::B128.apply(r * 128 + c * 16),
                    r * 128 + ((c ^ r) * 16)
                );
            }
        }
        assert_eq!(Swizzle::B64.apply(3 * 128 + 16), 3 * 128 + 16 * (1 ^ 3));
        assert_eq!(Swizzle::B32.apply(128 + 16), 128);
        assert_eq!(Swizzle::None.apply(12345), 12345);
        assert_eq!(
            (
                Swizzle::B32.repeat(),
                Swizzle::B64.repeat(),
                Swizzle::B128.repeat()
            ),
            (256, 512, 1024)
        );
    }

    #[test]
    fn encode_rules_are_named() {
        let m = sig(TensorElem::BF16, &[128, 64], Swizzle::B128);
        let dims = [512, 256];
        let strides = dense_strides(&dims, TensorElem::BF16);
        assert_eq!(strides, [512]);
        assert_eq!(check_encode(&m, &dims, &strides, 512 * 256 * 2), Ok(()));
        let e = |m: &TensorMapSig, dims: &[u64], strides: &[u64]| {
            check_encode(m, dims, strides, 1 << 30).unwrap_err()
        };
        assert!(e(&m, &[512], &[]).starts_with("globalDim: the map has rank 2"));
        assert!(e(&m, &[512, 100], &[200])
            .starts_with("globalStrides: the stride of dimension 0 is 200"));
        assert!(e(&m, &[0, 64], &[128]).starts_with("globalDim: dimension 0"));
        assert!(e(
            &sig(TensorElem::BF16, &[300, 64], Swizzle::B128),
            &dims,
            &strides
        )
        .starts_with("boxDim: dimension 0"));
        assert!(e(
            &sig(TensorElem::BF16, &[128, 4], Swizzle::None),
            &dims,
            &strides
        )
        .starts_with("boxDim: the box's innermost dimension takes 8 bytes"));
        assert!(e(
            &sig(TensorElem::BF16, &[128, 128], Swizzle::B128),
            &dims,
            &strides
        )
        .starts_with("swizzle: the box's innermost dimension takes 256 bytes"));
        let mut nan = sig(TensorElem::I32, &[8, 8], Swizzle::None);
        nan.fill = OobFill::Nan;
        assert!(e(&nan, &[8, 8], &[32]).starts_with("oobFill"));
        assert!(check_encode(&m, &dims, &strides, 1000)
            .unwrap_err()
            .contains("past the array's 1000 bytes"));
    }

    #[test]
    fn tmap_forms() {
        let (a, shape, m) = parse_tmap("0", "tmap:bf16:zeros:200,136:box=128,64:swizzle=128")
            .unwrap()
            .unwrap();
        assert_eq!(shape, [200, 136]);
        assert_eq!(
            (a.elem, a.len(), a.writable),
            (Scalar::BF16, 200 * 136, true)
        );
        assert_eq!(m.boxes(), [128, 64]);
        assert_eq!(
            (m.swizzle, m.fill, m.box_bytes()),
            (Swizzle::B128, OobFill::Zero, 16384)
        );
        let (a, _, m) = parse_tmap("1", "tmap:e4m3:fill:4,16:1.5:box=4,16:fill=nan")
            .unwrap()
            .unwrap();
        assert_eq!(a.data, vec![0x3c; 64]);
        assert_eq!(m.fill, OobFill::Nan);
        assert!(parse_tmap("x", "zeros:4").is_none());
        let err = |t: &str| parse_tmap("x", t).unwrap().unwrap_err();
        assert!(err("tmap:bf17:zeros:4:box=4").starts_with("`bf17` is not a tensor element type"));
        assert!(err("tmap:bf16:zeros:8").starts_with("the tensor map has no box"));
        assert!(err("tmap:bf16:zeros:8:box=8:swizzle=16").contains("the swizzles are"));
        assert!(err("tmap:bf16:zeros:8:box=8:tile=3").contains("not an option"));
        assert!(err("tmap:bf16:box=8").starts_with("the tensor map names no array"));
        assert!(err("tmap:e4m3:fill:4:500:box=4").contains("beyond the largest finite e4m3"));
    }
}
