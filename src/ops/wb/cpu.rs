//! The rayon white balance: rows in parallel.

use rayon::prelude::*;

use crate::error::Result;
use crate::image::{Image, Sample};

/// `in * gain[c]` (alpha copied) on the host's cores, one f32 product as
/// the kernels do.
pub fn wb<T: Sample>(img: &Image<T>, gains: [f32; 3]) -> Result<Image<T>> {
    super::check_channels(img.channels())?;
    let g = super::kernel_gains(gains);
    let c = img.channels();
    let mut out = Image::<T>::new(img.width(), img.height(), c)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(c).zip(img.row(y).chunks_exact(c)) {
                for (i, (d, s)) in d.iter_mut().zip(s).enumerate() {
                    *d = if i == 3 { *s } else { T::from_f32(s.to_f32() * g[i]) };
                }
            }
        });
    Ok(out)
}
