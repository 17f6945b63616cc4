//! The rayon normalize: rows in parallel.

use rayon::prelude::*;

use super::Coefficients;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `out = U::from_f32((in - sub[c]) * factor[c])` on the host's cores.
pub fn normalize<T: Sample, U: Sample>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    let c = img.channels();
    let mut out = Image::<U>::new(img.width(), img.height(), c)?;
    let row_len = img.row_len();
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(row_len)
        .enumerate()
        .for_each(|(y, dst)| {
            for (i, (d, s)) in dst.iter_mut().zip(img.row(y)).enumerate() {
                let ch = i % c;
                *d = U::from_f32((s.to_f32() - k.sub[ch]) * k.factor[ch]);
            }
        });
    Ok(out)
}
