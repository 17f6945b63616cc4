//! `black`'s tuning and bench entry.

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
            SampleType::U8 => Box::new(BlackCase::<u8>::new(w, h, c)?),
            SampleType::U16 => Box::new(BlackCase::<u16>::new(w, h, c)?),
            SampleType::F32 => Box::new(BlackCase::<f32>::new(w, h, c)?),
        })
    }
}

/// Black at 10% and white at 90% of full scale, so that samples are
/// clipped at both ends and the stretch runs.
pub(super) struct BlackCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) p: BlackParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> BlackCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        let full = T::TYPE.full_scale();
        Ok(BlackCase {
            img: tuning::test_image(w, h, c)?,
            p: BlackParams {
                black: (0.1 * full).round(),
                white: Some((0.9 * full).round()),
            },
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for BlackCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.img.width(), self.img.height(), self.img.channels(), T::TYPE)
    }

    /// f32 against the f64 reference.
    fn cpu_tolerance(&self) -> f32 {
        variants::TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            reference::black(&self.img, &self.p)?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.black_report(&self.img, &self.p)?;
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
        Ok(tuning::wall(move || cpu::black(&self.img, &self.p).map(drop)))
    }
}
