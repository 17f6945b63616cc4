//! The bilateral's tuning key fields, and its tuning and bench entry.

use std::cell::OnceCell;

use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, Programs, VariantSpec};

/// `sigma_r` of the tuning and bench cases, in units of full scale: on
/// their uniform random input, a fifth of the neighbours weigh more than
/// 1/e of the centre.
pub const CASE_SIGMA_R: f32 = 0.2;

impl crate::ops::TuneBucket for BilateralParams {
    /// The radius (`r0-2`, `r3-4`, `r5-8`, `r9-16`, `r17-32`: the local
    /// tile's limit is 8, and the taps grow with its square) and the
    /// precision (which decides whether the fast variants run).
    fn bucket_words(&self) -> (&'static str, &'static str) {
        let r = match self.radius() {
            0..=2 => "r0-2",
            3..=4 => "r3-4",
            5..=8 => "r5-8",
            9..=16 => "r9-16",
            _ => "r17-32",
        };
        (r, self.precision.name())
    }
}

/// The tuning and bench entry (see [`crate::ops::tuning`]): for each sigma
/// asked for (as `sigma_s`, default radius, replicate border), one exact
/// and one fast parameter set.
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        let mut sets = Vec::new();
        for &s in ask.sigmas {
            for precision in [Precision::Exact, Precision::Fast] {
                let p = BilateralParams {
                    precision,
                    ..BilateralParams::new(s, CASE_SIGMA_R)
                };
                sets.push(OpParams::new(p));
            }
        }
        Ok(sets)
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        if let Some(p) = params.get::<BilateralParams>() {
            p.validate()?;
        }
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    /// `sigma_s`, for the tuning record.
    fn sigma(&self, params: &OpParams) -> Option<f32> {
        params.get::<BilateralParams>().map(|p| p.sigma_s)
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let Some(p) = params.get::<BilateralParams>().copied() else {
            return Err(Error::arg("tuning bilateral needs its parameters"));
        };
        p.validate()?;
        tuning::boxed_case!(sample, T => BilateralCase::<T>::new(w, h, c, p)?)
    }
}

/// A random image and the parameters; the reference is computed once
/// (every variant is checked against it).
pub(super) struct BilateralCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) params: BilateralParams,
    pub(super) on_device: OnDevice,
    want: OnceCell<Image<f32>>,
}

impl<T: Sample> BilateralCase<T> {
    fn new(w: usize, h: usize, c: usize, params: BilateralParams) -> Result<Self> {
        Ok(BilateralCase {
            img: tuning::test_image(w, h, c)?,
            params,
            on_device: OnDevice::default(),
            want: OnceCell::new(),
        })
    }
}

impl<T: Sample> Case for BilateralCase<T> {
    fn shape(&self) -> Shape {
        bilateral_shape(&self.img, &self.params)
    }

    /// The CPU path is exact at either precision.
    fn cpu_tolerance(&self) -> f32 {
        variants::EXACT_TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        let want = match self.want.get() {
            Some(w) => w,
            None => {
                let w = reference::bilateral(&self.img, &self.params)?;
                self.want.get_or_init(|| w)
            }
        };
        Ok(Expected::Image(want.clone(), tuning::rounding::<T>()))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.bilateral_report(&self.img, &self.params)?;
        Ok((Box::new(o), r))
    }

    /// In the case's own sample type: RGBA8 times the uchar4 kernels.
    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || {
            cpu::bilateral(&self.img, &self.params).map(drop)
        }))
    }
}
