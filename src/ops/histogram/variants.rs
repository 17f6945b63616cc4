//! OpenCL variants of `histogram`. Both count exactly (tolerance 0).

use super::{Binning, HistogramParams};
use crate::image::SampleType;
use crate::ops::{no_local, Shape, VariantSpec};

/// Work-group size of both variants.
pub const LWS: usize = 256;
/// Pixels per work-item of `local_private` on small images (see
/// [`pixels_per_item`]).
pub const PER_ITEM: usize = 32;
/// Local memory of a private histogram: 32 KiB, so that a GPU keeps more
/// than one group per compute unit.
const LOCAL_BYTES: usize = 32 * 1024;
/// The most counts (`channels * bins`) kept as 32-bit words.
pub const MAX_LOCAL_COUNTS: usize = LOCAL_BYTES / 4;
/// The most bins of one channel kept in 16-bit halves of words.
pub const MAX_HALF_COUNTS: usize = LOCAL_BYTES / 2;

fn bins(s: &Shape) -> usize {
    s.params.get::<HistogramParams>().map_or(0, |p| p.bins)
}

/// Pixels per work-item of `local_private` on u8 samples with
/// [`Private::Levels`], for `n` pixels of `channels` samples on a device of
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

/// Pixels per work-item of `local_private`'s layouts other than
/// [`Private::Levels`] (`-DPER_ITEM`), for `n` pixels on `units` compute
/// units: the most of 256, 128, 64 that still gives every unit
/// [`GROUPS_PER_UNIT`] groups (at most 128 with 16-bit halves, which
/// count up to `LWS * item` samples of a bin), else [`PER_ITEM`]. Each
/// group zeroes and merges its whole histogram: at 32 pixels an item,
/// 8192 groups of 8192x8192 gray u16 took 0.102 ms on the H200 (33% of
/// copy) whether the bins came from float math or a shift, in bank slots
/// or not.
pub fn pixels_per_item(n: usize, units: usize, halves: bool) -> usize {
    let groups = GROUPS_PER_UNIT * units.max(1);
    [256, 128, 64]
        .into_iter()
        .filter(|&item| !halves || item <= 128)
        .find(|&item| n.div_ceil(LWS * item) >= groups)
        .unwrap_or(PER_ITEM)
}

/// `local_private`'s u8 groups (32 KiB of local memory each) that an H100
/// compute unit runs at once.
pub const GROUPS_PER_UNIT: usize = 6;

/// How `local_private` keeps a shape's counts in local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Private {
    /// u8 samples, whatever the bins: each channel's 256 levels in bank
    /// slots (`-DBYTE_BINS`), and level `v`'s count added into the bin of
    /// `v` (the f32 formula of every path) at the group's merge.
    Levels,
    /// A 32-bit count per bin and channel: at most [`MAX_LOCAL_COUNTS`].
    Words,
    /// Two 16-bit counts a word (`-DHALF_COUNTS`), at most
    /// [`MAX_HALF_COUNTS`]: a group counts at most `LWS * 128` (32768)
    /// samples of a channel ([`pixels_per_item`]), so a half cannot
    /// overflow.
    Halves,
    /// 16-bit halves of one channel's bins per group (`-DONE_CHANNEL`, the
    /// channel in the launch's second dimension), when the channels' bins
    /// together exceed [`MAX_HALF_COUNTS`]: every channel's groups read the
    /// whole pixels.
    HalvesPerChannel,
}

/// `local_private`'s layout for `s`, or why it declines `s` (more than
/// [`MAX_HALF_COUNTS`] bins of a non-u8 channel).
pub fn private_layout(s: &Shape) -> Result<Private, String> {
    let Some(p) = s.params.get::<HistogramParams>() else {
        return Err("needs histogram parameters".into());
    };
    if let Err(e) = p.binning() {
        return Err(e.to_string());
    }
    let counts = s.channels * p.bins;
    Ok(if s.sample == SampleType::U8 {
        Private::Levels
    } else if counts <= MAX_LOCAL_COUNTS {
        Private::Words
    } else if counts <= MAX_HALF_COUNTS {
        Private::Halves
    } else if p.bins <= MAX_HALF_COUNTS {
        Private::HalvesPerChannel
    } else {
        return Err(format!(
            "{} bins exceed the {MAX_HALF_COUNTS} counts kept in local memory",
            p.bins
        ));
    })
}

/// How `local_private` runs on one image.
pub struct Plan {
    /// Build options beyond the variant's.
    pub extra: String,
    /// Work-items in the launch's first dimension.
    pub items: usize,
    /// Whether the channels are the launch's second dimension
    /// ([`Private::HalvesPerChannel`]).
    pub per_channel: bool,
}

/// `local_private`'s plan for `s` (`b` its binning) over `n` pixels on
/// `units` compute units, or why it declines `s`.
pub fn private_plan(s: &Shape, b: &Binning, n: usize, units: usize) -> Result<Plan, String> {
    let layout = private_layout(s)?;
    let len = s.channels * b.bins;
    let halves = matches!(layout, Private::Halves | Private::HalvesPerChannel);
    let item = pixels_per_item(n, units, halves);
    let byte_item = byte_pixels_per_item(n, units, s.channels);
    // Neighbouring u8 levels in one bin (bin() is monotone): the merge
    // adds each bin's run of levels once.
    let shared = (1..256).any(|v| b.bin(v as f32).is_some() && b.bin(v as f32) == b.bin((v - 1) as f32));
    let extra = match layout {
        // One program serves every binning of u8 whose levels have bins of
        // their own (bins are arguments), one more every coarser binning.
        Private::Levels if shared => format!("-DBYTE_BINS -DBYTE_ITEM={byte_item} -DSHARED_BINS"),
        Private::Levels => format!("-DBYTE_BINS -DBYTE_ITEM={byte_item}"),
        Private::Words => format!("-DHIST_LEN={len} -DPER_ITEM={item}"),
        Private::Halves => format!("-DHIST_LEN={len} -DPER_ITEM={item} -DHALF_COUNTS"),
        Private::HalvesPerChannel => {
            format!("-DHIST_LEN={} -DPER_ITEM={item} -DHALF_COUNTS -DONE_CHANNEL", b.bins)
        }
    };
    // u16 whose bins are a shift of the levels (the host's check stands
    // for every level).
    let shift = (s.sample == SampleType::U16 && layout != Private::Levels)
        .then(|| b.level_shift(u16::MAX.into()))
        .flatten();
    let extra = match shift {
        Some((sh, top, last)) => format!("{extra} -DLEVEL_SHIFT={sh} -DTOP={top}u -DLAST={last}"),
        None => extra,
    };
    let items = n.div_ceil(if layout == Private::Levels { byte_item } else { item });
    Ok(Plan {
        extra,
        items,
        per_channel: layout == Private::HalvesPerChannel,
    })
}

fn private_bytes(s: &Shape) -> usize {
    let counts = s.channels * bins(s);
    match private_layout(s) {
        Ok(Private::Levels) => 4 * 256 * 32,
        Ok(Private::Words) => 4 * counts,
        Ok(Private::Halves) => 2 * counts.next_multiple_of(2),
        Ok(Private::HalvesPerChannel) => 2 * bins(s).next_multiple_of(2),
        Err(_) => 0,
    }
}

fn private_fits(s: &Shape) -> Result<(), String> {
    private_layout(s).map(|_| ())
}

/// The variant table (kernels in `cl/histogram/histogram.cl`).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "local_private",
        summary: "a private histogram per work-group in local memory, merged with global atomics (u8: each level counted with uint4 loads and bank slots, binned at the merge; past 8192 counts, 16-bit counts, then a channel per group)",
        files: &["histogram/histogram.cl"],
        options: "-DLWS=256 -DUNROLL=4",
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
        options: "-DLWS=256 -DUNROLL=4",
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
    fn items_give_every_unit_its_groups_and_halves_cannot_overflow() {
        assert_eq!(pixels_per_item(8192 * 8192, 132, false), 256);
        assert_eq!(pixels_per_item(8192 * 8192, 132, true), 128);
        assert_eq!(pixels_per_item(8192 * 4096, 132, false), 128);
        assert_eq!(pixels_per_item(3840 * 2160, 132, false), PER_ITEM);
        assert_eq!(pixels_per_item(640 * 480, 132, false), PER_ITEM);
        for (n, units) in [(1_usize, 0), (99, 1), (1 << 20, 2), (12_345_678, 7), (1 << 30, 132)] {
            for halves in [false, true] {
                let item = pixels_per_item(n, units, halves);
                // Whole unrolled steps of loads: GN * UNROLL, 32 for u16
                // gray (cl/histogram/histogram.cl).
                assert_eq!(item % 32, 0, "{n} {units}");
                assert!(!halves || LWS * item <= 65535, "{n} {units}");
                if item != PER_ITEM {
                    assert!(n.div_ceil(LWS * item) >= GROUPS_PER_UNIT * units.max(1));
                }
            }
        }
    }

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
