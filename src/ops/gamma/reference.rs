//! The reference encoding: one loop, in f64.

use super::GammaParams;
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};

/// The unrounded `E(max(in / full, 0)) * full` in f64 (stored as f32),
/// alpha copied, saturated to `T`'s range for integer `T`.
pub fn gamma<T: Sample>(img: &Image<T>, p: &GammaParams) -> Result<Image<f32>> {
    p.validate()?;
    let full = T::TYPE.full_scale() as f64;
    let c4 = img.channels() == 4;
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        let v = f64::from(img.get(x, y, c).to_f32());
        if c4 && c == 3 {
            return v as f32;
        }
        // NaN is below 0: f64::max gives 0.
        let r = p.encode_f64((v / full).max(0.0)) * full;
        if T::TYPE == SampleType::F32 {
            r as f32
        } else {
            r.min(full) as f32
        }
    })
}
