//! The rayon black-level subtraction: rows in parallel
//! (`ops::pixel_stage`'s loop).

use super::BlackParams;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::pixel_stage::cpu::map_samples;

/// `max(in - black, 0) * k` (alpha copied) on the host's cores, with the
/// kernels' f32 arithmetic.
pub fn black<T: Sample>(img: &Image<T>, p: &BlackParams) -> Result<Image<T>> {
    let k = p.factor(T::TYPE)?;
    let b = p.black;
    map_samples(img, |_, s| T::from_f32((s.to_f32() - b).max(0.0) * k))
}
