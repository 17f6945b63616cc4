//! The reference colour matrix: one loop, in f64.

use super::CcmParams;
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};

/// The unrounded `M * (r, g, b)` in f64 (stored as f32), alpha copied,
/// saturated to `T`'s range for integer `T`.
pub fn ccm<T: Sample>(img: &Image<T>, p: &CcmParams) -> Result<Image<f32>> {
    p.validate()?;
    super::check_channels(img.channels())?;
    let full = T::TYPE.full_scale() as f64;
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        let v = |c: usize| f64::from(img.get(x, y, c).to_f32());
        if c == 3 {
            return v(3) as f32;
        }
        let r: f64 = (0..3).map(|k| f64::from(p.m[3 * c + k]) * v(k)).sum();
        if T::TYPE == SampleType::F32 {
            r as f32
        } else {
            r.clamp(0.0, full) as f32
        }
    })
}
