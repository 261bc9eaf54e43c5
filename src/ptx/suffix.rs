//! PTX instruction type suffixes for each kdsl scalar type.
//!
//! ptxas is strict about them (ptx-notes §8–§10): `add` takes `.s/.u/.f`,
//! logic takes `.bN`, `ld`/`st` of a `bool` go through a byte, `cvt` has no
//! `.bN` types, and `f16`/`bf16` values are `.b16` bits.

use crate::types::Scalar;

/// Arithmetic type: `add`, `sub`, `mul.lo`, `div`, `rem`, `min`, `setp`, `shr`.
/// The narrow integers live in 32-bit registers, sign- or zero-extended
/// (`Class::of`), and compute with 32-bit instructions; the writer brings
/// every result that may leave their range back into it (`Writer::narrow`).
pub(super) fn arith(ty: Scalar) -> &'static str {
    match ty {
        Scalar::I8 | Scalar::I16 | Scalar::I32 => "s32",
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::Bool => "u32",
        // Storage types have no arithmetic: their bits, as the integers
        // of their width in their `.b32` registers.
        Scalar::E4M3 | Scalar::E5M2 | Scalar::TF32 => "u32",
        Scalar::I64 => "s64",
        Scalar::U64 => "u64",
        Scalar::F16 => "f16",
        Scalar::BF16 => "bf16",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::F16x2 => "f16x2",
        Scalar::BF16x2 => "bf16x2",
    }
}

/// Untyped bits: `and`, `or`, `xor`, `not`, `shl`, `selp`, `atom.cas`.
pub(super) fn bits(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "pred",
        Scalar::F16 | Scalar::BF16 => "b16",
        Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => "b32",
        Scalar::E4M3 | Scalar::E5M2 | Scalar::TF32 => "b32",
        Scalar::I32 | Scalar::U32 | Scalar::F32 => "b32",
        Scalar::F16x2 | Scalar::BF16x2 => "b32",
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

/// The type a narrow integer has in memory and in `cvt`: a load into a
/// 32-bit register sign-extends `.s8`/`.s16` and zero-extends `.u8`/`.u16`
/// (the PTX ISA's rule for operands wider than the instruction type).
fn narrow(ty: Scalar) -> Option<&'static str> {
    Some(match ty {
        Scalar::I8 => "s8",
        Scalar::U8 => "u8",
        Scalar::I16 => "s16",
        Scalar::U16 => "u16",
        // An fp8's bits, zero-extended in a `.b32` register.
        Scalar::E4M3 | Scalar::E5M2 => "u8",
        _ => return None,
    })
}

/// Memory access (`ld`, `st`): `bool` is one byte.
pub(super) fn mem(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "u8",
        Scalar::F16 | Scalar::BF16 => "b16",
        Scalar::F16x2 | Scalar::BF16x2 => "b32",
        other => narrow(other).unwrap_or_else(|| arith(other)),
    }
}

/// `cvt` operand type: a narrow integer's own (a float → `u8` conversion
/// saturates to 0..=255, and `cvt.s32.s8` reads the low byte).
pub(super) fn cvt(ty: Scalar) -> &'static str {
    narrow(ty).unwrap_or_else(|| arith(ty))
}

/// `.param` type of a kernel parameter (`bool` is passed as `u32`; the
/// narrow integers as themselves, as C passes `char` and `short`).
pub(super) fn kernel_param(ty: Scalar) -> &'static str {
    match ty {
        Scalar::Bool => "u32",
        Scalar::F16 | Scalar::BF16 => "b16",
        Scalar::F16x2 | Scalar::BF16x2 => "b32",
        other => narrow(other).unwrap_or_else(|| arith(other)),
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
