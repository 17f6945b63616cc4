//! `bilateral`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `bilateral` on an engine: `engine.bilateral(..)` (in [`crate::prelude`]).
pub trait BilateralExt: Dispatch {
    /// Filters `img` (see the module docs of [`crate::ops::bilateral`]); the
    /// result has the input's size, channels and sample type. Bad
    /// parameters are [`Error::InvalidArgument`].
    ///
    /// A NaN or infinity reaches every output within the radius, so an f32
    /// `img` that holds some is refused with [`Error::NonFinite`], or
    /// repaired first, as the engine's [`Dispatch::nonfinite`] policy says.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::bilateral::BilateralParams;
    /// // A step edge: the bilateral filter keeps it where a blur would not.
    /// let img = Image::<u16>::from_fn(12, 5, 1, |x, _, _| if x < 6 { 1000 } else { 60000 })?;
    /// let out = Engine::cpu().bilateral(&img, &BilateralParams::new(2.0, 0.05))?;
    /// assert_eq!((out.get(5, 2, 0), out.get(6, 2, 0)), (1000, 60000));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn bilateral<T: Sample>(&self, img: &Image<T>, p: &BilateralParams) -> Result<Image<T>> {
        self.bilateral_report(img, p).map(|(i, _)| i)
    }

    /// [`BilateralExt::bilateral`], also saying which variant ran and how
    /// long it took.
    fn bilateral_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &BilateralParams,
    ) -> Result<(Image<T>, RunReport)> {
        p.validate()?;
        if p.radius() == 0 {
            // The centre alone, with weight 1: a copy.
            let start = std::time::Instant::now();
            return Ok((img.clone(), copy_report(start)));
        }
        let img = &*crate::ops::guard_nonfinite(self, &SPEC, img)?;
        crate::ops::dispatch(
            self,
            &SPEC,
            &bilateral_shape(img, p),
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, p),
            || cpu::bilateral(img, p),
        )
    }
}

impl<D: Dispatch + ?Sized> BilateralExt for D {}
