//! `black`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `black` on an engine: `engine.black(..)` (in [`crate::prelude`]).
pub trait BlackExt: Dispatch {
    /// Subtracts the black level (see the module docs for the rules).
    fn black<T: Sample>(&self, img: &Image<T>, p: &BlackParams) -> Result<Image<T>> {
        self.black_report(img, p).map(|(i, _)| i)
    }

    /// [`BlackExt::black`], also reporting what ran.
    fn black_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &BlackParams,
    ) -> Result<(Image<T>, RunReport)> {
        let k = p.factor(T::TYPE)?;
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, p.black, k),
            || cpu::black(img, p),
        )
    }
}

impl<D: Dispatch + ?Sized> BlackExt for D {}
