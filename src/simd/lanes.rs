//! Vectors of unsigned integer lanes with lane-wise min and max: what
//! sorting and selection networks (the median) are made of.
//!
//! [`OrdLanes`] is implemented by plain arrays ([`Lanes`], [`F32Keys`],
//! which the compiler vectorises for the build's baseline: SSE2 on x86-64,
//! NEON on aarch64) and, on x86-64, by AVX2 registers (`x86::lanes`). A
//! network written over `V: OrdLanes` keeps its values in local variables;
//! indexed only by constants, they stay in registers.
//!
//! f32 samples are ordered by IEEE-754 `totalOrder` ([`f32::total_cmp`]):
//! a vector loaded from samples ([`OrdLanes::load_samples`]) holds each
//! sample's bits turned into a key ([`f32_key`]) whose order as a signed
//! integer is that one, so min and max are integer instructions, and
//! [`OrdLanes::store_samples`] turns keys back into the samples' bits.

/// A vector of `LANES` samples ordered as unsigned integers.
pub trait OrdLanes: Copy {
    /// The lane type.
    type Sample: Copy;
    /// What proves that the instructions exist ([`Lanes`]: `()`).
    type Token: Copy;
    /// One lane of the same order (for rows shorter than a vector).
    type One: OrdLanes<Sample = Self::Sample, Token = ()>;
    /// Lanes per vector.
    const LANES: usize;
    /// The first `LANES` values of `s`, as they are (values that
    /// [`OrdLanes::store`] wrote: keys, for f32) (panics if `s` is shorter).
    fn load(t: Self::Token, s: &[Self::Sample]) -> Self;
    /// Into the first `LANES` values of `s`, as they are (panics if `s` is
    /// shorter).
    fn store(self, s: &mut [Self::Sample]);
    /// The first `LANES` samples of an image from `s`, as the values that
    /// min and max order: the samples themselves, or f32 keys.
    #[inline(always)]
    fn load_samples(t: Self::Token, s: &[Self::Sample]) -> Self {
        Self::load(t, s)
    }
    /// Into the first `LANES` samples of `s`, undoing
    /// [`OrdLanes::load_samples`].
    #[inline(always)]
    fn store_samples(self, s: &mut [Self::Sample]) {
        self.store(s)
    }
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
    type One = Lanes<K, 1>;
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

/// The key of an f32 sample's bits `b`: as signed integers, keys are
/// ordered as [`f32::total_cmp`] orders the samples (-NaN < -inf < ... <
/// -0 < +0 < ... < +inf < +NaN). Negative samples have their other 31 bits
/// flipped, which reverses their order; the map is its own inverse.
#[inline(always)]
pub fn f32_key(b: i32) -> i32 {
    b ^ ((b >> 31) as u32 >> 1) as i32
}

/// `L` f32 samples as plain arrays of their [`f32_key`]s (any CPU). In
/// memory, keys are kept as f32 values with the keys' bits (copies keep
/// every bit), so the rank rows of the median share the samples' type.
#[derive(Debug, Clone, Copy)]
pub struct F32Keys<const L: usize>(pub [i32; L]);

impl<const L: usize> OrdLanes for F32Keys<L> {
    type Sample = f32;
    type Token = ();
    type One = F32Keys<1>;
    const LANES: usize = L;

    #[inline(always)]
    fn load(_: (), s: &[f32]) -> Self {
        F32Keys(std::array::from_fn(|i| s[..L][i].to_bits() as i32))
    }

    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        for (s, k) in s[..L].iter_mut().zip(self.0) {
            *s = f32::from_bits(k as u32);
        }
    }

    #[inline(always)]
    fn load_samples(t: (), s: &[f32]) -> Self {
        let F32Keys(b) = Self::load(t, s);
        F32Keys(b.map(f32_key))
    }

    #[inline(always)]
    fn store_samples(self, s: &mut [f32]) {
        F32Keys(self.0.map(f32_key)).store(s)
    }

    #[inline(always)]
    fn min(self, o: Self) -> Self {
        F32Keys(std::array::from_fn(|i| self.0[i].min(o.0[i])))
    }

    #[inline(always)]
    fn max(self, o: Self) -> Self {
        F32Keys(std::array::from_fn(|i| self.0[i].max(o.0[i])))
    }
}
