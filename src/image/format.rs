//! [`OutputFormat`]: the formats [`save`](super::save) writes, how a name
//! or an extension chooses one, and which images each can hold.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use super::SampleType;
use crate::error::{Error, Result};

/// A format [`save`](super::save) and [`write_to`](super::write_to) write.
///
/// | format | samples | channels | ICC profile |
/// |---|---|---|---|
/// | `Png` | u8, u16 | 1, 3, 4 | `iCCP` |
/// | `Tiff` | u8, u16, f32 | 1, 3, 4 | tag 34675 |
/// | `Jpeg` | u8 | 1, 3 | `APP2` |
/// | `WebP` (lossless) | u8 | 1, 3, 4 | `ICCP` |
/// | `Pgm` (P5) | u8, u16 | 1 | - |
/// | `Ppm` (P6) | u8, u16 | 3 | - |
/// | `Pnm` (P5 or P6) | u8, u16 | 1, 3 | - |
/// | `Pam` (P7) | u8, u16 | 1, 3, 4 | - |
///
/// ```
/// use clfilter::image::OutputFormat;
/// use clfilter::SampleType;
///
/// assert_eq!("jpg".parse::<OutputFormat>()?, OutputFormat::Jpeg);
/// assert_eq!(OutputFormat::from_path("out.WEBP")?, OutputFormat::WebP);
/// assert!(OutputFormat::Jpeg.check(SampleType::U16, 3).is_err());
/// assert!(OutputFormat::Tiff.check(SampleType::F32, 1).is_ok());
/// # Ok::<(), clfilter::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// PNG, lossless.
    Png,
    /// TIFF, lossless.
    Tiff,
    /// JPEG, lossy, at [`SaveOptions::jpeg_quality`](super::SaveOptions::jpeg_quality).
    Jpeg,
    /// WebP, lossless (the `image` crate's WebP encoder writes no lossy WebP).
    WebP,
    /// Binary PGM (P5), 1 channel.
    Pgm,
    /// Binary PPM (P6), 3 channels.
    Ppm,
    /// P5 for 1 channel, P6 for 3.
    Pnm,
    /// PAM (P7), 1, 3 or 4 channels.
    Pam,
}

/// The names and extensions that choose a format, for messages.
pub(crate) const WRITABLE: &str = "png, tif/tiff, jpg/jpeg, webp, pgm, ppm, pnm or pam";

impl OutputFormat {
    /// The format for an extension or name (`png`, `tif`, `tiff`, `jpg`,
    /// `jpeg`, `webp`, `pgm`, `ppm`, `pnm`, `pam`; any case, a leading dot
    /// allowed); `None` for anything else.
    pub fn from_extension(ext: &str) -> Option<OutputFormat> {
        use OutputFormat as F;
        let ext = ext.strip_prefix('.').unwrap_or(ext).to_ascii_lowercase();
        Some(match ext.as_str() {
            "png" => F::Png,
            "tif" | "tiff" => F::Tiff,
            "jpg" | "jpeg" => F::Jpeg,
            "webp" => F::WebP,
            "pgm" => F::Pgm,
            "ppm" => F::Ppm,
            "pnm" => F::Pnm,
            "pam" => F::Pam,
            _ => return None,
        })
    }

    /// The format `path`'s extension names; an [`Error::Format`] that says
    /// which extensions work when it names none.
    pub fn from_path(path: impl AsRef<Path>) -> Result<OutputFormat> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        Self::from_extension(&ext).ok_or_else(|| {
            Error::format(
                path,
                match ext.as_str() {
                    "pbm" => "PBM (.pbm) output is not supported: it holds 1-bit bilevel \
                              (two-tone) pixels only; use .pgm for gray images"
                        .to_string(),
                    "" => format!("the output has no extension; use .{WRITABLE}"),
                    other => format!("unknown output extension '.{other}'; use .{WRITABLE}"),
                },
            )
        })
    }

    /// The usual extension, without the dot.
    pub fn extension(self) -> &'static str {
        use OutputFormat as F;
        match self {
            F::Png => "png",
            F::Tiff => "tif",
            F::Jpeg => "jpg",
            F::WebP => "webp",
            F::Pgm => "pgm",
            F::Ppm => "ppm",
            F::Pnm => "pnm",
            F::Pam => "pam",
        }
    }

    /// Whether the format holds an image of this sample type and channel
    /// count; the error says why not and names a format that does.
    pub fn check(self, sample: SampleType, channels: usize) -> std::result::Result<(), String> {
        use OutputFormat as F;
        if sample == SampleType::F32 && self != F::Tiff {
            return Err(format!(
                "{self} holds integer samples; f32 images can only be saved as TIFF (.tif); \
                 convert to u8/u16 first"
            ));
        }
        if sample == SampleType::U16 && matches!(self, F::Jpeg | F::WebP) {
            return Err(format!(
                "{self} holds 8-bit samples, and the image is 16-bit; save it as .png or .tif, \
                 or convert to u8 first"
            ));
        }
        let holds = match self {
            F::Pgm if channels != 1 => "1 channel (gray)",
            F::Ppm if channels != 3 => "3 channels (RGB)",
            F::Pnm if channels != 1 && channels != 3 => "1 channel (gray, as P5) or 3 (RGB, as P6)",
            F::Jpeg if channels == 4 => "1 channel (gray) or 3 (RGB), no alpha",
            _ => return Ok(()),
        };
        let fits = match (channels, self) {
            (1, _) => ".pgm (or .pnm, .pam, .png, .tif)",
            (3, _) => ".ppm (or .pnm, .pam, .png, .tif)",
            (_, F::Jpeg) => ".png, .webp or .tif",
            _ => ".pam, .png or .tif",
        };
        Err(format!(
            "{self} holds {holds}, but the image has {channels}; save it as {fits}"
        ))
    }

    /// Whether the format holds an image of `width` x `height` pixels:
    /// JPEG's frame header keeps each side in 16 bits (at most 65535
    /// pixels), WebP's in 14 (at most 16384); the others hold any size the
    /// engine makes. The error says which limit and names formats without
    /// one.
    pub fn check_size(self, width: usize, height: usize) -> std::result::Result<(), String> {
        let max = match self {
            OutputFormat::Jpeg => 65535,
            OutputFormat::WebP => 16384,
            _ => return Ok(()),
        };
        if width <= max && height <= max {
            return Ok(());
        }
        Err(format!(
            "{self} holds images of at most {max} pixels a side, and the image is \
             {width}x{height}; save it as .png or .tif"
        ))
    }

    /// A format that holds images of this sample type: TIFF for f32, PNG
    /// otherwise.
    pub fn fitting(sample: SampleType) -> OutputFormat {
        if sample == SampleType::F32 {
            OutputFormat::Tiff
        } else {
            OutputFormat::Png
        }
    }
}

impl fmt::Display for OutputFormat {
    /// The name in messages: `PNG`, `PGM (.pgm, P5)`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use OutputFormat as F;
        f.write_str(match self {
            F::Png => "PNG",
            F::Tiff => "TIFF",
            F::Jpeg => "JPEG",
            F::WebP => "WebP",
            F::Pgm => "PGM (.pgm, P5)",
            F::Ppm => "PPM (.ppm, P6)",
            F::Pnm => "PNM (.pnm, P5 or P6)",
            F::Pam => "PAM (.pam, P7)",
        })
    }
}

impl FromStr for OutputFormat {
    type Err = Error;

    /// [`OutputFormat::from_extension`], with an [`Error::InvalidArgument`]
    /// that lists the names.
    fn from_str(s: &str) -> Result<OutputFormat> {
        Self::from_extension(s)
            .ok_or_else(|| Error::arg(format!("unknown image format '{s}'; use {WRITABLE}")))
    }
}
