//! `transpose`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `transpose` on an engine: `engine.transpose(..)` (in [`crate::prelude`]).
pub trait TransposeExt: Dispatch {
    /// Transposes an image: the result is `height x width`.
    fn transpose<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>> {
        self.transpose_report(img).map(|(i, _)| i)
    }

    /// [`TransposeExt::transpose`], also saying which variant ran and how long it took.
    fn transpose_report<T: Sample>(&self, img: &Image<T>) -> Result<(Image<T>, RunReport)> {
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img),
            || cpu::transpose(img),
        )
    }
}

impl<D: Dispatch + ?Sized> TransposeExt for D {}
