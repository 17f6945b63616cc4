//! `normalize`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::minmax::MinmaxExt;
use crate::ops::Dispatch;

/// `normalize` on an engine: `engine.normalize(..)` (in [`crate::prelude`]).
pub trait NormalizeExt: Dispatch {
    /// Normalizes `img` into a `U` image (see the module docs for the rules).
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
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
        let (out, r) = crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, &k),
            || cpu::normalize(img, &k),
        )?;
        reports.push(r);
        Ok((out, reports))
    }
}

impl<D: Dispatch + ?Sized> NormalizeExt for D {}
