//! [`crate::simd::widen`] on x86-64: f32 samples widened to f64 and
//! added in registers, with AVX-512F (8 f64 lanes a vector) or AVX2 (4).
//!
//! Each kernel is a `#[target_feature]` function entered from a safe
//! wrapper that takes the instruction set's token ([`Avx512`], [`Avx2`]):
//! holding one proves that the CPU runs the instructions, which is what
//! every `unsafe` call below relies on. Pointers are only read or written
//! below lengths checked before the loops.

use std::arch::x86_64::*;

use super::{Avx2, Avx512};
use crate::simd::widen::STEP;

/// `lanes[j] += sum of row[STEP k + j]` over the whole steps of `row`;
/// returns how many samples that was (a multiple of [`STEP`]).
pub(crate) fn sum_lanes_avx512(_: Avx512, row: &[f32], lanes: &mut [f64; STEP]) -> usize {
    let n = row.len() / STEP * STEP;
    // SAFETY: the token proves AVX-512F; `n <= row.len()`.
    unsafe { sum_avx512(row.as_ptr(), n, lanes) };
    n
}

/// [`sum_lanes_avx512`] with AVX2.
pub(crate) fn sum_lanes_avx2(_: Avx2, row: &[f32], lanes: &mut [f64; STEP]) -> usize {
    let n = row.len() / STEP * STEP;
    // SAFETY: the token proves AVX2; `n <= row.len()`.
    unsafe { sum_avx2(row.as_ptr(), n, lanes) };
    n
}

/// Six accumulators of 8 f64 lanes: vector `k` of a step holds its
/// samples `8k..8k + 8`.
///
/// # Safety
/// The CPU must have AVX-512F; `p` must be readable for `n` samples, `n`
/// a multiple of [`STEP`].
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn sum_avx512(p: *const f32, n: usize, lanes: &mut [f64; STEP]) {
    let mut acc = [_mm512_setzero_pd(); STEP / 8];
    let mut i = 0;
    while i < n {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 8k + 8 <= n: inside the caller's range.
            let v = unsafe { _mm256_loadu_ps(p.add(i + 8 * k)) };
            *a = _mm512_add_pd(*a, _mm512_cvtps_pd(v));
        }
        i += STEP;
    }
    for (k, a) in acc.iter().enumerate() {
        let mut s = [0f64; 8];
        // SAFETY: `s` holds 8 f64.
        unsafe { _mm512_storeu_pd(s.as_mut_ptr(), *a) };
        for (l, v) in lanes[8 * k..8 * k + 8].iter_mut().zip(s) {
            *l += v;
        }
    }
}

/// Twelve accumulators of 4 f64 lanes: vector `k` of a step holds its
/// samples `4k..4k + 4`.
///
/// # Safety
/// The CPU must have AVX2; `p` must be readable for `n` samples, `n` a
/// multiple of [`STEP`].
#[target_feature(enable = "avx2,fma")]
unsafe fn sum_avx2(p: *const f32, n: usize, lanes: &mut [f64; STEP]) {
    let mut acc = [_mm256_setzero_pd(); STEP / 4];
    let mut i = 0;
    while i < n {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 4k + 4 <= n: inside the caller's range.
            let v = unsafe { _mm_loadu_ps(p.add(i + 4 * k)) };
            *a = _mm256_add_pd(*a, _mm256_cvtps_pd(v));
        }
        i += STEP;
    }
    for (k, a) in acc.iter().enumerate() {
        let mut s = [0f64; 4];
        // SAFETY: `s` holds 4 f64.
        unsafe { _mm256_storeu_pd(s.as_mut_ptr(), *a) };
        for (l, v) in lanes[4 * k..4 * k + 4].iter_mut().zip(s) {
            *l += v;
        }
    }
}

/// `acc[i] += rows[0][i] + .. + rows[R - 1][i]` (in f64) for the columns
/// `0..16 m` of `acc`, `16 m` the most that every row holds; returns
/// `16 m`.
pub(crate) fn add_rows_avx512<const R: usize>(
    _: Avx512,
    acc: &mut [f64],
    rows: [&[f32]; R],
) -> usize {
    let n = rows.iter().fold(acc.len(), |n, r| n.min(r.len())) / 16 * 16;
    let ptrs = rows.map(<[f32]>::as_ptr);
    // SAFETY: the token proves AVX-512F; `n` is within `acc` and every row.
    unsafe { add_avx512(acc.as_mut_ptr(), ptrs, n) };
    n
}

/// [`add_rows_avx512`] with AVX2, 8 columns at a time.
pub(crate) fn add_rows_avx2<const R: usize>(_: Avx2, acc: &mut [f64], rows: [&[f32]; R]) -> usize {
    let n = rows.iter().fold(acc.len(), |n, r| n.min(r.len())) / 8 * 8;
    let ptrs = rows.map(<[f32]>::as_ptr);
    // SAFETY: the token proves AVX2; `n` is within `acc` and every row.
    unsafe { add_avx2(acc.as_mut_ptr(), ptrs, n) };
    n
}

/// 16 columns at a time: the rows' samples widened and added in two
/// chains (even and odd rows), then into `acc`.
///
/// # Safety
/// The CPU must have AVX-512F; `acc` must be writable and every row
/// readable for `n` samples, `n` a multiple of 16.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn add_avx512<const R: usize>(acc: *mut f64, rows: [*const f32; R], n: usize) {
    let mut i = 0;
    while i < n {
        let mut s = [_mm512_setzero_pd(); 4];
        for (r, row) in rows.iter().enumerate() {
            // SAFETY: i + 16 <= n: inside the caller's range.
            let v = unsafe { _mm512_loadu_ps(row.add(i)) };
            let lo = _mm512_castps512_ps256(v);
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)));
            let c = 2 * (r % 2);
            s[c] = _mm512_add_pd(s[c], _mm512_cvtps_pd(lo));
            s[c + 1] = _mm512_add_pd(s[c + 1], _mm512_cvtps_pd(hi));
        }
        // SAFETY: as the loads: 16 f64 of `acc` from `i`.
        unsafe {
            let a = acc.add(i);
            let lo = _mm512_add_pd(_mm512_loadu_pd(a), _mm512_add_pd(s[0], s[2]));
            let hi = _mm512_add_pd(_mm512_loadu_pd(a.add(8)), _mm512_add_pd(s[1], s[3]));
            _mm512_storeu_pd(a, lo);
            _mm512_storeu_pd(a.add(8), hi);
        }
        i += 16;
    }
}

/// [`add_avx512`] with AVX2: 8 columns at a time.
///
/// # Safety
/// The CPU must have AVX2; `acc` must be writable and every row readable
/// for `n` samples, `n` a multiple of 8.
#[target_feature(enable = "avx2,fma")]
unsafe fn add_avx2<const R: usize>(acc: *mut f64, rows: [*const f32; R], n: usize) {
    let mut i = 0;
    while i < n {
        let mut s = [_mm256_setzero_pd(); 4];
        for (r, row) in rows.iter().enumerate() {
            // SAFETY: i + 8 <= n: inside the caller's range.
            let v = unsafe { _mm256_loadu_ps(row.add(i)) };
            let c = 2 * (r % 2);
            s[c] = _mm256_add_pd(s[c], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
            s[c + 1] = _mm256_add_pd(s[c + 1], _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)));
        }
        // SAFETY: as the loads: 8 f64 of `acc` from `i`.
        unsafe {
            let a = acc.add(i);
            let lo = _mm256_add_pd(_mm256_loadu_pd(a), _mm256_add_pd(s[0], s[2]));
            let hi = _mm256_add_pd(_mm256_loadu_pd(a.add(4)), _mm256_add_pd(s[1], s[3]));
            _mm256_storeu_pd(a, lo);
            _mm256_storeu_pd(a.add(4), hi);
        }
        i += 8;
    }
}
