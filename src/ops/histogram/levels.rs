//! The u8 histogram: count each channel's 256 levels, then add each
//! level's count into its bin ([`Binning::bin`] of the level, as the
//! generic path bins every sample), so the bins cost nothing per sample
//! whatever their number (the scheme of OpenCV's `calcHist` on 8-bit
//! images).
//!
//! Bands of rows in parallel, each rayon task counting into its own
//! [`Tables`]; the rows are read [`GROUP`] bytes (three u64 words) at a
//! time, and byte `p` of a group counts into table `p % T`. `T` is a
//! multiple of the channel count, so a table belongs to one channel, and
//! has at least two tables per channel, so that a run of equal samples
//! (a flat region) increments different counters in turn rather than
//! waiting on the store to the one counter.

use rayon::prelude::*;

use super::{Binning, Histogram};
use crate::image::{Image, Sample};
use crate::simd::mem;

/// Bytes a step reads: a multiple of 1, 3 and 4, and of every `T`.
const GROUP: usize = 24;

/// Rows per band (one task), at least.
const BAND_ROWS: usize = 32;

/// Bytes per band, at least (so that narrow images still make bands of
/// some size).
const BAND_BYTES: usize = 1 << 17;

/// `T` tables of one u32 counter per level. An image holds fewer than
/// 2^31 samples, so no counter can overflow.
type Tables<const T: usize> = Box<[[u32; 256]; T]>;

/// Per-channel counts of a u8 image (`S` is u8) of `C` channels in `b`'s
/// bins, through `T` tables (`T` a multiple of `C` that divides
/// [`GROUP`]).
pub(super) fn histogram<S: Sample, const C: usize, const T: usize>(
    img: &Image<S>,
    b: &Binning,
) -> Histogram {
    let (len, h) = (img.row_len(), img.height());
    let band = BAND_ROWS.max(BAND_BYTES / len.max(1));
    let bytes = |y: usize| mem::cast_slice::<S, u8>(img.row(y)).expect("the samples are u8");
    let levels = (0..h.div_ceil(band))
        .into_par_iter()
        .fold(
            || Box::new([[0u32; 256]; T]),
            |mut t: Tables<T>, k| {
                for y in k * band..h.min((k + 1) * band) {
                    count(&mut t, bytes(y));
                }
                t
            },
        )
        .map(|t| {
            let mut per = vec![0u64; C * 256];
            for (i, tab) in t.iter().enumerate() {
                let c = i % C;
                for (p, &n) in per[c * 256..(c + 1) * 256].iter_mut().zip(tab) {
                    *p += u64::from(n);
                }
            }
            per
        })
        .reduce(
            || vec![0u64; C * 256],
            |mut a, o| {
                a.iter_mut().zip(o).for_each(|(a, o)| *a += o);
                a
            },
        );
    let mut flat = vec![0u64; C * b.bins];
    for (c, lv) in levels.chunks_exact(256).enumerate() {
        for (v, &n) in lv.iter().enumerate() {
            if let Some(i) = b.bin(v as f32) {
                flat[c * b.bins + i] += n;
            }
        }
    }
    Histogram::from_counts(&flat, C, b.bins, img.width() * h)
}

/// Counts the bytes of `row` (whole pixels) into `t`: byte `p` of a group
/// into table `p % T`.
#[inline]
fn count<const T: usize>(t: &mut [[u32; 256]; T], row: &[u8]) {
    let mut groups = row.chunks_exact(GROUP);
    for g in &mut groups {
        for w in 0..GROUP / 8 {
            let word = u64::from_le_bytes(std::array::from_fn(|i| g[8 * w + i]));
            for j in 0..8 {
                let p = 8 * w + j;
                t[p % T][(word >> (8 * j)) as u8 as usize] += 1;
            }
        }
    }
    for (p, &v) in groups.remainder().iter().enumerate() {
        t[p % T][v as usize] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{reference, HistogramParams};
    use super::*;

    /// Every table layout against the reference, on rows that are and are
    /// not whole groups, padded and packed, in bins that split levels
    /// unevenly and leave some out.
    #[test]
    fn counts_match_the_reference() {
        let mut s = 7u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        for (w, h) in [(1, 1), (1, 9), (7, 1), (23, 5), (24, 3), (61, 67), (2000, 70)] {
            for ch in [1, 3, 4] {
                let data: Vec<u8> = (0..w * h * ch).map(|_| (next() % 256) as u8).collect();
                let img = Image::from_vec(w, h, ch, data).unwrap();
                for p in [(256, 0.0, 255.0), (7, 3.5, 200.0), (4096, 0.0, 256.0), (1, 0.0, 1.0)] {
                    let b = HistogramParams { bins: p.0, lo: p.1, hi: p.2 }.binning().unwrap();
                    let got = match ch {
                        1 => histogram::<u8, 1, 8>(&img, &b),
                        3 => histogram::<u8, 3, 6>(&img, &b),
                        _ => histogram::<u8, 4, 8>(&img, &b),
                    };
                    assert_eq!(got, reference::histogram(&img, &b), "{w}x{h}x{ch} {p:?}");
                }
            }
        }
    }
}
