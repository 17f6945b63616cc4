//! The percentile stretch, `normalize=low=P%:high=Q%`: which histogram to
//! count, and the percentiles read from its counts.
//!
//! Definition: the colour channels' samples (alpha left out, NaN left
//! out) are pooled; with `N` of them, the P-th percentile is the smallest
//! sample value `v` with `count(x <= v) >= max(1, ceil(P / 100 * N))`
//! (computed in f64), so 0% is the minimum and 100% the maximum. `low` and
//! `high` are then stretched to the output's full range as the min..max
//! stretch does (integer outputs saturate what lies beyond; f32 outputs
//! are not clipped, so samples beyond the percentiles map below 0 or
//! above 1).
//!
//! Accuracy: u8 and u16 are counted one bin per level
//! ([`HistogramParams::per_level`]), so the percentiles are exact. f32 is
//! counted in [`F32_BINS`] bins between the colour channels' minimum and
//! maximum; the percentile's bin is found exactly, and `low` is its lower
//! edge, `high` its upper edge (outward, so the stretch clips no more than
//! the exact percentiles would): each within one bin width,
//! `(max - min) / 4096`, of the exact value (plus the f32 rounding of the
//! binning, far below a bin).

use crate::error::{num, Error, Result};
use crate::image::SampleType;
use crate::ops::histogram::{Histogram, HistogramParams};
use crate::ops::minmax::MinMax;

/// Bins of the f32 percentile histogram.
pub const F32_BINS: usize = 4096;

/// A percentile stretch's bounds, in percent of the samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// The percentile stretched to 0 (0 is the minimum).
    pub low: f64,
    /// The percentile stretched to full scale (100 is the maximum).
    pub high: f64,
}

impl Percentiles {
    /// Checked: both finite, `0 <= low < high <= 100`.
    pub fn new(low: f64, high: f64) -> Result<Self> {
        let p = Percentiles { low, high };
        p.validate()?;
        Ok(p)
    }

    /// Checks what [`Percentiles::new`] checks, for a value built from its
    /// public fields: every operation taking percentiles checks them again.
    pub fn validate(&self) -> Result<()> {
        let (low, high) = (self.low, self.high);
        if !(low.is_finite() && high.is_finite() && 0.0 <= low && low < high && high <= 100.0) {
            return Err(Error::arg(format!(
                "percentiles must satisfy 0 <= low < high <= 100, got low={low}% high={high}%"
            )));
        }
        Ok(())
    }

    /// The 1-based rank of percentile `p` among `n` samples.
    fn rank(p: f64, n: u64) -> u64 {
        ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n)
    }
}

/// The histogram that finds the percentiles of samples of `sample`: one
/// bin per level for integer types; for f32, [`F32_BINS`] bins over
/// `lo..=hi` (the colour channels' finite range), or `None` when
/// `lo == hi` (every sample is that value).
pub fn histogram_params(sample: SampleType, (lo, hi): (f32, f32)) -> Result<Option<HistogramParams>> {
    if let Some(p) = HistogramParams::per_level(sample) {
        return Ok(Some(p));
    }
    if !lo.is_finite() || !hi.is_finite() {
        return Err(Error::InvalidInput(format!(
            "cannot find percentiles in the range {}..{} (the image holds infinities or only NaN); \
             give sub and factor explicitly",
            num(lo),
            num(hi)
        )));
    }
    if lo == hi {
        return Ok(None);
    }
    let p = HistogramParams {
        bins: F32_BINS,
        lo,
        hi,
    };
    // The range is the image's: one that f32 cannot bin is the data's
    // doing (invalid input), not an argument's.
    if p.binning().is_err() {
        return Err(Error::InvalidInput(format!(
            "cannot find percentiles in the range {}..{}: f32 arithmetic cannot bin it into {F32_BINS} \
             (too wide or too narrow); give sub and factor explicitly",
            num(lo),
            num(hi)
        )));
    }
    Ok(Some(p))
}

/// `(low, high)` from `h` (counted with `p`, as [`histogram_params`] says),
/// pooling the first `colour` channels. An integer type's per-level bins
/// give levels exactly; f32 bins give the outward edges.
pub fn from_counts(
    h: &Histogram,
    p: &HistogramParams,
    colour: usize,
    sample: SampleType,
    pc: &Percentiles,
) -> Result<(f32, f32)> {
    let b = p.binning()?;
    let pooled: Vec<u64> = (0..h.bins)
        .map(|i| h.counts.iter().take(colour).map(|c| c[i]).sum())
        .collect();
    let n: u64 = pooled.iter().sum();
    if n == 0 {
        return Err(Error::InvalidInput(
            "cannot find percentiles: the colour channels hold only NaN".into(),
        ));
    }
    // The first bin whose cumulative count reaches `rank`.
    let bin_of = |rank: u64| {
        let mut cum = 0;
        pooled
            .iter()
            .position(|&c| {
                cum += c;
                cum >= rank
            })
            .unwrap_or(h.bins - 1)
    };
    let (lb, hb) = (
        bin_of(Percentiles::rank(pc.low, n)),
        bin_of(Percentiles::rank(pc.high, n)),
    );
    let exact = sample != SampleType::F32;
    let low = b.edge(lb) as f32;
    let high = if exact {
        b.edge(hb) as f32
    } else {
        (b.edge(hb + 1) as f32).min(p.hi)
    };
    Ok((low, high))
}

/// The channels the percentiles pool: all but alpha.
pub fn colour_channels(channels: usize) -> usize {
    if channels == 4 {
        3
    } else {
        channels
    }
}

/// `lo..hi` as the range [`super::Coefficients::stretch`] stretches.
pub fn span(channels: usize, lo: f32, hi: f32) -> MinMax {
    MinMax {
        channels,
        min: [lo; 4],
        max: [hi; 4],
    }
}
