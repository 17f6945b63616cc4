//! The rayon encoding: rows in parallel (`ops::pixel_stage`'s
//! loop); u8 and u16 through the table of every value's result, f32
//! through the formula in f32.

use super::GammaParams;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::pixel_stage::cpu::map_samples;

/// `E(max(in / full, 0)) * full` (alpha copied) on the host's cores.
pub fn gamma<T: Sample>(img: &Image<T>, p: &GammaParams) -> Result<Image<T>> {
    p.validate()?;
    let table = p.table::<T>();
    let full = T::TYPE.full_scale();
    map_samples(img, |_, s| match &table {
        // Integer samples are table indices (u8 and u16 only have tables).
        Some(t) => t[s.to_f32() as usize],
        None => T::from_f32(p.encode_f32((s.to_f32() / full).max(0.0)) * full),
    })
}
