//! `--const NAME=ARRAY` for a `.ptx` input: the bytes of a module's
//! `.const` variable (CUDA's `__constant__` memory, which a host program
//! sets with `cudaMemcpyToSymbol`) before the launch.
//!
//! `NAME` is the PTX symbol (nvcc's: the C++ name, mangled inside a
//! namespace); `ARRAY` any array form of `--arg`, typed by its prefix
//! (`f32:[0.25, 0.5]`, `u32:iota:16`, `f32:@coef.npy`) or, without one,
//! by the variable's declared element type when it is not `.b8` (nvcc
//! declares every array `.b8`). The bytes replace the variable's first bytes (its
//! initialiser, or zeros); more bytes than it has is an error.
//!
//! (A `.kdsl` kernel's `--const` sets its compile-time constants instead:
//! the flag's meaning follows the input.)

use super::value;
use crate::types::Scalar;

/// A module `.const` variable a launch may set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstSymbol {
    pub name: String,
    pub size: u64,
    /// Its declared element type, when that is one (`.f32`, not `.b8`).
    pub elem: Option<Scalar>,
}

/// The bytes of `--const NAME=VALUE` (`text` is `NAME=VALUE`) for one of
/// `symbols`: `(name, bytes)`.
pub fn parse(symbols: &[ConstSymbol], text: &str) -> Result<(String, Vec<u8>), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "`--const {text}`: the form is NAME=ARRAY, as in `--const coef=f32:[0.25, 0.5]`"
        ));
    };
    let name = name.trim();
    let Some(sym) = symbols.iter().find(|s| s.name == name) else {
        let names: Vec<String> = symbols.iter().map(|s| format!("`{}`", s.name)).collect();
        return Err(format!(
            "`--const {name}=...`: the module has no `.const` variable `{name}` ({}); on a .ptx input `--const` sets `__constant__` memory (kernel constants are a .kdsl kernel's)",
            if names.is_empty() {
                "it has none".to_string()
            } else {
                format!("it has {}", names.join(", "))
            }
        ));
    };
    let value = value.trim();
    let (prefix, rest) = match value.split_once(':') {
        Some((head, rest)) if Scalar::from_name(head.trim()).is_some() => {
            (Scalar::from_name(head.trim()), rest)
        }
        _ => (None, value),
    };
    let elem = match (prefix, sym.elem) {
        (Some(p), _) => p,
        (None, Some(e)) => e,
        (None, None) => {
            return Err(format!(
                "`--const {name}=...`: `{name}` is declared `.b8`, so the array needs its element type, as in `f32:{value}`"
            ))
        }
    };
    let data = value::array(elem, rest).map_err(|e| format!("`--const {name}=...`: {e}"))?;
    if data.len() as u64 > sym.size {
        return Err(format!(
            "`--const {name}=...` gives {} bytes, and `{name}` has {}",
            data.len(),
            sym.size
        ));
    }
    Ok((name.to_string(), data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms() -> Vec<ConstSymbol> {
        vec![
            ConstSymbol {
                name: "coef".into(),
                size: 16,
                elem: None,
            },
            ConstSymbol {
                name: "scale".into(),
                size: 8,
                elem: Some(Scalar::F32),
            },
        ]
    }

    #[test]
    fn typed_by_prefix_or_declaration() {
        let (n, b) = parse(&syms(), "coef=f32:[1, 2]").unwrap();
        assert_eq!(n, "coef");
        assert_eq!(b, [1f32.to_le_bytes(), 2f32.to_le_bytes()].concat());
        let (_, b) = parse(&syms(), "scale=[0.5, 4]").unwrap();
        assert_eq!(b, [0.5f32.to_le_bytes(), 4f32.to_le_bytes()].concat());
        let (_, b) = parse(&syms(), "coef=u32:iota:4").unwrap();
        assert_eq!(b.len(), 16);
    }

    #[test]
    fn mistakes_are_named() {
        let e = parse(&syms(), "coef=[1, 2]").unwrap_err();
        assert!(
            e.contains("declared `.b8`") && e.contains("`f32:[1, 2]`"),
            "{e}"
        );
        let e = parse(&syms(), "nope=f32:[1]").unwrap_err();
        assert!(
            e.contains("no `.const` variable `nope`") && e.contains("`coef`, `scale`"),
            "{e}"
        );
        let e = parse(&syms(), "coef=f32:iota:5").unwrap_err();
        assert!(e.contains("gives 20 bytes, and `coef` has 16"), "{e}");
        assert!(parse(&syms(), "coef").unwrap_err().contains("NAME=ARRAY"));
    }
}
