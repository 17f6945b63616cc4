//! The reference reduction: f64 over every line, with the sum of
//! magnitudes that the error bound is stated against.

use super::{Axis, ReduceParams, Reduction};
use crate::image::{Image, Sample};

/// Exact-enough results (f64) of a reduction, and per output value the
/// sum of |x| it reduced (the scale of the sum's bound).
#[derive(Debug, Clone, PartialEq)]
pub struct Exact {
    /// The output's channels.
    pub channels: usize,
    /// Samples each value reduces.
    pub count: usize,
    /// Output values, `channels` per output pixel, in output order.
    pub value: Vec<f64>,
    /// Sum of |x| behind each value (NaN samples left out).
    pub abs_sum: Vec<f64>,
}

/// The reduction of `img` by `p`, in f64; min/max ignore NaN.
pub fn reduce<T: Sample>(img: &Image<T>, p: &ReduceParams) -> Exact {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let (outputs, count) = match p.axis {
        Axis::X => (h, w),
        Axis::Y => (w, h),
    };
    let mut value = Vec::with_capacity(outputs * ch);
    let mut abs_sum = Vec::with_capacity(outputs * ch);
    for o in 0..outputs {
        for c in 0..ch {
            let line = (0..count).map(|i| match p.axis {
                Axis::X => img.get(i, o, c).to_f32() as f64,
                Axis::Y => img.get(o, i, c).to_f32() as f64,
            });
            let (mut sum, mut abs) = (0.0f64, 0.0f64);
            let (mut mn, mut mx) = (f64::INFINITY, f64::NEG_INFINITY);
            for v in line {
                sum += v;
                if !v.is_nan() {
                    abs += v.abs();
                    mn = mn.min(v);
                    mx = mx.max(v);
                }
            }
            value.push(match p.op {
                Reduction::Sum => sum,
                Reduction::Mean => sum / count as f64,
                Reduction::Min => mn,
                Reduction::Max => mx,
            });
            abs_sum.push(abs);
        }
    }
    Exact {
        channels: ch,
        count,
        value,
        abs_sum,
    }
}
