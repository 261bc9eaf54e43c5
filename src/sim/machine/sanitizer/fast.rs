//! A fast hash for the small integer keys of the simulator's tables (the
//! multiply-rotate of rustc's `FxHasher`): the run-time checks look keys
//! up at every synchronisation, and SipHash's resistance to chosen keys
//! buys nothing there.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Clone, Copy, Debug, Default)]
pub struct Fast(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for Fast {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(chunk) {
                *d = *s;
            }
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The `BuildHasher` of [`Fast`].
pub type Build = BuildHasherDefault<Fast>;

/// A `HashMap` with [`Fast`] hashing.
pub type FastMap<K, V> = std::collections::HashMap<K, V, Build>;
