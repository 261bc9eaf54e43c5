//! Shared arrays and their sizes.

use super::{layout, Swizzle};
use crate::span::Span;
use crate::types::Scalar;

/// `shared name: [T; d0, d1, ...] swizzle(S);` — row-major, 128-byte
/// aligned, or aligned to its swizzle's repeat ([`Swizzle::align`]).
#[derive(Clone, Debug)]
pub struct SharedArray {
    pub name: String,
    pub elem: Scalar,
    /// Each at least 1; past `u32::MAX` only in a kernel with E0122 (a
    /// size is evaluated exactly, and saturates at `u64::MAX`).
    pub dims: Vec<u64>,
    /// How its elements are placed ([`Swizzle`]); a swizzled array's
    /// innermost dimension is one span, and each slice along its first
    /// index (when it has 3 or more dimensions) a whole number of repeats
    /// (E0403).
    pub swizzle: Swizzle,
    pub span: Span,
}

impl SharedArray {
    /// The number of elements (saturating: the checker rejects arrays whose
    /// bytes do not fit the shared memory long before 64 bits).
    pub fn len(&self) -> u64 {
        self.dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .unwrap_or(u64::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of one slice along the first index (`sa[s]`): the product
    /// of the other dimensions and the element size (saturating; one
    /// element for an array of one dimension).
    pub fn slice_bytes(&self) -> u64 {
        layout::array_bytes(self.elem, self.dims.get(1..).unwrap_or(&[])).unwrap_or(u64::MAX)
    }

    /// The size in bytes ([`layout::array_bytes`], saturating).
    pub fn bytes(&self) -> u64 {
        layout::array_bytes(self.elem, &self.dims).unwrap_or(u64::MAX)
    }

    /// The size in bytes exactly, however large, in decimal (for messages
    /// about sizes that [`SharedArray::bytes`] cannot hold).
    pub fn bytes_text(&self) -> String {
        exact_product(
            self.dims
                .iter()
                .copied()
                .chain([u64::from(self.elem.size())]),
        )
    }
}

/// The product of `factors` in decimal, exactly (no overflow, however many
/// factors): base-10⁹ limbs, least significant first.
pub fn exact_product(factors: impl IntoIterator<Item = u64>) -> String {
    const BASE: u128 = 1_000_000_000;
    let mut limbs: Vec<u128> = vec![1];
    for f in factors {
        let mut carry: u128 = 0;
        for limb in &mut limbs {
            let v = *limb * u128::from(f) + carry;
            *limb = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut digits = limbs.iter().rev();
    let mut out = digits.next().map_or_else(String::new, u128::to_string);
    for limb in digits {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn exact_products_never_wrap() {
        assert_eq!(exact_product([]), "1");
        assert_eq!(exact_product([0, 5]), "0");
        assert_eq!(
            exact_product([4194304, 2097152, 2097152]),
            "18446744073709551616"
        );
        assert_eq!(
            exact_product([u64::MAX, u64::MAX]),
            "340282366920938463426481119284349108225"
        );
        assert_eq!(
            exact_product([1_000_000_000, 1_000_000_000]),
            "1000000000000000000"
        );
    }

    #[test]
    fn shared_sizes_are_checked() {
        let array = |dims: Vec<u64>| SharedArray {
            name: "a".into(),
            elem: Scalar::F64,
            dims,
            swizzle: Swizzle::None,
            span: Span::default(),
        };
        assert_eq!(array(vec![4, 8]).bytes(), 256);
        let wraps = array(vec![u64::from(u32::MAX), u64::from(u32::MAX)]);
        assert_eq!(wraps.bytes(), u64::MAX, "saturates");
        assert_eq!(wraps.bytes_text(), "147573952520956936200");
        let mut n = vec![2147483648];
        n.extend([2; 33]);
        assert_eq!(array(n.clone()).len(), u64::MAX, "saturates");
        assert!(!array(n).is_empty());
    }
}
