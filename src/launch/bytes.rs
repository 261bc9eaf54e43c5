//! The value of a parameter passed by value that is no scalar — a struct,
//! PTX `.param .align A .b8 p[N]` — as its bytes or as its fields:
//!
//! | form | bytes |
//! | --- | --- |
//! | `bytes:ARRAY` | any array form of `u8` (`@FILE`, `[1, 2, 3]`, `zeros:N`, `rand:N:SEED`): exactly N bytes |
//! | `struct:FIELD,FIELD,...` | the fields in order, each `TYPE=VALUE` (a literal of the type) or `TYPE=[V, V, ...]` (an array field) aligned to the type's size as C lays out a struct, or `pad=K` (K zero bytes); the bytes after the last field are zeros |
//!
//! `struct:f32=1.5,u32=7,f64=[1, 2]` is `struct { float a; unsigned b;
//! double c[2]; }`: `a` at 0, `b` at 4, `c` at 8 and 16, 24 bytes.

use super::value;
use crate::types::Scalar;

/// The bytes `text` gives a parameter of `size` bytes, when it is a
/// `bytes:` or `struct:` form (`None` otherwise); `size` is `None` for a
/// parameter that takes neither.
pub(super) fn parse(text: &str, size: Option<u32>) -> Option<Result<Vec<u8>, String>> {
    let t = text.trim();
    let (form, rest) = if let Some(rest) = t.strip_prefix("bytes:") {
        ("bytes", rest)
    } else if let Some(rest) = t.strip_prefix("struct:") {
        ("struct", rest)
    } else {
        return None;
    };
    let Some(size) = size else {
        return Some(Err(format!(
            "`{form}:` gives a struct passed by value (a PTX `.b8` array parameter), and this parameter is not one"
        )));
    };
    Some(if form == "bytes" {
        value::array(Scalar::U8, rest).and_then(|b| {
            if b.len() == size as usize {
                Ok(b)
            } else {
                Err(format!(
                    "`bytes:` gives {} bytes, and the parameter has {size}",
                    b.len()
                ))
            }
        })
    } else {
        fields(rest, size)
    })
}

/// `struct:` fields laid out as C lays out a struct, into `size` bytes.
fn fields(text: &str, size: u32) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::new();
    let size = size as usize;
    for field in split_fields(text)? {
        let Some((ty, value)) = field.split_once('=') else {
            return Err(format!(
                "the field `{field}` is not `TYPE=VALUE` (as in `f32=1.5`, `u32=[1, 2]` or `pad=4`)"
            ));
        };
        let (ty, value) = (ty.trim(), value.trim());
        if ty == "pad" {
            let k: usize = value
                .parse()
                .map_err(|_| format!("`pad={value}` takes a number of bytes"))?;
            if out.len() + k > size {
                return Err(too_long(out.len() + k, size));
            }
            out.resize(out.len() + k, 0);
            continue;
        }
        let Some(elem) = Scalar::from_name(ty) else {
            return Err(format!(
                "`{ty}` is not a field type: the types are bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32 and f64, or `pad`"
            ));
        };
        let data = if value.starts_with('[') {
            value::array(elem, value).map_err(|e| format!("the field `{field}`: {e}"))?
        } else {
            let bits = super::literal::parse(value, elem)
                .map_err(|e| format!("the field `{field}`: {e}"))?;
            bits.to_le_bytes()
                .get(..elem.size() as usize)
                .unwrap_or(&[])
                .to_vec()
        };
        let at = out.len().next_multiple_of(elem.size().max(1) as usize);
        if at + data.len() > size {
            return Err(too_long(at + data.len(), size));
        }
        out.resize(at, 0);
        out.extend_from_slice(&data);
    }
    out.resize(size, 0);
    Ok(out)
}

fn too_long(bytes: usize, size: usize) -> String {
    format!("the fields take {bytes} bytes, and the parameter has {size}")
}

/// The comma-separated fields, a list's commas kept inside it.
fn split_fields(text: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text.get(start..i).unwrap_or("").trim());
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(format!("`{text}` closes a list it did not open"));
        }
    }
    if depth != 0 {
        return Err(format!("`{text}` has a list without its closing `]`"));
    }
    let last = text.get(start..).unwrap_or("").trim();
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    if out.iter().any(|f| f.is_empty()) {
        return Err(format!("`{text}` has an empty field"));
    }
    if out.is_empty() {
        return Err("`struct:` needs its fields, as in `struct:f32=1.5,u32=7`".to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, size: u32) -> Vec<u8> {
        parse(text, Some(size)).expect("a form").expect("valid")
    }

    fn err(text: &str, size: u32) -> String {
        parse(text, Some(size))
            .expect("a form")
            .expect_err("refused")
    }

    #[test]
    fn fields_are_laid_out_as_c_structs() {
        let mut want = 1.5f32.to_le_bytes().to_vec();
        want.extend(7u32.to_le_bytes());
        want.extend(1f64.to_le_bytes());
        want.extend(2f64.to_le_bytes());
        assert_eq!(ok("struct:f32=1.5,u32=7,f64=[1, 2]", 24), want);
        // A u8 then an f64: 7 bytes of padding; the tail is zeros.
        let b = ok("struct:u8=9,f64=0.5", 24);
        assert_eq!(b[0], 9);
        assert_eq!(b[1..8], [0; 7]);
        assert_eq!(b[8..16], 0.5f64.to_le_bytes());
        assert_eq!(b[16..], [0; 8]);
        assert_eq!(ok("struct:pad=3,u8=1", 4), [0, 0, 0, 1]);
        assert_eq!(ok("struct:i16=-2", 4), [0xfe, 0xff, 0, 0]);
    }

    #[test]
    fn bytes_are_any_u8_array_form_of_the_right_length() {
        assert_eq!(ok("bytes:[1, 2, 3, 4]", 4), [1, 2, 3, 4]);
        assert_eq!(ok("bytes:zeros:8", 8), [0; 8]);
        assert!(err("bytes:[1, 2]", 4).contains("gives 2 bytes, and the parameter has 4"));
    }

    #[test]
    fn mistakes_are_named() {
        assert!(err("struct:f64=1,f64=2", 12).contains("the fields take 16 bytes"));
        assert!(err("struct:q32=1", 8).contains("`q32` is not a field type"));
        assert!(err("struct:f32", 8).contains("is not `TYPE=VALUE`"));
        assert!(err("struct:u8=300", 8).contains("`u8=300`"));
        assert!(err("struct:f32=[1,2", 8).contains("without its closing"));
        assert!(err("struct:", 8).contains("needs its fields"));
        assert!(err("struct:u8=1,,u8=2", 8).contains("empty field"));
        assert!(parse("f32:[1]", Some(8)).is_none());
        assert!(parse("struct:u8=1", None)
            .expect("a form")
            .unwrap_err()
            .contains("not one"));
    }
}
