//! `ccm`'s kernel arguments: the matrix's three rows, one pixel per
//! work-item (`pixel`) or four (`pixel4`) (launched by
//! [`crate::ops::pixel_stage`]).

use super::*;
use crate::ops::pixel_stage::{Items, PixelKernel, PixelLaunch, Scalar};
use crate::ops::VariantSpec;

impl PixelKernel for CcmParams {
    fn spec() -> &'static OpSpec {
        &SPEC
    }

    /// The coefficients, and 3 or 4 channels.
    fn check(&self, channels: usize, _: SampleType) -> Result<()> {
        self.validate()?;
        check_channels(channels)
    }

    fn launch(&self, spec: &VariantSpec, _: SampleType) -> Result<PixelLaunch> {
        let [m0, m1, m2] = self.rows();
        Ok(PixelLaunch {
            options: String::new(),
            // pixel4 takes four pixels per work-item.
            items: Items::Pixels(if spec.name == "pixel4" { 4 } else { 1 }),
            args: vec![Scalar::F32x4(m0), Scalar::F32x4(m1), Scalar::F32x4(m2)],
        })
    }

    /// Sums of products leave 0..full; the next stage or the store saturates.
    fn unsaturated(&self, logical: SampleType) -> bool {
        logical != SampleType::F32
    }
}
