//! DNG files for the tests, written here: a small TIFF writer (IFD0 with
//! `DNGVersion`, the raw image in IFD0 or a SubIFD, any tags) and a
//! lossless JPEG (SOF3) encoder with one Huffman table, any predictor,
//! restart intervals and 1 to 4 interleaved components.

#![allow(dead_code)]

/// A tag value.
#[derive(Debug, Clone)]
pub enum Val {
    Byte(Vec<u8>),
    Short(Vec<u16>),
    Long(Vec<u32>),
    Rational(Vec<(u32, u32)>),
    SRational(Vec<(i32, i32)>),
    Undefined(Vec<u8>),
    /// Filled in with the raw directory's offset (SubIFDs).
    RawIfd,
    /// Filled in with the chunks' offsets (strip or tile offsets).
    ChunkOffsets,
}

/// The raw image: its size, samples and chunks, coded as the tags say.
#[derive(Debug, Clone)]
pub struct Raw {
    pub width: u32,
    pub height: u32,
    pub bits: u16,
    pub compression: u16,
    /// `Some((w, h))` for tiles, `None` for strips of `rows_per_strip`.
    pub tile: Option<(u32, u32)>,
    pub rows_per_strip: u32,
    /// The coded chunks, in order.
    pub chunks: Vec<Vec<u8>>,
    /// Extra tags of the raw directory (CFA, levels, crop ...).
    pub tags: Vec<(u16, Val)>,
}

/// Little- or big-endian bytes.
#[derive(Debug, Clone, Copy)]
pub struct Order(pub bool);

impl Order {
    fn u16(self, v: u16) -> [u8; 2] {
        if self.0 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
    fn u32(self, v: u32) -> [u8; 4] {
        if self.0 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    }
}

fn encode_val(o: Order, v: &Val, raw_ifd: u32, offsets: &[u32]) -> (u16, u32, Vec<u8>) {
    match v {
        Val::Byte(b) => (1, b.len() as u32, b.clone()),
        Val::Undefined(b) => (7, b.len() as u32, b.clone()),
        Val::Short(s) => (
            3,
            s.len() as u32,
            s.iter().flat_map(|&x| o.u16(x)).collect(),
        ),
        Val::Long(l) => (
            4,
            l.len() as u32,
            l.iter().flat_map(|&x| o.u32(x)).collect(),
        ),
        Val::Rational(r) => (
            5,
            r.len() as u32,
            r.iter()
                .flat_map(|&(n, d)| [o.u32(n), o.u32(d)].concat())
                .collect(),
        ),
        Val::SRational(r) => (
            10,
            r.len() as u32,
            r.iter()
                .flat_map(|&(n, d)| [o.u32(n as u32), o.u32(d as u32)].concat())
                .collect(),
        ),
        Val::RawIfd => (4, 1, o.u32(raw_ifd).to_vec()),
        Val::ChunkOffsets => (
            4,
            offsets.len() as u32,
            offsets.iter().flat_map(|&x| o.u32(x)).collect(),
        ),
    }
}

/// Appends a directory (tags sorted, values past 4 bytes after it);
/// returns its offset.
fn put_ifd(out: &mut Vec<u8>, o: Order, tags: &[(u16, Val)], raw_ifd: u32, offsets: &[u32]) -> u32 {
    let mut tags = tags.to_vec();
    tags.sort_by_key(|t| t.0);
    let start = out.len();
    let mut heap = Vec::new();
    let heap_at = start + 2 + 12 * tags.len() + 4;
    out.extend(o.u16(tags.len() as u16));
    for (tag, v) in &tags {
        let (kind, count, bytes) = encode_val(o, v, raw_ifd, offsets);
        out.extend(o.u16(*tag));
        out.extend(o.u16(kind));
        out.extend(o.u32(count));
        if bytes.len() <= 4 {
            let mut b = bytes.clone();
            b.resize(4, 0);
            out.extend(b);
        } else {
            out.extend(o.u32((heap_at + heap.len()) as u32));
            heap.extend(bytes);
        }
    }
    out.extend(o.u32(0));
    out.extend(heap);
    start as u32
}

/// A DNG: the chunks first, then the raw directory, then IFD0 (with
/// `DNGVersion` and `ifd0_tags`). With `raw_in_ifd0` the raw tags are
/// IFD0's; otherwise IFD0 is a preview with one SubIFD, the raw image.
pub fn dng(o: Order, raw: &Raw, raw_in_ifd0: bool, ifd0_tags: &[(u16, Val)]) -> Vec<u8> {
    let mut out = if o.0 {
        b"MM\0\x2a".to_vec()
    } else {
        b"II\x2a\0".to_vec()
    };
    out.extend([0; 4]);
    let mut offsets = Vec::new();
    for c in &raw.chunks {
        offsets.push(out.len() as u32);
        out.extend(c);
    }
    let counts = Val::Long(raw.chunks.iter().map(|c| c.len() as u32).collect());
    let mut tags = vec![
        (254, Val::Long(vec![0])),
        (256, Val::Long(vec![raw.width])),
        (257, Val::Long(vec![raw.height])),
        (258, Val::Short(vec![raw.bits])),
        (259, Val::Short(vec![raw.compression])),
        (262, Val::Short(vec![32803])),
        (277, Val::Short(vec![1])),
    ];
    match raw.tile {
        Some((w, h)) => tags.extend([
            (322, Val::Long(vec![w])),
            (323, Val::Long(vec![h])),
            (324, Val::ChunkOffsets),
            (325, counts),
        ]),
        None => tags.extend([
            (273, Val::ChunkOffsets),
            (278, Val::Long(vec![raw.rows_per_strip])),
            (279, counts),
        ]),
    }
    let mut raw_tags: Vec<(u16, Val)> = tags;
    for (t, v) in &raw.tags {
        raw_tags.retain(|(k, _)| k != t);
        raw_tags.push((*t, v.clone()));
    }
    let mut ifd0 = vec![(50706, Val::Byte(vec![1, 4, 0, 0]))];
    ifd0.extend(ifd0_tags.iter().cloned());
    let first = if raw_in_ifd0 {
        ifd0.extend(raw_tags);
        put_ifd(&mut out, o, &ifd0, 0, &offsets)
    } else {
        let raw_at = put_ifd(&mut out, o, &raw_tags, 0, &offsets);
        ifd0.extend([
            (254, Val::Long(vec![1])),
            (256, Val::Long(vec![1])),
            (257, Val::Long(vec![1])),
            (262, Val::Short(vec![2])),
            (330, Val::RawIfd),
        ]);
        put_ifd(&mut out, o, &ifd0, raw_at, &offsets)
    };
    out[4..8].copy_from_slice(&o.u32(first));
    out
}

/// Packs rows of `width` samples of `bits` bits: 8-bit bytes, 16-bit
/// words in `o`'s order, other depths most significant bit first, each
/// row starting on a byte.
pub fn pack(o: Order, samples: &[u16], width: usize, bits: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for row in samples.chunks(width) {
        match bits {
            8 => out.extend(row.iter().map(|&v| v as u8)),
            16 => out.extend(row.iter().flat_map(|&v| o.u16(v))),
            _ => {
                let mut acc = 0u64;
                let mut n = 0;
                for &v in row {
                    acc = (acc << bits) | u64::from(v);
                    n += bits;
                    while n >= 8 {
                        out.push((acc >> (n - 8)) as u8);
                        n -= 8;
                    }
                }
                if n > 0 {
                    out.push((acc << (8 - n)) as u8);
                }
            }
        }
    }
    out
}

/// Writes bits most significant first, stuffing a 0 after each 0xFF.
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, v: u32, bits: u32) {
        for i in (0..bits).rev() {
            self.acc = (self.acc << 1) | ((v >> i) & 1);
            self.n += 1;
            if self.n == 8 {
                self.out.push(self.acc as u8);
                if self.acc == 0xFF {
                    self.out.push(0);
                }
                self.acc = 0;
                self.n = 0;
            }
        }
    }
    /// Pads the last byte with 1 bits.
    fn flush(&mut self) {
        while self.n != 0 {
            self.put(1, 1);
        }
    }
}

/// A lossless JPEG of `width x height` pixels of `comps` interleaved
/// components (`samples` row by row), `precision` bits, `predictor`
/// 1..=7, a restart marker every `restart_rows` rows (0: none). One
/// Huffman table: categories 0..16 all coded in 5 bits.
pub fn ljpeg(
    samples: &[u16],
    width: usize,
    height: usize,
    comps: usize,
    precision: u8,
    predictor: u8,
    restart_rows: usize,
) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    let mut dht = vec![0xFF, 0xC4, 0, 2 + 1 + 16 + 17, 0x00];
    dht.extend([0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    dht.extend(0..17u8);
    out.extend(dht);
    let len = 8 + 3 * comps as u16;
    out.extend([0xFF, 0xC3]);
    out.extend(len.to_be_bytes());
    out.push(precision);
    out.extend((height as u16).to_be_bytes());
    out.extend((width as u16).to_be_bytes());
    out.push(comps as u8);
    for c in 0..comps {
        out.extend([c as u8 + 1, 0x11, 0]);
    }
    if restart_rows > 0 {
        out.extend([0xFF, 0xDD, 0, 4]);
        out.extend(((restart_rows * width) as u16).to_be_bytes());
    }
    out.extend([0xFF, 0xDA]);
    out.extend((6 + 2 * comps as u16).to_be_bytes());
    out.push(comps as u8);
    for c in 0..comps {
        out.extend([c as u8 + 1, 0x00]);
    }
    out.extend([predictor, 0, 0]);
    let mut w = BitWriter { out, acc: 0, n: 0 };
    let row = width * comps;
    let px = |i: usize| i32::from(samples[i]);
    for y in 0..height {
        let first = restart_rows == 0 && y == 0 || restart_rows > 0 && y % restart_rows == 0;
        if first && y > 0 {
            w.flush();
            w.out
                .extend([0xFF, 0xD0 + ((y / restart_rows - 1) % 8) as u8]);
        }
        for x in 0..width {
            for c in 0..comps {
                let i = y * row + x * comps + c;
                let pred = match (x, first) {
                    (0, true) => 1 << (precision - 1),
                    (_, true) => px(i - comps),
                    (0, false) => px(i - row),
                    _ => {
                        let (a, b, cc) = (px(i - comps), px(i - row), px(i - row - comps));
                        match predictor {
                            1 => a,
                            2 => b,
                            3 => cc,
                            4 => a + b - cc,
                            5 => a + ((b - cc) >> 1),
                            6 => b + ((a - cc) >> 1),
                            _ => (a + b) >> 1,
                        }
                    }
                };
                let mut d = (px(i) - pred) & 0xFFFF;
                if d >= 32768 {
                    d -= 65536;
                }
                if d == -32768 {
                    w.put(16, 5);
                    continue;
                }
                let s = 32 - d.unsigned_abs().leading_zeros();
                w.put(s, 5);
                let bits = if d > 0 { d } else { d + (1 << s) - 1 };
                w.put(bits as u32, s);
            }
        }
    }
    w.flush();
    let mut out = w.out;
    out.extend([0xFF, 0xD9]);
    out
}

/// Deterministic pseudo-random samples below `2^bits`.
pub fn noise(n: usize, bits: u32, seed: u64) -> Vec<u16> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 20) as u16 & ((1u32 << bits) - 1) as u16
        })
        .collect()
}

/// The `tw x th` tiles of an image, full size (0 outside the image).
pub fn tiles_of(s: &[u16], w: usize, h: usize, tw: usize, th: usize) -> Vec<Vec<u16>> {
    let mut out = Vec::new();
    for ty in (0..h).step_by(th) {
        for tx in (0..w).step_by(tw) {
            let tile = (0..tw * th).map(|i| {
                let (x, y) = (tx + i % tw, ty + i / tw);
                if x < w && y < h {
                    s[y * w + x]
                } else {
                    0
                }
            });
            out.push(tile.collect());
        }
    }
    out
}
