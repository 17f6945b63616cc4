//! The rayon normalize: rows in parallel, a const channel count inside so
//! the per-sample channel lookup costs nothing.

use rayon::prelude::*;

use super::Coefficients;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `out = U::from_f32((in - sub[c]) * factor[c])` on the host's cores.
pub fn normalize<T: Sample, U: Sample>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    match img.channels() {
        1 => run::<T, U, 1>(img, k),
        3 => run::<T, U, 3>(img, k),
        _ => run::<T, U, 4>(img, k),
    }
}

fn run<T: Sample, U: Sample, const C: usize>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    let mut out = Image::<U>::new(img.width(), img.height(), C)?;
    let (sub, factor): ([f32; C], [f32; C]) = (
        std::array::from_fn(|c| k.sub[c]),
        std::array::from_fn(|c| k.factor[c]),
    );
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(C).zip(img.row(y).chunks_exact(C)) {
                for c in 0..C {
                    d[c] = U::from_f32((s[c].to_f32() - sub[c]) * factor[c]);
                }
            }
        });
    Ok(out)
}
