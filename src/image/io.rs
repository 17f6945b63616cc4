//! Saving through the `image` crate (and the `tiff` crate for
//! single-channel f32, which `image` cannot represent); loading is in
//! `decode`.
//!
//! Formats: PNG 8/16-bit, TIFF 8/16-bit/f32, PNM 8/16-bit (written as binary
//! P5 `.pgm`, P6 `.ppm`, P5/P6 `.pnm` or P7 `.pam`; any PNM is read), JPEG
//! read-only.

use std::io::{BufWriter, Write};
use std::path::Path;

use image::{DynamicImage, ImageFormat};

use super::output::OutputFile;
use super::{DynImage, Image, Sample};
use crate::error::{Error, Result};

/// The output formats [`save`] writes, chosen by the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutFormat {
    Png,
    Tiff,
    /// `.pgm`: binary P5, 1 channel.
    Pgm,
    /// `.ppm`: binary P6, 3 channels.
    Ppm,
    /// `.pam`: P7, 1, 3 or 4 channels.
    Pam,
    /// `.pnm`: P5 for 1 channel, P6 for 3.
    Pnm,
}

/// The extensions [`save`] accepts, for error messages.
const WRITABLE: &str = ".png, .tif/.tiff, .pgm, .ppm, .pnm or .pam";

/// The format for `path`'s extension, or an error that says which
/// extensions work.
fn out_format(path: &Path) -> Result<OutFormat> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    Ok(match ext.as_str() {
        "png" => OutFormat::Png,
        "tif" | "tiff" => OutFormat::Tiff,
        "pgm" => OutFormat::Pgm,
        "ppm" => OutFormat::Ppm,
        "pam" => OutFormat::Pam,
        "pnm" => OutFormat::Pnm,
        "jpg" | "jpeg" => {
            return Err(Error::format(
                path,
                "JPEG output is not supported (lossy); use .png or .tif",
            ))
        }
        "pbm" => return Err(Error::format(
            path,
            "PBM (.pbm) output is not supported: it holds 1-bit bilevel (two-tone) pixels only; \
                 use .pgm for gray images",
        )),
        "" => {
            return Err(Error::format(
                path,
                format!("the output has no extension; use {WRITABLE}"),
            ))
        }
        other => {
            return Err(Error::format(
                path,
                format!("unknown output extension '.{other}'; use {WRITABLE}"),
            ))
        }
    })
}

/// Where an image of `channels` channels fits, for channel-count errors.
fn fitting_formats(channels: usize) -> &'static str {
    match channels {
        1 => ".pgm (or .pnm, .pam, .png, .tif)",
        3 => ".ppm (or .pnm, .pam, .png, .tif)",
        _ => ".pam, .png or .tif",
    }
}

/// Checks that `format` holds images of `channels` channels.
fn check_channels(path: &Path, format: OutFormat, channels: usize) -> Result<()> {
    let (name, holds) = match format {
        OutFormat::Pgm if channels != 1 => ("PGM (.pgm, P5)", "1 channel (gray)"),
        OutFormat::Ppm if channels != 3 => ("PPM (.ppm, P6)", "3 channels (RGB)"),
        OutFormat::Pnm if channels != 1 && channels != 3 => (
            "PNM (.pnm, P5 or P6)",
            "1 channel (gray, as P5) or 3 (RGB, as P6)",
        ),
        _ => return Ok(()),
    };
    Err(Error::format(
        path,
        format!(
            "{name} holds {holds}, but the image has {channels}; save it as {}",
            fitting_formats(channels)
        ),
    ))
}

/// Saves an image; the format comes from the file extension. The file is
/// written beside `path` under a temporary name and renamed over it when
/// whole ([`super::output::OutputFile`]): a failure, a full disk included,
/// leaves the old file or nothing.
///
/// - `.png`: 8/16-bit, 1, 3 or 4 channels.
/// - `.tif`/`.tiff`: 8/16-bit and f32, 1, 3 or 4 channels.
/// - `.pgm`: binary PGM (P5), 1 channel; `.ppm`: binary PPM (P6), 3
///   channels; `.pnm`: P5 for 1 channel, P6 for 3; `.pam`: PAM (P7), 1, 3 or
///   4 channels. 8-bit is written with maxval 255, 16-bit with 65535.
///
/// Everything else is an [`Error::Format`] that names a format that fits,
/// and nothing is written: f32 images to anything but TIFF, a channel count
/// the PNM flavour does not hold, `.pbm` (1-bit), and JPEG (lossy; it is
/// read-only here).
pub fn save(img: &DynImage, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let format = out_format(path)?;
    let (_, _, ch) = img.shape();
    if img.sample_type() == super::SampleType::F32 && format != OutFormat::Tiff {
        return Err(Error::format(
            path,
            "f32 images can only be saved as TIFF (.tif); convert to u8/u16 first for PNG/PNM",
        ));
    }
    check_channels(path, format, ch)?;
    match (img, format) {
        (DynImage::F32(i), _) if ch == 1 => save_tiff_gray_f32(i, path),
        (_, OutFormat::Png) => save_dynamic(img, path, ImageFormat::Png),
        (_, OutFormat::Tiff) => save_dynamic(img, path, ImageFormat::Tiff),
        (_, OutFormat::Pam) => save_pnm(img, path, PnmKind::Pam),
        (_, OutFormat::Pgm | OutFormat::Ppm | OutFormat::Pnm) => {
            // check_channels left 1 (P5) or 3 (P6).
            let kind = if ch == 1 {
                PnmKind::Graymap
            } else {
                PnmKind::Pixmap
            };
            save_pnm(img, path, kind)
        }
    }
}

fn image_err(path: &Path, e: image::ImageError) -> Error {
    match e {
        image::ImageError::IoError(io) => Error::io(path, io),
        other => Error::format(path, other.to_string()),
    }
}

fn save_dynamic(img: &DynImage, path: &Path, format: ImageFormat) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    let mut w = BufWriter::new(&mut out);
    to_dynamic(img)
        .write_to(&mut w, format)
        .map_err(|e| image_err(path, e))?;
    w.flush().map_err(|e| Error::io(path, e))?;
    drop(w);
    out.commit()
}

/// Which PNM flavour to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PnmKind {
    /// P5, 1 channel.
    Graymap,
    /// P6, 3 channels.
    Pixmap,
    /// P7, any channel count.
    Pam,
}

/// Writes binary P5/P6 or P7 with maxval 255 (u8) or 65535 (u16).
fn save_pnm(img: &DynImage, path: &Path, kind: PnmKind) -> Result<()> {
    use image::codecs::pnm::{
        GraymapHeader, PixmapHeader, PnmEncoder, PnmHeader, PnmSubtype, SampleEncoding,
    };
    use image::ExtendedColorType as C;

    let (w, h, ch) = img.shape();
    let (w, h) = (w as u32, h as u32);
    let binary = SampleEncoding::Binary;
    // Encode into memory first, so a refused image leaves no file behind.
    let mut bytes = Vec::new();
    let enc = PnmEncoder::new(&mut bytes);
    let result = match img {
        DynImage::U8(i) => {
            let color = match ch {
                1 => C::L8,
                3 => C::Rgb8,
                _ => C::Rgba8,
            };
            let subtype = match kind {
                PnmKind::Graymap => PnmSubtype::Graymap(binary),
                PnmKind::Pixmap => PnmSubtype::Pixmap(binary),
                PnmKind::Pam => PnmSubtype::ArbitraryMap,
            };
            enc.with_subtype(subtype)
                .encode(&*i.packed_samples(), w, h, color)
        }
        DynImage::U16(i) => {
            let samples = i.packed_samples();
            // `with_subtype` writes P5/P6 only for 8-bit samples, so 16-bit
            // P5/P6 get an explicit header with maxval 65535. (image 0.25
            // checks a P6 header only against `Rgb8`; the u16 slice makes the
            // encoder write each sample as 16-bit big-endian all the same.)
            match kind {
                PnmKind::Graymap => enc
                    .with_header(PnmHeader::from(GraymapHeader {
                        encoding: binary,
                        width: w,
                        height: h,
                        maxwhite: 65535,
                    }))
                    .encode(&*samples, w, h, C::L16),
                PnmKind::Pixmap => enc
                    .with_header(PnmHeader::from(PixmapHeader {
                        encoding: binary,
                        width: w,
                        height: h,
                        maxval: 65535,
                    }))
                    .encode(&*samples, w, h, C::Rgb8),
                PnmKind::Pam => {
                    let color = match ch {
                        1 => C::L16,
                        3 => C::Rgb16,
                        _ => C::Rgba16,
                    };
                    enc.with_subtype(PnmSubtype::ArbitraryMap)
                        .encode(&*samples, w, h, color)
                }
            }
        }
        DynImage::F32(_) => {
            // `save` sends f32 images to TIFF only; never reached.
            return Err(Error::format(
                path,
                "f32 images can only be saved as TIFF (.tif)",
            ));
        }
    };
    result.map_err(|e| image_err(path, e))?;
    let mut out = OutputFile::create(path)?;
    out.write_all(&bytes).map_err(|e| Error::io(path, e))?;
    out.commit()
}

fn buf<P: image::Pixel>(i: &Image<P::Subpixel>) -> image::ImageBuffer<P, Vec<P::Subpixel>>
where
    P::Subpixel: Sample,
{
    image::ImageBuffer::from_raw(
        i.width() as u32,
        i.height() as u32,
        i.packed_samples().into_owned(),
    )
    .expect("packed samples match the image shape")
}

fn to_dynamic(img: &DynImage) -> DynamicImage {
    use image::{Luma, Rgb, Rgba};
    match img {
        DynImage::U8(i) => match i.channels() {
            1 => DynamicImage::ImageLuma8(buf::<Luma<u8>>(i)),
            3 => DynamicImage::ImageRgb8(buf::<Rgb<u8>>(i)),
            _ => DynamicImage::ImageRgba8(buf::<Rgba<u8>>(i)),
        },
        DynImage::U16(i) => match i.channels() {
            1 => DynamicImage::ImageLuma16(buf::<Luma<u16>>(i)),
            3 => DynamicImage::ImageRgb16(buf::<Rgb<u16>>(i)),
            _ => DynamicImage::ImageRgba16(buf::<Rgba<u16>>(i)),
        },
        DynImage::F32(i) => match i.channels() {
            3 => DynamicImage::ImageRgb32F(buf::<Rgb<f32>>(i)),
            // Gray f32 is written by save_tiff_gray_f32 before we get here.
            _ => DynamicImage::ImageRgba32F(buf::<Rgba<f32>>(i)),
        },
    }
}

fn save_tiff_gray_f32(img: &Image<f32>, path: &Path) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    let mut w = BufWriter::new(&mut out);
    let mut enc = tiff::encoder::TiffEncoder::new(&mut w).map_err(|e| tiff_err(path, e))?;
    enc.write_image::<tiff::encoder::colortype::Gray32Float>(
        img.width() as u32,
        img.height() as u32,
        &img.packed_samples(),
    )
    .map_err(|e| tiff_err(path, e))?;
    w.flush().map_err(|e| Error::io(path, e))?;
    drop(w);
    out.commit()
}

/// A TIFF encoder error; I/O errors (a full disk) keep their kind.
fn tiff_err(path: &Path, e: tiff::TiffError) -> Error {
    match e {
        tiff::TiffError::IoError(io) => Error::io(path, io),
        other => Error::format(path, other.to_string()),
    }
}
