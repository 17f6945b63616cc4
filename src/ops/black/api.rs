//! `black`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `black` on an engine: `engine.black(..)` (in [`crate::prelude`]).
pub trait BlackExt: Dispatch {
    /// Subtracts the black level (see the module docs for the rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::black::BlackParams;
    /// let img = Image::<u16>::from_fn(3, 1, 1, |x, _, _| 60 + 10 * x as u16)?;
    /// let out = Engine::cpu().black(&img, &BlackParams { black: 64.0, white: None })?;
    /// assert_eq!(out.row(0), &[0, 6, 16]);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn black<T: Sample>(&self, img: &Image<T>, p: &BlackParams) -> Result<Image<T>> {
        self.black_report(img, p).map(|(i, _)| i)
    }

    /// [`BlackExt::black`], also reporting what ran.
    fn black_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &BlackParams,
    ) -> Result<(Image<T>, RunReport)> {
        crate::ops::pixel_stage::dispatch(self, p, img, || cpu::black(img, p))
    }
}

impl<D: Dispatch + ?Sized> BlackExt for D {}
