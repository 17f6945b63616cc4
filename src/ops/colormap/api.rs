//! `colormap`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::minmax::MinmaxExt;
use crate::ops::Dispatch;

/// `colormap` on an engine: `engine.colormap(..)` (in [`crate::prelude`]).
pub trait ColormapExt: Dispatch {
    /// Maps the 1-channel `img` to an RGB or RGBA image of type `U` through
    /// `p.map` (see the module docs for the mapping and its edge cases).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::{ColorMap, ColormapParams};
    /// let ramp = Image::<f32>::from_fn(16, 1, 1, |x, _, _| x as f32)?;
    /// let rgb: Image<u8> = Engine::cpu().colormap(&ramp, &ColormapParams::new(ColorMap::Gray))?;
    /// assert_eq!(rgb.channels(), 3);
    /// assert_eq!((rgb.get(0, 0, 0), rgb.get(15, 0, 0)), (0, 255)); // min..max of the data
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn colormap<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        p: &ColormapParams,
    ) -> Result<Image<U>> {
        self.colormap_report(img, p).map(|(i, _)| i)
    }

    /// [`ColormapExt::colormap`], also saying which variant ran and how long it
    /// took. With an automatic range, `minmax` runs first as its
    /// own call, which this report does not describe.
    fn colormap_report<T: Sample, U: Sample>(
        &self,
        img: &Image<T>,
        p: &ColormapParams,
    ) -> Result<(Image<U>, RunReport)> {
        check_input(img.channels())?;
        p.validate()?;
        let data = if p.needs_minmax() {
            Some(self.minmax(img)?)
        } else {
            None
        };
        let range = p.range(data.as_ref())?;
        let shape =
            Shape::new(img.width(), img.height(), 1, T::TYPE).with_params(OpParams::new(*p));
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| device::run::<T, U>(self.programs(), dev, spec, img, p, range),
            || cpu::colormap::<T, U>(img, p, range),
        )
    }
}

impl<D: Dispatch + ?Sized> ColormapExt for D {}
