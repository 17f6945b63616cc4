//! Colormap's tuning key fields, and its tuning and bench entry.

use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, Programs, VariantSpec};

impl crate::ops::TuneBucket for ColormapParams {
    /// The tuning parameter bucket: the output channels alone (`rgba`), as
    /// every map costs the same.
    fn bucket_words(&self) -> (&'static str, &'static str) {
        (if self.channels == 4 { "rgba" } else { "rgb" }, "")
    }
}

/// The tuning and bench entry (see [`crate::ops::tuning`]): a 1-channel
/// image mapped through Turbo into its own type with
/// [`tuning::rgb_channels`] channels (every map costs the same).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        Ok(vec![OpParams::new(ColormapParams {
            channels: tuning::rgb_channels(ask.channels),
            ..ColormapParams::default()
        })])
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        if let Some(p) = params.get::<ColormapParams>().copied() {
            p.validate()?;
            crate::image::check_shape(w, h, p.channels)?;
        }
        Ok(Shape::new(w, h, 1, sample).with_params(params))
    }

    /// One sample read, one colour pixel written.
    fn bytes_per_pixel(&self, sample: usize, channels: usize) -> usize {
        sample * (1 + tuning::rgb_channels(channels))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, _): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let Some(p) = params.get::<ColormapParams>().copied() else {
            return Err(Error::arg("tuning colormap needs its parameters"));
        };
        tuning::boxed_case!(sample, T => ColormapCase::<T>::new(w, h, p)?)
    }
}

/// With an explicit range, the middle 80% of the type's (the automatic
/// range would time `minmax` too).
pub(super) struct ColormapCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) p: ColormapParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> ColormapCase<T> {
    fn new(w: usize, h: usize, p: ColormapParams) -> Result<Self> {
        let full = T::TYPE.full_scale();
        let p = ColormapParams {
            min: Some(0.1 * full),
            max: Some(0.9 * full),
            ..p
        };
        p.validate()?;
        Ok(ColormapCase {
            img: tuning::test_image(w, h, 1)?,
            p,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for ColormapCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.img.width(), self.img.height(), 1, T::TYPE)
            .with_params(OpParams::new(self.p))
    }

    /// The f32 bound: the reference is f64.
    fn cpu_tolerance(&self) -> f32 {
        variants::TOLERANCE
    }

    /// The unrounded f64 colours (0..1, as f32) at T's full scale.
    fn reference(&self) -> Result<Expected> {
        let range = self.p.range(None)?;
        let mut out = reference::colormap::<T, f32>(&self.img, &self.p, range)?;
        tuning::scale(&mut out, T::TYPE.full_scale(), false);
        Ok(Expected::Image(out, tuning::rounding::<T>()))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.colormap_report::<T, T>(&self.img, &self.p)?;
        Ok((Box::new(o), r))
    }

    /// Into a device output of the input's type with `p.channels`.
    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        let range = self.p.range(None)?;
        Ok(tuning::wall(move || {
            cpu::colormap::<T, T>(&self.img, &self.p, range).map(drop)
        }))
    }
}
