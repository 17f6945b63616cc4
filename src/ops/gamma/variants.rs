//! OpenCL variants of `gamma`.

use crate::image::SampleType;
use crate::ops::{any_shape, no_local, Shape, VariantSpec};

/// The variant table: the formula per pixel, or (u8 and u16) a table.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "pixel",
        summary: "one pixel per work-item, the curve's formula in f32 (exp2 of log2)",
        files: &["gamma/gamma.cl"],
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: TOLERANCE,
    },
    VariantSpec {
        name: "lut",
        summary: "one sample per work-item through the host's table of every value (u8, u16)",
        files: &["gamma/gamma.cl"],
        options: "",
        local: [256, 1],
        local_bytes: no_local,
        supports: integer_samples,
        requires: &[],
        tolerance: LUT_TOLERANCE,
    },
];

/// The formula in f32 against f64, in units of full scale, for samples
/// within `0..=full` (every integer sample): the power as
/// `exp2(y log2 L)`, each within 3 ulp, is within about 2^-22 of a result
/// up to 1, times 1.099 at most, plus the products' and the difference's
/// half steps. f32 samples above 1 hold a relative bound instead
/// (docs/QUALITY.md).
pub const TOLERANCE: f32 = 2e-6;

/// The table holds the f64 curve rounded once: within the rounding of
/// the reference itself (its f32 storage).
pub const LUT_TOLERANCE: f32 = 1e-7;

/// u8 and u16 only: a float has no table (and device chains work in f32).
fn integer_samples(shape: &Shape) -> Result<(), String> {
    if shape.sample == SampleType::F32 {
        Err("a table needs integer samples (u8 or u16)".into())
    } else {
        Ok(())
    }
}
