//! The reference black-level subtraction: one loop, in f64.

use super::BlackParams;
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};

/// The unrounded result in f64 (stored as f32): `max(in - black, 0)`,
/// times `full / (white - black)` with a white level, alpha copied,
/// saturated to `T`'s range for integer `T`.
pub fn black<T: Sample>(img: &Image<T>, p: &BlackParams) -> Result<Image<f32>> {
    p.validate()?;
    let full = T::TYPE.full_scale() as f64;
    let k = p
        .white
        .map_or(1.0, |w| full / (f64::from(w) - f64::from(p.black)));
    let c4 = img.channels() == 4;
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        let v = f64::from(img.get(x, y, c).to_f32());
        if c4 && c == 3 {
            return v as f32;
        }
        // NaN is below every level: f64::max gives 0.
        let r = (v - f64::from(p.black)).max(0.0) * k;
        if T::TYPE == SampleType::F32 {
            r as f32
        } else {
            r.min(full) as f32
        }
    })
}
