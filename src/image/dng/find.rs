//! Finding a DNG's raw image (the CFA directory) and reading the tags that
//! describe it into a [`Layout`].

use super::ifd::{Ifd, Tiff};
use crate::image::bayer::Pattern;

/// TIFF and DNG tag numbers read here.
pub(super) mod tag {
    pub const NEW_SUBFILE_TYPE: u16 = 254;
    pub const WIDTH: u16 = 256;
    pub const HEIGHT: u16 = 257;
    pub const BITS: u16 = 258;
    pub const COMPRESSION: u16 = 259;
    pub const PHOTOMETRIC: u16 = 262;
    pub const STRIP_OFFSETS: u16 = 273;
    pub const SAMPLES: u16 = 277;
    pub const ROWS_PER_STRIP: u16 = 278;
    pub const STRIP_BYTES: u16 = 279;
    pub const TILE_WIDTH: u16 = 322;
    pub const TILE_HEIGHT: u16 = 323;
    pub const TILE_OFFSETS: u16 = 324;
    pub const TILE_BYTES: u16 = 325;
    pub const SUB_IFDS: u16 = 330;
    pub const CFA_REPEAT: u16 = 33421;
    pub const CFA_PATTERN: u16 = 33422;
    pub const DNG_VERSION: u16 = 50706;
    pub const CFA_PLANE_COLOR: u16 = 50710;
    pub const CFA_LAYOUT: u16 = 50711;
    pub const LINEARIZATION: u16 = 50712;
    // BlackLevelRepeatDim, BlackLevel, BlackLevelDeltaH and V.
    pub const DARK_REPEAT: u16 = 50713;
    pub const DARK_LEVEL: u16 = 50714;
    pub const DARK_DELTA_H: u16 = 50715;
    pub const DARK_DELTA_V: u16 = 50716;
    pub const WHITE: u16 = 50717;
    pub const CROP_ORIGIN: u16 = 50719;
    pub const CROP_SIZE: u16 = 50720;
    pub const AS_SHOT_NEUTRAL: u16 = 50728;
    pub const ACTIVE_AREA: u16 = 50829;
}

/// PhotometricInterpretation values.
const CFA: usize = 32803;
const LINEAR_RAW: usize = 34892;

/// The raw image's storage and what the tags say about its samples.
#[derive(Debug)]
pub(super) struct Layout {
    pub width: usize,
    pub height: usize,
    pub bits: u32,
    /// 1 (uncompressed) or 7 (lossless JPEG).
    pub compression: usize,
    /// The chunks (strips or tiles): their size, offsets and byte counts.
    pub chunk_width: usize,
    pub chunk_height: usize,
    pub offsets: Vec<usize>,
    pub byte_counts: Vec<usize>,
    /// The CFA's 2x2 pattern at the raw image's (0, 0).
    pub pattern: Pattern,
    /// `[top, left, bottom, right]`: the active area (the whole image
    /// without the tag).
    pub active: [usize; 4],
}

/// The raw directory: the first of IFD0 and its SubIFDs that is a main
/// image (`NewSubfileType` 0) holding CFA data.
pub(super) fn raw_ifd(t: &Tiff) -> Result<Ifd, String> {
    let ifd0 = t.ifd(t.first_ifd()?)?;
    if !ifd0.has(tag::DNG_VERSION) {
        return Err("a TIFF without a DNGVersion tag is not a DNG".into());
    }
    let subs = t.uints(&ifd0, tag::SUB_IFDS)?.unwrap_or_default();
    let mut linear = false;
    let mut candidates = vec![ifd0];
    for off in subs.into_iter().take(64) {
        candidates.push(t.ifd(off)?);
    }
    for ifd in candidates {
        let main = t.uint(&ifd, tag::NEW_SUBFILE_TYPE)?.unwrap_or(0) == 0;
        match t.uint(&ifd, tag::PHOTOMETRIC)? {
            Some(CFA) if main => return Ok(ifd),
            Some(LINEAR_RAW) if main => linear = true,
            _ => {}
        }
    }
    Err(if linear {
        "a linear DNG (demosaiced, PhotometricInterpretation 34892): only CFA DNGs are read".into()
    } else {
        "the DNG has no raw CFA image (PhotometricInterpretation 32803, NewSubfileType 0)".into()
    })
}

/// Reads the raw directory's layout, refusing what is not read here.
pub(super) fn layout(t: &Tiff, ifd: &Ifd) -> Result<Layout, String> {
    let need = |tag: u16, name: &str| -> Result<usize, String> {
        t.uint(ifd, tag)?
            .ok_or_else(|| format!("the raw image has no {name} tag"))
    };
    let (width, height) = (
        need(tag::WIDTH, "ImageWidth")?,
        need(tag::HEIGHT, "ImageLength")?,
    );
    let samples = t.uint(ifd, tag::SAMPLES)?.unwrap_or(1);
    if samples != 1 {
        return Err(format!(
            "a CFA image of {samples} samples per pixel (DNG CFA data has 1)"
        ));
    }
    let bits = t.uint(ifd, tag::BITS)?.unwrap_or(1);
    if !(1..=16).contains(&bits) {
        return Err(format!(
            "{bits}-bit raw samples (1 to 16 bits are read; not floating point)"
        ));
    }
    let compression = t.uint(ifd, tag::COMPRESSION)?.unwrap_or(1);
    if !matches!(compression, 1 | 7) {
        return Err(format!(
            "compression {compression} (read: 1, uncompressed, and 7, lossless JPEG; not lossy \
             DNG, 34892, or JPEG XL, 52546)"
        ));
    }
    let (chunk_width, chunk_height, offsets, byte_counts) = if ifd.has(tag::TILE_OFFSETS) {
        (
            need(tag::TILE_WIDTH, "TileWidth")?,
            need(tag::TILE_HEIGHT, "TileLength")?,
            t.uints(ifd, tag::TILE_OFFSETS)?.unwrap_or_default(),
            t.uints(ifd, tag::TILE_BYTES)?
                .ok_or("the raw image has no TileByteCounts")?,
        )
    } else {
        let rows = t
            .uint(ifd, tag::ROWS_PER_STRIP)?
            .unwrap_or(height)
            .min(height);
        (
            width,
            rows,
            t.uints(ifd, tag::STRIP_OFFSETS)?
                .ok_or("the raw image has no StripOffsets")?,
            t.uints(ifd, tag::STRIP_BYTES)?
                .ok_or("the raw image has no StripByteCounts")?,
        )
    };
    if width == 0 || height == 0 || chunk_width == 0 || chunk_height == 0 {
        return Err(format!(
            "a raw image of {width}x{height} in chunks of {chunk_width}x{chunk_height}"
        ));
    }
    let chunks = width
        .div_ceil(chunk_width)
        .checked_mul(height.div_ceil(chunk_height));
    let chunks = chunks.ok_or("a raw image of more strips or tiles than memory holds")?;
    if offsets.len() != chunks || byte_counts.len() != chunks {
        return Err(format!(
            "the raw image needs {chunks} strips or tiles, but the tags give {} offsets and {} \
             byte counts",
            offsets.len(),
            byte_counts.len()
        ));
    }
    Ok(Layout {
        width,
        height,
        bits: bits as u32,
        compression,
        chunk_width,
        chunk_height,
        offsets,
        byte_counts,
        pattern: pattern(t, ifd)?,
        active: active_area(t, ifd, width, height)?,
    })
}

/// The 2x2 Bayer pattern from `CFARepeatPatternDim` and `CFAPattern`.
fn pattern(t: &Tiff, ifd: &Ifd) -> Result<Pattern, String> {
    let dim = t.uints(ifd, tag::CFA_REPEAT)?.unwrap_or_else(|| vec![2, 2]);
    let cfa = t
        .raw(ifd, tag::CFA_PATTERN)
        .ok_or("the raw image has no CFAPattern tag")?;
    if let Some(planes) = t.raw(ifd, tag::CFA_PLANE_COLOR) {
        if planes != [0, 1, 2] {
            return Err(format!(
                "CFAPlaneColor {planes:?}: only red, green, blue (0, 1, 2) sensors are read"
            ));
        }
    }
    if t.uint(ifd, tag::CFA_LAYOUT)?.unwrap_or(1) != 1 {
        return Err("a CFA layout other than rectangular (CFALayout 1)".into());
    }
    if dim != [2, 2] || cfa.len() != 4 {
        return Err(format!(
            "a {} CFA pattern {cfa:?}: only 2x2 Bayer patterns are read (not X-Trans 6x6 or \
             other repeats)",
            dim.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        ));
    }
    Pattern::ALL
        .into_iter()
        .find(|p| (0..4).all(|i| p.colour(i % 2, i / 2) == usize::from(cfa[i])))
        .ok_or_else(|| {
            format!(
                "CFA pattern {cfa:?} is not a Bayer pattern (0 red, 1 green, 2 blue; \
                 4-colour and other sensors are not read)"
            )
        })
}

/// `ActiveArea` as `[top, left, bottom, right]`, checked to lie inside.
fn active_area(t: &Tiff, ifd: &Ifd, width: usize, height: usize) -> Result<[usize; 4], String> {
    let Some(a) = t.uints(ifd, tag::ACTIVE_AREA)? else {
        return Ok([0, 0, height, width]);
    };
    match a[..] {
        [top, left, bottom, right]
            if top < bottom && left < right && bottom <= height && right <= width =>
        {
            Ok([top, left, bottom, right])
        }
        _ => Err(format!(
            "ActiveArea {a:?} does not lie inside the {width}x{height} image"
        )),
    }
}
