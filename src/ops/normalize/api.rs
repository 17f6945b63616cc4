//! `normalize`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::percentile::{self, Percentiles};
use super::*;
use crate::ops::histogram::HistogramExt;
use crate::ops::minmax::MinmaxExt;
use crate::ops::Dispatch;

/// `normalize` on an engine: `engine.normalize(..)` (in [`crate::prelude`]).
pub trait NormalizeExt: Dispatch {
    /// Normalizes `img` into a `U` image (see the module docs for the rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::NormalizeParams;
    /// let img = Image::<u16>::from_fn(4, 1, 1, |x, _, _| 1000 + 1000 * x as u16)?;
    /// let out: Image<u8> = Engine::cpu().normalize(&img, &NormalizeParams::default())?;
    /// assert_eq!(out.row(0), &[0, 85, 170, 255]);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn normalize<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        params: &NormalizeParams,
    ) -> Result<Image<U>> {
        self.normalize_report(img, params).map(|(i, _)| i)
    }

    /// [`NormalizeExt::normalize`], also reporting what ran: the `minmax` call
    /// (automatic range only) and the `normalize` call.
    fn normalize_report<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        params: &NormalizeParams,
    ) -> Result<(Image<U>, Vec<RunReport>)> {
        let mut reports = Vec::new();
        let k = if params.sub.is_none() && params.factor.is_none() {
            let (m, r) = self.minmax_report(img)?;
            reports.push(r);
            Coefficients::stretch(&m, T::TYPE, U::TYPE)?
        } else {
            Coefficients::explicit(params)?
        };
        let (out, r) = apply(self, img, &k)?;
        reports.push(r);
        Ok((out, reports))
    }

    /// Stretches the colour channels' percentiles `pc.low..pc.high` to
    /// `U`'s full range (see [`percentile`] for the definition and the
    /// accuracy); alpha is rescaled as by [`NormalizeExt::normalize`].
    fn normalize_percentiles<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        pc: &Percentiles,
    ) -> Result<Image<U>> {
        self.normalize_percentiles_report(img, pc).map(|(i, _)| i)
    }

    /// The colour channels' percentiles `pc.low` and `pc.high` of `img`,
    /// as [`percentile`] defines them (exact for u8 and u16, within one
    /// bin width for f32), and what ran: `minmax` (f32 only), `histogram`.
    fn percentile_range_report<T: Sample>(
        &self,
        img: &Image<T>,
        pc: &Percentiles,
    ) -> Result<((f32, f32), Vec<RunReport>)> {
        pc.validate()?;
        let mut reports = Vec::new();
        let colour = percentile::colour_channels(img.channels());
        let mut range = (0.0, 0.0);
        if T::TYPE == SampleType::F32 {
            let (m, r) = self.minmax_report(img)?;
            reports.push(r);
            range = (m.min_of(colour), m.max_of(colour));
        }
        let found = match percentile::histogram_params(T::TYPE, range)? {
            Some(hp) => {
                let (h, r) = self.histogram_report(img, &hp)?;
                reports.push(r);
                percentile::from_counts(&h, &hp, colour, T::TYPE, pc)?
            }
            None => range,
        };
        Ok((found, reports))
    }

    /// [`NormalizeExt::normalize_percentiles`], also reporting what ran:
    /// `minmax` (f32 only), `histogram` and `normalize`.
    fn normalize_percentiles_report<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        pc: &Percentiles,
    ) -> Result<(Image<U>, Vec<RunReport>)> {
        let ((lo, hi), mut reports) = self.percentile_range_report(img, pc)?;
        let k = Coefficients::stretch(&percentile::span(img.channels(), lo, hi), T::TYPE, U::TYPE)?;
        let (out, r) = apply(self, img, &k)?;
        reports.push(r);
        Ok((out, reports))
    }
}

/// The normalize kernel (or the CPU path) with coefficients `k`.
fn apply<D: Dispatch + ?Sized, T: Sample, U: Sample>(
    d: &D,
    img: &Image<T>,
    k: &Coefficients,
) -> Result<(Image<U>, RunReport)> {
    let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
    crate::ops::dispatch(
        d,
        &SPEC,
        &shape,
        |dev: &Dev, spec| device::run(d.programs(), dev, spec, img, k),
        || cpu::normalize(img, k),
    )
}

impl<D: Dispatch + ?Sized> NormalizeExt for D {}
