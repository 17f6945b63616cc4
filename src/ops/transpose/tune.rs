//! `transpose`'s tuning and bench entry.

use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

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
        tuning::boxed_case!(sample, T => TransposeCase::<T>::new(w, h, c)?)
    }
}

pub(super) struct TransposeCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> TransposeCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        Ok(TransposeCase {
            img: tuning::test_image(w, h, c)?,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for TransposeCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
    }

    fn reference(&self) -> Result<Expected> {
        let out = reference::transpose(&self.img)?;
        Ok(Expected::Image(tuning::as_f32(&out)?, 0.0))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.transpose_report(&self.img)?;
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
        Ok(tuning::wall(move || cpu::transpose(&self.img).map(drop)))
    }
}
