//! OpenCL variants of `minmax`. Both use the shared second pass `minmax_final`.

use crate::ops::{any_shape, Shape, VariantSpec};

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
        file: "minmax.cl",
        options: "-DLWS=256",
        local: [256, 1],
        local_pixels: 2 * 256,
        supports: any_shape,
        tolerance: 0.0,
    },
    VariantSpec {
        name: "tree_vec4",
        summary: "as tree, loading 4 gray samples per vector load",
        file: "minmax.cl",
        options: "-DLWS=256",
        local: [256, 1],
        local_pixels: 2 * 256,
        supports: gray_only,
        tolerance: 0.0,
    },
];
