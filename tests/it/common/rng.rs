//! The small deterministic generators the tests draw from (no dependency:
//! the same seed gives the same cases on every run and machine).

/// xorshift64 (shifts 13, 7, 17); the state must not be 0.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The 64-bit linear congruential generator of Knuth's MMIX; its low bits
/// are poor, so callers take the high ones.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next state.
    pub fn step(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }
}
