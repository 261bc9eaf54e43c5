//! The scalar types of kdsl and their properties.

use std::fmt;

/// A scalar type: the type of every value a kdsl expression can produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    BF16,
    F32,
    F64,
    /// fp8 with 4 exponent and 3 mantissa bits (OCP E4M3, no infinities),
    /// `e5m2` the same with 5 and 2: storage types of tensor data (shared,
    /// `global` and tensor-map arrays); values are moved, never computed
    /// with ([`Scalar::is_storage_only`]).
    E4M3,
    E5M2,
    /// TensorFloat-32: an `f32`'s 32 bits, of which the tensor cores read
    /// the sign, the 8 exponent bits and the top 10 mantissa bits. A
    /// storage type like the fp8s, so that a tensor map's data type and a
    /// wgmma's operand kind follow from the array's declaration.
    TF32,
    /// Two `f16` in one 32-bit register (PTX `.f16x2`), the first (`.lo`)
    /// in the low 16 bits: packed half math (`add.rn.f16x2`, `fma.rn.f16x2`,
    /// HADD2/HFMA2 in SASS), `docs/language.md` §3.
    F16x2,
    /// Two `bf16` in one 32-bit register (PTX `.bf16x2`).
    BF16x2,
}

impl Scalar {
    /// The types values are computed in: every scalar but the storage
    /// types ([`Scalar::STORAGE`]).
    pub const ALL: [Scalar; 13] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F16,
        Scalar::BF16,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The storage types of tensor data: loaded, stored, copied and
    /// passed; no operator or built-in applies to them, and the only
    /// conversions are those of [`Scalar::converts_storage`].
    pub const STORAGE: [Scalar; 3] = [Scalar::E4M3, Scalar::E5M2, Scalar::TF32];

    /// The packed pairs of halves, `f16x2` and `bf16x2`.
    pub const PACKED: [Scalar; 2] = [Scalar::F16x2, Scalar::BF16x2];

    /// Every scalar type: [`Scalar::ALL`], [`Scalar::STORAGE`], then
    /// [`Scalar::PACKED`].
    pub fn every() -> impl Iterator<Item = Scalar> {
        Scalar::ALL
            .into_iter()
            .chain(Scalar::STORAGE)
            .chain(Scalar::PACKED)
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "i8" => Scalar::I8,
            "u8" => Scalar::U8,
            "i16" => Scalar::I16,
            "u16" => Scalar::U16,
            "i32" => Scalar::I32,
            "u32" => Scalar::U32,
            "i64" => Scalar::I64,
            "u64" => Scalar::U64,
            "f16" => Scalar::F16,
            "bf16" => Scalar::BF16,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            "e4m3" => Scalar::E4M3,
            "e5m2" => Scalar::E5M2,
            "tf32" => Scalar::TF32,
            "f16x2" => Scalar::F16x2,
            "bf16x2" => Scalar::BF16x2,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
            Scalar::TF32 => "tf32",
            Scalar::F16x2 => "f16x2",
            Scalar::BF16x2 => "bf16x2",
        }
    }

    /// `f16x2`, `bf16x2`: two halves in one 32-bit register.
    pub fn is_packed(self) -> bool {
        matches!(self, Scalar::F16x2 | Scalar::BF16x2)
    }

    /// The half type of a packed pair (`f16` of `f16x2`).
    pub fn half_of(self) -> Option<Scalar> {
        match self {
            Scalar::F16x2 => Some(Scalar::F16),
            Scalar::BF16x2 => Some(Scalar::BF16),
            _ => None,
        }
    }

    /// The packed pair of a half type (`f16x2` of `f16`).
    pub fn pair_of(self) -> Option<Scalar> {
        match self {
            Scalar::F16 => Some(Scalar::F16x2),
            Scalar::BF16 => Some(Scalar::BF16x2),
            _ => None,
        }
    }

    /// `e4m3`, `e5m2`.
    pub fn is_fp8(self) -> bool {
        matches!(self, Scalar::E4M3 | Scalar::E5M2)
    }

    /// Whether `as` converts between `self` and `other` when either is a
    /// storage type: an fp8 to and from `f32`, `f16` and `bf16` (sm_89 and
    /// newer, `cvt...e4m3x2`), and `f32` to and from `tf32`. Every other
    /// conversion of a storage type is refused (E0118): from `f64` or an
    /// integer it would round twice, between the two fp8s it would hide
    /// the detour through `f16`.
    pub fn converts_storage(self, other: Scalar) -> bool {
        let float = |t: Scalar| matches!(t, Scalar::F32 | Scalar::F16 | Scalar::BF16);
        (self.is_fp8() && float(other))
            || (other.is_fp8() && float(self))
            || matches!(
                (self, other),
                (Scalar::F32, Scalar::TF32) | (Scalar::TF32, Scalar::F32)
            )
    }

    /// `e4m3`, `e5m2`, `tf32`: storage types of tensor data. No operator
    /// (not even `==`), math built-in, atomic or shuffle applies to them,
    /// and `as` only as [`Scalar::converts_storage`] says; they are
    /// loaded, stored, bound to variables and passed on.
    pub fn is_storage_only(self) -> bool {
        matches!(self, Scalar::E4M3 | Scalar::E5M2 | Scalar::TF32)
    }

    pub fn is_int(self) -> bool {
        self.is_narrow_int()
            || matches!(self, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// `u8`, `i8`, `u16`, `i16`: integers narrower than a register. Their
    /// arithmetic wraps in their own width (`docs/language.md` §3); in PTX
    /// they live in 32-bit registers, sign- or zero-extended.
    pub fn is_narrow_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16)
    }

    /// The smallest and largest value of an integer type (`bool`: 0..=1;
    /// floats have none).
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.bits();
        match self {
            Scalar::Bool => Some((0, 1)),
            t if t.is_signed_int() => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
            t if t.is_int() => Some((0, (1i128 << bits) - 1)),
            _ => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
    }

    /// `f16`/`bf16`: storage types whose arithmetic widens to `f32`.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }

    /// Size in bytes in memory (`bool` is stored as one byte).
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::E4M3 | Scalar::E5M2 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 | Scalar::TF32 => 4,
            Scalar::F16x2 | Scalar::BF16x2 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// Bit width of the value (1 for `bool`).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 1,
            other => other.size() * 8,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a kdsl value or name, as the checker sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(Scalar),
    /// `global [T]` (read-only) or `global mut [T]`.
    Global {
        elem: Scalar,
        mutable: bool,
    },
    /// The result of a statement-like call (`sync_threads()`, `b.arrive()`).
    Unit,
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Global {
                elem,
                mutable: false,
            } => write!(f, "global [{elem}]"),
            Type::Global {
                elem,
                mutable: true,
            } => write!(f, "global mut [{elem}]"),
            Type::Unit => f.write_str("()"),
        }
    }
}

/// The note under E0003 (a literal out of range for `ty`): the type's
/// range, or for a float type its largest value and where rounding to it
/// overflows. The lexer and the checker both say it.
pub fn literal_range_note(ty: &str) -> String {
    let range = match ty {
        "i8" => "-128..=127",
        "u8" => "0..=255",
        "i16" => "-32768..=32767",
        "u16" => "0..=65535",
        "i32" => "-2147483648..=2147483647",
        "u32" => "0..=4294967295",
        "i64" => "-9223372036854775808..=9223372036854775807",
        "u64" => "0..=18446744073709551615",
        // A float literal fits when it rounds to a finite value: anything
        // below the largest value plus half an ulp.
        "f16" => {
            return "the largest `f16` is 65504.0; a literal fits when it rounds to a finite `f16` (below 65520)".into()
        }
        "bf16" => {
            return "the largest `bf16` is about 3.39e38; a literal fits when it rounds to a finite `bf16` (below 2^128 - 2^119, about 3.396e38)".into()
        }
        "f32" => {
            return "the largest `f32` is about 3.4028235e38; a literal fits when it rounds to a finite `f32` (below 2^128 - 2^103, about 3.40282357e38)".into()
        }
        "f64" => {
            return "the largest `f64` is about 1.7976931348623157e308; a literal fits when it rounds to a finite `f64` (below 2^1024 - 2^970)".into()
        }
        _ => return format!("the value does not fit in `{ty}`"),
    };
    format!("the range of `{ty}` is {range}")
}
