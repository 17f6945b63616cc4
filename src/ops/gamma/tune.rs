//! `gamma`'s host side for [`crate::ops::pixel_stage`]: its call, and for
//! tuning and benches its case's parameters, reference and CPU path.

use super::*;
use crate::ops::pixel_stage::{PixelTune, PixelOp};
use crate::ops::Dispatch;

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub static TUNE: PixelTune<GammaParams> = PixelTune::new();

impl PixelOp for GammaParams {
    /// f32 against the f64 reference.
    const CPU_TOLERANCE: f32 = variants::TOLERANCE;

    /// The sRGB curve (both of its pieces run on the test image).
    fn tuning(_: SampleType) -> Self {
        GammaParams::Srgb
    }

    fn reference<T: Sample>(&self, img: &Image<T>) -> Result<Image<f32>> {
        reference::gamma(img, self)
    }

    fn cpu<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>> {
        cpu::gamma(img, self)
    }

    fn call<T: Sample>(&self, d: &dyn Dispatch, img: &Image<T>) -> Result<(Image<T>, RunReport)> {
        d.gamma_report(img, self)
    }
}
