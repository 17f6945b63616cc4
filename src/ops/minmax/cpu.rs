//! The rayon min/max: rows in parallel, merged pairwise.

use rayon::prelude::*;

use super::MinMax;
use crate::image::{Image, Sample};

/// Per-channel minimum and maximum on the host's cores; NaN samples are ignored.
pub fn minmax<T: Sample>(img: &Image<T>) -> MinMax {
    match img.channels() {
        1 => run::<T, 1>(img),
        3 => run::<T, 3>(img),
        _ => run::<T, 4>(img),
    }
}

fn run<T: Sample, const C: usize>(img: &Image<T>) -> MinMax {
    let (mn, mx) = (0..img.height())
        .into_par_iter()
        .fold(
            || ([f32::INFINITY; C], [f32::NEG_INFINITY; C]),
            |(mut mn, mut mx), y| {
                for px in img.row(y).chunks_exact(C) {
                    for c in 0..C {
                        let v = px[c].to_f32();
                        mn[c] = mn[c].min(v);
                        mx[c] = mx[c].max(v);
                    }
                }
                (mn, mx)
            },
        )
        .reduce(
            || ([f32::INFINITY; C], [f32::NEG_INFINITY; C]),
            |(mut a, mut b), (c, d)| {
                for i in 0..C {
                    a[i] = a[i].min(c[i]);
                    b[i] = b[i].max(d[i]);
                }
                (a, b)
            },
        );
    let mut m = MinMax::empty(C);
    m.min[..C].copy_from_slice(&mn);
    m.max[..C].copy_from_slice(&mx);
    m
}
