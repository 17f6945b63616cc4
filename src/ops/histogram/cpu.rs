//! The rayon histogram: bands of rows in parallel, each into its own
//! counts, added at the end (the CPU form of privatised histograms).
//!
//! u8 images count their 256 levels and bin the levels
//! (`levels.rs`); other samples bin each value with [`Binning::bin`].

use rayon::prelude::*;

use super::{levels, Binning, Histogram};
use crate::image::{Image, Sample};
use crate::SampleType;

/// Per-channel counts of `img` in `b`'s bins, on the host's cores.
pub fn histogram<T: Sample>(img: &Image<T>, b: &Binning) -> Histogram {
    if T::TYPE == SampleType::U8 {
        return match img.channels() {
            1 => levels::histogram::<T, 1, 8>(img, b),
            3 => levels::histogram::<T, 3, 6>(img, b),
            _ => levels::histogram::<T, 4, 8>(img, b),
        };
    }
    let ch = img.channels();
    let len = ch * b.bins;
    // Each band zeroes and adds a whole set of counts: with many bins and
    // few samples (16M bins, a small image) those would cost far more than
    // the counting, and one set per core could take gigabytes. A band
    // holds at least as many samples as there are counts.
    let row_samples = (img.width() * ch).max(1);
    let min_rows = len.div_ceil(row_samples).max(1);
    let flat = (0..img.height())
        .into_par_iter()
        .with_min_len(min_rows)
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
        .reduce_with(add)
        .unwrap_or_else(|| vec![0u64; len]);
    Histogram::from_counts(&flat, ch, b.bins, img.width() * img.height())
}

/// `a + o`, element by element.
fn add(mut a: Vec<u64>, o: Vec<u64>) -> Vec<u64> {
    a.iter_mut().zip(o).for_each(|(a, o)| *a += o);
    a
}
