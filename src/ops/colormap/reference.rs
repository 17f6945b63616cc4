//! The reference colormap: the module docs' definition, one pixel at a time, in f64.

use super::ColormapParams;
use crate::error::Result;
use crate::image::{Image, Sample};

/// `t` of a sample for the range `lo..hi` (an empty range is a step at `hi`).
pub fn t(v: f64, lo: f64, hi: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else if v > hi {
        1.0
    } else {
        0.0
    }
}

/// The colour (RGBA, 0..1) at `t` in `table`: linear interpolation at `t * 255`.
pub fn colour(table: &[[f32; 4]; 256], t: f64) -> [f64; 4] {
    let pos = t * 255.0;
    let i = (pos.floor() as usize).min(254);
    let f = pos - i as f64;
    std::array::from_fn(|c| {
        let (a, b) = (table[i][c] as f64, table[i + 1][c] as f64);
        a + (b - a) * f
    })
}

/// Maps `img` (1 channel) with `p.map` over the resolved range `lo..hi`
/// (from [`ColormapParams::range`]) to `p.channels` channels of `U`.
pub fn colormap<T: Sample, U: Sample>(
    img: &Image<T>,
    p: &ColormapParams,
    (lo, hi): (f32, f32),
) -> Result<Image<U>> {
    super::check_input(img.channels())?;
    p.validate()?;
    let table = p.map.table();
    let full = U::TYPE.full_scale() as f64;
    Image::from_fn(img.width(), img.height(), p.channels, |x, y, c| {
        let t = t(img.get(x, y, 0).to_f32() as f64, lo as f64, hi as f64);
        U::from_f32((colour(table, t)[c] * full) as f32)
    })
}
