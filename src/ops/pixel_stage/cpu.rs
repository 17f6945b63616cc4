//! The rows-in-parallel loops of the per-pixel operations' rayon paths.

use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::simd::{lut, mem, Isa};

/// A new image of `img`'s shape in which each colour sample is
/// `f(channel, sample)` and the alpha of 4-channel images is copied, rows in
/// parallel on the host's cores. u8 images go through a table of `f`'s 256
/// results per channel ([`lut::map_bytes`]: byte shuffles, 32 or 64 samples
/// at a time, where the CPU has them), so the output is `f`'s, byte for
/// byte; other types call `f` per sample.
pub(crate) fn map_samples<T: Sample>(
    img: &Image<T>,
    f: impl Fn(usize, T) -> T + Sync,
) -> Result<Image<T>> {
    match img.channels() {
        1 => samples::<T, 1>(img, f),
        3 => samples::<T, 3>(img, f),
        _ => samples::<T, 4>(img, f),
    }
}

/// [`map_samples`] on `C` channels.
fn samples<T: Sample, const C: usize>(
    img: &Image<T>,
    f: impl Fn(usize, T) -> T + Sync,
) -> Result<Image<T>> {
    let colour = |c: usize| C != 4 || c != 3;
    let (w, h) = (img.width(), img.height());
    if T::TYPE == SampleType::U8 {
        let tables: [[u8; 256]; C] = std::array::from_fn(|c| {
            let t: Vec<T> = (0..256u16)
                .map(|v| T::from_f32(f32::from(v)))
                .map(|v| if colour(c) { f(c, v) } else { v })
                .collect();
            mem::cast_slice::<T, u8>(&t)
                .expect("T is u8")
                .try_into()
                .expect("256 entries")
        });
        let isa = Isa::detect();
        return fill_rows(w, h, C, |y, dst| {
            let row = mem::cast_slice::<T, u8>(img.row(y)).expect("T is u8");
            let out = mem::cast_uninit_mut::<T, u8>(dst).expect("T is u8");
            mem::cast_slice_mut::<u8, T>(lut::map_bytes::<C>(isa, &tables, row, out))
                .expect("T is u8")
        });
    }
    fill_rows(w, h, C, |y, dst| {
        mem::write_pixels(dst, img.row(y), |px: [T; C]| {
            std::array::from_fn(|c| if colour(c) { f(c, px[c]) } else { px[c] })
        })
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
