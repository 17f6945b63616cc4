//! `minmax`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `minmax` on an engine: `engine.minmax(..)` (in [`crate::prelude`]).
pub trait MinmaxExt: Dispatch {
    /// Per-channel minimum and maximum of an image.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// let img = Image::<u16>::from_fn(5, 4, 3, |x, y, c| (x + 10 * y + 100 * c) as u16)?;
    /// let m = Engine::cpu().minmax(&img)?;
    /// assert_eq!((m.min[0], m.max[0]), (0.0, 34.0));
    /// assert_eq!(m.max[2], 234.0);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
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
