//! Just enough TIFF to find a DNG's raw image: the header, directories
//! (IFDs) and their tags' values, read from the file's bytes with every
//! offset checked.
//!
//! Written here rather than read through the `tiff` crate: its 0.11
//! decoder opens a file by decoding the first directory's image layout,
//! and refuses one whose `PhotometricInterpretation` is CFA (32803,
//! `UnknownInterpretation`), which a DNG's raw directory is.

use std::collections::BTreeMap;

/// A tag's value: its type code, count, and where its bytes start.
#[derive(Debug, Clone, Copy)]
struct Entry {
    kind: u16,
    count: u64,
    at: usize,
}

/// A TIFF file's bytes and byte order.
pub(super) struct Tiff<'a> {
    pub data: &'a [u8],
    big_endian: bool,
}

/// One directory: its tags by number.
#[derive(Debug, Default)]
pub(super) struct Ifd {
    entries: BTreeMap<u16, Entry>,
}

/// The size in bytes of one value of TIFF type `kind`, or `None` for a
/// type TIFF 6 does not define.
fn type_size(kind: u16) -> Option<usize> {
    Some(match kind {
        1 | 2 | 6 | 7 => 1,
        3 | 8 => 2,
        4 | 9 | 11 | 13 => 4,
        5 | 10 | 12 => 8,
        _ => return None,
    })
}

impl<'a> Tiff<'a> {
    /// Reads the header; `None` when the bytes are not a classic TIFF.
    pub fn new(data: &'a [u8]) -> Option<Tiff<'a>> {
        let big_endian = match data.get(..4)? {
            [b'I', b'I', 42, 0] => false,
            [b'M', b'M', 0, 42] => true,
            _ => return None,
        };
        Some(Tiff { data, big_endian })
    }

    /// The first directory's offset.
    pub fn first_ifd(&self) -> Result<usize, String> {
        self.u32_at(4).map(|v| v as usize)
    }

    fn bytes<const N: usize>(&self, at: usize) -> Result<[u8; N], String> {
        at.checked_add(N)
            .and_then(|end| self.data.get(at..end))
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("the file ends inside a TIFF structure at byte {at}"))
    }

    pub fn u16_at(&self, at: usize) -> Result<u16, String> {
        let b = self.bytes::<2>(at)?;
        Ok(if self.big_endian {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    }

    pub fn u32_at(&self, at: usize) -> Result<u32, String> {
        let b = self.bytes::<4>(at)?;
        Ok(if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    /// Whether 16-bit samples are stored most significant byte first.
    pub fn big_endian(&self) -> bool {
        self.big_endian
    }

    /// Reads the directory at `offset`.
    pub fn ifd(&self, offset: usize) -> Result<Ifd, String> {
        let n = usize::from(self.u16_at(offset)?);
        let mut ifd = Ifd::default();
        for i in 0..n {
            let at = offset + 2 + 12 * i;
            let (tag, kind) = (self.u16_at(at)?, self.u16_at(at + 2)?);
            let count = u64::from(self.u32_at(at + 4)?);
            let Some(size) = type_size(kind) else {
                continue; // a type from a later TIFF: not a tag read here
            };
            let len = count.saturating_mul(size as u64);
            let at = if len <= 4 {
                self.u32_at(at + 8)?; // the entry is whole
                at + 8
            } else {
                let off = self.u32_at(at + 8)? as usize;
                if (off as u64).saturating_add(len) > self.data.len() as u64 {
                    return Err(format!("tag {tag}'s values lie past the end of the file"));
                }
                off
            };
            ifd.entries.insert(tag, Entry { kind, count, at });
        }
        // The next directory's offset closes the directory (not followed:
        // the raw image is in IFD0 or its SubIFDs).
        self.u32_at(offset + 2 + 12 * n)?;
        Ok(ifd)
    }

    /// Tag `tag`'s values as numbers (integers, rationals and floats), or
    /// `None` when the directory lacks it.
    pub fn numbers(&self, ifd: &Ifd, tag: u16) -> Result<Option<Vec<f64>>, String> {
        let Some(e) = ifd.entries.get(&tag) else {
            return Ok(None);
        };
        let size = type_size(e.kind).unwrap_or(1);
        // The count was checked against the file's length.
        let mut v = Vec::with_capacity(e.count as usize);
        for i in 0..e.count as usize {
            let at = e.at + i * size;
            v.push(match e.kind {
                1 | 7 => f64::from(self.bytes::<1>(at)?[0]),
                6 => f64::from(self.bytes::<1>(at)?[0] as i8),
                3 => f64::from(self.u16_at(at)?),
                8 => f64::from(self.u16_at(at)? as i16),
                4 | 13 => f64::from(self.u32_at(at)?),
                9 => f64::from(self.u32_at(at)? as i32),
                5 => ratio(f64::from(self.u32_at(at)?), f64::from(self.u32_at(at + 4)?))?,
                10 => ratio(
                    f64::from(self.u32_at(at)? as i32),
                    f64::from(self.u32_at(at + 4)? as i32),
                )?,
                11 => f64::from(f32::from_bits(self.u32_at(at)?)),
                12 => {
                    let b = self.bytes::<8>(at)?;
                    if self.big_endian {
                        f64::from_be_bytes(b)
                    } else {
                        f64::from_le_bytes(b)
                    }
                }
                _ => return Err(format!("tag {tag} holds text, not numbers")),
            });
        }
        Ok(Some(v))
    }

    /// Tag `tag`'s values as unsigned integers that fit `usize`.
    pub fn uints(&self, ifd: &Ifd, tag: u16) -> Result<Option<Vec<usize>>, String> {
        let Some(v) = self.numbers(ifd, tag)? else {
            return Ok(None);
        };
        v.into_iter()
            .map(|x| {
                (x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64)
                    .then_some(x as usize)
                    .ok_or_else(|| format!("tag {tag} holds {x}, not a whole number"))
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// Tag `tag`'s single unsigned value.
    pub fn uint(&self, ifd: &Ifd, tag: u16) -> Result<Option<usize>, String> {
        Ok(self.uints(ifd, tag)?.and_then(|v| v.first().copied()))
    }

    /// Tag `tag`'s raw bytes (BYTE or UNDEFINED values).
    pub fn raw(&self, ifd: &Ifd, tag: u16) -> Option<&'a [u8]> {
        let e = ifd.entries.get(&tag)?;
        let len = (e.count as usize).checked_mul(type_size(e.kind)?)?;
        self.data.get(e.at..e.at.checked_add(len)?)
    }
}

impl Ifd {
    /// Whether the directory has tag `tag`.
    pub fn has(&self, tag: u16) -> bool {
        self.entries.contains_key(&tag)
    }
}

fn ratio(n: f64, d: f64) -> Result<f64, String> {
    if d == 0.0 {
        return Err("a rational with denominator 0".into());
    }
    Ok(n / d)
}
