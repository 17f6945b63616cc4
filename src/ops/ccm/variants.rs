//! OpenCL variants of `ccm`.

use crate::ops::{any_shape, no_local, VariantSpec};

/// The variant table: the rayon path's f32 dot products, one or four
/// pixels per work-item.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "pixel",
        summary: "one pixel per work-item",
        files: &["ccm/ccm.cl"],
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: TOLERANCE,
    },
    VariantSpec {
        name: "pixel4",
        summary: "four consecutive pixels per work-item",
        files: &["ccm/ccm.cl"],
        options: "",
        local: [64, 1],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: TOLERANCE,
    },
];

/// f32 against f64, in units of full scale, for matrices whose rows'
/// magnitudes sum to at most 4 (the tuning case's, and typical camera
/// matrices): three products and two sums, each within half an f32 step
/// (2^-24) of a value up to 4 x full scale. In general the bound is
/// `3 * 2^-24 * CcmParams::gain` (docs/QUALITY.md).
pub const TOLERANCE: f32 = 1e-6;
