//! [`OrdLanes`] vectors in AVX2 registers: 32 u8 or 16 u16 lanes
//! (`vpminub`/`vpmaxub`, `vpminuw`/`vpmaxuw`), and 8
//! f32 samples as their keys ([`f32_key`]: `vpminsd`/`vpmaxsd`).
//!
//! [`f32_key`]: crate::simd::lanes::f32_key
//!
//! A vector is only made by [`OrdLanes::load`], which takes the [`Avx2`]
//! token: holding one proves that the CPU has AVX2, which is what every
//! `unsafe` intrinsic call here relies on. Loads and stores go through
//! slices cut to the vector's length, so they stay in bounds.

use std::arch::x86_64::*;

use super::Avx2;
use crate::simd::lanes::{F32Keys, Lanes, OrdLanes};

macro_rules! avx2_lanes {
    ($(#[$doc:meta])* $name:ident, $k:ty, $lanes:expr, $min:ident, $max:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name(__m256i);

        impl OrdLanes for $name {
            type Sample = $k;
            type Token = Avx2;
            type One = Lanes<$k, 1>;
            const LANES: usize = $lanes;

            #[inline(always)]
            fn load(_: Avx2, s: &[$k]) -> Self {
                let s = &s[..$lanes];
                // SAFETY: the token proves AVX2; `s` holds the vector's 32
                // bytes (cut above); the load is unaligned.
                $name(unsafe { _mm256_loadu_si256(s.as_ptr().cast()) })
            }

            #[inline(always)]
            fn store(self, s: &mut [$k]) {
                let s = &mut s[..$lanes];
                // SAFETY: as in `load`: AVX2 (a vector exists) and 32
                // bytes of `s`.
                unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), self.0) }
            }

            #[inline(always)]
            fn min(self, o: Self) -> Self {
                // SAFETY: a vector exists, so AVX2 does (see `load`).
                $name(unsafe { $min(self.0, o.0) })
            }

            #[inline(always)]
            fn max(self, o: Self) -> Self {
                // SAFETY: as in `min`.
                $name(unsafe { $max(self.0, o.0) })
            }
        }
    };
}

avx2_lanes!(
    /// 32 u8 lanes.
    U8x32, u8, 32, _mm256_min_epu8, _mm256_max_epu8
);
avx2_lanes!(
    /// 16 u16 lanes.
    U16x16, u16, 16, _mm256_min_epu16, _mm256_max_epu16
);

/// 8 f32 samples as their keys ([`f32_key`]), ordered as signed integers.
/// Loaded keys live in memory as f32 values with the keys' bits.
///
/// [`f32_key`]: crate::simd::lanes::f32_key
#[derive(Debug, Clone, Copy)]
pub struct F32x8(__m256i);

impl F32x8 {
    /// [`f32_key`](crate::simd::lanes::f32_key) of every lane (its own
    /// inverse).
    #[inline(always)]
    fn flip(self) -> Self {
        // SAFETY: a vector exists, so AVX2 does (see `load`).
        F32x8(unsafe {
            let low31 = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(self.0));
            _mm256_xor_si256(self.0, low31)
        })
    }
}

impl OrdLanes for F32x8 {
    type Sample = f32;
    type Token = Avx2;
    type One = F32Keys<1>;
    const LANES: usize = 8;

    #[inline(always)]
    fn load(_: Avx2, s: &[f32]) -> Self {
        let s = &s[..8];
        // SAFETY: the token proves AVX2; `s` holds the vector's 32 bytes
        // (cut above); the load is unaligned.
        F32x8(unsafe { _mm256_loadu_si256(s.as_ptr().cast()) })
    }

    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        let s = &mut s[..8];
        // SAFETY: as in `load`: AVX2 (a vector exists) and 32 bytes of `s`.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), self.0) }
    }

    #[inline(always)]
    fn load_samples(t: Avx2, s: &[f32]) -> Self {
        Self::load(t, s).flip()
    }

    #[inline(always)]
    fn store_samples(self, s: &mut [f32]) {
        self.flip().store(s)
    }

    #[inline(always)]
    fn min(self, o: Self) -> Self {
        // SAFETY: a vector exists, so AVX2 does (see `load`).
        F32x8(unsafe { _mm256_min_epi32(self.0, o.0) })
    }

    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // SAFETY: as in `min`.
        F32x8(unsafe { _mm256_max_epi32(self.0, o.0) })
    }
}
