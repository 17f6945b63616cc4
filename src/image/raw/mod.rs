//! Headerless raw camera frames: their formats ([`RawFormat`], named like
//! `bayer_rggb12p` or `mono16`), decoding bytes into images ([`RawImage`]),
//! encoding images into bytes ([`encode`], for tests and tools), and reading
//! a stream of frames ([`FrameReader`]).
//!
//! # Formats
//!
//! A name is `bayer_PATTERN DEPTH` or `mono DEPTH`, written without spaces
//! and in any case (`bayer_rggb12p`, `MONO16`):
//!
//! - `PATTERN` is the sensor's top-left 2x2 block in reading order, as GenICam
//!   PFNC names it: `rggb`, `bggr`, `grbg` or `gbrg` (PFNC's `BayerRG12p` is
//!   `bayer_rggb12p`; see [`Pattern`]).
//! - `DEPTH` is one of
//!
//! | depth      | bytes per pixel | samples |
//! |------------|-----------------|---------|
//! | `8`        | 1               | one byte per sample |
//! | `10`, `12`, `14`, `16` | 2   | little-endian 16-bit containers, the value in the low bits (white level `2^bits - 1`) |
//! | `12p`      | 1.5             | PFNC `BayerRG12p` / `Mono12p`: two samples in three bytes, LSB first ([`Packing::Pfnc12p`]) |
//! | `12packed` | 1.5             | GigE Vision `BayerRG12Packed` / `Mono12Packed` ([`Packing::GigE12Packed`]) |
//! | `12mipi`   | 1.5             | MIPI CSI-2 `RAW12` (V4L2 `SRGGB12P`): the two pixels' high bytes, then a byte of their low nibbles, the first pixel's in bits 3..0 ([`Packing::Mipi12`]) |
//! | `10mipi`   | 1.25            | MIPI CSI-2 `RAW10` (V4L2 `SRGGB10P`): four pixels' high bytes (bits 9..2), then a byte of their 2-bit remainders, the first pixel's in bits 1..0 ([`Depth::Mipi10`]) |
//! | `10be`, `12be`, `14be`, `16be` | 2 | big-endian 16-bit containers, the value in the low bits |
//!
//! Frames have no header and no row padding: a `W x H` frame is exactly
//! [`RawFormat::frame_bytes`] bytes. Bayer frames have an even width and
//! height; the PFNC and GigE packed frames an even pixel count. CSI-2 packs
//! each line on its own, so `12mipi` frames have an even width and `10mipi`
//! frames a width that is a multiple of 4.
//!
//! Where frames are decoded: 8-bit frames, little-endian containers and
//! the 12-bit packings reach a device as their bytes (the OpenCL demosaic
//! and the pipelines unpack 12-bit frames there); big-endian containers and
//! `10mipi` are decoded on the host into `u16` samples
//! ([`RawImage::U16`]), and streams of them run frame by frame
//! (`pipeline::run_stream`'s host path).
//!
//! ```
//! use clfilter::image::raw::{Depth, RawFormat};
//! use clfilter::image::bayer::{Packing, Pattern};
//!
//! let f: RawFormat = "Bayer_RGGB12p".parse().unwrap();
//! assert_eq!(f.pattern, Some(Pattern::Rggb));
//! assert_eq!(f.depth, Depth::Packed12(Packing::Pfnc12p));
//! assert_eq!(f.to_string(), "bayer_rggb12p");
//! assert_eq!(f.frame_bytes(640, 480).unwrap(), 640 * 480 * 3 / 2);
//!
//! let err = "BayerRG12p".parse::<RawFormat>().unwrap_err();
//! assert!(err.to_string().contains("did you mean 'bayer_rggb12p'?"));
//! ```

mod pack;
mod reader;

use std::fmt;
use std::str::FromStr;

pub use pack::encode;
use pack::{unpack, unpack10};
pub use reader::FrameReader;

use super::bayer::{check_cfa_size, Packing, Pattern, Raw};
use super::{check_shape, DynImage, Image, SampleType};
use crate::error::{Error, Result};

/// How the samples of a raw frame are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// One byte per sample (white level 255).
    Bits8,
    /// One little-endian 16-bit container per sample, holding `bits`
    /// significant bits (10, 12, 14 or 16) in its low bits; the white level
    /// is `2^bits - 1`.
    Bits16 {
        /// Significant bits: 10, 12, 14 or 16.
        bits: u32,
    },
    /// 12-bit samples, two packed in three bytes (white level 4095).
    Packed12(Packing),
    /// One big-endian 16-bit container per sample, holding `bits`
    /// significant bits (10, 12, 14 or 16) in its low bits.
    Bits16Be {
        /// Significant bits: 10, 12, 14 or 16.
        bits: u32,
    },
    /// MIPI CSI-2 `RAW10`: four 10-bit samples in five bytes, `b0..b3` the
    /// samples' bits 9..2 and `b4` their bits 1..0, sample `k`'s at bits
    /// `2k + 1 .. 2k` (white level 1023).
    Mipi10,
}

impl Depth {
    /// Every depth a format name can have, in the order of the docs.
    pub const ALL: [Depth; 13] = [
        Depth::Bits8,
        Depth::Bits16 { bits: 10 },
        Depth::Bits16 { bits: 12 },
        Depth::Bits16 { bits: 14 },
        Depth::Bits16 { bits: 16 },
        Depth::Packed12(Packing::Pfnc12p),
        Depth::Packed12(Packing::GigE12Packed),
        Depth::Packed12(Packing::Mipi12),
        Depth::Mipi10,
        Depth::Bits16Be { bits: 10 },
        Depth::Bits16Be { bits: 12 },
        Depth::Bits16Be { bits: 14 },
        Depth::Bits16Be { bits: 16 },
    ];

    /// The suffix in format names: `8`, `10`..`16`, `12p`, `12packed`,
    /// `12mipi`, `10mipi`, `10be`..`16be`.
    fn suffix(self) -> String {
        match self {
            Depth::Bits8 => "8".into(),
            Depth::Bits16 { bits } => bits.to_string(),
            Depth::Packed12(p) => p.name().into(),
            Depth::Bits16Be { bits } => format!("{bits}be"),
            Depth::Mipi10 => "10mipi".into(),
        }
    }

    /// Pixels per packed group that a CSI-2 line holds whole: the width
    /// must be a multiple of it (1 for the other layouts).
    fn line_group(self) -> usize {
        match self {
            Depth::Mipi10 => 4,
            Depth::Packed12(Packing::Mipi12) => 2,
            _ => 1,
        }
    }

    /// Whether frames reach a device as their bytes (else the host decodes
    /// them into `u16` samples first).
    pub fn device_reads_bytes(self) -> bool {
        !matches!(self, Depth::Bits16Be { .. } | Depth::Mipi10)
    }

    /// Parses a suffix (already lowercase).
    fn from_suffix(s: &str) -> Option<Depth> {
        Depth::ALL.into_iter().find(|d| d.suffix() == s)
    }

    /// Checks a hand-built depth: 16-bit containers hold 10, 12, 14 or 16 bits.
    fn check(self) -> Result<()> {
        match self {
            Depth::Bits16 { bits } | Depth::Bits16Be { bits }
                if !matches!(bits, 10 | 12 | 14 | 16) =>
            {
                Err(Error::arg(format!(
                    "raw frames in 16-bit containers have 10, 12, 14 or 16 bits, not {bits}"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// A raw frame format: the colour filter array (or none) and the storage.
///
/// [`FromStr`] reads the names in the [module docs](self) and
/// [`Display`](fmt::Display) writes the canonical (lowercase) one, which
/// reads back to the same format. It serializes as that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawFormat {
    /// The Bayer pattern; `None` for monochrome sensors.
    pub pattern: Option<Pattern>,
    /// How the samples are stored.
    pub depth: Depth,
}

impl RawFormat {
    /// Every format with a name: the four Bayer patterns, then mono, each
    /// with every [`Depth::ALL`].
    pub fn all() -> Vec<RawFormat> {
        Pattern::ALL
            .into_iter()
            .map(Some)
            .chain([None])
            .flat_map(|pattern| Depth::ALL.map(|depth| RawFormat { pattern, depth }))
            .collect()
    }

    /// Significant bits per sample: 8, 10..16, 12 for the 12-bit packed
    /// layouts, 10 for `10mipi`. The white level is `2^bits - 1`.
    pub fn bits(&self) -> u32 {
        match self.depth {
            Depth::Bits8 => 8,
            Depth::Bits16 { bits } | Depth::Bits16Be { bits } => bits,
            Depth::Packed12(_) => 12,
            Depth::Mipi10 => 10,
        }
    }

    /// The sample type of decoded frames ([`RawFormat::decode`] then
    /// [`RawImage::to_dyn`]): `U8` for 8-bit formats, `U16` for the others
    /// (packed frames unpack to `u16`).
    pub fn sample(&self) -> SampleType {
        match self.depth {
            Depth::Bits8 => SampleType::U8,
            _ => SampleType::U16,
        }
    }

    /// The bytes of one `width x height` frame.
    ///
    /// Checks the size first, each failure an [`Error::InvalidArgument`]
    /// naming the format and the size: both sides at least 1 and within the
    /// engine's 32-bit indexing; for Bayer formats an even width and height
    /// (see [`check_cfa_size`]); for the packed layouts an even pixel count
    /// (two pixels share three bytes); for `12mipi` an even width and for
    /// `10mipi` a width that is a multiple of 4 (CSI-2 packs each line).
    pub fn frame_bytes(&self, width: usize, height: usize) -> Result<usize> {
        self.depth.check()?;
        let rule = |e: Error| match e {
            Error::InvalidArgument(m) | Error::InvalidInput(m) => {
                Error::arg(format!("{self} frame of {width}x{height}: {m}"))
            }
            other => other,
        };
        match self.pattern {
            Some(_) => check_cfa_size(width, height).map_err(rule)?,
            None => {
                check_shape(width, height, 1).map_err(rule)?;
            }
        }
        // check_shape bounded width * height; stay checked on 32-bit targets.
        let pixels = width
            .checked_mul(height)
            .ok_or_else(|| Error::arg(format!("{self} frame of {width}x{height} overflows")))?;
        let group = self.depth.line_group();
        if !width.is_multiple_of(group) {
            return Err(Error::arg(format!(
                "{self} frame of {width}x{height}: MIPI CSI-2 packs each line in groups of \
                 {group} pixels, so the width must be a multiple of {group}"
            )));
        }
        let bytes = match self.depth {
            Depth::Bits8 => Some(pixels),
            Depth::Bits16 { .. } | Depth::Bits16Be { .. } => pixels.checked_mul(2),
            Depth::Mipi10 => (pixels / 4).checked_mul(5),
            Depth::Packed12(_) => {
                if !pixels.is_multiple_of(2) {
                    return Err(Error::arg(format!(
                        "{self} frame of {width}x{height}: packed 12-bit frames hold pairs of \
                         pixels in 3 bytes, so width x height must be even"
                    )));
                }
                (pixels / 2).checked_mul(3)
            }
        };
        bytes.ok_or_else(|| Error::arg(format!("{self} frame of {width}x{height} overflows")))
    }

    /// Decodes one frame of exactly [`RawFormat::frame_bytes`] bytes.
    ///
    /// 8-bit frames become [`RawImage::U8`], 16-bit containers (either
    /// byte order) and `10mipi` frames [`RawImage::U16`], 12-bit packed
    /// frames stay packed ([`RawImage::Packed12`], which the OpenCL demosaic
    /// unpacks on the device). Samples above the white level `2^bits - 1` (a 12-bit format
    /// whose containers hold larger values) are kept as they are, not
    /// clipped or masked: the demosaic levels them above full scale and
    /// saturates.
    ///
    /// A size that breaks the format's rules is [`Error::InvalidArgument`];
    /// a byte count other than `frame_bytes` is [`Error::InvalidInput`]
    /// naming both.
    pub fn decode(&self, bytes: &[u8], width: usize, height: usize) -> Result<RawImage> {
        self.check_len(bytes.len(), width, height)?;
        Ok(match self.depth {
            Depth::Bits8 => RawImage::U8(Image::from_vec(width, height, 1, bytes.to_vec())?),
            Depth::Bits16 { .. } => RawImage::U16(Image::from_vec(
                width,
                height,
                1,
                bytes
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]))
                    .collect(),
            )?),
            Depth::Bits16Be { .. } => RawImage::U16(Image::from_vec(
                width,
                height,
                1,
                bytes
                    .chunks_exact(2)
                    .map(|b| u16::from_be_bytes([b[0], b[1]]))
                    .collect(),
            )?),
            Depth::Mipi10 => RawImage::U16(Image::from_vec(width, height, 1, unpack10(bytes))?),
            Depth::Packed12(packing) => RawImage::Packed12 {
                data: bytes.to_vec(),
                width,
                height,
                packing,
            },
        })
    }

    /// [`RawFormat::decode`] taking the bytes by value: 8-bit and packed
    /// frames keep the buffer instead of copying it.
    pub fn decode_vec(&self, bytes: Vec<u8>, width: usize, height: usize) -> Result<RawImage> {
        match self.depth {
            Depth::Bits16 { .. } | Depth::Bits16Be { .. } | Depth::Mipi10 => {
                self.decode(&bytes, width, height)
            }
            Depth::Bits8 => {
                self.check_len(bytes.len(), width, height)?;
                Ok(RawImage::U8(Image::from_vec(width, height, 1, bytes)?))
            }
            Depth::Packed12(packing) => {
                self.check_len(bytes.len(), width, height)?;
                Ok(RawImage::Packed12 {
                    data: bytes,
                    width,
                    height,
                    packing,
                })
            }
        }
    }

    /// Checks that `len` bytes are one `width x height` frame.
    fn check_len(&self, len: usize, width: usize, height: usize) -> Result<()> {
        let need = self.frame_bytes(width, height)?;
        if len != need {
            return Err(Error::InvalidInput(format!(
                "a {width}x{height} {self} frame has {need} bytes, got {len}"
            )));
        }
        Ok(())
    }

    /// The name's grammar, for error messages and help texts.
    pub const GRAMMAR: &'static str = "bayer_PATTERN DEPTH or mono DEPTH, written without \
        spaces: PATTERN is rggb, bggr, grbg or gbrg (the sensor's top-left 2x2 block), DEPTH is \
        8, 10, 12, 14, 16 (16-bit little-endian containers above 8), 10be..16be (big-endian \
        containers), 12p (PFNC packed), 12packed (GigE Vision packed), 12mipi or 10mipi (MIPI \
        CSI-2 RAW12, RAW10); for example bayer_rggb12p or mono16";
}

impl fmt::Display for RawFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pattern {
            Some(p) => write!(f, "bayer_{}{}", p.name(), self.depth.suffix()),
            None => write!(f, "mono{}", self.depth.suffix()),
        }
    }
}

impl FromStr for RawFormat {
    type Err = Error;

    /// Parses a format name (case-insensitive, surrounding whitespace
    /// ignored). An unknown name is an [`Error::InvalidArgument`] that gives
    /// the grammar and, when one is close, the intended name (camera names
    /// such as PFNC's `BayerRG12p` get their equivalent here).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        let exact = if let Some(rest) = t.strip_prefix("mono") {
            Depth::from_suffix(rest).map(|depth| RawFormat {
                pattern: None,
                depth,
            })
        } else if let Some(rest) = t.strip_prefix("bayer_") {
            Pattern::ALL.into_iter().find_map(|p| {
                let depth = Depth::from_suffix(rest.strip_prefix(p.name())?)?;
                Some(RawFormat {
                    pattern: Some(p),
                    depth,
                })
            })
        } else {
            None
        };
        exact.ok_or_else(|| {
            let hint = match suggest(&t) {
                Some(f) => format!(" (did you mean '{f}'?)"),
                None => String::new(),
            };
            Error::arg(format!(
                "unknown raw format '{s}'{hint}; formats are {}",
                RawFormat::GRAMMAR
            ))
        })
    }
}

/// The format `word` (lowercase) most likely means: the same name written
/// differently (PFNC/GigE camera names like `BayerRG12p` or `Mono12Packed`,
/// `rggb12` without `bayer_`, extra `_`/`-`), else the nearest name by edit
/// distance when it is close.
fn suggest(word: &str) -> Option<RawFormat> {
    let squeezed: String = word
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .collect();
    // PFNC names the pattern by its first two pixels (BayerRG = rggb).
    const PFNC: [(&str, Pattern); 4] = [
        ("rg", Pattern::Rggb),
        ("bg", Pattern::Bggr),
        ("gr", Pattern::Grbg),
        ("gb", Pattern::Gbrg),
    ];
    let lenient = if let Some(rest) = squeezed.strip_prefix("mono") {
        Depth::from_suffix(rest).map(|depth| RawFormat {
            pattern: None,
            depth,
        })
    } else {
        let rest = squeezed.strip_prefix("bayer").unwrap_or(&squeezed);
        let long = Pattern::ALL
            .into_iter()
            .find_map(|p| Some((p, rest.strip_prefix(p.name())?)));
        let short = || {
            PFNC.into_iter()
                .find_map(|(code, p)| Some((p, rest.strip_prefix(code)?)))
        };
        long.or_else(short).and_then(|(p, d)| {
            Some(RawFormat {
                pattern: Some(p),
                depth: Depth::from_suffix(d)?,
            })
        })
    };
    if lenient.is_some() {
        return lenient;
    }
    let limit = (word.chars().count() / 3).max(2);
    RawFormat::all()
        .into_iter()
        .map(|f| (crate::error::edit_distance(word, &f.to_string()), f))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
}

impl serde::Serialize for RawFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One decoded raw frame.
#[derive(Debug, Clone, PartialEq)]
pub enum RawImage {
    /// 8-bit samples, 1 channel.
    U8(Image<u8>),
    /// Samples in 16-bit containers, 1 channel (values as stored, not
    /// scaled to 16 bits).
    U16(Image<u16>),
    /// 12-bit samples still packed, as the demosaic's device path reads them.
    Packed12 {
        /// The frame's bytes, `width * height / 2 * 3` of them.
        data: Vec<u8>,
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
        /// The layout.
        packing: Packing,
    },
}

impl RawImage {
    /// Width and height.
    pub fn size(&self) -> (usize, usize) {
        match self {
            RawImage::U8(i) => (i.width(), i.height()),
            RawImage::U16(i) => (i.width(), i.height()),
            RawImage::Packed12 { width, height, .. } => (*width, *height),
        }
    }

    /// The sample type of [`RawImage::to_dyn`]: `U8`, or `U16` (packed too).
    pub fn sample(&self) -> SampleType {
        match self {
            RawImage::U8(_) => SampleType::U8,
            _ => SampleType::U16,
        }
    }

    /// The frame as the demosaic reads it
    /// (packed frames stay packed).
    pub fn as_raw(&self) -> Raw<'_> {
        match self {
            RawImage::U8(i) => Raw::U8(i),
            RawImage::U16(i) => Raw::U16(i),
            RawImage::Packed12 {
                data,
                width,
                height,
                packing,
            } => Raw::Packed12 {
                data,
                width: *width,
                height: *height,
                packing: *packing,
            },
        }
    }

    /// The frame as a 1-channel image: `u8`, or `u16` with the values as
    /// stored (packed frames unpacked to 0..=4095).
    ///
    /// A hand-built [`RawImage::Packed12`] that is inconsistent is an
    /// error ([`RawFormat::decode`] never builds one): a size that is not
    /// a valid image or has an odd pixel count is
    /// [`Error::InvalidArgument`], `data` other than
    /// `width * height / 2 * 3` bytes is [`Error::InvalidInput`].
    pub fn to_dyn(&self) -> Result<DynImage> {
        Ok(match self {
            RawImage::U8(i) => DynImage::U8(i.clone()),
            RawImage::U16(i) => DynImage::U16(i.clone()),
            RawImage::Packed12 {
                data,
                width,
                height,
                packing,
            } => DynImage::U16(unpack(*packing, data, *width, *height)?),
        })
    }

    /// [`RawImage::to_dyn`] without copying 8- and 16-bit frames (the same
    /// errors).
    pub fn into_dyn(self) -> Result<DynImage> {
        match self {
            RawImage::U8(i) => Ok(DynImage::U8(i)),
            RawImage::U16(i) => Ok(DynImage::U16(i)),
            packed => packed.to_dyn(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let all = RawFormat::all();
        assert_eq!(all.len(), 65);
        for f in all {
            assert_eq!(f.to_string().parse::<RawFormat>().unwrap(), f);
            assert_eq!(
                f.to_string().to_uppercase().parse::<RawFormat>().unwrap(),
                f
            );
        }
    }

    #[test]
    fn suggestions() {
        let hint = |s: &str| suggest(&s.to_ascii_lowercase()).map(|f| f.to_string());
        assert_eq!(hint("BayerRG12p").as_deref(), Some("bayer_rggb12p"));
        assert_eq!(
            hint("BayerGR12Packed").as_deref(),
            Some("bayer_grbg12packed")
        );
        assert_eq!(hint("BayerBG8").as_deref(), Some("bayer_bggr8"));
        assert_eq!(hint("Mono12Packed").as_deref(), Some("mono12packed"));
        assert_eq!(hint("mono_16").as_deref(), Some("mono16"));
        assert_eq!(hint("rggb12").as_deref(), Some("bayer_rggb12"));
        assert_eq!(hint("bayer_rgbg12").as_deref(), Some("bayer_rggb12"));
        assert_eq!(hint("bayer_rgb12p").as_deref(), Some("bayer_rggb12p"));
        assert_eq!(hint("mono12pp").as_deref(), Some("mono12p"));
        assert_eq!(hint("jpeg"), None);
    }

    #[test]
    fn hand_built_depths_are_checked() {
        let f = RawFormat {
            pattern: None,
            depth: Depth::Bits16 { bits: 11 },
        };
        assert!(matches!(
            f.frame_bytes(4, 4),
            Err(Error::InvalidArgument(_))
        ));
    }
}
