//! PNG through the `png` crate, with every check it offers turned on (the
//! `image` crate's PNG decoder cannot turn on the Adler-32 check).

use std::io::SeekFrom;

use png::{BitDepth, ColorType, DecodeOptions, Decoder, Limits, Reader, Transformations};

use super::codecs::{bytes_of, describe, rewind, Budget, Input};
use super::Metadata;
use crate::error::{Error, Result};
use crate::image::{DynImage, Image};

/// The decoded layout, as the `png` crate writes it (palettes and low bit
/// depths expanded to 8 bits, a `tRNS` chunk to an alpha channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    width: u64,
    height: u64,
    /// Channels as decoded: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
    channels: usize,
    /// 8 or 16.
    bits: u32,
    /// The bytes of the decoded frame.
    frame: u64,
}

impl Layout {
    fn of(r: &Reader<&mut dyn Input>) -> Option<Layout> {
        let (color, depth) = r.output_color_type();
        let channels = match color {
            ColorType::Grayscale => 1,
            ColorType::GrayscaleAlpha => 2,
            // EXPAND turns palettes into RGB or RGBA, so Indexed is not
            // seen here; were it, the frame's length would not match and
            // `to_image` would refuse it.
            ColorType::Rgb | ColorType::Indexed => 3,
            ColorType::Rgba => 4,
        };
        Some(Layout {
            width: u64::from(r.info().width),
            height: u64::from(r.info().height),
            channels,
            bits: if depth == BitDepth::Sixteen { 16 } else { 8 },
            frame: u64::try_from(r.output_buffer_size()?).ok()?,
        })
    }

    /// Channels of the loaded image: gray+alpha becomes RGBA.
    fn loaded_channels(&self) -> usize {
        if self.channels == 2 {
            4
        } else {
            self.channels
        }
    }

    /// The bytes a load holds at once: the decoded frame, the loaded image
    /// when it is a copy (16-bit samples, gray+alpha), and the decoder's row
    /// buffers (it keeps a few raw rows and one output row).
    fn need(&self) -> u64 {
        let bytes = u64::from(self.bits / 8);
        let copy = if self.bits == 16 || self.channels == 2 {
            bytes_of(self.width, self.height, self.loaded_channels(), bytes)
        } else {
            0
        };
        let row = bytes_of(self.width, 1, self.channels, bytes).saturating_add(1);
        self.frame
            .saturating_add(copy)
            .saturating_add(row.saturating_mul(6))
    }
}

/// The strict decoder options: CRCs of every chunk (a bad ancillary chunk
/// is an error, not skipped) and the Adler-32 of the image data.
fn reader<'a>(
    input: &'a mut dyn Input,
    b: &Budget,
    limit: u64,
    transformations: Transformations,
) -> Result<Reader<&'a mut dyn Input>> {
    let mut options = DecodeOptions::default();
    options.set_ignore_adler32(false);
    options.set_ignore_crc(false);
    options.set_skip_ancillary_crc_failures(false);
    options.set_ignore_text_chunk(false);
    options.set_ignore_iccp_chunk(false);
    let mut dec = Decoder::new_with_options(input, options);
    dec.set_limits(Limits {
        bytes: usize::try_from(limit).unwrap_or(usize::MAX),
    });
    dec.set_transformations(transformations);
    // The engine's bound on the size, before the decoder sizes its buffers
    // (whose overflow it would report as its limit).
    let info = dec.read_header_info().map_err(|e| png_err(b, e))?;
    b.shape(u64::from(info.width), u64::from(info.height), 1)?;
    dec.read_info().map_err(|e| png_err(b, e))
}

/// Decodes the PNG `input`, at its start, to the end of its `IEND` chunk,
/// which must be the end of the file.
pub(super) fn decode(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    // First pass: the headers only, for the layout the frame will have (a
    // `tRNS` chunk anywhere before the data adds a channel), and the
    // colour profile and EXIF chunks that come before the data.
    let (layout, meta, palette) = {
        let r = reader(
            input,
            b,
            b.limit.unwrap_or(u64::MAX),
            Transformations::EXPAND,
        )?;
        let info = r.info();
        let palette = short_palette(info);
        let meta = Metadata {
            icc_profile: info.icc_profile.as_ref().map(|p| p.to_vec()),
            orientation: info
                .exif_metadata
                .as_ref()
                .and_then(|e| ::image::metadata::Orientation::from_exif_chunk(e)),
        };
        (
            Layout::of(&r).ok_or_else(|| too_large(b, &r))?,
            meta,
            palette,
        )
    };
    b.shape(layout.width, layout.height, layout.loaded_channels())?;
    let left = b.take(layout.need(), || {
        describe(layout.width, layout.height, layout.channels, layout.bits)
    })?;
    rewind(input, b)?;
    if let Some(entries) = palette {
        // The indices take at most a third of the expanded frame's bytes,
        // and are freed before it is decoded.
        check_indices(input, b, entries, left)?;
        rewind(input, b)?;
    }
    // The stream check inflates the data a second time; it reads the file
    // through a handle of its own, on another thread, beside the decoding.
    let (frame, stream) = rayon::join(
        || decode_frame(input, b, &layout, left),
        || check_stream(&mut *b.reopen()?, b),
    );
    let frame = frame?;
    stream?;
    let img = to_image(&layout, frame).map_err(|e| match e {
        Error::InvalidArgument(m) => b.format(m),
        other => other,
    })?;
    Ok((img, meta))
}

/// The second pass: the frame of `layout`, then the chunks after it through
/// `IEND`, checksums included, and nothing after `IEND`. `left`: the bytes
/// the decoder may use.
fn decode_frame(input: &mut dyn Input, b: &Budget, layout: &Layout, left: u64) -> Result<Vec<u8>> {
    let mut r = reader(input, b, left, Transformations::EXPAND)?;
    if Layout::of(&r).as_ref() != Some(layout) {
        return Err(b.format("the file changed while it was read"));
    }
    let mut frame = vec![0u8; layout.frame as usize];
    r.next_frame(&mut frame).map_err(|e| png_err(b, e))?;
    r.finish().map_err(|e| png_err(b, e))?;
    drop(r);
    let end = input.stream_position().map_err(|e| b.io(e))?;
    if end < b.file_len {
        return Err(b.format(format!(
            "{} bytes follow the IEND chunk that ends the PNG at byte {end} \
             (the rest of another file?)",
            b.file_len - end
        )));
    }
    Ok(frame)
}

/// The decoded frame as an image: 16-bit samples are big-endian in PNG,
/// gray+alpha becomes RGBA.
fn to_image(l: &Layout, frame: Vec<u8>) -> Result<DynImage> {
    let (w, h, c) = (l.width as usize, l.height as usize, l.loaded_channels());
    Ok(match (l.bits, l.channels) {
        (8, 2) => {
            let mut out = Vec::with_capacity(w * h * 4);
            for p in frame.chunks_exact(2) {
                out.extend_from_slice(&[p[0], p[0], p[0], p[1]]);
            }
            DynImage::U8(Image::from_vec(w, h, 4, out)?)
        }
        (8, _) => DynImage::U8(Image::from_vec(w, h, c, frame)?),
        (_, 2) => {
            let mut out = Vec::with_capacity(w * h * 4);
            for p in frame.chunks_exact(4) {
                let g = u16::from_be_bytes([p[0], p[1]]);
                out.extend_from_slice(&[g, g, g, u16::from_be_bytes([p[2], p[3]])]);
            }
            DynImage::U16(Image::from_vec(w, h, 4, out)?)
        }
        _ => {
            let out = frame
                .chunks_exact(2)
                .map(|p| u16::from_be_bytes([p[0], p[1]]))
                .collect();
            DynImage::U16(Image::from_vec(w, h, c, out)?)
        }
    })
}

/// The bytes of inflated output [`check_stream`] keeps for back-references
/// (deflate's window).
const WINDOW: usize = 32 << 10;

/// Inflates the image data again, to its end. The `png` crate stops once it
/// has the pixels it needs, so a corrupt stream that yields enough bytes
/// early (a bit flip desynchronises the codes, and the rest decodes to
/// garbage) passes with its Adler-32 never read; here the stream must end
/// with its checksum right, and nothing may follow it in the IDAT chunks.
/// The `png` crate has checked the chunks' layout and CRCs by now.
fn check_stream(input: &mut dyn Input, b: &Budget) -> Result<()> {
    let corrupt = |e: fdeflate::DecompressionError| {
        b.format(format!(
            "corrupt PNG: the compressed image data is corrupt ({e:?})"
        ))
    };
    input.seek(SeekFrom::Start(8)).map_err(|e| b.io(e))?;
    let mut ihdr = [0u8; 25];
    input.read_exact(&mut ihdr).map_err(|e| b.io(e))?;
    let expected = filtered_len(&ihdr[8..21]);
    input.seek(SeekFrom::Start(8)).map_err(|e| b.io(e))?;
    let mut total: u64 = 0;
    let mut z = fdeflate::Decompressor::new();
    let mut out = vec![0u8; 4 * WINDOW];
    let mut pos = 0;
    let mut piece = vec![0u8; 2 * WINDOW];
    let mut seen = false;
    loop {
        let mut header = [0u8; 8];
        input.read_exact(&mut header).map_err(|e| b.io(e))?;
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        if &header[4..] != b"IDAT" {
            if seen {
                break;
            }
            input
                .seek_relative(i64::from(len) + 4)
                .map_err(|e| b.io(e))?;
            continue;
        }
        seen = true;
        let mut left = len as usize;
        while left > 0 {
            let n = left.min(piece.len());
            input.read_exact(&mut piece[..n]).map_err(|e| b.io(e))?;
            left -= n;
            let mut data = &piece[..n];
            while !data.is_empty() {
                if z.is_done() {
                    return Err(
                        b.format("corrupt PNG: data follows the end of the compressed image data")
                    );
                }
                let (used, made) = z.read(data, &mut out, pos, false).map_err(corrupt)?;
                if used == 0 && made == 0 && !z.is_done() {
                    // `read` promises progress; never spin if it makes none.
                    return Err(b.format("corrupt PNG: the compressed image data stalls"));
                }
                data = &data[used..];
                total += made as u64;
                pos = slide(&mut out, pos + made);
            }
        }
        input.seek_relative(4).map_err(|e| b.io(e))?;
    }
    while !z.is_done() {
        let (_, made) = z.read(&[], &mut out, pos, true).map_err(corrupt)?;
        total += made as u64;
        pos = slide(&mut out, pos + made);
    }
    // A header edited to a smaller image leaves data over, which the `png`
    // crate never reads.
    match expected {
        Some(want) if want != total => Err(b.format(format!(
            "corrupt PNG: the image data holds {total} bytes, the header's image {want}"
        ))),
        _ => Ok(()),
    }
}

/// The bytes of filtered image data (a filter byte per row, then the row)
/// that the IHDR fields `ihdr` (width, height, bit depth, colour type,
/// compression, filter, interlace) describe; `None` for a colour type or
/// depth the decoder has refused already.
fn filtered_len(ihdr: &[u8]) -> Option<u64> {
    let w = u64::from(u32::from_be_bytes(ihdr[0..4].try_into().ok()?));
    let h = u64::from(u32::from_be_bytes(ihdr[4..8].try_into().ok()?));
    let samples = match ihdr[9] {
        0 | 3 => 1,
        2 => 3,
        4 => 2,
        6 => 4,
        _ => return None,
    };
    let bits = samples * u64::from(ihdr[8]);
    let rows = |pw: u64, ph: u64| {
        if pw == 0 || ph == 0 {
            0
        } else {
            ph * (1 + (pw * bits).div_ceil(8))
        }
    };
    if ihdr[12] == 0 {
        return Some(rows(w, h));
    }
    // Adam7: the seven passes' origins and steps.
    const PASSES: [(u64, u64, u64, u64); 7] = [
        (0, 0, 8, 8),
        (4, 0, 8, 8),
        (0, 4, 4, 8),
        (2, 0, 4, 4),
        (0, 2, 2, 4),
        (1, 0, 2, 2),
        (0, 1, 1, 2),
    ];
    let side = |n: u64, o: u64, d: u64| if n > o { (n - o).div_ceil(d) } else { 0 };
    Some(
        PASSES
            .iter()
            .map(|&(x0, y0, dx, dy)| rows(side(w, x0, dx), side(h, y0, dy)))
            .sum(),
    )
}

/// Keeps the last [`WINDOW`] bytes of a full output buffer at its start;
/// returns where the next output goes.
fn slide(out: &mut [u8], pos: usize) -> usize {
    if pos < out.len() {
        return pos;
    }
    out.copy_within(pos - WINDOW..pos, 0);
    WINDOW
}

/// The entries of a palette that some index of the file's bit depth lies
/// past (`None` when every index names an entry, or there is no palette).
fn short_palette(info: &png::Info) -> Option<usize> {
    let entries = info.palette.as_ref()?.len() / 3;
    // Indices have 1, 2, 4 or 8 bits (the crate refuses other depths).
    let bits = info.bit_depth as u8;
    let short = bits <= 8 && entries < 1usize << bits;
    (info.color_type == ColorType::Indexed && short).then_some(entries)
}

/// Checks that every pixel's index names one of the palette's `entries`:
/// the `png` crate expands an index past the palette to black, silently.
fn check_indices(input: &mut dyn Input, b: &Budget, entries: usize, left: u64) -> Result<()> {
    let mut r = reader(input, b, left, Transformations::IDENTITY)?;
    let (width, bits) = (r.info().width, r.info().bit_depth as usize);
    let line = r.output_line_size(width).ok_or_else(|| too_large(b, &r))?;
    let mut frame = vec![0u8; r.output_buffer_size().ok_or_else(|| too_large(b, &r))?];
    r.next_frame(&mut frame).map_err(|e| png_err(b, e))?;
    let mask = (1usize << bits) - 1;
    for (y, row) in frame.chunks_exact(line).enumerate() {
        for x in 0..width as usize {
            let bit = x * bits;
            let index = (usize::from(row[bit / 8]) >> (8 - bits - bit % 8)) & mask;
            if index >= entries {
                return Err(b.format(format!(
                    "corrupt PNG: pixel ({x}, {y}) has palette index {index}, \
                     and the palette has {entries} entries"
                )));
            }
        }
    }
    Ok(())
}

/// The error for a header whose frame size overflows.
fn too_large(b: &Budget, r: &Reader<&mut dyn Input>) -> Error {
    let i = r.info();
    b.format(format!("image size {}x{} is too large", i.width, i.height))
}

/// Maps a `png` error: the end of the file is truncation, the decoder's own
/// limit is the decode limit.
fn png_err(b: &Budget, e: png::DecodingError) -> Error {
    match e {
        png::DecodingError::IoError(io) => b.io(io),
        png::DecodingError::LimitsExceeded => {
            b.exceeded("the PNG decoder's buffers (rows, text and colour-profile chunks)")
        }
        png::DecodingError::Format(f) => b.format(format!("corrupt PNG: {f}")),
        png::DecodingError::Parameter(p) => b.format(format!("PNG: {p}")),
    }
}
