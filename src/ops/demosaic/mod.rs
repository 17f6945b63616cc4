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

mod api;
pub mod cpu;
pub mod reference;
pub mod stage;
mod tune;
pub mod variants;

use std::fmt;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpParams, OpSpec, RunReport, Shape};
pub use api::DemosaicExt;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "demosaic",
    sources: &[crate::cl_source!("demosaic/demosaic.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["tile", "direct"],
    cpu_device_order: &["direct", "tile"],
    prefer: None,
};

/// The colour of a CFA site.
pub(crate) const R: usize = 0;
/// Green.
pub(crate) const G: usize = 1;
/// Blue.
pub(crate) const B: usize = 2;

/// A Bayer pattern, named by the top-left 2x2 block in reading order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// R G / G B.
    #[default]
    Rggb,
    /// B G / G R.
    Bggr,
    /// G R / B G.
    Grbg,
    /// G B / R G.
    Gbrg,
}

impl Pattern {
    /// All four, in the order of their names above.
    pub const ALL: [Pattern; 4] = [Pattern::Rggb, Pattern::Bggr, Pattern::Grbg, Pattern::Gbrg];

    /// The column and row (0 or 1) of the red site in the 2x2 block.
    pub fn red_at(self) -> (usize, usize) {
        match self {
            Pattern::Rggb => (0, 0),
            Pattern::Bggr => (1, 1),
            Pattern::Grbg => (1, 0),
            Pattern::Gbrg => (0, 1),
        }
    }

    /// The colour (0 red, 1 green, 2 blue) of the site at (x, y).
    pub fn colour(self, x: usize, y: usize) -> usize {
        let (rx, ry) = self.red_at();
        match ((x & 1) == rx, (y & 1) == ry) {
            (true, true) => R,
            (false, false) => B,
            _ => G,
        }
    }

    /// The name used in specs and docs (`rggb`...).
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Rggb => "rggb",
            Pattern::Bggr => "bggr",
            Pattern::Grbg => "grbg",
            Pattern::Gbrg => "gbrg",
        }
    }

    /// The OpenCV colour-conversion code that reads this sensor
    /// (`cv::COLOR_Bayer..2RGB`): OpenCV names patterns by the second row's
    /// second and third pixels.
    pub fn opencv_code(self) -> &'static str {
        match self {
            Pattern::Rggb => "COLOR_BayerBG2RGB",
            Pattern::Bggr => "COLOR_BayerRG2RGB",
            Pattern::Grbg => "COLOR_BayerGB2RGB",
            Pattern::Gbrg => "COLOR_BayerGR2RGB",
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Pattern {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::arg(format!(
                    "unknown Bayer pattern '{s}'; use rggb, bggr, grbg or gbrg \
                     (named by the top-left 2x2 block)"
                ))
            })
    }
}

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

/// The two packed 12-bit layouts: two pixels in three bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Packing {
    /// GenICam PFNC `BayerRG12p` (and `Mono12p`), LSB first:
    /// `p0 = b0 | (b1 & 0x0F) << 8`, `p1 = b1 >> 4 | b2 << 4`.
    Pfnc12p,
    /// GigE Vision `BayerRG12Packed` (`Mono12Packed`, Basler's layout):
    /// `p0 = b0 << 4 | (b1 & 0x0F)`, `p1 = b2 << 4 | b1 >> 4`.
    GigE12Packed,
}

impl Packing {
    /// Bytes of a `width x height` frame (`width * height` must be even).
    pub fn frame_bytes(width: usize, height: usize) -> usize {
        width * height / 2 * 3
    }

    /// Unpacks a whole frame of `width x height` 12-bit samples.
    ///
    /// The byte length must be exactly [`Packing::frame_bytes`]; anything
    /// else is [`Error::InvalidInput`] naming both sizes.
    pub fn unpack(self, data: &[u8], width: usize, height: usize) -> Result<Image<u16>> {
        check_cfa_size(width, height)?;
        let need = Packing::frame_bytes(width, height);
        if data.len() != need {
            return Err(Error::InvalidInput(format!(
                "a {width}x{height} 12-bit packed frame has {need} bytes, got {}",
                data.len()
            )));
        }
        let mut out = Vec::with_capacity(width * height);
        for b in data.chunks_exact(3) {
            out.extend_from_slice(&self.unpack_pair([b[0], b[1], b[2]]));
        }
        Image::from_vec(width, height, 1, out)
    }

    /// The two samples in one 3-byte group.
    pub fn unpack_pair(self, b: [u8; 3]) -> [u16; 2] {
        let [b0, b1, b2] = b.map(u16::from);
        match self {
            Packing::Pfnc12p => [b0 | (b1 & 0x0F) << 8, b1 >> 4 | b2 << 4],
            Packing::GigE12Packed => [b0 << 4 | (b1 & 0x0F), b2 << 4 | b1 >> 4],
        }
    }

    /// Packs 12-bit samples (`samples.len()` even; values above 4095 are
    /// masked), the inverse of [`Packing::unpack`], for tests and tools.
    pub fn pack(self, samples: &[u16]) -> Result<Vec<u8>> {
        if !samples.len().is_multiple_of(2) {
            return Err(Error::arg(format!(
                "12-bit packing takes pairs of samples, got {}",
                samples.len()
            )));
        }
        let mut out = Vec::with_capacity(samples.len() / 2 * 3);
        for p in samples.chunks_exact(2) {
            let (a, b) = (p[0] & 0xFFF, p[1] & 0xFFF);
            out.extend_from_slice(&match self {
                Packing::Pfnc12p => [a as u8, ((a >> 8) | (b & 0x0F) << 4) as u8, (b >> 4) as u8],
                Packing::GigE12Packed => [
                    (a >> 4) as u8,
                    ((a & 0x0F) | (b & 0x0F) << 4) as u8,
                    (b >> 4) as u8,
                ],
            });
        }
        Ok(out)
    }

    /// The name used in docs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Pfnc12p => "12p",
            Packing::GigE12Packed => "12packed",
        }
    }
}

/// A raw Bayer frame.
#[derive(Debug, Clone, Copy)]
pub enum Raw<'a> {
    /// 8-bit samples (white level 255); 1 channel.
    U8(&'a Image<u8>),
    /// 8..16-bit samples in 16-bit containers (white level from
    /// [`DemosaicParams::bits`], default 16); 1 channel.
    U16(&'a Image<u16>),
    /// 12-bit samples packed two in three bytes (white level 4095).
    Packed12 {
        /// The frame's bytes, exactly [`Packing::frame_bytes`] of them.
        data: &'a [u8],
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
        /// The layout.
        packing: Packing,
    },
}

/// Checks the CFA size rules: non-empty, even width and height, `int`-indexable.
pub fn check_cfa_size(width: usize, height: usize) -> Result<()> {
    if width < 2 || height < 2 || !width.is_multiple_of(2) || !height.is_multiple_of(2) {
        return Err(Error::InvalidInput(format!(
            "a Bayer frame has an even width and height of at least 2, got {width}x{height}"
        )));
    }
    // 4 output channels must fit the image shape rules (< 2^31 samples).
    crate::image::check_shape(width, height, 4).map(|_| ())
}

impl Raw<'_> {
    /// Width and height.
    pub fn size(&self) -> (usize, usize) {
        match self {
            Raw::U8(i) => (i.width(), i.height()),
            Raw::U16(i) => (i.width(), i.height()),
            Raw::Packed12 { width, height, .. } => (*width, *height),
        }
    }

    /// The sample type a kernel sees (packed frames are bytes).
    pub fn sample(&self) -> SampleType {
        match self {
            Raw::U16(_) => SampleType::U16,
            _ => SampleType::U8,
        }
    }

    /// The largest bit depth the input can hold.
    fn max_bits(&self) -> u32 {
        match self {
            Raw::U8(_) => 8,
            Raw::U16(_) => 16,
            Raw::Packed12 { .. } => 12,
        }
    }

    /// Checks sizes, channels and byte lengths.
    pub fn validate(&self) -> Result<()> {
        let (w, h) = self.size();
        check_cfa_size(w, h)?;
        let channels = match self {
            Raw::U8(i) => i.channels(),
            Raw::U16(i) => i.channels(),
            Raw::Packed12 { data, .. } => {
                let need = Packing::frame_bytes(w, h);
                if data.len() != need {
                    return Err(Error::InvalidInput(format!(
                        "a {w}x{h} 12-bit packed frame has {need} bytes, got {}",
                        data.len()
                    )));
                }
                1
            }
        };
        if channels != 1 {
            return Err(Error::InvalidInput(format!(
                "a Bayer frame has 1 channel, got {channels}"
            )));
        }
        Ok(())
    }

    /// The raw sample values as f32, row by row (packed frames unpacked).
    pub fn values(&self) -> Result<Vec<f32>> {
        self.validate()?;
        Ok(match self {
            Raw::U8(i) => i.rows().flatten().map(|&v| v as f32).collect(),
            Raw::U16(i) => i.rows().flatten().map(|&v| v as f32).collect(),
            Raw::Packed12 {
                data,
                width,
                height,
                packing,
            } => packing
                .unpack(data, *width, *height)?
                .into_vec()
                .into_iter()
                .map(|v| v as f32)
                .collect(),
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
        if self.gains.iter().any(|g| !g.is_finite() || *g < 0.0) {
            return Err(Error::arg(format!(
                "white-balance gains must be finite and >= 0, got {:?}",
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

/// Device passes: upload a raw frame (packed frames as their bytes) and
/// demosaic it into a device image.
#[cfg(feature = "opencl")]
pub(crate) mod device {
    use std::time::Duration;

    use super::{DemosaicParams, Levels, Packing, Raw, SPEC};
    use crate::backend::opencl::{Arg, DeviceBuffer, DeviceImage};
    use crate::backend::Dev;
    use crate::error::{Error, Result};
    use crate::image::{Image, Sample, SampleType};
    use crate::ops::Programs;
    use crate::ops::{OpParams, Shape, VariantSpec};

    /// A raw frame on the device.
    pub(crate) enum DeviceRaw {
        /// 8-bit samples.
        U8(DeviceImage<u8>),
        /// 16-bit containers.
        U16(DeviceImage<u16>),
        /// Packed 12-bit bytes.
        Packed {
            bytes: DeviceBuffer<u8>,
            width: usize,
            height: usize,
            packing: Packing,
        },
    }

    impl DeviceRaw {
        /// Uploads `raw` as it is (packed frames stay packed).
        pub(crate) fn upload(dev: &Dev, raw: &Raw<'_>) -> Result<Self> {
            raw.validate()?;
            Ok(match raw {
                Raw::U8(i) => DeviceRaw::U8(DeviceImage::upload(dev, i)?),
                Raw::U16(i) => DeviceRaw::U16(DeviceImage::upload(dev, i)?),
                Raw::Packed12 {
                    data,
                    width,
                    height,
                    packing,
                } => DeviceRaw::Packed {
                    bytes: DeviceBuffer::from_slice(dev, data)?,
                    width: *width,
                    height: *height,
                    packing: *packing,
                },
            })
        }

        /// The most bits a sample holds and whether samples sit in 16-bit
        /// containers (see `DemosaicParams::levels_for`).
        pub(crate) fn depth(&self) -> (u32, bool) {
            match self {
                DeviceRaw::U8(_) => (8, false),
                DeviceRaw::U16(_) => (16, true),
                DeviceRaw::Packed { .. } => (12, false),
            }
        }

        pub(crate) fn size(&self) -> (usize, usize) {
            match self {
                DeviceRaw::U8(i) => (i.width(), i.height()),
                DeviceRaw::U16(i) => (i.width(), i.height()),
                DeviceRaw::Packed { width, height, .. } => (*width, *height),
            }
        }

        fn arg(&self) -> Arg<'_> {
            match self {
                DeviceRaw::U8(i) => Arg::img(i),
                DeviceRaw::U16(i) => Arg::img(i),
                DeviceRaw::Packed { bytes, .. } => Arg::buf(bytes),
            }
        }

        /// The kernel's input type and its `PACKED` option.
        fn build(&self) -> (SampleType, u8) {
            match self {
                DeviceRaw::U8(_) => (SampleType::U8, 0),
                DeviceRaw::U16(_) => (SampleType::U16, 0),
                DeviceRaw::Packed { packing, .. } => (
                    SampleType::U8,
                    match packing {
                        Packing::Pfnc12p => 1,
                        Packing::GigE12Packed => 2,
                    },
                ),
            }
        }
    }

    /// A device frame as a kernel sees it: the buffer, the size, the input
    /// sample type and the `PACKED` option.
    pub(crate) struct RawArg<'a> {
        pub(crate) arg: Arg<'a>,
        pub(crate) width: usize,
        pub(crate) height: usize,
        pub(crate) sample: SampleType,
        pub(crate) packed: u8,
    }

    impl DeviceRaw {
        pub(crate) fn raw_arg(&self) -> RawArg<'_> {
            let (width, height) = self.size();
            let (sample, packed) = self.build();
            RawArg {
                arg: self.arg(),
                width,
                height,
                sample,
                packed,
            }
        }
    }

    /// Runs `spec` on a device frame into `out` (the frame's size, 3 or 4
    /// channels); returns the kernel time. `clamp_hi` saturates f32 output
    /// to `0..clamp_hi` (for pipelines whose stage type is an integer one).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch<U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: RawArg<'_>,
        out: &DeviceImage<U>,
        p: &DemosaicParams,
        lv: &Levels,
        clamp_hi: Option<f32>,
    ) -> Result<Duration> {
        let (w, h) = (input.width, input.height);
        super::check_cfa_size(w, h)?;
        if (out.width(), out.height()) != (w, h) || !matches!(out.channels(), 3 | 4) {
            return Err(Error::arg(format!(
                "demosaic output must be {w}x{h} with 3 or 4 channels, got {}x{}x{}",
                out.width(),
                out.height(),
                out.channels()
            )));
        }
        let shape = Shape::new(w, h, 1, input.sample).with_params(OpParams::Demosaic(*p));
        let (rx, ry) = p.pattern.red_at();
        let mut extra = format!(
            "-DPACKED={} -DTOUT={} -DOUT_FLOAT={} -DMETHOD={} -DRX={rx} -DRY={ry}",
            input.packed,
            U::TYPE.cl_name(),
            (U::TYPE == SampleType::F32) as u8,
            p.method as u8,
        );
        if let (Some(hi), SampleType::F32) = (clamp_hi, U::TYPE) {
            extra.push_str(&format!(" -DCLAMP_HI={hi:?}f"));
        }
        let k = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        let [lev, scale] = lv.kernel_args();
        let ev = dev.launch(
            &k,
            &[w / 2, h / 2],
            &spec.local,
            &[
                input.arg,
                Arg::img(out),
                Arg::int(out.channels())?,
                Arg::int(w)?,
                Arg::int(h)?,
                Arg::F32x4(lev),
                Arg::F32x4(scale),
            ],
        )?;
        Ok(ev.duration()?.unwrap_or_default())
    }

    /// Demosaics a device frame into a float4 working image (RGBA f32, in
    /// the units `lv` levels to, alpha at full scale), the input of the
    /// Gaussian's device passes (`ops::gaussian::device::blur_w`) and of
    /// device-resident pipelines. `p.channels` is ignored; `clamp_hi` as in
    /// [`launch`].
    pub(crate) fn demosaic_w(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceRaw,
        p: &DemosaicParams,
        lv: &Levels,
        clamp_hi: Option<f32>,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = input.size();
        let out = DeviceImage::<f32>::new(dev, w, h, 4)?;
        let p = DemosaicParams { channels: 4, ..*p };
        let kt = launch(progs, dev, spec, input.raw_arg(), &out, &p, lv, clamp_hi)?;
        Ok((out, kt))
    }

    /// Host in, host out.
    pub(crate) fn run<U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        raw: &Raw<'_>,
        p: &DemosaicParams,
        lv: &Levels,
    ) -> Result<(Image<U>, Duration)> {
        let input = DeviceRaw::upload(dev, raw)?;
        if U::TYPE == SampleType::F32 && p.channels == 4 {
            // RGBA f32 is the working image itself.
            let (out, kt) = demosaic_w(progs, dev, spec, &input, p, lv, None)?;
            let boxed: Box<dyn std::any::Any> = Box::new(out.download(dev)?);
            let out = boxed
                .downcast::<Image<U>>()
                .map_err(|_| Error::arg("demosaic: f32 output type mismatch"))?;
            return Ok((*out, kt));
        }
        let (w, h) = input.size();
        let out = DeviceImage::<U>::new(dev, w, h, p.channels)?;
        let kt = launch(progs, dev, spec, input.raw_arg(), &out, p, lv, None)?;
        Ok((out.download(dev)?, kt))
    }
}
