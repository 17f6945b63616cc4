//! OpenCL variants of `stats`. `tree` and `tree_vec4` write one partial
//! per work-group and share the final pass `stats_final`; `vec4_dp4a`
//! finishes in its one kernel, with global atomics.
//!
//! `tolerance` is, for this operation, the sum's bound in units of
//! `u * sum(|x|)`, u = 2^-24 (the case's `check` derives the mean's and
//! the standard deviation's bounds from it, and holds min and max to
//! exactness). The float path chains: a compensated walk per work-item
//! (Kahan: 2, and its fold: 1), for `tree_vec4` the sum of the four lanes
//! (2), the group's tree (depth 8), the final pass's compensated walk
//! over the partials (3) and its tree (8): at most 24, with the O(m u^2)
//! terms of the walks (m at most 2^13 terms each: 2^-11 u) far below one
//! more unit. That is the bound of float samples; u8 and u16 samples take
//! an integer path in every variant (exact sums and extremes: see
//! [`int_options`]), well inside it; `vec4_dp4a` takes u8 only.

use crate::image::SampleType;
use crate::ops::{any_shape, Requirement, Shape, VariantSpec};

/// Work-group size of every pass (a power of two).
pub const LWS: usize = 256;
/// The fewest loads per work-item in the first pass (pixels, or quads for
/// `tree_vec4`).
pub const MIN_PER_ITEM: usize = 16;
/// The first pass's work-items, about: larger images give each more
/// loads rather than adding groups, so the final pass (one group) walks
/// at most `TARGET_ITEMS / LWS` partials. 2^18 is 1024 groups, about one
/// wave of 8 groups on each of an H100's 132 compute units.
pub const TARGET_ITEMS: usize = 1 << 18;

/// Loads per work-item of the first pass over `items` pixels (or quads).
/// Below 2^31 items (an `int` pixel count) this is at most 2^13, the
/// integer path's bound (cl/stats/stats.cl).
pub fn loads_per_item(items: usize) -> usize {
    items.div_ceil(TARGET_ITEMS).max(MIN_PER_ITEM)
}

/// The build options of the integer path (cl/stats/stats.cl, INT_STATS):
/// the type of a work-item's sum of squares, so that it cannot overflow,
/// and on gray u16 8 loads in flight rather than 4 (H200, 8192x8192,
/// 2026-11-27: `tree_vec4` 59-61% to 66-68% of copy; no change on u8).
/// Float samples take none.
pub fn int_options(ty: SampleType, channels: usize) -> &'static str {
    match (ty, channels) {
        (SampleType::U8, _) => "-DINT_STATS -DSQ_T=uint",
        (SampleType::U16, 1) => "-DINT_STATS -DSQ_T=ulong -DUNROLL=8",
        (SampleType::U16, _) => "-DINT_STATS -DSQ_T=ulong",
        (SampleType::F32, _) => "",
    }
}

/// The largest local arrays: the final pass's four float4 arrays, or
/// ulong4 ones on the integer path (the first pass keeps smaller ones).
fn four_arrays(s: &Shape) -> usize {
    let lane = if s.sample == SampleType::F32 { 4 } else { 8 };
    4 * LWS * 4 * lane
}

fn gray_u8(s: &Shape) -> Result<(), String> {
    gray_only(s)?;
    if s.sample == SampleType::U8 {
        Ok(())
    } else {
        Err("dp4a adds unsigned bytes: u8 samples only".into())
    }
}

fn gray_only(s: &Shape) -> Result<(), String> {
    if s.channels == 1 {
        Ok(())
    } else {
        Err("vector loads of 4 samples need a single-channel image".into())
    }
}

/// The variant table (kernels in `cl/stats/stats.cl`).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "tree",
        summary: "a block of 256 x (n / 2^18, at least 16; for u8 colour a multiple of 16, read in 16-byte loads) pixels per work-group: compensated walks (integers: exact), a local tree, one final group",
        files: &["stats/stats.cl"],
        options: "-DLWS=256",
        local: [LWS, 1],
        local_bytes: four_arrays,
        supports: any_shape,
        requires: &[],
        tolerance: 24.0,
    },
    VariantSpec {
        name: "tree_vec4",
        summary: "as tree, loading 4 gray samples per aligned vector load",
        files: &["stats/stats.cl"],
        options: "-DLWS=256",
        local: [LWS, 1],
        local_bytes: four_arrays,
        supports: gray_only,
        requires: &[],
        tolerance: 24.0,
    },
    VariantSpec {
        name: "vec4_dp4a",
        summary: "as tree_vec4 on gray u8, each 4-byte word summed and squared by one inline-PTX dp4a each, warps combined by shfl.sync, groups by global atomics in one kernel (NVIDIA)",
        files: &["ptx.cl", "stats/stats.cl", "stats/dp4a.cl"],
        options: "-DLWS=256",
        local: [LWS, 1],
        local_bytes: four_arrays,
        supports: gray_u8,
        requires: &[Requirement::Vendor("NVIDIA")],
        tolerance: 24.0,
    },
];
