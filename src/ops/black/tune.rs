//! `black`'s host side for [`crate::ops::pixel_stage`]: its call, and for
//! tuning and benches its case's parameters, reference and CPU path.

use super::*;
use crate::ops::pixel_stage::{PixelTune, PixelOp};
use crate::ops::Dispatch;

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub static TUNE: PixelTune<BlackParams> = PixelTune::new();

impl PixelOp for BlackParams {
    /// f32 against the f64 reference.
    const CPU_TOLERANCE: f32 = variants::TOLERANCE;

    /// Black at 10% and white at 90% of full scale, so that samples are
    /// clipped at both ends and the stretch runs.
    fn tuning(sample: SampleType) -> Self {
        let full = sample.full_scale();
        BlackParams {
            black: (0.1 * full).round(),
            white: Some((0.9 * full).round()),
        }
    }

    fn reference<T: Sample>(&self, img: &Image<T>) -> Result<Image<f32>> {
        reference::black(img, self)
    }

    fn cpu<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>> {
        cpu::black(img, self)
    }

    fn call<T: Sample>(&self, d: &dyn Dispatch, img: &Image<T>) -> Result<(Image<T>, RunReport)> {
        d.black_report(img, self)
    }
}
