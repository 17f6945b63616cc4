//! `ccm`: a 3x3 colour-correction matrix on RGB(A) images.
//!
//! Each pixel's colour becomes `M * (r, g, b)`: `r' = m[0] r + m[1] g +
//! m[2] b`, `g' = m[3] r + m[4] g + m[5] b`, `b' = m[6] r + m[7] g +
//! m[8] b` (the matrix in row-major order, [`CcmParams::m`]), computed in
//! f32 in the input's units and converted back to the input's type with
//! round-half-to-even and saturation (f32 is not clipped). The alpha
//! channel of RGBA images is copied. Coefficients are finite and within
//! `-MAX_COEFF..=MAX_COEFF`.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpSpec, RunReport};
pub use api::CcmExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "ccm",
    sources: &[crate::cl_source!("ccm/ccm.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["pixel", "pixel4"],
    cpu_device_order: &["pixel4", "pixel"],
    prefer: None,
    // Pixel by pixel: a NaN stays in its pixel.
    spreads_nonfinite: false,
    // Coefficients are at most MAX_COEFF, but f32 samples may be huge.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::CCM],
    tune: &TUNE,
};

/// The largest coefficient magnitude.
pub const MAX_COEFF: f32 = 64.0;

/// A colour-correction matrix.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CcmParams {
    /// The 3x3 matrix, row-major: row `i` makes output channel `i`.
    pub m: [f32; 9],
}

impl CcmParams {
    /// The identity matrix.
    pub const IDENTITY: CcmParams = CcmParams {
        m: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
    };

    /// Checks the coefficients: finite and within `-MAX_COEFF..=MAX_COEFF`.
    pub fn validate(&self) -> Result<()> {
        if self.m.iter().any(|v| !v.is_finite() || v.abs() > MAX_COEFF) {
            return Err(Error::arg(format!(
                "colour-matrix coefficients must be finite and within \
                 -{MAX_COEFF}..={MAX_COEFF}, got {:?}",
                self.m
            )));
        }
        Ok(())
    }

    /// The largest sum of a row's magnitudes: how far the matrix can
    /// stretch a sample.
    pub fn gain(&self) -> f32 {
        self.m
            .chunks_exact(3)
            .map(|r| r.iter().map(|v| v.abs()).sum::<f32>())
            .fold(0.0, f32::max)
    }

    /// The kernels' three `float4` rows (`w` unused).
    pub fn rows(&self) -> [[f32; 4]; 3] {
        let m = &self.m;
        [
            [m[0], m[1], m[2], 0.0],
            [m[3], m[4], m[5], 0.0],
            [m[6], m[7], m[8], 0.0],
        ]
    }
}

/// `InvalidArgument` unless `channels` is 3 or 4.
pub fn check_channels(channels: usize) -> Result<()> {
    if matches!(channels, 3 | 4) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "ccm transforms RGB or RGBA images, this one has {channels} channel(s)"
        )))
    }
}

/// One pixel's colour through the matrix in f32, summed left to right as
/// the kernels do (which may fuse products into FMAs).
#[inline]
pub fn apply(m: &[f32; 9], v: [f32; 3]) -> [f32; 3] {
    let row = |i: usize| m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
    [row(0), row(1), row(2)]
}
