//! Bayer sensor layouts: the colour filter pattern, the packed 12-bit
//! layouts, and borrowed raw frames. They describe how pixels are stored,
//! so the raw frame readers (`image::raw`) and the demosaic operation both
//! use them.

use std::fmt;

use crate::error::{Error, Result};
use crate::image::{Image, SampleType};

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

/// The packed 12-bit layouts: two pixels in three bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Packing {
    /// GenICam PFNC `BayerRG12p` (and `Mono12p`), LSB first:
    /// `p0 = b0 | (b1 & 0x0F) << 8`, `p1 = b1 >> 4 | b2 << 4`.
    Pfnc12p,
    /// GigE Vision `BayerRG12Packed` (`Mono12Packed`, Basler's layout):
    /// `p0 = b0 << 4 | (b1 & 0x0F)`, `p1 = b2 << 4 | b1 >> 4`.
    GigE12Packed,
    /// MIPI CSI-2 `RAW12` (V4L2 `SRGGB12P`): the two high bytes, then the
    /// low nibbles, first pixel's in the low half:
    /// `p0 = b0 << 4 | (b2 & 0x0F)`, `p1 = b1 << 4 | b2 >> 4`. CSI-2 packs
    /// each line on its own, so frames have an even width.
    Mipi12,
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
            Packing::Mipi12 => [b0 << 4 | (b2 & 0x0F), b1 << 4 | b2 >> 4],
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
                Packing::Mipi12 => [
                    (a >> 4) as u8,
                    (b >> 4) as u8,
                    ((a & 0x0F) | (b & 0x0F) << 4) as u8,
                ],
            });
        }
        Ok(out)
    }

    /// The kernels' `PACKED` option (`cl/demosaic/demosaic.cl`,
    /// `cl/pipeline.cl`): 1 PFNC, 2 GigE Vision, 3 MIPI CSI-2.
    pub fn kernel_code(self) -> u8 {
        match self {
            Packing::Pfnc12p => 1,
            Packing::GigE12Packed => 2,
            Packing::Mipi12 => 3,
        }
    }

    /// The name used in docs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Pfnc12p => "12p",
            Packing::GigE12Packed => "12packed",
            Packing::Mipi12 => "12mipi",
        }
    }
}

/// A raw Bayer frame.
#[derive(Debug, Clone, Copy)]
pub enum Raw<'a> {
    /// 8-bit samples (white level 255); 1 channel.
    U8(&'a Image<u8>),
    /// 8..16-bit samples in 16-bit containers (white level from
    /// `bits` of the demosaic parameters, default 16); 1 channel.
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
        return Err(Error::InvalidArgument(format!(
            "a Bayer frame has an even width and height of at least 2, got {width}x{height}"
        )));
    }
    // 4 output channels must fit the image shape rules (< 2^31 samples).
    crate::image::check_shape(width, height, 4)
        .map(|_| ())
        .map_err(|e| match e {
            Error::InvalidArgument(m) => Error::InvalidArgument(format!(
                "its demosaiced RGBA result would be too large: {m}"
            )),
            other => other,
        })
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
    pub(crate) fn max_bits(&self) -> u32 {
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
            return Err(Error::InvalidArgument(format!(
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
