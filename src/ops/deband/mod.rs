//! `deband`: banding reduction, f3kdb's algorithm (the AviUtl banding filter
//! that f3kdb ported), with a deterministic counter-based random generator.
//!
//! For every pixel a hash of `(seed, x, y)` draws offsets within
//! `±range`, which pick 2 reference pixels (`samples=2`: f3kdb's column
//! mode, `(x, y±a)`) or 4 (`samples=4`: f3kdb's square mode, `(x±a, y±b)`
//! and `(x±b, y∓a)`). Coordinates outside the image are clamped to its
//! edge (replicate). In each plane, when every reference differs from the
//! pixel by less than `threshold`, the pixel becomes the references'
//! average; otherwise it is kept. Then uniform grain in `±grain` (another
//! hash, per plane) is added to every pixel, at a finer step than the
//! output's, and the result is rounded and saturated.
//!
//! `threshold` and `grain` are in 8-bit levels (1/255 of full scale), so the
//! same numbers mean the same on u8 and u16. `space=rgb` filters the
//! colour channels as they are; `space=ycc` converts RGB to 16-bit
//! YCbCr (`short y, cb, cr`, the seed's `PIXEL_YC`, 128 steps per level),
//! filters there and converts back. Alpha passes through.
//!
//! Every step that decides an output sample is integer arithmetic, written
//! the same way here and in `cl/deband/deband.cl`, so one seed gives
//! byte-identical results on the CPU path and on every OpenCL variant.
//! f32 images are refused: their averages and sums would depend on the
//! device's rounding of denormals and on contraction, which integers avoid.

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod math;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use std::fmt;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpSpec, RunReport, Shape, TuneBucket};
pub use api::DebandExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "deband",
    sources: &[crate::cl_source!("deband/deband.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["rgba8", "direct", "ycc_short4", "ycc_soa", "ycc_short3"],
    cpu_device_order: &["direct", "rgba8", "ycc_soa", "ycc_short4", "ycc_short3"],
    prefer: None,
    // Integer types only: no NaN or infinity can reach it.
    spreads_nonfinite: false,
    // The output stays in the input type's range.
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::DEBAND],
    tune: &TUNE,
};

/// The largest `range` accepted, in pixels (f3kdb's limit).
pub const MAX_RANGE: u32 = 255;

/// The largest `threshold` and `grain` accepted, in 8-bit levels.
pub const MAX_LEVELS: f32 = 255.0;

/// Where the filter compares and averages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Space {
    /// The colour channels as they are.
    #[default]
    Rgb,
    /// 16-bit YCbCr (BT.601 full range, 128 steps per 8-bit level), from
    /// and back to RGB; needs 3 or 4 channels.
    Ycc,
}

impl Space {
    /// The spec word.
    pub fn name(self) -> &'static str {
        match self {
            Space::Rgb => "rgb",
            Space::Ycc => "ycc",
        }
    }

    /// The space called `s`.
    pub fn parse(s: &str) -> Option<Space> {
        match s {
            "rgb" => Some(Space::Rgb),
            "ycc" => Some(Space::Ycc),
            _ => None,
        }
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The parameters of `deband` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DebandParams {
    /// The largest reference offset, in pixels (1..=[`MAX_RANGE`]).
    pub range: u32,
    /// A reference closer than this to the pixel (in 8-bit levels) counts
    /// as banding; 0 disables the averaging.
    pub threshold: f32,
    /// Amplitude of the uniform grain, in 8-bit levels; 0 adds none.
    pub grain: f32,
    /// The random generator's seed.
    pub seed: u32,
    /// Where to filter.
    pub space: Space,
    /// Reference pixels per pixel: 2 or 4.
    pub samples: u32,
}

impl Default for DebandParams {
    /// f3kdb's range and square mode, the threshold and grain.
    fn default() -> Self {
        DebandParams {
            range: 15,
            threshold: 4.0,
            grain: 1.0,
            seed: 0,
            space: Space::Rgb,
            samples: 4,
        }
    }
}

impl TuneBucket for DebandParams {
    /// The space picks the variants; the sample count changes the reads.
    fn bucket_words(&self) -> (&'static str, &'static str) {
        let samples = if self.samples == 2 {
            "samples2"
        } else {
            "samples4"
        };
        (self.space.name(), samples)
    }
}

impl DebandParams {
    /// Checks every parameter (without an image).
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_RANGE).contains(&self.range) {
            return Err(Error::arg(format!(
                "deband range must be 1..={MAX_RANGE} pixels, got {}",
                self.range
            )));
        }
        for (what, v) in [("threshold", self.threshold), ("grain", self.grain)] {
            if !(0.0..=MAX_LEVELS).contains(&v) {
                return Err(Error::arg(format!(
                    "deband {what} must be a number of 8-bit levels in 0..={MAX_LEVELS}, got {v}"
                )));
            }
        }
        if self.samples != 2 && self.samples != 4 {
            return Err(Error::arg(format!(
                "deband samples must be 2 or 4, got {}",
                self.samples
            )));
        }
        Ok(())
    }

    /// Checks the parameters against an image of `channels` samples of `ty`.
    pub fn check(&self, ty: SampleType, channels: usize) -> Result<()> {
        self.validate()?;
        if ty == SampleType::F32 {
            return Err(f32_refused());
        }
        if self.space == Space::Ycc && channels < 3 {
            return Err(Error::InvalidArgument(format!(
                "deband space=ycc needs an RGB or RGBA image, this one has {channels} channel(s)"
            )));
        }
        Ok(())
    }
}

/// The error for f32 images, which `deband` does not read.
pub fn f32_refused() -> Error {
    Error::InvalidArgument(
        "deband reads u8 and u16 images (its integer arithmetic is what makes every \
         device's result byte-identical); convert f32 first, for example convert=u16"
            .into(),
    )
}

/// The integer form of the parameters for one sample type: what the CPU
/// path, the reference and the kernels compute with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// The offsets' bound in pixels.
    pub range: i32,
    /// The threshold in the filtered plane's steps.
    pub threshold: i32,
    /// The grain's amplitude in fine steps ([`math::RGB_FINE_SHIFT`] fraction bits in `space=rgb`).
    pub grain: i32,
    /// The seed, already hashed once ([`math::seed_key`]).
    pub key: u32,
    /// 2 or 4.
    pub samples: i32,
    /// Colour planes filtered (1 gray, 3 colour; alpha is copied).
    pub planes: usize,
    /// The largest sample value of the input type.
    pub full: i32,
}

impl Levels {
    /// The integer levels of `p` for samples of `ty` in `channels`-channel images.
    pub fn new(p: &DebandParams, ty: SampleType, channels: usize) -> Result<Levels> {
        p.check(ty, channels)?;
        let full = ty.full_scale() as i32;
        // Plane steps per 8-bit level, and fine steps per plane step.
        let (steps, fine) = match p.space {
            Space::Rgb => (f64::from(full) / 255.0, f64::from(1 << math::RGB_FINE_SHIFT)),
            Space::Ycc => (f64::from(math::YCC_LEVEL), 1.0),
        };
        // Rounded once, here, in f64: the kernels receive the integers.
        let round = |v: f32, k: f64| (f64::from(v) * k).round() as i32;
        Ok(Levels {
            range: p.range as i32,
            threshold: round(p.threshold, steps),
            grain: round(p.grain, steps * fine),
            key: math::seed_key(p.seed),
            samples: p.samples as i32,
            planes: if channels == 1 { 1 } else { 3 },
            full,
        })
    }
}

/// The shape the dispatch sees: the image's, with the parameters (which
/// decide between the RGB and the YCbCr variants).
pub fn shape_of<T: Sample>(img: &Image<T>, p: &DebandParams) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
        .with_params(crate::ops::OpParams::new(*p))
}
