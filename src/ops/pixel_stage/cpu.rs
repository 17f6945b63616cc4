//! The rows-in-parallel loop of the per-pixel operations' rayon paths.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::simd::mem;

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

/// A new `w x h` image of `c` channels whose row `y` `f(y, row)` writes
/// (and returns written), rows in parallel; the memory is never cleared
/// first, and is asked for in huge pages ([`mem::vec_filled`]).
pub(crate) fn fill_rows<U: Sample, F>(w: usize, h: usize, c: usize, f: F) -> Result<Image<U>>
where
    F: for<'d> Fn(usize, &'d mut [MaybeUninit<U>]) -> &'d mut [U] + Sync + Send,
{
    let n = crate::image::check_shape(w, h, c)?;
    let out = mem::vec_filled(n, |out| {
        Ok::<_, Error>(mem::par_fill(out, w * c, || (), |_, y, dst| f(y, dst)))
    })?;
    Image::from_vec(w, h, c, out)
}
