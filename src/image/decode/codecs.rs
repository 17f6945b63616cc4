//! The decoders' shared frame: which decoder a file's first bytes pick,
//! the memory budget every decoder draws from ([`Budget`]) and the
//! helpers they share (only with the `formats` feature).

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, ErrorKind, Seek};
use std::path::Path;

use ::image::metadata::Orientation;
use ::image::{DynamicImage, ImageFormat};

use super::{jpeg, other, png, DecodeLimits, Metadata};
use crate::error::{Error, Result};
use crate::image::{check_shape, DynImage};

/// Opens and decodes the file `path` ([`super::load_with_metadata`]).
/// A file that is not a regular file (a FIFO, `/dev/stdin`, a process
/// substitution's `/dev/fd/N`) can be read only once and not seeked: it is
/// read whole into memory, within the limit, as a stream is.
pub(super) fn decode_file(path: &Path, limits: &DecodeLimits) -> Result<(DynImage, Metadata)> {
    let file = open(path)?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return super::read_from(file, path, limits);
    }
    let len = meta.len();
    let budget = Budget {
        path,
        source: Source::File(path),
        limit: limits.max_bytes,
        file_len: len,
    };
    decode(&mut BufReader::new(file), &budget)
}

/// Decodes bytes read from a stream ([`super::read_from`]), which the
/// caller has checked against the limit.
pub(super) fn decode_bytes(
    bytes: &[u8],
    path: &Path,
    limits: &DecodeLimits,
) -> Result<(DynImage, Metadata)> {
    let budget = Budget {
        path,
        source: Source::Bytes(bytes),
        // The bytes stay in memory while they are decoded.
        limit: limits
            .max_bytes
            .map(|l| l.saturating_sub(bytes.len() as u64)),
        file_len: bytes.len() as u64,
    };
    decode(&mut Cursor::new(bytes), &budget)
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
        Ok(ImageFormat::Tiff) if is_dng(input, b)? => Err(b.format(
            "a DNG raw file: it holds a camera mosaic, not an image; read it as a raw \
             frame (`filterctl apply IN.dng -o OUT.png`, or the library's `image::dng::load`)",
        )),
        Ok(ImageFormat::Tiff) => other::tiff(input, b),
        Ok(ImageFormat::Pnm) => other::pnm(input, b),
        Ok(ImageFormat::WebP) => other::webp(input, b),
        Ok(other) => Err(b.format(format!("{other:?} files are not supported; use {READABLE}"))),
        Err(_) => Err(b.format(format!("not an image file this engine reads ({READABLE})"))),
    }?;
    let mut meta = meta;
    meta.orientation = meta.orientation.filter(|&o| o != Orientation::NoTransforms);
    let img = match meta.orientation {
        Some(o) => crate::image::orient::apply(img, o),
        None => img,
    };
    Ok((img, meta))
}

/// Whether the TIFF `input` is a DNG; rewinds it.
fn is_dng(input: &mut dyn Input, b: &Budget) -> Result<bool> {
    let dng = crate::image::dng::sniff(input).map_err(|e| b.io(e))?;
    rewind(input, b)?;
    Ok(dng)
}

/// The formats [`load`](super::load) reads, for error messages.
const READABLE: &str = "PNG, TIFF, PNM, JPEG or WebP";

/// What the decoders read: a buffered file, or bytes read from a stream.
pub(super) trait Input: BufRead + Seek + Send {}
impl<T: BufRead + Seek + Send> Input for T {}

/// Where the bytes being decoded live, for a second, independent reader.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
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
pub(super) struct Budget<'a> {
    /// The name errors give.
    pub(super) path: &'a Path,
    /// The bytes, for [`Budget::reopen`].
    pub(super) source: Source<'a>,
    /// [`DecodeLimits::max_bytes`].
    pub(super) limit: Option<u64>,
    /// The file's size in bytes.
    pub(super) file_len: u64,
}

impl Budget<'_> {
    /// A second reader over the same bytes, at their start.
    pub(super) fn reopen(&self) -> Result<Box<dyn Input + '_>> {
        Ok(match self.source {
            Source::File(p) => Box::new(BufReader::new(File::open(p).map_err(|e| self.io(e))?)),
            Source::Bytes(b) => Box::new(Cursor::new(b)),
        })
    }

    /// Checks that `need` bytes (for `what`, described lazily) fit the
    /// limit; returns the bytes left for the decoder's own buffers
    /// (`u64::MAX` without a limit).
    pub(super) fn take(&self, need: u64, what: impl FnOnce() -> String) -> Result<u64> {
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
    pub(super) fn exceeded(&self, what: &str) -> Error {
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
    pub(super) fn shape(&self, width: u64, height: u64, channels: usize) -> Result<()> {
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

    pub(super) fn format(&self, message: impl Into<String>) -> Error {
        Error::format(self.path, message)
    }

    pub(super) fn io(&self, e: std::io::Error) -> Error {
        if e.kind() == ErrorKind::UnexpectedEof {
            return self.truncated();
        }
        Error::io(self.path, e)
    }

    /// The error for a file that ends inside its image data.
    pub(super) fn truncated(&self) -> Error {
        self.format(format!(
            "the file is truncated: it ends ({} bytes) before its image data does",
            self.file_len
        ))
    }

    /// Whether `e` is [`Budget::truncated`]'s error.
    pub(super) fn is_truncated(&self, e: &Error) -> bool {
        e.to_string() == self.truncated().to_string()
    }

    /// Maps an error of the `image` crate's decoders.
    pub(super) fn image(&self, e: ::image::ImageError) -> Error {
        match e {
            ::image::ImageError::IoError(io) => self.io(io),
            ::image::ImageError::Limits(_) => self.exceeded("the image"),
            other => self.format(other.to_string()),
        }
    }
}

/// `a 640x480 RGB 16-bit image`, for limit errors.
pub(super) fn describe(width: u64, height: u64, channels: usize, bits: u32) -> String {
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
pub(super) fn bytes_of(width: u64, height: u64, channels: usize, bytes_per_sample: u64) -> u64 {
    width
        .saturating_mul(height)
        .saturating_mul(channels as u64)
        .saturating_mul(bytes_per_sample)
}

/// Rewinds the input to the file's start (for a second pass over the headers).
pub(super) fn rewind(input: &mut dyn Input, b: &Budget) -> Result<()> {
    input.rewind().map_err(|e| b.io(e))
}

/// The extra bytes [`from_dynamic`] allocates for an image of this colour
/// type: gray+alpha is copied into RGBA, everything else is moved.
pub(super) fn expansion_bytes(color: ::image::ColorType, width: u64, height: u64) -> u64 {
    use ::image::ColorType as C;
    match color {
        C::La8 => bytes_of(width, height, 4, 1),
        C::La16 => bytes_of(width, height, 4, 2),
        _ => 0,
    }
}

/// An `image` crate image as a [`DynImage`] (gray+alpha becomes RGBA).
pub(super) fn from_dynamic(b: &Budget, d: DynamicImage) -> Result<DynImage> {
    DynImage::try_from(d).map_err(|e| match e {
        Error::InvalidArgument(m) => b.format(m),
        other => other,
    })
}
