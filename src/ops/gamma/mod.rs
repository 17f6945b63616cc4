//! `gamma`: the encoding curves (opto-electronic transfer functions) of
//! sRGB and Rec.709, and plain powers: linear light in, encoded values out.
//!
//! Each colour sample is read as linear light `L = max(in / full, 0)`
//! (`full` = 255, 65535 or 1.0; NaN becomes 0), encoded with `E(L)` and
//! scaled back, `out = E(L) * full`, converted to the input's type with
//! round-half-to-even and saturation (f32 is not clipped: `L > 1` follows
//! the curve's formula past 1). The alpha channel of RGBA images is
//! copied; gray images are encoded too.
//!
//! - [`GammaParams::Srgb`] (IEC 61966-2-1): `12.92 L` for `L <= 0.0031308`,
//!   else `1.055 L^(1/2.4) - 0.055`.
//! - [`GammaParams::Rec709`] (ITU-R BT.709): `4.5 L` for `L < 0.018`, else
//!   `1.099 L^0.45 - 0.099`, with the standard's rounded constants.
//! - [`GammaParams::Power`]`(n)`: `L^(1/n)`, `n` within `MIN_POWER..=MAX_POWER`
//!   (`n = 2.2` is the classic display gamma's inverse).

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
pub use api::GammaExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "gamma",
    sources: &[crate::cl_source!("gamma/gamma.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["lut", "pixel"],
    cpu_device_order: &["lut", "pixel"],
    prefer: None,
    // Sample by sample.
    spreads_nonfinite: false,
    // A power 1/n with n < 1 raises f32 samples above 1 to a power above 1.
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::GAMMA],
    tune: &TUNE,
};

/// The smallest power `n` of [`GammaParams::Power`].
pub const MIN_POWER: f32 = 0.1;
/// The largest power `n` of [`GammaParams::Power`].
pub const MAX_POWER: f32 = 10.0;

/// The curve, linear to encoded.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GammaParams {
    /// The sRGB encoding (IEC 61966-2-1).
    Srgb,
    /// The Rec.709 OETF (ITU-R BT.709).
    Rec709,
    /// `L^(1/n)`.
    Power(f32),
}

impl GammaParams {
    /// Checks a power: finite and within `MIN_POWER..=MAX_POWER`.
    pub fn validate(&self) -> Result<()> {
        if let GammaParams::Power(n) = *self {
            if !n.is_finite() || !(MIN_POWER..=MAX_POWER).contains(&n) {
                return Err(Error::arg(format!(
                    "a gamma power must be a finite number within {MIN_POWER}..={MAX_POWER}, got {n}"
                )));
            }
        }
        Ok(())
    }

    /// The kernels' `CURVE` option and `inv` argument.
    pub(crate) fn kernel_args(&self) -> (u8, f32) {
        match *self {
            GammaParams::Srgb => (0, 0.0),
            GammaParams::Rec709 => (1, 0.0),
            GammaParams::Power(n) => (2, 1.0 / n),
        }
    }

    /// `E(L)` in f64 for `L >= 0`, the reference's curve.
    pub fn encode_f64(&self, l: f64) -> f64 {
        match *self {
            GammaParams::Srgb if l <= 0.0031308 => 12.92 * l,
            GammaParams::Srgb => 1.055 * l.powf(1.0 / 2.4) - 0.055,
            GammaParams::Rec709 if l < 0.018 => 4.5 * l,
            GammaParams::Rec709 => 1.099 * l.powf(0.45) - 0.099,
            GammaParams::Power(n) => l.powf(1.0 / f64::from(n)),
        }
    }

    /// `E(L)` in f32 for `L >= 0`, as the `pixel` kernel computes it.
    pub fn encode_f32(&self, l: f32) -> f32 {
        match *self {
            GammaParams::Srgb if l <= 0.0031308 => 12.92 * l,
            GammaParams::Srgb => 1.055 * l.powf(1.0 / 2.4) - 0.055,
            GammaParams::Rec709 if l < 0.018 => 4.5 * l,
            GammaParams::Rec709 => 1.099 * l.powf(0.45) - 0.099,
            GammaParams::Power(n) => l.powf(1.0 / n),
        }
    }

    /// The table of every `T` value's result, rounded from the f64 curve:
    /// 256 entries for u8, 65536 for u16 (the CPU path and the `lut`
    /// variant read it); `None` for f32, which has no table.
    pub fn table<T: Sample>(&self) -> Option<Vec<T>> {
        let len = match T::TYPE {
            SampleType::U8 => 256,
            SampleType::U16 => 65536,
            SampleType::F32 => return None,
        };
        let full = f64::from(T::TYPE.full_scale());
        Some(
            (0..len)
                // Rounded in f64: an f32 of the product could round twice.
                .map(|i| T::from_f32((self.encode_f64(f64::from(i) / full) * full).round_ties_even() as f32))
                .collect(),
        )
    }
}
