//! `stats`' entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `stats` on an engine: `engine.stats(..)` (in [`crate::prelude`]).
pub trait StatsExt: Dispatch {
    /// Per-channel sum, mean, standard deviation, minimum and maximum of
    /// `img` (see the module docs for the accuracy and the NaN rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// let img = Image::<f32>::from_fn(2, 2, 1, |x, y, _| (x + 2 * y) as f32)?;
    /// let s = Engine::cpu().stats(&img)?;
    /// assert_eq!((s.count, s.mean[0], s.min[0], s.max[0]), (4, 1.5, 0.0, 3.0));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn stats<T: Sample>(&self, img: &Image<T>) -> Result<Stats> {
        self.stats_report(img).map(|(s, _)| s)
    }

    /// [`StatsExt::stats`], also saying which variant ran and how long it took.
    fn stats_report<T: Sample>(&self, img: &Image<T>) -> Result<(Stats, RunReport)> {
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img),
            || Ok(cpu::stats(img)),
        )
    }
}

impl<D: Dispatch + ?Sized> StatsExt for D {}
