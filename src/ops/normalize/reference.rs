//! The reference normalize: one loop over every sample.

use super::Coefficients;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `out = U::from_f32((in - sub[c]) * factor[c])` for every sample.
pub fn normalize<T: Sample, U: Sample>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        U::from_f32((img.get(x, y, c).to_f32() - k.sub[c]) * k.factor[c])
    })
}
