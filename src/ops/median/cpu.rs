//! The rayon median: rows in parallel, and inside a row [`LANES`] pixels at
//! a time, each step of the selection one min and one max across the
//! lanes, which the compiler turns into vector instructions (no `unsafe`).
//!
//! Samples are first mapped to order-preserving u32 words (`median::word`)
//! in per-channel planes padded by the radius on both sides (the replicate
//! border), so the inner loops neither clamp nor branch.

use rayon::prelude::*;

use super::{filtered_channels, from_word, word, MedianParams};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Pixels selected together: 8 u32 words are one 256-bit vector.
pub const LANES: usize = 8;

type Lanes = [u32; LANES];

/// Median-filters `src` on the host's cores (see the module docs).
pub fn median<T: Sample>(src: &Image<T>, p: &MedianParams) -> Result<Image<T>> {
    p.validate()?;
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let r = p.radius as usize;
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
fn cas(v: &mut [Lanes], i: usize, j: usize) {
    let (a, b) = (v[i], v[j]);
    let (mut lo, mut hi) = ([0u32; LANES], [0u32; LANES]);
    for l in 0..LANES {
        lo[l] = a[l].min(b[l]);
        hi[l] = a[l].max(b[l]);
    }
    v[i] = lo;
    v[j] = hi;
}

/// The median of each lane of `v` (scrambled): the 19-exchange network for
/// 9 values, forgetful selection (as `cl/median/median.cl`) for more.
#[inline(always)]
fn select<const N: usize>(v: &mut [Lanes; N]) -> Lanes {
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
