//! `median`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::{Dispatch, OpParams};

/// `median` on an engine: `engine.median(..)` (in [`crate::prelude`]).
pub trait MedianExt: Dispatch {
    /// The median of each pixel's window (see [`crate::ops::median`]).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::median::MedianParams;
    /// let img = Image::<u8>::from_fn(5, 5, 1, |x, y, _| if (x, y) == (2, 2) { 255 } else { 10 })?;
    /// let out = Engine::cpu().median(&img, &MedianParams::new(1)?)?;
    /// assert_eq!(out.get(2, 2, 0), 10); // the outlier is gone
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn median<T: Sample>(&self, img: &Image<T>, params: &MedianParams) -> Result<Image<T>> {
        self.median_report(img, params).map(|(i, _)| i)
    }

    /// [`MedianExt::median`], also saying which variant ran and how long it took.
    fn median_report<T: Sample>(
        &self,
        img: &Image<T>,
        params: &MedianParams,
    ) -> Result<(Image<T>, RunReport)> {
        params.validate()?;
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
            .with_params(OpParams::new(*params));
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, params),
            || cpu::median(img, params),
        )
    }
}

impl<D: Dispatch + ?Sized> MedianExt for D {}
