//! OpenCL variants of `colormap`.

use crate::ops::{any_shape, no_local, Shape, VariantSpec};

/// Bound of every path against the f64 reference, in units of the output's
/// full scale (integer outputs may also round the other way at a tie). The
/// f32 `t` is within a few ulp of the exact one, and the largest step
/// between Turbo's neighbouring entries is below 0.04, so the colour is
/// within ~1e-6; the rest is headroom for fma contraction on devices.
pub const TOLERANCE: f32 = 1e-5;

/// `local`'s table: 256 `float4`.
fn table_local(_: &Shape) -> usize {
    256 * 16
}

/// The variant table.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "pixel",
        summary: "one pixel per work-item, table read through the global-memory cache",
        file: "colormap.cl",
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        tolerance: TOLERANCE,
    },
    VariantSpec {
        name: "constant",
        summary: "one pixel per work-item, table in __constant memory",
        file: "colormap.cl",
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        tolerance: TOLERANCE,
    },
    VariantSpec {
        name: "x4",
        summary: "four pixels per work-item, a global size apart",
        file: "colormap.cl",
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        tolerance: TOLERANCE,
    },
    VariantSpec {
        name: "local",
        summary: "table copied to local memory once per work-group; grid-stride loop",
        file: "colormap.cl",
        options: "",
        local: [256, 1],
        local_bytes: table_local,
        supports: any_shape,
        tolerance: TOLERANCE,
    },
];
