//! The seeded random generator of every test: SplitMix64 (Steele, Lea and
//! Flood 2014), tiny and good enough for test data. The unit tests use it
//! as `crate::test_rng::Rng`; the integration tests include this same file
//! as `common::Rng` (`tests/common/mod.rs`), so both draw the same numbers
//! from the same seed and there is one copy of the generator.

/// SplitMix64: tiny, seedable, good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`; equal seeds give equal sequences.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5eed_1234_abcd_ef01)
    }

    /// A generator whose seed mixes several numbers (op, type, size...).
    pub fn from_parts(parts: &[u64]) -> Self {
        let mut r = Rng::new(0);
        for &p in parts {
            r.0 ^= p;
            r.next_u64();
        }
        r
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `[0, 1)`, 24 bits of precision.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}
