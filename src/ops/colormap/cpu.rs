//! The rayon colormap: rows in parallel, the kernels' f32 arithmetic.

use rayon::prelude::*;

use super::{ColormapParams, Mapping};
use crate::error::Result;
use crate::image::{Image, Sample};

/// The colour (RGBA, 0..1) at `t` in 0..=1, as the kernels interpolate it.
#[inline]
pub(crate) fn colour(table: &[[f32; 4]; 256], t: f32) -> [f32; 4] {
    let pos = t * 255.0;
    let i = (pos as usize).min(254);
    let f = pos - i as f32;
    let (a, b) = (table[i], table[i + 1]);
    std::array::from_fn(|c| a[c] + (b[c] - a[c]) * f)
}

/// Maps `img` (1 channel) with `p.map` over the resolved range `lo..hi`
/// (from [`ColormapParams::range`]) to `p.channels` channels of `U`, on the
/// host's cores.
pub fn colormap<T: Sample, U: Sample>(
    img: &Image<T>,
    p: &ColormapParams,
    (lo, hi): (f32, f32),
) -> Result<Image<U>> {
    super::check_input(img.channels())?;
    p.validate()?;
    let m = Mapping::new(lo, hi, U::TYPE.full_scale())?;
    match p.channels {
        3 => run::<T, U, 3>(img, p, &m),
        _ => run::<T, U, 4>(img, p, &m),
    }
}

fn run<T: Sample, U: Sample, const C: usize>(
    img: &Image<T>,
    p: &ColormapParams,
    m: &Mapping,
) -> Result<Image<U>> {
    let table = p.map.table();
    let mut out = Image::<U>::new(img.width(), img.height(), C)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.width() * C)
        .enumerate()
        .for_each(|(y, dst)| {
            for (d, s) in dst.chunks_exact_mut(C).zip(img.row(y)) {
                let c = colour(table, m.t(s.to_f32()));
                for (d, c) in d.iter_mut().zip(c) {
                    *d = U::from_f32(c * m.scale);
                }
            }
        });
    Ok(out)
}
