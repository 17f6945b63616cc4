//! The rayon black-level subtraction: rows in parallel.

use rayon::prelude::*;

use super::BlackParams;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `max(in - black, 0) * k` (alpha copied) on the host's cores, with the
/// kernels' f32 arithmetic.
pub fn black<T: Sample>(img: &Image<T>, p: &BlackParams) -> Result<Image<T>> {
    let k = p.factor(T::TYPE)?;
    let (c, b) = (img.channels(), p.black);
    let mut out = Image::<T>::new(img.width(), img.height(), c)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(c).zip(img.row(y).chunks_exact(c)) {
                for (i, (d, s)) in d.iter_mut().zip(s).enumerate() {
                    *d = if c == 4 && i == 3 {
                        *s
                    } else {
                        T::from_f32((s.to_f32() - b).max(0.0) * k)
                    };
                }
            }
        });
    Ok(out)
}
