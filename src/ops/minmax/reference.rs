//! The reference min/max: one loop over every sample.

use super::MinMax;
use crate::image::{Image, Sample};

/// Per-channel minimum and maximum; NaN samples are ignored.
pub fn minmax<T: Sample>(img: &Image<T>) -> MinMax {
    let mut m = MinMax::empty(img.channels());
    for row in img.rows() {
        for px in row.chunks_exact(img.channels()) {
            for (c, v) in px.iter().enumerate() {
                m.min[c] = m.min[c].min(v.to_f32());
                m.max[c] = m.max[c].max(v.to_f32());
            }
        }
    }
    m
}
