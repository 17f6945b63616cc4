//! `wb`'s host side for [`crate::ops::pixel_stage`]: its call, and for
//! tuning and benches its case's parameters, reference and CPU path.
//! RGB(A) only, as gray images have no white balance.

use super::device::Gains;
use super::*;
use crate::ops::pixel_stage::{PixelTune, PixelOp};
use crate::ops::Dispatch;

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub static TUNE: PixelTune<Gains> = PixelTune::new();

impl PixelOp for Gains {
    /// f32 against the f64 reference.
    const CPU_TOLERANCE: f32 = variants::TOLERANCE;

    /// Given gains, a daylight-like set, so that red and blue saturate (the
    /// gray world would time `stats` too).
    fn tuning(_: SampleType) -> Self {
        Gains([1.9, 1.0, 1.45])
    }

    fn reference<T: Sample>(&self, img: &Image<T>) -> Result<Image<f32>> {
        reference::wb(img, self.0)
    }

    fn cpu<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>> {
        cpu::wb(img, self.0)
    }

    fn call<T: Sample>(&self, d: &dyn Dispatch, img: &Image<T>) -> Result<(Image<T>, RunReport)> {
        d.wb_gains_report(img, self.0)
    }
}
