//! One `--arg` value for one parameter: a scalar literal, or an array from
//! a file, a list or a generator.
//!
//! | form | array |
//! | --- | --- |
//! | `@x.npy` | a NumPy file; its dtype must be the element type |
//! | `@x.bin`, `@x` | raw little-endian elements; the size must be a multiple of the element size |
//! | `[1, 2, 3]` | the elements, each a literal of the element type |
//! | `zeros:SHAPE` | zeros |
//! | `iota:SHAPE` | 0, 1, 2, ... in C order |
//! | `fill:SHAPE:V` | copies of V |
//! | `rand:SHAPE:SEED` | random elements (see [`super::random`]) |
//!
//! `SHAPE` is a length `N` or dimensions `N0,N1,...` (outermost first):
//! an array argument takes the elements, a tensor argument also the shape
//! (as it takes a `.npy` file's; a list and a raw file are
//! one-dimensional).
//!
//! Any array form may be prefixed by its element type (`f32:iota:8`); for
//! an untyped PTX `.u64` parameter the prefix is what makes it an array.
//! A tensor parameter takes an array form, a `.ptx` input's map parameter
//! (`.param .b8 [128]`, or a `.u64` pointer to a map) the `tmap:` form of
//! [`super::tensor`].

use super::error::LaunchError;
use super::{
    literal, memory, npy, random, tensor, ArgValue, Array, ParamKind, ParamSig, TensorMapSig,
};
use crate::fp8::Fp8;
use crate::types::Scalar;
use std::path::Path;

/// The parameter's type as the user thinks of it, for messages.
pub fn kind_name(kind: ParamKind) -> String {
    match kind {
        ParamKind::Scalar(ty) => ty.to_string(),
        ParamKind::Array {
            elem,
            writable: false,
        } => format!("global [{elem}]"),
        ParamKind::Array {
            elem,
            writable: true,
        } => format!("global mut [{elem}]"),
        ParamKind::PtxU64 => "PTX .u64: a pointer or a 64-bit integer".to_string(),
        ParamKind::TensorMap(m) => {
            let dims: Vec<String> = m.boxes().iter().map(u32::to_string).collect();
            format!(
                "tensor{} [{}; {}]",
                if m.writable { " mut" } else { "" },
                m.elem,
                dims.join(", ")
            )
        }
        ParamKind::PtxTensorMap => "PTX .b8[128]: a tensor map (or a struct)".to_string(),
        ParamKind::PtxBytes { size } => format!(
            "PTX .b8[{size}]: a struct passed by value, as `bytes:@FILE` or `struct:f32=1.5,u32=7`"
        ),
    }
}

/// The value of `text` for `param`.
pub fn parse(param: &ParamSig, text: &str) -> Result<ArgValue, LaunchError> {
    let bad = |why: String| LaunchError::BadValue {
        param: param.name.clone(),
        ty: kind_name(param.kind),
        why,
    };
    // A struct passed by value: its bytes or its fields (`super::bytes`).
    let size = match param.kind {
        ParamKind::PtxBytes { size } => Some(size),
        ParamKind::PtxTensorMap => Some(128),
        _ => None,
    };
    if let Some(r) = super::bytes::parse(text, size) {
        return r.map(ArgValue::Bytes).map_err(bad);
    }
    if let Some(word) = unknown_type_prefix(text) {
        return Err(bad(format!(
            "`{word}` is not an element type: the types are bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, tf32, e4m3, e5m2, f16x2 and bf16x2, as in `f32:{}`",
            text.split_once(':').map_or(text, |(_, rest)| rest)
        )));
    }
    if let Some(r) = tensor::parse_tmap(&param.name, text) {
        return match param.kind {
            ParamKind::PtxTensorMap | ParamKind::PtxU64 => {
                let (array, dims, map) = r.map_err(bad)?;
                tensor_value(array, dims, map).map_err(bad)
            }
            _ => Err(bad(format!(
                "`tmap:` gives the map of a .ptx input's tensor-map parameter; `{}` takes {}",
                param.name,
                match param.kind {
                    ParamKind::TensorMap(_) => "an array form whose shape gives the tensor's dimensions, as in `rand:512,256:3` (its element type, box and swizzle come from the kernel)".to_string(),
                    _ => "no tensor map".to_string(),
                }
            ))),
        };
    }
    let (prefix, rest) = split_type_prefix(text);
    match param.kind {
        ParamKind::TensorMap(map) => {
            if let Some(p) = prefix {
                // `e4m3:` names the elements, `u8:` the bytes they are
                // stored as: both describe an fp8 tensor.
                if p != map.elem.storage() && p.name() != map.elem.name() {
                    return Err(bad(format!(
                        "the type prefix `{p}:` says {p}, but the elements are {}",
                        map.elem
                    )));
                }
            }
            let (mut array, dims) =
                tensor::tensor_array(&param.name, map.elem, rest).map_err(bad)?;
            array.writable = map.writable;
            tensor_value(array, dims, map).map_err(bad)
        }
        ParamKind::PtxTensorMap => Err(bad(format!(
            "a tensor-map parameter takes `tmap:TYPE:ARRAY:box=...`, as in `tmap:bf16:rand:512,256:3:box=128,64:swizzle=128` (a struct of 128 bytes `bytes:ARRAY` or `struct:FIELDS`); `{text}` is not one"
        ))),
        ParamKind::PtxBytes { size } => Err(bad(format!(
            "a struct passed by value takes its {size} bytes, `bytes:@FILE` (or any array form of u8: `bytes:[1, 2, 3]`, `bytes:zeros:{size}`), or its fields, `struct:f32=1.5,u32=7` (each field aligned to its size, the rest zeros); `{text}` is neither"
        ))),
        ParamKind::Scalar(ty) => {
            if prefix.is_some() || is_array_form(rest) {
                return Err(bad(format!(
                    "`{text}` is an array, and `{}` is a scalar: give {} literal",
                    param.name,
                    literal::a(ty)
                )));
            }
            let bits = literal::parse(text, ty).map_err(bad)?;
            Ok(ArgValue::Scalar { ty, bits })
        }
        ParamKind::Array { elem, writable } => {
            if let Some(p) = prefix {
                if p != elem {
                    return Err(bad(format!(
                        "the type prefix `{p}:` says {p}, but the elements are {elem}"
                    )));
                }
            }
            let data = array(elem, rest).map_err(bad)?;
            Ok(ArgValue::Array(Array {
                name: param.name.clone(),
                elem,
                data,
                writable,
            }))
        }
        ParamKind::PtxU64 => match prefix {
            Some(elem) => {
                let data = array(elem, rest).map_err(bad)?;
                Ok(ArgValue::Array(Array {
                    name: param.name.clone(),
                    elem,
                    data,
                    writable: true,
                }))
            }
            None if is_array_form(text) => Err(bad(format!(
                "a PTX pointer carries no element type: write it before the array, as in `f32:{text}`"
            ))),
            None => {
                let bits = literal::parse_u64_bits(text).map_err(bad)?;
                Ok(ArgValue::Scalar {
                    ty: Scalar::U64,
                    bits,
                })
            }
        },
    }
}

/// A tensor argument: the array, its dimensions, dense strides, checked
/// against the rules of `cuTensorMapEncodeTiled`.
fn tensor_value(array: Array, dims: Vec<u64>, map: TensorMapSig) -> Result<ArgValue, String> {
    let strides = tensor::dense_strides(&dims, map.elem);
    tensor::check_encode(&map, &dims, &strides, array.data.len() as u64)?;
    Ok(ArgValue::TensorMap {
        array,
        dims,
        strides,
        map,
    })
}

/// The file an argument's value reads (`@x.npy`, `f32:@x.bin`), if any:
/// what an output must never replace.
pub fn input_file(text: &str) -> Option<&std::path::Path> {
    if let Some(rest) = text.trim().strip_prefix("tmap:") {
        // `tmap:TYPE:@file:box=...`.
        let array = rest.split_once(':')?.1;
        let end = array
            .find(":box=")
            .or_else(|| array.find(':'))
            .unwrap_or(array.len());
        return array
            .get(..end)?
            .trim()
            .strip_prefix('@')
            .map(std::path::Path::new);
    }
    let (_, rest) = split_type_prefix(text);
    rest.trim().strip_prefix('@').map(std::path::Path::new)
}

/// `f32:iota:8` → (`Some(f32)`, `iota:8`); anything else is unprefixed.
fn split_type_prefix(text: &str) -> (Option<Scalar>, &str) {
    match text.split_once(':') {
        Some((head, rest)) => match Scalar::from_name(head.trim()) {
            Some(ty) => (Some(ty), rest),
            None => (None, text),
        },
        None => (None, text),
    }
}

/// `u8:iota:8`: a word that is no type, where a type prefix goes.
fn unknown_type_prefix(text: &str) -> Option<&str> {
    let (head, rest) = text.split_once(':')?;
    let word = head.trim();
    let is_word = !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric());
    let is_form = ["zeros", "iota", "fill", "rand", "tmap"].contains(&word);
    (is_word && !is_form && Scalar::from_name(word).is_none() && is_array_form(rest))
        .then_some(word)
}

fn is_array_form(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('@')
        || t.starts_with('[')
        || ["zeros:", "iota:", "fill:", "rand:"]
            .iter()
            .any(|p| t.starts_with(p))
}

const FORMS: &str =
    "@FILE.npy, @FILE (raw little-endian), [1, 2, 3], zeros:N, iota:N, fill:N:V or rand:N:SEED (N a length or a shape such as 512,256)";

/// The little-endian elements of an array form.
pub(super) fn array(elem: Scalar, text: &str) -> Result<Vec<u8>, String> {
    array_shaped(elem, text, &[]).map(|(data, _)| data)
}

/// The little-endian elements of an array form and its shape (outermost
/// first). `raw` lists further `.npy` dtypes taken as the bits of `elem`
/// ([`npy::read_shaped`]).
pub(super) fn array_shaped(
    elem: Scalar,
    text: &str,
    raw: &[&str],
) -> Result<(Vec<u8>, Vec<u64>), String> {
    let t = text.trim();
    if let Some(path) = t.strip_prefix('@') {
        return file(elem, path, raw);
    }
    if let Some(inner) = t.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("the list `{t}` has no closing `]`"))?;
        let data = list(elem, inner)?;
        let n = (data.len() / elem.size().max(1) as usize) as u64;
        return Ok((data, vec![n]));
    }
    let parts: Vec<&str> = t.split(':').collect();
    let form = parts.first().copied().unwrap_or("");
    let expect = |n: usize, usage: &str| {
        if parts.len() == n {
            Ok(())
        } else {
            Err(format!("`{t}` is not of the form `{usage}`"))
        }
    };
    let usage = match form {
        "zeros" => "zeros:N",
        "iota" => "iota:N",
        "fill" => "fill:N:V",
        "rand" => "rand:N:SEED",
        _ => return Err(format!("`{t}` is not an array; the forms are {FORMS}")),
    };
    expect(
        if form == "zeros" || form == "iota" {
            2
        } else {
            3
        },
        usage,
    )?;
    let shape = shape(&parts)?;
    let data = match form {
        "zeros" => {
            let n = count(&parts)?;
            let mut out = reserve(elem, n)?;
            out.resize(n.saturating_mul(elem.size() as usize), 0);
            out
        }
        "iota" => {
            if elem == Scalar::Bool {
                return Err(
                    "`iota` counts, and bool elements cannot; use a list or fill".to_string(),
                );
            }
            let n = count(&parts)?;
            let mut out = reserve(elem, n)?;
            for i in 0..n {
                push(&mut out, elem, iota_bits(elem, i as u64));
            }
            out
        }
        "fill" => {
            let n = count(&parts)?;
            let v = parts.get(2).copied().unwrap_or("");
            let bits = literal::parse(v, elem).map_err(|e| format!("in `{t}`: {e}"))?;
            let mut out = reserve(elem, n)?;
            for _ in 0..n {
                push(&mut out, elem, bits);
            }
            out
        }
        "rand" => {
            let n = count(&parts)?;
            let seed_text = parts.get(2).copied().unwrap_or("");
            let seed = literal::parse(seed_text, Scalar::U64).map_err(|_| {
                format!(
                    "in `{t}`: the seed `{seed_text}` is not a whole number from 0 to {}",
                    u64::MAX
                )
            })?;
            let mut out = reserve(elem, n)?;
            random::fill(&mut out, elem, n, seed);
            out
        }
        _ => return Err(format!("`{t}` is not an array; the forms are {FORMS}")),
    };
    Ok((data, shape))
}

/// The shape of `form:SHAPE[:...]`: `N` or `N0,N1,...`.
fn shape(parts: &[&str]) -> Result<Vec<u64>, String> {
    let text = parts.get(1).copied().unwrap_or("").trim();
    let mut dims = Vec::new();
    for d in text.split(',') {
        let d = d.trim();
        let n = literal::parse(d, Scalar::U64).map_err(|_| {
            if text.contains(',') {
                format!("the dimension `{d}` of the shape `{text}` is not a whole number")
            } else {
                format!("the length `{d}` is not a whole number")
            }
        })?;
        dims.push(n);
    }
    Ok(dims)
}

/// The element count of `form:SHAPE[:...]`.
fn count(parts: &[&str]) -> Result<usize, String> {
    let dims = shape(parts)?;
    let n = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| {
            format!(
                "the shape {} has too many elements",
                tensor::shape_text(&dims)
            )
        })?;
    usize::try_from(n).map_err(|_| format!("the length {n} is too large for this machine"))
}

/// An empty buffer with room for `n` elements, or a clear error when the
/// memory cannot be had (instead of an abort).
fn reserve(elem: Scalar, n: usize) -> Result<Vec<u8>, String> {
    let bytes = n
        .checked_mul(elem.size() as usize)
        .ok_or_else(|| format!("{n} elements of {elem} do not fit in memory"))?;
    memory::check(bytes as u64)
        .map_err(|why| format!("cannot allocate {n} elements of {elem}: {why}"))?;
    let mut v = Vec::new();
    v.try_reserve_exact(bytes)
        .map_err(|_| format!("cannot allocate {bytes} bytes for {n} elements of {elem}"))?;
    Ok(v)
}

/// Appends the low `elem.size()` bytes of `bits`, little-endian.
pub(super) fn push(out: &mut Vec<u8>, elem: Scalar, bits: u64) {
    let bytes = bits.to_le_bytes();
    out.extend_from_slice(bytes.get(..elem.size() as usize).unwrap_or(&bytes));
}

/// Element `i` of `iota`: `i` in the element type (integers wrap, floats
/// round to nearest).
fn iota_bits(elem: Scalar, i: u64) -> u64 {
    match elem {
        Scalar::F32 | Scalar::TF32 => u64::from((i as f32).to_bits()),
        Scalar::E4M3 => u64::from(Fp8::E4M3.encode(i as f64, true)),
        Scalar::E5M2 => u64::from(Fp8::E5M2.encode(i as f64, true)),
        Scalar::F64 => (i as f64).to_bits(),
        Scalar::F16 | Scalar::BF16 => u64::from(literal::half_bits(i as f64, elem)),
        // `i` in both halves.
        Scalar::F16x2 | Scalar::BF16x2 => {
            let h = u64::from(literal::half_bits(i as f64, elem.half_of().unwrap_or(elem)));
            h | h << 16
        }
        _ => i,
    }
}

fn list(elem: Scalar, inner: &str) -> Result<Vec<u8>, String> {
    let mut items: Vec<&str> = inner.split(',').map(str::trim).collect();
    // `[]` and a trailing comma (`[1, 2,]`).
    if items.last().is_some_and(|s| s.is_empty()) {
        items.pop();
    }
    let mut out = reserve(elem, items.len())?;
    for (i, item) in items.iter().enumerate() {
        let bits =
            literal::parse(item, elem).map_err(|e| format!("element {i} of the list: {e}"))?;
        push(&mut out, elem, bits);
    }
    Ok(out)
}

/// `@path`: a `.npy` file (by extension), with its shape, else raw
/// little-endian elements (one-dimensional).
fn file(elem: Scalar, path: &str, raw: &[&str]) -> Result<(Vec<u8>, Vec<u64>), String> {
    if path.is_empty() {
        return Err("`@` needs a file name: `@x.npy` or `@x.bin`".to_string());
    }
    let p = Path::new(path);
    let bytes = crate::input::read_file(p, memory::limit())
        .map_err(|e| format!("cannot read `{path}`: {e}"))?;
    let npy = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if npy {
        // The elements are decoded into a buffer as large as the file.
        memory::check(bytes.len() as u64).map_err(|why| format!("cannot read `{path}`: {why}"))?;
        return npy::read_shaped(&bytes, elem, raw).map_err(|e| format!("`{path}`: {e}"));
    }
    let size = elem.size() as usize;
    if bytes.len() % size != 0 {
        return Err(format!(
            "`{path}` has {} bytes, not a whole number of {elem} elements ({size} bytes each)",
            bytes.len()
        ));
    }
    if elem == Scalar::Bool {
        if let Some(i) = bytes.iter().position(|&b| b > 1) {
            return Err(format!(
                "`{path}`: byte {i} is {}, and a bool element is 0 or 1",
                bytes.get(i).copied().unwrap_or(0)
            ));
        }
    }
    let n = (bytes.len() / size) as u64;
    Ok((bytes, vec![n]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, kind: ParamKind) -> ParamSig {
        ParamSig {
            name: name.into(),
            kind,
        }
    }

    fn arr(elem: Scalar, writable: bool) -> ParamKind {
        ParamKind::Array { elem, writable }
    }

    fn data(v: Result<ArgValue, LaunchError>) -> Vec<u8> {
        match v {
            Ok(ArgValue::Array(a)) => a.data,
            other => panic!("not an array: {other:?}"),
        }
    }

    fn err(param: &ParamSig, text: &str) -> String {
        parse(param, text).unwrap_err().to_string()
    }

    fn f32s(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn scalars() {
        let n = p("n", ParamKind::Scalar(Scalar::U32));
        assert_eq!(
            parse(&n, "1024"),
            Ok(ArgValue::Scalar {
                ty: Scalar::U32,
                bits: 1024
            })
        );
        assert_eq!(
            err(&n, "-1"),
            "invalid value for `n` (u32): `-1` is out of range for u32 (0 to 4294967295)"
        );
        assert_eq!(
            err(&n, "lots"),
            "invalid value for `n` (u32): `lots` is not a u32 literal (for example `1024`)"
        );
        assert_eq!(
            err(&n, "zeros:4"),
            "invalid value for `n` (u32): `zeros:4` is an array, and `n` is a scalar: give a u32 literal"
        );
        let a = p("a", ParamKind::Scalar(Scalar::F32));
        assert_eq!(
            parse(&a, "2.5"),
            Ok(ArgValue::Scalar {
                ty: Scalar::F32,
                bits: u64::from(2.5f32.to_bits())
            })
        );
        assert_eq!(
            err(&a, "f32:iota:3"),
            "invalid value for `a` (f32): `f32:iota:3` is an array, and `a` is a scalar: give an f32 literal"
        );
    }

    #[test]
    fn generated_arrays() {
        let x = p("x", arr(Scalar::F32, false));
        assert_eq!(data(parse(&x, "zeros:3")), f32s(&[0.0; 3]));
        assert_eq!(data(parse(&x, "iota:4")), f32s(&[0.0, 1.0, 2.0, 3.0]));
        assert_eq!(data(parse(&x, "fill:2:1.5")), f32s(&[1.5, 1.5]));
        assert_eq!(data(parse(&x, "fill:1_000:0")).len(), 4000);
        assert_eq!(data(parse(&x, "zeros:0")), Vec::<u8>::new());
        let r = data(parse(&x, "rand:100:7"));
        assert_eq!(r.len(), 400);
        assert_eq!(r, data(parse(&x, "rand:100:7")));
        let i = p("i", arr(Scalar::I32, true));
        assert_eq!(
            data(parse(&i, "iota:3")),
            [0i32, 1, 2]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        assert_eq!(
            data(parse(&i, "fill:2:-7")),
            [-7i32, -7]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        let h = p("h", arr(Scalar::F16, false));
        assert_eq!(data(parse(&h, "iota:3")), [0, 0, 0x00, 0x3c, 0x00, 0x40]);
        let b = p("b", arr(Scalar::Bool, false));
        assert_eq!(data(parse(&b, "fill:2:true")), [1, 1]);
        match parse(&i, "zeros:2") {
            Ok(ArgValue::Array(a)) => {
                assert!(a.writable);
                assert_eq!((a.name.as_str(), a.elem, a.len()), ("i", Scalar::I32, 2));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn generator_errors() {
        let x = p("x", arr(Scalar::F32, false));
        let pre = "invalid value for `x` (global [f32]): ";
        assert_eq!(
            err(&x, "zeros:ten"),
            format!("{pre}the length `ten` is not a whole number")
        );
        assert_eq!(
            err(&x, "zeros:-1"),
            format!("{pre}the length `-1` is not a whole number")
        );
        assert_eq!(
            err(&x, "zeros"),
            format!("{pre}`zeros` is not of the form `zeros:N`")
        );
        assert_eq!(
            err(&x, "fill:4"),
            format!("{pre}`fill:4` is not of the form `fill:N:V`")
        );
        assert_eq!(
            err(&x, "fill:4:big"),
            format!("{pre}in `fill:4:big`: `big` is not an f32 literal (for example `1.5`)")
        );
        assert_eq!(
            err(&x, "fill:4:1e40"),
            format!("{pre}in `fill:4:1e40`: `1e40` is too large for f32 (largest finite value 3.4028235e38)")
        );
        assert_eq!(
            err(&x, "rand:4:x"),
            format!("{pre}in `rand:4:x`: the seed `x` is not a whole number from 0 to 18446744073709551615")
        );
        assert_eq!(
            err(&x, "ones:4"),
            format!("{pre}`ones:4` is not an array; the forms are {FORMS}")
        );
        assert_eq!(
            err(&x, "3"),
            format!("{pre}`3` is not an array; the forms are {FORMS}")
        );
        assert_eq!(
            err(&x, "i32:zeros:4"),
            format!("{pre}the type prefix `i32:` says i32, but the elements are f32")
        );
        assert_eq!(data(parse(&x, "f32:zeros:1")), f32s(&[0.0]));
        assert!(
            err(&x, "zeros:18446744073709551615").contains("do not fit in memory")
                || err(&x, "zeros:18446744073709551615").contains("cannot allocate")
        );
        let b = p("b", arr(Scalar::Bool, false));
        assert_eq!(
            err(&b, "iota:2"),
            "invalid value for `b` (global [bool]): `iota` counts, and bool elements cannot; use a list or fill"
        );
    }

    #[test]
    fn lists() {
        let x = p("x", arr(Scalar::F32, false));
        assert_eq!(data(parse(&x, "[1, 2.5, -3]")), f32s(&[1.0, 2.5, -3.0]));
        assert_eq!(data(parse(&x, "[1,2,]")), f32s(&[1.0, 2.0]));
        assert_eq!(data(parse(&x, "[]")), Vec::<u8>::new());
        assert_eq!(data(parse(&x, " [ 4 ] ")), f32s(&[4.0]));
        assert_eq!(
            err(&x, "[1, two]"),
            "invalid value for `x` (global [f32]): element 1 of the list: `two` is not an f32 literal (for example `1.5`)"
        );
        assert_eq!(
            err(&x, "[1, 2"),
            "invalid value for `x` (global [f32]): the list `[1, 2` has no closing `]`"
        );
        let u = p("u", arr(Scalar::U32, false));
        assert_eq!(
            err(&u, "[1, -2]"),
            "invalid value for `u` (global [u32]): element 1 of the list: `-2` is out of range for u32 (0 to 4294967295)"
        );
        assert!(parse(&u, "[1,,2]").is_err());
    }

    #[test]
    fn files() {
        let dir = tempfile::tempdir().unwrap();
        let x = p("x", arr(Scalar::F32, false));
        let raw = dir.path().join("x.bin");
        std::fs::write(&raw, f32s(&[1.0, 2.0])).unwrap();
        assert_eq!(
            data(parse(&x, &format!("@{}", raw.display()))),
            f32s(&[1.0, 2.0])
        );
        let plain = dir.path().join("x");
        std::fs::write(&plain, f32s(&[3.0])).unwrap();
        assert_eq!(
            data(parse(&x, &format!("@{}", plain.display()))),
            f32s(&[3.0])
        );
        let odd = dir.path().join("odd.bin");
        std::fs::write(&odd, [0u8; 10]).unwrap();
        assert_eq!(
            err(&x, &format!("@{}", odd.display())),
            format!(
                "invalid value for `x` (global [f32]): `{}` has 10 bytes, not a whole number of f32 elements (4 bytes each)",
                odd.display()
            )
        );
        let npy = dir.path().join("x.npy");
        std::fs::write(&npy, npy::write(Scalar::F32, &f32s(&[5.0, 6.0])).unwrap()).unwrap();
        assert_eq!(
            data(parse(&x, &format!("@{}", npy.display()))),
            f32s(&[5.0, 6.0])
        );
        let ints = dir.path().join("i.NPY");
        std::fs::write(&ints, npy::write(Scalar::I32, &[0; 8]).unwrap()).unwrap();
        assert_eq!(
            err(&x, &format!("@{}", ints.display())),
            format!(
                "invalid value for `x` (global [f32]): `{}`: its dtype is '<i4', but the parameter needs float32 ('<f4')",
                ints.display()
            )
        );
        let missing = dir.path().join("missing.npy");
        assert_eq!(
            err(&x, &format!("@{}", missing.display())),
            format!(
                "invalid value for `x` (global [f32]): cannot read `{}`: no such file",
                missing.display()
            )
        );
        assert_eq!(
            err(&x, "@"),
            "invalid value for `x` (global [f32]): `@` needs a file name: `@x.npy` or `@x.bin`"
        );
        let b = p("b", arr(Scalar::Bool, false));
        let bad = dir.path().join("b.bin");
        std::fs::write(&bad, [0u8, 1, 2]).unwrap();
        assert_eq!(
            err(&b, &format!("@{}", bad.display())),
            format!(
                "invalid value for `b` (global [bool]): `{}`: byte 2 is 2, and a bool element is 0 or 1",
                bad.display()
            )
        );
    }

    #[test]
    fn ptx_pointers_take_a_type_prefix() {
        let q = p("k_param_1", ParamKind::PtxU64);
        assert_eq!(
            parse(&q, "u7:iota:3").unwrap_err().to_string(),
            "invalid value for `k_param_1` (PTX .u64: a pointer or a 64-bit integer): `u7` is not an element type: the types are bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64, tf32, e4m3, e5m2, f16x2 and bf16x2, as in `f32:iota:3`"
        );
        match parse(&q, "u8:iota:3") {
            Ok(ArgValue::Array(a)) => assert_eq!((a.elem, a.data), (Scalar::U8, vec![0, 1, 2])),
            other => panic!("{other:?}"),
        }
        match parse(&q, "f32:iota:3") {
            Ok(ArgValue::Array(a)) => {
                assert_eq!((a.elem, a.writable), (Scalar::F32, true));
                assert_eq!(a.data, f32s(&[0.0, 1.0, 2.0]));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse(&q, "12"),
            Ok(ArgValue::Scalar {
                ty: Scalar::U64,
                bits: 12
            })
        );
        assert_eq!(
            err(&q, "iota:3"),
            "invalid value for `k_param_1` (PTX .u64: a pointer or a 64-bit integer): a PTX pointer carries no element type: write it before the array, as in `f32:iota:3`"
        );
        assert_eq!(
            err(&q, "x"),
            "invalid value for `k_param_1` (PTX .u64: a pointer or a 64-bit integer): `x` is neither a 64-bit integer nor a typed array such as `f32:zeros:1024`"
        );
        assert!(parse(&q, "u7:zeros:1").is_err());
    }

    fn bf16_map(writable: bool) -> TensorMapSig {
        TensorMapSig {
            elem: crate::launch::TensorElem::BF16,
            rank: 2,
            box_dims: [128, 64, 0, 0, 0],
            swizzle: crate::launch::Swizzle::B128,
            fill: crate::launch::OobFill::Zero,
            l2_promotion: 256,
            writable,
        }
    }

    #[test]
    fn generated_forms_take_shapes() {
        let x = p("x", arr(Scalar::F32, false));
        assert_eq!(data(parse(&x, "zeros:2,3")), f32s(&[0.0; 6]));
        assert_eq!(data(parse(&x, "iota:2,2")), f32s(&[0.0, 1.0, 2.0, 3.0]));
        assert_eq!(data(parse(&x, "rand:3,4:7")), data(parse(&x, "rand:12:7")));
        assert_eq!(
            err(&x, "zeros:2,x"),
            "invalid value for `x` (global [f32]): the dimension `x` of the shape `2,x` is not a whole number"
        );
    }

    #[test]
    fn tensor_arguments() {
        let a = p("a", ParamKind::TensorMap(bf16_map(false)));
        match parse(&a, "rand:512,256:3") {
            Ok(ArgValue::TensorMap {
                array,
                dims,
                strides,
                map,
            }) => {
                assert_eq!((dims, strides), (vec![512, 256], vec![512]));
                assert_eq!((array.name.as_str(), array.len()), ("a", 512 * 256));
                assert_eq!((array.elem, array.writable), (Scalar::BF16, false));
                assert_eq!(map, bf16_map(false));
            }
            other => panic!("{other:?}"),
        }
        let c = p("c", ParamKind::TensorMap(bf16_map(true)));
        assert!(
            matches!(parse(&c, "zeros:8,64"), Ok(ArgValue::TensorMap { array, .. }) if array.writable)
        );
        assert_eq!(
            err(&a, "zeros:4096"),
            "invalid value for `a` (tensor [bf16; 128, 64]): globalDim: the map has rank 2 but the array's shape [4096] has 1 dimension"
        );
        assert_eq!(
            err(&a, "zeros:8,60"),
            "invalid value for `a` (tensor [bf16; 128, 64]): globalStrides: the stride of dimension 0 is 120 bytes; each must be a multiple of 16 below 2^40 (the innermost dimension of a dense tensor must take a multiple of 16 bytes: 8 elements of bf16)"
        );
        assert_eq!(
            err(&a, "f32:zeros:8,64"),
            "invalid value for `a` (tensor [bf16; 128, 64]): the type prefix `f32:` says f32, but the elements are bf16"
        );
        assert!(err(&a, "tmap:bf16:zeros:8,64:box=8,64")
            .contains("`tmap:` gives the map of a .ptx input"));
        let m = p("m", ParamKind::PtxTensorMap);
        assert!(matches!(
            parse(&m, "tmap:f32:iota:16,32:box=8,32:swizzle=128"),
            Ok(ArgValue::TensorMap { .. })
        ));
        assert!(err(&m, "f32:zeros:16")
            .contains("a tensor-map parameter takes `tmap:TYPE:ARRAY:box=...`"));
        let q = p("q", ParamKind::PtxU64);
        assert!(matches!(
            parse(&q, "tmap:u8:zeros:16,32:box=16,32"),
            Ok(ArgValue::TensorMap { .. })
        ));
        assert_eq!(
            input_file("tmap:bf16:@a.npy:box=8,64"),
            Some(Path::new("a.npy"))
        );
    }

    #[test]
    fn npy_tensors_keep_their_shape_and_named_dtypes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        std::fs::write(
            &path,
            npy::write_shaped(Scalar::BF16, &[0u8; 8 * 64 * 2], &[8, 64]).unwrap(),
        )
        .unwrap();
        let a = p("a", ParamKind::TensorMap(bf16_map(false)));
        match parse(&a, &format!("@{}", path.display())) {
            Ok(ArgValue::TensorMap { dims, .. }) => assert_eq!(dims, [8, 64]),
            other => panic!("{other:?}"),
        }
        // ml_dtypes' bfloat16 is saved as raw 2-byte voids.
        let mut header = "{'descr': '<V2', 'fortran_order': False, 'shape': (8, 64), }".to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut file = b"\x93NUMPY\x01\x00".to_vec();
        file.extend_from_slice(&(header.len() as u16).to_le_bytes());
        file.extend_from_slice(header.as_bytes());
        file.extend((0..8 * 64).flat_map(|i: u16| (0x3f80 + i % 3).to_le_bytes()));
        std::fs::write(&path, &file).unwrap();
        match parse(&a, &format!("@{}", path.display())) {
            Ok(ArgValue::TensorMap { dims, array, .. }) => {
                assert_eq!(dims, [8, 64]);
                assert_eq!(&array.data[..4], &[0x80, 0x3f, 0x81, 0x3f]);
            }
            other => panic!("{other:?}"),
        }
        // A plain array of bf16 does not take the void dtype.
        let x = p("x", arr(Scalar::BF16, false));
        assert!(err(&x, &format!("@{}", path.display())).contains("its dtype is '<V2'"));
    }

    mod generated {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            /// Any text for any parameter kind is a value or a usage error.
            #[test]
            fn any_text_is_a_value_or_an_error(
                text in "(tmap:|tmap:bf16:|tmap:e4m3:|bytes:|struct:)?(f32:|u8:|bool:)?(zeros|iota|fill|rand|\\[|@)?[-:0-9,=\\] a-z.]{0,20}",
                kind in 0usize..7,
                elem in 0usize..Scalar::ALL.len(),
            ) {
                // Keep generated arrays small: no long runs of digits.
                let longest = text
                    .split(|c: char| !c.is_ascii_digit())
                    .map(str::len)
                    .max()
                    .unwrap_or(0);
                prop_assume!(longest <= 5);
                let elem = Scalar::ALL[elem];
                let kind = match kind {
                    0 => ParamKind::Scalar(elem),
                    1 => ParamKind::Array { elem, writable: false },
                    2 => ParamKind::Array { elem, writable: true },
                    3 => ParamKind::PtxTensorMap,
                    4 => ParamKind::TensorMap(bf16_map(false)),
                    5 => ParamKind::PtxBytes { size: 12 },
                    _ => ParamKind::PtxU64,
                };
                let q = p("q", kind);
                match parse(&q, &text) {
                    Ok(ArgValue::Array(a)) => prop_assert_eq!(a.data.len() % a.elem.size() as usize, 0),
                    Ok(ArgValue::Bytes(b)) => prop_assert!(b.len() == 12 || b.len() == 128),
                    Ok(ArgValue::Scalar { .. } | ArgValue::TensorMap { .. }) => {}
                    Err(e) => prop_assert!(e.to_string().starts_with("invalid value for `q` ")),
                }
            }
        }
    }
}
