//! [`super::matrix3`]'s steps with AVX-512F: 16 interleaved RGB pixels (48
//! samples, three 512-bit vectors of f32) are split into a vector per
//! colour by two two-source lane permutes (`vpermt2ps`) each and joined
//! back the same way; u8 and u16 outputs are narrowed by `vcvtps2dq`, a
//! maximum with 0 and the unsigned saturating down-conversions
//! (`vpmovusdb`, `vpmovusdw`).

use std::arch::x86_64::*;

/// Pixels per step.
pub(super) const PIXELS: usize = 16;

/// Samples that [`run`] widens and narrows.
pub(super) trait Io512: Copy + 'static {
    /// 48 samples from `p` as f32.
    ///
    /// # Safety
    /// The CPU must have AVX-512F; 48 samples must be readable at `p`.
    unsafe fn load(p: *const Self) -> [__m512; 3];
    /// `v` (48 samples) into `p`, narrowed as [`crate::simd::Narrow`] does
    /// (values of u8 and u16 outputs within `i32`'s range).
    ///
    /// # Safety
    /// The CPU must have AVX-512F; 48 samples must be writable at `p`.
    unsafe fn store(v: [__m512; 3], p: *mut Self);
}

impl Io512 for f32 {
    /// # Safety
    /// [`Io512`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const f32) -> [__m512; 3] {
        // SAFETY: 48 samples readable at `p` (the contract).
        unsafe { [0, 16, 32].map(|o| _mm512_loadu_ps(p.add(o))) }
    }

    /// # Safety
    /// [`Io512`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(v: [__m512; 3], p: *mut f32) {
        for (o, v) in [0, 16, 32].into_iter().zip(v) {
            // SAFETY: 48 samples writable at `p` (the contract).
            unsafe { _mm512_storeu_ps(p.add(o), v) };
        }
    }
}

impl Io512 for u8 {
    /// # Safety
    /// [`Io512`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const u8) -> [__m512; 3] {
        // SAFETY: 48 bytes readable at `p` (the contract), 16 per load.
        let w = |o: usize| unsafe { _mm_loadu_si128(p.add(o).cast()) };
        [0, 16, 32].map(|o| _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(w(o))))
    }

    /// # Safety
    /// [`Io512`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(v: [__m512; 3], p: *mut u8) {
        for (o, v) in [0, 16, 32].into_iter().zip(v) {
            let i = _mm512_max_epi32(_mm512_cvtps_epi32(v), _mm512_setzero_si512());
            // SAFETY: 48 bytes writable at `p` (the contract), 16 per store.
            unsafe { _mm_storeu_si128(p.add(o).cast(), _mm512_cvtusepi32_epi8(i)) };
        }
    }
}

impl Io512 for u16 {
    /// # Safety
    /// [`Io512`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const u16) -> [__m512; 3] {
        // SAFETY: 48 samples readable at `p` (the contract), 16 per load.
        let w = |o: usize| unsafe { _mm256_loadu_si256(p.add(o).cast()) };
        [0, 16, 32].map(|o| _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(w(o))))
    }

    /// # Safety
    /// [`Io512`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(v: [__m512; 3], p: *mut u16) {
        for (o, v) in [0, 16, 32].into_iter().zip(v) {
            let i = _mm512_max_epi32(_mm512_cvtps_epi32(v), _mm512_setzero_si512());
            // SAFETY: 48 samples writable at `p` (the contract), 16 per store.
            unsafe { _mm256_storeu_si256(p.add(o).cast(), _mm512_cvtusepi32_epi16(i)) };
        }
    }
}

/// Indices of [`split`]'s permutes for colour `k`: the first gathers the
/// colour's samples of vectors 0 and 1 (pixels whose sample `3 p + k` is
/// below 32), the second keeps those and adds vector 2's.
const fn split_idx(k: usize) -> [[i32; 16]; 2] {
    let mut t = [[0; 16]; 2];
    let mut p = 0;
    while p < 16 {
        let s = 3 * p + k;
        if s < 32 {
            t[0][p] = s as i32;
            t[1][p] = p as i32;
        } else {
            t[1][p] = (16 + s - 32) as i32;
        }
        p += 1;
    }
    t
}

/// Indices of [`join`]'s permutes for output vector `v`: the first takes
/// red (vector 0) and green (vector 1) of each sample's pixel, the second
/// keeps those and adds blue.
const fn join_idx(v: usize) -> [[i32; 16]; 2] {
    let mut t = [[0; 16]; 2];
    let mut i = 0;
    while i < 16 {
        let s = 16 * v + i;
        let (p, k) = (s / 3, s % 3);
        t[0][i] = if k == 1 { 16 + p as i32 } else { p as i32 };
        t[1][i] = if k == 2 { 16 + p as i32 } else { i as i32 };
        i += 1;
    }
    t
}

/// [`split_idx`] and [`join_idx`] of every colour and vector.
static IDX: [[[[i32; 16]; 2]; 3]; 2] = [
    [split_idx(0), split_idx(1), split_idx(2)],
    [join_idx(0), join_idx(1), join_idx(2)],
];

/// The matrix on the `n / 3` pixels at `src` into `dst`, `n` a multiple of
/// `3 PIXELS`.
///
/// # Safety
/// The CPU must have AVX-512F; `src` must be readable and `dst` writable
/// for `n` samples.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn run<X: Io512>(m: &[f32; 9], src: *const X, dst: *mut X, n: usize) {
    let m = m.map(|v| _mm512_set1_ps(v));
    // SAFETY: each index array is 16 i32, 64 bytes.
    let idx = IDX.map(|a| a.map(|b| b.map(|i| unsafe { _mm512_loadu_si512(i.as_ptr().cast()) })));
    let mut i = 0;
    while i < n {
        // SAFETY: i + 48 <= n, inside both buffers (the caller's contract).
        let v = unsafe { X::load(src.add(i)) };
        let [r, g, b] = idx[0]
            .map(|[x, y]| _mm512_permutex2var_ps(_mm512_permutex2var_ps(v[0], x, v[1]), y, v[2]));
        let row = |k: usize| {
            let s = _mm512_add_ps(_mm512_mul_ps(m[3 * k], r), _mm512_mul_ps(m[3 * k + 1], g));
            _mm512_add_ps(s, _mm512_mul_ps(m[3 * k + 2], b))
        };
        let (r, g, b) = (row(0), row(1), row(2));
        let out =
            idx[1].map(|[x, y]| _mm512_permutex2var_ps(_mm512_permutex2var_ps(r, x, g), y, b));
        // SAFETY: as the load.
        unsafe { X::store(out, dst.add(i)) };
        i += 3 * PIXELS;
    }
}
