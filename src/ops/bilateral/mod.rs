//! `bilateral`: the edge-preserving bilateral filter.
//!
//! Each output pixel `p` is the weighted mean of the pixels `q = p + (dx, dy)`
//! of the disk `dx² + dy² <= radius²` (default radius `ceil(2 sigma_s)`),
//! with weights
//!
//! `w = exp(-(dx² + dy²) / (2 sigma_s²)) · exp(-‖I(q) - I(p)‖² / (2 sigma_r²))`,
//!
//! where `‖·‖` is the Euclidean distance over the colour channels (1 for
//! gray, 3 for RGB and RGBA; the alpha of RGBA passes through unfiltered).
//! `sigma_r` is in units of the type's full scale (1.0 = 255 for u8, 65535
//! for u16, 1.0 for f32). Pixels past the edges are the edge pixel
//! (replicate, the default) or the half-sample symmetric mirror
//! (`cba|abc|cba`, OpenCV's `BORDER_REFLECT`, as the Gaussian's mirror).
//! Integer outputs are rounded to nearest (ties to even) and saturated.
//!
//! `precision=exact` holds every result within 1e-4 of full scale of the
//! f64 reference; `precision=fast` allows the `fast*` variants (`native_exp`,
//! spatial weights from a table in constant memory), which hold 2e-3. An
//! exact request never runs a fast variant: they decline it
//! ([`variants::fast_only`]).

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

pub use api::BilateralExt;
pub use tune::TUNE;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
pub use crate::ops::gaussian::Border;
use crate::ops::{OpParams, OpSpec, RunReport, Shape};

/// The largest radius: a disk of 3,209 taps. Larger windows cost
/// quadratically more and belong to other algorithms (a bilateral grid).
pub const MAX_RADIUS: usize = 32;

/// How close to the f64 reference a request must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Within 1e-4 of full scale ([`variants::EXACT_TOLERANCE`]).
    #[default]
    Exact,
    /// Within 2e-3 of full scale ([`variants::FAST_TOLERANCE`]): the fast
    /// variants may run.
    Fast,
}

impl Precision {
    /// The name in specs: `exact` or `fast`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Exact => "exact",
            Precision::Fast => "fast",
        }
    }

    /// The bound a result of this precision holds, in units of full scale.
    pub fn tolerance(self) -> f32 {
        match self {
            Precision::Exact => variants::EXACT_TOLERANCE,
            Precision::Fast => variants::FAST_TOLERANCE,
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "exact" => Ok(Precision::Exact),
            "fast" => Ok(Precision::Fast),
            _ => Err(Error::arg(format!(
                "unknown precision '{s}'; use exact or fast"
            ))),
        }
    }
}

/// Parameters of a bilateral filter (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BilateralParams {
    /// Spatial standard deviation, in pixels (> 0).
    pub sigma_s: f32,
    /// Range standard deviation, in units of full scale (> 0).
    pub sigma_r: f32,
    /// The window's radius; `None`: `ceil(2 sigma_s)`. At most [`MAX_RADIUS`].
    pub radius: Option<usize>,
    /// Border handling.
    pub border: Border,
    /// The accuracy asked for.
    pub precision: Precision,
}

/// One tap of the window: its offset and the log of its spatial weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tap {
    /// Column offset.
    pub dx: i32,
    /// Row offset.
    pub dy: i32,
    /// `-(dx² + dy²) / (2 sigma_s²)`, at least `-f32::MAX`.
    pub log_weight: f32,
}

impl BilateralParams {
    /// Replicate borders, the default radius, exact precision.
    pub fn new(sigma_s: f32, sigma_r: f32) -> Self {
        BilateralParams {
            sigma_s,
            sigma_r,
            radius: None,
            border: Border::Replicate,
            precision: Precision::Exact,
        }
    }

    /// Checks that both sigmas are finite and positive and that the radius
    /// (given, or `ceil(2 sigma_s)`) is at most [`MAX_RADIUS`].
    pub fn validate(&self) -> Result<()> {
        for (name, s) in [("sigma_s", self.sigma_s), ("sigma_r", self.sigma_r)] {
            if !s.is_finite() || s <= 0.0 {
                return Err(Error::arg(format!(
                    "bilateral {name} must be a finite number > 0, got {s}"
                )));
            }
        }
        let r = self.radius();
        if r > MAX_RADIUS {
            let how = match self.radius {
                Some(_) => "radius",
                None => "the default radius ceil(2 sigma_s)",
            };
            return Err(Error::arg(format!(
                "bilateral {how} = {r} exceeds the limit of {MAX_RADIUS}; \
                 give a smaller radius= for a larger sigma_s"
            )));
        }
        Ok(())
    }

    /// The window's radius: as given, else `ceil(2 sigma_s)` (saturating,
    /// so that [`BilateralParams::validate`] can refuse it).
    pub fn radius(&self) -> usize {
        match self.radius {
            Some(r) => r,
            None => (2.0 * f64::from(self.sigma_s)).ceil().min(1e9) as usize,
        }
    }

    /// The disk's taps, row by row from the top, centre included.
    pub fn taps(&self) -> Vec<Tap> {
        let r = self.radius() as i32;
        let ks = 1.0 / (2.0 * f64::from(self.sigma_s).powi(2));
        let mut taps = Vec::new();
        for dy in -r..=r {
            for dx in -r..=r {
                let d2 = dx * dx + dy * dy;
                if d2 <= r * r {
                    let lw = -(f64::from(d2) * ks);
                    taps.push(Tap {
                        dx,
                        dy,
                        log_weight: lw.max(-f64::from(f32::MAX)) as f32,
                    });
                }
            }
        }
        taps
    }

    /// `1 / (2 sigma_r²)` with `sigma_r` in sample units of a type of full
    /// scale `full` (at most `f32::MAX`, so `0 * k` is never NaN): the
    /// range weight is `exp(-d² k)` for integer samples, whose differences
    /// square exactly.
    pub fn range_coefficient(&self, full: f32) -> f32 {
        let s = f64::from(self.sigma_r) * f64::from(full);
        (1.0 / (2.0 * s * s)).min(f64::from(f32::MAX)) as f32
    }

    /// `1 / (sigma_r sqrt 2)`, the square root of
    /// [`BilateralParams::range_coefficient`]: f32 sample differences are
    /// multiplied by it before they are squared, so the range weight is
    /// `exp(-(d · scale)²)`. (The square of a difference of f32 samples
    /// overflows from 2^64, and the coefficient overflows or underflows for
    /// a `sigma_r` far from 1, which made their product `inf · 0`.) At most
    /// `f32::MAX`, so a zero difference scales to 0, never NaN.
    pub fn range_scale(&self, full: f32) -> f32 {
        let s = f64::from(self.sigma_r) * f64::from(full);
        (1.0 / (s * std::f64::consts::SQRT_2)).min(f64::from(f32::MAX)) as f32
    }
}

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "bilateral",
    sources: &[crate::cl_source!("bilateral/bilateral.cl")],
    variants: variants::VARIANTS,
    gpu_order: &[
        "fast_rgba",
        "fast_local",
        "fast",
        "rgba",
        "local",
        "direct",
    ],
    cpu_device_order: &["fast_rgba", "fast", "rgba", "direct", "fast_local", "local"],
    prefer: None,
    // A NaN or infinity reaches every output within the radius (its weight
    // is NaN, or its product with the weight is).
    spreads_nonfinite: true,
    // A weighted mean stays within its inputs' range.
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::BILATERAL],
    tune: &TUNE,
};

/// The dispatch key of a filter of `img`.
fn bilateral_shape<T: Sample>(img: &Image<T>, p: &BilateralParams) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE).with_params(OpParams::new(*p))
}

/// The report of a call that needed no filtering (radius 0: a copy).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_are_the_disk() {
        let p = BilateralParams::new(2.0, 0.1);
        assert_eq!(p.radius(), 4);
        let taps = p.taps();
        // Points of the integer lattice in a disk of radius 4: 49.
        assert_eq!(taps.len(), 49);
        let c = taps.iter().find(|t| t.dx == 0 && t.dy == 0).unwrap();
        assert_eq!(c.log_weight, 0.0);
        assert!(taps.iter().all(|t| t.dx * t.dx + t.dy * t.dy <= 16));
    }

    #[test]
    fn bad_parameters_are_errors() {
        for p in [
            BilateralParams::new(0.0, 0.1),
            BilateralParams::new(-1.0, 0.1),
            BilateralParams::new(f32::NAN, 0.1),
            BilateralParams::new(2.0, 0.0),
            BilateralParams::new(2.0, f32::INFINITY),
            BilateralParams::new(17.0, 0.1),
            BilateralParams::new(f32::MAX, 0.1),
            BilateralParams {
                radius: Some(MAX_RADIUS + 1),
                ..BilateralParams::new(2.0, 0.1)
            },
        ] {
            assert!(matches!(p.validate(), Err(Error::InvalidArgument(_))), "{p:?}");
        }
        let big = BilateralParams {
            radius: Some(MAX_RADIUS),
            ..BilateralParams::new(1e6, 1e-30)
        };
        assert!(big.validate().is_ok());
        assert!(big.range_coefficient(1.0).is_finite());
        assert!(big.range_scale(1.0).is_finite());
    }
}
