//! `minmax`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `minmax` on an engine: `engine.minmax(..)` (in [`crate::prelude`]).
pub trait MinmaxExt: Dispatch {
    /// Per-channel minimum and maximum of an image.
    fn minmax<T: Sample>(&self, img: &Image<T>) -> Result<MinMax> {
        self.minmax_report(img).map(|(m, _)| m)
    }

    /// [`MinmaxExt::minmax`], also saying which variant ran and how long it took.
    fn minmax_report<T: Sample>(&self, img: &Image<T>) -> Result<(MinMax, RunReport)> {
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img),
            || Ok(cpu::minmax(img)),
        )
    }
}

impl<D: Dispatch + ?Sized> MinmaxExt for D {}
