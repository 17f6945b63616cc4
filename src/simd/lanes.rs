//! Vectors of unsigned integer lanes with lane-wise min and max: what
//! sorting and selection networks (the median) are made of.
//!
//! [`OrdLanes`] is implemented by plain arrays ([`Lanes`], which the compiler
//! vectorises for the build's baseline: SSE2 on x86-64, NEON on aarch64)
//! and, on x86-64, by AVX2 registers (`x86::lanes`). A network written
//! over `V: OrdLanes` keeps its values in local variables; indexed only by
//! constants, they stay in registers.

/// A vector of `LANES` samples ordered as unsigned integers.
pub trait OrdLanes: Copy {
    /// The lane type.
    type Sample: Copy;
    /// What proves that the instructions exist ([`Lanes`]: `()`).
    type Token: Copy;
    /// Lanes per vector.
    const LANES: usize;
    /// The first `LANES` samples of `s` (panics if `s` is shorter).
    fn load(t: Self::Token, s: &[Self::Sample]) -> Self;
    /// Into the first `LANES` samples of `s` (panics if `s` is shorter).
    fn store(self, s: &mut [Self::Sample]);
    /// The smaller of each pair of lanes.
    fn min(self, o: Self) -> Self;
    /// The larger of each pair of lanes.
    fn max(self, o: Self) -> Self;
}

/// `L` lanes as a plain array: any CPU (the compiler picks the vectors).
#[derive(Debug, Clone, Copy)]
pub struct Lanes<K, const L: usize>(pub [K; L]);

impl<K: Copy + Ord, const L: usize> OrdLanes for Lanes<K, L> {
    type Sample = K;
    type Token = ();
    const LANES: usize = L;

    #[inline(always)]
    fn load(_: (), s: &[K]) -> Self {
        let mut a = [s[0]; L];
        a.copy_from_slice(&s[..L]);
        Lanes(a)
    }

    #[inline(always)]
    fn store(self, s: &mut [K]) {
        s[..L].copy_from_slice(&self.0);
    }

    #[inline(always)]
    fn min(self, o: Self) -> Self {
        let mut a = self.0;
        for (a, b) in a.iter_mut().zip(o.0) {
            *a = (*a).min(b);
        }
        Lanes(a)
    }

    #[inline(always)]
    fn max(self, o: Self) -> Self {
        let mut a = self.0;
        for (a, b) in a.iter_mut().zip(o.0) {
            *a = (*a).max(b);
        }
        Lanes(a)
    }
}
