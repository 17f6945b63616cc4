//! `gaussian`: Gaussian blur whose cost does not grow with sigma (Deriche's
//! 4th-order recursive filter, see [`coeffs`]) and whose borders are exact:
//! the result equals filtering an infinitely replicate-padded (or mirrored)
//! image. Small sigma uses an exact separable FIR, where Deriche's
//! approximation is poor.

pub mod api;
pub mod coeffs;
pub mod cpu;
pub(crate) mod device;
pub mod geometry;
pub mod passes;
pub mod policy;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

pub use api::GaussianExt;
pub use policy::{IIR_MIN_SIGMA, MAX_SIGMA};
pub use tune::TUNE;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::ops::{OpParams, OpSpec, RunReport, Shape};

/// How the image continues past its edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Border {
    /// Clamp to the edge pixel (`aaa|abc|ccc`), the default.
    #[default]
    Replicate,
    /// Half-sample symmetric mirror (`cba|abc|cba`).
    Mirror,
}

impl std::str::FromStr for Border {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "replicate" | "clamp" => Ok(Border::Replicate),
            "mirror" | "reflect" => Ok(Border::Mirror),
            _ => Err(Error::arg(format!(
                "unknown border '{s}'; use replicate or mirror"
            ))),
        }
    }
}

/// Parameters of a Gaussian blur.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GaussianParams {
    /// Standard deviation along rows (x), in pixels. 0 leaves rows unfiltered.
    pub sigma_x: f32,
    /// Standard deviation along columns (y), in pixels. 0 leaves columns unfiltered.
    pub sigma_y: f32,
    /// Border handling.
    pub border: Border,
}

impl GaussianParams {
    /// The same sigma on both axes, replicate borders.
    pub fn new(sigma: f32) -> Self {
        GaussianParams {
            sigma_x: sigma,
            sigma_y: sigma,
            border: Border::Replicate,
        }
    }

    /// Checks that both sigmas are finite, non-negative and at most [`MAX_SIGMA`].
    pub fn validate(&self) -> Result<()> {
        for (name, s) in [("sigma_x", self.sigma_x), ("sigma_y", self.sigma_y)] {
            if !s.is_finite() || s < 0.0 {
                return Err(Error::arg(format!(
                    "gaussian {name} must be a finite number >= 0, got {}",
                    crate::error::num(s)
                )));
            }
            if s > MAX_SIGMA {
                return Err(Error::arg(format!(
                    "gaussian {name} = {} exceeds the limit of {MAX_SIGMA}",
                    crate::error::num(s)
                )));
            }
        }
        Ok(())
    }

    /// The smallest non-zero sigma, or `None` when both are 0 (a copy).
    pub fn min_nonzero_sigma(&self) -> Option<f32> {
        [self.sigma_x, self.sigma_y]
            .into_iter()
            .filter(|s| *s > 0.0)
            .reduce(f32::min)
    }
}

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "gaussian",
    sources: &[
        crate::cl_source!("gaussian/common.cl"),
        crate::cl_source!("gaussian/iir.cl"),
        crate::cl_source!("gaussian/blocks.cl"),
        crate::cl_source!("gaussian/rows.cl"),
        crate::cl_source!("gaussian/tiles.cl"),
        crate::cl_source!("gaussian/fir.cl"),
    ],
    variants: variants::VARIANTS,
    gpu_order: &[
        "iir_local",
        "iir_tiles",
        "iir_rowblk",
        "iir_blocks",
        "iir_transpose_f4",
        "iir_transpose",
        "fir_tiles",
        "fir_local",
        "iir_rows_cols",
    ],
    cpu_device_order: &[
        "iir_rows_cols",
        "iir_transpose",
        "fir_local",
        "iir_transpose_f4",
        "iir_blocks",
        "iir_rowblk",
        "iir_local",
        "iir_tiles",
        "fir_tiles",
    ],
    prefer: Some(policy::prefer),
    // The recursive passes smear a NaN or infinity along its whole row and
    // column; the FIR within its radius. Which runs depends on sigma, the
    // device and the tuning, so the operation as a whole spreads them.
    spreads_nonfinite: true,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::GAUSSIAN],
    tune: &TUNE,
};

/// The dispatch key of a blur of `img`.
fn gaussian_shape<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
        .with_params(OpParams::new(*p))
}

/// The report of a blur with both sigmas 0: a copy on the host.
fn copy_report(start: std::time::Instant) -> RunReport {
    RunReport {
        op: SPEC.name,
        variant: "copy".into(),
        backend: crate::backend::cpu::describe(),
        elapsed: start.elapsed(),
        kernel_time: None,
        fallbacks: Vec::new(),
    }
}
