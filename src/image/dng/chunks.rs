//! The raw image's strips or tiles, decoded (uncompressed or lossless
//! JPEG) into one `u16` mosaic.

use rayon::prelude::*;

use super::find::Layout;
use super::ifd::Tiff;
use super::ljpeg;

/// Where one chunk lies in the image, and how much of it is inside.
#[derive(Debug, Clone, Copy)]
struct Place {
    x: usize,
    y: usize,
    /// Columns and rows of the chunk inside the image.
    cols: usize,
    rows: usize,
}

/// Decodes every chunk (in parallel) into a `width * height` mosaic.
pub(super) fn mosaic(t: &Tiff, l: &Layout) -> Result<Vec<u16>, String> {
    let across = l.width.div_ceil(l.chunk_width);
    let places: Vec<Place> = (0..l.offsets.len())
        .map(|i| {
            let (x, y) = ((i % across) * l.chunk_width, (i / across) * l.chunk_height);
            Place {
                x,
                y,
                cols: l.chunk_width.min(l.width - x),
                rows: l.chunk_height.min(l.height - y),
            }
        })
        .collect();
    let chunks: Vec<Vec<u16>> = places
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let (off, len) = (l.offsets[i], l.byte_counts[i]);
            let data = off
                .checked_add(len)
                .and_then(|end| t.data.get(off..end))
                .ok_or_else(|| {
                    format!(
                        "strip or tile {i} ({len} bytes at {off}) lies past the end of the file"
                    )
                })?;
            let chunk = match l.compression {
                7 => lossless(data, l, p),
                _ => uncompressed(data, l, p, t.big_endian()),
            };
            chunk.map_err(|e| format!("strip or tile {i}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let mut out = vec![0u16; l.width * l.height];
    for (p, chunk) in places.iter().zip(chunks) {
        for (r, src) in chunk.chunks_exact(p.cols).enumerate() {
            let at = (p.y + r) * l.width + p.x;
            out[at..at + p.cols].copy_from_slice(src);
        }
    }
    Ok(out)
}

/// An uncompressed chunk: rows of `chunk_width` samples, each row starting
/// on a byte; 8-bit bytes, 16-bit words in the file's byte order, other
/// depths packed most significant bit first (as the DNG specification
/// packs them).
fn uncompressed(data: &[u8], l: &Layout, p: &Place, big: bool) -> Result<Vec<u16>, String> {
    let bits = l.bits as usize;
    let row_bytes = (l.chunk_width * bits).div_ceil(8);
    let need = row_bytes * (p.rows - 1) + (p.cols * bits).div_ceil(8);
    if data.len() < need {
        return Err(format!(
            "{} bytes, but {} rows of {}-bit samples need {need}",
            data.len(),
            p.rows,
            bits
        ));
    }
    let mut out = Vec::with_capacity(p.cols * p.rows);
    for r in 0..p.rows {
        let row = &data[r * row_bytes..];
        match bits {
            8 => out.extend(row[..p.cols].iter().map(|&b| u16::from(b))),
            16 => out.extend(row[..2 * p.cols].chunks_exact(2).map(|b| {
                if big {
                    u16::from_be_bytes([b[0], b[1]])
                } else {
                    u16::from_le_bytes([b[0], b[1]])
                }
            })),
            _ => {
                let mut bit = 0usize;
                for _ in 0..p.cols {
                    let mut v = 0u32;
                    for _ in 0..bits {
                        v = (v << 1) | u32::from(row[bit / 8] >> (7 - bit % 8) & 1);
                        bit += 1;
                    }
                    out.push(v as u16);
                }
            }
        }
    }
    Ok(out)
}

/// A lossless JPEG chunk. Its samples, row by row with the components
/// interleaved, fill the chunk row by row, whatever the JPEG frame's
/// width and component count (DNG writers often code a tile of width `w`
/// as a frame of `w / 2` pixels of 2 components).
fn lossless(data: &[u8], l: &Layout, p: &Place) -> Result<Vec<u16>, String> {
    // Every sample takes at least one bit of the data, and a frame larger
    // than twice the chunk is not a DNG tile's.
    let max = (l
        .chunk_width
        .saturating_mul(l.chunk_height)
        .saturating_mul(2))
    .min(data.len().saturating_mul(8));
    let frame = ljpeg::decode(data, max)?;
    let need = (p.rows - 1) * l.chunk_width + p.cols;
    if frame.samples.len() < need {
        return Err(format!(
            "the lossless JPEG holds {} samples ({}x{}, {} components), fewer than the {} the \
             chunk needs",
            frame.samples.len(),
            frame.width,
            frame.height,
            frame.components,
            need
        ));
    }
    let mut out = Vec::with_capacity(p.cols * p.rows);
    for r in 0..p.rows {
        let at = r * l.chunk_width;
        out.extend_from_slice(&frame.samples[at..at + p.cols]);
    }
    Ok(out)
}
