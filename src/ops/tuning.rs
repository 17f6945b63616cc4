//! What the tuner (`crate::tune`) and the bench (`crate::bench`) need from
//! an operation, so that they walk [`tunables`] and name none: the
//! parameter sets a run measures, the job's shape, the bytes a pixel moves,
//! and a type-erased [`Case`] (a pseudo-random input with its parameters)
//! that runs the host-in, host-out call through a [`Dispatch`], checks the
//! result against the reference, and builds kernel-only and CPU runners.
//!
//! Each operation implements [`Tunable`] once, in its `tune.rs`, and
//! exports it as `TUNE`; [`tunables`] lists them.

use std::any::Any;
use std::time::Duration;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::minmax::MinMax;
pub use crate::ops::work::OnDevice;
use crate::ops::{Dispatch, OpParams, OpSpec, Programs, RunReport, Shape, VariantSpec};

/// What a tuning or bench run asks for beyond the size and the sample
/// type; each operation reads the fields it uses.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// Blur sigmas (both axes), one parameter set each.
    pub sigmas: &'a [f32],
    /// The channels asked for (the output channels, through
    /// [`rgb_channels`], of operations that read one channel).
    pub channels: usize,
    /// A method by name, for operations that have several; `None`: every
    /// method, one parameter set each.
    pub method: Option<&'a str>,
    /// Histogram bins; `None`: the tuned counts (256 and 4096).
    pub bins: Option<usize>,
}

/// A timed runner: one run per call, returning the time to record.
pub type Runner<'a> = Box<dyn FnMut() -> Result<Duration> + 'a>;

/// What a case's call produced (its `Image<T>` or [`MinMax`]); only the
/// case that made it reads it.
pub type Output = Box<dyn Any>;

/// What the reference says, with the rounding allowance of integer outputs
/// against an unrounded reference.
pub enum Expected {
    /// An image at the output type's scale, unrounded, and the allowance.
    Image(Image<f32>, f64),
    /// Per-channel extremes.
    Extremes(MinMax),
    /// Words that must come out bit for bit (a sort's keys and indices).
    Words(Vec<u32>),
    /// An operation's own kind of result (a reduction's sums with their
    /// error bound, a histogram's counts), which only its case reads.
    Custom(Box<dyn Any>),
}

/// An operation's tuning and bench entry (see the module docs).
pub trait Tunable: Sync {
    /// The operation.
    fn spec(&self) -> &'static OpSpec;

    /// The parameter sets a run measures for `ask`, one tuning key each
    /// (default: one, without parameters).
    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        let _ = ask;
        Ok(vec![OpParams::NONE])
    }

    /// `Err(why)` when the operation does not read samples of `sample`:
    /// the tuner leaves it out of "every operation" and refuses it by name.
    fn reads(&self, sample: SampleType) -> std::result::Result<(), String> {
        let _ = sample;
        Ok(())
    }

    /// `Err(why)` when the operation takes no `channels`-sample pixels of
    /// `sample` whatever the size (a white balance on gray): the tuner
    /// leaves the format out of its common formats. Default: [`Self::reads`].
    fn takes(&self, sample: SampleType, channels: usize) -> std::result::Result<(), String> {
        let _ = channels;
        self.reads(sample)
    }

    /// The shape the engine's dispatch sees for a job of `w x h x c` with
    /// `params`, after checking the size, channels and parameters.
    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    /// Bytes the operation must read plus write per pixel, for samples of
    /// `sample` bytes and `channels` per pixel (the one-read, one-write
    /// minimum for multi-pass operations, so GB/s is an effective figure
    /// against the copy). Default: one read and one write of the pixel.
    fn bytes_per_pixel(&self, sample: usize, channels: usize) -> usize {
        2 * sample * channels
    }

    /// The sigma a tuning record carries for `params`, if any.
    fn sigma(&self, params: &OpParams) -> Option<f32> {
        let _ = params;
        None
    }

    /// A case of `sample` at `w x h x c` with `params` (as
    /// [`Tunable::params`] made them): its input is [`test_image`].
    fn case(
        &self,
        sample: SampleType,
        size: (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>>;
}

/// `Ok(Box<dyn Case>)` of `$case`, built with the type name `$t` bound to
/// the Rust type of `$sample` (u8, u16 or f32): each operation's
/// [`Tunable::case`] is one generic constructor over the three.
macro_rules! boxed_case {
    ($sample:expr, $t:ident => $case:expr) => {
        Ok(match $sample {
            $crate::image::SampleType::U8 => {
                type $t = u8;
                Box::new($case) as Box<dyn $crate::ops::tuning::Case>
            }
            $crate::image::SampleType::U16 => {
                type $t = u16;
                Box::new($case)
            }
            $crate::image::SampleType::F32 => {
                type $t = f32;
                Box::new($case)
            }
        })
    };
}
pub(crate) use boxed_case;

/// One request to gate and time: an input and its parameters.
pub trait Case {
    /// The shape the engine's dispatch sees for it.
    fn shape(&self) -> Shape;

    /// The tolerance the CPU path is held to (in units of full scale).
    fn cpu_tolerance(&self) -> f32 {
        0.0
    }

    /// The reference result.
    fn reference(&self) -> Result<Expected>;

    /// The host-in, host-out call on `d` (which may force the variant).
    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)>;

    /// `Err(where and by how much)` when `got` is further from `want` than
    /// `tolerance` (in units of the type's full scale). Default:
    /// [`check_output`], for images and extremes.
    fn check(
        &self,
        got: &Output,
        want: &Expected,
        tolerance: f32,
    ) -> std::result::Result<(), String> {
        check_output(got, want, tolerance, self.shape().sample)
    }

    /// A kernel-only runner of device variant `spec` on data already on
    /// `dev` (uploaded once per case), returning the kernels' device time.
    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>>;

    /// A runner of the rayon CPU path, returning its wall time. An error
    /// building it is the bench row's; an error running it ends the bench.
    fn cpu_runner(&self) -> Result<Runner<'_>>;
}

/// Every operation's entry, in [`crate::ops::OPERATIONS`] order.
pub fn tunables() -> impl Iterator<Item = &'static dyn Tunable> {
    crate::ops::OPERATIONS.iter().map(|o| o.tune)
}

/// The entries of the operations called `names`, in that order (every
/// operation when empty); an unknown name is an error that lists the known.
pub fn selected(names: &[String]) -> Result<Vec<&'static dyn Tunable>> {
    if names.is_empty() {
        return Ok(tunables().collect());
    }
    names
        .iter()
        .map(|n| {
            tunables().find(|t| t.spec().name == n).ok_or_else(|| {
                let known: Vec<&str> = tunables().map(|t| t.spec().name).collect();
                Error::arg(format!(
                    "unknown operation '{n}'; known: {}",
                    known.join(", ")
                ))
            })
        })
        .collect()
}

/// `op`'s entry, or [`Error::Unsupported`] for an operation without one.
pub fn tunable(op: &OpSpec) -> Result<&'static dyn Tunable> {
    tunables()
        .find(|t| t.spec().name == op.name)
        .ok_or_else(|| Error::Unsupported {
            op: op.name.into(),
            variant: "-".into(),
            reason: "the operation is not in the registry (ops::OPERATIONS)".into(),
        })
}

/// The output channels of operations that read one channel and write a
/// colour pixel, for a configured channel count: 3 when 3, else 4.
pub fn rgb_channels(channels: usize) -> usize {
    if channels == 3 {
        3
    } else {
        4
    }
}

/// The common shape of a [`Case`]: a [`test_image`] of `T`, the
/// operation's parameters (`()` where it has none), and the input's upload,
/// made once for the kernel-only runs. An operation aliases it and
/// implements [`Case`] on the alias.
pub struct ImageCase<T: Sample, P> {
    /// The input.
    pub img: Image<T>,
    /// The operation's parameters.
    pub params: P,
    /// The input on the device, once a kernel-only runner asked for it.
    pub on_device: OnDevice,
}

impl<T: Sample, P> ImageCase<T, P> {
    /// The case of a `w x h x c` [`test_image`] with `params`.
    pub fn new(w: usize, h: usize, c: usize, params: P) -> Result<Self> {
        Ok(ImageCase {
            img: test_image(w, h, c)?,
            params,
            on_device: OnDevice::default(),
        })
    }
}

/// A reproducible pseudo-random image (xorshift), spanning the type's range.
pub fn test_image<T: Sample>(width: usize, height: usize, channels: usize) -> Result<Image<T>> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let full = T::TYPE.full_scale();
    Image::from_fn(width, height, channels, |_, _, _| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        T::from_f32((s >> 40) as f32 / (1u64 << 24) as f32 * full)
    })
}

/// An image widened to f32 without scaling.
pub fn as_f32<T: Sample>(img: &Image<T>) -> Result<Image<f32>> {
    Image::from_fn(img.width(), img.height(), img.channels(), |x, y, c| {
        img.get(x, y, c).to_f32()
    })
}

/// Scales every sample by `full`, clamping to `0..=full` when `clamp`.
pub fn scale(img: &mut Image<f32>, full: f32, clamp: bool) {
    for y in 0..img.height() {
        for v in img.row_mut(y) {
            *v *= full;
            if clamp {
                *v = v.clamp(0.0, full);
            }
        }
    }
}

/// The rounding allowance of `T`'s outputs against an unrounded reference.
pub fn rounding<T: Sample>() -> f64 {
    if T::TYPE == SampleType::F32 {
        0.0
    } else {
        0.5
    }
}

/// [`Case::check`]'s default: an `Image<u8>`, `Image<u16>` or `Image<f32>`
/// against [`Expected::Image`] at the image's own full scale, or a
/// [`MinMax`] against [`Expected::Extremes`] at `sample`'s.
pub fn check_output(
    got: &Output,
    want: &Expected,
    tolerance: f32,
    sample: SampleType,
) -> std::result::Result<(), String> {
    fn image<T: Sample>(
        got: &Output,
        want: &Image<f32>,
        rounding: f64,
        tolerance: f32,
    ) -> Option<std::result::Result<(), String>> {
        let limit = tolerance as f64 * T::TYPE.full_scale() as f64 + rounding;
        let g = got.downcast_ref::<Image<T>>()?;
        Some(check_image(g, want, limit, tolerance))
    }
    match want {
        Expected::Image(w, rounding) => image::<u8>(got, w, *rounding, tolerance)
            .or_else(|| image::<u16>(got, w, *rounding, tolerance))
            .or_else(|| image::<f32>(got, w, *rounding, tolerance))
            .unwrap_or_else(|| Err(MISMATCH.into())),
        Expected::Extremes(w) => match got.downcast_ref::<MinMax>() {
            Some(g) => check_extremes(g, w, tolerance as f64 * sample.full_scale() as f64),
            None => Err(MISMATCH.into()),
        },
        Expected::Words(_) | Expected::Custom(_) => Err(MISMATCH.into()),
    }
}

/// [`Case::check`]'s answer when the result and the reference differ in kind.
pub const MISMATCH: &str = "the call returned another kind of result than the reference";

fn check_image<T: Sample>(
    g: &Image<T>,
    w: &Image<f32>,
    limit: f64,
    tolerance: f32,
) -> std::result::Result<(), String> {
    let (gs, ws) = (
        (g.width(), g.height(), g.channels()),
        (w.width(), w.height(), w.channels()),
    );
    if gs != ws {
        return Err(format!("output shape {gs:?}, reference {ws:?}"));
    }
    for y in 0..g.height() {
        for (i, (a, b)) in g.row(y).iter().zip(w.row(y)).enumerate() {
            let (a, b) = (a.to_f32() as f64, *b as f64);
            let d = (a - b).abs();
            // NaN differences fail too.
            if d.is_nan() || d > limit {
                let c = g.channels();
                return Err(format!(
                    "wrong result at pixel ({}, {y}) channel {}: {a}, reference {b} \
                     (tolerance {tolerance} of full scale)",
                    i / c,
                    i % c
                ));
            }
        }
    }
    Ok(())
}

fn check_extremes(g: &MinMax, w: &MinMax, limit: f64) -> std::result::Result<(), String> {
    for c in 0..w.channels {
        for (what, a, b) in [("min", g.min[c], w.min[c]), ("max", g.max[c], w.max[c])] {
            let d = (a as f64 - b as f64).abs();
            if !(d <= limit || a == b) {
                return Err(format!("wrong {what} of channel {c}: {a}, reference {b}"));
            }
        }
    }
    Ok(())
}

/// `spec.check` of `shape` on `dev` as [`Error::Unsupported`] of `op`.
pub fn check_variant(op: &OpSpec, spec: &VariantSpec, shape: &Shape, local_mem: u64) -> Result<()> {
    spec.check(shape, local_mem)
        .map_err(|reason| Error::Unsupported {
            op: op.name.into(),
            variant: spec.name.into(),
            reason,
        })
}

/// A runner timing `once` by wall clock.
pub fn wall<'a>(mut once: impl FnMut() -> Result<()> + 'a) -> Runner<'a> {
    Box::new(move || {
        let t = std::time::Instant::now();
        once()?;
        Ok(t.elapsed())
    })
}
