//! The rayon transpose: output row blocks in parallel, cache-blocked inside.

use rayon::prelude::*;

use crate::error::Result;
use crate::image::{Image, Sample};

/// Edge of the square blocks, in pixels: 64 rows of 64 f32x4 pixels is 64 KiB
/// read and written per block, which stays within L2.
const B: usize = 64;

/// Transposes on the host's cores.
pub fn transpose<T: Sample>(src: &Image<T>) -> Result<Image<T>> {
    match src.channels() {
        1 => run::<T, 1>(src),
        3 => run::<T, 3>(src),
        _ => run::<T, 4>(src),
    }
}

fn run<T: Sample, const C: usize>(src: &Image<T>) -> Result<Image<T>> {
    let (w, h) = (src.width(), src.height());
    let mut out = Image::<T>::new(h, w, C)?;
    let out_stride = h * C;
    let dst = out.as_packed_mut().expect("a new image is packed");
    dst.par_chunks_mut(B * out_stride)
        .enumerate()
        .for_each(|(bi, chunk)| {
            let x0 = bi * B;
            let rows = chunk.len() / out_stride;
            for y0 in (0..h).step_by(B) {
                for y in y0..(y0 + B).min(h) {
                    let srow = &src.row(y)[x0 * C..(x0 + rows) * C];
                    for (dx, px) in srow.chunks_exact(C).enumerate() {
                        let d = dx * out_stride + y * C;
                        chunk[d..d + C].copy_from_slice(px);
                    }
                }
            }
        });
    Ok(out)
}
