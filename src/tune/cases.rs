//! The tuner's only per-operation code: the input of a key, the host-in,
//! host-out call, and the comparison with the reference. Everything else
//! walks the variant tables generically.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::gaussian::GaussianParams;
use crate::ops::minmax::MinMax;
use crate::ops::normalize::{Coefficients, NormalizeParams};
use crate::ops::{self, OpParams, OpSpec, RunReport, Shape};

/// One request to gate and time.
pub(crate) struct Case<T: Sample> {
    /// The operation.
    pub op: &'static OpSpec,
    /// A pseudo-random image spanning the type's range.
    pub img: Image<T>,
    /// Gaussian parameters (used by `gaussian` only).
    pub gauss: GaussianParams,
    /// Explicit normalize coefficients, so `normalize` runs one kernel
    /// (the automatic range would time `minmax` too).
    norm: NormalizeParams,
}

/// What a call produced.
pub(crate) enum Output<T: Sample> {
    Image(Image<T>),
    Extremes(MinMax),
}

/// What the reference says, with the rounding allowance of integer outputs
/// against an unrounded reference.
pub(crate) enum Expected {
    Image(Image<f32>, f64),
    Extremes(MinMax),
}

fn as_f32<T: Sample>(img: &Image<T>) -> Result<Image<f32>> {
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        img.get(x, y, c).to_f32()
    })
}

impl<T: Sample> Case<T> {
    /// The request `op` at `width x height x channels`, gaussian at `sigma`.
    pub fn new(
        op: &'static OpSpec,
        width: usize,
        height: usize,
        channels: usize,
        sigma: f32,
    ) -> Result<Self> {
        let gauss = GaussianParams::new(sigma);
        if op.name == ops::gaussian::SPEC.name {
            gauss.validate()?;
            if sigma <= 0.0 {
                return Err(Error::arg("tuning gaussian needs a sigma > 0"));
            }
        }
        let full = T::TYPE.full_scale();
        Ok(Case {
            op,
            img: crate::bench::test_image::<T>(width, height, channels)?,
            gauss,
            norm: NormalizeParams {
                sub: Some(0.25 * full),
                factor: Some(1.5),
            },
        })
    }

    /// The tolerance the CPU path is held to: the recursive variants' bound
    /// for `gaussian` (it is recursive too), exact elsewhere.
    pub fn cpu_tolerance(&self) -> f32 {
        if self.op.name == ops::gaussian::SPEC.name {
            ops::gaussian::variants::IIR_TOLERANCE
        } else {
            0.0
        }
    }

    /// The shape the engine's dispatch sees for this request.
    pub fn shape(&self) -> Shape {
        let s = Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        );
        if self.op.name == ops::gaussian::SPEC.name {
            s.with_params(OpParams::Gaussian(self.gauss))
        } else {
            s
        }
    }

    /// The reference result.
    pub fn reference(&self) -> Result<Expected> {
        let img = &self.img;
        Ok(match self.op.name {
            "transpose" => {
                Expected::Image(as_f32(&ops::transpose::reference::transpose(img)?)?, 0.0)
            }
            "minmax" => Expected::Extremes(ops::minmax::reference::minmax(img)),
            "normalize" => {
                let k = Coefficients::explicit(&self.norm)?;
                let out = ops::normalize::reference::normalize::<T, T>(img, &k)?;
                Expected::Image(as_f32(&out)?, 0.0)
            }
            "gaussian" => {
                let rounding = if T::TYPE == SampleType::F32 { 0.0 } else { 0.5 };
                Expected::Image(self.gaussian_reference()?, rounding)
            }
            other => return Err(no_case(other)),
        })
    }

    /// The reference blur as two row passes: rows, then the columns as the
    /// rows of the transposed image. The reference's own column pass reads
    /// with a stride of a whole row per tap, which takes minutes at
    /// 8192x8192; this takes seconds. The f32 intermediate is far below
    /// every tolerance (1e-7 against 1e-5).
    fn gaussian_reference(&self) -> Result<Image<f32>> {
        use ops::gaussian::reference::gaussian;
        use ops::transpose::reference::transpose;
        let p = self.gauss;
        let rows = gaussian(&self.img, &GaussianParams { sigma_y: 0.0, ..p })?;
        let cols = gaussian(
            &transpose(&rows)?,
            &GaussianParams {
                sigma_x: p.sigma_y,
                sigma_y: 0.0,
                ..p
            },
        )?;
        transpose(&cols)
    }

    /// The host-in, host-out call on `engine` (which forces the variant).
    pub fn run(&self, engine: &Engine) -> Result<(Output<T>, RunReport)> {
        let img = &self.img;
        Ok(match self.op.name {
            "transpose" => {
                let (o, r) = engine.transpose_report(img)?;
                (Output::Image(o), r)
            }
            "minmax" => {
                let (m, r) = engine.minmax_report(img)?;
                (Output::Extremes(m), r)
            }
            "normalize" => {
                let (o, mut r) = engine.normalize_report::<T, T>(img, &self.norm)?;
                let r = r
                    .pop()
                    .ok_or_else(|| Error::arg("normalize reported no call"))?;
                (Output::Image(o), r)
            }
            "gaussian" => {
                let (o, r) = engine.gaussian_report(img, &self.gauss)?;
                (Output::Image(o), r)
            }
            other => return Err(no_case(other)),
        })
    }

    /// `Err(where and by how much)` when `got` is further from `want` than
    /// `tolerance` (in units of the type's full scale).
    pub fn check(
        &self,
        got: &Output<T>,
        want: &Expected,
        tolerance: f32,
    ) -> std::result::Result<(), String> {
        let full = T::TYPE.full_scale() as f64;
        let limit = tolerance as f64 * full;
        match (got, want) {
            (Output::Image(g), Expected::Image(w, rounding)) => {
                let (gs, ws) = (
                    (g.width(), g.height(), g.channels()),
                    (w.width(), w.height(), w.channels()),
                );
                if gs != ws {
                    return Err(format!("output shape {gs:?}, reference {ws:?}"));
                }
                for y in 0..g.height() {
                    for (i, (a, b)) in g.row(y).iter().zip(w.row(y)).enumerate() {
                        let (a, b) = (a.to_f32() as f64, *b as f64);
                        let d = (a - b).abs();
                        // NaN differences fail too.
                        if d.is_nan() || d > limit + rounding {
                            let c = g.channels();
                            return Err(format!(
                                "wrong result at pixel ({}, {y}) channel {}: {a}, reference {b} \
                                 (tolerance {tolerance} of full scale)",
                                i / c,
                                i % c
                            ));
                        }
                    }
                }
                Ok(())
            }
            (Output::Extremes(g), Expected::Extremes(w)) => {
                for c in 0..w.channels {
                    for (what, a, b) in [("min", g.min[c], w.min[c]), ("max", g.max[c], w.max[c])] {
                        let d = (a as f64 - b as f64).abs();
                        if !(d <= limit || a == b) {
                            return Err(format!("wrong {what} of channel {c}: {a}, reference {b}"));
                        }
                    }
                }
                Ok(())
            }
            _ => Err("the call returned another kind of result than the reference".into()),
        }
    }
}

/// An operation added to [`ops::OPS`] without a case here.
fn no_case(op: &str) -> Error {
    Error::Unsupported {
        op: op.into(),
        variant: "-".into(),
        reason:
            "the tuner has no input generator for this operation (add one in src/tune/cases.rs)"
                .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_pass_reference_equals_the_reference() {
        for (w, h, c, sx, sy) in [
            (37, 23, 1, 2.0, 2.0),
            (16, 40, 3, 1.5, 4.0),
            (9, 9, 4, 3.0, 0.5),
        ] {
            let mut case = Case::<u16>::new(&ops::gaussian::SPEC, w, h, c, sx).unwrap();
            case.gauss.sigma_y = sy;
            let fast = case.gaussian_reference().unwrap();
            let slow = ops::gaussian::reference::gaussian(&case.img, &case.gauss).unwrap();
            for y in 0..h {
                for (a, b) in fast.row(y).iter().zip(slow.row(y)) {
                    assert!((a - b).abs() <= 1e-6 * 65535.0, "{w}x{h}x{c}: {a} vs {b}");
                }
            }
        }
    }
}
