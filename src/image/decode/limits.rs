//! [`DecodeLimits`]: how much memory decoding one image file may take.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How much memory decoding one image file may take.
///
/// `max_bytes` bounds the buffers a load holds at once: the decoded
/// pixels, any copy made while bringing them into an [`Image`](super::super::Image)
/// (16-bit PNG samples, gray+alpha expanded to RGBA, a TIFF decoder's own
/// buffer, a JPEG file read whole), and the decoder's working buffers that
/// grow with the image (PNG rows and text chunks, JPEG block rows and a
/// progressive JPEG's coefficients, TIFF strips and tag values). They are
/// checked against the limit from the sizes the file's headers declare,
/// before they are allocated, so a small file that declares a huge image
/// (a decompression bomb) fails at once, with little memory used.
/// Fixed-size working buffers (file buffering, deflate windows, decoder
/// tables: under 1 MiB) are not counted.
///
/// The default is [`DecodeLimits::DEFAULT_MAX_BYTES`] (512 MiB). Besides
/// this limit, an image must fit the engine's own bound of 2^31 samples
/// (see [`check_shape`](super::super::check_shape)).
///
/// [`load`](super::load) reads the limit from the environment variable
/// [`DecodeLimits::ENV`] (`FILTERCTL_DECODE_LIMIT`), through
/// [`DecodeLimits::from_env`]; [`load_with`](super::load_with) takes one
/// explicitly. Its text form, for the variable and [`FromStr`], is a byte
/// count with an optional binary suffix `K`, `M`, `G` or `T` (`512M`,
/// `2G`, `1048576`; `MiB`/`MB` are read as `M`) or `none` for no limit.
///
/// ```
/// use clfilter::image::DecodeLimits;
///
/// let l: DecodeLimits = "2G".parse().unwrap();
/// assert_eq!(l.max_bytes, Some(2 << 30));
/// assert_eq!(l.to_string(), "2G");
/// assert_eq!("none".parse::<DecodeLimits>().unwrap(), DecodeLimits::unlimited());
/// assert_eq!(DecodeLimits::default().max_bytes, Some(512 << 20));
/// ```
///
/// Exceeding the limit is an [`Error::DecodeLimit`] that names the file,
/// what it needs and how to raise the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeLimits {
    /// The most bytes one load may hold at once; `None`: no limit.
    pub max_bytes: Option<u64>,
}

impl DecodeLimits {
    /// The default limit: 512 MiB (a 16-bit RGBA image of 8192 x 4096
    /// with room to spare, or 512 megapixels of 8-bit gray).
    pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;

    /// The environment variable [`DecodeLimits::from_env`] reads.
    pub const ENV: &'static str = "FILTERCTL_DECODE_LIMIT";

    /// A limit of `max_bytes` bytes.
    pub const fn new(max_bytes: u64) -> Self {
        DecodeLimits {
            max_bytes: Some(max_bytes),
        }
    }

    /// No limit: a file may take whatever memory its header declares.
    pub const fn unlimited() -> Self {
        DecodeLimits { max_bytes: None }
    }

    /// The limit `FILTERCTL_DECODE_LIMIT` sets, else the default. An empty
    /// variable counts as unset; a value that does not parse is an
    /// [`Error::InvalidArgument`] naming the variable.
    pub fn from_env() -> Result<Self> {
        match std::env::var(Self::ENV) {
            Ok(v) if !v.trim().is_empty() => v.parse().map_err(|e: Error| match e {
                Error::InvalidArgument(m) => Error::arg(format!("{}: {m}", Self::ENV)),
                other => other,
            }),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(Self::default()),
            Err(std::env::VarError::NotUnicode(v)) => Err(Error::arg(format!(
                "{}={v:?} is not text; {}",
                Self::ENV,
                Self::GRAMMAR
            ))),
        }
    }

    /// The text form, for error messages and help texts.
    pub const GRAMMAR: &'static str = "a decode limit is a byte count with an optional \
        suffix K, M, G or T (powers of 1024), for example 512M or 2G, or 'none' for no limit";
}

impl Default for DecodeLimits {
    /// [`DecodeLimits::DEFAULT_MAX_BYTES`]; the environment is not read.
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_BYTES)
    }
}

/// The binary suffixes, largest first.
const SUFFIXES: [(char, u32); 4] = [('T', 40), ('G', 30), ('M', 20), ('K', 10)];

impl FromStr for DecodeLimits {
    type Err = Error;

    /// Parses `none`, or digits with an optional suffix (see the type's
    /// docs), case-insensitive. Zero is refused: it would refuse every
    /// file (`none` is the way to lift the limit).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_uppercase();
        if t == "NONE" {
            return Ok(Self::unlimited());
        }
        let bad = || Error::arg(format!("'{s}' is not a decode limit; {}", Self::GRAMMAR));
        let t = ["IB", "B"]
            .iter()
            .find_map(|u| t.strip_suffix(u).filter(|r| !r.is_empty()))
            .unwrap_or(&t);
        let (digits, shift) = match SUFFIXES.iter().find(|(c, _)| t.ends_with(*c)) {
            Some(&(_, shift)) => (&t[..t.len() - 1], shift),
            None => (t, 0),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let bytes = n
            .checked_mul(1 << shift)
            .ok_or_else(|| Error::arg(format!("decode limit '{s}' is over 2^64 bytes")))?;
        if bytes == 0 {
            return Err(Error::arg(format!(
                "a decode limit of 0 refuses every file; use 'none' for no limit ({})",
                Self::GRAMMAR
            )));
        }
        Ok(Self::new(bytes))
    }
}

impl fmt::Display for DecodeLimits {
    /// `none`, or the byte count with the largest suffix that divides it
    /// exactly (`512M`, `1536K`, `1000`); it reads back to the same limit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(n) = self.max_bytes else {
            return f.write_str("none");
        };
        match SUFFIXES
            .iter()
            .find(|(_, shift)| n.trailing_zeros() >= *shift)
        {
            Some((c, shift)) => write!(f, "{}{c}", n >> shift),
            None => write!(f, "{n}"),
        }
    }
}

/// A size in bytes for people: `3.4 GiB`, `512 MiB`, `700 bytes`.
pub(crate) fn human_bytes(n: u64) -> String {
    match SUFFIXES.iter().find(|(_, shift)| n >= 1 << shift) {
        Some((c, shift)) => {
            let v = n as f64 / (1u64 << shift) as f64;
            if v.fract() == 0.0 {
                format!("{v:.0} {c}iB")
            } else {
                format!("{v:.1} {c}iB")
            }
        }
        None => format!("{n} bytes"),
    }
}

/// The limit to suggest when `need` bytes did not fit: `need` rounded up to
/// a whole number of the largest unit that keeps it readable (`4G`, `768M`).
pub(crate) fn suggested_limit(need: u64) -> DecodeLimits {
    let shift = SUFFIXES
        .iter()
        .map(|&(_, s)| s)
        .find(|&s| need >= 4 << s)
        .unwrap_or(0);
    let unit = 1u64 << shift;
    DecodeLimits::new(need.div_ceil(unit).saturating_mul(unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        for (s, want) in [
            ("512M", Some(512 << 20)),
            ("512mib", Some(512 << 20)),
            ("512MB", Some(512 << 20)),
            (" 2g ", Some(2 << 30)),
            ("1T", Some(1 << 40)),
            ("1000", Some(1000)),
            ("1000b", Some(1000)),
            ("None", None),
        ] {
            assert_eq!(s.parse::<DecodeLimits>().unwrap().max_bytes, want, "{s}");
        }
        for s in [
            "",
            "M",
            "-1",
            "1.5G",
            "0",
            "0K",
            "12X",
            "99999999999T",
            "B",
            "iB",
        ] {
            assert!(s.parse::<DecodeLimits>().is_err(), "{s}");
        }
        for n in [1u64, 1000, 1024, 1536 << 10, 512 << 20, 3 << 30, u64::MAX] {
            let l = DecodeLimits::new(n);
            assert_eq!(l.to_string().parse::<DecodeLimits>().unwrap(), l, "{l}");
        }
        assert_eq!(DecodeLimits::new(512 << 20).to_string(), "512M");
        assert_eq!(DecodeLimits::unlimited().to_string(), "none");
    }

    #[test]
    fn suggestions_cover_the_need() {
        for need in [1u64, 5000, 3_600_000_000, 600 << 20, u64::MAX / 2] {
            let s = suggested_limit(need).max_bytes.unwrap();
            assert!(s >= need, "{need}");
            assert!(s - need < need / 3 + 1024, "{need} -> {s}");
        }
        assert_eq!(suggested_limit(3_600_000_000).to_string(), "3434M");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(700), "700 bytes");
    }
}
