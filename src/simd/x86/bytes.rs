//! 8-bit outputs on AVX2: colour planes narrowed to bytes and interleaved
//! into RGB or RGBA pixels with byte shuffles; [`P16`], the 16-lane
//! [`BytePairs`].
//!
//! Every function takes the [`Avx2`] token, which proves that the CPU has
//! AVX2 (a [`P16`] is made only from the token): that is what each
//! `unsafe` intrinsic call relies on. Stores go
//! through slices cut to their length.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::f32s::F8;
use super::{words, Avx2};
use crate::simd::pairs::BytePairs;
use crate::simd::{mem, portable, Narrow, Quads, Vf32, MAGIC};

/// `pshufb` controls that interleave 16 R, G and B bytes into 48 RGB
/// bytes, `[16-byte block][colour]`, the same in both 128-bit lanes.
const RGB: [[[i8; 32]; 3]; 3] = rgb_shuffles();

const fn rgb_shuffles() -> [[[i8; 32]; 3]; 3] {
    let mut m = [[[-128i8; 32]; 3]; 3];
    let mut k = 0;
    while k < 3 {
        let mut b = 0;
        while b < 16 {
            let g = 16 * k + b;
            m[k][g % 3][b] = (g / 3) as i8;
            m[k][g % 3][b + 16] = (g / 3) as i8;
            b += 1;
        }
        k += 1;
    }
    m
}

/// [`crate::simd::Simd::interleave_quads`] on AVX2: 8-bit outputs eight
/// quads at a time with byte shuffles (the rest one sample at a time),
/// 16-bit ones likewise ([`words`]), f32 as the portable code does.
#[inline(always)]
pub(super) fn interleave_quads<'a, U: Narrow, const C: usize, const N: usize>(
    t: Avx2,
    rows: [&'a mut [MaybeUninit<U>]; 2],
    src: &Quads<'_, N>,
    q: usize,
    alpha: f32,
) -> [&'a mut [U]; 2] {
    let [r0, r1] = rows;
    let (Some(b0), Some(b1)) = (
        mem::cast_uninit_mut::<U, u8>(&mut *r0),
        mem::cast_uninit_mut::<U, u8>(&mut *r1),
    ) else {
        return interleave_words::<U, C, N>(t, [r0, r1], src, q, alpha);
    };
    assert!(C == 3 || C == 4);
    assert!(q <= N && b0.len() == 2 * q * C && b1.len() == 2 * q * C);
    let v = q / 8 * 8;
    let a = <u8 as Narrow>::narrow(alpha);
    let (h0, t0) = b0.split_at_mut(2 * v * C);
    let (h1, t1) = b1.split_at_mut(2 * v * C);
    store_u8::<C, N>(t, [h0, h1], src, v, a);
    portable::store_quads::<u8, C, N>([t0, t1], src, v..q, a);
    // SAFETY: `store_u8` wrote quads 0..v of both rows (`2 C` bytes each),
    // `store_quads` quads v..q, and each row is `2 q C` samples of `U`,
    // which is u8 here (the casts above succeeded).
    unsafe { [mem::assume_init_mut(r0), mem::assume_init_mut(r1)] }
}

/// [`interleave_quads`] of 16-bit outputs ([`words`]), other types as the
/// portable code does.
#[inline(always)]
fn interleave_words<'a, U: Narrow, const C: usize, const N: usize>(
    t: Avx2,
    rows: [&'a mut [MaybeUninit<U>]; 2],
    src: &Quads<'_, N>,
    q: usize,
    alpha: f32,
) -> [&'a mut [U]; 2] {
    let [r0, r1] = rows;
    let (Some(w0), Some(w1)) = (
        mem::cast_uninit_mut::<U, u16>(&mut *r0),
        mem::cast_uninit_mut::<U, u16>(&mut *r1),
    ) else {
        return portable::store_narrowed::<U, C, N>([r0, r1], src, q, alpha);
    };
    assert!(C == 3 || C == 4);
    assert!(q <= N && w0.len() == 2 * q * C && w1.len() == 2 * q * C);
    let v = q / 8 * 8;
    let a = <u16 as Narrow>::narrow(alpha);
    let (h0, t0) = w0.split_at_mut(2 * v * C);
    let (h1, t1) = w1.split_at_mut(2 * v * C);
    words::store_u16::<C, N>(t, [h0, h1], src, v, a);
    portable::store_quads::<u16, C, N>([t0, t1], src, v..q, a);
    // SAFETY: `store_u16` wrote quads 0..v of both rows (`2 C` samples
    // each), `store_quads` quads v..q, and each row is `2 q C` samples of
    // `U`, which is u16 here (the casts above succeeded).
    unsafe { [mem::assume_init_mut(r0), mem::assume_init_mut(r1)] }
}

/// Narrows 8 floats exactly as `<u8 as Narrow>::narrow`, leaving each byte
/// in the low byte of its lane (`max` returns its second operand, 0, for NaN).
#[inline(always)]
fn narrow(t: Avx2, s: &[f32]) -> __m256i {
    let v = F8::load(t, s).0;
    // SAFETY: the token proves AVX2.
    unsafe {
        let v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0));
        _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(MAGIC)))
    }
}

/// Colour `c` of quads `j..j + 8` of row `py`, narrowed: the bytes of
/// its 16 pixels in the low 16 bits of 8 lanes, in pixel order.
#[inline(always)]
fn pairs<const N: usize>(t: Avx2, src: &Quads<N>, py: usize, c: usize, j: usize) -> __m256i {
    let e = narrow(t, &src[py][c][0][j..]);
    let o = narrow(t, &src[py][c][1][j..]);
    // SAFETY: the token proves AVX2.
    unsafe {
        _mm256_or_si256(
            _mm256_and_si256(e, _mm256_set1_epi32(0xFF)),
            _mm256_slli_epi32::<8>(o),
        )
    }
}

/// 16 bytes of colour `c` for each row, in pixel order: row 0 in the low
/// lane, row 1 in the high lane.
#[inline(always)]
fn colour<const N: usize>(t: Avx2, src: &Quads<N>, c: usize, j: usize) -> __m256i {
    let (p0, p1) = (pairs(t, src, 0, c, j), pairs(t, src, 1, c, j));
    // SAFETY: the token proves AVX2.
    unsafe {
        let v = _mm256_packus_epi32(p0, p1);
        _mm256_permute4x64_epi64::<0b11_01_10_00>(v)
    }
}

/// 16 bytes of RGB output `k` (of 3) for each row, from the colours.
#[inline(always)]
fn rgb(t: Avx2, r: __m256i, g: __m256i, b: __m256i, k: usize) -> __m256i {
    let s = &RGB[k];
    let (r, g, b) = (
        shuffle(t, r, &s[0]),
        shuffle(t, g, &s[1]),
        shuffle(t, b, &s[2]),
    );
    // SAFETY: the token proves AVX2.
    unsafe { _mm256_or_si256(_mm256_or_si256(r, g), b) }
}

/// `pshufb` of `v` by `control` (also used by the 16-bit stores).
#[inline(always)]
pub(super) fn shuffle(_: Avx2, v: __m256i, control: &[i8; 32]) -> __m256i {
    // SAFETY: the token proves AVX2; `control` holds 32 bytes.
    unsafe { _mm256_shuffle_epi8(v, _mm256_loadu_si256(control.as_ptr().cast())) }
}

/// `v` into the first 32 bytes of `d`.
#[inline(always)]
fn put(_: Avx2, d: &mut [MaybeUninit<u8>], v: __m256i) {
    // SAFETY: the token proves AVX; `d` is cut to 32 bytes.
    unsafe { _mm256_storeu_si256(d[..32].as_mut_ptr().cast(), v) }
}

/// `v` into the first 16 bytes of `d`.
#[inline(always)]
fn put_half(_: Avx2, d: &mut [MaybeUninit<u8>], v: __m128i) {
    // SAFETY: SSE2 is in every x86-64 CPU; `d` is cut to 16 bytes.
    unsafe { _mm_storeu_si128(d[..16].as_mut_ptr().cast(), v) }
}

/// Stores quads `0..q` (`q` a multiple of 8) of a chunk as interleaved
/// 8-bit RGB (`C` = 3) or RGBA (`C` = 4, alpha `a`) into two rows of at
/// least `2 q C` bytes; f32 planes are narrowed exactly as
/// `<u8 as Narrow>::narrow`.
#[inline(always)]
fn store_u8<const C: usize, const N: usize>(
    t: Avx2,
    rows: [&mut [MaybeUninit<u8>]; 2],
    src: &Quads<'_, N>,
    q: usize,
    a: u8,
) {
    let [r0, r1] = rows;
    // SAFETY: the token proves AVX.
    let alpha = unsafe { _mm256_set1_epi8(a as i8) };
    for j in (0..q).step_by(8) {
        let (r, g, b) = (
            colour(t, src, 0, j),
            colour(t, src, 1, j),
            colour(t, src, 2, j),
        );
        let (d0, d1) = (&mut r0[2 * C * j..], &mut r1[2 * C * j..]);
        if C == 3 {
            let (o0, o1, o2) = (rgb(t, r, g, b, 0), rgb(t, r, g, b, 1), rgb(t, r, g, b, 2));
            // SAFETY: the token proves AVX2.
            let (a0, a2, b0, b1) = unsafe {
                (
                    _mm256_permute2x128_si256::<0x20>(o0, o1),
                    _mm256_castsi256_si128(o2),
                    _mm256_extracti128_si256::<1>(o0),
                    _mm256_permute2x128_si256::<0x31>(o1, o2),
                )
            };
            put(t, d0, a0);
            put_half(t, &mut d0[32..], a2);
            put_half(t, d1, b0);
            put(t, &mut d1[16..], b1);
        } else {
            let p = rgba(t, r, g, b, alpha);
            put(t, d0, p[0]);
            put(t, &mut d0[32..], p[1]);
            put(t, d1, p[2]);
            put(t, &mut d1[32..], p[3]);
        }
    }
}

/// RGBA pixels from 16 bytes of each colour per 128-bit lane (pixels
/// `0..16` of the low lane, then of the high lane), and alpha:
/// `[pixels 0..8, 8..16]` of the low lane, then of the high lane.
#[inline(always)]
fn rgba(_: Avx2, r: __m256i, g: __m256i, b: __m256i, alpha: __m256i) -> [__m256i; 4] {
    // SAFETY: the token proves AVX2.
    unsafe {
        let (rg0, rg1) = (_mm256_unpacklo_epi8(r, g), _mm256_unpackhi_epi8(r, g));
        let (ba0, ba1) = (
            _mm256_unpacklo_epi8(b, alpha),
            _mm256_unpackhi_epi8(b, alpha),
        );
        let p0 = _mm256_unpacklo_epi16(rg0, ba0);
        let p1 = _mm256_unpackhi_epi16(rg0, ba0);
        let p2 = _mm256_unpacklo_epi16(rg1, ba1);
        let p3 = _mm256_unpackhi_epi16(rg1, ba1);
        [
            _mm256_permute2x128_si256::<0x20>(p0, p1),
            _mm256_permute2x128_si256::<0x20>(p2, p3),
            _mm256_permute2x128_si256::<0x31>(p0, p1),
            _mm256_permute2x128_si256::<0x31>(p2, p3),
        ]
    }
}

/// [`BytePairs`] of 16 lanes in an AVX2 register. Only
/// [`BytePairs::split`], which takes the [`Avx2`] token, makes one, so
/// holding one proves AVX2.
#[derive(Debug, Clone, Copy)]
pub struct P16(__m256i);

/// Per 128-bit lane, bytes `0..8` (even columns) and `8..16` (odd
/// columns) into column order.
const ZIP: [i8; 32] = zip_shuffle();

const fn zip_shuffle() -> [i8; 32] {
    let mut m = [0i8; 32];
    let mut i = 0;
    while i < 16 {
        m[i] = ((i % 2) * 8 + i / 2) as i8;
        m[i + 16] = m[i];
        i += 1;
    }
    m
}

/// A colour's even and odd columns as bytes in column order: pixels
/// 0..16 in the low lane, 16..32 in the high one (`packus` saturates to
/// 0..=255). No closure does this: a closure is compiled without AVX2.
#[inline(always)]
fn zip(t: Avx2, [e, o]: [P16; 2]) -> __m256i {
    // SAFETY: the token proves AVX2.
    shuffle(t, unsafe { _mm256_packus_epi16(e.0, o.0) }, &ZIP)
}

impl BytePairs for P16 {
    type Token = Avx2;
    const N: usize = 16;

    #[inline(always)]
    fn split(_: Avx2, s: &[u8]) -> [Self; 2] {
        let s = &s[..32];
        // SAFETY: the token proves AVX2; `s` is cut to the 32 bytes read.
        unsafe {
            let v = _mm256_loadu_si256(s.as_ptr().cast());
            [
                P16(_mm256_and_si256(v, _mm256_set1_epi16(0xFF))),
                P16(_mm256_srli_epi16::<8>(v)),
            ]
        }
    }

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX2.
        P16(unsafe { _mm256_add_epi16(self.0, o.0) })
    }

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX2.
        P16(unsafe { _mm256_sub_epi16(self.0, o.0) })
    }

    #[inline(always)]
    fn scale(self, k: i16) -> Self {
        // SAFETY: `self` proves AVX2.
        P16(unsafe { _mm256_mullo_epi16(self.0, _mm256_set1_epi16(k)) })
    }

    #[inline(always)]
    fn round_shr<const K: i32>(self) -> Self {
        // SAFETY: `self` proves AVX2.
        P16(unsafe {
            let odd = _mm256_and_si256(_mm256_srai_epi16::<K>(self.0), _mm256_set1_epi16(1));
            let half = _mm256_set1_epi16((1i16 << (K - 1)) - 1);
            _mm256_srai_epi16::<K>(_mm256_add_epi16(_mm256_add_epi16(self.0, half), odd))
        })
    }

    #[inline(always)]
    fn store<'a, const C: usize>(
        t: Avx2,
        d: &'a mut [MaybeUninit<u8>],
        planes: &[[Self; 2]; 3],
        alpha: u8,
    ) -> &'a mut [u8] {
        assert!((C == 3 || C == 4) && d.len() == 32 * C);
        let (r, g, b) = (zip(t, planes[0]), zip(t, planes[1]), zip(t, planes[2]));
        if C == 3 {
            let o = [rgb(t, r, g, b, 0), rgb(t, r, g, b, 1), rgb(t, r, g, b, 2)];
            // SAFETY: the token proves AVX2.
            let v = unsafe {
                [
                    _mm256_permute2x128_si256::<0x20>(o[0], o[1]),
                    _mm256_permute2x128_si256::<0x30>(o[2], o[0]),
                    _mm256_permute2x128_si256::<0x31>(o[1], o[2]),
                ]
            };
            for (k, v) in v.into_iter().enumerate() {
                put(t, &mut d[32 * k..], v);
            }
        } else {
            // SAFETY: the token proves AVX.
            let a = unsafe { _mm256_set1_epi8(alpha as i8) };
            let p = rgba(t, r, g, b, a);
            for (k, v) in p.into_iter().enumerate() {
                put(t, &mut d[32 * k..], v);
            }
        }
        // SAFETY: the puts wrote all `32 C` bytes of `d` (32 each).
        unsafe { mem::assume_init_mut(d) }
    }
}
