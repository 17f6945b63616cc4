//! The tuner's only per-operation code: the input of a key, the host-in,
//! host-out call, and the comparison with the reference. Everything else
//! walks the variant tables generically.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::colormap::ColormapParams;
use crate::ops::demosaic::{DemosaicParams, Raw};
use crate::ops::gaussian::GaussianParams;
use crate::ops::minmax::MinMax;
use crate::ops::normalize::{Coefficients, NormalizeParams};
use crate::ops::{self, OpParams, OpSpec, RunReport, Shape};
use crate::prelude::*;

/// One request to gate and time.
pub(crate) struct Case<T: Sample> {
    /// The operation.
    pub op: &'static OpSpec,
    /// A pseudo-random image spanning the type's range.
    pub img: Image<T>,
    /// Gaussian parameters (used by `gaussian` only).
    pub gauss: GaussianParams,
    /// Demosaic parameters, for `demosaic` (whose `img` is the 1-channel
    /// RGGB frame, demosaiced into `T` with `channels` of them).
    pub demosaic: Option<DemosaicParams>,
    /// Colormap parameters with an explicit range, for `colormap` (whose
    /// `img` is 1-channel, mapped into `T` with `channels` of them; the
    /// automatic range would time `minmax` too).
    pub colormap: Option<ColormapParams>,
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
    /// The request `op` at `width x height x channels` with `params` (a
    /// sigma for `gaussian`, a method and output channels for `demosaic`).
    pub fn new(
        op: &'static OpSpec,
        width: usize,
        height: usize,
        channels: usize,
        params: OpParams,
    ) -> Result<Self> {
        let mut gauss = GaussianParams::new(1.0);
        let mut demosaic = None;
        let mut colormap = None;
        let mut img_channels = channels;
        let full = T::TYPE.full_scale();
        match (op.name, params) {
            ("gaussian", OpParams::Gaussian(p)) => {
                p.validate()?;
                if p.sigma_x <= 0.0 && p.sigma_y <= 0.0 {
                    return Err(Error::arg("tuning gaussian needs a sigma > 0"));
                }
                gauss = p;
            }
            ("demosaic", OpParams::Demosaic(p)) => {
                if T::TYPE == SampleType::F32 {
                    return Err(Error::arg(
                        "demosaic reads u8 or u16 Bayer frames: tune it with --type u8 or --type u16",
                    ));
                }
                ops::demosaic::check_cfa_size(width, height)?;
                img_channels = 1;
                demosaic = Some(p);
            }
            ("colormap", OpParams::Colormap(p)) => {
                let p = ColormapParams {
                    min: Some(0.1 * full),
                    max: Some(0.9 * full),
                    ..p
                };
                p.validate()?;
                img_channels = 1;
                colormap = Some(p);
            }
            ("gaussian" | "demosaic" | "colormap", _) => {
                return Err(Error::arg(format!(
                    "tuning {} needs its parameters",
                    op.name
                )))
            }
            _ => {}
        }
        Ok(Case {
            op,
            img: crate::bench::test_image::<T>(width, height, img_channels)?,
            gauss,
            demosaic,
            colormap,
            norm: NormalizeParams {
                sub: Some(0.25 * full),
                factor: Some(1.5),
            },
        })
    }

    /// The tolerance the CPU path is held to: the recursive variants' bound
    /// for `gaussian` (it is recursive too), the kernels' float-ordering
    /// bound for `demosaic` (it sums in its own order too), the f32 bound
    /// for `colormap` (its reference is f64), exact elsewhere.
    pub fn cpu_tolerance(&self) -> f32 {
        match self.op.name {
            "gaussian" => ops::gaussian::variants::IIR_TOLERANCE,
            "demosaic" => ops::demosaic::variants::CPU_TOLERANCE,
            "colormap" => ops::colormap::variants::TOLERANCE,
            _ => 0.0,
        }
    }

    /// The demosaic input frame and parameters.
    fn raw(&self) -> Result<(Raw<'_>, DemosaicParams)> {
        let p = self
            .demosaic
            .ok_or_else(|| Error::arg("not a demosaic case"))?;
        let any = &self.img as &dyn std::any::Any;
        let raw = if let Some(i) = any.downcast_ref::<Image<u8>>() {
            Raw::U8(i)
        } else if let Some(i) = any.downcast_ref::<Image<u16>>() {
            Raw::U16(i)
        } else {
            return Err(Error::arg("demosaic reads u8 or u16 Bayer frames"));
        };
        Ok((raw, p))
    }

    /// The colormap parameters (explicit range) and that range.
    fn colormap(&self) -> Result<(ColormapParams, (f32, f32))> {
        let p = self
            .colormap
            .ok_or_else(|| Error::arg("not a colormap case"))?;
        Ok((p, p.range(None)?))
    }

    /// The shape the engine's dispatch sees for this request.
    pub fn shape(&self) -> Shape {
        let s = Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        );
        match (self.op.name, self.demosaic, self.colormap) {
            ("gaussian", _, _) => s.with_params(OpParams::Gaussian(self.gauss)),
            (_, Some(p), _) => s.with_params(OpParams::Demosaic(p)),
            (_, _, Some(p)) => s.with_params(OpParams::Colormap(p)),
            _ => s,
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
            "demosaic" => {
                // The unrounded f32 reference at T's full scale; integer
                // outputs saturate, and may round either way of it.
                let (raw, p) = self.raw()?;
                let lv = p.levels(&raw, SampleType::F32)?;
                let mut out = ops::demosaic::reference::demosaic::<f32>(&raw, &p, &lv)?;
                let full = T::TYPE.full_scale();
                let integer = T::TYPE != SampleType::F32;
                for y in 0..out.height() {
                    for v in out.row_mut(y) {
                        *v *= full;
                        if integer {
                            *v = v.clamp(0.0, full);
                        }
                    }
                }
                let rounding = if integer { 0.5 } else { 0.0 };
                Expected::Image(out, rounding)
            }
            "colormap" => {
                // The unrounded f64 colours (0..1, as f32) at T's full scale.
                let (p, range) = self.colormap()?;
                let mut out = ops::colormap::reference::colormap::<T, f32>(img, &p, range)?;
                let full = T::TYPE.full_scale();
                for y in 0..out.height() {
                    for v in out.row_mut(y) {
                        *v *= full;
                    }
                }
                let rounding = if T::TYPE == SampleType::F32 { 0.0 } else { 0.5 };
                Expected::Image(out, rounding)
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
            "demosaic" => {
                let (raw, p) = self.raw()?;
                let (o, r) = engine.demosaic_report::<T>(&raw, &p)?;
                (Output::Image(o), r)
            }
            "colormap" => {
                let (p, _) = self.colormap()?;
                let (o, r) = engine.colormap_report::<T, T>(img, &p)?;
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
            let p = OpParams::Gaussian(GaussianParams::new(sx));
            let mut case = Case::<u16>::new(&ops::gaussian::SPEC, w, h, c, p).unwrap();
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
