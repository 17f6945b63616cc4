//! The rayon min/max: rows in parallel, merged pairwise.
//!
//! Inside a row, samples go to `8 x C` independent accumulators with
//! compare-and-select (`if v < m { m = v }`), which the compiler turns into
//! packed min/max instructions; `f32::min` would not vectorise because of its
//! NaN rule. A NaN sample compares false and so is ignored, as on every path.

use rayon::prelude::*;

use super::MinMax;
use crate::image::{Image, Sample};

/// Per-channel minimum and maximum on the host's cores; NaN samples are ignored.
pub fn minmax<T: Sample>(img: &Image<T>) -> MinMax {
    match img.channels() {
        1 => run::<T, 1, 8>(img),
        3 => run::<T, 3, 24>(img),
        _ => run::<T, 4, 32>(img),
    }
}

/// `L` accumulators, a multiple of `C`, so accumulator `j` always sees channel `j % C`.
fn run<T: Sample, const C: usize, const L: usize>(img: &Image<T>) -> MinMax {
    let identity = || ([f32::INFINITY; L], [f32::NEG_INFINITY; L]);
    let (mn, mx) = (0..img.height())
        .into_par_iter()
        .fold(identity, |(mut mn, mut mx), y| {
            let row = img.row(y);
            let mut blocks = row.chunks_exact(L);
            for block in &mut blocks {
                for j in 0..L {
                    let v = block[j].to_f32();
                    if v < mn[j] {
                        mn[j] = v;
                    }
                    if v > mx[j] {
                        mx[j] = v;
                    }
                }
            }
            // The rest of the row starts on a pixel boundary (L is a multiple of C).
            for (j, s) in blocks.remainder().iter().enumerate() {
                let v = s.to_f32();
                if v < mn[j] {
                    mn[j] = v;
                }
                if v > mx[j] {
                    mx[j] = v;
                }
            }
            (mn, mx)
        })
        .reduce(identity, |(mut a, mut b), (c, d)| {
            for j in 0..L {
                a[j] = a[j].min(c[j]);
                b[j] = b[j].max(d[j]);
            }
            (a, b)
        });
    let mut m = MinMax::empty(C);
    for j in 0..L {
        m.min[j % C] = m.min[j % C].min(mn[j]);
        m.max[j % C] = m.max[j % C].max(mx[j]);
    }
    m
}
