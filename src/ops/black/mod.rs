//! `black`: black-level subtraction, for raw frames before `demosaic` and
//! for images.
//!
//! Each colour sample becomes `max(in - black, 0) * k`, in the input's
//! units (a u16 sample of 300 with `black = 64` becomes 236), converted
//! back to the input's type with round-half-to-even and saturation. `k` is
//! 1, or with a white level `full / (white - black)`, which stretches
//! `black..white` to the type's full scale (255, 65535 or 1.0); samples
//! above `white` then saturate in integer types and exceed 1.0 in f32
//! (f32 is never clipped at the top). The alpha channel of 4-channel
//! images is copied. NaN becomes 0 (it is below the black level).
//!
//! In a raw pipeline (`black=64,demosaic`), `black` alone keeps the
//! camera's units, so `demosaic` still takes its white level from the
//! format's bits; after `black=64:white=4095` the samples span the
//! container's full scale and `demosaic` uses that instead.

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
pub use api::BlackExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "black",
    sources: &[crate::cl_source!("black/black.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["pixel"],
    cpu_device_order: &["pixel"],
    prefer: None,
    // Sample by sample; NaN becomes 0.
    spreads_nonfinite: false,
    // With a white level, samples are multiplied by up to 1e30.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::BLACK],
    tune: &TUNE,
};

/// The largest stretch factor a white level may give (it keeps the f32
/// arithmetic finite for every sample of the types).
pub const MAX_FACTOR: f64 = 1e30;

/// Black and white levels, in the input's units.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BlackParams {
    /// Subtracted from every colour sample; results below 0 become 0.
    pub black: f32,
    /// With a white level, `black..white` is stretched to full scale.
    pub white: Option<f32>,
}

impl BlackParams {
    /// Checks the levels: `black` finite and `>= 0`, `white` finite and above it.
    pub fn validate(&self) -> Result<()> {
        if !self.black.is_finite() || self.black < 0.0 {
            return Err(Error::arg(format!(
                "the black level must be a finite number >= 0, got {}",
                self.black
            )));
        }
        if let Some(w) = self.white {
            if !w.is_finite() || w <= self.black {
                return Err(Error::arg(format!(
                    "the white level must be a finite number above the black level {}, got {w}",
                    self.black
                )));
            }
        }
        Ok(())
    }

    /// The factor applied after the subtraction, for samples of `ty`: 1,
    /// or `full / (white - black)` in f32 (checked).
    pub fn factor(&self, ty: SampleType) -> Result<f32> {
        self.validate()?;
        let Some(w) = self.white else {
            return Ok(1.0);
        };
        let k = ty.full_scale() as f64 / (f64::from(w) - f64::from(self.black));
        if k > MAX_FACTOR {
            return Err(Error::arg(format!(
                "black={} and white={w} are too close for {ty} samples (factor {k:e})",
                self.black
            )));
        }
        Ok(k as f32)
    }
}
