//! The reference Gaussian: the sampled kernel, normalised to sum 1, radius
//! ceil(6 sigma), applied along rows then columns in f64. Ground truth for tests;
//! as simple as possible, and O(sigma) per pixel.

use super::{Border, GaussianParams};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Normalised taps of the sampled Gaussian, index `r + k` for offset `k`.
pub fn taps(sigma: f64) -> Vec<f64> {
    let r = (6.0 * sigma).ceil() as i64;
    let w: Vec<f64> = (-r..=r)
        .map(|k| (-((k * k) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    let sum: f64 = w.iter().sum();
    w.into_iter().map(|v| v / sum).collect()
}

/// Where sample `i` of a line of `n` comes from under `border`.
pub fn source_index(i: i64, n: i64, border: Border) -> usize {
    match border {
        Border::Replicate => i.clamp(0, n - 1) as usize,
        Border::Mirror => {
            // Half-sample symmetric (abc|cba), periodic with period 2n.
            let m = i.rem_euclid(2 * n);
            (if m < n { m } else { 2 * n - 1 - m }) as usize
        }
    }
}

fn blur_axis(
    src: &[f64],
    len: usize,
    count: usize,
    step: usize,
    line: usize,
    sigma: f64,
    border: Border,
) -> Vec<f64> {
    // `count` lines of `len` samples; sample j of line l is at l*line + j*step.
    if sigma == 0.0 {
        return src.to_vec();
    }
    let t = taps(sigma);
    let r = (t.len() / 2) as i64;
    let mut out = vec![0.0; src.len()];
    for l in 0..count {
        for j in 0..len as i64 {
            let mut acc = 0.0;
            for k in -r..=r {
                let s = source_index(j + k, len as i64, border);
                acc += t[(k + r) as usize] * src[l * line + s * step];
            }
            out[l * line + j as usize * step] = acc;
        }
    }
    out
}

/// The exact blur of `img`, unrounded, per channel: `Image<f32>` holding the
/// f64 results (f32 keeps 7 digits, far below every tolerance tested).
pub fn gaussian<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Result<Image<f32>> {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let mut out = Image::<f32>::new(w, h, c)?;
    for ch in 0..c {
        let plane: Vec<f64> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| img.get(x, y, ch).to_f32() as f64)
            .collect();
        let rows = blur_axis(&plane, w, h, 1, w, p.sigma_x as f64, p.border);
        let both = blur_axis(&rows, h, w, w, 1, p.sigma_y as f64, p.border);
        for y in 0..h {
            for x in 0..w {
                out.row_mut(y)[x * c + ch] = both[y * w + x] as f32;
            }
        }
    }
    Ok(out)
}
