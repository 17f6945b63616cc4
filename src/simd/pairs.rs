//! Rows of bytes as vectors of byte pairs: [`BytePairs`] loads `2 N` bytes
//! split into their even and odd columns, one byte per i16 lane, does
//! integer arithmetic on the lanes, and stores colour planes of such
//! pairs as interleaved 8-bit RGB or RGBA pixels, saturated to 0..=255.
//!
//! Integer filters on 2x2-periodic layouts (a colour filter array) are
//! written once over `V: BytePairs` and run on [`Pairs16`] (plain arrays
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
    /// What proves that the instructions exist ([`Pairs16`]: `()`).
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

/// [`BytePairs`] of 16 lanes as a plain array: any CPU.
#[derive(Debug, Clone, Copy)]
pub struct Pairs16([i16; 16]);

impl Pairs16 {
    /// `f` on each pair of lanes. (Loops, not `array::map` with closures:
    /// those are left as calls, and the arithmetic scalar.)
    #[inline(always)]
    fn zip(mut self, o: Self, f: fn(i16, i16) -> i16) -> Self {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a = f(*a, b);
        }
        self
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

impl BytePairs for Pairs16 {
    type Token = ();
    const N: usize = 16;

    #[inline(always)]
    fn split(_: (), s: &[u8]) -> [Self; 2] {
        let (mut e, mut o) = ([0; 16], [0; 16]);
        for ((e, o), p) in e.iter_mut().zip(&mut o).zip(s[..32].chunks_exact(2)) {
            (*e, *o) = (i16::from(p[0]), i16::from(p[1]));
        }
        [Pairs16(e), Pairs16(o)]
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
    fn scale(mut self, k: i16) -> Self {
        for a in &mut self.0 {
            *a = a.wrapping_mul(k);
        }
        self
    }

    #[inline(always)]
    fn round_shr<const K: i32>(mut self) -> Self {
        for a in &mut self.0 {
            *a = round_shr(*a, K as u32);
        }
        self
    }

    #[inline(always)]
    fn store<'a, const C: usize>(
        _: (),
        d: &'a mut [MaybeUninit<u8>],
        planes: &[[Self; 2]; 3],
        alpha: u8,
    ) -> &'a mut [u8] {
        assert!((C == 3 || C == 4) && d.len() == 32 * C);
        let mut cols = [[0u8; 32]; 3];
        for (col, plane) in cols.iter_mut().zip(planes) {
            for (i, c) in col.chunks_exact_mut(2).enumerate() {
                c[0] = plane[0].0[i].clamp(0, 255) as u8;
                c[1] = plane[1].0[i].clamp(0, 255) as u8;
            }
        }
        let mut px = [alpha; 128];
        for (k, p) in px.chunks_exact_mut(C).take(32).enumerate() {
            p[0] = cols[0][k];
            p[1] = cols[1][k];
            p[2] = cols[2][k];
        }
        mem::write_copy(d, &px[..32 * C])
    }
}
