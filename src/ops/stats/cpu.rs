//! The rayon statistics: rows in parallel, each folded into f64 sums per
//! channel (the sum, the squares about the shift, the extremes), merged
//! pairwise. One pass over the image, as on the devices.
//!
//! f64 sums of n samples are within about n 2^-53 sum(|x|) of the exact
//! sum: inside the 2u (u = 2^-24) the tests hold this path to for any
//! image below 2^28 samples per channel. min/max compare and select, so a
//! NaN sample compares false and is ignored, as on every path.

use rayon::prelude::*;

use super::{Stats, Sums};
use crate::image::{Image, Sample};

/// The statistics of `img` on the host's cores.
pub fn stats<T: Sample>(img: &Image<T>) -> Stats {
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
            let mut row = Acc::<C>::new();
            for px in img.row(y).chunks_exact(C) {
                for c in 0..C {
                    let v = px[c].to_f32();
                    let x = f64::from(v);
                    let d = x - shift[c];
                    row.sum[c] += x;
                    row.sq[c] += d * d;
                    if v < row.min[c] {
                        row.min[c] = v;
                    }
                    if v > row.max[c] {
                        row.max[c] = v;
                    }
                }
            }
            a.merge(row)
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
