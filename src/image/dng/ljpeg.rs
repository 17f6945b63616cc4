//! Lossless JPEG (ITU T.81 process 14, `SOF3`), as DNG stores its tiles:
//! Huffman-coded differences from one of the seven predictors, 2 to 16
//! bits, 1 to 4 interleaved components with sampling factors 1x1, restart
//! intervals of whole rows, a point transform.
//!
//! Written here, not taken from `jpeg-decoder`: its 0.3.2 refuses frames of
//! 2 components (`UnsupportedFeature::ComponentCount`), which is how many
//! DNG writers code a Bayer tile (pairs of pixels, half the width).

/// A decoded frame: `height` rows of `width * components` samples, the
/// components interleaved.
#[derive(Debug)]
pub(super) struct Frame {
    pub width: usize,
    pub height: usize,
    pub components: usize,
    pub samples: Vec<u16>,
}

/// Codes of up to this many bits are decoded by one table look-up.
const FAST_BITS: u32 = 9;

/// A canonical Huffman table: for each code length, the largest code (or
/// -1) and the index of its first value; and `(length, value)` for every
/// `FAST_BITS`-bit prefix that starts with a code that short (length 0
/// for longer codes).
#[derive(Debug, Clone)]
struct Huffman {
    max_code: [i32; 17],
    offset: [i32; 17],
    values: Vec<u8>,
    fast: Vec<(u8, u8)>,
}

impl Huffman {
    fn new(counts: &[u8; 16], values: Vec<u8>) -> Result<Huffman, String> {
        let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
        if total != values.len() || total == 0 {
            return Err("a Huffman table's counts do not match its values".into());
        }
        let mut max_code = [-1i32; 17];
        let mut offset = [0i32; 17];
        let mut fast = vec![(0u8, 0u8); 1 << FAST_BITS];
        let (mut code, mut k) = (0i32, 0i32);
        for len in 1..=16 {
            let n = i32::from(counts[len - 1]);
            offset[len] = k - code;
            if code + n > (1 << len) {
                return Err("a Huffman table has more codes than its lengths allow".into());
            }
            if len as u32 <= FAST_BITS {
                let spread = FAST_BITS - len as u32;
                for c in code..code + n {
                    let v = values[(c + offset[len]) as usize];
                    let first = (c as usize) << spread;
                    fast[first..first + (1 << spread)].fill((len as u8, v));
                }
            }
            if n > 0 {
                code += n;
                k += n;
                max_code[len] = code - 1;
            }
            code <<= 1;
        }
        Ok(Huffman {
            max_code,
            offset,
            values,
            fast,
        })
    }
}

/// Reads the entropy-coded bits of a scan, removing stuffed zero bytes;
/// a marker ends the data. Up to 64 bits are held ahead in `acc`, its low
/// `count` bits unread.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u64,
    count: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8], pos: usize) -> Self {
        Bits {
            data,
            pos,
            acc: 0,
            count: 0,
        }
    }

    /// Loads whole bytes until 57 or more bits are held, or a marker (or
    /// the data's end) comes; `pos` stays on the marker.
    fn fill(&mut self) {
        while self.count <= 56 {
            let Some(&b) = self.data.get(self.pos) else {
                return;
            };
            if b == 0xFF {
                if self.data.get(self.pos + 1) != Some(&0) {
                    return;
                }
                self.pos += 1;
            }
            self.pos += 1;
            self.acc = (self.acc << 8) | u64::from(b);
            self.count += 8;
        }
    }

    /// The next 16 bits, zeros past the end of the data.
    fn peek16(&mut self) -> u32 {
        if self.count < 16 {
            self.fill();
        }
        let v = if self.count >= 16 {
            self.acc >> (self.count - 16)
        } else {
            self.acc << (16 - self.count)
        };
        (v & 0xFFFF) as u32
    }

    /// Takes `n` bits; an error when the data holds fewer.
    fn consume(&mut self, n: u32) -> Result<(), String> {
        if n > self.count {
            return Err(TRUNCATED.into());
        }
        self.count -= n;
        Ok(())
    }

    /// The next `n` bits (1 to 16) as a number.
    fn bits(&mut self, n: u32) -> Result<u32, String> {
        let v = self.peek16() >> (16 - n);
        self.consume(n)?;
        Ok(v)
    }

    fn decode(&mut self, h: &Huffman) -> Result<u8, String> {
        let p = self.peek16();
        let (len, v) = h.fast[(p >> (16 - FAST_BITS)) as usize];
        if len > 0 {
            self.consume(u32::from(len))?;
            return Ok(v);
        }
        for len in FAST_BITS as usize + 1..=16 {
            let code = (p >> (16 - len)) as i32;
            if code <= h.max_code[len] {
                self.consume(len as u32)?;
                let i = (code + h.offset[len]) as usize;
                return h.values.get(i).copied().ok_or_else(|| BAD_CODE.to_string());
            }
        }
        Err(BAD_CODE.into())
    }

    /// One coded difference: its magnitude category from `table`, then its
    /// bits (T.81 F.2.2.1; category 16 is 32768, with no bits).
    fn difference(&mut self, table: &Huffman) -> Result<i32, String> {
        let s = u32::from(self.decode(table)?);
        match s {
            0 => Ok(0),
            16 => Ok(32768),
            1..=15 => {
                let v = self.bits(s)? as i32;
                Ok(if v < 1 << (s - 1) {
                    v - (1 << s) + 1
                } else {
                    v
                })
            }
            _ => Err(BAD_CODE.into()),
        }
    }

    /// Drops the padding bits of the last byte and skips the restart
    /// marker `RSTn`, which must come next.
    fn restart(&mut self, n: u8) -> Result<(), String> {
        if self.count >= 8 {
            return Err(format!("data left before restart marker RST{}", n & 7));
        }
        self.count = 0;
        match self.data.get(self.pos..self.pos + 2) {
            Some([0xFF, m]) if *m == 0xD0 + (n & 7) => {
                self.pos += 2;
                Ok(())
            }
            _ => Err(format!("restart marker RST{} missing", n & 7)),
        }
    }
}

const TRUNCATED: &str = "the lossless JPEG data ends inside its scan";
const BAD_CODE: &str = "the lossless JPEG data holds a code its Huffman table lacks";

/// The headers that come before a scan.
#[derive(Default)]
struct Headers {
    /// Precision, height, width and the component ids.
    frame: Option<(u32, usize, usize, Vec<u8>)>,
    tables: [Option<Huffman>; 4],
    restart: usize,
}

/// Decodes a lossless JPEG; `max_samples` bounds what it may allocate.
pub(super) fn decode(data: &[u8], max_samples: usize) -> Result<Frame, String> {
    if data.get(..2) != Some(&[0xFF, 0xD8]) {
        return Err("a lossless JPEG tile does not start with SOI".into());
    }
    let mut h = Headers::default();
    let mut pos = 2;
    loop {
        let (marker, body, next) = segment(data, pos)?;
        match marker {
            0xC3 => h.frame = Some(parse_sof(body)?),
            0xC0..=0xCF if marker != 0xC4 && marker != 0xC8 && marker != 0xCC => {
                return Err(format!(
                    "the JPEG tile is coded with SOF{} (lossy or arithmetic); DNG raw data is \
                     lossless JPEG (SOF3)",
                    marker - 0xC0
                ))
            }
            0xC4 => parse_dht(body, &mut h.tables)?,
            0xDD => {
                let r = body.get(..2).ok_or("a short DRI segment")?;
                h.restart = usize::from(u16::from_be_bytes([r[0], r[1]]));
            }
            0xDA => return scan(data, body, next, &h, max_samples),
            0xD9 => return Err("the JPEG tile ends before its scan".into()),
            _ => {}
        }
        pos = next;
    }
}

/// The segment at `pos`: its marker, its body and where the next starts.
fn segment(data: &[u8], pos: usize) -> Result<(u8, &[u8], usize), String> {
    let head = data.get(pos..pos + 4).ok_or(TRUNCATED)?;
    if head[0] != 0xFF {
        return Err(format!("no JPEG marker at byte {pos} of the tile"));
    }
    if head[1] == 0xD9 {
        return Ok((0xD9, &[], pos + 2));
    }
    let len = usize::from(u16::from_be_bytes([head[2], head[3]]));
    let body = data.get(pos + 4..pos + 2 + len.max(2)).ok_or(TRUNCATED)?;
    Ok((head[1], body, pos + 2 + len.max(2)))
}

fn parse_sof(b: &[u8]) -> Result<(u32, usize, usize, Vec<u8>), String> {
    let short = || "a short SOF3 segment".to_string();
    let (p, y, x, n) = match b.get(..6) {
        Some(h) => (
            u32::from(h[0]),
            usize::from(u16::from_be_bytes([h[1], h[2]])),
            usize::from(u16::from_be_bytes([h[3], h[4]])),
            usize::from(h[5]),
        ),
        None => return Err(short()),
    };
    if !(2..=16).contains(&p) || !(1..=4).contains(&n) || x == 0 || y == 0 {
        return Err(format!(
            "lossless JPEG of {x}x{y}, {n} components of {p} bits: DNG tiles have 1 to 4 \
             components of 2 to 16 bits and no empty side"
        ));
    }
    let comps = b.get(6..6 + 3 * n).ok_or_else(short)?;
    let mut ids = Vec::with_capacity(n);
    for c in comps.chunks_exact(3) {
        if c[1] != 0x11 {
            return Err("lossless JPEG with subsampled components is not DNG raw data".into());
        }
        ids.push(c[0]);
    }
    Ok((p, y, x, ids))
}

fn parse_dht(mut b: &[u8], tables: &mut [Option<Huffman>; 4]) -> Result<(), String> {
    while let Some((&tc_th, rest)) = b.split_first() {
        let counts: [u8; 16] = rest
            .get(..16)
            .and_then(|c| c.try_into().ok())
            .ok_or("a short DHT segment")?;
        let n: usize = counts.iter().map(|&c| usize::from(c)).sum();
        let values = rest.get(16..16 + n).ok_or("a short DHT segment")?.to_vec();
        let slot = usize::from(tc_th & 0x0F);
        if slot > 3 {
            return Err(format!("Huffman table {slot} (at most 3)"));
        }
        tables[slot] = Some(Huffman::new(&counts, values)?);
        b = &rest[16 + n..];
    }
    Ok(())
}

/// Decodes the scan whose header is `sos` and whose data starts at `pos`.
fn scan(
    data: &[u8],
    sos: &[u8],
    pos: usize,
    h: &Headers,
    max_samples: usize,
) -> Result<Frame, String> {
    let (precision, height, width, ids) = h.frame.clone().ok_or("a scan before SOF3")?;
    let ns = usize::from(*sos.first().ok_or("a short SOS segment")?);
    let comps = sos.get(1..1 + 2 * ns).ok_or("a short SOS segment")?;
    let tail = sos
        .get(1 + 2 * ns..4 + 2 * ns)
        .ok_or("a short SOS segment")?;
    if ns != ids.len() {
        return Err(
            "a lossless JPEG scan without every component (DNG tiles have one scan)".into(),
        );
    }
    let mut tables = Vec::with_capacity(ns);
    for (c, id) in comps.chunks_exact(2).zip(&ids) {
        if c[0] != *id {
            return Err("the scan's components are not the frame's, in order".into());
        }
        let t = h
            .tables
            .get(usize::from(c[1] >> 4))
            .and_then(Option::as_ref);
        tables.push(t.ok_or("a component's Huffman table is missing")?);
    }
    let (predictor, pt) = (tail[0], u32::from(tail[2] & 0x0F));
    if !(1..=7).contains(&predictor) || pt >= precision {
        return Err(format!(
            "lossless JPEG predictor {predictor} (1..7) or point transform {pt}"
        ));
    }
    let row = width * ns;
    let n = row.checked_mul(height).filter(|&n| n <= max_samples);
    let n = n.ok_or_else(|| format!("a {width}x{height} lossless JPEG tile is too large"))?;
    if !h.restart.is_multiple_of(width) {
        return Err("restart intervals that are not whole rows".into());
    }
    let mut out = vec![0u16; n];
    let mut bits = Bits::new(data, pos);
    let initial = 1i32 << (precision - pt - 1);
    let rows_per_restart = if h.restart == 0 {
        height
    } else {
        h.restart / width
    };
    for y in 0..height {
        let first_row = y % rows_per_restart == 0;
        if first_row && y > 0 {
            bits.restart(((y / rows_per_restart - 1) % 8) as u8)?;
        }
        for x in 0..width {
            for (c, table) in tables.iter().enumerate() {
                let i = y * row + x * ns + c;
                let left = || i32::from(out[i - ns]);
                let up = || i32::from(out[i - row]);
                let pred = match (x, first_row) {
                    (0, true) => initial,
                    (_, true) => left(),
                    (0, false) => up(),
                    _ => predict(predictor, left(), up(), i32::from(out[i - row - ns])),
                };
                // Modulo 2^16, as T.81 H.2.1 computes.
                out[i] = (pred + bits.difference(table)?) as u16;
            }
        }
    }
    if pt > 0 {
        out.iter_mut().for_each(|v| *v <<= pt);
    }
    Ok(Frame {
        width,
        height,
        components: ns,
        samples: out,
    })
}

/// The predictors of T.81 table H.1 (`a` left, `b` above, `c` above left).
fn predict(p: u8, a: i32, b: i32, c: i32) -> i32 {
    match p {
        1 => a,
        2 => b,
        3 => c,
        4 => a + b - c,
        5 => a + ((b - c) >> 1),
        6 => b + ((a - c) >> 1),
        _ => (a + b) >> 1,
    }
}
