//! Loading image files, with every integrity check the decoders offer and a
//! memory limit ([`DecodeLimits`]): see [`load`].

mod jpeg;
mod limits;
mod other;
mod png;

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, ErrorKind, Read, Seek};
use std::path::Path;

use ::image::metadata::Orientation;
use ::image::{DynamicImage, ImageFormat};

pub use limits::DecodeLimits;
pub(crate) use limits::{human_bytes, suggested_limit};

use super::{check_shape, DynImage};
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
    let path = path.as_ref();
    let file = open(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let budget = Budget {
        path,
        source: Source::File(path),
        limit: limits.max_bytes,
        file_len: len,
    };
    decode(&mut BufReader::new(file), &budget)
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
    let budget = Budget {
        path,
        source: Source::Bytes(&bytes),
        // The bytes stay in memory while they are decoded.
        limit: limits.max_bytes.map(|l| l - bytes.len() as u64),
        file_len: bytes.len() as u64,
    };
    decode(&mut Cursor::new(&bytes[..]), &budget)
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

/// Decodes `input`, at its start, by the format its first bytes show, and
/// turns the pixels upright.
fn decode(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    let head = input.fill_buf().map_err(|e| Error::io(b.path, e))?;
    if head.is_empty() {
        return Err(b.format("the file is empty"));
    }
    let (img, meta) = match ::image::guess_format(head) {
        Ok(ImageFormat::Png) => png::decode(input, b),
        Ok(ImageFormat::Jpeg) => jpeg::decode(input, b),
        Ok(ImageFormat::Tiff) => other::tiff(input, b),
        Ok(ImageFormat::Pnm) => other::pnm(input, b),
        Ok(ImageFormat::WebP) => other::webp(input, b),
        Ok(other) => Err(b.format(format!("{other:?} files are not supported; use {READABLE}"))),
        Err(_) => Err(b.format(format!("not an image file this engine reads ({READABLE})"))),
    }?;
    let mut meta = meta;
    meta.orientation = meta.orientation.filter(|&o| o != Orientation::NoTransforms);
    let img = match meta.orientation {
        Some(o) => super::orient::apply(img, o),
        None => img,
    };
    Ok((img, meta))
}

/// The formats [`load`] reads, for error messages.
const READABLE: &str = "PNG, TIFF, PNM, JPEG or WebP";

/// What the decoders read: a buffered file, or bytes read from a stream.
pub(super) trait Input: BufRead + Seek + Send {}
impl<T: BufRead + Seek + Send> Input for T {}

/// Where the bytes being decoded live, for a second, independent reader.
#[derive(Clone, Copy)]
enum Source<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

/// Opens `path` for reading; a folder is an [`ErrorKind::IsADirectory`]
/// error that says so (some systems open folders, and fail only on read).
fn open(path: &Path) -> Result<File> {
    let folder = || {
        Error::io(
            path,
            std::io::Error::new(ErrorKind::IsADirectory, "is a folder, not an image file"),
        )
    };
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(folder());
    }
    File::open(path).map_err(|e| match e.kind() {
        ErrorKind::IsADirectory => folder(),
        _ => Error::io(path, e),
    })
}

/// A file being loaded, and what it may allocate.
struct Budget<'a> {
    /// The name errors give.
    path: &'a Path,
    /// The bytes, for [`Budget::reopen`].
    source: Source<'a>,
    /// [`DecodeLimits::max_bytes`].
    limit: Option<u64>,
    /// The file's size in bytes.
    file_len: u64,
}

impl Budget<'_> {
    /// A second reader over the same bytes, at their start.
    fn reopen(&self) -> Result<Box<dyn Input + '_>> {
        Ok(match self.source {
            Source::File(p) => Box::new(BufReader::new(File::open(p).map_err(|e| self.io(e))?)),
            Source::Bytes(b) => Box::new(Cursor::new(b)),
        })
    }

    /// Checks that `need` bytes (for `what`, described lazily) fit the
    /// limit; returns the bytes left for the decoder's own buffers
    /// (`u64::MAX` without a limit).
    fn take(&self, need: u64, what: impl FnOnce() -> String) -> Result<u64> {
        match self.limit {
            None => Ok(u64::MAX),
            Some(limit) if need <= limit => Ok(limit - need),
            Some(limit) => Err(Error::DecodeLimit {
                path: self.path.to_path_buf(),
                what: what(),
                need: Some(need),
                limit,
            }),
        }
    }

    /// The error for a decoder that ran out of the bytes it was given.
    fn exceeded(&self, what: &str) -> Error {
        match self.limit {
            Some(limit) => Error::DecodeLimit {
                path: self.path.to_path_buf(),
                what: what.to_string(),
                need: None,
                limit,
            },
            None => self.format(format!("{what} needs more memory than the decoder allows")),
        }
    }

    /// Checks the engine's own bound on image shapes before anything is
    /// allocated for one.
    fn shape(&self, width: u64, height: u64, channels: usize) -> Result<()> {
        let fits = |n: u64| usize::try_from(n).ok();
        match (fits(width), fits(height)) {
            (Some(w), Some(h)) => check_shape(w, h, channels).map(|_| ()),
            _ => Err(Error::arg(format!(
                "image size {width}x{height} is too large"
            ))),
        }
        .map_err(|e| match e {
            Error::InvalidArgument(m) => self.format(m),
            other => other,
        })
    }

    fn format(&self, message: impl Into<String>) -> Error {
        Error::format(self.path, message)
    }

    fn io(&self, e: std::io::Error) -> Error {
        if e.kind() == ErrorKind::UnexpectedEof {
            return self.truncated();
        }
        Error::io(self.path, e)
    }

    /// The error for a file that ends inside its image data.
    fn truncated(&self) -> Error {
        self.format(format!(
            "the file is truncated: it ends ({} bytes) before its image data does",
            self.file_len
        ))
    }

    /// Maps an error of the `image` crate's decoders.
    fn image(&self, e: ::image::ImageError) -> Error {
        match e {
            ::image::ImageError::IoError(io) => self.io(io),
            ::image::ImageError::Limits(_) => self.exceeded("the image"),
            other => self.format(other.to_string()),
        }
    }
}

/// `a 640x480 RGB 16-bit image`, for limit errors.
fn describe(width: u64, height: u64, channels: usize, bits: u32) -> String {
    let layout = match channels {
        1 => "gray",
        2 => "gray+alpha",
        3 => "RGB",
        _ => "RGBA",
    };
    format!("a {width}x{height} {layout} {bits}-bit image")
}

/// Width x height x channels x bytes: the bytes of one buffer, saturating
/// (a saturated need is over any limit).
fn bytes_of(width: u64, height: u64, channels: usize, bytes_per_sample: u64) -> u64 {
    width
        .saturating_mul(height)
        .saturating_mul(channels as u64)
        .saturating_mul(bytes_per_sample)
}

/// Rewinds the input to the file's start (for a second pass over the headers).
fn rewind(input: &mut dyn Input, b: &Budget) -> Result<()> {
    input.rewind().map_err(|e| b.io(e))
}

/// The extra bytes [`from_dynamic`] allocates for an image of this colour
/// type: gray+alpha is copied into RGBA, everything else is moved.
fn expansion_bytes(color: ::image::ColorType, width: u64, height: u64) -> u64 {
    use ::image::ColorType as C;
    match color {
        C::La8 => bytes_of(width, height, 4, 1),
        C::La16 => bytes_of(width, height, 4, 2),
        _ => 0,
    }
}

/// An `image` crate image as a [`DynImage`] (gray+alpha becomes RGBA).
fn from_dynamic(b: &Budget, d: DynamicImage) -> Result<DynImage> {
    DynImage::try_from(d).map_err(|e| match e {
        Error::InvalidArgument(m) => b.format(m),
        other => other,
    })
}
