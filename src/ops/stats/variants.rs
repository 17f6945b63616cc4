//! OpenCL variants of `stats`. Both write one partial per work-group and
//! share the final pass `stats_final`.
//!
//! `tolerance` is, for this operation, the sum's bound in units of
//! `u * sum(|x|)`, u = 2^-24 (the case's `check` derives the mean's and
//! the standard deviation's bounds from it, and holds min and max to
//! exactness). Both variants chain: a compensated walk per work-item
//! (Kahan: 2, and its fold: 1), for `tree_vec4` the sum of the four lanes
//! (2), the group's tree (depth 8), the final pass's compensated walk
//! over the partials (3) and its tree (8): at most 24, with the O(n u^2)
//! terms of the walks (at most 64 terms each) far below one more unit.

use crate::ops::{any_shape, Shape, VariantSpec};

/// Work-group size of every pass (a power of two).
pub const LWS: usize = 256;
/// Loads per work-item in the first pass (pixels, or quads for `tree_vec4`).
pub const PER_ITEM: usize = 16;

/// The largest local arrays: the final pass's four float4 arrays (the
/// first pass keeps four FLOATN arrays, at most as large).
fn four_arrays(_: &Shape) -> usize {
    4 * LWS * 16
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
        summary: "a block of 4096 pixels per work-group: compensated walks, a local tree, one final group",
        files: &["stats/stats.cl"],
        options: "-DLWS=256 -DPER_ITEM=16",
        local: [LWS, 1],
        local_bytes: four_arrays,
        supports: any_shape,
        requires: &[],
        tolerance: 24.0,
    },
    VariantSpec {
        name: "tree_vec4",
        summary: "as tree, loading 4 gray samples per vector load (16384 samples per group)",
        files: &["stats/stats.cl"],
        options: "-DLWS=256 -DPER_ITEM=16",
        local: [LWS, 1],
        local_bytes: four_arrays,
        supports: gray_only,
        requires: &[],
        tolerance: 24.0,
    },
];
