//! TIFF, PNM and WebP through the `image` crate's decoders, and
//! single-channel f32 TIFF (which `image` cannot represent) through the
//! `tiff` crate.

use std::io::{Read, Seek, SeekFrom};

use ::image::codecs::pnm::{PnmDecoder, PnmHeader, PnmSubtype, SampleEncoding};
use ::image::codecs::tiff::TiffDecoder;
use ::image::codecs::webp::WebPDecoder;
use ::image::metadata::Orientation;
use ::image::{DynamicImage, ImageDecoder, Limits};

use super::codecs::{bytes_of, describe, expansion_bytes, from_dynamic, rewind, Budget, Input};
use super::Metadata;
use crate::error::{Error, Result};
use crate::image::{DynImage, Image};

/// Decodes the TIFF `input`: gray f32 here, everything else through
/// `image`, whose TIFF decoder fills a buffer of its own and then copies it
/// into the image (two copies).
pub(super) fn tiff(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    let tags = first_directory_bytes(input).map_err(|e| b.io(e))?;
    b.take(tags, || {
        "the tags of the TIFF's first directory".to_string()
    })?;
    rewind(input, b)?;
    if let Some(img) = tiff_gray_f32(input, b)? {
        return Ok(img);
    }
    rewind(input, b)?;
    let dec = TiffDecoder::new(&mut *input).map_err(|e| b.image(e))?;
    via_image(dec, b, 2).map_err(|e| match input.stream_position() {
        // The decoder ran out of data before the file's end: a strip whose
        // compressed bytes end before its pixels do (a byte count too small,
        // or corrupt data), not a file cut short.
        Ok(at) if at < b.file_len && b.is_truncated(&e) => b.format(format!(
            "a strip's data is corrupt or shorter than its pixels need: \
             the decoder ran out of it at byte {at} of {}",
            b.file_len
        )),
        _ => e,
    })
}

/// Decodes the PNM `input` (P1-P7; the decoder reads straight into the image).
///
/// A sample above the header's maxval is an error: the decoder scales a
/// maxval other than 255 or 65535 to the full range and saturates such a
/// sample, which would load a corrupt file (or one written with the wrong
/// maxval) as a clipped image.
pub(super) fn pnm(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    // The header twice: the first reading tells where the raster starts
    // (the decoder reads the header a byte at a time, so the position after
    // it is exact), the second feeds the decoder.
    let (after, header) = PnmDecoder::new(&mut *input)
        .map_err(|e| b.image(e))?
        .into_inner();
    let raster_at = after.stream_position().map_err(|e| b.io(e))?;
    rewind(input, b)?;
    let dec = PnmDecoder::new(&mut *input).map_err(|e| b.image(e))?;
    let color = dec.color_type();
    let channels = u64::from(color.channel_count());
    // The decoder's own sample width, which its tuple type sets (a PAM
    // without TUPLTYPE is read as bytes whatever its maxval).
    let wide = color.bytes_per_pixel() > color.channel_count();
    let decoded = via_image(dec, b, 1)?;
    let samples = u64::from(header.width()) * u64::from(header.height()) * channels;
    check_maxval(b, &header, raster_at, (samples, channels), wide)?;
    Ok(decoded)
}

/// Reads the raster of a PNM file whose maxval the decoder scales (not 255
/// or 65535; bitmaps, 0 or 1 by construction, are checked by the decoder)
/// a second time, `samples` of them in pixels of `channels`, two bytes each
/// when `wide` (as the decoder read them), and fails on the first sample
/// above the maxval.
fn check_maxval(
    b: &Budget,
    header: &PnmHeader,
    raster_at: u64,
    (samples, channels): (u64, u64),
    wide: bool,
) -> Result<()> {
    let maxval = header.maximal_sample();
    if matches!(header.subtype(), PnmSubtype::Bitmap(_)) || maxval == 255 || maxval == 65535 {
        return Ok(());
    }
    let mut input = b.reopen()?;
    input
        .seek(SeekFrom::Start(raster_at))
        .map_err(|e| b.io(e))?;
    let over = match header.subtype().sample_encoding() {
        SampleEncoding::Binary => first_over_binary(&mut *input, samples, maxval, wide),
        SampleEncoding::Ascii => first_over_ascii(&mut *input, samples, maxval),
    }
    .map_err(|e| b.io(e))?;
    match over {
        None => Ok(()),
        Some((i, v)) => {
            let (pixel, width) = (i / channels, u64::from(header.width()));
            Err(b.format(format!(
                "sample {v} of pixel ({}, {}) is above the header's maxval {maxval}: \
                 the file is corrupt, or its maxval is wrong",
                pixel % width,
                pixel / width
            )))
        }
    }
}

/// The index and value of the first of `samples` binary samples (one byte
/// each, or two, big-endian, when `wide`) above `maxval`.
fn first_over_binary(
    input: &mut dyn Input,
    samples: u64,
    maxval: u32,
    wide: bool,
) -> std::io::Result<Option<(u64, u32)>> {
    let size = if wide { 2 } else { 1 };
    let mut chunk = vec![0u8; 1 << 16];
    let mut done = 0u64;
    while done < samples {
        let n = (samples - done).min(chunk.len() as u64 / size) as usize;
        let bytes = &mut chunk[..n * size as usize];
        input.read_exact(bytes)?;
        let value = |j: usize| match wide {
            true => u32::from(u16::from_be_bytes([bytes[2 * j], bytes[2 * j + 1]])),
            false => u32::from(bytes[j]),
        };
        if let Some(j) = (0..n).find(|&j| value(j) > maxval) {
            return Ok(Some((done + j as u64, value(j))));
        }
        done += n as u64;
    }
    Ok(None)
}

/// As [`first_over_binary`] for ASCII samples (P2, P3): decimal numbers
/// between whitespace, which the decoder has already parsed.
fn first_over_ascii(
    input: &mut dyn Input,
    samples: u64,
    maxval: u32,
) -> std::io::Result<Option<(u64, u32)>> {
    let (mut index, mut value, mut digits) = (0u64, 0u32, false);
    for byte in input.bytes() {
        match byte? {
            d @ b'0'..=b'9' => {
                value = value.saturating_mul(10).saturating_add(u32::from(d - b'0'));
                digits = true;
            }
            _ if digits => {
                if value > maxval {
                    return Ok(Some((index, value)));
                }
                index += 1;
                if index == samples {
                    return Ok(None);
                }
                (value, digits) = (0, false);
            }
            _ => {}
        }
    }
    // The last sample may end the file without whitespace after it.
    Ok((digits && value > maxval).then_some((index, value)))
}

/// Decodes the WebP `input`, lossy or lossless, to 8-bit RGB or RGBA (the
/// first frame of an animation).
pub(super) fn webp(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    let dec = WebPDecoder::new(&mut *input).map_err(|e| b.image(e))?;
    via_image(dec, b, 1)
}

/// Decodes through an `image` decoder whose headers are read: checks the
/// shape and the limit (`copies` of the image, plus the RGBA copy of
/// gray+alpha), then hands the decoder what is left for its own buffers.
fn via_image(mut dec: impl ImageDecoder, b: &Budget, copies: u64) -> Result<(DynImage, Metadata)> {
    let (w, h) = dec.dimensions();
    let (w, h) = (u64::from(w), u64::from(h));
    if w == 0 || h == 0 {
        // The decoders give 0 where they did not read a size (`image-webp`
        // for a lossless header declaring 16384 a side, past its limit),
        // so say that rather than that the image is empty.
        return Err(b.format(format!(
            "the decoder read an image size of {w}x{h}: the header is corrupt or declares a size the decoder does not take"
        )));
    }
    let color = dec.color_type();
    let channels = usize::from(color.channel_count());
    b.shape(w, h, if channels == 2 { 4 } else { channels })?;
    let image = dec.total_bytes();
    let need = image
        .saturating_mul(copies)
        .saturating_add(expansion_bytes(color, w, h));
    let left = b.take(need, || {
        let bits = u32::from(color.bits_per_pixel()) / channels as u32;
        describe(w, h, channels, bits)
    })?;
    let mut limits = Limits::no_limits();
    if b.limit.is_some() {
        // `from_decoder` allocates the image without asking the limits;
        // the decoder may use the rest (TIFF: its copy and its strips).
        limits.max_alloc = Some(left.saturating_add(image.saturating_mul(copies - 1)));
    }
    // Before the limits: `image` 0.25's TIFF decoder finds no profile
    // once it has been given limits.
    let meta = Metadata {
        icc_profile: dec.icc_profile().map_err(|e| b.image(e))?,
        orientation: Some(dec.orientation().map_err(|e| b.image(e))?),
    };
    dec.set_limits(limits).map_err(|e| b.image(e))?;
    let decoded = DynamicImage::from_decoder(dec).map_err(|e| b.image(e))?;
    Ok((from_dynamic(b, decoded)?, meta))
}

/// Gray f32 TIFF. `Ok(None)`: not that kind of file (or not a TIFF the
/// `tiff` crate reads, which `image` then reports).
fn tiff_gray_f32(input: &mut dyn Input, b: &Budget) -> Result<Option<(DynImage, Metadata)>> {
    let Ok(mut dec) = tiff::decoder::Decoder::new(&mut *input) else {
        return Ok(None);
    };
    if !matches!(dec.colortype(), Ok(tiff::ColorType::Gray(32))) {
        return Ok(None);
    }
    let (w, h) = dec.dimensions().map_err(|e| tiff_err(b, e))?;
    let (w, h) = (u64::from(w), u64::from(h));
    b.shape(w, h, 1)?;
    let frame = bytes_of(w, h, 1, 4);
    let left = b.take(frame, || describe(w, h, 1, 32))?;
    // Before the limits, which the `tiff` crate applies to reading tag
    // values too (their bytes are counted in `first_directory_bytes`).
    let meta = Metadata {
        icc_profile: dec
            .find_tag(tiff::tags::Tag::IccProfile)
            .map_err(|e| tiff_err(b, e))?
            .and_then(|v| v.into_u8_vec().ok()),
        orientation: dec
            .find_tag_unsigned::<u8>(tiff::tags::Tag::Orientation)
            .map_err(|e| tiff_err(b, e))?
            .and_then(Orientation::from_exif),
    };
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let mut limits = tiff::decoder::Limits::default();
    limits.decoding_buffer_size = size(frame);
    limits.intermediate_buffer_size = size(left);
    limits.ifd_value_size = size(left);
    let mut dec = dec.with_limits(limits);
    match dec.read_image() {
        Ok(tiff::decoder::DecodingResult::F32(v)) => Image::from_vec(w as usize, h as usize, 1, v)
            .map(|i| Some((DynImage::F32(i), meta)))
            .map_err(|e| match e {
                Error::InvalidArgument(m) => b.format(m),
                other => other,
            }),
        Ok(_) => Err(b.format(
            "32-bit integer gray TIFF is not supported; use 8/16-bit integer or 32-bit float",
        )),
        Err(e) => Err(tiff_err(b, e)),
    }
}

/// What the `tiff` crate may allocate for the first directory's tag values,
/// which it reads as it opens a file, before it takes a limit: each value
/// as a 32-byte `Value` (`count` of them per entry, as declared), each
/// entry in a map. Counted from the entries that can be read; what cannot
/// be read, `tiff` reports.
fn first_directory_bytes(input: &mut dyn Input) -> std::io::Result<u64> {
    let mut header = [0u8; 16];
    let got = input.read(&mut header)?;
    let le = match &header[..2] {
        b"II" => true,
        b"MM" => false,
        _ => return Ok(0),
    };
    let u16_at = |b: &[u8]| {
        u64::from(if le {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    };
    let u32_at = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        u64::from(if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    };
    let u64_at = |b: &[u8]| {
        let a: [u8; 8] = b[..8].try_into().unwrap_or_default();
        if le {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        }
    };
    // Classic TIFF: 2-byte entry count, 12-byte entries with 4-byte counts;
    // BigTIFF: 8 and 20, with 8-byte counts.
    let (big, ifd) = match (got, u16_at(&header[2..])) {
        (8.., 42) => (false, u32_at(&header[4..])),
        (16.., 43) => (true, u64_at(&header[8..])),
        _ => return Ok(0),
    };
    input.seek(SeekFrom::Start(ifd))?;
    let mut count = [0u8; 8];
    let n = if big {
        input.read_exact(&mut count)?;
        u64_at(&count)
    } else {
        input.read_exact(&mut count[..2])?;
        u16_at(&count)
    };
    let mut entry = [0u8; 20];
    let size = if big { 20 } else { 12 };
    let mut bytes = 0u64;
    for _ in 0..n {
        if input.read_exact(&mut entry[..size]).is_err() {
            break;
        }
        let values = if big {
            u64_at(&entry[4..])
        } else {
            u32_at(&entry[4..])
        };
        bytes = bytes
            .saturating_add(values.saturating_mul(32))
            .saturating_add(64);
    }
    Ok(bytes)
}

/// Maps a `tiff` error: the end of the file is truncation, the decoder's
/// own limits are the decode limit.
fn tiff_err(b: &Budget, e: tiff::TiffError) -> Error {
    match e {
        tiff::TiffError::IoError(io) => b.io(io),
        tiff::TiffError::LimitsExceeded => {
            b.exceeded("the TIFF decoder's buffers (strips, tiles and tag values)")
        }
        other => b.format(format!("TIFF: {other}")),
    }
}
