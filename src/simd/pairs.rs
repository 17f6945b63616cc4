//! Rows of bytes as vectors of byte pairs: [`BytePairs`] loads `2 N` bytes
//! split into their even and odd columns, one byte per i16 lane, does
//! integer arithmetic on the lanes, and stores colour planes of such
//! pairs as interleaved 8-bit RGB or RGBA pixels, saturated to 0..=255.
//!
//! Integer filters on 2x2-periodic layouts (a colour filter array) are
//! written once over `V: BytePairs` and run on [`Pairs8`] (plain arrays
//! the compiler vectorises for the build's baseline; every CPU) or, on
//! x86-64 with AVX2, on 16-lane registers (`x86::bytes`). An operation
//! gets its vectors from [`crate::simd::Simd::with_pairs`].

use std::mem::MaybeUninit;

use super::mem;

/// `N` i16 lanes, each holding one byte of a row (or a sum of such).
/// Vectors are made by [`BytePairs::split`] from their token, so holding
/// one proves that its instructions run. Arithmetic wraps (the callers'
/// sums stay within i16).
pub trait BytePairs: Copy {
    /// What proves that the instructions exist ([`Pairs8`]: `()`).
    type Token: Copy;
    /// Lanes: the pairs of columns per vector.
    const N: usize;
    /// Bytes `0..2 N` of `s` as the even columns (bytes `2 i`) and the odd
    /// ones (bytes `2 i + 1`), zero-extended. Panics if `s` is shorter.
    fn split(t: Self::Token, s: &[u8]) -> [Self; 2];
    /// `self + o`, lane by lane.
    fn add(self, o: Self) -> Self;
    /// `self - o`.
    fn sub(self, o: Self) -> Self;
    /// `self * k`.
    fn scale(self, k: i16) -> Self;
    /// `self / 2^K` (`K` in 1..=8) rounded to the nearest integer, half to
    /// even: what f32 arithmetic gives for the exact quotient, rounded as
    /// `crate::simd::Narrow` rounds.
    fn round_shr<const K: i32>(self) -> Self;
    /// Stores `2 N` pixels of `C` channels (3: RGB, 4: RGBA with alpha
    /// `alpha`) into `d`, which must be `2 N C` bytes: pixel `2 i + p`
    /// holds lane `i` of `planes[colour][p]`, saturated to 0..=255.
    /// Returns `d` written.
    fn store<'a, const C: usize>(
        t: Self::Token,
        d: &'a mut [MaybeUninit<u8>],
        planes: &[[Self; 2]; 3],
        alpha: u8,
    ) -> &'a mut [u8];
}

/// Code generic over [`BytePairs`] vectors: what
/// [`crate::simd::Simd::with_pairs`] runs.
pub trait WithPairs {
    /// What the code returns.
    type Output;
    /// Runs the code with vectors `V` (made from `t`). Implementations
    /// should be `#[inline(always)]`, as [`crate::simd::WithSimd`]'s are.
    fn with<V: BytePairs>(self, t: V::Token) -> Self::Output;
}

/// [`BytePairs`] of 8 lanes as a plain array: any CPU.
#[derive(Debug, Clone, Copy)]
pub struct Pairs8([i16; 8]);

impl Pairs8 {
    #[inline(always)]
    fn map(self, f: impl Fn(i16) -> i16) -> Self {
        Pairs8(self.0.map(f))
    }

    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(i16, i16) -> i16) -> Self {
        Pairs8(std::array::from_fn(|i| f(self.0[i], o.0[i])))
    }
}

/// `x / 2^k` rounded half to even: the shift floors, so adding
/// `2^(k-1) - 1`, plus one where the floored quotient is odd, rounds a tie
/// up exactly when that makes the result even.
#[inline(always)]
pub fn round_shr(x: i16, k: u32) -> i16 {
    let half = (1i16 << (k - 1)) - 1;
    x.wrapping_add(half).wrapping_add((x >> k) & 1) >> k
}

impl BytePairs for Pairs8 {
    type Token = ();
    const N: usize = 8;

    #[inline(always)]
    fn split(_: (), s: &[u8]) -> [Self; 2] {
        let s = &s[..16];
        [0, 1].map(|p| Pairs8(std::array::from_fn(|i| i16::from(s[2 * i + p]))))
    }

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.zip(o, i16::wrapping_add)
    }

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.zip(o, i16::wrapping_sub)
    }

    #[inline(always)]
    fn scale(self, k: i16) -> Self {
        self.map(|x| x.wrapping_mul(k))
    }

    #[inline(always)]
    fn round_shr<const K: i32>(self) -> Self {
        self.map(|x| round_shr(x, K as u32))
    }

    #[inline(always)]
    fn store<'a, const C: usize>(
        _: (),
        d: &'a mut [MaybeUninit<u8>],
        planes: &[[Self; 2]; 3],
        alpha: u8,
    ) -> &'a mut [u8] {
        assert!((C == 3 || C == 4) && d.len() == 16 * C);
        let mut px = [alpha; 64];
        for (k, p) in px.chunks_exact_mut(C).take(16).enumerate() {
            for (c, v) in p[..3].iter_mut().enumerate() {
                *v = planes[c][k % 2].0[k / 2].clamp(0, 255) as u8;
            }
        }
        mem::write_copy(d, &px[..16 * C])
    }
}
