//! The sample layouts in bytes: unpacking the 12-bit pairs and MIPI
//! `RAW10` groups, and [`encode`], the inverse of [`RawFormat::decode`].

use super::{Depth, RawFormat};
use crate::error::{Error, Result};
use crate::image::bayer::Packing;
use crate::image::{DynImage, Image};

/// Unpacks 12-bit pairs; unlike [`Packing::unpack`], any size with an even
/// pixel count (mono frames need not have even sides).
pub(super) fn unpack(packing: Packing, data: &[u8], width: usize, height: usize) -> Image<u16> {
    let pixels = width.saturating_mul(height);
    assert!(
        pixels.is_multiple_of(2) && data.len() == pixels / 2 * 3,
        "RawImage::Packed12 of {width}x{height} holds {} bytes, not {}",
        data.len(),
        pixels / 2 * 3
    );
    let mut out = Vec::with_capacity(pixels);
    for b in data.chunks_exact(3) {
        out.extend_from_slice(&packing.unpack_pair([b[0], b[1], b[2]]));
    }
    Image::from_vec(width, height, 1, out)
        .unwrap_or_else(|e| panic!("RawImage::Packed12 of {width}x{height}: {e}"))
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
