//! [`crate::simd::moments`] on x86-64: exact moments of gray u8 rows with
//! AVX2, 32 bytes a step. `vpsadbw` against zero adds each 8 bytes into a
//! u64 lane (the sum); the bytes widened to 16 bits and `vpmaddwd` with
//! themselves give the sums of squares of pairs (at most 2 * 255^2 =
//! 130050) in 32-bit lanes, flushed into a u64 total every
//! [`FLUSH_STEPS`] steps (2^15 steps of two pairs per lane stay below
//! 2^32); `vpminub` and `vpmaxub` keep the extremes.
//!
//! The accumulators live in plain arrays between rows, loaded into
//! registers for each row. The kernel is a `#[target_feature]` function
//! entered from a safe method that holds the [`Avx2`] token: holding one
//! proves that the CPU runs the instructions, which is what every
//! `unsafe` call below relies on. Pointers are only read below lengths
//! checked before the loop.

use std::arch::x86_64::*;

use super::Avx2;
use crate::simd::moments::Moments;

/// Bytes per step.
const STEP: usize = 32;

/// Steps between flushes of the 32-bit square lanes.
const FLUSH_STEPS: usize = 1 << 15;

/// The running moments of gray u8 rows (see the module's docs).
#[derive(Debug, Clone)]
pub(crate) struct GrayBytes {
    _t: Avx2,
    sum: [u64; 4],
    /// Two vectors of 32-bit square lanes (the low and high bytes of each
    /// 128-bit half).
    sq: [[u32; 8]; 2],
    min: [u8; STEP],
    max: [u8; STEP],
    /// Steps in `sq` since its last flush.
    steps: usize,
    /// Totals: the flushed squares, and the samples outside whole steps.
    rest: Moments,
}

impl GrayBytes {
    /// Nothing added yet.
    pub(crate) fn new(t: Avx2) -> GrayBytes {
        GrayBytes {
            _t: t,
            sum: [0; 4],
            sq: [[0; 8]; 2],
            min: [u8::MAX; STEP],
            max: [0; STEP],
            steps: 0,
            rest: Moments::EMPTY,
        }
    }

    /// Adds the samples of `row`.
    pub(crate) fn add_row(&mut self, row: &[u8]) {
        for piece in row.chunks(STEP * FLUSH_STEPS) {
            let n = piece.len() / STEP;
            if self.steps + n > FLUSH_STEPS {
                self.flush();
            }
            self.steps += n;
            // SAFETY: the token proves AVX2; `n * STEP <= piece.len()`.
            unsafe { steps(self, piece.as_ptr(), n) };
            for &v in &piece[n * STEP..] {
                self.rest.add(u64::from(v));
            }
        }
    }

    /// Moves the square lanes into the total.
    fn flush(&mut self) {
        let lanes = self.sq.iter().flatten();
        self.rest.sq += lanes.map(|&v| u64::from(v)).sum::<u64>();
        self.sq = [[0; 8]; 2];
        self.steps = 0;
    }

    /// The moments of every sample added.
    pub(crate) fn finish(mut self) -> Moments {
        self.flush();
        let mut m = self.rest;
        m.sum += self.sum.iter().sum::<u64>();
        m.min = m
            .min
            .min(self.min.iter().map(|&v| u64::from(v)).min().unwrap_or(255));
        m.max = m
            .max
            .max(self.max.iter().map(|&v| u64::from(v)).max().unwrap_or(0));
        m
    }
}

/// Adds `n` steps from `p` to `acc`'s lanes.
///
/// # Safety
/// The CPU must have AVX2; `p` must be readable for `n * STEP` bytes.
#[target_feature(enable = "avx2")]
unsafe fn steps(acc: &mut GrayBytes, p: *const u8, n: usize) {
    // SAFETY: each array is 32 bytes, as the vectors.
    let (mut sum, mut sq0, mut sq1, mut lo, mut hi) = unsafe {
        (
            _mm256_loadu_si256(acc.sum.as_ptr().cast()),
            _mm256_loadu_si256(acc.sq[0].as_ptr().cast()),
            _mm256_loadu_si256(acc.sq[1].as_ptr().cast()),
            _mm256_loadu_si256(acc.min.as_ptr().cast()),
            _mm256_loadu_si256(acc.max.as_ptr().cast()),
        )
    };
    let zero = _mm256_setzero_si256();
    for i in 0..n {
        // SAFETY: (i + 1) STEP <= n STEP: inside the caller's range.
        let v = unsafe { _mm256_loadu_si256(p.add(i * STEP).cast()) };
        sum = _mm256_add_epi64(sum, _mm256_sad_epu8(v, zero));
        let a = _mm256_unpacklo_epi8(v, zero);
        let b = _mm256_unpackhi_epi8(v, zero);
        sq0 = _mm256_add_epi32(sq0, _mm256_madd_epi16(a, a));
        sq1 = _mm256_add_epi32(sq1, _mm256_madd_epi16(b, b));
        lo = _mm256_min_epu8(lo, v);
        hi = _mm256_max_epu8(hi, v);
    }
    // SAFETY: as the loads.
    unsafe {
        _mm256_storeu_si256(acc.sum.as_mut_ptr().cast(), sum);
        _mm256_storeu_si256(acc.sq[0].as_mut_ptr().cast(), sq0);
        _mm256_storeu_si256(acc.sq[1].as_mut_ptr().cast(), sq1);
        _mm256_storeu_si256(acc.min.as_mut_ptr().cast(), lo);
        _mm256_storeu_si256(acc.max.as_mut_ptr().cast(), hi);
    }
}
