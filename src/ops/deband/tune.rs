//! `deband`'s tuning and bench entry.

use super::*;
use crate::ops::tuning::{self, Ask, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

/// The parameters a tuning run measures: the issue's, in both spaces.
fn measured() -> [DebandParams; 2] {
    let rgb = DebandParams {
        seed: 1,
        ..DebandParams::default()
    };
    [
        rgb,
        DebandParams {
            space: Space::Ycc,
            ..rgb
        },
    ]
}

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// Both spaces, as they run different variants; `ycc` only on colour
    /// (a gray image has no chroma to smooth).
    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        Ok(measured()
            .into_iter()
            .filter(|p| p.space != Space::Ycc || ask.channels >= 3)
            .map(OpParams::new)
            .collect())
    }

    fn reads(&self, sample: SampleType) -> std::result::Result<(), String> {
        match sample {
            SampleType::F32 => Err(f32_refused().to_string()),
            _ => Ok(()),
        }
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        let p = params
            .get::<DebandParams>()
            .ok_or_else(|| Error::arg("a deband job needs deband parameters"))?;
        p.check(sample, c)?;
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let p = *params
            .get::<DebandParams>()
            .ok_or_else(|| Error::arg("a deband case needs deband parameters"))?;
        Ok(match sample {
            SampleType::U8 => Box::new(DebandCase::<u8>::new(w, h, c, p)?),
            SampleType::U16 => Box::new(DebandCase::<u16>::new(w, h, c, p)?),
            SampleType::F32 => return Err(f32_refused()),
        })
    }
}

/// A request: a test image that is banded (gentle ramps, steps one level
/// apart) in two thirds of its tiles and random in the rest, so that both
/// branches of the threshold run.
pub(super) struct DebandCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) p: DebandParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> DebandCase<T> {
    fn new(w: usize, h: usize, c: usize, p: DebandParams) -> Result<Self> {
        p.check(T::TYPE, c)?;
        let noise = tuning::test_image::<T>(w, h, c)?;
        let level = T::TYPE.full_scale() / 255.0;
        let img = Image::from_fn(w, h, c, |x, y, ch| {
            if (x / 24 + y / 24) % 3 == 0 {
                noise.get(x, y, ch)
            } else {
                T::from_f32((((x + y / 2) / 6 + 40 * ch) % 256) as f32 * level)
            }
        })?;
        Ok(DebandCase {
            img,
            p,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample> Case for DebandCase<T> {
    fn shape(&self) -> Shape {
        shape_of(&self.img, &self.p)
    }

    fn reference(&self) -> Result<Expected> {
        let out = reference::deband(&self.img, &self.p)?;
        Ok(Expected::Image(tuning::as_f32(&out)?, 0.0))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.deband_report(&self.img, &self.p)?;
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
        Ok(tuning::wall(move || cpu::deband(&self.img, &self.p).map(drop)))
    }
}
