//! PTX instruction type suffixes for each kdsl scalar type.
//!
//! ptxas is strict about them (ptx-notes §8–§10): `add` takes `.s/.u/.f`,
//! logic takes `.bN`, `ld`/`st` of a `bool` go through a byte, `cvt` has no
//! `.bN` types, and `f16`/`bf16` values are `.b16` bits.

use crate::types::Scalar;

/// Arithmetic type: `add`, `sub`, `mul.lo`, `div`, `rem`, `min`, `setp`, `shr`.
pub(super) fn arith(ty: Scalar) -> &'static str {
    match ty {
        Scalar::I32 => "s32",
        Scalar::U32 | Scalar::Bool => "u32",
        Scalar::I64 => "s64",
        Scalar::U64 => "u64",
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
    }
}

/// Untyped bits: `and`, `or`, `xor`, `not`, `shl`, `selp`, `atom.cas`.
pub(super) fn bits(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "pred",
        Scalar::F16 | Scalar::BF16 => "b16",
        Scalar::I32 | Scalar::U32 | Scalar::F32 => "b32",
        Scalar::I64 | Scalar::U64 | Scalar::F64 => "b64",
    }
}

/// `mov` between registers of the type's class.
pub(super) fn mov(ty: Scalar) -> &'static str {
    match ty {
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        other => bits(other),
    }
}

/// `selp` (no `.pred` form: `bool` is handled by the caller).
pub(super) fn selp(ty: Scalar) -> &'static str {
    match ty {
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::Bool => "b32",
        other => bits(other),
    }
}

/// Memory access (`ld`, `st`): `bool` is one byte.
pub(super) fn mem(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "u8",
        Scalar::F16 | Scalar::BF16 => "b16",
        other => arith(other),
    }
}

/// `cvt` operand type.
pub(super) fn cvt(ty: Scalar) -> &'static str {
    arith(ty)
}

/// `.param` type of a kernel parameter (`bool` is passed as `u32`).
pub(super) fn kernel_param(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "u32",
        Scalar::F16 | Scalar::BF16 => "b16",
        other => arith(other),
    }
}

/// `.param` type of a device-function parameter or result (`bool` as `.b32`).
pub(super) fn func_param(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "b32",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        other => bits(other),
    }
}
