//! `deband`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `deband` on an engine: `engine.deband(..)` (in [`crate::prelude`]).
pub trait DebandExt: Dispatch {
    /// `img` debanded with `p` (u8 and u16 images; see [`super`]).
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
