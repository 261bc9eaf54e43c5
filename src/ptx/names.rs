//! The PTX name of every kdsl symbol, so that no user name can collide with
//! PTX or with another symbol (naga's `proc/namer.rs` is the model).
//!
//! - **Kernels keep their names.** A kernel's name is its ABI: the host
//!   program looks it up by name (`cuModuleGetFunction`, `cudaGetFuncBySymbol`),
//!   so it is never changed; a name PTX cannot take is error E0126 in the
//!   checker, which asks [`kernel_name_problem`].
//! - **Instantiations of a kernel with constants** (`kernel gemm<const BM:
//!   u32 = 128>`) are named by [`instance_name`]: the kernel's name for the
//!   instantiation with every default (`gemm`), otherwise the kernel's name
//!   followed by `__NAME_VALUE` for each constant that differs from its
//!   default, in declaration order (`gemm__BM_64`, `attn__HEAD_DIM_128__CAUSAL_true`).
//!   Made of identifier characters, so a valid kernel name gives a valid
//!   PTX name; one that meets another kernel's is E0164 in the checker.
//! - **Device functions** keep their name when PTX can take it and no
//!   kernel or earlier function has it, and become `$f{index}_{name}`
//!   otherwise ([`Namer::function`]).
//! - **Everything else is prefixed**: parameters `$p_x`, shared arrays
//!   `$s_x`, barrier groups `$b_x`, labels `$L_3`, function parameters and
//!   results `$a0`, `$r`, the dynamic shared array `$dsmem`. kdsl
//!   identifiers cannot contain `$`, so these never meet a user's name, and
//!   the prefixes differ, so they never meet each other.
//!
//! Which words PTX refuses was found by running ptxas 13.5 over every PTX
//! opcode, directive, type, state space, special register and modifier as
//! an `.entry` and a `.func` name; `tests/it/check/limits.rs` runs the list again
//! (and every kdslc symbol kind) against the ptxas it finds.

use crate::ir;
use std::collections::HashSet;

/// Identifiers ptxas refuses as symbol names: `WARP_SZ` is a PTX constant
/// and `_` the sink operand. Opcodes (`add`, `ret`), directives without
/// their dot (`entry`, `global`) and type names (`u32`) are accepted.
pub const RESERVED: &[(&str, &str)] = &[
    ("WARP_SZ", "`WARP_SZ` is a PTX constant (the warp size)"),
    ("_", "`_` alone is PTX's sink operand"),
];

/// Why PTX cannot take `name` as a kernel's `.entry` name, if it cannot.
pub fn kernel_name_problem(name: &str) -> Option<&'static str> {
    if let Some((_, why)) = RESERVED.iter().find(|(word, _)| *word == name) {
        return Some(why);
    }
    if !is_ptx_identifier(name) {
        return Some("PTX names are `[A-Za-z][A-Za-z0-9_$]*` or `[_$%][A-Za-z0-9_$]+`");
    }
    None
}

/// `[A-Za-z][A-Za-z0-9_$]*` or `[_$%][A-Za-z0-9_$]+` (ptx-notes §9).
fn is_ptx_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if first.is_ascii_alphabetic() {
        rest_ok
    } else {
        matches!(first, '_' | '$' | '%') && s.len() > 1 && rest_ok
    }
}

/// Hands out the module-level symbols (`.entry` and `.func` names), each
/// unique.
pub(super) struct Namer {
    taken: HashSet<String>,
}

impl Namer {
    /// A namer with the kernels' names taken: they are fixed.
    pub(super) fn new(module: &ir::Module) -> Namer {
        Namer {
            taken: module.kernels.iter().map(|k| k.name.clone()).collect(),
        }
    }

    /// The `.func` symbol of function number `index`, named `name` in kdsl.
    pub(super) fn function(&mut self, index: usize, name: &str) -> String {
        let plain_ok = kernel_name_problem(name).is_none() && !self.taken.contains(name);
        let symbol = if plain_ok {
            name.to_string()
        } else {
            format!("{FUNCTION}{index}_{name}")
        };
        self.taken.insert(symbol.clone());
        symbol
    }
}

/// Between the kernel's name and each constant of an instantiation's name,
/// and between constants: `gemm__BM_64__STAGES_3`.
pub const INSTANCE_SEPARATOR: &str = "__";

/// The `.entry` name of an instantiation of kernel `kernel` with the
/// constants `consts` (see the module's documentation).
pub fn instance_name(kernel: &str, consts: &[ir::InstanceConst]) -> String {
    let mut name = kernel.to_string();
    for c in consts.iter().filter(|c| !c.default) {
        name.push_str(INSTANCE_SEPARATOR);
        name.push_str(&c.name);
        name.push('_');
        name.push_str(&mangled_value(&c.value));
    }
    name
}

/// A constant's value in an instantiation's name: an integer in decimal
/// (`m` before a negative one's digits: `m3` for -3), `true`/`false`, or
/// the type's name.
pub fn mangled_value(v: &ir::ConstValue) -> String {
    match v {
        ir::ConstValue::Value(ir::Value::Int(i), _) if *i < 0 => format!("m{}", i.unsigned_abs()),
        ir::ConstValue::Value(ir::Value::Int(i), _) => i.to_string(),
        ir::ConstValue::Value(ir::Value::Bool(b), _) => b.to_string(),
        // Kernel constants are integers, `bool` or types: no floats.
        ir::ConstValue::Value(ir::Value::Float(f), _) => format!("{:x}", f.to_bits()),
        ir::ConstValue::Value(ir::Value::Pair(lo, hi), _) => {
            format!("{:x}_{:x}", lo.to_bits(), hi.to_bits())
        }
        ir::ConstValue::Type(t) => t.name().to_string(),
    }
}

/// The module's one `.extern .shared` array, which every kernel placed in
/// dynamic shared memory carves up at fixed offsets (all `.extern .shared`
/// arrays of a module start at the same address, so one is enough).
pub const DYNAMIC_SHARED: &str = "$dsmem";

/// The prefixes of kernel parameters, shared arrays and barrier groups.
const PARAM: &str = "$p_";
const SHARED: &str = "$s_";
const BARRIER: &str = "$b_";
/// The prefix of a renamed function, before its index.
const FUNCTION: &str = "$f";

/// The PTX symbol of kernel parameter `name`.
pub fn param_symbol(name: &str) -> String {
    format!("{PARAM}{name}")
}

/// The PTX symbol of shared array `name`.
pub fn shared_symbol(name: &str) -> String {
    format!("{SHARED}{name}")
}

/// The PTX symbol of barrier group `name`.
pub fn barrier_symbol(name: &str) -> String {
    format!("{BARRIER}{name}")
}

/// The kdsl name behind a PTX symbol: the inverse of [`param_symbol`],
/// [`shared_symbol`], [`barrier_symbol`] and [`Namer::function`]'s renaming,
/// for what reads kdslc's PTX (the simulator's reports). `None` for a
/// symbol that is its kdsl name (a kernel, a function kept as it is) or
/// that kdslc did not write.
pub fn source_name(symbol: &str) -> Option<&str> {
    if let Some(name) = [PARAM, SHARED, BARRIER]
        .iter()
        .find_map(|p| symbol.strip_prefix(p))
    {
        return Some(name);
    }
    let rest = symbol.strip_prefix(FUNCTION)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    rest.get(digits..)?.strip_prefix('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_malformed_names() {
        assert!(kernel_name_problem("WARP_SZ").is_some());
        assert!(kernel_name_problem("_").is_some());
        assert!(kernel_name_problem("").is_some());
        assert!(kernel_name_problem("1k").is_some());
        for ok in [
            "k", "_k", "add", "ret", "entry", "u32", "global", "tid", "warp_sz", "__",
        ] {
            assert_eq!(kernel_name_problem(ok), None, "{ok}");
        }
    }

    #[test]
    fn source_names_undo_every_symbol() {
        let mut namer = Namer {
            taken: ["k".to_string()].into_iter().collect(),
        };
        for name in ["x", "tile", "a_b", "_", "p_1", "f3_g", "WARP_SZ", "k"] {
            assert_eq!(source_name(&param_symbol(name)), Some(name));
            assert_eq!(source_name(&shared_symbol(name)), Some(name));
            assert_eq!(source_name(&barrier_symbol(name)), Some(name));
            let f = namer.function(12, name);
            let back = source_name(&f).unwrap_or(&f);
            assert_eq!(back, name, "{f}");
        }
        // Symbols kdslc writes for nothing of the source, and others'.
        for other in [
            DYNAMIC_SHARED,
            "$L_3",
            "$a0",
            "$r",
            "$f_x",
            "$fx",
            "_ZZ1kE4full",
            "k",
        ] {
            assert_eq!(source_name(other), None, "{other}");
        }
    }

    #[test]
    fn instances_are_named_by_the_constants_off_their_defaults() {
        use crate::ir::{ConstValue, InstanceConst, Value};
        use crate::types::Scalar;
        let c = |name: &str, value: ConstValue, default: bool| InstanceConst {
            name: name.to_string(),
            value,
            default,
        };
        let bm = |v: i128, d| c("BM", ConstValue::Value(Value::Int(v), Scalar::I32), d);
        let causal = |b, d| c("CAUSAL", ConstValue::Value(Value::Bool(b), Scalar::Bool), d);
        let elem = |t, d| c("ELEM", ConstValue::Type(t), d);
        let all_default = [bm(128, true), causal(false, true), elem(Scalar::BF16, true)];
        assert_eq!(instance_name("gemm", &all_default), "gemm");
        let some = [
            bm(64, false),
            causal(false, true),
            elem(Scalar::E4M3, false),
        ];
        assert_eq!(instance_name("gemm", &some), "gemm__BM_64__ELEM_e4m3");
        let negative = [bm(-3, false), causal(true, false), elem(Scalar::BF16, true)];
        assert_eq!(instance_name("k", &negative), "k__BM_m3__CAUSAL_true");
        assert_eq!(kernel_name_problem(&instance_name("k", &negative)), None);
    }

    #[test]
    fn functions_are_renamed_only_when_needed() {
        let mut namer = Namer {
            taken: ["k".to_string()].into_iter().collect(),
        };
        assert_eq!(namer.function(0, "f"), "f");
        assert_eq!(namer.function(1, "k"), "$f1_k");
        assert_eq!(namer.function(2, "WARP_SZ"), "$f2_WARP_SZ");
        assert_eq!(namer.function(3, "_"), "$f3__");
        assert_eq!(namer.function(4, "f"), "$f4_f");
    }
}
