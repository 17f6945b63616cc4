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
/// `units` compute units. Every layout is 32 KiB of bank slots a group (an
/// H100 holds [`GROUPS_PER_UNIT`] such groups per unit).
///
/// - Gray and RGBA: the most of 256, 128, 64 pixels that still gives every
///   unit 6 groups, so that a large image has fewer groups to zero and
///   merge (each merge is a global atomic per bin). On an H100 at
///   8192x8192 u8 RGBA, 256 pixels took 0.113-0.114 ms, 128 pixels
///   0.114-0.115 ms and 64 pixels 0.125 ms
///   (docs/results/2026-11-27-gpu-reductions-history.md); one wave of
///   groups (332 pixels, 790 groups) took 0.121 ms, and 336 on gray 0.042
///   against 0.040 (docs/results/2026-11-27-s30-lead.md).
/// - RGB: one wave, at most 6 groups per unit, each item a multiple of 16
///   pixels (whole uint4 chunks) and at most 2048 (where its 16-bit counts
///   of slot 10 could not overflow; `histogram.cl` checks). At 8192x8192
///   on an H100 (336 pixels, 781 groups) it took 0.102-0.103 ms against
///   0.116-0.119 ms for the 64 pixels of the rule before (4096 groups).
///
/// An image too small to give every unit its groups at 64 pixels an item
/// takes [`PER_ITEM`].
pub fn byte_pixels_per_item(n: usize, units: usize, channels: usize) -> usize {
    let groups = GROUPS_PER_UNIT * units.max(1);
    if n.div_ceil(LWS * 64) < groups {
        return PER_ITEM;
    }
    if channels == 3 {
        return n.div_ceil(LWS * groups).next_multiple_of(16).min(2048);
    }
    [256, 128, 64]
        .into_iter()
        .find(|&item| n.div_ceil(LWS * item) >= groups)
        .unwrap_or(64)
}

/// `local_private`'s u8 groups (32 KiB of local memory each) that an H100
/// compute unit runs at once.
pub const GROUPS_PER_UNIT: usize = 6;

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
    fn byte_items_fit_the_units() {
        // 8192x8192 on 132 units: gray and RGBA 1024 groups of 256 pixels
        // (7.8 a unit); RGB one wave of 781 groups of 336.
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 1), 256);
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 4), 256);
        assert_eq!(byte_pixels_per_item(8192 * 8192, 132, 3), 336);
        assert_eq!(byte_pixels_per_item(3840 * 2160, 132, 4), PER_ITEM);
        assert_eq!(byte_pixels_per_item(1, 0, 4), PER_ITEM);
        assert_eq!(byte_pixels_per_item(1 << 34, 132, 3), 2048);
        for (n, units) in [(1_usize << 20, 2), (12_345_678, 7), (99, 1), (1 << 30, 132)] {
            for c in [1, 3, 4] {
                let item = byte_pixels_per_item(n, units, c);
                assert_eq!(item * c % 16, 0, "{n} {units} {c}");
                let groups = n.div_ceil(LWS * item);
                let per_unit = GROUPS_PER_UNIT * units;
                match (item == PER_ITEM, c) {
                    (true, _) => assert!(n.div_ceil(LWS * 64) < per_unit, "{n} {c}"),
                    (false, 3) => assert!((groups <= per_unit || item == 2048) && item >= 64, "{n}"),
                    (false, _) => assert!(groups >= per_unit, "{n} {c}"),
                }
            }
        }
    }
}
