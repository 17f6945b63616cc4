//! Loading image files, with every integrity check the decoders offer and a
//! memory limit ([`DecodeLimits`]): see [`load`].

#[cfg(feature = "formats")]
mod codecs;
#[cfg(feature = "formats")]
mod jpeg;
mod limits;
#[cfg(feature = "formats")]
mod other;
#[cfg(feature = "formats")]
mod png;

use std::io::Read;
use std::path::Path;

use ::image::metadata::Orientation;

#[cfg(feature = "formats")]
use codecs::{decode_bytes, decode_file};
pub use limits::DecodeLimits;
pub(crate) use limits::{human_bytes, suggested_limit};

use super::DynImage;
use crate::error::{Error, Result};

/// Loads an image file with the limit `FILTERCTL_DECODE_LIMIT` sets
/// ([`DecodeLimits::from_env`]), else 512 MiB.
///
/// The format comes from the file's contents, never its name: PNG (8/16-bit,
/// any colour type; palettes and low bit depths expand to 8-bit), TIFF
/// (8/16-bit and f32), PNM (P1-P7), JPEG (8-bit gray or RGB) and WebP
/// (lossy or lossless, 8-bit RGB or RGBA; the first frame of an
/// animation). Gray+alpha files load as RGBA, so every image has 1, 3 or 4
/// channels.
///
/// A DNG (a TIFF with a `DNGVersion` tag) is an [`Error::Format`] that
/// says so: its pixels are a camera mosaic, which
/// [`dng::load`](crate::image::dng::load) reads.
///
/// An EXIF orientation (PNG `eXIf`, JPEG `APP1`, the TIFF tag, WebP
/// `EXIF`) is applied: the pixels come out upright, as a viewer shows
/// them. [`load_with_metadata`] tells which orientation it was, and
/// returns the ICC profile.
///
/// A file is an error ([`Error::Format`] naming it), never a silently wrong
/// or padded image, when
///
/// - it ends early: inside the image data, or (PNG) before the `IEND`
///   chunk that closes it;
/// - a checksum fails: PNG chunk CRCs (ancillary chunks included) and the
///   Adler-32 of the compressed image data, which the `png` crate skips by
///   default;
/// - the compressed data is malformed, decompresses to less than the header
///   declares, or (PNG) goes on past the pixels without ending properly;
/// - (PNG) bytes follow the `IEND` chunk: a PNG has nothing after it, so
///   they are the rest of another file (a longer file overwritten in place);
/// - (PNG) a pixel's palette index lies past the palette's entries (the
///   `png` crate would expand it to black);
/// - (PNM) a sample lies above the header's maxval (the `image` decoder
///   would scale it past white and clip it);
/// - (JPEG) the marker segments and coded data do not lead to the
///   end-of-image marker (a cut near the end, which the decoder would pad
///   with zeros), or the decoder, in strict mode, finds anything out of
///   place: a scan cut short, a marker inside entropy-coded data, stray
///   bytes between headers. Bytes after the end-of-image marker are
///   allowed: cameras append a second picture there (multi-picture JPEGs).
///
/// TIFF, PNM and JPEG carry no checksum over their pixels, so a flipped
/// bit in uncompressed (or LZW, PackBits, JPEG-coded) pixel data cannot be
/// told from a real pixel; Deflate-compressed TIFF strips are checked
/// like PNG data. Bytes after the image in a PNM file are allowed (a PNM
/// stream may hold several images). WebP files are checked as far as the
/// `image` crate's decoder checks them (lossless data carries no
/// checksum).
///
/// A folder is an [`Error::Io`] naming it, of kind
/// [`std::io::ErrorKind::IsADirectory`].
///
/// Errors: [`Error::Io`] when the file cannot be read (or is a folder),
/// [`Error::Format`] when it is not a valid image of a supported format,
/// [`Error::FeatureDisabled`] in a build without the `formats` feature,
/// [`Error::DecodeLimit`] when it needs more memory than the limit,
/// [`Error::InvalidArgument`] when the variable does not parse.
pub fn load(path: impl AsRef<Path>) -> Result<DynImage> {
    load_with(path, &DecodeLimits::from_env()?)
}

/// [`load`] with an explicit limit; the environment is not read.
///
/// ```no_run
/// use clfilter::image::{load_with, DecodeLimits};
///
/// // A 30000 x 20000 RGB scan needs 1.7 GiB, more than the default.
/// let scan = load_with("scan.tif", &DecodeLimits::new(2 << 30))?;
/// # Ok::<(), clfilter::Error>(())
/// ```
pub fn load_with(path: impl AsRef<Path>, limits: &DecodeLimits) -> Result<DynImage> {
    load_with_metadata(path, limits).map(|(img, _)| img)
}

/// [`load_with`], and what the file says besides its pixels: its ICC
/// profile and the EXIF orientation that was applied ([`Metadata`]).
///
/// ```no_run
/// use clfilter::image::{load_with_metadata, save_with, DecodeLimits, SaveOptions};
///
/// let (photo, meta) = load_with_metadata("photo.jpg", &DecodeLimits::default())?;
/// // The pixels are upright; the profile goes on to the output.
/// let options = SaveOptions { icc_profile: meta.icc_profile, ..SaveOptions::default() };
/// save_with(&photo, "photo.png", &options)?;
/// # Ok::<(), clfilter::Error>(())
/// ```
pub fn load_with_metadata(
    path: impl AsRef<Path>,
    limits: &DecodeLimits,
) -> Result<(DynImage, Metadata)> {
    decode_file(path.as_ref(), limits)
}

/// Reads an image from `reader` (stdin, a socket) to its end, then decodes
/// it as [`load_with_metadata`] does a file; `name` is what errors call
/// it (`<stdin>`). The bytes read count against the limit, with what
/// decoding them takes: a stream longer than the limit is an
/// [`Error::DecodeLimit`] as soon as it passes it.
///
/// ```
/// use clfilter::image::{read_from, DecodeLimits, DynImage, Image};
///
/// let mut png = Vec::new();
/// let img = DynImage::U8(Image::from_vec(2, 1, 1, vec![7, 9])?);
/// clfilter::image::write_to(&img, &mut png, clfilter::image::OutputFormat::Png, &Default::default())?;
/// let (back, _) = read_from(&png[..], "<memory>", &DecodeLimits::default())?;
/// assert_eq!(back, img);
/// # Ok::<(), clfilter::Error>(())
/// ```
pub fn read_from(
    reader: impl Read,
    name: impl AsRef<Path>,
    limits: &DecodeLimits,
) -> Result<(DynImage, Metadata)> {
    let path = name.as_ref();
    let cap = limits.max_bytes.unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    reader
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if let Some(limit) = limits.max_bytes.filter(|&l| bytes.len() as u64 > l) {
        return Err(Error::DecodeLimit {
            path: path.to_path_buf(),
            what: "the input stream".to_string(),
            need: None,
            limit,
        });
    }
    decode_bytes(&bytes, path, limits)
}

/// What a file says about its pixels besides the pixels, as
/// [`load_with_metadata`] and [`read_from`] return it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Metadata {
    /// The embedded ICC colour profile, as stored (PNG `iCCP`, JPEG `APP2`,
    /// TIFF tag 34675, WebP `ICCP`).
    pub icc_profile: Option<Vec<u8>>,
    /// The EXIF orientation the file declared (PNG `eXIf`, JPEG `APP1`,
    /// the TIFF tag, WebP `EXIF`), already applied: the loaded pixels are
    /// upright. `None` when the file declares none.
    pub orientation: Option<Orientation>,
}

/// Without the codecs every file is an [`Error::FeatureDisabled`].
#[cfg(not(feature = "formats"))]
fn decode_file(path: &Path, _limits: &DecodeLimits) -> Result<(DynImage, Metadata)> {
    Err(Error::formats_off(path, "loading an image file"))
}

/// Without the codecs every stream is an [`Error::FeatureDisabled`].
#[cfg(not(feature = "formats"))]
fn decode_bytes(
    _bytes: &[u8],
    path: &Path,
    _limits: &DecodeLimits,
) -> Result<(DynImage, Metadata)> {
    Err(Error::formats_off(path, "decoding an image"))
}

#[cfg(all(test, not(feature = "formats")))]
mod tests {
    use crate::image::{load, read_from, save, write_to, DecodeLimits, Image, OutputFormat};
    use crate::{DynImage, Error};

    /// Without `formats` every file call is a typed error that names the
    /// feature, and nothing is written.
    #[test]
    fn files_need_the_formats_feature() {
        let off = |e: Error| match e {
            Error::FeatureDisabled { feature, .. } => {
                assert_eq!(feature, "formats");
                assert!(e.to_string().contains("features = [\"formats\"]"), "{e}");
            }
            other => panic!("expected FeatureDisabled, got {other:?}"),
        };
        let dir = std::env::temp_dir().join(format!("clf-noformats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.png");
        let img = DynImage::U8(Image::from_vec(2, 1, 1, vec![1, 2]).unwrap());
        off(save(&img, &path).unwrap_err());
        assert!(
            std::fs::read_dir(&dir).unwrap().next().is_none(),
            "a file was left"
        );
        std::fs::write(&path, b"\x89PNG\r\n\x1a\n").unwrap();
        off(load(&path).unwrap_err());
        off(read_from(&b"P5 1 1 255 x"[..], "<memory>", &DecodeLimits::default()).unwrap_err());
        let mut sink = Vec::new();
        off(write_to(&img, &mut sink, OutputFormat::Png, &Default::default()).unwrap_err());
        assert!(sink.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
