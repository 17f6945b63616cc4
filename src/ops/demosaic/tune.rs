//! Demosaic's tuning key fields, and its tuning and bench entry.

use super::*;
use crate::ops::tuning::{self, Ask, Case, Expected, Output, Runner, Tunable};
use crate::ops::{Dispatch, Programs, VariantSpec};

impl crate::ops::TuneBucket for DemosaicParams {
    /// The tuning parameter bucket: the method sets the neighbourhood (and
    /// so the cost), and RGB and RGBA stores differ in width (`mhc rgb`).
    fn bucket_words(&self) -> (&'static str, &'static str) {
        (
            self.method.name(),
            if self.channels == 4 { "rgba" } else { "rgb" },
        )
    }
}

/// The tuning and bench entry (see [`crate::ops::tuning`]): a 1-channel
/// RGGB frame of the sample type (u8 or u16), demosaiced into the same
/// type with [`tuning::rgb_channels`] channels, with each method asked for.
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        let methods = match ask.method {
            None => Method::ALL.to_vec(),
            Some(m) => vec![m.parse()?],
        };
        Ok(methods
            .into_iter()
            .map(|m| {
                OpParams::new(DemosaicParams {
                    channels: tuning::rgb_channels(ask.channels),
                    ..DemosaicParams::new(Pattern::Rggb, m)
                })
            })
            .collect())
    }

    fn reads(&self, sample: SampleType) -> std::result::Result<(), String> {
        if sample == SampleType::F32 {
            return Err(
                "demosaic reads u8 or u16 Bayer frames: tune it with --type u8 or --type u16"
                    .into(),
            );
        }
        Ok(())
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        check_cfa_size(w, h)?;
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
        let Some(p) = params.get::<DemosaicParams>().copied() else {
            return Err(Error::arg("tuning demosaic needs its parameters"));
        };
        tuning::boxed_case!(sample, T => DemosaicCase::<T>::new(w, h, p)?)
    }
}

/// A frame of `T` (an f32 one is the error of every call but `shape`).
pub(super) struct DemosaicCase<T: Sample> {
    pub(super) cfa: Image<T>,
    pub(super) p: DemosaicParams,
}

impl<T: Sample> DemosaicCase<T> {
    fn new(w: usize, h: usize, p: DemosaicParams) -> Result<Self> {
        Ok(DemosaicCase {
            cfa: tuning::test_image(w, h, 1)?,
            p,
        })
    }

    /// The frame as a demosaic input (u8 or u16 only).
    pub(super) fn raw(&self) -> Result<Raw<'_>> {
        let any = &self.cfa as &dyn std::any::Any;
        if let Some(i) = any.downcast_ref::<Image<u8>>() {
            return Ok(Raw::U8(i));
        }
        if let Some(i) = any.downcast_ref::<Image<u16>>() {
            return Ok(Raw::U16(i));
        }
        Err(Error::arg(
            "demosaic benches read u8 or u16 frames (--type u8|u16)",
        ))
    }
}

impl<T: Sample> Case for DemosaicCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(self.cfa.width(), self.cfa.height(), 1, T::TYPE)
            .with_params(OpParams::new(self.p))
    }

    /// The kernels' float-ordering bound: the CPU path sums in its own
    /// order too.
    fn cpu_tolerance(&self) -> f32 {
        variants::CPU_TOLERANCE
    }

    /// The unrounded f32 reference at T's full scale; integer outputs
    /// saturate, and may round either way of it.
    fn reference(&self) -> Result<Expected> {
        let raw = self.raw()?;
        let lv = self.p.levels(&raw, SampleType::F32)?;
        let mut out = reference::demosaic::<f32>(&raw, &self.p, &lv)?;
        let integer = T::TYPE != SampleType::F32;
        tuning::scale(&mut out, T::TYPE.full_scale(), integer);
        Ok(Expected::Image(out, tuning::rounding::<T>()))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.demosaic_report::<T>(&self.raw()?, &self.p)?;
        Ok((Box::new(o), r))
    }

    /// Uploads the frame for each runner, into an output of the frame's
    /// sample type with `p.channels`.
    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    /// Checks the frame first, so that only the bench row says what is wrong.
    fn cpu_runner(&self) -> Result<Runner<'_>> {
        let raw = self.raw()?;
        let lv = self.p.levels(&raw, T::TYPE)?;
        raw.validate()?;
        let (w, h) = raw.size();
        crate::image::check_shape(w, h, self.p.channels)?;
        Ok(tuning::wall(move || {
            cpu::demosaic::<T>(&raw, &self.p, &lv).map(drop)
        }))
    }
}
