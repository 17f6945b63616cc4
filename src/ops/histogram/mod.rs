//! `histogram`: per-channel histograms with exact integer counts.
//!
//! `bins` equal bins span `lo..=hi`. A sample `v` counts when
//! `lo <= v <= hi`, in bin `min(floor((v - lo) * scale), bins - 1)` with
//! `scale = bins / (hi - lo)` rounded once to f32 and both operations in
//! f32 ([`Binning::bin`]; the kernels do the same two operations, so every
//! path bins every sample alike). So `v == hi` lands in the last bin, and
//! samples outside the range and NaN are not counted: [`Histogram::excluded`]
//! says how many per channel.
//!
//! Defaults ([`HistogramParams::default_for`]): u8, 256 bins over 0..=255
//! (one bin per level); u16, 256 bins over 0..=65535 (256 levels a bin);
//! f32, 256 bins over 0..=1.

pub mod api;
pub mod cpu;
mod levels;
pub(crate) mod device;
pub mod reference;
mod tune;
pub mod variants;

use serde::Serialize;

use crate::backend::Dev;
use crate::error::{num, Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpSpec, RunReport, Shape, TuneBucket};
pub use api::HistogramExt;
pub use tune::TUNE;

/// The most bins a histogram may have (per channel).
pub const MAX_BINS: usize = 1 << 24;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "histogram",
    sources: &[crate::cl_source!("histogram/histogram.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["local_private", "global_atomics"],
    cpu_device_order: &["local_private", "global_atomics"],
    prefer: None,
    // NaN is not counted; nothing spreads.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry. It has no pipeline stage: its result is
/// counts, not an image (`filterctl histogram` shows them; `normalize`'s
/// percentiles use them through [`HistogramExt`]).
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[],
    tune: &TUNE,
};

/// A histogram's bins and range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramParams {
    /// Bins per channel, 1..=[`MAX_BINS`].
    pub bins: usize,
    /// The low edge of the first bin.
    pub lo: f32,
    /// The high edge of the last bin (included).
    pub hi: f32,
}

impl HistogramParams {
    /// The default for a sample type (see the module docs).
    pub fn default_for(sample: SampleType) -> Self {
        HistogramParams {
            bins: 256,
            lo: 0.0,
            hi: sample.full_scale(),
        }
    }

    /// One bin per level of an integer type (u8: 256, u16: 65536) over
    /// `0..=2^bits` (the last level's bin is `[max, max + 1)`), so that a
    /// bin's low edge is its level exactly (`scale` = 1); `None` for f32.
    pub fn per_level(sample: SampleType) -> Option<Self> {
        let levels = match sample {
            SampleType::U8 => 256,
            SampleType::U16 => 65536,
            SampleType::F32 => return None,
        };
        Some(HistogramParams {
            bins: levels,
            lo: 0.0,
            hi: levels as f32,
        })
    }

    /// The checked binning: `bins` in 1..=[`MAX_BINS`], a finite range with
    /// `lo < hi`, `hi - lo` finite in f32, and a finite, nonzero f32 scale.
    pub fn binning(&self) -> Result<Binning> {
        if self.bins == 0 || self.bins > MAX_BINS {
            return Err(Error::arg(format!(
                "histogram bins must be 1..={MAX_BINS}, got {}",
                self.bins
            )));
        }
        if !self.lo.is_finite() || !self.hi.is_finite() || self.lo >= self.hi {
            return Err(Error::arg(format!(
                "histogram range must be finite with lo < hi, got {}:{}",
                num(self.lo),
                num(self.hi)
            )));
        }
        // v - lo must stay finite in f32 for every v in the range.
        if !(self.hi - self.lo).is_finite() {
            return Err(Error::arg(format!(
                "histogram range {}:{} is wider than f32 arithmetic holds",
                num(self.lo),
                num(self.hi)
            )));
        }
        let scale = (self.bins as f64 / (self.hi as f64 - self.lo as f64)) as f32;
        if !scale.is_finite() || scale == 0.0 {
            return Err(Error::arg(format!(
                "histogram range {}:{} with {} bins has no f32 scale",
                num(self.lo),
                num(self.hi),
                self.bins
            )));
        }
        Ok(Binning {
            bins: self.bins,
            lo: self.lo,
            hi: self.hi,
            scale,
        })
    }
}

/// Variants hold their bins in local memory or not: the bin count buckets
/// tuning entries.
impl TuneBucket for HistogramParams {
    fn bucket_words(&self) -> (&'static str, &'static str) {
        match self.bins {
            0..=256 => ("bins<=256", ""),
            257..=4096 => ("bins<=4096", ""),
            _ => ("bins>4096", ""),
        }
    }
}

/// A checked [`HistogramParams`] with its f32 scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Binning {
    /// Bins per channel.
    pub bins: usize,
    /// Low edge.
    pub lo: f32,
    /// High edge (included).
    pub hi: f32,
    /// `bins / (hi - lo)`, rounded to f32.
    pub scale: f32,
}

impl Binning {
    /// The bin of `v`, or `None` outside `lo..=hi` and for NaN.
    #[inline]
    pub fn bin(&self, v: f32) -> Option<usize> {
        if !(v >= self.lo && v <= self.hi) {
            return None;
        }
        // Two f32 operations, as in the kernels; non-negative, so `as` floors.
        let b = ((v - self.lo) * self.scale) as usize;
        Some(b.min(self.bins - 1))
    }

    /// For integer samples of levels `0..=max`: `(s, top, last)` when
    /// the bin of level `v` is `min(v >> s, last)` for every `v <= top`
    /// and no level above `top` has a bin (as [`Binning::bin`] computes
    /// them), so that a kernel can bin by a shift: 256 bins of u16 over
    /// `0:65535` (s = 8), 4096 bins of 12-bit data over `0:4096` (s = 0,
    /// level 4096 clamped into bin 4095).
    pub fn level_shift(&self, max: u32) -> Option<(u32, u32, u32)> {
        if self.bin(0.0) != Some(0) {
            return None;
        }
        // Levels with a bin are those in lo..=hi, and lo <= 0 here.
        let top = if self.hi >= max as f32 {
            max
        } else {
            self.hi as u32
        };
        let last = self.bin(top as f32)? as u32;
        let shifted = |s: u32| top.checked_shr(s).unwrap_or(0);
        // top >> s falls strictly with s until 0: a candidate where top's
        // bin is its shift, and one where it is clamped from the next.
        [last, last + 1]
            .into_iter()
            .filter_map(|want| (0..=16).find(|&s| shifted(s) == want))
            .find(|&s| {
                // bin() is monotone in v (f32 subtraction, product and
                // truncation are), so each bin's first level and the one
                // before it decide.
                (1..=last).all(|b| {
                    let first = b << s;
                    self.bin(first as f32) == Some(b as usize)
                        && self.bin((first - 1) as f32) == Some(b as usize - 1)
                })
            })
            .map(|s| (s, top, last))
    }

    /// The low edge of bin `b` (f64: the edges of the docs' formula).
    pub fn edge(&self, b: usize) -> f64 {
        self.lo as f64 + b as f64 * (self.hi as f64 - self.lo as f64) / self.bins as f64
    }
}

/// Per-channel counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Histogram {
    /// Bins per channel.
    pub bins: usize,
    /// One list of `bins` counts per channel.
    pub counts: Vec<Vec<u64>>,
    /// Per channel, the samples not counted (outside the range, or NaN).
    pub excluded: Vec<u64>,
}

impl Histogram {
    /// A histogram from channel-major counts of `channels` lists, for an
    /// image of `pixels` pixels (the rest of each channel is excluded).
    pub fn from_counts(flat: &[u64], channels: usize, bins: usize, pixels: usize) -> Self {
        let counts: Vec<Vec<u64>> = flat.chunks(bins).take(channels).map(<[u64]>::to_vec).collect();
        let excluded = counts
            .iter()
            .map(|c| pixels as u64 - c.iter().sum::<u64>())
            .collect();
        Histogram {
            bins,
            counts,
            excluded,
        }
    }
}
