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

/// Pixels per work-item of `local_private` on u8 samples with
/// [`byte_bins`], for `n` pixels of `channels` samples on a device of
/// `units` compute units: the most that still gives every unit `g`
/// work-groups, so that a large image has fewer groups to zero and merge
/// (each merge is a global atomic per bin). Every layout is 32 KiB of bank
/// slots a group (an H100 holds 6 such groups per unit). Gray and RGBA: at
/// most 256 pixels, `g` = 6. On an H100 at 8192x8192 u8 RGBA, 256 pixels
/// took 0.113-0.114 ms, 128 pixels 0.114-0.115 ms and 64 pixels 0.125 ms
/// (docs/results/2026-11-27-gpu-reductions-history.md). RGB: at most 128, `g` = 16, the rule of its
/// former sub-histograms, under which its bank slots were measured (64
/// pixels at 8192x8192 on an H100: 0.117-0.122 ms against 0.134-0.137;
/// docs/results/2026-11-27-s29-hist.md).
pub fn byte_pixels_per_item(n: usize, units: usize, channels: usize) -> usize {
    let (items, per_unit): (&[usize], usize) = if channels == 3 {
        (&[128, 64], 16)
    } else {
        (&[256, 128, 64], 6)
    };
    let groups = per_unit * units.max(1);
    items
        .iter()
        .copied()
        .find(|&item| n.div_ceil(LWS * item) >= groups)
        .unwrap_or(PER_ITEM)
}

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
        4 * 256 * 32
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
        summary: "a private histogram per work-group in local memory, merged with global atomics (u8 with a bin per level: uint4 loads, the byte as the bin, bank slots)",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_items_keep_enough_groups_per_unit() {
        // 8192x8192 on 132 units: RGBA 1024 groups of 256 pixels (7.8 a
        // unit); RGB 2048 groups of 128 are too few, 4096 of 64.
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 4), 256);
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 1), 256);
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 3), 64);
        assert_eq!(byte_pixels_per_item(8192 * 8192, 64, 3), 128);
        assert_eq!(byte_pixels_per_item(3840 * 2160, 132, 4), PER_ITEM);
        assert_eq!(byte_pixels_per_item(1, 0, 4), PER_ITEM);
        for (n, units) in [(1_usize << 20, 2), (12_345_678, 7), (99, 1)] {
            for (c, per_unit) in [(1, 6), (3, 16), (4, 6)] {
                let item = byte_pixels_per_item(n, units, c);
                assert!(item == PER_ITEM || n.div_ceil(LWS * item) >= per_unit * units);
            }
        }
    }
}
