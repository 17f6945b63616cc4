//! NaN and infinite samples (and finite ones too large for a recursive
//! filter's sums, beyond [`MAX_MAGNITUDE`]): finding them ([`scan`]) and
//! replacing them ([`repair`]) under a [`NonFinite`] policy.
//!
//! Only f32 images can hold them. Operations that would spread one such
//! sample over their whole result (the recursive Gaussian smears it along
//! its row and column) apply the engine's policy to their f32 input first;
//! `docs/QUALITY.md` ("Non-finite pixels") lists which operations do and
//! what the check costs.

use rayon::prelude::*;

use super::Image;
use crate::error::{Error, Result};

/// What an operation that spreads NaN and infinities does when its f32
/// input holds some.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NonFinite {
    /// Refuse the input: [`Error::NonFinite`] with the count and the first
    /// position. The default.
    #[default]
    Error,
    /// Replace NaN, +inf and -inf (and magnitudes beyond [`MAX_MAGNITUDE`])
    /// with 0.
    Zero,
    /// Replace +inf and -inf (and magnitudes beyond [`MAX_MAGNITUDE`]) with
    /// the largest and smallest value of their channel in the image within
    /// that bound, and NaN with 0 (a channel with no such value becomes 0).
    Clamp,
}

impl NonFinite {
    /// Every policy, in the order of their names.
    pub const ALL: [NonFinite; 3] = [NonFinite::Error, NonFinite::Zero, NonFinite::Clamp];

    /// The name used in specs (`nonfinite=zero`).
    pub fn name(self) -> &'static str {
        match self {
            NonFinite::Error => "error",
            NonFinite::Zero => "zero",
            NonFinite::Clamp => "clamp",
        }
    }
}

impl std::fmt::Display for NonFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for NonFinite {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        NonFinite::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                Error::arg(format!(
                    "unknown non-finite policy '{s}'; use error, zero or clamp"
                ))
            })
    }
}

/// The non-finite samples of an image (NaN, ±inf, and magnitudes beyond
/// [`MAX_MAGNITUDE`]): how many, and the first in reading order (row by
/// row, then pixel, then channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Samples that are NaN, +inf, -inf or beyond ±[`MAX_MAGNITUDE`].
    pub count: u64,
    /// `(x, y, channel)` of the first.
    pub first: (usize, usize, usize),
}

impl Found {
    /// The error for an operation `op` that would spread them.
    pub fn error(self, op: &str) -> Error {
        Error::NonFinite {
            op: op.to_string(),
            count: self.count,
            first: self.first,
        }
    }
}

/// The largest magnitude an operation that spreads values accepts: 2^120
/// (about 1.3e36). Larger finite samples count as non-finite, because the
/// recursive Gaussian's sums overflow f32 near 1e38 and return NaN
/// everywhere (measured on PoCL: 3e38 does, 1e38 does not); 2^120 leaves a
/// factor of 256. `cl/pipeline.cl` uses the same bound (`LIMIT_BITS`).
pub const MAX_MAGNITUDE: f32 = f32::from_bits(LIMIT_BITS);

/// [`MAX_MAGNITUDE`]'s bits: magnitudes compare as integers on them.
const LIMIT_BITS: u32 = 0x7b80_0000;

/// Whether `v` is NaN, infinite or beyond [`MAX_MAGNITUDE`], as integer
/// arithmetic on its bits, which the compiler vectorises.
#[inline]
fn bad(v: f32) -> u32 {
    u32::from(v.to_bits() & 0x7fff_ffff > LIMIT_BITS)
}

/// Counts the non-finite samples of `img` and finds the first, reading
/// every sample once (rows in parallel); `None` when all are finite.
pub fn scan(img: &Image<f32>) -> Option<Found> {
    let (count, first) = (0..img.height())
        .into_par_iter()
        .map(|y| {
            let row = img.row(y);
            // A row holds under 2^31 samples (`check_shape`), so u32 is enough.
            let n = row.iter().map(|&v| bad(v)).sum::<u32>();
            let at = (n > 0)
                .then(|| row.iter().position(|&v| bad(v) == 1))
                .flatten()
                .map(|i| (y, i));
            (u64::from(n), at)
        })
        .reduce(
            || (0, None),
            |(n1, a1), (n2, a2)| (n1 + n2, a1.into_iter().chain(a2).min()),
        );
    let (y, i) = first?;
    let c = img.channels();
    Some(Found {
        count,
        first: (i / c, y, i % c),
    })
}

/// Replaces the non-finite samples of `img` as `policy` says
/// ([`NonFinite::Error`] leaves them).
pub fn repair(img: &mut Image<f32>, policy: NonFinite) {
    let (c, len, stride, h) = (img.channels(), img.row_len(), img.stride, img.height());
    let (lo, hi) = match policy {
        NonFinite::Error => return,
        NonFinite::Zero => ([0.0; 4], [0.0; 4]),
        NonFinite::Clamp => extremes(img),
    };
    img.data.par_chunks_mut(stride).take(h).for_each(|row| {
        for (i, v) in row[..len].iter_mut().enumerate() {
            if bad(*v) == 1 {
                *v = if v.is_nan() {
                    0.0
                } else if *v > 0.0 {
                    hi[i % c]
                } else {
                    lo[i % c]
                };
            }
        }
    });
}

/// The minimum and maximum of each channel's samples within
/// ±[`MAX_MAGNITUDE`] (0 for a channel with none).
fn extremes(img: &Image<f32>) -> ([f32; 4], [f32; 4]) {
    let c = img.channels();
    let none = ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4]);
    let (mut lo, mut hi) = (0..img.height())
        .into_par_iter()
        .map(|y| {
            let (mut lo, mut hi) = none;
            for (i, &v) in img.row(y).iter().enumerate() {
                if bad(v) == 0 {
                    lo[i % c] = lo[i % c].min(v);
                    hi[i % c] = hi[i % c].max(v);
                }
            }
            (lo, hi)
        })
        .reduce(
            || none,
            |(l1, h1), (l2, h2)| {
                (
                    std::array::from_fn(|k| l1[k].min(l2[k])),
                    std::array::from_fn(|k| h1[k].max(h2[k])),
                )
            },
        );
    for k in 0..4 {
        if lo[k] > hi[k] {
            (lo[k], hi[k]) = (0.0, 0.0);
        }
    }
    (lo, hi)
}

/// Applies `policy` to `img` for operation `op`: the image itself when it
/// is finite, a repaired copy, or [`Error::NonFinite`].
pub fn apply<'a>(
    img: &'a Image<f32>,
    policy: NonFinite,
    op: &str,
) -> Result<std::borrow::Cow<'a, Image<f32>>> {
    let Some(found) = scan(img) else {
        return Ok(std::borrow::Cow::Borrowed(img));
    };
    if policy == NonFinite::Error {
        return Err(found.error(op));
    }
    log::debug!(
        "{op}: replacing {} non-finite samples (nonfinite={policy})",
        found.count
    );
    let mut fixed = img.clone();
    repair(&mut fixed, policy);
    Ok(std::borrow::Cow::Owned(fixed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_2_to_the_120_here_and_in_the_kernel() {
        assert_eq!(MAX_MAGNITUDE, 2f32.powi(120));
        let cl = include_str!("../../cl/pipeline.cl");
        assert!(
            cl.contains("#define LIMIT_BITS 0x7b800000u"),
            "cl/pipeline.cl drifted"
        );
        let mut i = Image::<f32>::from_vec(4, 1, 1, vec![1.0, MAX_MAGNITUDE, -3e36, 3e38]).unwrap();
        let found = scan(&i).unwrap();
        assert_eq!((found.count, found.first), (2, (2, 0, 0)));
        repair(&mut i, NonFinite::Clamp);
        assert_eq!(i.row(0), [1.0, MAX_MAGNITUDE, 1.0, MAX_MAGNITUDE]);
    }

    fn img(w: usize, h: usize, c: usize, set: &[(usize, usize, usize, f32)]) -> Image<f32> {
        let mut i = Image::from_fn(w, h, c, |x, y, k| (x + 10 * y) as f32 - k as f32).unwrap();
        for &(x, y, k, v) in set {
            i.row_mut(y)[x * c + k] = v;
        }
        i
    }

    #[test]
    fn scan_counts_and_finds_the_first_in_reading_order() {
        assert_eq!(scan(&img(7, 5, 3, &[])), None);
        let bad = [
            (4, 3, 2, f32::NAN),
            (6, 1, 1, f32::INFINITY),
            (0, 4, 0, f32::NEG_INFINITY),
        ];
        let found = scan(&img(7, 5, 3, &bad)).unwrap();
        assert_eq!(found.count, 3);
        assert_eq!(found.first, (6, 1, 1));
        // Padding is never read.
        let strided = Image::from_vec_with_stride(2, 2, 1, 3, vec![1.0, 2.0, f32::NAN, 3.0, 4.0]);
        assert_eq!(scan(&strided.unwrap()), None);
    }

    #[test]
    fn repair_zeroes_or_clamps_per_channel() {
        let bad = [
            (1, 0, 0, f32::NAN),
            (2, 0, 1, f32::INFINITY),
            (0, 1, 1, f32::NEG_INFINITY),
        ];
        let mut z = img(3, 2, 3, &bad);
        repair(&mut z, NonFinite::Zero);
        assert_eq!(
            (z.get(1, 0, 0), z.get(2, 0, 1), z.get(0, 1, 1)),
            (0.0, 0.0, 0.0)
        );
        let mut k = img(3, 2, 3, &bad);
        repair(&mut k, NonFinite::Clamp);
        // Channel 1's finite samples: x + 10y - 1 without (2, 0) and (0, 1).
        assert_eq!(
            (k.get(1, 0, 0), k.get(2, 0, 1), k.get(0, 1, 1)),
            (0.0, 11.0, -1.0)
        );
        assert_eq!(scan(&k), None);
        let mut all = Image::from_vec(2, 1, 1, vec![f32::INFINITY, f32::NAN]).unwrap();
        repair(&mut all, NonFinite::Clamp);
        assert_eq!(all.row(0), &[0.0, 0.0]);
    }

    #[test]
    fn policies_parse_and_print() {
        for p in NonFinite::ALL {
            assert_eq!(p.name().parse::<NonFinite>().unwrap(), p);
        }
        assert!("Zero".parse::<NonFinite>().is_err());
        assert_eq!(NonFinite::default(), NonFinite::Error);
    }
}
