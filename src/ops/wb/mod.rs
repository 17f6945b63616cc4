//! `wb`: white balance, per-channel gains on RGB(A) images.
//!
//! Each colour sample becomes `in * gain[c]` (alpha is copied), converted
//! back to the input's type with round-half-to-even and saturation (f32
//! is not clipped). Gains are given ([`WbParams::Gains`], each finite and
//! within `0..=`[`MAX_GAIN`]) or found on the image by the gray-world
//! rule ([`WbParams::Auto`], [`gray_world`]): the gains that make the red
//! and blue means equal the green mean, green's gain 1. The means are each
//! channel's mean over every pixel of the image, saturated and clipped
//! pixels included (none are left out); they come from `stats` (on the
//! device in device pipelines, one read-back of the means).

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
pub use api::WbExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "wb",
    sources: &[crate::cl_source!("wb/wb.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["pixel"],
    cpu_device_order: &["pixel"],
    prefer: None,
    // Sample by sample.
    spreads_nonfinite: false,
    // Gains are at most MAX_GAIN, but f32 samples may be huge.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::WB],
    tune: &TUNE,
};

/// The largest gain, given or found by the gray-world rule.
pub const MAX_GAIN: f32 = 64.0;

/// How the gains are chosen.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WbParams {
    /// Red, green and blue gains.
    Gains([f32; 3]),
    /// Gray world: the gains [`gray_world`] finds on the image.
    Auto,
}

impl WbParams {
    /// Checks given gains: finite and within `0..=MAX_GAIN`.
    pub fn validate(&self) -> Result<()> {
        if let WbParams::Gains(g) = self {
            if g.iter().any(|g| !g.is_finite() || !(0.0..=MAX_GAIN).contains(g)) {
                return Err(Error::arg(format!(
                    "white-balance gains must be finite and within 0..={MAX_GAIN}, got {g:?}"
                )));
            }
        }
        Ok(())
    }
}

/// The gray-world gains for the channel means `[r, g, b]`: `g / r`, 1,
/// `g / b`, each clamped to `0..=MAX_GAIN`. A channel whose mean or gain
/// is not a positive number (a black channel) keeps gain 1. A mean that
/// is not finite (NaN or infinite f32 samples in the image) is
/// `Error::InvalidInput`: no gain would balance it, and keeping gain 1
/// would leave that channel silently unbalanced.
pub fn gray_world(means: [f64; 3]) -> Result<[f32; 3]> {
    if let Some(c) = means.iter().position(|m| !m.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "wb=auto: the {} channel's mean is {}, as the f32 image holds NaN or infinite \
             samples there; repair them first (nonfinite=zero or nonfinite=clamp on an \
             earlier stage) or give the gains with r=, g=, b=",
            ["red", "green", "blue"][c],
            means[c]
        )));
    }
    let gain = |m: f64| {
        let g = means[1] / m;
        if m > 0.0 && g.is_finite() && g > 0.0 {
            g.min(f64::from(MAX_GAIN)) as f32
        } else {
            1.0
        }
    };
    Ok([gain(means[0]), 1.0, gain(means[2])])
}

/// `InvalidArgument` unless `channels` is 3 or 4.
pub fn check_channels(channels: usize) -> Result<()> {
    if matches!(channels, 3 | 4) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "wb balances RGB or RGBA images, this one has {channels} channel(s)"
        )))
    }
}

/// The kernels' `float4` argument: the gains, alpha's 1.
pub fn kernel_gains(g: [f32; 3]) -> [f32; 4] {
    [g[0], g[1], g[2], 1.0]
}
