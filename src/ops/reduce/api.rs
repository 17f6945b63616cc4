//! `reduce`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::{Dispatch, OpParams};

/// `reduce` on an engine: `engine.reduce(..)` (in [`crate::prelude`]).
pub trait ReduceExt: Dispatch {
    /// `img` reduced along `p.axis` by `p.op`, per channel, as f32 in the
    /// input's units (see the module docs for the accuracy).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::reduce::{Axis, ReduceParams, Reduction};
    /// let img = Image::<u8>::from_fn(4, 2, 1, |x, y, _| (x + 4 * y) as u8)?;
    /// let p = ReduceParams { axis: Axis::X, op: Reduction::Sum };
    /// let rows = Engine::cpu().reduce(&img, &p)?;
    /// assert_eq!((rows.width(), rows.height()), (1, 2));
    /// assert_eq!(rows.row(1), &[22.0]); // 4 + 5 + 6 + 7
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn reduce<T: Sample>(&self, img: &Image<T>, p: &ReduceParams) -> Result<Image<f32>> {
        self.reduce_report(img, p).map(|(i, _)| i)
    }

    /// [`ReduceExt::reduce`], also saying which variant ran and how long it took.
    fn reduce_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &ReduceParams,
    ) -> Result<(Image<f32>, RunReport)> {
        let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
            .with_params(OpParams::new(*p));
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, p),
            || cpu::reduce(img, p),
        )
    }
}

impl<D: Dispatch + ?Sized> ReduceExt for D {}
