//! The rayon statistics of f32 images (u8 and u16 go to `stats::int`'s
//! exact integer lanes): rows in parallel, each folded into f64 sums per
//! channel (the sum, the squares about the shift, the extremes), merged
//! pairwise. One pass over the image, as on the devices. A row is walked
//! `STEP` samples at a time into as many independent lanes (lane `l`
//! holds channel `l % C`), which the compiler vectorises (through
//! [`simd::dispatch`]); each lane is an f64 sum, so the bound below holds.
//!
//! f64 sums of n samples are within about n 2^-53 sum(|x|) of the exact
//! sum: inside the 2u (u = 2^-24) the tests hold this path to for any
//! image below 2^28 samples per channel. min/max compare and select, so a
//! NaN sample compares false and is ignored, as on every path.

use std::any::Any;

use rayon::prelude::*;

use super::{int, Stats, Sums};
use crate::image::{Image, Sample};
use crate::ops::reduce::cpu::STEP;
use crate::simd::{self, Simd, WithSimd};

/// The statistics of `img` on the host's cores.
pub fn stats<T: Sample>(img: &Image<T>) -> Stats {
    // u8 and u16 sum exactly in integer lanes instead.
    let any: &dyn Any = img;
    if let Some(img) = any.downcast_ref::<Image<u8>>() {
        return int::stats(img);
    }
    if let Some(img) = any.downcast_ref::<Image<u16>>() {
        return int::stats(img);
    }
    match img.channels() {
        1 => run::<T, 1>(img),
        3 => run::<T, 3>(img),
        _ => run::<T, 4>(img),
    }
}

/// Per-channel running values: sum, squares about the shift, min, max.
#[derive(Clone, Copy)]
struct Acc<const C: usize> {
    sum: [f64; C],
    sq: [f64; C],
    min: [f32; C],
    max: [f32; C],
}

impl<const C: usize> Acc<C> {
    fn new() -> Self {
        Acc {
            sum: [0.0; C],
            sq: [0.0; C],
            min: [f32::INFINITY; C],
            max: [f32::NEG_INFINITY; C],
        }
    }

    fn merge(mut self, o: Self) -> Self {
        for c in 0..C {
            self.sum[c] += o.sum[c];
            self.sq[c] += o.sq[c];
            self.min[c] = self.min[c].min(o.min[c]);
            self.max[c] = self.max[c].max(o.max[c]);
        }
        self
    }
}

fn run<T: Sample, const C: usize>(img: &Image<T>) -> Stats {
    let shift: [f64; C] = std::array::from_fn(|c| Sums::shift_for(img.get(0, 0, c).to_f32()));
    let acc = (0..img.height())
        .into_par_iter()
        .fold(Acc::<C>::new, |a, y| {
            // A row's sums start from 0 so that they stay small next to the total.
            a.merge(simd::dispatch(RowOp { row: img.row(y), shift }))
        })
        .reduce(Acc::<C>::new, Acc::merge);
    let sums: Vec<Sums> = (0..C)
        .map(|c| Sums {
            sum: acc.sum[c],
            shifted_sq: acc.sq[c],
            shift: shift[c],
            min: f64::from(acc.min[c]),
            max: f64::from(acc.max[c]),
        })
        .collect();
    Sums::finish(&sums, (img.width() * img.height()) as u64)
}

/// One row's [`Acc`] about `shift`.
struct RowOp<'a, T, const C: usize> {
    row: &'a [T],
    shift: [f64; C],
}

impl<T: Sample, const C: usize> WithSimd for RowOp<'_, T, C> {
    type Output = Acc<C>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> Acc<C> {
        let RowOp { row, shift } = self;
        let lane_shift: [f64; STEP] = std::array::from_fn(|l| shift[l % C]);
        let mut sum = [0.0f64; STEP];
        let mut sq = [0.0f64; STEP];
        let mut min = [f32::INFINITY; STEP];
        let mut max = [f32::NEG_INFINITY; STEP];
        let mut steps = row.chunks_exact(STEP);
        for g in &mut steps {
            for l in 0..STEP {
                let v = g[l].to_f32();
                let x = f64::from(v);
                let d = x - lane_shift[l];
                sum[l] += x;
                sq[l] += d * d;
                min[l] = if v < min[l] { v } else { min[l] };
                max[l] = if v > max[l] { v } else { max[l] };
            }
        }
        let mut acc = Acc::<C>::new();
        // The remainder starts at a pixel, so its sample j is channel j % C.
        let tail = steps.remainder().iter().enumerate().map(|(j, v)| {
            let v = v.to_f32();
            let d = f64::from(v) - lane_shift[j];
            (f64::from(v), d * d, v, v)
        });
        let lanes = (0..STEP).map(|l| (sum[l], sq[l], min[l], max[l]));
        for (i, (s, q, lo, hi)) in lanes.chain(tail).enumerate() {
            let c = i % C;
            acc.sum[c] += s;
            acc.sq[c] += q;
            if lo < acc.min[c] {
                acc.min[c] = lo;
            }
            if hi > acc.max[c] {
                acc.max[c] = hi;
            }
        }
        acc
    }
}
