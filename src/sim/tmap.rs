//! The simulator's own tensor maps. The 128 bytes of a `CUtensorMap` are
//! opaque (PTX ISA §5.5.8; cuda.h: "should only be accessed through CUDA
//! APIs and PTX"), and the simulator is the host of the launches it runs,
//! so it encodes a map its own way: a record in a table of the launch
//! ([`MapRecord`]) and 128 bytes that name it —
//!
//! ```text
//! bytes 0..8    "KDSLTMAP"
//! bytes 8..12   the version (1), little-endian
//! bytes 12..16  the record's index
//! bytes 16..24  the index XOR a check word
//! bytes 24..128 zero
//! ```
//!
//! A tensor instruction reads the 128 bytes at its map operand and uses
//! the record they name; anything else (a parameter address without
//! `cvta.param`, a pointer to other data) is not a tensor map and is
//! reported as such.

use crate::launch::{OobFill, Swizzle, TensorElem};

const MAGIC: &[u8; 8] = b"KDSLTMAP";
const VERSION: u32 = 1;
const CHECK: u64 = 0x6b64_736c_746d_6170;

/// A tensor map of the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct MapRecord {
    /// The parameter it was given for.
    pub name: String,
    /// The global allocation holding the tensor.
    pub alloc: usize,
    pub elem: TensorElem,
    /// Innermost first, as PTX coordinates are: `dims[0]` is the
    /// innermost dimension.
    pub dims: Vec<u64>,
    /// Byte strides, innermost first; `strides[0]` is the element size.
    pub strides: Vec<u64>,
    /// The box, innermost first.
    pub boxes: Vec<u32>,
    pub swizzle: Swizzle,
    pub fill: OobFill,
}

impl MapRecord {
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Bytes of one box.
    pub fn box_bytes(&self) -> u64 {
        self.boxes.iter().map(|&b| u64::from(b)).product::<u64>() * u64::from(self.elem.size())
    }

    /// The bits the out-of-bounds elements of a load get.
    pub fn fill_bits(&self) -> u64 {
        match self.fill {
            OobFill::Zero => 0,
            OobFill::Nan => match self.elem {
                TensorElem::F16 => 0x7fff,
                TensorElem::BF16 => 0x7fff,
                TensorElem::F32 | TensorElem::TF32 => 0x7fff_ffff,
                TensorElem::F64 => 0x7fff_ffff_ffff_ffff,
                TensorElem::E4M3 | TensorElem::E5M2 => 0x7f,
                _ => 0,
            },
        }
    }
}

/// The 128 bytes naming record `index`.
pub fn encode(index: u32) -> [u8; 128] {
    let mut b = [0u8; 128];
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&index.to_le_bytes());
    b[16..24].copy_from_slice(&(u64::from(index) ^ CHECK).to_le_bytes());
    b
}

/// The record index 128 bytes name, if they are one of the simulator's
/// maps.
pub fn decode(bytes: &[u8]) -> Option<u32> {
    if bytes.len() < 128 || bytes.get(..8)? != MAGIC {
        return None;
    }
    let word = |r: std::ops::Range<usize>| -> Option<u64> {
        let mut w = [0u8; 8];
        let src = bytes.get(r)?;
        w.get_mut(..src.len())?.copy_from_slice(src);
        Some(u64::from_le_bytes(w))
    };
    if word(8..12)? != u64::from(VERSION) {
        return None;
    }
    let index = word(12..16)?;
    if word(16..24)? != index ^ CHECK || bytes.get(24..128)?.iter().any(|&b| b != 0) {
        return None;
    }
    u32::try_from(index).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_round_trip_and_other_bytes_are_not_maps() {
        for i in [0, 1, 77, u32::MAX] {
            assert_eq!(decode(&encode(i)), Some(i));
        }
        assert_eq!(decode(&[0u8; 128]), None);
        let mut b = encode(3);
        b[16] ^= 1;
        assert_eq!(decode(&b), None);
        let mut b = encode(3);
        b[100] = 1;
        assert_eq!(decode(&b), None);
        assert_eq!(decode(&encode(3)[..64]), None);
    }
}
