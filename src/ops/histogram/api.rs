//! `histogram`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::{Dispatch, OpParams};

/// `histogram` on an engine: `engine.histogram(..)` (in [`crate::prelude`]).
pub trait HistogramExt: Dispatch {
    /// Per-channel counts of `img` (see the module docs for the bins).
    /// Bad parameters (no bins, too many, an empty or non-finite range)
    /// are [`Error::InvalidArgument`].
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
