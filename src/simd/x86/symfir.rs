//! [`crate::simd::symfir`] on AVX2: 16 columns of 16-bit samples to a
//! vector, `vpmulhuw` for each pair of taps, four vectors (64 columns) per
//! block of registers across the taps; or 8 columns of f32 to a vector, an
//! add and an FMA for each pair, eight vectors (64 columns) per block, so
//! that eight sums are in flight (one FMA's latency covers about as many
//! issued on two pipes).
//!
//! Each kernel is a `#[target_feature]` function entered from a safe
//! wrapper that takes the [`Avx2`] token: holding one proves that the CPU
//! runs AVX2, which is what every `unsafe` call below relies on. The lines
//! are read through [`Lines`], whose constructor checked that each holds
//! `n` samples inside its buffer; outputs are `n` long (checked by each
//! wrapper).

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::Avx2;
use crate::simd::mem;
use crate::simd::symfir::{walk_by, Lines, PairLines, FRAC};

/// Columns per block of registers: four vectors of u16, eight of f32.
const BLOCK: usize = 64;

/// Vectors per output in a block of [`pair_f32`]: two outputs' sums and
/// the two lines each keeps from the step before take `4 PAIR_V` of the
/// 16 registers.
const PAIR_V: usize = 3;

/// Vectors per output in a block of [`pair_u16`]: two, one 32-byte store
/// per output (the sums' chains are one add long, so four suffice).
const PAIR_V16: usize = 2;

/// [`crate::simd::symfir::filter_u16`] with AVX2 (`out` is `n` long).
pub(crate) fn filter_u16_avx2(_: Avx2, lines: &Lines<'_>, out: &mut [u16]) {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    // SAFETY: the token proves AVX2; `out` holds `n` samples.
    unsafe { u16_avx2(lines, out) }
}

/// [`crate::simd::symfir::filter_u8`] with AVX2 (`out` is `n` long).
pub(crate) fn filter_u8_avx2<'o>(
    _: Avx2,
    lines: &Lines<'_>,
    bias: u16,
    out: &'o mut [MaybeUninit<u8>],
) -> &'o mut [u8] {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    // SAFETY: the token proves AVX2; `out` holds `n` bytes.
    unsafe { u8_avx2(lines, bias, out) };
    // SAFETY: `u8_avx2` wrote every byte of `out` (`walk_by` visits every
    // column below `n`, and each visit stores its columns).
    unsafe { mem::assume_init_mut(out) }
}

/// [`crate::simd::symfir::filter_f32`] with AVX2 and FMA (`out` is `n`
/// long).
pub(crate) fn filter_f32_avx2(_: Avx2, lines: &Lines<'_, f32>, out: &mut [f32]) {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    // SAFETY: the token proves AVX2 and FMA; `out` holds `n` samples.
    unsafe { f32_avx2(lines, out.as_mut_ptr()) }
}

/// [`crate::simd::symfir::filter_f32_into`] with AVX2 and FMA (`out` is
/// `n` long).
pub(crate) fn filter_f32_into_avx2<'o>(
    _: Avx2,
    lines: &Lines<'_, f32>,
    out: &'o mut [MaybeUninit<f32>],
) -> &'o mut [f32] {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    // SAFETY: the token proves AVX2 and FMA; `out` holds `n` samples
    // (`MaybeUninit<f32>` has `f32`'s layout).
    unsafe { f32_avx2(lines, out.as_mut_ptr().cast()) };
    // SAFETY: `f32_avx2` wrote every sample of `out` (`walk_by` visits
    // every column below `n`, and each visit stores its columns).
    unsafe { mem::assume_init_mut(out) }
}

/// # Safety
/// The CPU must have AVX2 and FMA; `out` must be valid for writes of
/// `lines.n` samples.
#[target_feature(enable = "avx2,fma")]
unsafe fn f32_avx2(lines: &Lines<'_, f32>, out: *mut f32) {
    walk_by::<BLOCK, 8>(lines.n, &mut |j, vectors| match vectors {
        // SAFETY: j < n (`walk_by`), inside `out` (the caller).
        0 => unsafe { out.add(j).write(lines.column_f32(j)) },
        1 => {
            // SAFETY: j + 8 <= n (`walk_by`), inside `out` (the caller);
            // AVX2 (the caller).
            unsafe { _mm256_storeu_ps(out.add(j), block_f32::<1>(lines, j)[0]) }
        }
        _ => {
            // SAFETY: j + 64 <= n (`walk_by`); AVX2 and FMA (the caller).
            let a = unsafe { block_f32::<8>(lines, j) };
            for (v, x) in a.into_iter().enumerate() {
                // SAFETY: j + 8 v + 8 <= n, inside `out` (the caller);
                // AVX2 (the caller).
                unsafe { _mm256_storeu_ps(out.add(j + 8 * v), x) }
            }
        }
    });
}

/// [`crate::simd::symfir::filter_u8_pair`] with AVX2 (`out0` and `out1`
/// are `n` long).
pub(crate) fn filter_u8_pair_avx2<'o>(
    _: Avx2,
    lines: &PairLines<'_, u16>,
    bias: u16,
    out0: &'o mut [MaybeUninit<u8>],
    out1: &'o mut [MaybeUninit<u8>],
) -> (&'o mut [u8], &'o mut [u8]) {
    assert!(
        out0.len() == lines.0.n && out1.len() == lines.0.n,
        "symfir: output length"
    );
    // SAFETY: the token proves AVX2; each output holds `n` bytes.
    unsafe {
        u8_pair_avx2(
            lines,
            bias,
            out0.as_mut_ptr().cast(),
            out1.as_mut_ptr().cast(),
        )
    };
    // SAFETY: `u8_pair_avx2` wrote every byte of both (`walk_by` visits
    // every column below `n`, and each visit stores its columns in both).
    unsafe { (mem::assume_init_mut(out0), mem::assume_init_mut(out1)) }
}

/// [`crate::simd::symfir::filter_f32_pair`] with AVX2 and FMA (`out0`
/// and `out1` are `n` long).
pub(crate) fn filter_f32_pair_avx2(
    _: Avx2,
    lines: &PairLines<'_>,
    out0: &mut [f32],
    out1: &mut [f32],
) {
    assert!(
        out0.len() == lines.0.n && out1.len() == lines.0.n,
        "symfir: output length"
    );
    // SAFETY: the token proves AVX2 and FMA; each output holds `n` samples.
    unsafe { f32_pair_avx2(lines, out0.as_mut_ptr(), out1.as_mut_ptr()) }
}

/// [`crate::simd::symfir::filter_f32_pair_into`] with AVX2 and FMA
/// (`out0` and `out1` are `n` long).
pub(crate) fn filter_f32_pair_into_avx2<'o>(
    _: Avx2,
    lines: &PairLines<'_>,
    out0: &'o mut [MaybeUninit<f32>],
    out1: &'o mut [MaybeUninit<f32>],
) -> (&'o mut [f32], &'o mut [f32]) {
    assert!(
        out0.len() == lines.0.n && out1.len() == lines.0.n,
        "symfir: output length"
    );
    // SAFETY: the token proves AVX2 and FMA; each output holds `n`
    // samples (`MaybeUninit<f32>` has `f32`'s layout).
    unsafe { f32_pair_avx2(lines, out0.as_mut_ptr().cast(), out1.as_mut_ptr().cast()) };
    // SAFETY: `f32_pair_avx2` wrote every sample of both (`walk_by` visits
    // every column below `n`, and each visit stores its columns in both).
    unsafe { (mem::assume_init_mut(out0), mem::assume_init_mut(out1)) }
}

/// # Safety
/// The CPU must have AVX2 and FMA; `o0` and `o1` must be valid for writes
/// of `lines.n` samples each.
#[target_feature(enable = "avx2,fma")]
unsafe fn f32_pair_avx2(lines: &PairLines<'_>, o0: *mut f32, o1: *mut f32) {
    let (first, second) = (lines.one(0), lines.one(1));
    walk_by::<{ 8 * PAIR_V }, 8>(lines.0.n, &mut |j, vectors| match vectors {
        // SAFETY: j < n (`walk_by`), inside both outputs (the caller).
        0 => unsafe {
            o0.add(j).write(first.column_f32(j));
            o1.add(j).write(second.column_f32(j));
        },
        1 => {
            // SAFETY: j + 8 <= n (`walk_by`), inside both outputs (the
            // caller); AVX2 and FMA (the caller).
            unsafe {
                let (a, b) = pair_f32::<1>(lines, j);
                _mm256_storeu_ps(o0.add(j), a[0]);
                _mm256_storeu_ps(o1.add(j), b[0]);
            }
        }
        _ => {
            // SAFETY: j + 8 PAIR_V <= n (`walk_by`); AVX2 and FMA (the
            // caller).
            let (a, b) = unsafe { pair_f32::<PAIR_V>(lines, j) };
            for v in 0..PAIR_V {
                // SAFETY: j + 8 v + 8 <= n, inside both outputs (the
                // caller); AVX2 (the caller).
                unsafe {
                    _mm256_storeu_ps(o0.add(j + 8 * v), a[v]);
                    _mm256_storeu_ps(o1.add(j + 8 * v), b[v]);
                }
            }
        }
    });
}

/// # Safety
/// The CPU must have AVX2; `o0` and `o1` must be valid for writes of
/// `lines.n` bytes each.
#[target_feature(enable = "avx2,fma")]
unsafe fn u8_pair_avx2(lines: &PairLines<'_, u16>, bias: u16, o0: *mut u8, o1: *mut u8) {
    let (first, second) = (lines.one(0), lines.one(1));
    // As in `u8_avx2`.
    let pack = |a: __m256i, b: __m256i| {
        let (a, b) = (
            _mm256_srli_epi16::<{ FRAC as i32 }>(a),
            _mm256_srli_epi16::<{ FRAC as i32 }>(b),
        );
        _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi16(a, b))
    };
    walk_by::<{ 16 * PAIR_V16 }, 16>(lines.0.n, &mut |j, vectors| match vectors {
        // SAFETY: j < n (`walk_by`), inside both outputs (the caller).
        0 => unsafe {
            o0.add(j).write((first.column(j, bias) >> FRAC) as u8);
            o1.add(j).write((second.column(j, bias) >> FRAC) as u8);
        },
        1 => {
            // SAFETY: j + 16 <= n (`walk_by`), 16 bytes inside both
            // outputs (the caller); AVX2 (the caller).
            unsafe {
                let (a, b) = pair_u16::<1>(lines, j, bias);
                _mm_storeu_si128(o0.add(j).cast(), _mm256_castsi256_si128(pack(a[0], a[0])));
                _mm_storeu_si128(o1.add(j).cast(), _mm256_castsi256_si128(pack(b[0], b[0])));
            }
        }
        _ => {
            // SAFETY: j + 32 <= n (`walk_by`), 32 bytes inside both
            // outputs (the caller); AVX2 (the caller).
            unsafe {
                let (a, b) = pair_u16::<PAIR_V16>(lines, j, bias);
                _mm256_storeu_si256(o0.add(j).cast(), pack(a[0], a[1]));
                _mm256_storeu_si256(o1.add(j).cast(), pack(b[0], b[1]));
            }
        }
    });
}

/// # Safety
/// The CPU must have AVX2; `out.len() == lines.n`.
#[target_feature(enable = "avx2,fma")]
unsafe fn u16_avx2(lines: &Lines<'_>, out: &mut [u16]) {
    walk_by::<BLOCK, 16>(lines.n, &mut |j, vectors| match vectors {
        0 => out[j] = lines.column(j, 0),
        1 => {
            let o = out[j..j + 16].as_mut_ptr();
            // SAFETY: j + 16 <= n (`walk_by`); `o` holds 16 samples; AVX2
            // (the caller).
            unsafe { _mm256_storeu_si256(o.cast(), block::<1>(lines, j, 0)[0]) }
        }
        _ => {
            // SAFETY: j + 64 <= n (`walk_by`); AVX2 (the caller).
            let a = unsafe { block::<4>(lines, j, 0) };
            for (v, x) in a.into_iter().enumerate() {
                let o = out[j + 16 * v..j + 16 * v + 16].as_mut_ptr();
                // SAFETY: `o` holds 16 samples; AVX2 (the caller).
                unsafe { _mm256_storeu_si256(o.cast(), x) }
            }
        }
    });
}

/// # Safety
/// The CPU must have AVX2; `out.len() == lines.n`.
#[target_feature(enable = "avx2,fma")]
unsafe fn u8_avx2(lines: &Lines<'_>, bias: u16, out: &mut [MaybeUninit<u8>]) {
    // Two vectors of sums (each below 2^15) to 32 bytes, in column order
    // (`packus` works within 128-bit halves; the permute puts them back).
    let pack = |a: __m256i, b: __m256i| {
        let (a, b) = (
            _mm256_srli_epi16::<{ FRAC as i32 }>(a),
            _mm256_srli_epi16::<{ FRAC as i32 }>(b),
        );
        _mm256_permute4x64_epi64::<0xD8>(_mm256_packus_epi16(a, b))
    };
    walk_by::<BLOCK, 16>(lines.n, &mut |j, vectors| match vectors {
        0 => {
            out[j].write((lines.column(j, bias) >> FRAC) as u8);
        }
        1 => {
            let o = out[j..j + 16].as_mut_ptr();
            // SAFETY: j + 16 <= n (`walk_by`); `o` holds 16 bytes
            // (`MaybeUninit<u8>` has `u8`'s layout); AVX2 (the caller).
            unsafe {
                let a = block::<1>(lines, j, bias)[0];
                _mm_storeu_si128(o.cast(), _mm256_castsi256_si128(pack(a, a)));
            }
        }
        _ => {
            let (lo, hi) = out[j..j + 64].split_at_mut(32);
            // SAFETY: j + 64 <= n (`walk_by`); `lo` and `hi` hold 32 bytes
            // each; AVX2 (the caller).
            unsafe {
                let a = block::<4>(lines, j, bias);
                _mm256_storeu_si256(lo.as_mut_ptr().cast(), pack(a[0], a[1]));
                _mm256_storeu_si256(hi.as_mut_ptr().cast(), pack(a[2], a[3]));
            }
        }
    });
}

/// The sums at columns `j..j + 16 V` from `init`, in `V` vectors.
///
/// The function carries the target features itself, and has no closures:
/// an `#[inline(always)]` helper without them gave its closures none, and
/// each closure left out of line made its intrinsics calls (the band ran
/// several times slower).
///
/// # Safety
/// The CPU must have AVX2; `j + 16 V <= lines.n`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn block<const V: usize>(lines: &Lines<'_>, j: usize, init: u16) -> [__m256i; V] {
    let r = lines.radius();
    let base = lines.base.as_ptr();
    let w0 = _mm256_set1_epi16(lines.w[0] as i16);
    let mut acc = [_mm256_set1_epi16(init as i16); V];
    // Every pointer and load below: `Lines::new` checked
    // offset + n <= base.len() for each line, and j + 16 V <= n (the
    // caller), so each vector of 16 samples lies inside `base`.
    // SAFETY: as just said.
    let c = unsafe { base.add(lines.offsets[r] + j) };
    for (v, s) in acc.iter_mut().enumerate() {
        // SAFETY: as above.
        let x = unsafe { _mm256_loadu_si256(c.add(16 * v).cast()) };
        *s = _mm256_add_epi16(*s, _mm256_mulhi_epu16(x, w0));
    }
    for k in 1..=r {
        // SAFETY: as above.
        let (a, b) = unsafe {
            (
                base.add(lines.offsets[r - k] + j),
                base.add(lines.offsets[r + k] + j),
            )
        };
        let wk = _mm256_set1_epi16(lines.w[k] as i16);
        for (v, s) in acc.iter_mut().enumerate() {
            // SAFETY: as above.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(a.add(16 * v).cast()),
                    _mm256_loadu_si256(b.add(16 * v).cast()),
                )
            };
            *s = _mm256_add_epi16(*s, _mm256_mulhi_epu16(_mm256_add_epi16(x, y), wk));
        }
    }
    acc
}

/// The f32 sums at columns `j..j + 8 V`, in `V` vectors (as [`block`]:
/// the features on the function itself, no closures).
///
/// # Safety
/// The CPU must have AVX2 and FMA; `j + 8 V <= lines.n`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn block_f32<const V: usize>(lines: &Lines<'_, f32>, j: usize) -> [__m256; V] {
    let r = lines.radius();
    let base = lines.base.as_ptr();
    let w0 = _mm256_set1_ps(lines.w[0]);
    let mut acc = [_mm256_setzero_ps(); V];
    // Every pointer and load below: `Lines::new` checked
    // offset + n <= base.len() for each line, and j + 8 V <= n (the
    // caller), so each vector of 8 samples lies inside `base`.
    // SAFETY: as just said.
    let c = unsafe { base.add(lines.offsets[r] + j) };
    for (v, s) in acc.iter_mut().enumerate() {
        // SAFETY: as above.
        *s = _mm256_mul_ps(unsafe { _mm256_loadu_ps(c.add(8 * v)) }, w0);
    }
    for k in 1..=r {
        // SAFETY: as above.
        let (a, b) = unsafe {
            (
                base.add(lines.offsets[r - k] + j),
                base.add(lines.offsets[r + k] + j),
            )
        };
        let wk = _mm256_set1_ps(lines.w[k]);
        for (v, s) in acc.iter_mut().enumerate() {
            // SAFETY: as above.
            let (x, y) = unsafe { (_mm256_loadu_ps(a.add(8 * v)), _mm256_loadu_ps(b.add(8 * v))) };
            *s = _mm256_fmadd_ps(_mm256_add_ps(x, y), wk, *s);
        }
    }
    acc
}

/// The two outputs' f32 sums at columns `j..j + 8 V` (as [`block_f32`],
/// whose sums these are bit for bit: the same pairs added, then
/// multiply-added in the same order). Step `k` loads lines `r - k` and
/// `r + 1 + k`; the first output pairs the former with line `r + k`, the
/// second pairs line `r + 1 - k` with the latter, and those two are the
/// lines step `k - 1` loaded, kept in registers.
///
/// # Safety
/// The CPU must have AVX2 and FMA; `j + 8 V <= lines.n`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn pair_f32<const V: usize>(lines: &PairLines<'_>, j: usize) -> ([__m256; V], [__m256; V]) {
    let l = &lines.0;
    let r = l.radius();
    let base = l.base.as_ptr();
    let w0 = _mm256_set1_ps(l.w[0]);
    // Every pointer and load below: `PairLines::new` checked
    // offset + n <= base.len() for each line, and j + 8 V <= n (the
    // caller), so each vector of 8 samples lies inside `base`.
    // SAFETY: as just said.
    let (c0, c1) = unsafe { (base.add(l.offsets[r] + j), base.add(l.offsets[r + 1] + j)) };
    // No closures here (see `block`): the arrays are filled in loops.
    let (mut low, mut high) = ([_mm256_setzero_ps(); V], [_mm256_setzero_ps(); V]);
    let (mut acc0, mut acc1) = ([_mm256_setzero_ps(); V], [_mm256_setzero_ps(); V]);
    for v in 0..V {
        // SAFETY: as above.
        (low[v], high[v]) = unsafe {
            (
                _mm256_loadu_ps(c0.add(8 * v)),
                _mm256_loadu_ps(c1.add(8 * v)),
            )
        };
        (acc0[v], acc1[v]) = (_mm256_mul_ps(low[v], w0), _mm256_mul_ps(high[v], w0));
    }
    for k in 1..=r {
        // SAFETY: as above.
        let (a, b) = unsafe {
            (
                base.add(l.offsets[r - k] + j),
                base.add(l.offsets[r + 1 + k] + j),
            )
        };
        let wk = _mm256_set1_ps(l.w[k]);
        for v in 0..V {
            // SAFETY: as above.
            let (x, y) = unsafe { (_mm256_loadu_ps(a.add(8 * v)), _mm256_loadu_ps(b.add(8 * v))) };
            acc0[v] = _mm256_fmadd_ps(_mm256_add_ps(x, high[v]), wk, acc0[v]);
            acc1[v] = _mm256_fmadd_ps(_mm256_add_ps(low[v], y), wk, acc1[v]);
            (low[v], high[v]) = (x, y);
        }
    }
    (acc0, acc1)
}

/// The two outputs' sums at columns `j..j + 16 V` from `init` (as
/// [`block`], whose sums these are bit for bit; the lines kept from step to
/// step as in [`pair_f32`]).
///
/// # Safety
/// The CPU must have AVX2; `j + 16 V <= lines.n`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn pair_u16<const V: usize>(
    lines: &PairLines<'_, u16>,
    j: usize,
    init: u16,
) -> ([__m256i; V], [__m256i; V]) {
    let l = &lines.0;
    let r = l.radius();
    let base = l.base.as_ptr();
    let w0 = _mm256_set1_epi16(l.w[0] as i16);
    // Every pointer and load below: `PairLines::new` checked
    // offset + n <= base.len() for each line, and j + 16 V <= n (the
    // caller), so each vector of 16 samples lies inside `base`.
    // SAFETY: as just said.
    let (c0, c1) = unsafe { (base.add(l.offsets[r] + j), base.add(l.offsets[r + 1] + j)) };
    let (mut low, mut high) = ([_mm256_setzero_si256(); V], [_mm256_setzero_si256(); V]);
    let (mut acc0, mut acc1) = (
        [_mm256_set1_epi16(init as i16); V],
        [_mm256_set1_epi16(init as i16); V],
    );
    for v in 0..V {
        // SAFETY: as above.
        (low[v], high[v]) = unsafe {
            (
                _mm256_loadu_si256(c0.add(16 * v).cast()),
                _mm256_loadu_si256(c1.add(16 * v).cast()),
            )
        };
        acc0[v] = _mm256_add_epi16(acc0[v], _mm256_mulhi_epu16(low[v], w0));
        acc1[v] = _mm256_add_epi16(acc1[v], _mm256_mulhi_epu16(high[v], w0));
    }
    for k in 1..=r {
        // SAFETY: as above.
        let (a, b) = unsafe {
            (
                base.add(l.offsets[r - k] + j),
                base.add(l.offsets[r + 1 + k] + j),
            )
        };
        let wk = _mm256_set1_epi16(l.w[k] as i16);
        for v in 0..V {
            // SAFETY: as above.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(a.add(16 * v).cast()),
                    _mm256_loadu_si256(b.add(16 * v).cast()),
                )
            };
            acc0[v] = _mm256_add_epi16(
                acc0[v],
                _mm256_mulhi_epu16(_mm256_add_epi16(x, high[v]), wk),
            );
            acc1[v] =
                _mm256_add_epi16(acc1[v], _mm256_mulhi_epu16(_mm256_add_epi16(low[v], y), wk));
            (low[v], high[v]) = (x, y);
        }
    }
    (acc0, acc1)
}
