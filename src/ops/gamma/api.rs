//! `gamma`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `gamma` on an engine: `engine.gamma(..)` (in [`crate::prelude`]).
pub trait GammaExt: Dispatch {
    /// Encodes linear samples with a transfer curve (see the module docs
    /// for the rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::ops::gamma::GammaParams;
    /// use clfilter::{Engine, Image};
    ///
    /// let img = Image::<u8>::from_vec(3, 1, 1, vec![0, 64, 255]).unwrap();
    /// let out = Engine::cpu().gamma(&img, &GammaParams::Srgb).unwrap();
    /// // 64/255 of linear light is 137/255 in sRGB.
    /// assert_eq!(out.into_vec(), vec![0, 137, 255]);
    /// ```
    fn gamma<T: Sample>(&self, img: &Image<T>, p: &GammaParams) -> Result<Image<T>> {
        self.gamma_report(img, p).map(|(i, _)| i)
    }

    /// [`GammaExt::gamma`], also reporting what ran.
    fn gamma_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GammaParams,
    ) -> Result<(Image<T>, RunReport)> {
        crate::ops::pixel_stage::dispatch(self, p, img, || cpu::gamma(img, p))
    }
}

impl<D: Dispatch + ?Sized> GammaExt for D {}
