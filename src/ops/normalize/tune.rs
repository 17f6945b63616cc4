//! `normalize`'s tuning and bench entry.

use super::*;
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
        tuning::boxed_case!(sample, T => NormalizeCase::<T>::new(w, h, c)?)
    }
}

/// The coefficients the kernel-only and CPU runners use (the bench's).
pub(super) fn bench_coefficients() -> Result<Coefficients> {
    Coefficients::explicit(&NormalizeParams {
        sub: Some(1.0),
        factor: Some(0.5),
    })
}

/// Into the input's type, with explicit coefficients for the checked call,
/// so that it runs one kernel (the automatic range would time `minmax` too).
pub(super) struct NormalizeCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) norm: NormalizeParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> NormalizeCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        let full = T::TYPE.full_scale();
        Ok(NormalizeCase {
            img: tuning::test_image(w, h, c)?,
            norm: NormalizeParams {
                sub: Some(0.25 * full),
                factor: Some(1.5),
            },
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for NormalizeCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
    }

    fn reference(&self) -> Result<Expected> {
        let k = Coefficients::explicit(&self.norm)?;
        let out = reference::normalize::<T, T>(&self.img, &k)?;
        Ok(Expected::Image(tuning::as_f32(&out)?, 0.0))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, mut r) = d.normalize_report::<T, T>(&self.img, &self.norm)?;
        let r = r
            .pop()
            .ok_or_else(|| Error::arg("normalize reported no call"))?;
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
        let k = bench_coefficients()?;
        Ok(tuning::wall(move || {
            cpu::normalize::<T, T>(&self.img, &k).map(drop)
        }))
    }
}
