//! The rayon median: rows in parallel, and inside a row many samples at a
//! time, each step of the selection one min and one max across the lanes,
//! which the compiler turns into vector instructions (no `unsafe`; the row
//! runs through [`simd::dispatch`] so that they are the CPU's widest).
//!
//! u8 and u16 samples are selected in their own type, 32 bytes of samples
//! at a time, straight from the interleaved rows (see `median_native`).
//! f32 samples are first mapped to order-preserving u32 words
//! (`median::word`) in per-channel planes padded by the radius on both
//! sides (the replicate border), so the inner loops neither clamp nor
//! branch; [`LANES`] pixels at a time.

use rayon::prelude::*;

use super::{filtered_channels, from_word, word, MedianParams, MAX_RADIUS};
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::{self, mem, Simd, WithSimd};
use crate::SampleType;

/// Pixels selected together: 8 u32 words are one 256-bit vector.
pub const LANES: usize = 8;


/// Median-filters `src` on the host's cores (see the module docs).
pub fn median<T: Sample>(src: &Image<T>, p: &MedianParams) -> Result<Image<T>> {
    p.validate()?;
    let r = p.radius as usize;
    match T::TYPE {
        SampleType::U8 => return median_native::<T, u8, NATIVE_BYTES>(src, r),
        SampleType::U16 => return median_native::<T, u16, { NATIVE_BYTES / 2 }>(src, r),
        SampleType::F32 => {}
    }
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let pw = w + 2 * r;
    let filtered = filtered_channels(c);
    let mut planes = vec![0u32; filtered * h * pw];
    planes
        .par_chunks_mut(pw)
        .enumerate()
        .for_each(|(i, row)| {
            let (ch, y) = (i / h, i % h);
            let s = src.row(y);
            for (px, k) in row.iter_mut().enumerate() {
                let x = px.saturating_sub(r).min(w - 1);
                *k = word(s[x * c + ch]);
            }
        });
    let mut out = Image::<T>::new(w, h, c)?;
    let planes = &planes;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(w * c)
        .enumerate()
        .for_each(|(y, orow)| {
            for ch in 0..filtered {
                let plane = &planes[ch * h * pw..(ch + 1) * h * pw];
                let rows: Vec<&[u32]> = (0..2 * r + 1)
                    .map(|d| {
                        let yy = (y + d).saturating_sub(r).min(h - 1);
                        &plane[yy * pw..(yy + 1) * pw]
                    })
                    .collect();
                match r {
                    1 => row::<T, 9>(&rows, orow, w, c, ch),
                    2 => row::<T, 25>(&rows, orow, w, c, ch),
                    _ => row::<T, 49>(&rows, orow, w, c, ch),
                }
            }
            if c == 4 {
                for (o, s) in orow.chunks_exact_mut(4).zip(src.row(y).chunks_exact(4)) {
                    o[3] = s[3];
                }
            }
        });
    Ok(out)
}

/// Bytes of the lanes the native path selects together: one 256-bit vector.
const NATIVE_BYTES: usize = 32;

/// Rows of the largest window.
const WINDOW_ROWS: usize = 2 * MAX_RADIUS as usize + 1;

/// Integer samples (u8, u16) that the native path orders as they are.
trait Native: Copy + Ord + Default + Send + Sync + 'static {}
impl Native for u8 {}
impl Native for u16 {}

/// Median-filters u8 or u16 samples in their own type: the selection runs
/// on [`NATIVE_BYTES`] of samples at a time, straight on the interleaved
/// rows (a sample's neighbours in a row are whole pixels, `c` samples,
/// apart), so there are no planes and no key mapping. Alpha is filtered
/// with the colours and then overwritten by the copy.
fn median_native<T: Sample, K: Native, const L: usize>(
    src: &Image<T>,
    r: usize,
) -> Result<Image<T>> {
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let mut out = Image::<T>::new(w, h, c)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(w * c)
        .enumerate()
        .for_each(|(y, orow)| {
            let mut rows: [&[K]; WINDOW_ROWS] = [&[]; WINDOW_ROWS];
            for (d, slot) in rows.iter_mut().take(2 * r + 1).enumerate() {
                let row = src.row((y + d).saturating_sub(r).min(h - 1));
                *slot = mem::cast_slice::<T, K>(row).expect("T is K");
            }
            let rows = &rows[..2 * r + 1];
            let o = mem::cast_slice_mut::<T, K>(orow).expect("T is K");
            match r {
                1 => simd::dispatch(NativeRow::<K, L, 9> { rows, out: o, c }),
                2 => simd::dispatch(NativeRow::<K, L, 25> { rows, out: o, c }),
                _ => simd::dispatch(NativeRow::<K, L, 49> { rows, out: o, c }),
            }
            if c == 4 {
                for (o, s) in orow.chunks_exact_mut(4).zip(src.row(y).chunks_exact(4)) {
                    o[3] = s[3];
                }
            }
        });
    Ok(out)
}

/// One output row of the native path: `rows` are the window's source rows
/// (top to bottom, borders replicated), `out` the row, `c` the channels.
struct NativeRow<'a, K, const L: usize, const N: usize> {
    rows: &'a [&'a [K]],
    out: &'a mut [K],
    c: usize,
}

impl<K: Native, const L: usize, const N: usize> WithSimd for NativeRow<'_, K, L, N> {
    type Output = ();

    /// [`L`] samples at a time. Groups whose windows lie inside the row
    /// load them as slices; those that reach past either end (and rows
    /// shorter than `L`) gather with the column clamped. The last group is
    /// moved back to end at the row's end, recomputing a few samples.
    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let NativeRow { rows, out, c } = self;
        let d = rows.len();
        let r = d / 2;
        let len = out.len();
        let w = len / c;
        let (lo, hi) = (r * c, len.saturating_sub(r * c));
        let mut v = [[K::default(); L]; N];
        let mut s = 0;
        while s < len {
            let s0 = if s + L > len { len.saturating_sub(L) } else { s };
            let n = L.min(len - s0);
            if s0 >= lo && s0 + L <= hi {
                for (dy, row) in rows.iter().enumerate() {
                    for dx in 0..d {
                        let from = s0 + dx * c - r * c;
                        v[dy * d + dx].copy_from_slice(&row[from..from + L]);
                    }
                }
            } else {
                for (dy, row) in rows.iter().enumerate() {
                    for dx in 0..d {
                        for (l, k) in v[dy * d + dx].iter_mut().enumerate() {
                            let i = (s0 + l).min(len - 1);
                            let xx = (i / c + dx).saturating_sub(r).min(w - 1);
                            *k = row[xx * c + i % c];
                        }
                    }
                }
            }
            let m = select(&mut v);
            out[s0..s0 + n].copy_from_slice(&m[..n]);
            s = s0 + L;
        }
    }
}

/// One channel of one output row: the N-sample windows of `rows` (each
/// padded by the radius), [`LANES`] pixels at a time. The last group of a
/// row repeats its last pixel in the unused lanes.
fn row<T: Sample, const N: usize>(
    rows: &[&[u32]],
    out: &mut [T],
    w: usize,
    c: usize,
    ch: usize,
) {
    let d = rows.len();
    let mut v = [[0u32; LANES]; N];
    for x in (0..w).step_by(LANES) {
        let n = LANES.min(w - x);
        for (dy, r) in rows.iter().enumerate() {
            for dx in 0..d {
                let slot = &mut v[dy * d + dx];
                if n == LANES {
                    slot.copy_from_slice(&r[x + dx..x + dx + LANES]);
                } else {
                    for (l, s) in slot.iter_mut().enumerate() {
                        *s = r[(x + l).min(w - 1) + dx];
                    }
                }
            }
        }
        let m = select(&mut v);
        for (l, &k) in m.iter().take(n).enumerate() {
            out[(x + l) * c + ch] = from_word(k);
        }
    }
}

/// Min into `v[i]`, max into `v[j]`, lane by lane.
#[inline(always)]
fn cas<K: Copy + Ord, const L: usize>(v: &mut [[K; L]], i: usize, j: usize) {
    let (a, b) = (v[i], v[j]);
    let (mut lo, mut hi) = (a, b);
    for l in 0..L {
        lo[l] = a[l].min(b[l]);
        hi[l] = a[l].max(b[l]);
    }
    v[i] = lo;
    v[j] = hi;
}

/// The median of each lane of `v` (scrambled): the 19-exchange network for
/// 9 values, forgetful selection (as `cl/median/median.cl`) for more.
#[inline(always)]
fn select<K: Copy + Ord, const L: usize, const N: usize>(v: &mut [[K; L]; N]) -> [K; L] {
    if N == 9 {
        const NET: [(usize, usize); 19] = [
            (1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3),
            (5, 8), (4, 7), (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2),
        ];
        for (i, j) in NET {
            cas(v, i, j);
        }
        return v[4];
    }
    // Of N = 2M+1 values, a window of M+2 holds the median's candidates;
    // its minimum and maximum cannot be the median, so both leave and the
    // next value takes the maximum's slot.
    let mid = N / 2;
    let hi = mid + 2;
    for lo in 0..mid {
        for i in lo + 1..hi {
            cas(v, lo, i);
        }
        for i in lo + 1..hi - 1 {
            cas(v, i, hi - 1);
        }
        if lo + 1 < mid {
            v[hi - 1] = v[hi + lo];
        }
    }
    v[mid]
}
