//! The rayon encoding: rows in parallel; u8 and u16 through the table of
//! every value's result, f32 through the formula in f32.

use rayon::prelude::*;

use super::GammaParams;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `E(max(in / full, 0)) * full` (alpha copied) on the host's cores.
pub fn gamma<T: Sample>(img: &Image<T>, p: &GammaParams) -> Result<Image<T>> {
    p.validate()?;
    let table = p.table::<T>();
    let full = T::TYPE.full_scale();
    let one = |s: T| match &table {
        // Integer samples are table indices (u8 and u16 only have tables).
        Some(t) => t[s.to_f32() as usize],
        None => T::from_f32(p.encode_f32((s.to_f32() / full).max(0.0)) * full),
    };
    let c = img.channels();
    let mut out = Image::<T>::new(img.width(), img.height(), c)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(c).zip(img.row(y).chunks_exact(c)) {
                for (i, (d, s)) in d.iter_mut().zip(s).enumerate() {
                    *d = if c == 4 && i == 3 { *s } else { one(*s) };
                }
            }
        });
    Ok(out)
}
