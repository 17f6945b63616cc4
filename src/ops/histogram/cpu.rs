//! The rayon histogram: bands of rows in parallel, each into its own
//! counts, added at the end (the CPU form of privatised histograms).
//!
//! u8 images look their bins up in a table of the 256 levels and count
//! into `TABLES` private tables per band (see `bytes`); other samples
//! bin each value with [`Binning::bin`].

use rayon::prelude::*;

use super::{Binning, Histogram};
use crate::image::{Image, Sample};
use crate::simd::mem;
use crate::SampleType;

/// Count tables per band of the u8 path: pixel `p` of a row counts into
/// table `p % TABLES`, so that a run of equal samples (a flat region)
/// increments different counters, not the one whose store is still on its
/// way (a store-to-load dependency per sample), and the tables add up at
/// the end of the band.
const TABLES: usize = 4;

/// Rows per band of the u8 path (fewer where a band could overflow u32).
const BAND_ROWS: usize = 64;

/// Per-channel counts of `img` in `b`'s bins, on the host's cores.
pub fn histogram<T: Sample>(img: &Image<T>, b: &Binning) -> Histogram {
    if T::TYPE == SampleType::U8 {
        return match img.channels() {
            1 => bytes::<T, 1>(img, b),
            3 => bytes::<T, 3>(img, b),
            _ => bytes::<T, 4>(img, b),
        };
    }
    let ch = img.channels();
    let len = ch * b.bins;
    let flat = (0..img.height())
        .into_par_iter()
        .fold(
            || vec![0u64; len],
            |mut acc, y| {
                for px in img.row(y).chunks_exact(ch) {
                    for (c, v) in px.iter().enumerate() {
                        if let Some(i) = b.bin(v.to_f32()) {
                            acc[c * b.bins + i] += 1;
                        }
                    }
                }
                acc
            },
        )
        .reduce(|| vec![0u64; len], add);
    Histogram::from_counts(&flat, ch, b.bins, img.width() * img.height())
}

/// `a + o`, element by element.
fn add(mut a: Vec<u64>, o: Vec<u64>) -> Vec<u64> {
    a.iter_mut().zip(o).for_each(|(a, o)| *a += o);
    a
}

/// The u8 path for `C` channels: each level's slot (its bin, or a last
/// slot per channel for levels outside the range) comes from a table made
/// with [`Binning::bin`], so the counts are those of the generic path.
/// Bands of rows count into [`TABLES`] u32 tables, widened to u64 when
/// the band is done.
fn bytes<T: Sample, const C: usize>(img: &Image<T>, b: &Binning) -> Histogram {
    let (w, h) = (img.width(), img.height());
    let slot = b.bins + 1;
    let len = C * slot;
    let lut: [u32; 256] = std::array::from_fn(|v| b.bin(v as f32).unwrap_or(b.bins) as u32);
    // A counter counts at most one sample per row.
    let band = BAND_ROWS.min(u32::MAX as usize / w.max(1)).max(1);
    let slots = (0..h.div_ceil(band))
        .into_par_iter()
        .fold(
            || vec![0u64; len],
            |mut acc, k| {
                let mut t = vec![0u32; TABLES * len];
                for y in k * band..h.min((k + 1) * band) {
                    let row = mem::cast_slice::<T, u8>(img.row(y)).expect("T is u8");
                    let mut groups = row.chunks_exact(TABLES * C);
                    for g in &mut groups {
                        for p in 0..TABLES {
                            for c in 0..C {
                                t[p * len + c * slot + lut[g[p * C + c] as usize] as usize] += 1;
                            }
                        }
                    }
                    for (p, px) in groups.remainder().chunks_exact(C).enumerate() {
                        for (c, &v) in px.iter().enumerate() {
                            t[p * len + c * slot + lut[v as usize] as usize] += 1;
                        }
                    }
                }
                for tab in t.chunks_exact(len) {
                    acc.iter_mut().zip(tab).for_each(|(a, &n)| *a += u64::from(n));
                }
                acc
            },
        )
        .reduce(|| vec![0u64; len], add);
    let flat: Vec<u64> = slots
        .chunks_exact(slot)
        .flat_map(|s| &s[..b.bins])
        .copied()
        .collect();
    Histogram::from_counts(&flat, C, b.bins, w * h)
}
