//! Image files made byte by byte, and surgery on them: PNG chunks and their
//! CRCs, stored (uncompressed) zlib streams whose pixel bytes sit in the
//! file as they are, and the size fields of PNG, PNM, JPEG and TIFF headers.

use std::io::Cursor;

/// The 8 bytes every PNG starts with.
pub const PNG_SIGNATURE: [u8; 8] = [137, 80, 78, 71, 13, 10, 26, 10];

/// One PNG chunk: length, type, data, and the CRC over type and data.
pub fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut c = (data.len() as u32).to_be_bytes().to_vec();
    c.extend_from_slice(kind);
    c.extend_from_slice(data);
    c.extend_from_slice(&crc32fast::hash(&c[4..]).to_be_bytes());
    c
}

/// Every whole chunk of `png`: (offset of its length field, type, data length).
pub fn png_chunks(png: &[u8]) -> Vec<(usize, [u8; 4], usize)> {
    let mut v = Vec::new();
    let mut at = PNG_SIGNATURE.len();
    while at + 12 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        if at + 12 + len > png.len() {
            break;
        }
        v.push((at, png[at + 4..at + 8].try_into().unwrap(), len));
        at += 12 + len;
    }
    v
}

/// Recomputes the CRC of every whole chunk, so that edits inside chunks
/// get past the CRC checks to the checks behind them.
pub fn fix_png_crcs(png: &mut [u8]) {
    for (at, _, len) in png_chunks(png) {
        let crc = crc32fast::hash(&png[at + 4..at + 8 + len]);
        png[at + 8 + len..at + 12 + len].copy_from_slice(&crc.to_be_bytes());
    }
}

/// The data range of the first chunk of type `kind`.
pub fn png_chunk_data(png: &[u8], kind: &[u8; 4]) -> std::ops::Range<usize> {
    let (at, _, len) = png_chunks(png)
        .into_iter()
        .find(|c| &c.1 == kind)
        .unwrap_or_else(|| panic!("no {} chunk", String::from_utf8_lossy(kind)));
    at + 8..at + 8 + len
}

/// Sets the width and height in the IHDR chunk, and its CRC.
pub fn set_png_size(png: &mut [u8], width: u32, height: u32) {
    let d = png_chunk_data(png, b"IHDR");
    png[d.start..d.start + 4].copy_from_slice(&width.to_be_bytes());
    png[d.start + 4..d.start + 8].copy_from_slice(&height.to_be_bytes());
    fix_png_crcs(png);
}

/// The Adler-32 checksum of `data`, as zlib streams end with it.
pub fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// A zlib stream of stored deflate blocks (no compression) holding `data`.
pub fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let n = block.len() as u16;
        z.extend_from_slice(&n.to_le_bytes());
        z.extend_from_slice(&(!n).to_le_bytes());
        z.extend_from_slice(block);
    }
    if data.is_empty() {
        z.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    z.extend_from_slice(&adler32(data).to_be_bytes());
    z
}

/// An 8-bit gray PNG whose one IDAT is a stored zlib stream: rows with
/// filter type 0, so each pixel's byte is in the file as it is.
pub fn stored_gray_png(width: u32, height: u32, pixels: &[u8]) -> Vec<u8> {
    assert_eq!(pixels.len(), (width * height) as usize);
    let mut raw = Vec::new();
    for row in pixels.chunks(width as usize) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut png = PNG_SIGNATURE.to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    png.extend(png_chunk(b"IDAT", &zlib_stored(&raw)));
    png.extend(png_chunk(b"IEND", &[]));
    png
}

/// An 8-bit PNG of colour type `color` (0 gray, 2 RGB, 4 gray+alpha, 6
/// RGBA) with `channels` samples per pixel, Adam7-interlaced when
/// `interlaced`: the seven passes' rows, each with filter type 0, in one
/// stored zlib stream.
pub fn stored_png(
    width: u32,
    height: u32,
    color: u8,
    channels: usize,
    interlaced: bool,
    pixels: &[u8],
) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    assert_eq!(pixels.len(), w * h * channels);
    let passes: &[(usize, usize, usize, usize)] = if interlaced {
        &[
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ]
    } else {
        &[(0, 0, 1, 1)]
    };
    let mut raw = Vec::new();
    for &(x0, y0, dx, dy) in passes {
        if x0 >= w {
            continue;
        }
        for y in (y0..h).step_by(dy) {
            raw.push(0);
            for x in (x0..w).step_by(dx) {
                raw.extend_from_slice(&pixels[(y * w + x) * channels..][..channels]);
            }
        }
    }
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, color, 0, 0, u8::from(interlaced)]);
    let mut png = PNG_SIGNATURE.to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    png.extend(png_chunk(b"IDAT", &zlib_stored(&raw)));
    png.extend(png_chunk(b"IEND", &[]));
    png
}

/// `img` encoded as `format` by the `image` crate, in memory.
pub fn encode(img: &image::DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    img.write_to(&mut Cursor::new(&mut out), format)
        .unwrap_or_else(|e| panic!("encoding {format:?}: {e}"));
    out
}

/// Where a JPEG's frame header (SOF0..SOF2) keeps its height, then width.
pub fn jpeg_size_at(jpeg: &[u8]) -> Option<usize> {
    let mut at = 2;
    while at + 9 <= jpeg.len() && jpeg[at] == 0xFF {
        let marker = jpeg[at + 1];
        if (0xC0..=0xC2).contains(&marker) {
            return Some(at + 5);
        }
        at += 2 + usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
    }
    None
}

/// Sets a JPEG's declared width and height.
pub fn set_jpeg_size(jpeg: &mut [u8], width: u16, height: u16) {
    let at = jpeg_size_at(jpeg).expect("a JPEG frame header");
    jpeg[at..at + 2].copy_from_slice(&height.to_be_bytes());
    jpeg[at + 2..at + 4].copy_from_slice(&width.to_be_bytes());
}

/// A binary P5/P6 file (as `save` writes them) with another declared size
/// and the samples of the original.
pub fn set_pnm_size(pnm: &[u8], width: u32, height: u32) -> Vec<u8> {
    // Four whitespace-separated fields (magic, width, height, maxval),
    // then one whitespace byte before the samples.
    let mut at = 0;
    let mut fields = Vec::new();
    while fields.len() < 4 {
        while pnm[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !pnm[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&pnm[start..at]).into_owned());
    }
    let mut out = format!("{}\n{width} {height}\n{}\n", fields[0], fields[3]).into_bytes();
    out.extend_from_slice(&pnm[at + 1..]);
    out
}

/// Sets a little-endian TIFF's ImageWidth and ImageLength tags (SHORT or
/// LONG values in the first IFD). Returns false when they are not found.
pub fn set_tiff_size(tiff: &mut [u8], width: u32, height: u32) -> bool {
    if tiff.len() < 8 || &tiff[..4] != b"II*\0" {
        return false;
    }
    let ifd = u32::from_le_bytes(tiff[4..8].try_into().unwrap()) as usize;
    if ifd + 2 > tiff.len() {
        return false;
    }
    let n = usize::from(u16::from_le_bytes([tiff[ifd], tiff[ifd + 1]]));
    let mut done = 0;
    for k in 0..n {
        let e = ifd + 2 + 12 * k;
        if e + 12 > tiff.len() {
            return false;
        }
        let tag = u16::from_le_bytes([tiff[e], tiff[e + 1]]);
        let kind = u16::from_le_bytes([tiff[e + 2], tiff[e + 3]]);
        let value = match tag {
            256 => width,
            257 => height,
            _ => continue,
        };
        match kind {
            3 => tiff[e + 8..e + 10].copy_from_slice(&(value.min(65535) as u16).to_le_bytes()),
            4 => tiff[e + 8..e + 12].copy_from_slice(&value.to_le_bytes()),
            _ => return false,
        }
        done += 1;
    }
    done == 2
}

/// The key a program-binary cache file is named by (`SOURCE-OPTIONS.bin`,
/// the source's and the build options' hashes in hex), which its header
/// repeats.
pub fn bin_key(file: &std::path::Path) -> [u64; 2] {
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let (source, options) = stem.split_once('-').expect("SOURCE-OPTIONS.bin");
    [source, options].map(|h| u64::from_str_radix(h, 16).unwrap())
}

/// Bytes before a cache file's payload: magic, key, length, checksum.
pub const BIN_HEADER: usize = 40;

/// A program-binary cache file for `key` around `payload`, with a valid
/// header and FNV-1a checksum.
pub fn bin_file(key: [u64; 2], payload: &[u8]) -> Vec<u8> {
    let mut v = b"CLFBIN02".to_vec();
    v.extend_from_slice(&key[0].to_le_bytes());
    v.extend_from_slice(&key[1].to_le_bytes());
    v.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    v.extend_from_slice(&clfilter::backend::cache::fnv1a(payload).to_le_bytes());
    v.extend_from_slice(payload);
    v
}
