//! The rayon reduction. Sums accumulate in f64 and round once to f32
//! (within u * sum(|x|) of the exact sum, inside every variant's bound);
//! min/max compare-and-select, so NaN is ignored as on every path.
//!
//! Axis x: rows in parallel, one line each. Axis y: bands of rows in
//! parallel, each with one accumulator per column and channel (a
//! row-major walk, so the reads stay sequential), merged at the end.

use rayon::prelude::*;

use super::{Axis, ReduceParams, Reduction};
use crate::error::Result;
use crate::image::{Image, Sample};

/// `img` reduced by `p`, on the host's cores.
pub fn reduce<T: Sample>(img: &Image<T>, p: &ReduceParams) -> Result<Image<f32>> {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let (ow, oh) = p.output_size(w, h);
    let count = p.count(w, h) as f64;
    let values: Vec<f32> = match (p.axis, p.op) {
        (Axis::X, Reduction::Sum | Reduction::Mean) => (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                let mut acc = [0.0f64; 4];
                for px in img.row(y).chunks_exact(ch) {
                    for (a, v) in acc.iter_mut().zip(px) {
                        *a += v.to_f32() as f64;
                    }
                }
                acc.into_iter().take(ch).map(move |s| finish(s, p.op, count))
            })
            .collect(),
        (Axis::X, op) => (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                let mut acc = [identity(op); 4];
                for px in img.row(y).chunks_exact(ch) {
                    for (a, v) in acc.iter_mut().zip(px) {
                        *a = extreme(op, *a, v.to_f32());
                    }
                }
                acc.into_iter().take(ch)
            })
            .collect(),
        (Axis::Y, Reduction::Sum | Reduction::Mean) => {
            let sums = (0..h)
                .into_par_iter()
                .fold(
                    || vec![0.0f64; w * ch],
                    |mut acc, y| {
                        for (a, v) in acc.iter_mut().zip(img.row(y)) {
                            *a += v.to_f32() as f64;
                        }
                        acc
                    },
                )
                .reduce(
                    || vec![0.0f64; w * ch],
                    |mut a, b| {
                        a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                        a
                    },
                );
            sums.into_iter().map(|s| finish(s, p.op, count)).collect()
        }
        (Axis::Y, op) => (0..h)
            .into_par_iter()
            .fold(
                || vec![identity(op); w * ch],
                |mut acc, y| {
                    for (a, v) in acc.iter_mut().zip(img.row(y)) {
                        *a = extreme(op, *a, v.to_f32());
                    }
                    acc
                },
            )
            .reduce(
                || vec![identity(op); w * ch],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(a, b)| *a = extreme(op, *a, b));
                    a
                },
            ),
    };
    Image::from_vec(ow, oh, ch, values)
}

/// A sum, or a mean of `count` samples, rounded to f32.
fn finish(sum: f64, op: Reduction, count: f64) -> f32 {
    match op {
        Reduction::Mean => (sum / count) as f32,
        _ => sum as f32,
    }
}

fn identity(op: Reduction) -> f32 {
    match op {
        Reduction::Min => f32::INFINITY,
        _ => f32::NEG_INFINITY,
    }
}

/// The running min or max with `v`; a NaN `v` compares false and is ignored.
fn extreme(op: Reduction, a: f32, v: f32) -> f32 {
    match op {
        Reduction::Min if v < a => v,
        Reduction::Max if v > a => v,
        _ => a,
    }
}
