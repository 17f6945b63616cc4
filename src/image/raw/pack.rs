//! The sample layouts in bytes: unpacking the 12-bit pairs and MIPI
//! `RAW10` groups, and [`encode`], the inverse of [`RawFormat::decode`].

use super::{Depth, RawFormat};
use crate::error::{Error, Result};
use crate::image::bayer::Packing;
use crate::image::{DynImage, Image};

/// Unpacks 12-bit pairs; unlike [`Packing::unpack`], any size with an even
/// pixel count (mono frames need not have even sides). An odd pixel count
/// or a size that is not an image is [`Error::InvalidArgument`]; `data`
/// other than `width * height / 2 * 3` bytes is [`Error::InvalidInput`]
/// (a hand-built [`super::RawImage::Packed12`] may be either).
pub(super) fn unpack(
    packing: Packing,
    data: &[u8],
    width: usize,
    height: usize,
) -> Result<Image<u16>> {
    let pixels = width.saturating_mul(height);
    if !pixels.is_multiple_of(2) {
        return Err(Error::arg(format!(
            "RawImage::Packed12 of {width}x{height} has an odd pixel count; 12-bit samples come in pairs"
        )));
    }
    let need = pixels / 2 * 3;
    if data.len() != need {
        return Err(Error::InvalidInput(format!(
            "RawImage::Packed12 of {width}x{height} holds {} bytes, not {need}",
            data.len()
        )));
    }
    let mut out = Vec::with_capacity(pixels);
    for b in data.chunks_exact(3) {
        out.extend_from_slice(&packing.unpack_pair([b[0], b[1], b[2]]));
    }
    Image::from_vec(width, height, 1, out)
}

/// Unpacks MIPI CSI-2 `RAW10` groups of five bytes into four samples.
pub(super) fn unpack10(bytes: &[u8]) -> Vec<u16> {
    let mut out = Vec::with_capacity(bytes.len() / 5 * 4);
    for g in bytes.chunks_exact(5) {
        let lo = u16::from(g[4]);
        for (k, &hi) in g[..4].iter().enumerate() {
            out.push(u16::from(hi) << 2 | (lo >> (2 * k)) & 3);
        }
    }
    out
}

/// Packs samples (at most 1023, a multiple of four of them) as MIPI CSI-2
/// `RAW10`, the inverse of [`unpack10`].
fn pack10(samples: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() / 4 * 5);
    for g in samples.chunks_exact(4) {
        let mut lo = 0u8;
        for (k, &v) in g.iter().enumerate() {
            out.push((v >> 2) as u8);
            lo |= ((v & 3) as u8) << (2 * k);
        }
        out.push(lo);
    }
    out
}

/// Encodes a 1-channel image as one frame of `fmt`, the inverse of
/// [`RawFormat::decode`]: bytes for 8-bit formats, `u16` in the format's
/// byte order for 16-bit containers (values above the white level written
/// as they are), [`Packing::pack`] for the 12-bit packed layouts and MIPI
/// `RAW10` groups for `10mipi`. For tests, benchmarks and tools
/// that make raw frames.
///
/// The image must be 1-channel of `fmt.sample()` (`u8` for 8-bit formats,
/// `u16` otherwise) with a size `fmt` allows, else
/// [`Error::InvalidArgument`]; a packed format refuses samples above its
/// white level (4095, or 1023 for `10mipi`) with [`Error::InvalidInput`],
/// since it cannot hold them.
pub fn encode(img: &DynImage, fmt: &RawFormat) -> Result<Vec<u8>> {
    let (w, h, c) = img.shape();
    if c != 1 {
        return Err(Error::arg(format!(
            "raw frames have 1 channel, the image has {c}"
        )));
    }
    let need = fmt.frame_bytes(w, h)?;
    let out = match (fmt.depth, img) {
        (Depth::Bits8, DynImage::U8(i)) => i.packed_samples().into_owned(),
        (Depth::Bits16 { .. }, DynImage::U16(i)) => {
            let mut v = Vec::with_capacity(need);
            for s in i.packed_samples().iter() {
                v.extend_from_slice(&s.to_le_bytes());
            }
            v
        }
        (Depth::Bits16Be { .. }, DynImage::U16(i)) => {
            let mut v = Vec::with_capacity(need);
            for s in i.packed_samples().iter() {
                v.extend_from_slice(&s.to_be_bytes());
            }
            v
        }
        (Depth::Packed12(_) | Depth::Mipi10, DynImage::U16(i)) => {
            let samples = i.packed_samples();
            let white = (1u16 << fmt.bits()) - 1;
            if let Some(k) = samples.iter().position(|&s| s > white) {
                return Err(Error::InvalidInput(format!(
                    "{fmt} holds {}-bit samples, but pixel ({}, {}) is {}",
                    fmt.bits(),
                    k % w,
                    k / w,
                    samples[k]
                )));
            }
            match fmt.depth {
                Depth::Packed12(p) => p.pack(&samples)?,
                _ => pack10(&samples),
            }
        }
        _ => {
            return Err(Error::arg(format!(
                "{fmt} frames hold {} samples, the image has {}",
                fmt.sample(),
                img.sample_type()
            )))
        }
    };
    debug_assert_eq!(out.len(), need);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::RawImage;
    use super::*;

    fn packed(data: Vec<u8>, width: usize, height: usize) -> RawImage {
        RawImage::Packed12 {
            data,
            width,
            height,
            packing: Packing::Pfnc12p,
        }
    }

    #[test]
    fn a_short_or_long_buffer_is_invalid_input() {
        for len in [0, 1, 5, 7, 9] {
            let got = unpack(Packing::Pfnc12p, &vec![0; len], 2, 2);
            assert!(
                matches!(&got, Err(Error::InvalidInput(m)) if m.contains(&format!("holds {len} bytes, not 6"))),
                "{len} bytes: {got:?}"
            );
            assert!(matches!(
                packed(vec![0; len], 2, 2).to_dyn(),
                Err(Error::InvalidInput(_))
            ));
            assert!(matches!(
                packed(vec![0; len], 2, 2).into_dyn(),
                Err(Error::InvalidInput(_))
            ));
        }
    }

    #[test]
    fn an_odd_pixel_count_or_an_empty_size_is_invalid_argument() {
        for (w, h, len) in [(3, 1, 4), (1, 1, 1), (3, 3, 13), (0, 2, 0), (2, 0, 0)] {
            let got = unpack(Packing::Mipi12, &vec![0; len], w, h);
            assert!(
                matches!(got, Err(Error::InvalidArgument(_))),
                "{w}x{h}: {got:?}"
            );
        }
    }

    #[test]
    fn a_consistent_frame_unpacks() {
        // Pfnc12p: 0x123 and 0x456 in three bytes.
        let img = unpack(Packing::Pfnc12p, &[0x23, 0x61, 0x45], 1, 2).unwrap();
        assert_eq!(img.into_vec(), vec![0x123, 0x456]);
        let frame = packed(vec![0x23, 0x61, 0x45], 2, 1);
        assert_eq!(frame.to_dyn().unwrap(), frame.into_dyn().unwrap());
    }
}
