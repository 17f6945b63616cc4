//! `ccm`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `ccm` on an engine: `engine.ccm(..)` (in [`crate::prelude`]).
pub trait CcmExt: Dispatch {
    /// Applies a colour matrix to an RGB(A) image (see the module docs for
    /// the rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::ops::ccm::CcmParams;
    /// use clfilter::{Engine, Image};
    ///
    /// let img = Image::<u8>::from_vec(1, 1, 3, vec![10, 20, 30]).unwrap();
    /// // Swap red and blue.
    /// let p = CcmParams { m: [0., 0., 1., 0., 1., 0., 1., 0., 0.] };
    /// let out = Engine::cpu().ccm(&img, &p).unwrap();
    /// assert_eq!(out.into_vec(), vec![30, 20, 10]);
    /// ```
    fn ccm<T: Sample>(&self, img: &Image<T>, p: &CcmParams) -> Result<Image<T>> {
        self.ccm_report(img, p).map(|(i, _)| i)
    }

    /// [`CcmExt::ccm`], also reporting what ran.
    fn ccm_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &CcmParams,
    ) -> Result<(Image<T>, RunReport)> {
        crate::ops::pixel_stage::dispatch(self, p, img, || cpu::ccm(img, p))
    }
}

impl<D: Dispatch + ?Sized> CcmExt for D {}
