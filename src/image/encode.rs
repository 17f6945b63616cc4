//! The encoders behind [`super::save`]: the `image` crate's, and the
//! `tiff` crate for single-channel f32, which `image` cannot represent
//! (only with the `formats` feature).

use std::io::{Seek, Write};
use std::path::Path;

use image::{DynamicImage, ImageEncoder};

use super::format::OutputFormat;
use super::io::SaveOptions;
use super::{DynImage, Image};
use crate::error::{Error, Result};

/// Writes `img` as `format`, which `io::check` has found holds it.
pub(super) fn encode<W: Write + Seek>(
    img: &DynImage,
    format: OutputFormat,
    options: &SaveOptions,
    w: &mut W,
    path: &Path,
) -> Result<()> {
    use image::codecs::webp::WebPEncoder;
    use image::codecs::{jpeg::JpegEncoder, png::PngEncoder, tiff::TiffEncoder};
    let icc = options.icc_profile.as_ref();
    let (_, _, ch) = img.shape();
    let written = match (img, format) {
        (DynImage::F32(i), _) if ch == 1 => return save_tiff_gray_f32(i, w, icc, path),
        (_, OutputFormat::Png) => with_icc(img, PngEncoder::new(w), icc),
        (_, OutputFormat::Tiff) => with_icc(img, TiffEncoder::new(w), icc),
        (_, OutputFormat::Jpeg) => with_icc(
            img,
            JpegEncoder::new_with_quality(w, options.jpeg_quality),
            icc,
        ),
        (_, OutputFormat::WebP) => with_icc(img, WebPEncoder::new_lossless(w), icc),
        (_, OutputFormat::Pam) => return save_pnm(img, w, path, PnmKind::Pam),
        (_, OutputFormat::Pgm | OutputFormat::Ppm | OutputFormat::Pnm) => {
            // `check` left 1 (P5) or 3 (P6).
            let kind = if ch == 1 {
                PnmKind::Graymap
            } else {
                PnmKind::Pixmap
            };
            return save_pnm(img, w, path, kind);
        }
    };
    written.map_err(|e| image_err(path, e))
}

/// Encodes through an `image` encoder, with the profile when there is one
/// (every encoder used here takes one).
fn with_icc(
    img: &DynImage,
    mut encoder: impl ImageEncoder,
    icc: Option<&Vec<u8>>,
) -> image::ImageResult<()> {
    if let Some(p) = icc {
        encoder
            .set_icc_profile(p.clone())
            .map_err(image::ImageError::Unsupported)?;
    }
    to_dynamic(img)?.write_with_encoder(encoder)
}

fn image_err(path: &Path, e: image::ImageError) -> Error {
    match e {
        image::ImageError::IoError(io) => Error::io(path, io),
        other => Error::format(path, other.to_string()),
    }
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
fn save_pnm(img: &DynImage, out: impl Write, path: &Path, kind: PnmKind) -> Result<()> {
    use image::codecs::pnm::{
        GraymapHeader, PixmapHeader, PnmEncoder, PnmHeader, PnmSubtype, SampleEncoding,
    };
    use image::ExtendedColorType as C;

    let (w, h, ch) = img.shape();
    let (w, h) = (w as u32, h as u32);
    let binary = SampleEncoding::Binary;
    let enc = PnmEncoder::new(out);
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
            // `check` sends f32 images to TIFF only; never reached.
            return Err(Error::format(
                path,
                "f32 images can only be saved as TIFF (.tif)",
            ));
        }
    };
    result.map_err(|e| image_err(path, e))
}

/// A copy as a `DynamicImage`; gray f32 goes to TIFF by the `tiff` crate
/// before this is asked.
fn to_dynamic(img: &DynImage) -> image::ImageResult<DynamicImage> {
    DynamicImage::try_from(img).map_err(|e| {
        image::ImageError::Unsupported(image::error::UnsupportedError::from_format_and_kind(
            image::error::ImageFormatHint::Unknown,
            image::error::UnsupportedErrorKind::GenericFeature(e.to_string()),
        ))
    })
}

/// Gray f32 as TIFF through the `tiff` crate, with the profile as tag 34675.
fn save_tiff_gray_f32<W: Write + Seek>(
    img: &Image<f32>,
    w: &mut W,
    icc: Option<&Vec<u8>>,
    path: &Path,
) -> Result<()> {
    let err = |e| tiff_err(path, e);
    let mut enc = tiff::encoder::TiffEncoder::new(w).map_err(err)?;
    let mut image = enc
        .new_image::<tiff::encoder::colortype::Gray32Float>(img.width() as u32, img.height() as u32)
        .map_err(err)?;
    if let Some(p) = icc {
        image
            .encoder()
            .write_tag(tiff::tags::Tag::IccProfile, &p[..])
            .map_err(err)?;
    }
    image.write_data(&img.packed_samples()).map_err(err)
}

/// A TIFF encoder error; I/O errors (a full disk) keep their kind.
fn tiff_err(path: &Path, e: tiff::TiffError) -> Error {
    match e {
        tiff::TiffError::IoError(io) => Error::io(path, io),
        other => Error::format(path, other.to_string()),
    }
}
