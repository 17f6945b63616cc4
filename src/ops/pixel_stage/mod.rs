//! What the per-pixel camera stages (`black`, `wb`, `ccm`, `gamma`) share:
//! one kernel launch that reads an image and writes one of the same shape,
//! sample by sample, as [`PixelKernel`] describes it. The plumbing around
//! it lives here once: the host-in, host-out call ([`dispatch`]), the
//! stage's arms on the host ([`run_host`]) and in a device-resident chain
//! ([`run_stage`]), the tuning and bench case ([`PixelTune`], whose
//! [`PixelCase`] the operation fills through [`PixelOp`]) and the rayon
//! paths' loop ([`cpu`]). An operation's folder keeps what is its own: its
//! parameters and their checks, its kernel's arguments (`device.rs`), its
//! reference, its CPU arithmetic and its tuning parameters (`tune.rs`).

pub(crate) mod cpu;
pub(crate) mod device;

use std::marker::PhantomData;

pub(crate) use device::run_stage;

use crate::backend::Dev;
use crate::error::Result;
use crate::image::{DynImage, Image, Sample, SampleType};
use crate::ops::stage::StageRecord;
use crate::ops::tuning::{self, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, OpSpec, Programs, RunReport, Shape, VariantSpec};

/// A per-pixel kernel as its operation describes it. The kernel,
/// `<op>_<variant>`, is built with `-DOUT_FLOAT=1` for f32 images (else 0)
/// plus [`PixelLaunch::options`], and takes `(input, output, count)`, then
/// the [`PixelKernel::lookup_table`] when there is one, then
/// [`PixelLaunch::args`].
///
/// `logical` is the sample type whose units the values are in: the
/// image's own on the host, the chain's logical type on a chain's f32
/// working image.
pub trait PixelKernel: Sync + 'static {
    /// The operation.
    fn spec() -> &'static OpSpec;

    /// Checks the parameters, and that pixels of `channels` samples of
    /// `logical` can be processed: before a call is dispatched, before a
    /// chain's stage runs, and before each launch.
    fn check(&self, channels: usize, logical: SampleType) -> Result<()>;

    /// The launch of variant `spec` on values in `logical`'s units.
    fn launch(&self, spec: &VariantSpec, logical: SampleType) -> Result<PixelLaunch>;

    /// A table of every `T` value that variant `spec` reads in place of
    /// the arithmetic, uploaded once per image (or per kernel-only runner);
    /// none by default.
    fn lookup_table<T: Sample>(&self, spec: &VariantSpec) -> Result<Option<Vec<T>>> {
        let _ = spec;
        Ok(None)
    }

    /// Whether, in a chain, the result may leave `0..=full` for `logical`
    /// samples, so that the next stage or the final store must saturate it.
    fn unsaturated(&self, logical: SampleType) -> bool;
}

/// One launch of a per-pixel kernel (see [`PixelKernel`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PixelLaunch {
    /// Build options beyond the type's, the channels' and `OUT_FLOAT`.
    pub options: String,
    /// What a work-item covers (and so what `count` counts).
    pub items: Items,
    /// The arguments after the images, the count and the table.
    pub args: Vec<Scalar>,
}

impl PixelLaunch {
    /// One pixel per work-item, no build options, `args`.
    pub fn pixels(args: Vec<Scalar>) -> Self {
        PixelLaunch {
            options: String::new(),
            items: Items::Pixels(1),
            args,
        }
    }
}

/// What one work-item of a per-pixel kernel covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Items {
    /// This many consecutive pixels; `count` is the pixels.
    Pixels(usize),
    /// One sample; `count` is the samples.
    Samples,
}

/// A scalar argument of a per-pixel kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A `float`.
    F32(f32),
    /// A `float4`.
    F32x4([f32; 4]),
}

/// An operation's call through a dispatcher: `p` checked on `img`, then
/// the kernel on a device or `cpu` on the host.
pub(crate) fn dispatch<D: Dispatch + ?Sized, P: PixelKernel, T: Sample>(
    d: &D,
    p: &P,
    img: &Image<T>,
    cpu: impl FnOnce() -> Result<Image<T>>,
) -> Result<(Image<T>, RunReport)> {
    p.check(img.channels(), T::TYPE)?;
    let shape = Shape::new(img.width(), img.height(), img.channels(), T::TYPE);
    crate::ops::dispatch(
        d,
        P::spec(),
        &shape,
        |dev: &Dev, spec| device::run(d.programs(), dev, spec, img, p),
        cpu,
    )
}

/// The `run_host` and `run_device` methods of a per-pixel operation's
/// [`crate::ops::StageOp`]: [`run_host`] and [`run_stage`].
macro_rules! stage_arms {
    () => {
        fn run_host(
            &self,
            d: &dyn $crate::ops::Dispatch,
            input: $crate::image::DynImage,
            record: &mut $crate::ops::stage::StageRecord,
        ) -> $crate::error::Result<$crate::image::DynImage> {
            $crate::ops::pixel_stage::run_host(self, d, input, record)
        }

        fn run_device(
            &self,
            cx: &$crate::ops::work::Chain<'_>,
            forced: Option<&str>,
            input: $crate::ops::work::ChainInput<'_>,
            record: &mut $crate::ops::stage::StageRecord,
        ) -> $crate::error::Result<$crate::ops::work::Work> {
            $crate::ops::pixel_stage::run_stage(self, cx, forced, input, record)
        }
    };
}
pub(crate) use stage_arms;

/// The host side of a per-pixel operation, beside its [`PixelKernel`]:
/// its call through a dispatcher (which [`run_host`] also runs), and for
/// tuning and benches the case's parameters, the reference and the CPU
/// path.
pub trait PixelOp: PixelKernel + Copy {
    /// The tolerance the CPU path is held to (in units of full scale).
    const CPU_TOLERANCE: f32;

    /// The tuning case's parameters for samples of `sample`.
    fn tuning(sample: SampleType) -> Self;

    /// The reference result.
    fn reference<T: Sample>(&self, img: &Image<T>) -> Result<Image<f32>>;

    /// The rayon path.
    fn cpu<T: Sample>(&self, img: &Image<T>) -> Result<Image<T>>;

    /// The operation's host-in, host-out call on `d`.
    fn call<T: Sample>(&self, d: &dyn Dispatch, img: &Image<T>) -> Result<(Image<T>, RunReport)>;
}

/// The stage's host arm ([`crate::ops::StageOp::run_host`]): `p`'s call
/// on the image, whatever its sample type.
pub(crate) fn run_host<P: PixelOp>(
    p: &P,
    d: &dyn Dispatch,
    input: DynImage,
    record: &mut StageRecord,
) -> Result<DynImage> {
    let (img, r) = match &input {
        DynImage::U8(i) => p.call(d, i).map(|(o, r)| (DynImage::U8(o), r))?,
        DynImage::U16(i) => p.call(d, i).map(|(o, r)| (DynImage::U16(o), r))?,
        DynImage::F32(i) => p.call(d, i).map(|(o, r)| (DynImage::F32(o), r))?,
    };
    record.reports.push(r);
    Ok(img)
}

/// A per-pixel operation's tuning and bench entry (see
/// [`crate::ops::tuning`]): its operation's `TUNE`.
pub struct PixelTune<P>(PhantomData<fn() -> P>);

impl<P> PixelTune<P> {
    /// The entry.
    pub const fn new() -> Self {
        PixelTune(PhantomData)
    }
}

impl<P: PixelOp> Tunable for PixelTune<P> {
    fn spec(&self) -> &'static OpSpec {
        P::spec()
    }

    /// The size, then the channels and parameters as the operation checks
    /// them (`wb` and `ccm` take RGB or RGBA only).
    fn takes(&self, sample: SampleType, channels: usize) -> std::result::Result<(), String> {
        // The reason alone: callers wrap it in their own error.
        P::tuning(sample)
            .check(channels, sample)
            .map_err(|e| match e {
                crate::Error::InvalidInput(m) | crate::Error::InvalidArgument(m) => m,
                e => e.to_string(),
            })
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        P::tuning(sample).check(c, sample)?;
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        _: OpParams,
    ) -> Result<Box<dyn Case>> {
        tuning::boxed_case!(sample, T => PixelCase::<T, P>::new(w, h, c)?)
    }
}

/// A per-pixel operation's tuning case: [`tuning::test_image`] and
/// [`PixelOp::tuning`]'s parameters.
pub struct PixelCase<T: Sample, P> {
    img: Image<T>,
    p: P,
    on_device: OnDevice,
}

impl<T: Sample, P: PixelOp> PixelCase<T, P> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        let p = P::tuning(T::TYPE);
        p.check(c, T::TYPE)?;
        Ok(PixelCase {
            img: tuning::test_image(w, h, c)?,
            p,
            on_device: OnDevice::default(),
        })
    }
}

impl<T: Sample, P: PixelOp> Case for PixelCase<T, P> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
    }

    fn cpu_tolerance(&self) -> f32 {
        P::CPU_TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            self.p.reference(&self.img)?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = self.p.call(d, &self.img)?;
        Ok((Box::new(o), r))
    }

    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || self.p.cpu(&self.img).map(drop)))
    }
}
