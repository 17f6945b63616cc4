//! Saving: the options, the checks and the atomic file; the encoders are
//! in `encode` (the `formats` feature), loading is in `decode`, the
//! formats and what each holds in `format`.

use std::io::{BufWriter, Cursor, Write};
use std::path::Path;

#[cfg(feature = "formats")]
use super::encode::encode;
use super::format::OutputFormat;
use super::output::OutputFile;
use super::DynImage;
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
/// or WebP, a channel count the format does not hold, `.pbm` (1-bit). A
/// build without the `formats` feature writes nothing: every save is an
/// [`Error::FeatureDisabled`].
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
    let written = encode(img, format, options, &mut w, path)
        .and_then(|()| w.flush().map_err(|e| Error::io(path, e)));
    if let Err(e) = written {
        // Encoders wrap the file's own failure (a full disk, a closed pipe)
        // in their errors, which lose its kind: report it as the system gave
        // it. Read before the buffer is let go (unwritten), so no write after
        // the failure can stand in for it.
        let io = w.get_ref().write_error();
        drop(w.into_parts());
        return Err(io.map_or(e, |io| Error::io(path, io)));
    }
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
    let (w, h, ch) = img.shape();
    format
        .check(img.sample_type(), ch)
        .and_then(|_| format.check_size(w, h))
        .map_err(|m| Error::format(path, m))?;
    if format == OutputFormat::Jpeg && !(1..=100).contains(&options.jpeg_quality) {
        return Err(Error::arg(format!(
            "JPEG quality {} is outside 1..=100",
            options.jpeg_quality
        )));
    }
    Ok(())
}

/// Without the codecs nothing is encoded: an [`Error::FeatureDisabled`].
#[cfg(not(feature = "formats"))]
fn encode<W: Write>(
    _img: &DynImage,
    _format: OutputFormat,
    _options: &SaveOptions,
    _w: &mut W,
    path: &Path,
) -> Result<()> {
    Err(Error::formats_off(path, "saving an image file"))
}
