//! OpenCL variants of `black`.

use crate::ops::{any_shape, no_local, VariantSpec};

/// The variant table. The kernel does the rayon path's f32 arithmetic and
/// rounding; the tolerance covers f32 against the f64 reference.
pub static VARIANTS: &[VariantSpec] = &[VariantSpec {
    name: "pixel",
    summary: "one pixel per work-item",
    files: &["black/black.cl"],
    options: "",
    local: [256, 1],
    local_bytes: no_local,
    supports: any_shape,
    requires: &[],
    tolerance: TOLERANCE,
}];

/// f32 against f64, in units of full scale: a subtraction and a product,
/// each within half an f32 step of values up to full scale.
pub const TOLERANCE: f32 = 1e-6;
