//! The C type of each kind of kernel parameter, read from the manifest's
//! `kind`, `elem` and `ptx_type` (the one description of how a parameter
//! is passed): what a launcher takes, and what the kernel's parameter
//! buffer holds.

use crate::manifest::ParamManifest;

/// How a launcher takes one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CParam {
    /// The type the launcher's argument has (`float`, `CUdeviceptr`,
    /// `const CUtensorMap *`).
    pub arg: &'static str,
    /// The type of the bytes the kernel reads, when it differs from
    /// `arg` (a `bool` passed as a `uint32_t` 0 or 1).
    pub passed_as: Option<&'static str>,
    /// What the argument holds, for the comment: `None` when the type says
    /// it all, else `"the bits of an f16"`.
    pub note: Option<&'static str>,
    /// The launcher passes the argument itself (a pointer to a tensor map)
    /// rather than its address.
    pub by_pointer: bool,
}

/// The C type for a parameter of the manifest; `None` for a combination the
/// compiler never writes (an internal error).
pub fn of(p: &ParamManifest) -> Option<CParam> {
    let plain = |arg| CParam {
        arg,
        passed_as: None,
        note: None,
        by_pointer: false,
    };
    let bits = |arg, note| CParam {
        arg,
        passed_as: None,
        note: Some(note),
        by_pointer: false,
    };
    Some(match (p.kind, p.ptx_type) {
        ("array", "u64") => plain("CUdeviceptr"),
        ("tensor_map", "b8[128]") => CParam {
            arg: "const CUtensorMap *",
            passed_as: None,
            note: None,
            by_pointer: true,
        },
        ("scalar", ptx) => match (p.elem.as_str(), ptx) {
            ("bool", "u32") => CParam {
                arg: "bool",
                passed_as: Some("uint32_t"),
                note: None,
                by_pointer: false,
            },
            ("f32", "f32") => plain("float"),
            ("f64", "f64") => plain("double"),
            ("u8", "u8") => plain("uint8_t"),
            ("i8", "s8") => plain("int8_t"),
            ("u16", "u16") => plain("uint16_t"),
            ("i16", "s16") => plain("int16_t"),
            ("u32", "u32") => plain("uint32_t"),
            ("i32", "s32") => plain("int32_t"),
            ("u64", "u64") => plain("uint64_t"),
            ("i64", "s64") => plain("int64_t"),
            ("f16", "b16") => bits("uint16_t", "the bits of an IEEE binary16 (f16)"),
            ("bf16", "b16") => bits("uint16_t", "the bits of a bfloat16 (bf16)"),
            ("f16x2", "b32") => bits("uint32_t", "two f16, the first in the low 16 bits"),
            ("bf16x2", "b32") => bits("uint32_t", "two bf16, the first in the low 16 bits"),
            ("e4m3", "u8") => bits("uint8_t", "the bits of an fp8 e4m3"),
            ("e5m2", "u8") => bits("uint8_t", "the bits of an fp8 e5m2"),
            ("tf32", "u32") => bits("uint32_t", "the bits of a tf32 (an f32's)"),
            _ => return None,
        },
        _ => return None,
    })
}
