//! Vectors of f32 lanes ([`F8`]: AVX + FMA, [`F16`]: AVX-512F), their
//! square transposes, and the tiled block transposes built on them.
//!
//! A vector is only made from its token ([`Avx2`], [`Avx512`]), so where
//! one exists the CPU has its instructions: that is what every `unsafe`
//! intrinsic call below relies on. Loads and stores go through slices cut
//! to the vector's length, or through pointers whose range is checked
//! before the loop.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::{Avx2, Avx512};
use crate::image::Sample;
use crate::simd::{mem, sealed, store_samples, Vf32};

/// 8 f32 lanes: AVX and FMA.
#[derive(Debug, Clone, Copy)]
pub struct F8(pub(super) __m256);

/// 16 f32 lanes: AVX-512F.
#[derive(Debug, Clone, Copy)]
pub struct F16(pub(super) __m512);

impl sealed::Sealed for F8 {}
impl sealed::Sealed for F16 {}

impl Vf32 for F8 {
    type Token = Avx2;
    const N: usize = 8;
    #[inline(always)]
    fn splat(_: Avx2, v: f32) -> Self {
        // SAFETY: the token proves AVX.
        unsafe { F8(_mm256_set1_ps(v)) }
    }
    #[inline(always)]
    fn load(_: Avx2, s: &[f32]) -> Self {
        let s = &s[..8];
        // SAFETY: the token proves AVX; `s` holds 8 samples.
        unsafe { F8(_mm256_loadu_ps(s.as_ptr())) }
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        let s = &mut s[..8];
        // SAFETY: `self` proves AVX; `s` holds 8 samples.
        unsafe { _mm256_storeu_ps(s.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn store_uninit(self, s: &mut [MaybeUninit<f32>]) {
        let s = &mut s[..8];
        // SAFETY: `self` proves AVX; `s` holds 8 samples, and
        // `MaybeUninit<f32>` has `f32`'s layout.
        unsafe { _mm256_storeu_ps(s.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe { F8(_mm256_mul_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe { F8(_mm256_add_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe { F8(_mm256_sub_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        // SAFETY: `self` proves FMA.
        unsafe { F8(_mm256_fmadd_ps(self.0, b.0, c.0)) }
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe { F8(_mm256_div_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe { F8(_mm256_max_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn round(self) -> Self {
        // SAFETY: `self` proves AVX.
        unsafe {
            F8(_mm256_round_ps::<
                { _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC },
            >(self.0))
        }
    }
    #[inline(always)]
    fn mul_pow2(self, n: Self) -> Self {
        // Adds n to the exponent field: exact while the result stays normal.
        // SAFETY: `self` proves AVX2.
        unsafe {
            let e = _mm256_slli_epi32::<23>(_mm256_cvtps_epi32(n.0));
            F8(_mm256_castsi256_ps(_mm256_add_epi32(
                _mm256_castps_si256(self.0),
                e,
            )))
        }
    }
}

impl Vf32 for F16 {
    type Token = Avx512;
    const N: usize = 16;
    #[inline(always)]
    fn splat(_: Avx512, v: f32) -> Self {
        // SAFETY: the token proves AVX-512F.
        unsafe { F16(_mm512_set1_ps(v)) }
    }
    #[inline(always)]
    fn load(_: Avx512, s: &[f32]) -> Self {
        let s = &s[..16];
        // SAFETY: the token proves AVX-512F; `s` holds 16 samples.
        unsafe { F16(_mm512_loadu_ps(s.as_ptr())) }
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        let s = &mut s[..16];
        // SAFETY: `self` proves AVX-512F; `s` holds 16 samples.
        unsafe { _mm512_storeu_ps(s.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn store_uninit(self, s: &mut [MaybeUninit<f32>]) {
        let s = &mut s[..16];
        // SAFETY: `self` proves AVX-512F; `s` holds 16 samples, and
        // `MaybeUninit<f32>` has `f32`'s layout.
        unsafe { _mm512_storeu_ps(s.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_mul_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_add_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_sub_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_fmadd_ps(self.0, b.0, c.0)) }
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_div_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_max_ps(self.0, o.0)) }
    }
    #[inline(always)]
    fn round(self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe {
            F16(_mm512_roundscale_ps::<
                { _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC },
            >(self.0))
        }
    }
    #[inline(always)]
    fn mul_pow2(self, n: Self) -> Self {
        // SAFETY: `self` proves AVX-512F.
        unsafe { F16(_mm512_scalef_ps(self.0, n.0)) }
    }
}

/// Per 128-bit lane: the low 64-bit halves of `x` and `y`, interleaved.
#[inline(always)]
fn lo_pd8(_: Avx2, x: __m256, y: __m256) -> __m256 {
    // SAFETY: the token proves AVX.
    unsafe { _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))) }
}

/// Per 128-bit lane: the high 64-bit halves of `x` and `y`, interleaved.
#[inline(always)]
fn hi_pd8(_: Avx2, x: __m256, y: __m256) -> __m256 {
    // SAFETY: the token proves AVX.
    unsafe { _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))) }
}

/// Transposes 8x8: `v[i]` holds row `i`, afterwards column `i`. (No
/// closures here or below: they would not inherit the target features.)
#[inline(always)]
fn transpose8(t: Avx2, v: &mut [F8; 8]) {
    // SAFETY: the token proves AVX.
    unsafe {
        let z = _mm256_setzero_ps();
        let (mut a, mut b) = ([z; 4], [z; 4]);
        for i in 0..4 {
            a[i] = _mm256_unpacklo_ps(v[2 * i].0, v[2 * i + 1].0);
            b[i] = _mm256_unpackhi_ps(v[2 * i].0, v[2 * i + 1].0);
        }
        // c[h][q]: per 128-bit lane L, column 4L + q of rows 4h..4h+4.
        let mut c = [[z; 4]; 2];
        for (h, c) in c.iter_mut().enumerate() {
            let (i, j) = (2 * h, 2 * h + 1);
            *c = [
                lo_pd8(t, a[i], a[j]),
                hi_pd8(t, a[i], a[j]),
                lo_pd8(t, b[i], b[j]),
                hi_pd8(t, b[i], b[j]),
            ];
        }
        for q in 0..4 {
            v[q] = F8(_mm256_permute2f128_ps::<0x20>(c[0][q], c[1][q]));
            v[4 + q] = F8(_mm256_permute2f128_ps::<0x31>(c[0][q], c[1][q]));
        }
    }
}

/// Transposes 2x2 blocks of 128-bit lanes (RGBA pixels): `v[i]` holds
/// pixels 0, 1 of row `i`, afterwards rows 0, 1 of pixel `i`.
#[inline(always)]
fn transpose8_px(_: Avx2, v: &mut [F8; 2]) {
    // SAFETY: the token proves AVX.
    unsafe {
        let (a, b) = (v[0].0, v[1].0);
        v[0] = F8(_mm256_permute2f128_ps::<0x20>(a, b));
        v[1] = F8(_mm256_permute2f128_ps::<0x31>(a, b));
    }
}

/// 4x4 swap of 128-bit lanes (rows to columns): `v[i]` lane `l` becomes `v[l]` lane `i`.
#[inline(always)]
fn lanes4(_: Avx512, v: [__m512; 4]) -> [__m512; 4] {
    // SAFETY: the token proves AVX-512F.
    unsafe {
        let t0 = _mm512_shuffle_f32x4::<0b01_00_01_00>(v[0], v[1]);
        let t1 = _mm512_shuffle_f32x4::<0b01_00_01_00>(v[2], v[3]);
        let t2 = _mm512_shuffle_f32x4::<0b11_10_11_10>(v[0], v[1]);
        let t3 = _mm512_shuffle_f32x4::<0b11_10_11_10>(v[2], v[3]);
        [
            _mm512_shuffle_f32x4::<0b10_00_10_00>(t0, t1),
            _mm512_shuffle_f32x4::<0b11_01_11_01>(t0, t1),
            _mm512_shuffle_f32x4::<0b10_00_10_00>(t2, t3),
            _mm512_shuffle_f32x4::<0b11_01_11_01>(t2, t3),
        ]
    }
}

/// As [`lo_pd8`], on 512 bits.
#[inline(always)]
fn lo_pd16(_: Avx512, x: __m512, y: __m512) -> __m512 {
    // SAFETY: the token proves AVX-512F.
    unsafe { _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(x), _mm512_castps_pd(y))) }
}

/// As [`hi_pd8`], on 512 bits.
#[inline(always)]
fn hi_pd16(_: Avx512, x: __m512, y: __m512) -> __m512 {
    // SAFETY: the token proves AVX-512F.
    unsafe { _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(x), _mm512_castps_pd(y))) }
}

/// Transposes 16x16: `v[i]` holds row `i`, afterwards column `i`.
#[inline(always)]
fn transpose16(t: Avx512, v: &mut [F16; 16]) {
    // SAFETY: the token proves AVX-512F.
    unsafe {
        let z = _mm512_setzero_ps();
        let (mut a, mut b) = ([z; 8], [z; 8]);
        for i in 0..8 {
            a[i] = _mm512_unpacklo_ps(v[2 * i].0, v[2 * i + 1].0);
            b[i] = _mm512_unpackhi_ps(v[2 * i].0, v[2 * i + 1].0);
        }
        // c[h][q]: per 128-bit lane L, column 4L + q of rows 4h..4h+4.
        let mut c = [[z; 4]; 4];
        for (h, c) in c.iter_mut().enumerate() {
            let (i, j) = (2 * h, 2 * h + 1);
            *c = [
                lo_pd16(t, a[i], a[j]),
                hi_pd16(t, a[i], a[j]),
                lo_pd16(t, b[i], b[j]),
                hi_pd16(t, b[i], b[j]),
            ];
        }
        for q in 0..4 {
            let o = lanes4(t, [c[0][q], c[1][q], c[2][q], c[3][q]]);
            for l in 0..4 {
                v[4 * l + q] = F16(o[l]);
            }
        }
    }
}

/// Transposes 4x4 blocks of 128-bit lanes (RGBA pixels): `v[i]` holds
/// pixels 0..4 of row `i`, afterwards rows 0..4 of pixel `i`.
#[inline(always)]
fn transpose16_px(t: Avx512, v: &mut [F16; 4]) {
    let o = lanes4(t, [v[0].0, v[1].0, v[2].0, v[3].0]);
    for l in 0..4 {
        v[l] = F16(o[l]);
    }
}

/// A vector type's square tile, rows to columns: `T` vectors, rows to columns (gray),
/// or `T` vectors of pixels (RGBA).
pub(super) trait Tile: Vf32 {
    /// Rows (and pixels) per tile for `C` channels; 0 when not supported.
    fn tile(c: usize) -> usize;
    /// Transposes `v[..tile(c)]`.
    fn swap_axes(t: Self::Token, v: &mut [Self; 16], c: usize);
    /// `N` samples from `p`.
    ///
    /// # Safety
    /// `p..p + N` must be readable.
    unsafe fn load_ptr(t: Self::Token, p: *const f32) -> Self;
    /// Into `N` samples at `p`.
    ///
    /// # Safety
    /// `p..p + N` must be writable.
    unsafe fn store_ptr(self, p: *mut f32);
}

impl Tile for F8 {
    #[inline(always)]
    fn tile(c: usize) -> usize {
        match c {
            1 => 8,
            4 => 2,
            _ => 0,
        }
    }
    #[inline(always)]
    fn swap_axes(t: Avx2, v: &mut [Self; 16], c: usize) {
        if c == 1 {
            let v: &mut [Self; 8] = (&mut v[..8]).try_into().unwrap();
            transpose8(t, v);
        } else {
            let v: &mut [Self; 2] = (&mut v[..2]).try_into().unwrap();
            transpose8_px(t, v);
        }
    }
    // SAFETY: the caller keeps `Tile::load_ptr`'s contract (`p` valid for one vector).
    #[inline(always)]
    unsafe fn load_ptr(_: Avx2, p: *const f32) -> Self {
        // SAFETY: the token proves AVX; the caller's contract.
        unsafe { F8(_mm256_loadu_ps(p)) }
    }
    // SAFETY: the caller keeps `Tile::store_ptr`'s contract (`p` valid for one vector).
    #[inline(always)]
    unsafe fn store_ptr(self, p: *mut f32) {
        // SAFETY: `self` proves AVX; the caller's contract.
        unsafe { _mm256_storeu_ps(p, self.0) }
    }
}

impl Tile for F16 {
    #[inline(always)]
    fn tile(c: usize) -> usize {
        match c {
            1 => 16,
            4 => 4,
            _ => 0,
        }
    }
    #[inline(always)]
    fn swap_axes(t: Avx512, v: &mut [Self; 16], c: usize) {
        if c == 1 {
            transpose16(t, v);
        } else {
            let v: &mut [Self; 4] = (&mut v[..4]).try_into().unwrap();
            transpose16_px(t, v);
        }
    }
    // SAFETY: the caller keeps `Tile::load_ptr`'s contract (`p` valid for one vector).
    #[inline(always)]
    unsafe fn load_ptr(_: Avx512, p: *const f32) -> Self {
        // SAFETY: the token proves AVX-512F; the caller's contract.
        unsafe { F16(_mm512_loadu_ps(p)) }
    }
    // SAFETY: the caller keeps `Tile::store_ptr`'s contract (`p` valid for one vector).
    #[inline(always)]
    unsafe fn store_ptr(self, p: *mut f32) {
        // SAFETY: `self` proves AVX-512F; the caller's contract.
        unsafe { _mm512_storeu_ps(p, self.0) }
    }
}

/// The vectorised part of `transpose_in`: whole tiles of rows `..k1` and
/// pixels `..i1`, returned for the portable code to finish.
#[inline(always)]
pub(super) fn tiles<V: Tile, const C: usize>(
    t: V::Token,
    rows: &[f32],
    row_len: usize,
    x: &mut [f32],
    m: usize,
) -> (usize, usize) {
    let tl = V::tile(C);
    if tl == 0 {
        return (0, 0);
    }
    let (nr, w) = (m / C, row_len / C);
    let (k1, i1) = (nr / tl * tl, w / tl * tl);
    assert!(V::N == tl * C && rows.len() >= nr * row_len && x.len() >= w * m);
    let (rp, xp) = (rows.as_ptr(), x.as_mut_ptr());
    for tile in 0..i1 / tl {
        let (i0, mut k0) = (tile * tl, 0);
        while k0 < k1 {
            let mut v = [V::splat(t, 0.0); 16];
            for (q, v) in v[..tl].iter_mut().enumerate() {
                // SAFETY: row k0 + q < nr, and its pixels i0..i0 + tl lie
                // within i1 <= w, so the load stays in `rows` (checked above).
                *v = unsafe { V::load_ptr(t, rp.add((k0 + q) * row_len + i0 * C)) };
            }
            V::swap_axes(t, &mut v, C);
            for (q, v) in v[..tl].iter().enumerate() {
                // SAFETY: pixel i0 + q < w, columns k0 * C.. + V::N <= k1 * C <= m.
                unsafe { v.store_ptr(xp.add((i0 + q) * m + k0 * C)) };
            }
            k0 += tl;
        }
    }
    (k1, i1)
}

/// The vectorised part of `transpose_out`, as [`tiles`].
#[inline(always)]
pub(super) fn tiles_out<V: Tile, D: Sample, const C: usize>(
    t: V::Token,
    y: &[f32],
    m: usize,
    dst: &mut [D],
    row_len: usize,
) -> (usize, usize) {
    let tl = V::tile(C);
    if tl == 0 {
        return (0, 0);
    }
    let (nr, w) = (m / C, row_len / C);
    let (k1, i1) = (nr / tl * tl, w / tl * tl);
    assert!(V::N == tl * C && y.len() >= w * m && dst.len() >= nr * row_len);
    let yp = y.as_ptr();
    let fp = mem::cast_slice_mut::<D, f32>(dst).map(|d| d.as_mut_ptr());
    for tile in 0..i1 / tl {
        let (i0, mut k0) = (tile * tl, 0);
        while k0 < k1 {
            let mut v = [V::splat(t, 0.0); 16];
            for (q, v) in v[..tl].iter_mut().enumerate() {
                // SAFETY: pixel i0 + q < w, columns k0 * C.. + V::N <= m (checked above).
                *v = unsafe { V::load_ptr(t, yp.add((i0 + q) * m + k0 * C)) };
            }
            V::swap_axes(t, &mut v, C);
            for (q, v) in v[..tl].iter().enumerate() {
                let at = (k0 + q) * row_len + i0 * C;
                match fp {
                    // SAFETY: row k0 + q < nr, pixels i0..i0 + tl within w.
                    Some(p) => unsafe { v.store_ptr(p.add(at)) },
                    None => store_samples(*v, &mut dst[at..]),
                }
            }
            k0 += tl;
        }
    }
    (k1, i1)
}
