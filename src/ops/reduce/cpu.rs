//! The rayon reduction. f32 sums accumulate in f64 and round once to f32
//! (within u * sum(|x|) of the exact sum, inside every variant's bound);
//! u8 and u16 sums are exact integers rounded once (`sums.rs`); min/max
//! compare-and-select, so NaN is ignored as on every path.
//!
//! Axis x: blocks of rows in parallel, each row summed by
//! [`simd::widen::sum_row`] (f64 lanes in vectors) or walked `STEP`
//! samples at a time into as many independent lanes for its extremes
//! (lane `l` holds channel `l % ch`), which the compiler vectorises
//! (through [`simd::dispatch`]). Axis y: bands of rows in parallel, each
//! with one accumulator per column and channel (a row-major walk, so the
//! reads stay sequential; sums take 8 rows per pass over the
//! accumulators), merged at the end.

use rayon::prelude::*;

use super::{sums, Axis, ReduceParams, Reduction};
use crate::error::Result;
use crate::image::{Image, Sample};
use crate::simd::{self, mem, Isa, Simd, WithSimd};

/// Samples per step of a row walk: whole pixels of 1, 3 or 4 channels.
pub(crate) const STEP: usize = 24;

/// Rows per task of the x walks (a few hundred KB of samples at 4K).
const X_ROWS: usize = 8;

/// Rows per band of the y walks: enough bands for the threads to share,
/// few enough merges of the per-band sums.
const Y_ROWS: usize = 64;

/// `img` reduced by `p`, on the host's cores.
pub fn reduce<T: Sample>(img: &Image<T>, p: &ReduceParams) -> Result<Image<f32>> {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let (ow, oh) = p.output_size(w, h);
    let count = p.count(w, h) as f64;
    let values: Vec<f32> = match (p.axis, p.op) {
        (Axis::X, Reduction::Sum | Reduction::Mean) => {
            let mut out = vec![0f32; h * ch];
            out.par_chunks_mut(X_ROWS * ch)
                .enumerate()
                .for_each(|(k, out)| {
                    for (i, o) in out.chunks_exact_mut(ch).enumerate() {
                        let s = row_sums(img.row(k * X_ROWS + i), ch);
                        for (o, s) in o.iter_mut().zip(s) {
                            *o = finish(s, p.op, count);
                        }
                    }
                });
            out
        }
        (Axis::X, op) => (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                let ext = simd::dispatch(RowOp { row: img.row(y), ch, op });
                ext.into_iter().take(ch)
            })
            .collect(),
        (Axis::Y, Reduction::Sum | Reduction::Mean) => column_sums(img)
            .into_iter()
            .map(|s| finish(s, p.op, count))
            .collect(),
        (Axis::Y, op) => column_extremes(img, op),
    };
    Image::from_vec(ow, oh, ch, values)
}

/// Per-channel sums of one row of `ch` channels: f64 lanes for f32, exact
/// integers for u8 and u16.
fn row_sums<T: Sample>(row: &[T], ch: usize) -> [f64; 4] {
    let isa = Isa::detect();
    if let Some(row) = mem::cast_slice::<T, f32>(row) {
        return match ch {
            1 => widen(simd::widen::sum_row::<1>(isa, row)),
            3 => widen(simd::widen::sum_row::<3>(isa, row)),
            _ => widen(simd::widen::sum_row::<4>(isa, row)),
        };
    }
    sums::row_sums(row, ch).map(|s| s as f64)
}

/// `s` in the first `C` of four slots.
fn widen<const C: usize>(s: [f64; C]) -> [f64; 4] {
    std::array::from_fn(|c| if c < C { s[c] } else { 0.0 })
}

/// The sum of every column and channel, in output order: f64 for f32
/// samples (8 rows at a time through [`simd::widen::add_rows`]), exact
/// integers for u8 and u16.
fn column_sums<T: Sample>(img: &Image<T>) -> Vec<f64> {
    let (len, h) = (img.row_len(), img.height());
    if mem::cast_slice::<T, f32>(img.row(0)).is_none() {
        return sums::column_sums(img);
    }
    let isa = Isa::detect();
    let row = |y: usize| mem::cast_slice::<T, f32>(img.row(y)).expect("T is f32");
    (0..h.div_ceil(Y_ROWS))
        .into_par_iter()
        .fold(
            || vec![0f64; len],
            |mut acc, k| {
                let (mut y, end) = (k * Y_ROWS, h.min((k + 1) * Y_ROWS));
                while y + 8 <= end {
                    let rows: [&[f32]; 8] = std::array::from_fn(|r| row(y + r));
                    simd::widen::add_rows(isa, &mut acc, rows);
                    y += 8;
                }
                for y in y..end {
                    simd::widen::add_rows(isa, &mut acc, [row(y)]);
                }
                acc
            },
        )
        .reduce(|| vec![0f64; len], add_f64)
}

/// `a + b`, element by element.
fn add_f64(mut a: Vec<f64>, b: Vec<f64>) -> Vec<f64> {
    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
    a
}

/// The min or max of every column and channel, in output order.
fn column_extremes<T: Sample>(img: &Image<T>, op: Reduction) -> Vec<f32> {
    let len = img.row_len();
    (0..img.height())
        .into_par_iter()
        .fold(
            || vec![identity(op); len],
            |mut acc, y| {
                for (a, v) in acc.iter_mut().zip(img.row(y)) {
                    *a = extreme(op, *a, v.to_f32());
                }
                acc
            },
        )
        .reduce(
            || vec![identity(op); len],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a = extreme(op, *a, b));
                a
            },
        )
}

/// One row reduced along x to its extreme (min or max, as `op` says)
/// per channel.
struct RowOp<'a, T> {
    row: &'a [T],
    ch: usize,
    op: Reduction,
}

impl<T: Sample> WithSimd for RowOp<'_, T> {
    type Output = [f32; 4];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> Self::Output {
        let RowOp { row, ch, op } = self;
        let mut ext = [identity(op); 4];
        let mut steps = row.chunks_exact(STEP);
        match op {
            Reduction::Min => extremes(&mut steps, ch, &mut ext, |a, v| if v < a { v } else { a }),
            _ => extremes(&mut steps, ch, &mut ext, |a, v| if v > a { v } else { a }),
        }
        ext
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
