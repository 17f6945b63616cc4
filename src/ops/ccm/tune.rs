//! `ccm`'s tuning and bench entry.

use super::*;
use crate::ops::tuning::{self, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, Programs, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]): RGB(A) only.
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// RGB or RGBA: gray images have no colours to mix.
    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        check_channels(c)?;
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        _: OpParams,
    ) -> Result<Box<dyn Case>> {
        Ok(match sample {
            SampleType::U8 => Box::new(CcmCase::<u8>::new(w, h, c)?),
            SampleType::U16 => Box::new(CcmCase::<u16>::new(w, h, c)?),
            SampleType::F32 => Box::new(CcmCase::<f32>::new(w, h, c)?),
        })
    }
}

/// A camera-like matrix (rows sum to 1, negative off the diagonal), so
/// that results saturate at both ends.
pub(super) struct CcmCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) p: CcmParams,
    pub(super) on_device: OnDevice,
}

/// The tuning case's matrix (rows' magnitudes sum to at most 2.8).
pub(super) const CAMERA: CcmParams = CcmParams {
    m: [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
};

impl<T: Sample> CcmCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        check_channels(c)?;
        Ok(CcmCase {
            img: tuning::test_image(w, h, c)?,
            p: CAMERA,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for CcmCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.img.width(), self.img.height(), self.img.channels(), T::TYPE)
    }

    /// f32 against the f64 reference.
    fn cpu_tolerance(&self) -> f32 {
        variants::TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            reference::ccm(&self.img, &self.p)?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.ccm_report(&self.img, &self.p)?;
        Ok((Box::new(o), r))
    }

    fn check(
        &self,
        got: &Output,
        want: &Expected,
        tolerance: f32,
    ) -> std::result::Result<(), String> {
        tuning::check_output::<T>(got, want, tolerance)
    }

    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || cpu::ccm(&self.img, &self.p).map(drop)))
    }
}
