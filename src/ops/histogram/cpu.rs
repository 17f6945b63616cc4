//! The rayon histogram: bands of rows in parallel, each into its own
//! counts, added at the end (the CPU form of privatised histograms).

use rayon::prelude::*;

use super::{Binning, Histogram};
use crate::image::{Image, Sample};

/// Per-channel counts of `img` in `b`'s bins, on the host's cores.
pub fn histogram<T: Sample>(img: &Image<T>, b: &Binning) -> Histogram {
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
        .reduce(
            || vec![0u64; len],
            |mut a, o| {
                a.iter_mut().zip(o).for_each(|(a, o)| *a += o);
                a
            },
        );
    Histogram::from_counts(&flat, ch, b.bins, img.width() * img.height())
}
