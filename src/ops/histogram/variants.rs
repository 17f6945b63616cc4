//! OpenCL variants of `histogram`. Both count exactly (tolerance 0).

use super::HistogramParams;
use crate::ops::{no_local, Shape, VariantSpec};

/// Work-group size of both variants.
pub const LWS: usize = 256;
/// Pixels per work-item of `local_private`.
pub const PER_ITEM: usize = 32;
/// The largest private histogram, in counts (`channels * bins`): 32 KiB of
/// local memory, so a GPU keeps more than one group per compute unit.
pub const MAX_LOCAL_COUNTS: usize = 8192;

fn bins(s: &Shape) -> usize {
    s.params.get::<HistogramParams>().map_or(0, |p| p.bins)
}

/// Sub-histograms of `local_private` on u8 samples with [`byte_bins`].
pub const COPIES: usize = 4;

/// Whether `local_private` counts `s` by the byte itself: u8 samples in a
/// binning whose bin of every level `v` is `v` (checked with the f32
/// formula, so the counts are those of every other path).
pub fn byte_bins(s: &Shape) -> bool {
    let Some(b) = s.params.get::<HistogramParams>().and_then(|p| p.binning().ok()) else {
        return false;
    };
    s.sample == crate::image::SampleType::U8
        && b.bins == 256
        && (0..256).all(|v| b.bin(v as f32) == Some(v))
}

fn private_bytes(s: &Shape) -> usize {
    if byte_bins(s) {
        4 * COPIES * (s.channels * 256 + 1)
    } else {
        4 * s.channels * bins(s)
    }
}

fn private_fits(s: &Shape) -> Result<(), String> {
    let counts = s.channels * bins(s);
    if counts == 0 {
        Err("needs histogram parameters".into())
    } else if counts > MAX_LOCAL_COUNTS {
        Err(format!(
            "{counts} counts (channels x bins) exceed the {MAX_LOCAL_COUNTS} kept in local memory"
        ))
    } else {
        Ok(())
    }
}

/// The variant table (kernels in `cl/histogram/histogram.cl`).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "local_private",
        summary: "a private histogram per work-group in local memory, merged with global atomics (u8 with a bin per level: uint4 loads, the byte as the bin, 4 sub-histograms)",
        files: &["histogram/histogram.cl"],
        options: "-DLWS=256 -DPER_ITEM=32 -DUNROLL=4",
        local: [LWS, 1],
        local_bytes: private_bytes,
        supports: private_fits,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "global_atomics",
        summary: "one pixel per work-item, one global atomic per counted sample",
        files: &["histogram/histogram.cl"],
        options: "-DLWS=256 -DPER_ITEM=32 -DUNROLL=4",
        local: [LWS, 1],
        local_bytes: no_local,
        supports: crate::ops::any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
