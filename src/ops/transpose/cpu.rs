//! The rayon transpose: bands of output rows in parallel, each written
//! block by block with the CPU's SIMD tile transposes
//! ([`crate::simd::blocks::transpose_band`]). The output is never
//! cleared first: every band writes all of its samples. Images of 16 MiB
//! and more are transposed a band at a time into a buffer
//! in the cache, which is then written out with streaming stores
//! ([`mem::write_stream`]): a band's output rows are contiguous, and the
//! tiles' scattered stores would otherwise read every output line first.

use std::mem::MaybeUninit;

use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::blocks::{band_rows, transpose_band};
use crate::simd::{mem, Isa, Simd, WithSimd};

/// Images of at least this many bytes are written through a band buffer
/// with streaming stores (see the module docs): input and output outgrow
/// an L3 cache.
const STREAM_BYTES: usize = 16 << 20;

/// Transposes on the host's cores.
pub fn transpose<T: Sample>(src: &Image<T>) -> Result<Image<T>> {
    transpose_with(src, Isa::detect())
}

/// [`transpose`] with the instruction set `isa` (or the best below it that
/// the CPU runs).
pub fn transpose_with<T: Sample>(src: &Image<T>, isa: Isa) -> Result<Image<T>> {
    let bytes = src.data().len().saturating_mul(std::mem::size_of::<T>());
    run_with(src, isa, bytes >= STREAM_BYTES)
}

/// [`transpose_with`], through band buffers if `stream`.
fn run_with<T: Sample>(src: &Image<T>, isa: Isa, stream: bool) -> Result<Image<T>> {
    match src.channels() {
        1 => run::<T, 1>(src, isa, stream),
        3 => run::<T, 3>(src, isa, stream),
        _ => run::<T, 4>(src, isa, stream),
    }
}

fn run<T: Sample, const C: usize>(src: &Image<T>, isa: Isa, stream: bool) -> Result<Image<T>> {
    let (w, h) = (src.width(), src.height());
    let n = crate::image::check_shape(h, w, C)?;
    // A band of output rows (input columns), 1 KiB of each input row.
    let band = band_rows(C * std::mem::size_of::<T>()) * h * C;
    let data = src.data();
    let out = mem::vec_filled(n, |out| {
        Ok::<_, crate::Error>(mem::par_fill(
            out,
            band,
            Vec::new,
            |buf: &mut Vec<MaybeUninit<T>>, i, dst| {
                let x0 = i * band / (h * C);
                let (stride, size) = (src.stride(), (w, h));
                if !stream {
                    return isa.vectorize(Band::<T, C> { data, stride, size, x0, dst });
                }
                buf.resize(dst.len(), MaybeUninit::uninit());
                let dst_buf = &mut buf[..dst.len()];
                let done = isa.vectorize(Band::<T, C> { data, stride, size, x0, dst: dst_buf });
                mem::write_stream(dst, done)
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
                    for stream in [false, true] {
                        let got = run_with(input, isa, stream).unwrap();
                        assert!(got == want, "{isa:?} {w}x{h}x{c} {:?} {stream}", T::TYPE);
                    }
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
