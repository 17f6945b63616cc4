//! The rayon colour matrix: rows in parallel.

use rayon::prelude::*;

use super::CcmParams;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `M * (r, g, b)` (alpha copied) on the host's cores, in f32 as the
/// kernels compute it.
pub fn ccm<T: Sample>(img: &Image<T>, p: &CcmParams) -> Result<Image<T>> {
    p.validate()?;
    super::check_channels(img.channels())?;
    let c = img.channels();
    let mut out = Image::<T>::new(img.width(), img.height(), c)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(c).zip(img.row(y).chunks_exact(c)) {
                let v = super::apply(&p.m, [s[0].to_f32(), s[1].to_f32(), s[2].to_f32()]);
                for (d, v) in d.iter_mut().zip(v) {
                    *d = T::from_f32(v);
                }
                if c == 4 {
                    d[3] = s[3];
                }
            }
        });
    Ok(out)
}
