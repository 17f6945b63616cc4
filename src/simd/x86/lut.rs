//! [`crate::simd::lut::map_bytes`] with AVX-512 VBMI: a 256-entry byte
//! table is four 512-bit registers; two `vpermi2b` look 64 samples up in
//! its low and high halves, and the samples' top bits pick between them.
//! Channels whose tables differ are looked up in each and blended by
//! lane masks.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Whether the CPU has what [`vbmi`] uses.
fn has_vbmi() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vbmi")
}

/// Maps the whole groups of `64 C` samples at the start of `src` into
/// `dst` and returns how many samples that was (0 without AVX-512 VBMI).
pub(crate) fn map_bytes_vbmi<const C: usize>(
    tables: &[[u8; 256]; C],
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
) -> usize {
    if !has_vbmi() {
        return 0;
    }
    let n = src.len().min(dst.len()) / (64 * C) * (64 * C);
    // SAFETY: the CPU has AVX-512F, BW and VBMI (checked above); `n` is at
    // most both lengths.
    unsafe { vbmi::<C>(tables, src.as_ptr(), dst.as_mut_ptr().cast(), n) };
    n
}

/// `dst[i] = tables[i % C][src[i]]` for `i < n`, `n` a multiple of `64 C`.
///
/// # Safety
/// The CPU must have AVX-512F, BW and VBMI; `src` must be readable and
/// `dst` writable for `n` bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn vbmi<const C: usize>(tables: &[[u8; 256]; C], src: *const u8, dst: *mut u8, n: usize) {
    // Distinct tables (`k` of them), each as 4 registers, with the lanes
    // of vector `v` of a group that use it (`mask[v][u]`).
    let mut owner = [0usize; C];
    let mut k = 0;
    let mut regs = [[_mm512_setzero_si512(); 4]; C];
    let mut mask = [[0u64; C]; C];
    for c in 0..C {
        match (0..c).find(|&o| tables[o] == tables[c]) {
            Some(o) => owner[c] = owner[o],
            None => {
                owner[c] = k;
                for (q, r) in regs[k].iter_mut().enumerate() {
                    // SAFETY: 64 bytes from offset 64 q of a 256-byte table.
                    *r = unsafe { _mm512_loadu_si512(tables[c][64 * q..].as_ptr().cast()) };
                }
                k += 1;
            }
        }
    }
    for j in 0..64 * C {
        mask[j / 64][owner[j % C]] |= 1 << (j % 64);
    }
    let mut i = 0;
    while i < n {
        for (v, lanes) in mask.iter().enumerate() {
            // SAFETY: i + 64 v + 64 <= n, inside both buffers (the caller's contract).
            let idx = unsafe { _mm512_loadu_si512(src.add(i + 64 * v).cast()) };
            let high = _mm512_movepi8_mask(idx);
            let mut out = look(&regs[0], idx, high);
            for (m, r) in lanes[1..k].iter().zip(&regs[1..k]) {
                out = _mm512_mask_blend_epi8(*m, out, look(r, idx, high));
            }
            // SAFETY: as the load.
            unsafe { _mm512_storeu_si512(dst.add(i + 64 * v).cast(), out) };
        }
        i += 64 * C;
    }
}

/// Table `r` (4 registers) at the bytes of `idx`; `high` marks the bytes
/// of 128 and above.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn look(r: &[__m512i; 4], idx: __m512i, high: __mmask64) -> __m512i {
    let lo = _mm512_permutex2var_epi8(r[0], idx, r[1]);
    let hi = _mm512_permutex2var_epi8(r[2], idx, r[3]);
    _mm512_mask_blend_epi8(high, lo, hi)
}
