//! Cache-blocked image transposes: [`transpose_band`] writes a band of an
//! image's transpose block by block, and each instruction set moves a block
//! with its own square tiles ([`BlockTranspose`]).
//!
//! Pixels are moved as `E`-byte units (`E` = channels x sample size: 1 for
//! u8 gray, 4 for f32 gray and u8 RGBA, 16 for f32 RGBA, ...), so one tile
//! transpose serves every sample type of that pixel size. The portable code
//! copies pixel by pixel inside a block; the x86 code moves whole tiles
//! with shuffles ([`super::x86`]) and leaves the block's ragged edges to
//! the portable code.

use std::mem::MaybeUninit;

use super::{mem, sealed, Portable};
use crate::image::Sample;

/// Block transposes of `E`-byte pixels: every instruction set's token
/// implements it.
pub trait BlockTranspose: sealed::Sealed + Copy {
    /// `dst[x * ds + y * E..][..E] = src[y * ss + x * E..][..E]` for every
    /// `y < rows`, `x < cols`: a block of `rows` x `cols` pixels of `src`
    /// (rows `ss` bytes apart) becomes `cols` x `rows` pixels of `dst`
    /// (rows `ds` bytes apart). Writes exactly those bytes of `dst`.
    /// Panics if either slice is too short for its block.
    fn transpose_block<const E: usize>(
        self,
        src: &[u8],
        ss: usize,
        rows: usize,
        cols: usize,
        dst: &mut [MaybeUninit<u8>],
        ds: usize,
    );
}

impl BlockTranspose for Portable {
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
        block_rest::<E>(src, ss, rows, cols, dst, ds, (0, 0));
    }
}

/// Panics unless `src` (`src_len` bytes) and `dst` (`dst_len` bytes) hold
/// a block of `rows` x `cols` `E`-byte pixels and its transpose.
#[inline(always)]
pub(super) fn check_block<const E: usize>(
    src_len: usize,
    ss: usize,
    rows: usize,
    cols: usize,
    dst_len: usize,
    ds: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    let fits = (rows - 1)
        .checked_mul(ss)
        .and_then(|a| a.checked_add(cols * E))
        .is_some_and(|n| n <= src_len)
        && (cols - 1)
            .checked_mul(ds)
            .and_then(|a| a.checked_add(rows * E))
            .is_some_and(|n| n <= dst_len)
        && ss >= cols * E
        && ds >= rows * E;
    assert!(
        fits,
        "transpose_block: a block of {rows}x{cols} does not fit"
    );
}

/// The part of a block outside its first `r1` rows x `c1` columns (which
/// the caller moved): pixel by pixel, the rows below `r1` and the columns
/// right of `c1`. This is all of the block for pixel sizes without tiles
/// (3, 6 and 12 bytes: RGB), so a pixel costs one move where it can: 3-,
/// 6- and 12-byte pixels go as one 4-, 8- or 16-byte load and store, whose
/// spare bytes read the next pixel of the source row and land on the next
/// pixel of the output row, which is written right after (so the last
/// row and the last column of the block go at their exact size).
#[inline(always)]
pub(super) fn block_rest<const E: usize>(
    src: &[u8],
    ss: usize,
    rows: usize,
    cols: usize,
    dst: &mut [MaybeUninit<u8>],
    ds: usize,
    (r1, c1): (usize, usize),
) {
    check_block::<E>(src.len(), ss, rows, cols, dst.len(), ds);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr().cast::<u8>());
    for x in 0..cols {
        let y0 = if x < c1 { r1 } else { 0 };
        let wide_rows = if x + 1 < cols {
            rows.saturating_sub(1)
        } else {
            y0
        };
        // SAFETY: check_block: pixel (y, x) of the block and the E bytes
        // after it in its row (x + 1 < cols, and a wide move is at most
        // 2 E bytes) lie in src; pixel (x, y) of the transpose and, for
        // y + 1 < rows, the next one lie in dst. Every pixel of this column
        // of the block from y0 on is written in order, the spill of a wide
        // move onto pixel y + 1 before pixel y + 1 itself.
        unsafe {
            for y in y0..wide_rows.max(y0) {
                let (s, d) = (sp.add(y * ss + x * E), dp.add(x * ds + y * E));
                match E {
                    3 => d
                        .cast::<u32>()
                        .write_unaligned(s.cast::<u32>().read_unaligned()),
                    6 => d
                        .cast::<u64>()
                        .write_unaligned(s.cast::<u64>().read_unaligned()),
                    12 => d
                        .cast::<u128>()
                        .write_unaligned(s.cast::<u128>().read_unaligned()),
                    _ => std::ptr::copy_nonoverlapping(s, d, E),
                }
            }
            for y in wide_rows.max(y0)..rows {
                std::ptr::copy_nonoverlapping(sp.add(y * ss + x * E), dp.add(x * ds + y * E), E);
            }
        }
    }
}

/// Edge of the square blocks, in pixels of `e` bytes: 64 up to 4-byte
/// pixels (a block is at most 16 KiB read plus 16 KiB written, which stays
/// in L1 while it is moved), 32 above.
pub fn block_edge(e: usize) -> usize {
    if e <= 4 {
        64
    } else {
        32
    }
}

/// Output rows per band of [`transpose_band`] for `e`-byte pixels: 1 KiB
/// of each input row (16 cache lines, which the prefetchers follow), and
/// at least a block's edge.
pub fn band_rows(e: usize) -> usize {
    (1024 / e).max(block_edge(e))
}

/// Output rows `x0..x0 + n` of the transpose of an image of `w` x `h`
/// pixels of `C` channels (`src`, rows `stride` samples apart): writes
/// `band` (`n * h * C` samples, `n <= w - x0`) block by block
/// ([`block_edge`]) and returns it written. Panics if `src` is shorter
/// than the image or `band` is not whole output rows inside it.
/// `#[inline(always)]`: it must be compiled into the caller's instruction
/// set trampoline ([`super::WithSimd`]), or its tiles' intrinsics become calls.
#[inline(always)]
pub fn transpose_band<'a, S: BlockTranspose, T: Sample, const C: usize>(
    simd: S,
    src: &[T],
    stride: usize,
    (w, h): (usize, usize),
    x0: usize,
    band: &'a mut [MaybeUninit<T>],
) -> &'a mut [T] {
    let out_row = h * C;
    let n = band.len().checked_div(out_row).unwrap_or(0);
    assert!(
        n * out_row == band.len() && x0 + n <= w && stride >= w * C,
        "transpose_band: rows {x0}+{n} of an output of {w} rows of {h} pixels"
    );
    assert!(h == 0 || src.len() >= (h - 1) * stride + w * C);
    let sz = std::mem::size_of::<T>();
    let (sb, db) = (as_bytes(src), uninit_as_bytes(band));
    let (ss, ds) = (stride * sz, out_row * sz);
    let edge = block_edge(C * sz);
    for y0 in (0..h).step_by(edge) {
        let rows = edge.min(h - y0);
        let s = &sb[(y0 * stride + x0 * C) * sz..];
        let d = &mut db[y0 * C * sz..];
        match C * sz {
            1 => simd.transpose_block::<1>(s, ss, rows, n, d, ds),
            2 => simd.transpose_block::<2>(s, ss, rows, n, d, ds),
            3 => simd.transpose_block::<3>(s, ss, rows, n, d, ds),
            4 => simd.transpose_block::<4>(s, ss, rows, n, d, ds),
            6 => simd.transpose_block::<6>(s, ss, rows, n, d, ds),
            8 => simd.transpose_block::<8>(s, ss, rows, n, d, ds),
            12 => simd.transpose_block::<12>(s, ss, rows, n, d, ds),
            16 => simd.transpose_block::<16>(s, ss, rows, n, d, ds),
            e => unreachable!("pixels of {e} bytes"),
        }
    }
    // SAFETY: the blocks at y0 = 0, edge, 2 edge, .. < h each wrote output
    // columns y0..y0 + rows (every sample of those pixels) of all `n` output
    // rows of the band (`transpose_block` writes exactly its block's
    // transpose), so together they wrote every sample of `band`.
    unsafe { mem::assume_init_mut(band) }
}

/// A slice of samples as its bytes.
fn as_bytes<T: Sample>(s: &[T]) -> &[u8] {
    // SAFETY: samples are u8, u16 or f32 (`Sample` is sealed): plain data
    // without padding, every byte initialised; u8 has alignment 1 and the
    // length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), std::mem::size_of_val(s)) }
}

/// An uninitialised slice of samples as uninitialised bytes.
fn uninit_as_bytes<T: Sample>(s: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: as `as_bytes`; any bytes written through the view form valid
    // samples of these types (every bit pattern is a u8, u16 or f32), and
    // the view borrows `s` mutably for its whole life.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), std::mem::size_of_val(s)) }
}
