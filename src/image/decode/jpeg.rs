//! JPEG through `zune-jpeg` in strict mode: the `image` crate runs it
//! lenient, which fills a truncated scan with gray and returns the image.

use zune_jpeg::errors::DecodeErrors;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

use super::codecs::{bytes_of, describe, Budget, Input};
use super::Metadata;
use crate::error::{Error, Result};
use crate::image::{DynImage, Image};

/// Decodes the JPEG `input` (read whole first: the decoder wants a slice)
/// to 8-bit gray (gray files) or RGB (every other colour space: YCbCr,
/// CMYK, YCCK).
pub(super) fn decode(input: &mut dyn Input, b: &Budget) -> Result<(DynImage, Metadata)> {
    b.take(b.file_len, || "the JPEG file, read whole".to_string())?;
    let mut data = Vec::with_capacity(b.file_len as usize);
    input.read_to_end(&mut data).map_err(|e| b.io(e))?;
    let options = DecoderOptions::default()
        .set_strict_mode(true)
        .set_max_width(usize::from(u16::MAX))
        .set_max_height(usize::from(u16::MAX));
    let mut dec = JpegDecoder::new_with_options(ZCursor::new(&data[..]), options);
    // The decoder pads a cut scan with zeros and may finish without an
    // error, so the end marker is looked for first.
    if !reaches_eoi(&data) {
        return Err(b.truncated());
    }
    dec.decode_headers().map_err(|e| jpeg_err(b, e))?;
    let info = dec
        .info()
        .ok_or_else(|| b.format("corrupt JPEG: no frame header"))?;
    let gray = dec.input_colorspace() == Some(ColorSpace::Luma);
    let (out, channels) = if gray {
        (ColorSpace::Luma, 1)
    } else {
        (ColorSpace::RGB, 3)
    };
    dec.set_options(dec.options().jpeg_set_out_colorspace(out));
    let (w, h) = (u64::from(info.width), u64::from(info.height));
    b.shape(w, h, channels)?;
    let frame = bytes_of(w, h, channels, 1);
    // The decoder's own buffers: a row of blocks per component (coefficients
    // and upsampling, up to 32 lines of 16-bit values at 4:1 sampling), and
    // for a progressive file every component's coefficients (16-bit, in
    // whole blocks of up to 32 x 32 pixels) until its last scan.
    let components = usize::from(info.components);
    let rows = bytes_of(w + 31, 64, components, 1);
    let coefficients = if info.sof.is_progressive() {
        bytes_of(w + 31, h + 31, components, 2)
    } else {
        0
    };
    let need = b
        .file_len
        .saturating_add(frame)
        .saturating_add(rows)
        .saturating_add(coefficients);
    b.take(need, || describe(w, h, channels, 8))?;
    let meta = Metadata {
        icc_profile: dec.icc_profile(),
        orientation: dec
            .exif()
            .and_then(|e| ::image::metadata::Orientation::from_exif_chunk(e)),
    };
    let mut pixels = vec![0u8; frame as usize];
    dec.decode_into(&mut pixels).map_err(|e| jpeg_err(b, e))?;
    let img = Image::from_vec(w as usize, h as usize, channels, pixels)
        .map(DynImage::U8)
        .map_err(|e| match e {
            Error::InvalidArgument(m) => b.format(m),
            other => other,
        })?;
    Ok((img, meta))
}

/// Maps a `zune-jpeg` error; running out of data is truncation (reading
/// from a slice, its I/O errors are all "not enough bytes").
fn jpeg_err(b: &Budget, e: DecodeErrors) -> Error {
    match e {
        DecodeErrors::ExhaustedData | DecodeErrors::IoErrors(_) => b.truncated(),
        DecodeErrors::FormatStatic(m) if m.contains("Premature end") => b.truncated(),
        other => b.format(format!("corrupt JPEG: {}", other.to_string().trim_end())),
    }
}

/// Whether the marker segments from SOI, and the entropy-coded data after
/// each SOS, lead to an EOI marker before the data ends. Inside coded data
/// 0xFF is followed by 0x00 (a stuffed byte) or a restart marker; any other
/// byte starts the next marker.
fn reaches_eoi(data: &[u8]) -> bool {
    let mut i = 2; // after SOI
    loop {
        // Markers may be preceded by fill bytes 0xFF.
        while data.get(i) == Some(&0xFF) && data.get(i + 1) == Some(&0xFF) {
            i += 1;
        }
        let (Some(&0xFF), Some(&marker)) = (data.get(i), data.get(i + 1)) else {
            return false;
        };
        i += 2;
        match marker {
            0xD9 => return true,
            0x01 | 0xD0..=0xD7 => continue,
            _ => {}
        }
        let Some(len) = data
            .get(i..i + 2)
            .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])))
        else {
            return false;
        };
        i += len;
        if marker == 0xDA {
            // Coded data up to the next marker that is not a restart.
            loop {
                match (data.get(i), data.get(i + 1)) {
                    (Some(&0xFF), Some(&(0x00 | 0xD0..=0xD7))) => i += 2,
                    (Some(&0xFF), Some(_)) => break,
                    (Some(_), _) => i += 1,
                    (None, _) => return false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reaches_eoi;

    #[test]
    fn the_end_marker_is_found_past_scans_and_restarts() {
        let scan = [
            0xFF, 0xD8, 0xFF, 0xDA, 0, 2, 1, 0xFF, 0, 2, 0xFF, 0xD0, 3, 0xFF, 0xD9,
        ];
        assert!(reaches_eoi(&scan));
        for cut in 0..scan.len() - 1 {
            assert!(!reaches_eoi(&scan[..cut]), "cut at {cut}");
        }
        // A header segment holding FF D9 is skipped by its length.
        assert!(!reaches_eoi(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0xFF, 0xD9]));
        assert!(reaches_eoi(&[
            0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0xFF, 0xD9, 0xFF, 0xD9
        ]));
    }
}
