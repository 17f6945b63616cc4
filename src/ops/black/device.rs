//! `black`'s kernel arguments: the level and the stretch factor for the
//! logical type, one pixel per work-item (launched by
//! [`crate::ops::pixel_stage`]).

use super::*;
use crate::ops::pixel_stage::{PixelKernel, PixelLaunch, Scalar};
use crate::ops::VariantSpec;

impl PixelKernel for BlackParams {
    fn spec() -> &'static OpSpec {
        &SPEC
    }

    /// The levels, and their factor for `logical` samples (any channels).
    fn check(&self, _: usize, logical: SampleType) -> Result<()> {
        self.factor(logical).map(drop)
    }

    fn launch(&self, _: &VariantSpec, logical: SampleType) -> Result<PixelLaunch> {
        Ok(PixelLaunch::pixels(vec![
            Scalar::F32(self.black),
            Scalar::F32(self.factor(logical)?),
        ]))
    }

    /// A white level below full scale stretches past it.
    fn unsaturated(&self, logical: SampleType) -> bool {
        logical != SampleType::F32 && self.white.is_some()
    }
}
