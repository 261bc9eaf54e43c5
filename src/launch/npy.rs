//! NumPy `.npy` files for array arguments (`@x.npy`) and outputs (`--out`),
//! through the `npyz` crate.
//!
//! The dtype of each element type (NumPy has no `bfloat16`: a `bf16` array
//! is stored as its bits, `<u2`, which `np.load(p).view(ml_dtypes.bfloat16)`
//! reads back):
//!
//! | kdsl | dtype |
//! | --- | --- |
//! | `bool` | `\|b1` |
//! | `i8`, `u8`, `i16`, `u16` | `\|i1`, `\|u1`, `<i2`, `<u2` |
//! | `i32`, `u32`, `i64`, `u64` | `<i4`, `<u4`, `<i8`, `<u8` |
//! | `f16`, `f32`, `f64` | `<f2`, `<f4`, `<f8` |
//! | `bf16` | `<u2` (the bits) |
//! | `f16x2`, `bf16x2` | those of `f16`, `bf16`: two halves per element, low first |
//!
//! Input may be of either byte order and of any shape (read in C order);
//! output is little-endian and one-dimensional.

use crate::types::Scalar;
use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};

/// The NumPy type code and size of an element type.
fn code(elem: Scalar) -> (TypeChar, u64) {
    match elem {
        Scalar::Bool => (TypeChar::Bool, 1),
        Scalar::I8 => (TypeChar::Int, 1),
        Scalar::U8 => (TypeChar::Uint, 1),
        Scalar::I16 => (TypeChar::Int, 2),
        Scalar::U16 => (TypeChar::Uint, 2),
        Scalar::I32 => (TypeChar::Int, 4),
        Scalar::I64 => (TypeChar::Int, 8),
        Scalar::U32 => (TypeChar::Uint, 4),
        Scalar::U64 => (TypeChar::Uint, 8),
        Scalar::BF16 => (TypeChar::Uint, 2),
        Scalar::F16 => (TypeChar::Float, 2),
        Scalar::F32 => (TypeChar::Float, 4),
        Scalar::F64 => (TypeChar::Float, 8),
        // The raw bits of each fp8 element; tf32 data is f32 data.
        Scalar::E4M3 | Scalar::E5M2 => (TypeChar::Uint, 1),
        Scalar::TF32 => (TypeChar::Float, 4),
        // A pair is its two halves.
        Scalar::F16x2 => (TypeChar::Float, 2),
        Scalar::BF16x2 => (TypeChar::Uint, 2),
    }
}

/// The NumPy name of an element type's dtype, for messages.
pub fn numpy_name(elem: Scalar) -> &'static str {
    match elem {
        Scalar::Bool => "bool",
        Scalar::I8 => "int8",
        Scalar::U8 => "uint8",
        Scalar::I16 => "int16",
        Scalar::U16 => "uint16",
        Scalar::I32 => "int32",
        Scalar::U32 => "uint32",
        Scalar::I64 => "int64",
        Scalar::U64 => "uint64",
        Scalar::F16 => "float16",
        Scalar::BF16 => "uint16 (the bits of bfloat16)",
        Scalar::F32 => "float32",
        Scalar::F64 => "float64",
        Scalar::E4M3 => "uint8 (the bits of e4m3)",
        Scalar::E5M2 => "uint8 (the bits of e5m2)",
        Scalar::TF32 => "float32 (tf32 data)",
        Scalar::F16x2 => "float16 (two per f16x2)",
        Scalar::BF16x2 => "uint16 (the bits of bfloat16, two per bf16x2)",
    }
}

/// The elements of a `.npy` file as little-endian bytes of `elem`. The
/// error is a phrase naming what is wrong with the file.
pub fn read(bytes: &[u8], elem: Scalar) -> Result<Vec<u8>, String> {
    read_shaped(bytes, elem, &[]).map(|(data, _)| data)
}

/// [`read`], with the array's shape (C order, outermost first). `raw`
/// lists further dtypes (`<V2`, `<f1`: ml_dtypes' named dtypes, which
/// NumPy saves as raw bytes) whose elements are taken as the bits of
/// `elem`, when they have its size.
pub fn read_shaped(
    bytes: &[u8],
    elem: Scalar,
    raw: &[&str],
) -> Result<(Vec<u8>, Vec<u64>), String> {
    let header = check_shape(bytes)?;
    let (want_char, want_size) = code(elem);
    if let Some(h) = &header {
        if let Some(descr) = h.descr.as_deref().filter(|d| raw.contains(d)) {
            return read_raw(bytes, h, descr, want_size);
        }
    }
    let file = NpyFile::new(bytes).map_err(|e| format!("it is not a valid .npy file ({e})"))?;
    let ts = match file.dtype() {
        DType::Plain(ts) => ts,
        other => {
            return Err(format!(
                "its dtype {} is a structured type; an array of {} is needed",
                other.descr(),
                numpy_name(elem)
            ))
        }
    };
    if ts.type_char() != want_char || ts.size_field() != want_size {
        // One-byte types have no byte order: NumPy writes `|u1`.
        let order = if want_size == 1 { '|' } else { '<' };
        let also: String = raw.iter().map(|d| format!(" or '{d}'")).collect();
        return Err(format!(
            "its dtype is '{ts}', but the parameter needs {} ('{order}{}{}'{also})",
            numpy_name(elem),
            want_char.to_str(),
            want_size
        ));
    }
    if file.order() == Order::Fortran && file.shape().iter().filter(|&&d| d > 1).count() > 1 {
        return Err(
            "it is in Fortran order; save a C-ordered array (`np.ascontiguousarray`)".to_string(),
        );
    }
    // What is allocated follows the file, not what its header claims.
    if let Some(h) = &header {
        let data = bytes.len().saturating_sub(h.start) as u64;
        let claimed = h.elements.saturating_mul(want_size);
        if claimed > data {
            return Err(format!(
                "its header says {} elements ({claimed} bytes), but the file has {data} bytes of data",
                h.elements
            ));
        }
    }
    let shape = file.shape().to_vec();
    let len = usize::try_from(file.len()).map_err(|_| "it is too large".to_string())?;
    let mut out = Vec::new();
    out.try_reserve_exact(len.saturating_mul(want_size as usize))
        .map_err(|_| format!("its {len} elements do not fit in memory"))?;
    let o = &mut out;
    match elem {
        Scalar::Bool => decode(file, o, |b: bool| [u8::from(b)])?,
        Scalar::I8 => decode(file, o, i8::to_le_bytes)?,
        Scalar::U8 | Scalar::E4M3 | Scalar::E5M2 => decode(file, o, u8::to_le_bytes)?,
        Scalar::I16 => decode(file, o, i16::to_le_bytes)?,
        Scalar::U16 | Scalar::BF16 | Scalar::BF16x2 => decode(file, o, u16::to_le_bytes)?,
        Scalar::I32 => decode(file, o, i32::to_le_bytes)?,
        Scalar::U32 => decode(file, o, u32::to_le_bytes)?,
        Scalar::I64 => decode(file, o, i64::to_le_bytes)?,
        Scalar::U64 => decode(file, o, u64::to_le_bytes)?,
        Scalar::F16 | Scalar::F16x2 => decode(file, o, |x: half::f16| x.to_bits().to_le_bytes())?,
        Scalar::F32 | Scalar::TF32 => decode(file, o, f32::to_le_bytes)?,
        Scalar::F64 => decode(file, o, f64::to_le_bytes)?,
    }
    if elem.is_packed() && out.len() % 4 != 0 {
        return Err(format!(
            "it holds an odd number of halves; an array of {elem} needs two per element"
        ));
    }
    Ok((out, shape))
}

/// The data of a file whose dtype is raw bytes of the element's size,
/// taken as they are (little-endian; a one-byte dtype has no order).
fn read_raw(
    bytes: &[u8],
    h: &Header,
    descr: &str,
    want_size: u64,
) -> Result<(Vec<u8>, Vec<u64>), String> {
    let size: u64 = descr.get(2..).and_then(|n| n.parse().ok()).unwrap_or(0);
    if size != want_size {
        return Err(format!(
            "its dtype '{descr}' has {size}-byte elements, and the parameter's have {want_size}"
        ));
    }
    if descr.starts_with('>') && size > 1 {
        return Err(format!(
            "its dtype '{descr}' is big-endian; save it little-endian"
        ));
    }
    if h.fortran && h.shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(
            "it is in Fortran order; save a C-ordered array (`np.ascontiguousarray`)".to_string(),
        );
    }
    let n = usize::try_from(h.elements.saturating_mul(size))
        .map_err(|_| "it is too large".to_string())?;
    let data = bytes
        .get(h.start..h.start.saturating_add(n))
        .filter(|d| d.len() == n)
        .ok_or_else(|| {
            format!(
                "its header says {} elements ({n} bytes), but the file has {} bytes of data",
                h.elements,
                bytes.len().saturating_sub(h.start)
            )
        })?;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| format!("its {n} bytes do not fit in memory"))?;
    out.extend_from_slice(data);
    Ok((out, h.shape.clone()))
}

/// What [`check_shape`] read from a header.
struct Header {
    /// Where the data starts.
    start: usize,
    /// The elements the shape says.
    elements: u64,
    shape: Vec<u64>,
    descr: Option<String>,
    fortran: bool,
}

/// npyz multiplies the dimensions of the shape without checking for
/// overflow (a panic, or in a release build a wrong length), so a damaged
/// or hostile header is checked here first: every dimension must be an
/// integer and their product must fit in 64 bits. Headers this cannot
/// read are left to npyz, which reports them. `Some`: where the data
/// starts, the shape and how many elements it holds, the dtype's text.
fn check_shape(bytes: &[u8]) -> Result<Option<Header>, String> {
    let (start, len): (usize, Option<usize>) = match bytes.get(6) {
        Some(1) => (
            10,
            bytes
                .get(8..10)
                .and_then(|b| <[u8; 2]>::try_from(b).ok())
                .map(|b| usize::from(u16::from_le_bytes(b))),
        ),
        Some(2 | 3) => (
            12,
            bytes
                .get(8..12)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .and_then(|b| usize::try_from(u32::from_le_bytes(b)).ok()),
        ),
        _ => return Ok(None),
    };
    let Some(text) = len
        .and_then(|n| bytes.get(start..start.saturating_add(n)))
        .and_then(|t| std::str::from_utf8(t).ok())
    else {
        return Ok(None);
    };
    let Ok(py_literal::Value::Dict(entries)) = text.trim().parse::<py_literal::Value>() else {
        return Ok(None);
    };
    let entry = |name: &str| {
        entries.iter().find_map(|(k, v)| match k {
            py_literal::Value::String(s) if s == name => Some(v),
            _ => None,
        })
    };
    let dims = match entry("shape") {
        Some(py_literal::Value::Tuple(d) | py_literal::Value::List(d)) => d,
        _ => return Ok(None),
    };
    let descr = match entry("descr") {
        Some(py_literal::Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let fortran = matches!(
        entry("fortran_order"),
        Some(py_literal::Value::Boolean(true))
    );
    let mut total: u64 = 1;
    let mut shape = Vec::new();
    for d in dims {
        let n = match d {
            py_literal::Value::Integer(n) => u64::try_from(n).ok(),
            _ => None,
        };
        let Some(n) = n else {
            return Err("its shape is not a list of sizes".to_string());
        };
        total = total
            .checked_mul(n)
            .ok_or_else(|| "its shape has more elements than fit in memory".to_string())?;
        shape.push(n);
    }
    Ok(len.map(|n| Header {
        start: start.saturating_add(n),
        elements: total,
        shape,
        descr,
        fortran,
    }))
}

/// Appends the elements of `file`, each as `le` writes it: read one by
/// one into `out` (reserved for them), never into a vector of their own.
fn decode<T: npyz::Deserialize, const N: usize>(
    file: NpyFile<&[u8]>,
    out: &mut Vec<u8>,
    le: impl Fn(T) -> [u8; N],
) -> Result<(), String> {
    let bad = |e: &dyn std::fmt::Display| format!("its data cannot be read ({e})");
    for x in file.data::<T>().map_err(|e| bad(&e))? {
        out.extend_from_slice(&le(x.map_err(|e| bad(&e))?));
    }
    Ok(())
}

/// A one-dimensional `.npy` file of the elements `data` (little-endian
/// bytes of `elem`; a trailing partial element is ignored).
pub fn write(elem: Scalar, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let n = data.len() as u64 / u64::from(elem.size().max(1));
    write_shaped(elem, data, &[n])
}

/// A `.npy` file of the elements `data` with `shape` (C order, outermost
/// first; its product must be the number of elements).
pub fn write_shaped(elem: Scalar, data: &[u8], shape: &[u64]) -> std::io::Result<Vec<u8>> {
    if let Some(half) = elem.half_of() {
        // Its halves, two per element: the shape gains a last dimension.
        let mut halves = shape.to_vec();
        halves.push(2);
        return write_shaped(half, data, &halves);
    }
    let size = elem.size() as usize;
    let chunks = data.chunks_exact(size.max(1));
    let s = shape;
    match elem {
        Scalar::Bool => encode(chunks.map(|c| c.first().is_some_and(|&b| b != 0)), s),
        Scalar::I8 => encode(chunks.map(|c| i8::from_le_bytes(word(c))), s),
        Scalar::U8 | Scalar::E4M3 | Scalar::E5M2 => {
            encode(chunks.map(|c| u8::from_le_bytes(word(c))), s)
        }
        Scalar::I16 => encode(chunks.map(|c| i16::from_le_bytes(word(c))), s),
        Scalar::U16 => encode(chunks.map(|c| u16::from_le_bytes(word(c))), s),
        Scalar::I32 => encode(chunks.map(|c| i32::from_le_bytes(word(c))), s),
        Scalar::U32 => encode(chunks.map(|c| u32::from_le_bytes(word(c))), s),
        Scalar::I64 => encode(chunks.map(|c| i64::from_le_bytes(word(c))), s),
        Scalar::U64 => encode(chunks.map(|c| u64::from_le_bytes(word(c))), s),
        Scalar::BF16 => encode(chunks.map(|c| u16::from_le_bytes(word(c))), s),
        Scalar::F16 => encode(chunks.map(|c| half::f16::from_le_bytes(word(c))), s),
        Scalar::F32 | Scalar::TF32 => encode(chunks.map(|c| f32::from_le_bytes(word(c))), s),
        Scalar::F64 => encode(chunks.map(|c| f64::from_le_bytes(word(c))), s),
        Scalar::F16x2 | Scalar::BF16x2 => Err(std::io::Error::other("a packed pair")),
    }
}

/// The first `N` bytes of `c` (which `chunks_exact` makes exactly `N` long).
fn word<const N: usize>(c: &[u8]) -> [u8; N] {
    let mut w = [0u8; N];
    for (d, s) in w.iter_mut().zip(c) {
        *d = *s;
    }
    w
}

fn encode<T: npyz::AutoSerialize>(
    items: impl ExactSizeIterator<Item = T>,
    shape: &[u64],
) -> std::io::Result<Vec<u8>> {
    let len = items.len() as u64;
    let shape = if shape.iter().product::<u64>() == len {
        shape.to_vec()
    } else {
        vec![len]
    };
    let mut buf = Vec::new();
    let mut w = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut buf)
        .begin_nd()?;
    w.extend(items)?;
    w.finish()?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_travel_as_their_halves() {
        let halves: Vec<u16> = vec![0x3c00, 0xc000, 0x7e00, 0x0001];
        let data = le(&halves, u16::to_le_bytes);
        let file = write(Scalar::F16x2, &data).expect("write");
        // Two f16x2 elements: a float16 array of shape (2, 2).
        let (back, shape) = read_shaped(&file, Scalar::F16x2, &[]).expect("read");
        assert_eq!((back, shape), (data.clone(), vec![2, 2]));
        // Read as f16 too; an odd count of halves is no array of pairs.
        assert_eq!(read(&file, Scalar::F16).expect("f16"), data);
        let odd = write(Scalar::F16, &data[..6]).expect("write");
        let e = read(&odd, Scalar::F16x2).unwrap_err();
        assert!(e.contains("odd number of halves"), "{e}");
        let bf = write(Scalar::BF16x2, &data).expect("write");
        assert_eq!(read(&bf, Scalar::BF16x2).expect("bf16x2"), data);
        assert!(read(&bf, Scalar::F16x2).is_err());
    }

    fn le<T: Copy, const N: usize>(xs: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        xs.iter().flat_map(|&x| f(x)).collect()
    }

    #[test]
    fn every_element_type_round_trips() {
        let cases: Vec<(Scalar, Vec<u8>)> = vec![
            (Scalar::Bool, vec![1, 0, 1]),
            (Scalar::I8, le(&[-1i8, 7, i8::MIN], i8::to_le_bytes)),
            (Scalar::U8, vec![0, 255, 17]),
            (Scalar::I16, le(&[-2i16, i16::MAX], i16::to_le_bytes)),
            (Scalar::U16, le(&[u16::MAX, 9], u16::to_le_bytes)),
            (Scalar::I32, le(&[-1i32, 7, i32::MIN], i32::to_le_bytes)),
            (Scalar::U32, le(&[1u32, u32::MAX], u32::to_le_bytes)),
            (Scalar::I64, le(&[-5i64], i64::to_le_bytes)),
            (Scalar::U64, le(&[u64::MAX, 3], u64::to_le_bytes)),
            (Scalar::F16, le(&[0x3c00u16, 0xc000], u16::to_le_bytes)),
            (Scalar::BF16, le(&[0x3f80u16], u16::to_le_bytes)),
            (
                Scalar::F32,
                le(&[1.5f32, -0.0, f32::INFINITY], f32::to_le_bytes),
            ),
            (Scalar::F64, le(&[std::f64::consts::PI], f64::to_le_bytes)),
        ];
        for (elem, data) in cases {
            let file = write(elem, &data).unwrap();
            assert!(file.starts_with(b"\x93NUMPY"), "{elem}");
            assert_eq!(read(&file, elem).unwrap(), data, "{elem}");
        }
        let empty = write(Scalar::F32, &[]).unwrap();
        assert_eq!(read(&empty, Scalar::F32).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn the_header_is_what_numpy_writes() {
        let file = write(Scalar::F32, &le(&[1.0f32, 2.0], f32::to_le_bytes)).unwrap();
        let text = String::from_utf8_lossy(&file);
        assert!(text.contains("'descr': '<f4'"), "{text}");
        assert!(text.contains("'fortran_order': False"), "{text}");
        assert!(text.contains("'shape': (2,"), "{text}");
        let bf = write(Scalar::BF16, &[0x80, 0x3f]).unwrap();
        assert!(String::from_utf8_lossy(&bf).contains("'descr': '<u2'"));
        let b = write(Scalar::Bool, &[1]).unwrap();
        assert!(String::from_utf8_lossy(&b).contains("'descr': '|b1'"));
        for (elem, descr) in [
            (Scalar::U8, "'|u1'"),
            (Scalar::I8, "'|i1'"),
            (Scalar::U16, "'<u2'"),
            (Scalar::I16, "'<i2'"),
        ] {
            let f = write(elem, &[1, 2]).unwrap();
            let text = String::from_utf8_lossy(&f).into_owned();
            assert!(
                text.contains(&format!("'descr': {descr}")),
                "{elem}: {text}"
            );
        }
    }

    #[test]
    fn a_wrong_dtype_says_which_is_needed() {
        let file = write(Scalar::I32, &le(&[1i32], i32::to_le_bytes)).unwrap();
        assert_eq!(
            read(&file, Scalar::F32).unwrap_err(),
            "its dtype is '<i4', but the parameter needs float32 ('<f4')"
        );
        assert_eq!(
            read(&file, Scalar::U32).unwrap_err(),
            "its dtype is '<i4', but the parameter needs uint32 ('<u4')"
        );
        let bytes = write(Scalar::U8, &[1, 2]).unwrap();
        assert_eq!(
            read(&bytes, Scalar::I8).unwrap_err(),
            "its dtype is '|u1', but the parameter needs int8 ('|i1')"
        );
        assert_eq!(
            read(&file, Scalar::U8).unwrap_err(),
            "its dtype is '<i4', but the parameter needs uint8 ('|u1')"
        );
        let f64s = write(Scalar::F64, &le(&[1.0f64], f64::to_le_bytes)).unwrap();
        assert_eq!(
            read(&f64s, Scalar::F32).unwrap_err(),
            "its dtype is '<f8', but the parameter needs float32 ('<f4')"
        );
        assert!(read(b"not numpy", Scalar::F32)
            .unwrap_err()
            .starts_with("it is not a valid .npy file"));
    }

    /// A file as NumPy writes it by hand: big-endian, 2-D, or Fortran.
    fn handmade(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        // A structured dtype is a Python list, written unquoted.
        let descr = if descr.starts_with('[') {
            descr.to_string()
        } else {
            format!("'{descr}'")
        };
        let mut header = format!(
            "{{'descr': {descr}, 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    /// A header that claims more elements than the file holds is refused
    /// before anything is allocated for them.
    #[test]
    fn a_header_claiming_more_than_the_data_is_refused() {
        let file = handmade("<f4", false, "(1000000000,)", &[0; 16]);
        assert_eq!(
            read(&file, Scalar::F32).unwrap_err(),
            "its header says 1000000000 elements (4000000000 bytes), but the file has 16 bytes of data"
        );
    }

    #[test]
    fn big_endian_and_two_dimensional_input() {
        let be = handmade(">f4", false, "(2,)", &[0x3f, 0xc0, 0, 0, 0x40, 0, 0, 0]);
        assert_eq!(
            read(&be, Scalar::F32).unwrap(),
            le(&[1.5f32, 2.0], f32::to_le_bytes)
        );
        let m = handmade(
            "<u4",
            false,
            "(2, 2)",
            &le(&[1u32, 2, 3, 4], u32::to_le_bytes),
        );
        assert_eq!(
            read(&m, Scalar::U32).unwrap(),
            le(&[1u32, 2, 3, 4], u32::to_le_bytes)
        );
        let f = handmade(
            "<u4",
            true,
            "(2, 2)",
            &le(&[1u32, 2, 3, 4], u32::to_le_bytes),
        );
        assert_eq!(
            read(&f, Scalar::U32).unwrap_err(),
            "it is in Fortran order; save a C-ordered array (`np.ascontiguousarray`)"
        );
        // A one-dimensional Fortran array is the same as a C one.
        let f1 = handmade("<u4", true, "(2,)", &le(&[1u32, 2], u32::to_le_bytes));
        assert!(read(&f1, Scalar::U32).is_ok());
        let short = handmade("<u4", false, "(3,)", &le(&[1u32], u32::to_le_bytes));
        assert_eq!(
            read(&short, Scalar::U32).unwrap_err(),
            "its header says 3 elements (12 bytes), but the file has 4 bytes of data"
        );
        let rec = handmade("[('a', '<f4')]", false, "(1,)", &[0; 4]);
        let e = read(&rec, Scalar::F32).unwrap_err();
        assert!(e.contains("structured"), "{e}");
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Damaged files are errors, never panics or huge allocations.
        #[test]
        fn mutated_files_never_panic(
            edits in proptest::collection::vec((0usize..200, any::<u8>()), 1..8),
            cut in 0usize..200,
            elem in 0usize..Scalar::ALL.len(),
        ) {
            let elem = Scalar::ALL[elem];
            let data: Vec<u8> = (0..(16 * elem.size() as usize)).map(|i| i as u8 & 1).collect();
            let mut file = write(elem, &data).unwrap();
            for (at, b) in edits {
                let n = file.len();
                file[at % n] = b;
            }
            file.truncate(cut.max(1).min(file.len()) + file.len().saturating_sub(200));
            let _ = read(&file, elem);
        }

        /// Headers that claim enormous shapes.
        #[test]
        fn enormous_shapes_are_refused(dims in proptest::collection::vec(any::<u64>(), 1..4)) {
            let shape = format!("({},)", dims.iter().map(u64::to_string).collect::<Vec<_>>().join(", "));
            let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
            while (10 + header.len() + 1) % 64 != 0 {
                header.push(' ');
            }
            header.push('\n');
            let mut file = b"\x93NUMPY\x01\x00".to_vec();
            file.extend_from_slice(&(header.len() as u16).to_le_bytes());
            file.extend_from_slice(header.as_bytes());
            file.extend_from_slice(&[0; 16]);
            let r = read(&file, Scalar::F32);
            let total: Option<u64> = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            if total.is_none_or(|t| t > 4) {
                prop_assert!(r.is_err());
            }
        }
    }
}
