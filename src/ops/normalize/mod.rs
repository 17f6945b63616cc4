//! `normalize`: `out = (in - sub) * factor` per channel, converted to the
//! output type with round-half-to-even and saturation (`convert_T_sat_rte`).
//!
//! With no explicit `sub`/`factor`, the colour channels' joint min..max
//! (from `minmax`) is stretched to the output's full range (255, 65535 or
//! 1.0), as OpenCV's `NORM_MINMAX` does; a constant image maps to 0. The
//! alpha channel of 4-channel images is only rescaled between the types'
//! full ranges, so opaque stays opaque.
//!
//! [`NormalizeExt::normalize_percentiles`] (the stage's `low=P%:high=Q%`)
//! stretches percentiles found through `histogram` instead: [`percentile`]
//! defines them and states their accuracy.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod percentile;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::{num, Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{minmax::MinMax, OpSpec, RunReport, Shape};
pub use api::NormalizeExt;
pub use percentile::Percentiles;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "normalize",
    sources: &[crate::cl_source!("normalize/normalize.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["pixel", "x4"],
    cpu_device_order: &["pixel", "x4"],
    prefer: None,
    // Sample by sample; the automatic range ignores NaN and refuses infinities.
    spreads_nonfinite: false,
    overflows: true,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::NORMALIZE, &stage::CONVERT],
    tune: &TUNE,
};

/// What to normalize by. Both `None`: stretch min..max to the full range.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NormalizeParams {
    /// Subtracted first (default 0 when only `factor` is given).
    pub sub: Option<f32>,
    /// Multiplied second (default 1 when only `sub` is given).
    pub factor: Option<f32>,
}

/// The per-channel `sub` and `factor` actually applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coefficients {
    /// Subtracted, per channel.
    pub sub: [f32; 4],
    /// Multiplied, per channel.
    pub factor: [f32; 4],
}

impl Coefficients {
    /// Coefficients from explicit parameters (no image statistics needed).
    pub fn explicit(p: &NormalizeParams) -> Result<Self> {
        let sub = p.sub.unwrap_or(0.0);
        let factor = p.factor.unwrap_or(1.0);
        if !sub.is_finite() || !factor.is_finite() {
            return Err(Error::arg(format!(
                "normalize needs finite sub and factor, got sub={sub} factor={factor}"
            )));
        }
        Ok(Coefficients {
            sub: [sub; 4],
            factor: [factor; 4],
        })
    }

    /// Coefficients that stretch the colour channels' min..max to `out`'s full range.
    pub fn stretch(m: &MinMax, input: SampleType, out: SampleType) -> Result<Self> {
        let colour = if m.channels == 4 { 3 } else { m.channels };
        let (lo, hi) = (m.min_of(colour), m.max_of(colour));
        if !lo.is_finite() || !hi.is_finite() {
            return Err(Error::InvalidInput(format!(
                "cannot stretch the range {}..{} (the image holds infinities or only NaN); \
                 give sub and factor explicitly",
                num(lo),
                num(hi)
            )));
        }
        let full = out.full_scale() as f64;
        let span = hi as f64 - lo as f64;
        // The kernels compute `(x - lo) * f` in f32: both steps must stay finite.
        if span > f32::MAX as f64 {
            return Err(Error::InvalidInput(format!(
                "the range {}..{} is wider than f32 arithmetic holds; give sub and factor explicitly",
                num(lo),
                num(hi)
            )));
        }
        let mut f = if span > 0.0 {
            (full / span) as f32
        } else {
            0.0
        };
        if !f.is_finite() {
            return Err(Error::InvalidInput(format!(
                "the range {}..{} is too narrow to stretch in f32; give sub and factor explicitly",
                num(lo),
                num(hi)
            )));
        }
        // Rounding `f` to f32 can push the maximum one step above full scale
        // (1.0000001 for f32 output); step down until the maximum maps inside.
        // x - lo <= hi - lo and the product is monotonic, so every sample does.
        while f > 0.0 && (hi - lo) * f > full as f32 {
            f = f.next_down();
        }
        let mut k = Coefficients {
            sub: [lo; 4],
            factor: [f; 4],
        };
        if m.channels == 4 {
            k.sub[3] = 0.0;
            k.factor[3] = (full / input.full_scale() as f64) as f32;
        }
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gray(v: &[f32]) -> Image<f32> {
        Image::from_vec(v.len(), 1, 1, v.to_vec()).unwrap()
    }

    #[test]
    fn stretch_edge_cases_stay_in_range_or_are_errors() {
        let e = crate::Engine::cpu();
        let p = NormalizeParams::default();
        // The maximum must land on full scale exactly, never one step above.
        for (lo, hi) in [
            (0.1f32, 0.7f32),
            (-3.3, 12.9),
            (1e-3, 1e-3 + 1e-6),
            (0.0, 3.0),
        ] {
            let out: Image<f32> = e.normalize(&gray(&[lo, hi]), &p).unwrap();
            assert_eq!(out.row(0)[0], 0.0);
            assert!(out.row(0)[1] <= 1.0 && out.row(0)[1] > 0.999, "{lo}..{hi}");
        }
        // Too narrow (factor overflows) and too wide (x - lo overflows): typed errors.
        assert!(matches!(
            e.normalize::<f32, f32>(&gray(&[0.0, 1e-45]), &p),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            e.normalize::<f32, f32>(&gray(&[-3e38, 3e38]), &p),
            Err(Error::InvalidInput(_))
        ));
        // A constant image maps to 0, as OpenCV's NORM_MINMAX does.
        let out: Image<u8> = e.normalize(&gray(&[5.0, 5.0]), &p).unwrap();
        assert_eq!(out.row(0), &[0, 0]);
    }
}
