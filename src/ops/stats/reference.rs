//! The reference statistics: f64, two passes (the mean, then the squared
//! deviations from it), and the magnitudes the bounds are stated against.

use super::{Stats, Sums};
use crate::image::{Image, Sample};

/// Exact-enough statistics (f64) and, per channel, the scales of the
/// bounds: `sum(|x|)` and the sum of squares about the shift the fused
/// pass uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Exact {
    /// The statistics.
    pub stats: Stats,
    /// Sum of |x| per channel (NaN samples left out).
    pub abs_sum: Vec<f64>,
    /// Sum of `(x - K)^2` per channel, `K` as in [`Sums::shift_for`].
    pub shifted_sq: Vec<f64>,
    /// `K` per channel.
    pub shift: Vec<f64>,
}

/// The statistics of `img`, in f64.
pub fn stats<T: Sample>(img: &Image<T>) -> Exact {
    let ch = img.channels();
    let n = (img.width() * img.height()) as f64;
    let samples = |c: usize| -> Vec<f64> {
        img.rows()
            .flat_map(|r| r.chunks_exact(ch).map(|p| f64::from(p[c].to_f32())))
            .collect()
    };
    let mut stats = Stats {
        channels: ch,
        count: (img.width() * img.height()) as u64,
        sum: Vec::new(),
        mean: Vec::new(),
        std: Vec::new(),
        min: Vec::new(),
        max: Vec::new(),
    };
    let (mut abs_sum, mut shifted_sq, mut shift) = (Vec::new(), Vec::new(), Vec::new());
    for c in 0..ch {
        let xs = samples(c);
        let sum: f64 = xs.iter().sum();
        let mean = sum / n;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        let k = Sums::shift_for(img.get(0, 0, c).to_f32());
        let numbers = || xs.iter().copied().filter(|x| !x.is_nan());
        stats.min.push(numbers().fold(f64::INFINITY, f64::min));
        stats.max.push(numbers().fold(f64::NEG_INFINITY, f64::max));
        abs_sum.push(numbers().map(f64::abs).sum());
        shifted_sq.push(xs.iter().map(|x| (x - k) * (x - k)).sum());
        shift.push(k);
        stats.sum.push(sum);
        stats.mean.push(mean);
        stats.std.push(var.sqrt());
    }
    Exact {
        stats,
        abs_sum,
        shifted_sq,
        shift,
    }
}
