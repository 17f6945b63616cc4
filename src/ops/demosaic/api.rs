//! `demosaic`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `demosaic` on an engine: `engine.demosaic(..)` (in [`crate::prelude`]).
pub trait DemosaicExt: Dispatch {
    /// Demosaics `raw` into an RGB or RGBA image of sample type `U` (see
    /// the module docs for the levelling and the rounding).
    fn demosaic<U: Sample>(&self, raw: &Raw<'_>, p: &DemosaicParams) -> Result<Image<U>> {
        self.demosaic_report(raw, p).map(|(i, _)| i)
    }

    /// [`DemosaicExt::demosaic`], also saying which variant ran and how long it took.
    fn demosaic_report<U: Sample>(
        &self,
        raw: &Raw<'_>,
        p: &DemosaicParams,
    ) -> Result<(Image<U>, RunReport)> {
        raw.validate()?;
        let lv = p.levels(raw, U::TYPE)?;
        let (w, h) = raw.size();
        let shape = Shape::new(w, h, 1, raw.sample()).with_params(OpParams::new(*p));
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run::<U>(self.programs(), dev, spec, raw, p, &lv),
            || cpu::demosaic::<U>(raw, p, &lv),
        )
    }
}

impl<D: Dispatch + ?Sized> DemosaicExt for D {}
