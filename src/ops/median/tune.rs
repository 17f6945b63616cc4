//! `median`'s tuning and bench entry: one parameter set per radius.

use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Expected, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// Radii 1, 2 and 3: each its own bucket.
    fn params(&self, _: &Ask<'_>) -> Result<Vec<OpParams>> {
        (1..=MAX_RADIUS)
            .map(|r| MedianParams::new(r).map(OpParams::new))
            .collect()
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        params
            .get::<MedianParams>()
            .ok_or_else(|| Error::arg("median's tuning needs a MedianParams"))?
            .validate()?;
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let p = *params
            .get::<MedianParams>()
            .ok_or_else(|| Error::arg("median's tuning needs a MedianParams"))?;
        tuning::boxed_case!(sample, T => MedianCase::<T>::new(w, h, c, p)?)
    }
}

/// The input and its parameters.
pub(super) type MedianCase<T> = tuning::ImageCase<T, MedianParams>;

impl<T: Sample> Case for MedianCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
        .with_params(OpParams::new(self.params))
    }

    fn reference(&self) -> Result<Expected> {
        let out = reference::median(&self.img, &self.params)?;
        Ok(Expected::Image(tuning::as_f32(&out)?, 0.0))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.median_report(&self.img, &self.params)?;
        Ok((Box::new(o), r))
    }

    fn kernel_runner<'a>(
        &'a self,
        progs: &'a crate::ops::Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || {
            cpu::median(&self.img, &self.params).map(drop)
        }))
    }
}
