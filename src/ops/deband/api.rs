//! `deband`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `deband` on an engine: `engine.deband(..)` (in [`crate::prelude`]).
pub trait DebandExt: Dispatch {
    /// `img` debanded with `p` (u8 and u16 images; see [`super`]).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::deband::DebandParams;
    /// let bands = Image::<u8>::from_fn(32, 8, 3, |x, _, _| 100 + (x / 8) as u8)?;
    /// let p = DebandParams::default();
    /// let out = Engine::cpu().deband(&bands, &p)?;
    /// assert_eq!(out, Engine::cpu().deband(&bands, &p)?); // the same for a seed
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn deband<T: Sample>(&self, img: &Image<T>, p: &DebandParams) -> Result<Image<T>> {
        self.deband_report(img, p).map(|(i, _)| i)
    }

    /// [`DebandExt::deband`], also reporting what ran.
    fn deband_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &DebandParams,
    ) -> Result<(Image<T>, RunReport)> {
        // Bad parameters and f32 images are the caller's errors, not a
        // variant's: refuse them before any variant is tried.
        Levels::new(p, T::TYPE, img.channels())?;
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape_of(img, p),
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, p),
            || cpu::deband(img, p),
        )
    }
}

impl<D: Dispatch + ?Sized> DebandExt for D {}
