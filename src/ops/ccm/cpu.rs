//! The rayon colour matrix: rows in parallel
//! (`ops::pixel_stage`'s loop).

use super::CcmParams;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::pixel_stage::cpu::map_pixels;

/// `M * (r, g, b)` (alpha copied) on the host's cores, in f32 as the
/// kernels compute it.
pub fn ccm<T: Sample>(img: &Image<T>, p: &CcmParams) -> Result<Image<T>> {
    p.validate()?;
    super::check_channels(img.channels())?;
    map_pixels(img, |d, s| {
        let v = super::apply(&p.m, [s[0].to_f32(), s[1].to_f32(), s[2].to_f32()]);
        for (d, v) in d.iter_mut().zip(v) {
            *d = T::from_f32(v);
        }
        if let (Some(d), Some(s)) = (d.get_mut(3), s.get(3)) {
            *d = *s;
        }
    })
}
