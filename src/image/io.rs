//! Saving through the `image` crate (and the `tiff` crate for
//! single-channel f32, which `image` cannot represent); loading is in
//! `decode`, the formats and what each holds in `format`.

use std::io::{BufWriter, Cursor, Seek, Write};
use std::path::Path;

use image::{DynamicImage, ImageEncoder};

use super::format::OutputFormat;
use super::output::OutputFile;
use super::{DynImage, Image};
use crate::error::{Error, Result};

/// How [`save_with`] and [`write_to`] write an image.
///
/// ```
/// use clfilter::image::{OutputFormat, SaveOptions};
///
/// let o = SaveOptions { jpeg_quality: 75, ..SaveOptions::default() };
/// assert_eq!(SaveOptions::default().jpeg_quality, SaveOptions::DEFAULT_JPEG_QUALITY);
/// assert_eq!(o.format, None); // from the extension
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveOptions {
    /// The format; `None` takes it from the file's extension ([`save_with`]).
    pub format: Option<OutputFormat>,
    /// JPEG quality, 1 (smallest) to 100 (best); other formats ignore it.
    pub jpeg_quality: u8,
    /// An ICC colour profile to embed where the format holds one (PNG
    /// `iCCP`, JPEG `APP2`, TIFF tag 34675, WebP `ICCP`); PNM outputs go
    /// without it. Orientation is never written: loading applies it to the
    /// pixels, so they are upright already.
    pub icc_profile: Option<Vec<u8>>,
}

impl SaveOptions {
    /// The JPEG quality when none is given: 90.
    pub const DEFAULT_JPEG_QUALITY: u8 = 90;
}

impl Default for SaveOptions {
    fn default() -> Self {
        SaveOptions {
            format: None,
            jpeg_quality: Self::DEFAULT_JPEG_QUALITY,
            icc_profile: None,
        }
    }
}

/// Saves an image; the format comes from the file extension
/// ([`OutputFormat::from_path`]), with the default [`SaveOptions`]. The file
/// is written beside `path` under a temporary name and renamed over it when
/// whole ([`super::output::OutputFile`]): a failure, a full disk included,
/// leaves the old file or nothing.
///
/// - `.png`: 8/16-bit, 1, 3 or 4 channels.
/// - `.tif`/`.tiff`: 8/16-bit and f32, 1, 3 or 4 channels.
/// - `.jpg`/`.jpeg`: 8-bit, 1 or 3 channels, quality
///   [`SaveOptions::DEFAULT_JPEG_QUALITY`].
/// - `.webp`: 8-bit, 1, 3 or 4 channels, lossless (WebP gray is stored as RGB).
/// - `.pgm`: binary PGM (P5), 1 channel; `.ppm`: binary PPM (P6), 3
///   channels; `.pnm`: P5 for 1 channel, P6 for 3; `.pam`: PAM (P7), 1, 3 or
///   4 channels. 8-bit is written with maxval 255, 16-bit with 65535.
///
/// Everything else is an [`Error::Format`] that names a format that fits,
/// and nothing is written: f32 images to anything but TIFF, 16-bit to JPEG
/// or WebP, a channel count the format does not hold, `.pbm` (1-bit).
pub fn save(img: &DynImage, path: impl AsRef<Path>) -> Result<()> {
    save_with(img, path, &SaveOptions::default())
}

/// [`save`] with options: the format (else the extension's), the JPEG
/// quality and an ICC profile.
///
/// ```
/// use clfilter::image::{load, save_with, DynImage, Image, SaveOptions};
///
/// let dir = std::env::temp_dir().join(format!("clf-doc-save-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let img = DynImage::U8(Image::from_fn(16, 8, 3, |x, y, c| (x * 9 + y * 5 + c) as u8)?);
/// let path = dir.join("small.jpg");
/// save_with(&img, &path, &SaveOptions { jpeg_quality: 50, ..SaveOptions::default() })?;
/// assert_eq!(load(&path)?.shape(), (16, 8, 3));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_with(img: &DynImage, path: impl AsRef<Path>, options: &SaveOptions) -> Result<()> {
    let path = path.as_ref();
    let format = match options.format {
        Some(f) => f,
        None => OutputFormat::from_path(path)?,
    };
    check(img, format, options, path)?;
    let mut out = OutputFile::create(path)?;
    let mut w = BufWriter::new(&mut out);
    encode(img, format, options, &mut w, path)?;
    w.flush().map_err(|e| Error::io(path, e))?;
    drop(w);
    out.commit()
}

/// Encodes `img` as `format` into `w` (stdout, a socket, a buffer): whole
/// into memory first (TIFF needs to seek), then written. Errors name the
/// output `<output>`.
///
/// ```
/// use clfilter::image::{write_to, DynImage, Image, OutputFormat, SaveOptions};
///
/// let img = DynImage::U8(Image::from_vec(2, 2, 1, vec![0, 64, 128, 255])?);
/// let mut webp = Vec::new();
/// write_to(&img, &mut webp, OutputFormat::WebP, &SaveOptions::default())?;
/// assert_eq!(&webp[..4], b"RIFF");
/// # Ok::<(), clfilter::Error>(())
/// ```
pub fn write_to(
    img: &DynImage,
    mut w: impl Write,
    format: OutputFormat,
    options: &SaveOptions,
) -> Result<()> {
    let name = Path::new("<output>");
    check(img, format, options, name)?;
    let mut bytes = Cursor::new(Vec::new());
    encode(img, format, options, &mut bytes, name)?;
    w.write_all(bytes.get_ref())
        .map_err(|e| Error::io(name, e))?;
    w.flush().map_err(|e| Error::io(name, e))
}

/// Refuses what `format` cannot hold, and a JPEG quality outside 1..=100.
fn check(img: &DynImage, format: OutputFormat, options: &SaveOptions, path: &Path) -> Result<()> {
    let (_, _, ch) = img.shape();
    format
        .check(img.sample_type(), ch)
        .map_err(|m| Error::format(path, m))?;
    if format == OutputFormat::Jpeg && !(1..=100).contains(&options.jpeg_quality) {
        return Err(Error::arg(format!(
            "JPEG quality {} is outside 1..=100",
            options.jpeg_quality
        )));
    }
    Ok(())
}

/// Writes `img` as `format`, which [`check`] has found holds it.
fn encode<W: Write + Seek>(
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
