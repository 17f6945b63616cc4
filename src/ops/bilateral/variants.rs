//! OpenCL variants of `bilateral`, and which requests each takes.
//!
//! The exact variants hold [`EXACT_TOLERANCE`] and run any request; the
//! fast ones hold [`FAST_TOLERANCE`] and decline requests for
//! `precision=exact` ([`fast_only`]), so neither a forced variant, a tuned
//! order nor a default order can serve an exact request with one. The
//! tuner's gate checks each variant at its own tolerance, which for a fast
//! variant is the fast bound and only ever applies to fast requests.

use super::{BilateralParams, Precision, MAX_RADIUS};
use crate::ops::{no_local, Shape, VariantSpec};

/// The bound of `precision=exact`, in units of full scale (integer outputs
/// add the rounding's half step).
pub const EXACT_TOLERANCE: f32 = 1e-4;

/// The bound of `precision=fast`, in units of full scale. `native_exp` has
/// an implementation-defined accuracy; a relative error `e` in every weight
/// moves a result by at most about `2e` of the window's range, so this
/// allows weights 1e-3 off, far more than the GPUs' 2-ulp `native_exp`.
pub const FAST_TOLERANCE: f32 = 2e-3;

/// The local variants' work-group (tile) width and height (passed to every
/// program with `-D`, as [`LOCAL_RMAX`] is).
pub const TILE: usize = 16;

/// The largest radius the local variants' tiles hold.
pub const LOCAL_RMAX: usize = 8;

/// The parameters of a request (a request without them is declined).
fn params(shape: &Shape) -> Result<&BilateralParams, String> {
    shape
        .params
        .get::<BilateralParams>()
        .ok_or_else(|| "needs the bilateral parameters".to_string())
}

/// `supports` of the exact variants: any request with parameters.
fn exact(shape: &Shape) -> Result<(), String> {
    params(shape).map(drop)
}

/// `supports` of the fast variants: requests for `precision=fast` only.
pub fn fast_only(shape: &Shape) -> Result<(), String> {
    match params(shape)?.precision {
        Precision::Fast => Ok(()),
        Precision::Exact => Err("a fast variant: precision=exact declines it".into()),
    }
}

/// Radii up to [`LOCAL_RMAX`].
fn tile_radius(shape: &Shape) -> Result<(), String> {
    let r = params(shape)?.radius();
    if r > LOCAL_RMAX {
        return Err(format!(
            "radius {r}: the local tile holds radius {LOCAL_RMAX} at most (limit {MAX_RADIUS})"
        ));
    }
    Ok(())
}

/// Four-channel requests (RGBA, or a pipeline's RGB working image).
fn rgba(shape: &Shape) -> Result<(), String> {
    if shape.channels != 4 {
        return Err(format!("RGBA only, not {} channels", shape.channels));
    }
    Ok(())
}

/// Bytes of the local tile: float or float4 per pixel.
fn tile_bytes(shape: &Shape) -> usize {
    let px = if shape.channels == 1 { 4 } else { 16 };
    (TILE + 2 * LOCAL_RMAX) * (TILE + 2 * LOCAL_RMAX) * px
}

/// The variant table.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "direct",
        summary: "one pixel per work-item, every tap from global memory, exp()",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [32, 4],
        local_bytes: no_local,
        supports: exact,
        requires: &[],
        tolerance: EXACT_TOLERANCE,
    },
    VariantSpec {
        name: "local",
        summary: "16x16 tile plus halo (radius <= 8) in local memory, exp()",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [TILE, TILE],
        local_bytes: tile_bytes,
        supports: |s| exact(s).and(tile_radius(s)),
        requires: &[],
        tolerance: EXACT_TOLERANCE,
    },
    VariantSpec {
        name: "rgba",
        summary: "RGBA as uchar4/ushort4/float4 vectors: one aligned load per tap, exp()",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [32, 4],
        local_bytes: no_local,
        supports: |s| exact(s).and(rgba(s)),
        requires: &[],
        tolerance: EXACT_TOLERANCE,
    },
    VariantSpec {
        name: "fast",
        summary: "precision=fast: taps and spatial weights from constant memory, native_exp",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [32, 4],
        local_bytes: no_local,
        supports: fast_only,
        requires: &[],
        tolerance: FAST_TOLERANCE,
    },
    VariantSpec {
        name: "fast_local",
        summary: "precision=fast: the local tile with constant-memory taps and native_exp",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [TILE, TILE],
        local_bytes: tile_bytes,
        supports: |s| fast_only(s).and(tile_radius(s)),
        requires: &[],
        tolerance: FAST_TOLERANCE,
    },
    VariantSpec {
        name: "fast_rgba",
        summary: "precision=fast: RGBA vectors with constant-memory taps and native_exp",
        files: &["bilateral/bilateral.cl"],
        options: "",
        local: [32, 4],
        local_bytes: no_local,
        supports: |s| fast_only(s).and(rgba(s)),
        requires: &[],
        tolerance: FAST_TOLERANCE,
    },
];

/// Whether `spec` is a fast variant (its kernel takes the tap table).
pub fn is_fast(spec: &VariantSpec) -> bool {
    spec.name.starts_with("fast")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::OpParams;
    use crate::SampleType;

    #[test]
    fn exact_requests_decline_every_fast_variant() {
        for precision in [Precision::Exact, Precision::Fast] {
            let p = BilateralParams {
                precision,
                ..BilateralParams::new(2.0, 0.1)
            };
            let shape = Shape::new(64, 64, 4, SampleType::U8).with_params(OpParams::new(p));
            for v in VARIANTS {
                let ok = (v.supports)(&shape).is_ok();
                assert_eq!(ok, precision == Precision::Fast || !is_fast(v), "{}", v.name);
                assert!(v.tolerance <= precision.tolerance() || !ok, "{}", v.name);
            }
        }
    }
}
