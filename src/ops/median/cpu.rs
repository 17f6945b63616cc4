//! The rayon median: rows in parallel, and inside a row many samples at a
//! time, each step of the selection one min and one max across the lanes,
//! which the compiler turns into vector instructions (no `unsafe`; the row
//! runs through [`Isa::vectorize`] with at most 256-bit vectors: AVX2,
//! whose byte and word instructions the AVX-512F trampoline lacks).
//!
//! u8 and u16 samples are selected in their own type, 32 bytes of samples
//! at a time, straight from the interleaved rows (see `median_native`).
//! For 3x3 and 5x5 each column of the window is sorted once per output row
//! and shared by every window that holds it (`SharedRow`): 3x3 then costs
//! 12 min/max per sample after the 6 of its column sort (against 38 for
//! the 19-exchange network), 5x5 sorts each window's five rank rows and
//! selects among 13 candidates (`median25`).
//! f32 samples are first mapped to order-preserving u32 words
//! (`median::word`) in per-channel planes padded by the radius on both
//! sides (the replicate border), so the inner loops neither clamp nor
//! branch; [`LANES`] pixels at a time.

use rayon::prelude::*;

use super::{filtered_channels, from_word, word, MedianParams, MAX_RADIUS};
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::{mem, Isa, Simd, WithSimd};
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
        .for_each_init(Vec::new, |ranks, (y, orow)| {
            let mut rows: [&[K]; WINDOW_ROWS] = [&[]; WINDOW_ROWS];
            for (d, slot) in rows.iter_mut().take(2 * r + 1).enumerate() {
                let row = src.row((y + d).saturating_sub(r).min(h - 1));
                *slot = mem::cast_slice::<T, K>(row).expect("T is K");
            }
            let o = mem::cast_slice_mut::<T, K>(orow).expect("T is K");
            let [r0, r1, r2, r3, r4, ..] = rows;
            // At most 256-bit vectors: the AVX-512 trampoline enables
            // AVX-512F only, which has no 8- or 16-bit lane instructions,
            // and such code compiled there splits every vector in two.
            let isa = Isa::detect_up_to(256);
            match r {
                1 => isa.vectorize(SharedRow::<K, L, 3> {
                    rows: [r0, r1, r2],
                    out: o,
                    c,
                    ranks,
                }),
                2 => isa.vectorize(SharedRow::<K, L, 5> {
                    rows: [r0, r1, r2, r3, r4],
                    out: o,
                    c,
                    ranks,
                }),
                _ => isa.vectorize(NativeRow::<K, L, 49> {
                    rows: &rows[..2 * r + 1],
                    out: o,
                    c,
                }),
            }
            if c == 4 {
                for (o, s) in orow.chunks_exact_mut(4).zip(src.row(y).chunks_exact(4)) {
                    o[3] = s[3];
                }
            }
        });
    Ok(out)
}

/// Samples per strip of [`SharedRow`]: its sorted columns stay in L1.
const STRIP: usize = 2048;

/// The 9-exchange network that sorts 5 values.
const SORT5: [(usize, usize); 9] = [
    (0, 1), (3, 4), (2, 4), (2, 3), (1, 4), (0, 3), (0, 2), (1, 3), (1, 2),
];

/// One output row of the native path for radius 1 or 2 (`D` = 3 or 5
/// rows): each column of `D` samples is sorted once into `D` rank rows
/// (`ranks`), which every window that holds the column reads, strip by
/// strip. 3x3: the median is the median of the largest low, the median
/// middle and the smallest high of its three sorted columns. 5x5: sorting
/// the window's five rank rows as well leaves it sorted along both axes,
/// where 6 samples are known to lie at or below the median and 6 at or
/// above it; the median is the median of the other 13 (see [`median25`]).
struct SharedRow<'a, K, const L: usize, const D: usize> {
    rows: [&'a [K]; D],
    out: &'a mut [K],
    c: usize,
    ranks: &'a mut Vec<K>,
}

impl<K: Native, const L: usize, const D: usize> WithSimd for SharedRow<'_, K, L, D> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let SharedRow {
            rows,
            out,
            c,
            ranks,
        } = self;
        let (n, pad) = (out.len(), D / 2 * c);
        let cap = STRIP + 2 * pad;
        if ranks.len() < D * cap {
            ranks.resize(D * cap, K::default());
        }
        for j0 in (0..n).step_by(STRIP) {
            let j1 = (j0 + STRIP).min(n);
            let len = j1 - j0 + 2 * pad;
            // Rank row slot `t` holds the column of sample `j0 + t - pad`.
            let (a, b) = (j0.saturating_sub(pad), (j1 + pad).min(n));
            let mut bufs = ranks.chunks_exact_mut(cap).map(|b| &mut b[..len]);
            let mut bufs: [&mut [K]; D] = std::array::from_fn(|_| bufs.next().expect("D rows"));
            let at = a + pad - j0;
            blocks::<L>(b - a, |i, full| {
                let src = rows.map(|r| &r[a + i..]);
                match full {
                    true => sort_columns::<K, L, D>(src, &mut bufs, at + i),
                    false => sort_columns::<K, 1, D>(src, &mut bufs, at + i),
                }
            });
            // Columns past the row's ends repeat its first and last pixels.
            for t in (0..at).chain(at + b - a..len) {
                let s = (j0 + t) as isize - pad as isize;
                let px = s.div_euclid(c as isize).clamp(0, (n / c) as isize - 1) as usize;
                let from = px * c + s.rem_euclid(c as isize) as usize + pad - j0;
                for buf in bufs.iter_mut() {
                    buf[t] = buf[from];
                }
            }
            let o = &mut out[j0..j1];
            let bufs = bufs.map(|b| &*b);
            blocks::<L>(o.len(), |i, full| match full {
                true => select_shared::<K, L, D>(&bufs, c, i, &mut o[i..i + L]),
                false => select_shared::<K, 1, D>(&bufs, c, i, &mut o[i..i + 1]),
            });
        }
    }
}

/// Calls `f(i, true)` for blocks of `L` from `i` covering `0..n`, the last
/// one moved back to end at `n`; if `n < L`, `f(i, false)` for each `i`.
#[inline(always)]
fn blocks<const L: usize>(n: usize, mut f: impl FnMut(usize, bool)) {
    if n < L {
        (0..n).for_each(|i| f(i, false));
        return;
    }
    let mut i = 0;
    while i < n {
        let i0 = i.min(n - L);
        f(i0, true);
        i = i0 + L;
    }
}

/// Sorts the `N` columns from `src[k][0]` (`D` rows) into `bufs[..][t..]`.
#[inline(always)]
fn sort_columns<K: Native, const N: usize, const D: usize>(
    src: [&[K]; D],
    bufs: &mut [&mut [K]; D],
    t: usize,
) {
    let mut v = [[K::default(); N]; D];
    for (v, s) in v.iter_mut().zip(src) {
        v.copy_from_slice(&s[..N]);
    }
    let net: &[(usize, usize)] = if D == 3 { &[(0, 1), (1, 2), (0, 1)] } else { &SORT5 };
    for &(i, j) in net {
        cas(&mut v, i, j);
    }
    for (b, v) in bufs.iter_mut().zip(v) {
        b[t..t + N].copy_from_slice(&v);
    }
}

/// The medians of the `N` windows from output sample `o`, from the rank
/// rows `bufs` (slot `o + q c` is the window's `q`-th column).
#[inline(always)]
fn select_shared<K: Native, const N: usize, const D: usize>(
    bufs: &[&[K]; D],
    c: usize,
    o: usize,
    out: &mut [K],
) {
    let col = |i: usize, q: usize| -> [K; N] {
        let mut v = [K::default(); N];
        v.copy_from_slice(&bufs[i][o + q * c..][..N]);
        v
    };
    let m = if D == 3 {
        let (lo, mid, hi) = ([0, 1, 2].map(|q| col(0, q)), [0, 1, 2].map(|q| col(1, q)), [0, 1, 2].map(|q| col(2, q)));
        let mut v = [[K::default(); N]; 3];
        for l in 0..N {
            v[0][l] = lo[0][l].max(lo[1][l]).max(lo[2][l]);
            v[2][l] = hi[0][l].min(hi[1][l]).min(hi[2][l]);
            let (a, b, d) = (mid[0][l], mid[1][l], mid[2][l]);
            v[1][l] = a.min(b).max(a.max(b).min(d));
        }
        let (a, b, d) = (v[0], v[1], v[2]);
        let mut m = [K::default(); N];
        for l in 0..N {
            m[l] = a[l].min(b[l]).max(a[l].max(b[l]).min(d[l]));
        }
        m
    } else {
        let mut v = [[K::default(); N]; 25];
        for (k, v) in v.iter_mut().enumerate() {
            *v = col(k / 5, k % 5);
        }
        median25(&mut v)
    };
    out.copy_from_slice(&m);
}

/// The median of a 5x5 window whose columns (`v[5 i + q]`: rank `i` of
/// column `q`) are sorted. Sorting each rank row keeps the columns sorted
/// (a classic lemma), so sample `(i, j)` is at or below the `(5 - i)(5 - j)`
/// samples right of and below it, and at or above `(i + 1)(j + 1)`. Where
/// one of those counts is at least 13 the sample cannot be the median
/// unless it equals it, and 6 such samples lie on each side: the median is
/// the median of the other 13. The compiler drops the exchanges whose
/// outputs are never read.
#[inline(always)]
fn median25<K: Copy + Ord, const N: usize>(v: &mut [[K; N]; 25]) -> [K; N] {
    for i in 0..5 {
        for (a, b) in SORT5 {
            cas(v, 5 * i + a, 5 * i + b);
        }
    }
    const KEEP: [usize; 13] = [3, 4, 7, 8, 9, 11, 12, 13, 15, 16, 17, 20, 21];
    let mut m: [[K; N]; 13] = KEEP.map(|k| v[k]);
    select(&mut m)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::median::reference;

    #[test]
    fn sort5_sorts_every_zero_one_input() {
        // The 0-1 principle: a network that sorts every 0/1 input sorts all.
        for bits in 0u32..32 {
            let mut v: [[u8; 1]; 5] = std::array::from_fn(|i| [(bits >> i & 1) as u8]);
            for (i, j) in SORT5 {
                cas(&mut v, i, j);
            }
            assert!(v.windows(2).all(|p| p[0] <= p[1]), "{bits:05b}: {v:?}");
        }
    }

    fn random<T: Sample>(w: usize, h: usize, c: usize, seed: u64, levels: u32) -> Image<T> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        Image::from_fn(w, h, c, |_, _, _| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_f32(((s >> 33) as u32 % levels) as f32)
        })
        .unwrap()
    }

    #[test]
    fn shared_columns_match_the_reference_across_strips() {
        // Rows longer than a strip (with a short last one), rows shorter
        // than a block, few levels (ties) and many.
        for (w, h, c) in [(1500, 3, 3), (2100, 4, 1), (1000, 5, 4), (9, 6, 3), (2, 7, 1), (1, 3, 3)] {
            for r in 1..=2 {
                let p = MedianParams::new(r).unwrap();
                for levels in [3, 256] {
                    let img = random::<u8>(w, h, c, (w * h * c) as u64 + r as u64, levels);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(median(&img, &p).unwrap(), want, "u8 {w}x{h}x{c} r={r}");
                    let img = random::<u16>(w, h, c, 7 + w as u64, levels * 200);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(median(&img, &p).unwrap(), want, "u16 {w}x{h}x{c} r={r}");
                }
            }
        }
    }
}
