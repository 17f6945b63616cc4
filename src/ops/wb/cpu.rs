//! The rayon white balance: rows in parallel
//! (`ops::pixel_stage`'s loop).

use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::pixel_stage::cpu::map_samples;

/// `in * gain[c]` (alpha copied) on the host's cores, one f32 product as
/// the kernels do.
pub fn wb<T: Sample>(img: &Image<T>, gains: [f32; 3]) -> Result<Image<T>> {
    super::check_channels(img.channels())?;
    let g = super::kernel_gains(gains);
    map_samples(img, |i, s| T::from_f32(s.to_f32() * g[i]))
}
