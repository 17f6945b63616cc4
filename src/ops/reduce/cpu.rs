//! The rayon reduction. Sums accumulate in f64 and round once to f32
//! (within u * sum(|x|) of the exact sum, inside every variant's bound);
//! min/max compare-and-select, so NaN is ignored as on every path.
//!
//! Axis x: rows in parallel, one line each, walked `STEP` samples at a
//! time into as many independent lanes (lane `l` holds channel `l % ch`),
//! which the compiler vectorises (through [`simd::dispatch`], so with the
//! CPU's widest vectors); the lanes fold per channel at the row's end.
//! Each lane is still an f64 sum, so the bound is the same. Axis y: bands
//! of rows in parallel, each with one accumulator per column and channel
//! (a row-major walk, so the reads stay sequential), merged at the end.

use rayon::prelude::*;

use super::{Axis, ReduceParams, Reduction};
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::{self, Simd, WithSimd};

/// Samples per step of a row walk: whole pixels of 1, 3 or 4 channels.
pub(crate) const STEP: usize = 24;

/// `img` reduced by `p`, on the host's cores.
pub fn reduce<T: Sample>(img: &Image<T>, p: &ReduceParams) -> Result<Image<f32>> {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let (ow, oh) = p.output_size(w, h);
    let count = p.count(w, h) as f64;
    let values: Vec<f32> = match (p.axis, p.op) {
        (Axis::X, op) => (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                let row = RowOp { row: img.row(y), ch, op };
                let (sums, ext) = simd::dispatch(row);
                let values: [f32; 4] = match op {
                    Reduction::Sum | Reduction::Mean => sums.map(|s| finish(s, op, count)),
                    _ => ext,
                };
                values.into_iter().take(ch)
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

/// One row reduced along x: per channel, its f64 sum (for sums and
/// means) or its extreme (for min and max), whichever `op` asks for.
struct RowOp<'a, T> {
    row: &'a [T],
    ch: usize,
    op: Reduction,
}

impl<T: Sample> WithSimd for RowOp<'_, T> {
    type Output = ([f64; 4], [f32; 4]);

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> Self::Output {
        let RowOp { row, ch, op } = self;
        let mut sums = [0.0f64; 4];
        let mut ext = [identity(op); 4];
        let mut steps = row.chunks_exact(STEP);
        match op {
            Reduction::Sum | Reduction::Mean => {
                let mut lanes = [0.0f64; STEP];
                for g in &mut steps {
                    for (a, v) in lanes.iter_mut().zip(g) {
                        *a += v.to_f32() as f64;
                    }
                }
                for (l, v) in lanes.iter().enumerate() {
                    sums[l % ch] += v;
                }
                for (i, v) in steps.remainder().iter().enumerate() {
                    sums[i % ch] += v.to_f32() as f64;
                }
            }
            Reduction::Min => extremes(&mut steps, ch, &mut ext, |a, v| if v < a { v } else { a }),
            Reduction::Max => extremes(&mut steps, ch, &mut ext, |a, v| if v > a { v } else { a }),
        }
        (sums, ext)
    }
}

/// The running extremes of `steps` and its remainder per channel, by
/// `pick(extreme, sample)` ([`extreme`] for one operation, written so that
/// it vectorises).
#[inline(always)]
fn extremes<T: Sample>(
    steps: &mut std::slice::ChunksExact<'_, T>,
    ch: usize,
    ext: &mut [f32; 4],
    pick: impl Fn(f32, f32) -> f32,
) {
    let mut lanes = [ext[0]; STEP];
    for g in &mut *steps {
        for (a, v) in lanes.iter_mut().zip(g) {
            *a = pick(*a, v.to_f32());
        }
    }
    for (l, &v) in lanes.iter().enumerate() {
        ext[l % ch] = pick(ext[l % ch], v);
    }
    for (i, v) in steps.remainder().iter().enumerate() {
        ext[i % ch] = pick(ext[i % ch], v.to_f32());
    }
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
