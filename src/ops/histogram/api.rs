//! `histogram`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::{Dispatch, OpParams};

/// `histogram` on an engine: `engine.histogram(..)` (in [`crate::prelude`]).
pub trait HistogramExt: Dispatch {
    /// Per-channel counts of `img` (see the module docs for the bins).
    /// Bad parameters (no bins, too many, an empty or non-finite range)
    /// are [`Error::InvalidArgument`].
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::histogram::HistogramParams;
    /// let img = Image::<u8>::from_fn(4, 4, 1, |x, _, _| if x < 2 { 0 } else { 255 })?;
    /// let p = HistogramParams { bins: 2, lo: 0.0, hi: 255.0 };
    /// let h = Engine::cpu().histogram(&img, &p)?;
    /// assert_eq!(h.counts[0], [8, 8]);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn histogram<T: Sample>(&self, img: &Image<T>, p: &HistogramParams) -> Result<Histogram> {
        self.histogram_report(img, p).map(|(h, _)| h)
    }

    /// [`HistogramExt::histogram`], also saying which variant ran and how long it took.
    fn histogram_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &HistogramParams,
    ) -> Result<(Histogram, RunReport)> {
        let b = p.binning()?;
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
            .with_params(OpParams::new(*p));
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, &b),
            || Ok(cpu::histogram(img, &b)),
        )
    }
}

impl<D: Dispatch + ?Sized> HistogramExt for D {}
