//! `wb`'s tuning and bench entry.

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

    /// RGB or RGBA: gray images have no white balance.
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
            SampleType::U8 => Box::new(WbCase::<u8>::new(w, h, c)?),
            SampleType::U16 => Box::new(WbCase::<u16>::new(w, h, c)?),
            SampleType::F32 => Box::new(WbCase::<f32>::new(w, h, c)?),
        })
    }
}

/// Given gains, a daylight-like set, so that red and blue saturate (the
/// gray world would time `stats` too).
pub(super) struct WbCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) gains: [f32; 3],
    pub(super) on_device: OnDevice,
}

impl<T: Sample> WbCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        check_channels(c)?;
        Ok(WbCase {
            img: tuning::test_image(w, h, c)?,
            gains: [1.9, 1.0, 1.45],
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for WbCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.img.width(), self.img.height(), self.img.channels(), T::TYPE)
    }

    /// f32 against the f64 reference.
    fn cpu_tolerance(&self) -> f32 {
        variants::TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            reference::wb(&self.img, self.gains)?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.wb_gains_report(&self.img, self.gains)?;
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
        Ok(tuning::wall(move || cpu::wb(&self.img, self.gains).map(drop)))
    }
}
