//! DNG raw files (Adobe's Digital Negative): the CFA mosaic, its Bayer
//! pattern, black and white levels and the as-shot white balance, read
//! into a [`Dng`] (the `formats` feature).
//!
//! What is read: the raw image of IFD0 or of one of its SubIFDs (the
//! first with `NewSubfileType` 0 and `PhotometricInterpretation` 32803,
//! CFA), 1 sample per pixel of 1 to 16 bits, in strips or tiles,
//! uncompressed (compression 1: 8-bit, 16-bit in the file's byte order,
//! other depths packed most significant bit first) or lossless JPEG
//! (compression 7, `SOF3`, 1 to 4 components, any predictor); a 2x2
//! `CFAPattern` of red, green and blue (`rggb`, `bggr`, `grbg`, `gbrg`);
//! `LinearizationTable`, `BlackLevel` (one value, or one per cell of a
//! 1x2, 2x1 or 2x2 `BlackLevelRepeatDim`; short, long or rational),
//! `BlackLevelDeltaH`/`V`, `WhiteLevel`, `ActiveArea`,
//! `DefaultCropOrigin`/`DefaultCropSize` (applied, rounded down to even
//! sides, the pattern following the crop's origin) and `AsShotNeutral`.
//!
//! Not read (an [`Error::Format`] that says which): linear (demosaiced)
//! DNGs, X-Trans and other non-2x2 or 4-colour patterns, lossy DNG
//! (compression 34892), JPEG XL (52546), deflate and floating-point data,
//! several samples per pixel. Not applied: `AsShotWhiteXY`, the colour
//! matrices and profiles, `BaselineExposure`, opcode lists (lens
//! corrections, gain maps). Nothing in a file makes the reader panic: every
//! offset and count is checked, and a truncated or corrupt file is an
//! [`Error::Format`].
//!
//! ```
//! # fn main() -> clfilter::Result<()> {
//! use clfilter::image::dng;
//! # let dir = std::env::temp_dir().join(format!("clf-doc-dng-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("none.dng");
//! # std::fs::write(&path, b"II*\0\x08\0\0\0\0\0").unwrap();
//! // A TIFF without a DNGVersion tag is not a DNG.
//! assert!(!dng::is_dng(&path)?);
//! assert!(dng::load(&path, &Default::default()).is_err());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```

mod chunks;
mod find;
mod ifd;
mod levels;
mod ljpeg;

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::bayer::Pattern;
use super::raw::{Depth, RawFormat};
use super::{DecodeLimits, Image};
use crate::error::{Error, Result};
use find::tag;
use ifd::Tiff;
pub use levels::DarkLevels;

/// A DNG's raw image, cropped to its default crop, with what the pipeline
/// needs to level and balance it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dng {
    /// The CFA mosaic, values as stored (after the `LinearizationTable`,
    /// when there is one), not leveled.
    pub mosaic: Image<u16>,
    /// The mosaic's Bayer pattern (its top-left 2x2 block).
    pub pattern: Pattern,
    /// `BitsPerSample` of the stored data.
    pub bits: u32,
    /// The black level of every site of the mosaic (DNG's `BlackLevel`
    /// and deltas; named "dark" here, as the image layer leaves the names
    /// of operations to `ops`).
    pub dark: DarkLevels,
    /// The white level (`WhiteLevel`, else `2^bits - 1`).
    pub white: f64,
    /// `AsShotNeutral`: the camera's neutral as red, green and blue
    /// (usually green 1), when the file gives it.
    pub as_shot_neutral: Option<[f32; 3]>,
}

impl Dng {
    /// The as-shot white balance as gains (`1 / neutral`, green 1): what a
    /// white-balance stage (`r=..:g=1:b=..`) takes. `None` without
    /// `AsShotNeutral`.
    pub fn as_shot_gains(&self) -> Option<[f32; 3]> {
        let n = self.as_shot_neutral?;
        Some([n[1] / n[0], 1.0, n[1] / n[2]])
    }

    /// The mosaic leveled: `(v - black) / (white - black)`, per site,
    /// scaled to 0..65535, rounded to nearest and clamped (values below
    /// black become 0, above white 65535).
    pub fn linear(&self) -> Image<u16> {
        use rayon::prelude::*;
        let mut out = self.mosaic.clone().into_packed();
        let w = out.width();
        // `into_packed` made the rows contiguous.
        if let Some(data) = out.as_packed_mut() {
            data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
                for (x, v) in row.iter_mut().enumerate() {
                    let b = self.dark.at(x, y);
                    let range = self.white - b;
                    *v = if range > 0.0 {
                        ((f64::from(*v) - b) * (65535.0 / range))
                            .round()
                            .clamp(0.0, 65535.0) as u16
                    } else {
                        0 // the deltas put this site's black at or above white
                    };
                }
            });
        }
        out
    }

    /// The raw format of [`Dng::linear`]: this pattern, 16-bit samples.
    pub fn linear_format(&self) -> RawFormat {
        RawFormat {
            pattern: Some(self.pattern),
            depth: Depth::Bits16 { bits: 16 },
        }
    }
}

/// Whether the file at `path` is a DNG: a TIFF whose first directory has a
/// `DNGVersion` tag. Reads the header and that directory only.
pub fn is_dng(path: impl AsRef<Path>) -> Result<bool> {
    let path = path.as_ref();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    sniff(&mut std::io::BufReader::new(&mut file)).map_err(|e| Error::io(path, e))
}

/// [`is_dng`] for bytes in memory.
pub fn is_dng_bytes(bytes: &[u8]) -> bool {
    sniff(&mut std::io::Cursor::new(bytes)).unwrap_or(false)
}

/// Whether `r`, at a TIFF's start, holds a DNG (a `DNGVersion` tag in the
/// first directory); leaves `r` anywhere. A file too short for a TIFF
/// header or directory is not a DNG.
pub(crate) fn sniff(r: &mut (impl Read + Seek + ?Sized)) -> std::io::Result<bool> {
    let mut head = [0u8; 8];
    if read_all(r, &mut head)?.is_none() {
        return Ok(false);
    }
    let big = match head[..4] {
        [b'I', b'I', 42, 0] => false,
        [b'M', b'M', 0, 42] => true,
        _ => return Ok(false),
    };
    let u16_of = |b: [u8; 2]| {
        if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    let off = [head[4], head[5], head[6], head[7]];
    let off = if big {
        u32::from_be_bytes(off)
    } else {
        u32::from_le_bytes(off)
    };
    r.seek(SeekFrom::Start(u64::from(off)))?;
    let mut count = [0u8; 2];
    if read_all(r, &mut count)?.is_none() {
        return Ok(false);
    }
    let mut entry = [0u8; 12];
    for _ in 0..u16_of(count) {
        if read_all(r, &mut entry)?.is_none() {
            return Ok(false);
        }
        if u16_of([entry[0], entry[1]]) == tag::DNG_VERSION {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Fills `buf`; `None` at the end of the input.
fn read_all(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> std::io::Result<Option<()>> {
    match r.read_exact(buf) {
        Ok(()) => Ok(Some(())),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Loads the DNG at `path`. The file is read whole; it and the mosaic's
/// three copies while it is decoded (2 bytes a site each) count against
/// `limits`.
pub fn load(path: impl AsRef<Path>, limits: &DecodeLimits) -> Result<Dng> {
    let path = path.as_ref();
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    check_limit(path, "the DNG file, read whole", len, limits.max_bytes)?;
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    decode(&bytes, path, limits)
}

/// Decodes a DNG held in memory; `name` is what errors call it.
pub fn decode(bytes: &[u8], name: impl AsRef<Path>, limits: &DecodeLimits) -> Result<Dng> {
    let name = name.as_ref();
    let bad = |m: String| Error::format(name, format!("DNG: {m}"));
    let t = Tiff::new(bytes).ok_or_else(|| bad("not a TIFF file (a DNG is one)".into()))?;
    let ifd = find::raw_ifd(&t).map_err(bad)?;
    let l = find::layout(&t, &ifd).map_err(bad)?;
    // The decoded chunks, the whole mosaic and the crop: 2 bytes a site each.
    let need = (l.width as u64 * l.height as u64).saturating_mul(6);
    let left = limits
        .max_bytes
        .map(|m| m.saturating_sub(bytes.len() as u64));
    check_limit(
        name,
        &format!("a {}x{} raw image", l.width, l.height),
        need,
        left,
    )?;
    super::check_shape(l.width, l.height, 1).map_err(|e| bad(e.to_string()))?;
    let mut raw = chunks::mosaic(&t, &l).map_err(bad)?;
    if let Some(table) = t.uints(&ifd, tag::LINEARIZATION).map_err(bad)? {
        levels::linearize(&mut raw, &table).map_err(bad)?;
    }
    levels::crop(&t, &ifd, &l, raw).map_err(bad)
}

/// An [`Error::DecodeLimit`] when `need` bytes are over `limit`.
fn check_limit(path: &Path, what: &str, need: u64, limit: Option<u64>) -> Result<()> {
    match limit {
        Some(limit) if need > limit => Err(Error::DecodeLimit {
            path: path.to_path_buf(),
            what: what.to_string(),
            need: Some(need),
            limit,
        }),
        _ => Ok(()),
    }
}
