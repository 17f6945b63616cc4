//! `wb`'s kernel arguments, given gains as one `float4` (launched by
//! [`crate::ops::pixel_stage`]), and its arm in device-resident chains,
//! which measures the gray world's gains on the device first.

use super::*;
use crate::ops::pixel_stage::{PixelKernel, PixelLaunch, Scalar};
use crate::ops::VariantSpec;

/// The kernel's parameters: red, green and blue gains, given or found by
/// [`gray_world`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gains(pub [f32; 3]);

impl PixelKernel for Gains {
    fn spec() -> &'static OpSpec {
        &SPEC
    }

    /// The gains, and 3 or 4 channels.
    fn check(&self, channels: usize, _: SampleType) -> Result<()> {
        WbParams::Gains(self.0).validate()?;
        check_channels(channels)
    }

    fn launch(&self, _: &VariantSpec, _: SampleType) -> Result<PixelLaunch> {
        Ok(PixelLaunch::pixels(vec![Scalar::F32x4(kernel_gains(self.0))]))
    }

    /// Gains above 1 pass full scale; the next stage or the store saturates.
    fn unsaturated(&self, logical: SampleType) -> bool {
        logical != SampleType::F32
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]):
/// for the gray world, `stats` of the logical channels on the device
/// (one small read-back), then the kernel on the working floats.
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    p: &WbParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    use crate::ops::OpParams;
    p.validate()?;
    let mut w = input.into_work();
    check_channels(w.channels)?;
    let mt = w.materialize(cx.d, cx.dev)?;
    let gains = match *p {
        WbParams::Gains(g) => g,
        WbParams::Auto => {
            let shapes = (
                &w.logical_shape(OpParams::NONE),
                &w.working_shape(OpParams::NONE),
            );
            let (img, channels) = (&w.img, w.channels);
            let (s, rep) = crate::ops::dispatch_on_device(
                cx.d,
                &crate::ops::stats::SPEC,
                None,
                shapes,
                |dev, spec| crate::ops::stats::device::launch(cx.d.programs(), dev, spec, img, channels),
            )?;
            record.reports.push(rep);
            gray_world([s.mean[0], s.mean[1], s.mean[2]])?
        }
    };
    crate::ops::pixel_stage::device::launch_stage(&Gains(gains), cx, forced, w, mt, record)
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &WbParams,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> Result<crate::ops::work::Work> {
    cx.never()
}
