//! `transpose`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `transpose` on an engine: `engine.transpose(..)` (in [`crate::prelude`]).
pub trait TransposeExt: Dispatch {
    /// Transposes an image: the result is `height x width`.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// let img = Image::<u8>::from_fn(3, 2, 1, |x, y, _| (10 * y + x) as u8)?;
    /// let t = Engine::cpu().transpose(&img)?;
    /// assert_eq!((t.width(), t.height()), (2, 3));
    /// assert_eq!(t.get(1, 2, 0), img.get(2, 1, 0));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
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
