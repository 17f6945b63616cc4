//! `gamma`'s tuning and bench entry.

use super::*;
use crate::ops::tuning::{self, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, Programs, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        _: OpParams,
    ) -> Result<Box<dyn Case>> {
        Ok(match sample {
            SampleType::U8 => Box::new(GammaCase::<u8>::new(w, h, c)?),
            SampleType::U16 => Box::new(GammaCase::<u16>::new(w, h, c)?),
            SampleType::F32 => Box::new(GammaCase::<f32>::new(w, h, c)?),
        })
    }
}

/// The sRGB curve (both of its pieces run on the test image).
pub(super) struct GammaCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) p: GammaParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> GammaCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        Ok(GammaCase {
            img: tuning::test_image(w, h, c)?,
            p: GammaParams::Srgb,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for GammaCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.img.width(), self.img.height(), self.img.channels(), T::TYPE)
    }

    /// f32 against the f64 reference.
    fn cpu_tolerance(&self) -> f32 {
        variants::TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            reference::gamma(&self.img, &self.p)?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.gamma_report(&self.img, &self.p)?;
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
        Ok(tuning::wall(move || cpu::gamma(&self.img, &self.p).map(drop)))
    }
}
