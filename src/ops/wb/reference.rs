//! The reference white balance: one loop, in f64.

use crate::error::Result;
use crate::image::{Image, Sample, SampleType};

/// The unrounded `in * gain[c]` in f64 (stored as f32), alpha copied,
/// saturated to `T`'s range for integer `T`.
pub fn wb<T: Sample>(img: &Image<T>, gains: [f32; 3]) -> Result<Image<f32>> {
    super::check_channels(img.channels())?;
    let full = T::TYPE.full_scale() as f64;
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        let v = f64::from(img.get(x, y, c).to_f32());
        if c == 3 {
            return v as f32;
        }
        let r = v * f64::from(gains[c]);
        if T::TYPE == SampleType::F32 {
            r as f32
        } else {
            r.clamp(0.0, full) as f32
        }
    })
}
