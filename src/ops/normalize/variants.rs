//! OpenCL variants of `normalize`.

use crate::ops::{any_shape, no_local, VariantSpec};

/// The variant table. Both do the CPU path's two f32 operations and its
/// rounding, so both are bit-exact (tolerance 0).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "pixel",
        summary: "one pixel per work-item",
        files: &["normalize/normalize.cl"],
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "x4",
        summary: "four pixels per work-item, a global size apart (each load coalesced)",
        files: &["normalize/normalize.cl"],
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
