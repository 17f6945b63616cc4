//! Block transposes on x86-64 ([`BlockTranspose`]): 4- and 16-byte pixels
//! as f32 lanes through the square transposes of [`super::f32s`] (8x8 and
//! 2x2 with AVX2, 16x16 and 4x4 with AVX-512F), 1-, 2- and 8-byte pixels
//! with byte, word and quadword unpacks (AVX2: two tiles of 16x16, 8x8 or
//! 2x2 pixels side by side, one per 128-bit lane). The block's edges
//! outside whole tiles, and other pixel sizes, go pixel by pixel.
//!
//! The tokens prove the instructions; every load and store stays inside
//! the block that [`check_block`] checked before the loops.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::f32s::{Tile, F16, F8};
use super::{Avx2, Avx512};
use crate::simd::blocks::{block_rest, check_block, BlockTranspose};

impl BlockTranspose for Avx2 {
    #[inline(always)]
    fn transpose_block<const E: usize>(
        self,
        src: &[u8],
        ss: usize,
        rows: usize,
        cols: usize,
        dst: &mut [MaybeUninit<u8>],
        ds: usize,
    ) {
        check_block::<E>(src.len(), ss, rows, cols, dst.len(), ds);
        let done = match E {
            4 | 16 => vec_tiles::<F8, E>(self, src, ss, rows, cols, dst, ds),
            1 | 2 | 8 => lane_tiles::<E>(self, src, ss, rows, cols, dst, ds),
            _ => (0, 0),
        };
        block_rest::<E>(src, ss, rows, cols, dst, ds, done);
    }
}

impl BlockTranspose for Avx512 {
    #[inline(always)]
    fn transpose_block<const E: usize>(
        self,
        src: &[u8],
        ss: usize,
        rows: usize,
        cols: usize,
        dst: &mut [MaybeUninit<u8>],
        ds: usize,
    ) {
        check_block::<E>(src.len(), ss, rows, cols, dst.len(), ds);
        let done = match E {
            4 | 16 => vec_tiles::<F16, E>(self, src, ss, rows, cols, dst, ds),
            1 | 2 | 8 => lane_tiles::<E>(self.avx2(), src, ss, rows, cols, dst, ds),
            _ => (0, 0),
        };
        block_rest::<E>(src, ss, rows, cols, dst, ds, done);
    }
}

/// The whole tiles of a checked block of 4-byte (`E` = 4: one f32 lane
/// each) or 16-byte pixels (four lanes each), moved as `V`'s square tiles;
/// returns the rows and columns they covered.
#[inline(always)]
fn vec_tiles<V: Tile, const E: usize>(
    t: V::Token,
    src: &[u8],
    ss: usize,
    rows: usize,
    cols: usize,
    dst: &mut [MaybeUninit<u8>],
    ds: usize,
) -> (usize, usize) {
    let c = E / 4;
    let tl = V::tile(c);
    debug_assert!(tl * E == V::N * 4);
    let (r1, c1) = (rows / tl * tl, cols / tl * tl);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    for y in (0..r1).step_by(tl) {
        for x in (0..c1).step_by(tl) {
            let mut v = [V::splat(t, 0.0); 16];
            for (q, v) in v[..tl].iter_mut().enumerate() {
                // SAFETY: row y + q < rows, pixels x..x + tl <= cols: `tl * E`
                // bytes (one vector) inside the checked block of `src`.
                *v = unsafe { V::load_ptr(t, sp.add((y + q) * ss + x * E).cast()) };
            }
            V::swap_axes(t, &mut v, c);
            for (q, v) in v[..tl].iter().enumerate() {
                // SAFETY: output row x + q < cols, its pixels y..y + tl <=
                // rows: one vector inside the checked block of `dst`.
                unsafe { v.store_ptr(dp.add((x + q) * ds + y * E).cast()) };
            }
        }
    }
    (r1, c1)
}

/// Interleaves the low (`HI` false) or high halves of each 128-bit lane of
/// `a` and `b` in units of `E` bytes.
#[inline(always)]
fn unpack<const E: usize, const HI: bool>(_: Avx2, a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: the token proves AVX2.
    unsafe {
        match (E, HI) {
            (1, false) => _mm256_unpacklo_epi8(a, b),
            (1, true) => _mm256_unpackhi_epi8(a, b),
            (2, false) => _mm256_unpacklo_epi16(a, b),
            (2, true) => _mm256_unpackhi_epi16(a, b),
            (8, false) => _mm256_unpacklo_epi64(a, b),
            (8, true) => _mm256_unpackhi_epi64(a, b),
            _ => unreachable!("no unpack of {E}-byte units"),
        }
    }
}

/// The whole tiles of a checked block of `E`-byte pixels (1, 2 or 8), `L =
/// 16 / E` rows by `2 L` pixels each: one 32-byte load per row, then
/// `log2 L` rounds that pair vector `i` with `i + L / 2` (unpacking low
/// halves into `2 i`, high into `2 i + 1`). Each round rotates a pixel's
/// row and column bits (row bits high) left by one inside each 128-bit
/// lane, so after `log2 L` rounds lane 0 of vector `q` holds column `q` of
/// the left `L x L` tile, lane 1 column `q` of the right one. Returns the
/// rows and columns covered.
#[inline(always)]
fn lane_tiles<const E: usize>(
    t: Avx2,
    src: &[u8],
    ss: usize,
    rows: usize,
    cols: usize,
    dst: &mut [MaybeUninit<u8>],
    ds: usize,
) -> (usize, usize) {
    let l = 16 / E;
    let (r1, c1) = (rows / l * l, cols / (2 * l) * (2 * l));
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    for y in (0..r1).step_by(l) {
        for x in (0..c1).step_by(2 * l) {
            // SAFETY: the token proves AVX.
            let mut v = [unsafe { _mm256_setzero_si256() }; 16];
            for (q, v) in v[..l].iter_mut().enumerate() {
                // SAFETY: row y + q < rows, pixels x..x + 2l <= cols: 32
                // bytes inside the checked block of `src`.
                *v = unsafe { _mm256_loadu_si256(sp.add((y + q) * ss + x * E).cast()) };
            }
            let mut step = 1;
            while step < l {
                let a = v;
                for i in 0..l / 2 {
                    v[2 * i] = unpack::<E, false>(t, a[i], a[i + l / 2]);
                    v[2 * i + 1] = unpack::<E, true>(t, a[i], a[i + l / 2]);
                }
                step *= 2;
            }
            for (q, v) in v[..l].iter().enumerate() {
                // SAFETY: output rows x + q and x + l + q < cols, pixels
                // y..y + l <= rows of each: 16 bytes inside the checked
                // block of `dst`. The token proves AVX2.
                unsafe {
                    let (lo, hi) = (
                        _mm256_castsi256_si128(*v),
                        _mm256_extracti128_si256::<1>(*v),
                    );
                    _mm_storeu_si128(dp.add((x + q) * ds + y * E).cast(), lo);
                    _mm_storeu_si128(dp.add((x + l + q) * ds + y * E).cast(), hi);
                }
            }
        }
    }
    (r1, c1)
}
