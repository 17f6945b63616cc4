//! The reference bilateral filter: the definition (module docs of
//! [`super`]) evaluated in f64, one pixel and one tap at a time (rows in parallel). Ground
//! truth for the tests and the tuner's gate.

use rayon::prelude::*;

use super::BilateralParams;
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::ops::gaussian::reference::source_index;

/// The exact filter of `img`, unrounded, in sample units (`Image<f32>`
/// holding the f64 results); alpha (channel 3) copied. Rows are
/// independent, so they are computed in parallel.
pub fn bilateral<T: Sample>(img: &Image<T>, p: &BilateralParams) -> Result<Image<f32>> {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let rows: Vec<Vec<f32>> = (0..h).into_par_iter().map(|y| row(img, p, y)).collect();
    Image::from_vec(w, h, c, rows.concat())
}

/// Row `y` of the filter of `img`.
fn row<T: Sample>(img: &Image<T>, p: &BilateralParams, y: usize) -> Vec<f32> {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let colours = c.min(3);
    let r = p.radius() as i64;
    let ss = f64::from(p.sigma_s);
    let sr = f64::from(p.sigma_r) * f64::from(T::TYPE.full_scale());
    let at = |x: i64, y: i64, ch: usize| -> f64 {
        let sx = source_index(x, w as i64, p.border);
        let sy = source_index(y, h as i64, p.border);
        f64::from(img.get(sx, sy, ch).to_f32())
    };
    let y = y as i64;
    let mut out = vec![0.0f32; w * c];
    for x in 0..w as i64 {
        let mut sum = [0.0f64; 3];
        let mut wsum = 0.0;
        for dy in -r..=r {
            for dx in -r..=r {
                if dx * dx + dy * dy > r * r {
                    continue;
                }
                let d2: f64 = (0..colours)
                    .map(|ch| (at(x + dx, y + dy, ch) - at(x, y, ch)).powi(2))
                    .sum();
                let spatial = ((dx * dx + dy * dy) as f64) / (2.0 * ss * ss);
                let wt = (-spatial - d2 / (2.0 * sr * sr)).exp();
                wsum += wt;
                for (ch, s) in sum.iter_mut().enumerate().take(colours) {
                    *s += wt * at(x + dx, y + dy, ch);
                }
            }
        }
        let px = &mut out[x as usize * c..][..c];
        for ch in 0..colours {
            px[ch] = (sum[ch] / wsum) as f32;
        }
        if c == 4 {
            px[3] = at(x, y, 3) as f32;
        }
    }
    out
}
