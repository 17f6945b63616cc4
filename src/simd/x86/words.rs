//! 16-bit outputs on AVX2: colour planes narrowed to u16 and interleaved
//! into RGB or RGBA pixels with byte shuffles, sixteen pixels of a row at
//! a time (the u16 half of [`crate::simd::Simd::interleave_quads`]).
//!
//! Every function takes the [`Avx2`] token, which proves that the CPU has
//! AVX2: that is what each `unsafe` intrinsic call relies on. Stores go
//! through slices cut to their length.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::bytes::shuffle;
use super::f32s::F8;
use super::Avx2;
use crate::simd::{Quads, Vf32, MAGIC};

/// `pshufb` controls that interleave 8 R, G and B u16 samples into 24
/// RGB samples (48 bytes), `[16-byte block][colour]`, the same in both
/// 128-bit lanes.
const RGB: [[[i8; 32]; 3]; 3] = rgb_shuffles();

const fn rgb_shuffles() -> [[[i8; 32]; 3]; 3] {
    let mut m = [[[-128i8; 32]; 3]; 3];
    let mut k = 0;
    while k < 3 {
        let mut b = 0;
        while b < 16 {
            let g = 16 * k + b;
            let word = g / 2;
            let src = (2 * (word / 3) + g % 2) as i8;
            m[k][word % 3][b] = src;
            m[k][word % 3][b + 16] = src;
            b += 1;
        }
        k += 1;
    }
    m
}

/// Narrows 8 floats exactly as `<u16 as Narrow>::narrow`, leaving each
/// sample in the low 16 bits of its lane (`max` returns its second
/// operand, 0, for NaN).
#[inline(always)]
fn narrow(t: Avx2, s: &[f32]) -> __m256i {
    let v = F8::load(t, s).0;
    // SAFETY: the token proves AVX2.
    unsafe {
        let v = _mm256_min_ps(
            _mm256_max_ps(v, _mm256_setzero_ps()),
            _mm256_set1_ps(65535.0),
        );
        _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(MAGIC)))
    }
}

/// Colour `c` of quads `j..j + 8` of row `py`, narrowed: its 16 pixels'
/// samples in pixel order (pixels 0..8 in the low 128-bit lane).
#[inline(always)]
fn colour<const N: usize>(t: Avx2, src: &Quads<N>, py: usize, c: usize, j: usize) -> __m256i {
    let e = narrow(t, &src[py][c][0][j..]);
    let o = narrow(t, &src[py][c][1][j..]);
    // SAFETY: the token proves AVX2.
    unsafe { _mm256_blend_epi16::<0b1010_1010>(e, _mm256_slli_epi32::<16>(o)) }
}

/// `v` into the first 16 samples of `d`.
#[inline(always)]
fn put(_: Avx2, d: &mut [MaybeUninit<u16>], v: __m256i) {
    // SAFETY: the token proves AVX; `d` is cut to 16 samples (32 bytes).
    unsafe { _mm256_storeu_si256(d[..16].as_mut_ptr().cast(), v) }
}

/// Stores quads `0..q` (`q` a multiple of 8) of a chunk as interleaved
/// 16-bit RGB (`C` = 3) or RGBA (`C` = 4, alpha `a`) into two rows of at
/// least `2 q C` samples; f32 planes are narrowed exactly as
/// `<u16 as Narrow>::narrow`.
#[inline(always)]
pub(super) fn store_u16<const C: usize, const N: usize>(
    t: Avx2,
    rows: [&mut [MaybeUninit<u16>]; 2],
    src: &Quads<'_, N>,
    q: usize,
    a: u16,
) {
    // SAFETY: the token proves AVX.
    let alpha = unsafe { _mm256_set1_epi16(a as i16) };
    for (py, row) in rows.into_iter().enumerate() {
        for j in (0..q).step_by(8) {
            let (r, g, b) = (
                colour(t, src, py, 0, j),
                colour(t, src, py, 1, j),
                colour(t, src, py, 2, j),
            );
            let d = &mut row[2 * C * j..];
            let v = if C == 3 {
                rgb(t, r, g, b)
            } else {
                rgba(t, r, g, b, alpha)
            };
            for (k, v) in v.into_iter().take(C).enumerate() {
                put(t, &mut d[16 * k..], v);
            }
        }
    }
}

/// 16 RGB pixels (48 samples in 3 vectors, the fourth unused) from 16
/// samples of each colour in pixel order.
#[inline(always)]
fn rgb(t: Avx2, r: __m256i, g: __m256i, b: __m256i) -> [__m256i; 4] {
    let o = [
        block(t, r, g, b, 0),
        block(t, r, g, b, 1),
        block(t, r, g, b, 2),
    ];
    // SAFETY: the token proves AVX2.
    unsafe {
        [
            _mm256_permute2x128_si256::<0x20>(o[0], o[1]),
            _mm256_permute2x128_si256::<0x30>(o[2], o[0]),
            _mm256_permute2x128_si256::<0x31>(o[1], o[2]),
            _mm256_setzero_si256(),
        ]
    }
}

/// 16 bytes of RGB output `k` (of 3) for each 128-bit lane, from the
/// colours. (No closure does this: a closure is compiled without AVX2.)
#[inline(always)]
fn block(t: Avx2, r: __m256i, g: __m256i, b: __m256i, k: usize) -> __m256i {
    let s = &RGB[k];
    let (r, g, b) = (
        shuffle(t, r, &s[0]),
        shuffle(t, g, &s[1]),
        shuffle(t, b, &s[2]),
    );
    // SAFETY: the token proves AVX2.
    unsafe { _mm256_or_si256(_mm256_or_si256(r, g), b) }
}

/// 16 RGBA pixels (64 samples in 4 vectors) from 16 samples of each
/// colour in pixel order, and alpha.
#[inline(always)]
fn rgba(_: Avx2, r: __m256i, g: __m256i, b: __m256i, alpha: __m256i) -> [__m256i; 4] {
    // SAFETY: the token proves AVX2.
    unsafe {
        let (rg0, rg1) = (_mm256_unpacklo_epi16(r, g), _mm256_unpackhi_epi16(r, g));
        let (ba0, ba1) = (
            _mm256_unpacklo_epi16(b, alpha),
            _mm256_unpackhi_epi16(b, alpha),
        );
        let p0 = _mm256_unpacklo_epi32(rg0, ba0);
        let p1 = _mm256_unpackhi_epi32(rg0, ba0);
        let p2 = _mm256_unpacklo_epi32(rg1, ba1);
        let p3 = _mm256_unpackhi_epi32(rg1, ba1);
        [
            _mm256_permute2x128_si256::<0x20>(p0, p1),
            _mm256_permute2x128_si256::<0x20>(p2, p3),
            _mm256_permute2x128_si256::<0x31>(p0, p1),
            _mm256_permute2x128_si256::<0x31>(p2, p3),
        ]
    }
}
