//! [`crate::simd::matrix3::rgb`] with AVX2: 8 interleaved RGB pixels (24
//! samples, three 256-bit vectors of f32) are split into a vector per
//! colour by two blends and a lane permute each, multiplied and added as
//! the scalar code does (no fused products), and interleaved back the same
//! way. u8 and u16 samples are widened on load and narrowed on store by
//! `vcvtps2dq` (round half to even) and unsigned saturating packs.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::matrix3_512 as wide;
use super::{Avx2, Avx512};
use crate::simd::mem;

/// Pixels per step.
const PIXELS: usize = 8;

/// Blend masks of the lanes of a vector of 8 interleaved samples that
/// hold one colour: lanes 0, 3 and 6; 1, 4 and 7; 2 and 5.
const L036: i32 = 0b0100_1001;
const L147: i32 = 0b1001_0010;
const L25: i32 = 0b0010_0100;

/// Samples that [`groups`] widens and narrows.
trait Io: Copy + 'static {
    /// 24 samples from `p` as f32.
    ///
    /// # Safety
    /// The CPU must have AVX2; 24 samples must be readable at `p`.
    unsafe fn load(p: *const Self) -> [__m256; 3];
    /// `v` (24 samples) into `p`, narrowed as [`crate::simd::Narrow`]
    /// does (values of u8 and u16 outputs within `i32`'s range).
    ///
    /// # Safety
    /// The CPU must have AVX2; 24 samples must be writable at `p`.
    unsafe fn store(v: [__m256; 3], p: *mut Self);
}

impl Io for f32 {
    /// # Safety
    /// [`Io`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const f32) -> [__m256; 3] {
        // SAFETY: 24 samples readable at `p` (the contract).
        unsafe { [0, 8, 16].map(|o| _mm256_loadu_ps(p.add(o))) }
    }

    /// # Safety
    /// [`Io`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(v: [__m256; 3], p: *mut f32) {
        for (o, v) in [0, 8, 16].into_iter().zip(v) {
            // SAFETY: 24 samples writable at `p` (the contract).
            unsafe { _mm256_storeu_ps(p.add(o), v) };
        }
    }
}

impl Io for u8 {
    /// # Safety
    /// [`Io`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const u8) -> [__m256; 3] {
        // SAFETY: 24 bytes readable at `p` (the contract), 8 per load.
        let w = |o: usize| unsafe { _mm_loadl_epi64(p.add(o).cast()) };
        [0, 8, 16].map(|o| _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(w(o))))
    }

    /// # Safety
    /// [`Io`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(v: [__m256; 3], p: *mut u8) {
        let [a, b, c] = v.map(|v| _mm256_cvtps_epi32(v));
        // Per 128-bit half: a 0..4, b 0..4, c 0..4, c 0..4 (then 4..8).
        let q = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, c));
        let q = _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        // SAFETY: 24 bytes writable at `p` (the contract): 16, then 8.
        unsafe {
            _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(q));
            _mm_storel_epi64(p.add(16).cast(), _mm256_extracti128_si256::<1>(q));
        }
    }
}

impl Io for u16 {
    /// # Safety
    /// [`Io`]'s contract: the samples of one step readable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(p: *const u16) -> [__m256; 3] {
        // SAFETY: 24 samples readable at `p` (the contract), 8 per load.
        let w = |o: usize| unsafe { _mm_loadu_si128(p.add(o).cast()) };
        [0, 8, 16].map(|o| _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(w(o))))
    }

    /// # Safety
    /// [`Io`]'s contract: the samples of one step writable at `p`, and the CPU has the features enabled here.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(v: [__m256; 3], p: *mut u16) {
        let [a, b, c] = v.map(|v| _mm256_cvtps_epi32(v));
        // 64-bit lanes a 0..4, b 0..4, a 4..8, b 4..8 into a, a, b, b.
        let ab = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(a, b));
        let cc = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(c, c));
        // SAFETY: 24 samples writable at `p` (the contract): 16, then 8.
        unsafe {
            _mm256_storeu_si256(p.cast(), ab);
            _mm_storeu_si128(p.add(16).cast(), _mm256_castsi256_si128(cc));
        }
    }
}

/// Writes `M * (r, g, b)` of the whole groups of [`PIXELS`] RGB pixels at
/// the start of `src` into `dst` and returns how many samples that was (0
/// without AVX2, or for samples other than u8, u16 and f32). With `wide`
/// on a CPU with AVX-512F, groups of 16 pixels go through
/// [`super::matrix3_512`] first; otherwise, with `stream`, f32 outputs go
/// through [`stream_f32`].
pub(crate) fn groups<X: 'static>(
    m: &[f32; 9],
    src: &[X],
    dst: &mut [MaybeUninit<X>],
    wide: bool,
    stream: bool,
) -> usize {
    if Avx2::try_new().is_none() {
        return 0;
    }
    let n = src.len().min(dst.len()) / (3 * PIXELS) * (3 * PIXELS);
    let w = match wide && Avx512::try_new().is_some() {
        true => n / (3 * wide::PIXELS) * (3 * wide::PIXELS),
        false => 0,
    };
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    if mem::cast_slice::<X, u8>(src).is_some() {
        // SAFETY: the CPU has AVX2 (checked above), and AVX-512F where `w`
        // is not 0; `w <= n`, at most both lengths; `X` is u8.
        unsafe { both::<u8>(m, s.cast(), d.cast(), w, n) };
    } else if mem::cast_slice::<X, u16>(src).is_some() {
        // SAFETY: as above, `X` being u16.
        unsafe { both::<u16>(m, s.cast(), d.cast(), w, n) };
    } else if mem::cast_slice::<X, f32>(src).is_some() && stream && w == 0 {
        // SAFETY: the CPU has AVX2; `n` is at most both lengths; `X` is f32.
        return unsafe { stream_f32(m, s.cast(), d.cast(), n) };
    } else if mem::cast_slice::<X, f32>(src).is_some() {
        // SAFETY: as above, `X` being f32.
        unsafe { both::<f32>(m, s.cast(), d.cast(), w, n) };
    } else {
        return 0;
    }
    n
}

/// [`run`] on f32 samples with streaming stores (`vmovntps`, which write
/// whole lines without reading them first and leave the caches to the
/// input), then `sfence`: the first group with plain stores, then groups
/// from the first pixel whose output address is a multiple of 32 bytes
/// (its 96-byte groups stay so), over the first again where they overlap.
/// Returns how many samples from the start were written: all `n` but up
/// to 7 pixels.
///
/// # Safety
/// As [`run`]'s for `n` samples; `dst` 4-byte aligned (an f32's).
#[target_feature(enable = "avx2")]
unsafe fn stream_f32(m: &[f32; 9], src: *const f32, dst: *mut f32, n: usize) -> usize {
    if n < 2 * 3 * PIXELS {
        // SAFETY: the caller's contract.
        unsafe { run::<f32>(m, src, dst, n) };
        return n;
    }
    // 12 bytes a pixel: some pixel among the first 8 starts on a 32-byte
    // boundary, as `dst` is a multiple of 4.
    // (`dst + 12 p` is aligned where 12 p is the `4 a` bytes to the next
    // boundary modulo 32, so 3 p = a modulo 8, p = 3 a modulo 8.)
    let head = 3 * ((dst as usize).wrapping_neg() % 32 / 4) % 8;
    let start = 3 * head;
    let end = start + (n - start) / (3 * PIXELS) * (3 * PIXELS);
    let mc = m.map(|v| _mm256_set1_ps(v));
    if head > 0 {
        // SAFETY: 24 <= n samples, inside both buffers.
        unsafe { run::<f32>(m, src, dst, 3 * PIXELS) };
    }
    let mut i = start;
    while i < end {
        // SAFETY: i + 24 <= end <= n, inside both buffers (the caller's
        // contract); `dst + i` is 32-byte aligned, as are `+ 8` and `+ 16`.
        unsafe {
            let out = product(&mc, <f32 as Io>::load(src.add(i)));
            for (o, v) in [0, 8, 16].into_iter().zip(out) {
                _mm256_stream_ps(dst.add(i + o), v);
            }
        }
        i += 3 * PIXELS;
    }
    _mm_sfence();
    end
}

/// Writes `M * (r, g, b)` of the whole groups of 6 RGBA pixels (24
/// samples) at the start of `src` into `dst`, alpha copied, and returns how
/// many samples that was (0 without AVX2, or for samples other than u8,
/// u16 and f32). Each vector holds two pixels: in-lane broadcasts put a
/// pixel's red, green and blue in all four of its lanes, which are
/// multiplied by the matrix's columns and added as the scalar code does,
/// and alpha is blended back from the input (bit for bit).
pub(crate) fn groups4<X: 'static>(m: &[f32; 9], src: &[X], dst: &mut [MaybeUninit<X>]) -> usize {
    if Avx2::try_new().is_none() {
        return 0;
    }
    let n = src.len().min(dst.len()) / (3 * PIXELS) * (3 * PIXELS);
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    if mem::cast_slice::<X, u8>(src).is_some() {
        // SAFETY: the CPU has AVX2 (checked above); `n` is at most both
        // lengths; `X` is u8.
        unsafe { run4::<u8>(m, s.cast(), d.cast(), n) };
    } else if mem::cast_slice::<X, u16>(src).is_some() {
        // SAFETY: as above, `X` being u16.
        unsafe { run4::<u16>(m, s.cast(), d.cast(), n) };
    } else if mem::cast_slice::<X, f32>(src).is_some() {
        // SAFETY: as above, `X` being f32.
        unsafe { run4::<f32>(m, s.cast(), d.cast(), n) };
    } else {
        return 0;
    }
    n
}

/// The matrix on the `n / 4` RGBA pixels at `src` into `dst`, `n` a
/// multiple of 24.
///
/// # Safety
/// The CPU must have AVX2; `src` must be readable and `dst` writable for
/// `n` samples.
#[target_feature(enable = "avx2")]
unsafe fn run4<X: Io>(m: &[f32; 9], src: *const X, dst: *mut X, n: usize) {
    let col = |c: usize| {
        let (r, g, b) = (m[c], m[3 + c], m[6 + c]);
        _mm256_setr_ps(r, g, b, 0.0, r, g, b, 0.0)
    };
    let (c0, c1, c2) = (col(0), col(1), col(2));
    let mut i = 0;
    while i < n {
        // SAFETY: i + 24 <= n, inside both buffers (the caller's contract).
        let v = unsafe { X::load(src.add(i)) };
        let out = v.map(|x| {
            let r = _mm256_mul_ps(c0, _mm256_permute_ps::<0x00>(x));
            let s = _mm256_add_ps(r, _mm256_mul_ps(c1, _mm256_permute_ps::<0x55>(x)));
            let s = _mm256_add_ps(s, _mm256_mul_ps(c2, _mm256_permute_ps::<0xaa>(x)));
            _mm256_blend_ps::<0b1000_1000>(s, x)
        });
        // SAFETY: as the load.
        unsafe { X::store(out, dst.add(i)) };
        i += 3 * PIXELS;
    }
}

/// Samples `0..w` with AVX-512F, `w..n` with AVX2.
///
/// # Safety
/// As [`run`]'s for `n` samples, and the CPU must have AVX-512F where `w`
/// is not 0 (a multiple of `3 wide::PIXELS`).
#[inline]
unsafe fn both<X: Io + wide::Io512>(m: &[f32; 9], src: *const X, dst: *mut X, w: usize, n: usize) {
    if w > 0 {
        // SAFETY: the CPU has AVX-512F; `w <= n` (the contract).
        unsafe { wide::run::<X>(m, src, dst, w) };
    }
    // SAFETY: samples `w..n` are inside both buffers (the contract).
    unsafe { run::<X>(m, src.add(w), dst.add(w), n - w) };
}

/// The matrix on the `n / 3` pixels at `src` into `dst`, `n` a multiple of
/// `3 PIXELS`.
///
/// # Safety
/// The CPU must have AVX2; `src` must be readable and `dst` writable for
/// `n` samples.
#[target_feature(enable = "avx2")]
unsafe fn run<X: Io>(m: &[f32; 9], src: *const X, dst: *mut X, n: usize) {
    let m = m.map(|v| _mm256_set1_ps(v));
    let mut i = 0;
    while i < n {
        // SAFETY: i + 24 <= n, inside both buffers (the caller's contract).
        let out = product(&m, unsafe { X::load(src.add(i)) });
        // SAFETY: as the load.
        unsafe { X::store(out, dst.add(i)) };
        i += 3 * PIXELS;
    }
}

/// The matrix `m` (each coefficient in every lane) on 8 interleaved RGB
/// pixels as f32, interleaved again.
#[inline]
#[target_feature(enable = "avx2")]
fn product(m: &[__m256; 9], [a, b, c]: [__m256; 3]) -> [__m256; 3] {
    let [r, g, bl] = split(a, b, c);
    let row = |k: usize| {
        let s = _mm256_add_ps(_mm256_mul_ps(m[3 * k], r), _mm256_mul_ps(m[3 * k + 1], g));
        _mm256_add_ps(s, _mm256_mul_ps(m[3 * k + 2], bl))
    };
    join(row(0), row(1), row(2))
}

/// 8 interleaved RGB pixels (`a`: r0 g0 b0 r1 g1 b1 r2 g2, `b` and `c`
/// the rest) as a vector per colour.
#[inline]
#[target_feature(enable = "avx2")]
fn split(a: __m256, b: __m256, c: __m256) -> [__m256; 3] {
    let r = _mm256_blend_ps::<L25>(_mm256_blend_ps::<L147>(a, b), c);
    let g = _mm256_blend_ps::<L036>(_mm256_blend_ps::<L25>(a, b), c);
    let bl = _mm256_blend_ps::<L147>(_mm256_blend_ps::<L036>(a, b), c);
    // Lane j of `r` holds red of pixel 0 3 6 1 4 7 2 5; this order is its
    // own inverse, and so is blue's.
    let ir = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
    let ig = _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6);
    let ib = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
    [
        _mm256_permutevar8x32_ps(r, ir),
        _mm256_permutevar8x32_ps(g, ig),
        _mm256_permutevar8x32_ps(bl, ib),
    ]
}

/// The inverse of [`split`].
#[inline]
#[target_feature(enable = "avx2")]
fn join(r: __m256, g: __m256, bl: __m256) -> [__m256; 3] {
    let r = _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
    let g = _mm256_permutevar8x32_ps(g, _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2));
    let bl = _mm256_permutevar8x32_ps(bl, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
    [
        _mm256_blend_ps::<L25>(_mm256_blend_ps::<L147>(r, g), bl),
        _mm256_blend_ps::<L036>(_mm256_blend_ps::<L25>(r, g), bl),
        _mm256_blend_ps::<L147>(_mm256_blend_ps::<L036>(r, g), bl),
    ]
}
