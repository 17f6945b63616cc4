//! `demosaic`: Bayer colour filter array (CFA) to RGB or RGBA.
//!
//! Patterns are named by the sensor's top-left 2x2 block in reading order, as
//! GenICam PFNC names them: [`Pattern::Rggb`] has R at (0, 0), G at (1, 0)
//! and (0, 1), B at (1, 1). OpenCV names its codes after the second row's
//! second and third pixels, so OpenCV's `COLOR_BayerBG2RGB` reads an RGGB
//! sensor (`docs/KERNELS.md` has the table).
//!
//! Each sample is first levelled, `(raw - black) * gain[c] * full / (white - black)`,
//! where `white = 2^bits - 1` and `full` is the output type's full scale
//! (255, 65535 or 1.0), then interpolated in f32 with one of three
//! [`Method`]s, and finally rounded and saturated like `convert_T_sat_rte`
//! (f32 output is not clamped). Past the image edges the CFA is mirrored
//! without repeating the edge sample (reflect-101: `cb|abc|ba`), which keeps
//! the pattern's parity, so borders get neither dark nor tinted pixels.
//!
//! Inputs ([`Raw`]): 8-bit images, 8..16-bit samples in `u16` containers, and
//! the two packed 12-bit layouts, which the OpenCL variants unpack on the device.

pub mod api;
pub mod cpu;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use std::fmt;

use crate::backend::Dev;
use crate::error::{Error, Result};
pub use crate::image::bayer::{check_cfa_size, Packing, Pattern, Raw};
pub(crate) use crate::image::bayer::{B, G, R};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpParams, OpSpec, RunReport, Shape};
pub use api::DemosaicExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "demosaic",
    sources: &[crate::cl_source!("demosaic/demosaic.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["tile", "direct"],
    cpu_device_order: &["direct", "tile"],
    prefer: None,
    // Reads integer frames only: nothing to be non-finite.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::DEMOSAIC],
    tune: &TUNE,
};

/// How missing colours are interpolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Averages of the nearest samples of each colour (3x3).
    Bilinear,
    /// Malvar, He and Cutler (ICASSP 2004): bilinear plus a scaled Laplacian
    /// of the site's own colour (fixed 5x5 linear filters).
    #[default]
    Mhc,
    /// Edge-directed: Hamilton-Adams green, horizontal and vertical
    /// estimates blended by inverse squared gradients (so the result varies
    /// continuously with the data), then red and blue as green plus
    /// interpolated colour differences (7x7 neighbourhood).
    Edge,
}

impl Method {
    /// All three.
    pub const ALL: [Method; 3] = [Method::Bilinear, Method::Mhc, Method::Edge];

    /// The name used in specs and docs.
    pub fn name(self) -> &'static str {
        match self {
            Method::Bilinear => "bilinear",
            Method::Mhc => "mhc",
            Method::Edge => "edge",
        }
    }

    /// How far (in pixels) the method reads around a pixel.
    pub fn radius(self) -> usize {
        match self {
            Method::Bilinear => 1,
            Method::Mhc => 2,
            Method::Edge => 3,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Method {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::arg(format!(
                    "unknown demosaic method '{s}'; use bilinear, mhc or edge"
                ))
            })
    }
}

/// Parameters of a demosaic.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DemosaicParams {
    /// The sensor's pattern.
    pub pattern: Pattern,
    /// The interpolation.
    pub method: Method,
    /// Black level in input units (subtracted first); 0 by default.
    pub black: f32,
    /// White-balance gains for red, green and blue; 1 by default.
    pub gains: [f32; 3],
    /// Output channels: 3 (RGB) or 4 (RGBA, alpha at full scale).
    pub channels: usize,
    /// Significant bits of `u16` input (8..=16), which set the white level
    /// `2^bits - 1`; `None` means the container's (8, 16, or 12 for packed).
    pub bits: Option<u32>,
}

impl Default for DemosaicParams {
    fn default() -> Self {
        DemosaicParams {
            pattern: Pattern::Rggb,
            method: Method::Mhc,
            black: 0.0,
            gains: [1.0; 3],
            channels: 3,
            bits: None,
        }
    }
}

impl DemosaicParams {
    /// Default parameters for `pattern` and `method`.
    pub fn new(pattern: Pattern, method: Method) -> Self {
        DemosaicParams {
            pattern,
            method,
            ..Default::default()
        }
    }

    /// The levelling for `raw` into an output of type `out`: checks the
    /// parameters against the input.
    pub fn levels(&self, raw: &Raw<'_>, out: SampleType) -> Result<Levels> {
        self.levels_for(raw.max_bits(), matches!(raw, Raw::U16(_)), out)
    }

    /// [`DemosaicParams::levels`] for a frame whose samples hold at most
    /// `max` bits, `wide` when they sit in 16-bit containers.
    pub(crate) fn levels_for(&self, max: u32, wide: bool, out: SampleType) -> Result<Levels> {
        if !matches!(self.channels, 3 | 4) {
            return Err(Error::arg(format!(
                "demosaic outputs 3 or 4 channels, not {}",
                self.channels
            )));
        }
        let bits = self.bits.unwrap_or(max);
        let ok = if wide {
            (8..=16).contains(&bits)
        } else {
            bits == max
        };
        if !ok {
            return Err(Error::arg(format!(
                "bits={bits} does not fit this input (8-bit frames have 8, packed 12-bit \
                 frames 12, 16-bit containers 8..16)"
            )));
        }
        let white = ((1u32 << bits) - 1) as f32;
        if !self.black.is_finite() || self.black < 0.0 || self.black >= white {
            return Err(Error::arg(format!(
                "black level {} must be finite, >= 0 and below the white level {white}",
                self.black
            )));
        }
        // The bound keeps every output finite (OpSpec::overflows is false):
        // 65535 * 65536 is far from f32's limit, and no sensor needs more.
        if self.gains.iter().any(|g| !g.is_finite() || *g < 0.0 || *g > MAX_GAIN) {
            return Err(Error::arg(format!(
                "white-balance gains must be finite and within 0..={MAX_GAIN}, got {:?}",
                self.gains
            )));
        }
        let k = out.full_scale() as f64 / (white as f64 - self.black as f64);
        Ok(Levels {
            black: self.black,
            scale: self.gains.map(|g| (g as f64 * k) as f32),
            alpha: out.full_scale(),
        })
    }
}

/// The levelling applied to each raw sample: `(raw - black) * scale[colour]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Levels {
    /// Subtracted first, in input units.
    pub black: f32,
    /// Per colour (R, G, B): gain times output full scale over `white - black`.
    pub scale: [f32; 3],
    /// The alpha value of 4-channel outputs (the output's full scale).
    pub alpha: f32,
}

impl Levels {
    /// The kernels' `float4` arguments: (black, alpha, 0, 0) and the scales.
    pub fn kernel_args(&self) -> [[f32; 4]; 2] {
        [
            [self.black, self.alpha, 0.0, 0.0],
            [self.scale[0], self.scale[1], self.scale[2], 0.0],
        ]
    }
}

/// Samples an RGB(A) image through a Bayer pattern: the 1-channel CFA a
/// sensor with that pattern would record (alpha is ignored).
pub fn mosaic<T: Sample>(rgb: &Image<T>, pattern: Pattern) -> Result<Image<T>> {
    if rgb.channels() < 3 {
        return Err(Error::arg(format!(
            "mosaic takes an RGB or RGBA image, got {} channel(s)",
            rgb.channels()
        )));
    }
    Image::from_fn(rgb.width(), rgb.height(), 1, |x, y, _| {
        rgb.get(x, y, pattern.colour(x, y))
    })
}

/// The largest white-balance gain.
pub const MAX_GAIN: f32 = 65536.0;

/// PSNR in dB of 8-bit RGB(A) `got` against `want` over the first three
/// channels, leaving out `border` pixels at each edge. Equal images give
/// infinity.
pub fn psnr(got: &Image<u8>, want: &Image<u8>, border: usize) -> Result<f64> {
    let (w, h) = (want.width(), want.height());
    if (got.width(), got.height()) != (w, h) || got.channels() < 3 || want.channels() < 3 {
        return Err(Error::arg(format!(
            "psnr compares RGB images of one size, got {:?} and {:?}",
            got, want
        )));
    }
    if 2 * border >= w || 2 * border >= h {
        return Err(Error::arg(format!(
            "a border of {border} leaves nothing of a {w}x{h} image"
        )));
    }
    let mut se = 0f64;
    let mut n = 0usize;
    for y in border..h - border {
        for x in border..w - border {
            for c in 0..3 {
                let d = got.get(x, y, c) as f64 - want.get(x, y, c) as f64;
                se += d * d;
                n += 1;
            }
        }
    }
    let mse = se / n as f64;
    Ok(10.0 * (255.0f64 * 255.0 / mse).log10())
}

pub(crate) mod device;
