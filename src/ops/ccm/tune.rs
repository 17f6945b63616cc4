//! `ccm`'s host side for [`crate::ops::pixel_stage`]: its call, and for
//! tuning and benches its case's parameters, reference and CPU path.
//! RGB(A) only, as gray images have no colours to mix.

use super::*;
use crate::ops::pixel_stage::{PixelTune, PixelOp};
use crate::ops::Dispatch;

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub static TUNE: PixelTune<CcmParams> = PixelTune::new();

impl PixelOp for CcmParams {
    /// f32 against the f64 reference.
    const CPU_TOLERANCE: f32 = variants::TOLERANCE;

    /// A camera-like matrix (rows sum to 1, negative off the diagonal, their
    /// magnitudes to at most 2.8), so that results saturate at both ends.
    fn tuning(_: SampleType) -> Self {
        CcmParams {
            m: [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
        }
    }

    fn reference<T: Sample>(&self, img: &Image<T>) -> Result<Image<f32>> {
        reference::ccm(img, self)
    }

    fn cpu<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>> {
        cpu::ccm(img, self)
    }

    fn call<T: Sample>(&self, d: &dyn Dispatch, img: &Image<T>) -> Result<(Image<T>, RunReport)> {
        d.ccm_report(img, self)
    }
}
