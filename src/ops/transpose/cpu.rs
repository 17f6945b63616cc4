//! The rayon transpose: bands of output rows in parallel, each written
//! block by block with the CPU's SIMD tile transposes
//! ([`crate::simd::blocks::transpose_band`]). The output is never
//! cleared first: every band writes all of its samples.

use std::mem::MaybeUninit;

use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::blocks::{band_rows, transpose_band};
use crate::simd::{mem, Isa, Simd, WithSimd};

/// Transposes on the host's cores.
pub fn transpose<T: Sample>(src: &Image<T>) -> Result<Image<T>> {
    transpose_with(src, Isa::detect())
}

/// [`transpose`] with the instruction set `isa` (or the best below it that
/// the CPU runs).
pub fn transpose_with<T: Sample>(src: &Image<T>, isa: Isa) -> Result<Image<T>> {
    match src.channels() {
        1 => run::<T, 1>(src, isa),
        3 => run::<T, 3>(src, isa),
        _ => run::<T, 4>(src, isa),
    }
}

fn run<T: Sample, const C: usize>(src: &Image<T>, isa: Isa) -> Result<Image<T>> {
    let (w, h) = (src.width(), src.height());
    let n = crate::image::check_shape(h, w, C)?;
    // A band of output rows (input columns), 1 KiB of each input row.
    let band = band_rows(C * std::mem::size_of::<T>()) * h * C;
    let data = src.data();
    let out = mem::vec_filled(n, |out| {
        Ok::<_, crate::Error>(mem::par_fill(
            out,
            band,
            || (),
            |_, i, dst| {
                isa.vectorize(Band::<T, C> {
                    data,
                    stride: src.stride(),
                    size: (w, h),
                    x0: i * band / (h * C),
                    dst,
                })
            },
        ))
    })?;
    Image::from_vec(h, w, C, out)
}

/// One band of output rows from `x0`, for [`Isa::vectorize`].
struct Band<'a, 'd, T, const C: usize> {
    data: &'a [T],
    stride: usize,
    size: (usize, usize),
    x0: usize,
    dst: &'d mut [MaybeUninit<T>],
}

impl<'d, T: Sample, const C: usize> WithSimd for Band<'_, 'd, T, C> {
    type Output = &'d mut [T];

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> &'d mut [T] {
        transpose_band::<S, T, C>(simd, self.data, self.stride, self.size, self.x0, self.dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::tuning::test_image;

    /// Every instruction set, every sample type and channel count, on sizes
    /// around the tiles (2, 4, 8, 16, 32 pixels), blocks (32, 64) and bands
    /// (64 to 1024 pixels: several at 300 for pixels of 4 bytes and more), odd
    /// and prime sizes, and a source with row padding: equal to the
    /// reference bit for bit.
    #[test]
    fn every_isa_equals_the_reference() {
        fn check<T: Sample>(w: usize, h: usize, c: usize) {
            let img = test_image::<T>(w, h, c).unwrap();
            let want = super::super::reference::transpose(&img).unwrap();
            let stride = w * c + 5;
            let rows: Vec<T> = (0..h)
                .flat_map(|y| {
                    let mut r = img.row(y).to_vec();
                    r.extend([T::default(); 5]);
                    r
                })
                .collect();
            let strided = Image::from_vec_with_stride(w, h, c, stride, rows).unwrap();
            for isa in Isa::available() {
                for input in [&img, &strided] {
                    let got = transpose_with(input, isa).unwrap();
                    assert!(got == want, "{isa:?} {w}x{h}x{c} {:?}", T::TYPE);
                }
            }
        }
        let sizes = [
            (1, 1),
            (1, 37),
            (37, 1),
            (2, 2),
            (31, 17),
            (32, 16),
            (33, 65),
            (64, 64),
            (67, 131),
            (130, 97),
            (300, 70),
        ];
        for (w, h) in sizes {
            for c in [1, 3, 4] {
                check::<u8>(w, h, c);
                check::<u16>(w, h, c);
                check::<f32>(w, h, c);
            }
        }
    }
}
