//! The rayon transpose: bands of output rows in parallel, cache-blocked inside.

use rayon::prelude::*;

use crate::error::Result;
use crate::image::{Image, Sample};

/// Edge of the square blocks, in pixels. A 32x32 block of RGBA f32 is 16 KiB
/// read plus 16 KiB written, which stays in L1/L2 while it is transposed.
const B: usize = 32;

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
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(B * out_stride)
        .enumerate()
        .for_each(|(bi, band)| {
            // `band` holds output rows x0..x0+bw, i.e. input columns.
            let x0 = bi * B;
            let bw = band.len() / out_stride;
            for y0 in (0..h).step_by(B) {
                let bh = B.min(h - y0);
                for (dx, out_row) in band.chunks_exact_mut(out_stride).enumerate() {
                    let x = x0 + dx;
                    let dst = &mut out_row[y0 * C..(y0 + bh) * C];
                    for (dy, px) in dst.chunks_exact_mut(C).enumerate() {
                        let s = &src.row(y0 + dy)[x * C..x * C + C];
                        px.copy_from_slice(s);
                    }
                }
                debug_assert!(bw <= B);
            }
        });
    Ok(out)
}
