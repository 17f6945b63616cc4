//! OpenCL variants of `colormap`.

use crate::ops::{any_shape, no_local, VariantSpec};

/// Bound of every path against the f64 reference, in units of the output's
/// full scale (integer outputs may also round the other way at a tie). The
/// f32 `t` is within a few ulp of the exact one, and the largest step
/// between Turbo's neighbouring entries is 0.029, so the colour is
/// within ~1e-6; the rest is headroom for fma contraction on devices.
pub const TOLERANCE: f32 = 1e-5;

/// The variant table. `docs/KERNELS.md` says which others were tried
/// (table in `__constant` or local memory, four pixels per work-item) and
/// why they are not here.
pub static VARIANTS: &[VariantSpec] = &[VariantSpec {
    name: "pixel",
    summary: "one pixel per work-item, table read through the global-memory cache",
    files: &["colormap/colormap.cl"],
    options: "",
    local: [256, 1],
    local_bytes: no_local,
    supports: any_shape,
    requires: &[],
    tolerance: TOLERANCE,
}];
