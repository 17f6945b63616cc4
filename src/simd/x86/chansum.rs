//! [`crate::simd::chansum`] on x86-64: per-channel sums of u8 rows with
//! AVX2's `vpsadbw`, which adds each 8 bytes of a vector into a u64 lane.
//! A lane must hold bytes of one channel: gray bytes need nothing, RGBA
//! bytes are regrouped by channel (`vpshufb`, then `vpunpck*dq` of two
//! vectors), RGB bytes are picked by a mask per channel.
//!
//! Each kernel is a `#[target_feature]` function entered from a safe
//! wrapper that takes the [`Avx2`] token: holding one proves that the CPU
//! runs the instructions, which is what every `unsafe` call below relies
//! on. Pointers are only read below lengths checked before the loops.

use std::arch::x86_64::*;

use super::Avx2;

/// Bytes per step of the kernels: four vectors, a multiple of 1, 3 (with
/// the RGB kernel's 96) and 4 channels, so every step starts on a pixel.
pub(crate) const STEP: usize = 128;

/// Bytes per step of the RGB kernel: three vectors, 32 pixels.
pub(crate) const RGB_STEP: usize = 96;

/// Per-channel sums of the whole steps of `row` (pixels of `C` u8
/// channels, `C` 1, 3 or 4) into `out`; returns how many bytes that was.
pub(crate) fn byte_sums_avx2<const C: usize>(_: Avx2, row: &[u8], out: &mut [u64; C]) -> usize {
    let step = if C == 3 { RGB_STEP } else { STEP };
    let n = row.len() / step * step;
    let p = row.as_ptr();
    // SAFETY: the token proves AVX2 (all three kernels need only it);
    // `n <= row.len()` and is a multiple of the kernel's step.
    let s = unsafe {
        match C {
            1 => gray(p, n),
            3 => rgb(p, n),
            _ => rgba(p, n),
        }
    };
    for (c, o) in out.iter_mut().enumerate() {
        *o += s[c];
    }
    n
}

/// The four u64 lanes of `v`.
#[inline(always)]
fn lanes(v: __m256i) -> [u64; 4] {
    let mut s = [0u64; 4];
    // SAFETY: `s` holds 32 bytes.
    unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) };
    s
}

/// The sum of `n` bytes from `p` (in the first slot).
///
/// # Safety
/// The CPU must have AVX2; `p` must be readable for `n` bytes, `n` a
/// multiple of [`STEP`].
#[target_feature(enable = "avx2")]
unsafe fn gray(p: *const u8, n: usize) -> [u64; 4] {
    let zero = _mm256_setzero_si256();
    let mut acc = [zero; 4];
    let mut i = 0;
    while i < n {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: i + 32k + 32 <= n: inside the caller's range.
            let v = unsafe { _mm256_loadu_si256(p.add(i + 32 * k).cast()) };
            *a = _mm256_add_epi64(*a, _mm256_sad_epu8(v, zero));
        }
        i += STEP;
    }
    let s = lanes(_mm256_add_epi64(
        _mm256_add_epi64(acc[0], acc[1]),
        _mm256_add_epi64(acc[2], acc[3]),
    ));
    [s.iter().sum(), 0, 0, 0]
}

/// Per-channel sums of `n` bytes of RGBA pixels from `p`.
///
/// # Safety
/// As [`gray`].
#[target_feature(enable = "avx2")]
unsafe fn rgba(p: *const u8, n: usize) -> [u64; 4] {
    // Each 16 bytes (4 pixels) become 4 bytes of R, of G, of B, of A.
    let by_channel = _mm256_setr_epi8(
        0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, //
        0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
    );
    let zero = _mm256_setzero_si256();
    // u64 lanes: R G R G and B A B A.
    let (mut rg, mut ba) = (zero, zero);
    let mut i = 0;
    while i < n {
        for k in 0..2 {
            // SAFETY: i + 64k + 64 <= n: inside the caller's range.
            let (a, b) = unsafe {
                let q = p.add(i + 64 * k);
                (
                    _mm256_loadu_si256(q.cast()),
                    _mm256_loadu_si256(q.add(32).cast()),
                )
            };
            let a = _mm256_shuffle_epi8(a, by_channel);
            let b = _mm256_shuffle_epi8(b, by_channel);
            // 8 bytes of R then 8 of G (and B, A) in each half.
            let lo = _mm256_unpacklo_epi32(a, b);
            let hi = _mm256_unpackhi_epi32(a, b);
            rg = _mm256_add_epi64(rg, _mm256_sad_epu8(lo, zero));
            ba = _mm256_add_epi64(ba, _mm256_sad_epu8(hi, zero));
        }
        i += STEP;
    }
    let (rg, ba) = (lanes(rg), lanes(ba));
    [rg[0] + rg[2], rg[1] + rg[3], ba[0] + ba[2], ba[1] + ba[3]]
}

/// Mask `3 k + c` keeps the bytes of channel `c` in vector `k` of an RGB
/// step (byte `j` of the step is channel `j % 3`).
const RGB_MASKS: [[u8; 32]; 9] = {
    let mut m = [[0u8; 32]; 9];
    let mut j = 0;
    while j < RGB_STEP {
        m[3 * (j / 32) + j % 3][j % 32] = 0xff;
        j += 1;
    }
    m
};

/// Per-channel sums of `n` bytes of RGB pixels from `p`.
///
/// # Safety
/// The CPU must have AVX2; `p` must be readable for `n` bytes, `n` a
/// multiple of [`RGB_STEP`].
#[target_feature(enable = "avx2")]
unsafe fn rgb(p: *const u8, n: usize) -> [u64; 4] {
    // SAFETY: each mask is 32 bytes.
    let masks: [__m256i; 9] =
        std::array::from_fn(|m| unsafe { _mm256_loadu_si256(RGB_MASKS[m].as_ptr().cast()) });
    let zero = _mm256_setzero_si256();
    let mut acc = [zero; 3];
    let mut i = 0;
    while i < n {
        for k in 0..3 {
            // SAFETY: i + 32k + 32 <= n: inside the caller's range.
            let v = unsafe { _mm256_loadu_si256(p.add(i + 32 * k).cast()) };
            for (c, a) in acc.iter_mut().enumerate() {
                let picked = _mm256_and_si256(v, masks[3 * k + c]);
                *a = _mm256_add_epi64(*a, _mm256_sad_epu8(picked, zero));
            }
        }
        i += RGB_STEP;
    }
    let s = acc.map(|a| lanes(a).iter().sum());
    [s[0], s[1], s[2], 0]
}
