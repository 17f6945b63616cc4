//! The reference histogram: one loop over every sample.

use super::{Binning, Histogram};
use crate::image::{Image, Sample};

/// Per-channel counts of `img` in `b`'s bins.
pub fn histogram<T: Sample>(img: &Image<T>, b: &Binning) -> Histogram {
    let ch = img.channels();
    let mut flat = vec![0u64; ch * b.bins];
    for row in img.rows() {
        for px in row.chunks_exact(ch) {
            for (c, v) in px.iter().enumerate() {
                if let Some(i) = b.bin(v.to_f32()) {
                    flat[c * b.bins + i] += 1;
                }
            }
        }
    }
    Histogram::from_counts(&flat, ch, b.bins, img.width() * img.height())
}
