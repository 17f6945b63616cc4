//! `demosaic`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `demosaic` on an engine: `engine.demosaic(..)` (in [`crate::prelude`]).
pub trait DemosaicExt: Dispatch {
    /// Demosaics `raw` into an RGB or RGBA image of sample type `U` (see
    /// the module docs for the levelling and the rounding).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::demosaic::{DemosaicParams, Raw};
    /// let bayer = Image::<u8>::from_fn(8, 6, 1, |_, _, _| 128)?;
    /// let rgb: Image<u8> = Engine::cpu().demosaic(&Raw::U8(&bayer), &DemosaicParams::default())?;
    /// assert_eq!((rgb.width(), rgb.height(), rgb.channels()), (8, 6, 3));
    /// assert!(rgb.rows().flatten().all(|&v| v == 128)); // flat gray stays gray
    /// # Ok::<(), clfilter::Error>(())
    /// ```
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
