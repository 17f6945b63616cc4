//! The rows-in-parallel loop of the per-pixel operations' rayon paths.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::image::{Image, Sample};

/// A new image of `img`'s shape, each pixel written by `f(out, in)` from
/// `img`'s, rows in parallel on the host's cores.
pub(crate) fn map_pixels<T: Sample>(
    img: &Image<T>,
    f: impl Fn(&mut [T], &[T]) + Sync,
) -> Result<Image<T>> {
    let c = img.channels();
    let mut out = Image::<T>::new(img.width(), img.height(), c)?;
    out.as_packed_mut()
        .ok_or_else(|| Error::arg("a new image has no row padding"))?
        .par_chunks_mut(img.row_len())
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(c).zip(img.row(y).chunks_exact(c)) {
                f(d, s);
            }
        });
    Ok(out)
}

/// [`map_pixels`] sample by sample: each colour sample becomes
/// `f(channel, sample)`, the alpha of 4-channel images is copied.
pub(crate) fn map_samples<T: Sample>(
    img: &Image<T>,
    f: impl Fn(usize, T) -> T + Sync,
) -> Result<Image<T>> {
    let c = img.channels();
    map_pixels(img, |d, s| {
        for (i, (d, s)) in d.iter_mut().zip(s).enumerate() {
            *d = if c == 4 && i == 3 { *s } else { f(i, *s) };
        }
    })
}
