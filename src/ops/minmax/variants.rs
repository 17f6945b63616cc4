//! OpenCL variants of `minmax`. Both use the shared second pass `minmax_final`.

use crate::ops::{any_shape, Shape, VariantSpec};

/// Both passes keep two arrays of 256 entries; the final pass's are `float4`
/// (16 bytes), the largest either pass declares, whatever the pixel type.
fn reduction_arrays(_: &Shape) -> usize {
    2 * 256 * 16
}

fn gray_only(s: &Shape) -> Result<(), String> {
    if s.channels == 1 {
        Ok(())
    } else {
        Err("vector loads of 4 samples need a single-channel image".into())
    }
}

/// The variant table. Every entry is exact (tolerance 0).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "tree",
        summary: "grid-strided loads, local-memory tree per group, then one final group",
        files: &["minmax/minmax.cl"],
        options: "-DLWS=256",
        local: [256, 1],
        local_bytes: reduction_arrays,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "tree_vec4",
        summary: "as tree, loading 4 gray samples per vector load",
        files: &["minmax/minmax.cl"],
        options: "-DLWS=256",
        local: [256, 1],
        local_bytes: reduction_arrays,
        supports: gray_only,
        requires: &[],
        tolerance: 0.0,
    },
];
