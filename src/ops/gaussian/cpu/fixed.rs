//! The u8 Gaussian in fixed point, for sigma up to [`FIXED_MAX_SIGMA`]:
//! the reference's sampled kernel, cut to about 3.5 sigma, with 16-bit
//! weights, in 16-bit lanes, rows first, then columns, never converting
//! to float.
//!
//! - Weights: the reference's taps within a radius, renormalised, times
//!   2^16, rounded; the centre weight takes the rest, so that the weights
//!   sum to exactly 2^16 (a constant image comes back unchanged). The
//!   radius is the smallest whose weights move no output by more than
//!   [`MAX_WEIGHT_ERROR`] (1/8 of a level, [`weight_error`]) against the
//!   reference's full ceil(6 sigma) kernel: 3 at sigma 1, 7 at 2, 10 at 3,
//!   14 at 4, where OpenCV's default window has 3, 6, 9 and 12.
//! - Samples carry [`FRAC`] fractional bits: a u8 `x` enters as `x << 7`
//!   (at most 32640), so the sum of the two samples a symmetric weight
//!   multiplies still fits in 16 bits. Each pair of taps is
//!   `mulhi(a + b, w) = floor((a + b) w / 2^16)`: [`crate::simd::symfir`]'s
//!   kernels, a vector multiply-high (`vpmulhuw`) for 16 columns with AVX2,
//!   8 with `wide` elsewhere. (Left to the compiler, the multiply-high
//!   widened each vector to 32-bit lanes and back.)
//! - Error: each tap's floor loses less than 1/128 of a level; per pass
//!   that is less than (taps kept) / 128, the horizontal pass's loss passes
//!   through the vertical (whose gain is 1), and the final rounding adds
//!   half the largest loss back ([`bias`]), leaving at most
//!   (rx + ry + 2) / 256. The weights add at most 1/8 per filtered axis
//!   (the 2D kernels' L1 distance is at most the sum of the axes'). Up to
//!   [`FIXED_MAX_SIGMA`] the radii stay below 31, so the sum before the
//!   final rounding is within 0.5 of the exact value and the output is the
//!   f64 reference rounded down or up: within 1 level (docs/QUALITY.md;
//!   `tests` checks the budget and the outputs).
//!
//! Borders are the reference's ([`source_index`]): the horizontal pass reads
//! a row padded on both sides by the kernel's radius and writes it straight
//! into a ring of `2 r + 2` horizontally filtered rows (indexed through the
//! border mapping, so the result is the same at the edges as inside); the
//! vertical pass reads the ring and writes bytes straight into the output
//! rows, two rows from each pass over the ring
//! ([`symfir::filter_u8_pair`]: each ring row loaded once for both). Each
//! rayon task owns a band of output rows and filters the `2 r` rows
//! around it again; its ring (`2 r + 2` rows of 16-bit samples: 225 KiB
//! at 4K gray and sigma 4) stays in the core's L2 cache.

use std::mem::MaybeUninit;

use super::super::reference::{source_index, taps};
use super::super::{Border, GaussianParams};
use super::Rows;
use crate::simd::mem::{self, Filler};
use crate::simd::symfir::{self, Lines, PairLines, FRAC};
use crate::simd::{Isa, Simd, WithSimd};

/// The largest sigma the fixed-point path takes. Its cost grows with the
/// taps kept, Deriche's recursion's (`Axis::Iir`) does not: at 4K u8 RGB on
/// the 2-core VM (2026-11-27, docs/results/2026-11-27-s29-cpu.md) the
/// fixed point, cut to [`MAX_WEIGHT_ERROR`], took about the recursion's
/// time at sigma 4 (radius 14) and 1.2x it at sigma 5. The error bound
/// holds up to 6 (`tests`).
pub(crate) const FIXED_MAX_SIGMA: f32 = 4.0;

/// One axis's kernel: weights for offsets `0..=r` (the centre first), in
/// units of 2^-16, summing to 2^16 over `-r..=r`.
#[derive(Debug, Clone)]
pub(crate) struct FixedTaps {
    pub(super) w: Vec<u16>,
}

impl FixedTaps {
    /// The reference's kernel for `sigma` in fixed point, cut to the
    /// smallest radius whose [`weight_error`] is at most [`MAX_WEIGHT_ERROR`]
    /// (the whole kernel if none is), or `None` when every tap but the
    /// centre rounds to 0 (sigma below about 0.23): the kernel is then the
    /// identity to within 2^-16 per side tap, and the axis is copied.
    pub(crate) fn new(sigma: f32) -> Option<FixedTaps> {
        let t = taps(sigma as f64);
        let r = t.len() / 2;
        let w = (1..=r)
            .map(|radius| weights(&t, radius))
            .find(|w| weight_error(&t, w) <= MAX_WEIGHT_ERROR)
            .unwrap_or_else(|| weights(&t, r));
        (w.len() > 1).then_some(FixedTaps { w })
    }

    /// The kept radius.
    pub(super) fn radius(&self) -> usize {
        self.w.len() - 1
    }
}

/// The most a pass's weights may move an output, in levels
/// ([`weight_error`]): 1/8. It sets the radius (3 at sigma 1, 7 at 2, 10 at
/// 3, 14 at 4: about 3.5 sigma, against OpenCV's default of 3 sigma and
/// the reference's 6 sigma), and leaves the floors most of the 0.5 that
/// the error bound allows (module docs).
pub(crate) const MAX_WEIGHT_ERROR: f64 = 0.125;

/// The weights for offsets `0..=radius` of the reference's taps `t` (the
/// centre at `t.len() / 2`) cut to `radius` and renormalised, in units of
/// 2^-16, rounded; the centre takes the rest, so that they sum to exactly
/// 2^16. Trailing weights that round to 0 are left out.
pub(crate) fn weights(t: &[f64], radius: usize) -> Vec<u16> {
    let r = t.len() / 2;
    let kept: f64 = t[r - radius..=r + radius].iter().sum();
    let mut w: Vec<u32> = t[r..=r + radius]
        .iter()
        .map(|v| (v / kept * 65536.0).round() as u32)
        .collect();
    while w.len() > 1 && w[w.len() - 1] == 0 {
        w.pop();
    }
    let sides: u32 = w[1..].iter().map(|v| 2 * v).sum();
    // With a side tap, the centre is below 2^16 and fits.
    w[0] = 65536 - sides;
    w.into_iter().map(|v| v as u16).collect()
}

/// The most that filtering with the weights `w` (offsets `0..`, units of
/// 2^-16) instead of the reference's taps `t` can move an output, in
/// levels of a u8 input: both kernels sum to 1, so the difference is
/// `sum (w_k - t_k) (x_k - 127.5)`, at most 127.5 times their L1 distance
/// (over all of the reference's offsets: the dropped tail and the
/// renormalisation and rounding of the kept taps).
pub(crate) fn weight_error(t: &[f64], w: &[u16]) -> f64 {
    let r = t.len() / 2;
    let l1: f64 = t
        .iter()
        .enumerate()
        .map(|(i, tap)| {
            let q = w.get(i.abs_diff(r)).map_or(0.0, |v| f64::from(*v) / 65536.0);
            (q - tap).abs()
        })
        .sum();
    127.5 * l1
}

/// The fixed-point filter of each axis (`None`: the axis is copied).
pub(crate) struct Fixed {
    fx: Option<FixedTaps>,
    fy: Option<FixedTaps>,
    border: Border,
}

impl Fixed {
    /// The plan for a `width` x `height` u8 image, or `None` when an axis
    /// needs the float path (sigma above [`FIXED_MAX_SIGMA`]) or both axes
    /// are copies.
    pub(crate) fn new(p: &GaussianParams, width: usize, height: usize) -> Option<Fixed> {
        let axis = |sigma: f32, n: usize| -> Option<Option<FixedTaps>> {
            if sigma <= 0.0 || n == 1 {
                Some(None)
            } else if sigma <= FIXED_MAX_SIGMA {
                Some(FixedTaps::new(sigma))
            } else {
                None
            }
        };
        let (fx, fy) = (axis(p.sigma_x, width)?, axis(p.sigma_y, height)?);
        (fx.is_some() || fy.is_some()).then_some(Fixed {
            fx,
            fy,
            border: p.border,
        })
    }
}

/// What the final rounding adds before dropping the [`FRAC`] bits: one half,
/// plus half the largest loss of the floors (less than one unit per kept
/// tap and filtered axis), which centres the error.
fn bias(f: &Fixed) -> u16 {
    let taps = |t: &Option<FixedTaps>| t.as_ref().map_or(0, |t| t.radius() + 1);
    (1 << (FRAC - 1)) + ((taps(&f.fx) + taps(&f.fy)) / 2) as u16
}

/// Blurs the u8 rows `src` (`w` x `h` pixels of `C` channels) into `out` (its packed samples), writing
/// every sample.
pub(super) fn fill<'o, const C: usize>(
    src: Rows<'_, u8>,
    (w, h): (usize, usize),
    f: &Fixed,
    isa: Isa,
    out: &'o mut [MaybeUninit<u8>],
) -> &'o mut [u8] {
    let row_len = w * C;
    // At most 256-bit vectors: the AVX-512 trampoline enables AVX-512F
    // only, which has no 16-bit lane instructions, and 16-bit code compiled
    // there splits every vector in two with shuffles (1.4-1.5x slower at 4K).
    let isa = isa.min(Isa::detect_up_to(256));
    let band = super::direct_band(h, f.fy.as_ref().map_or(0, FixedTaps::radius));
    mem::par_fill(
        out,
        band * row_len,
        || (),
        |_, b, dst| {
            isa.vectorize(BandOp::<C> {
                f,
                src: &src,
                size: (w, h),
                r0: b * band,
                dst,
            })
        },
    )
}

/// One band of output rows, for [`Isa::vectorize`].
struct BandOp<'a, 'd, const C: usize> {
    f: &'a Fixed,
    src: &'a Rows<'a, u8>,
    size: (usize, usize),
    r0: usize,
    dst: &'d mut [MaybeUninit<u8>],
}

impl<'d, const C: usize> WithSimd for BandOp<'_, 'd, C> {
    type Output = &'d mut [u8];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> &'d mut [u8] {
        let BandOp {
            f,
            src,
            size: (w, h),
            r0,
            dst,
        } = self;
        let row_len = w * C;
        let r1 = r0 + dst.len() / row_len;
        let mut hz = Horizontal::<C>::new(f.fx.as_ref(), f.border, w, S::ISA);
        let b = bias(f);
        let mut out = Filler::new(dst);
        let Some(fy) = &f.fy else {
            let (mut row, mut tmp) = (vec![0u16; row_len], vec![0u8; row_len]);
            for y in r0..r1 {
                hz.run(src.row(y), &mut row);
                let d = out.next(row_len);
                out.commit(narrow(d, &row, b, &mut tmp));
            }
            return out.finish();
        };
        let ry = fy.radius() as i64;
        // Two output rows at a time: rows `y - ry..=y + 1 + ry`, row `v`
        // in slot `v mod (2 ry + 2)`.
        let span = 2 * ry as usize + 2;
        let mut ring = vec![0u16; span * row_len];
        let slot = |v: i64| v.rem_euclid(span as i64) as usize * row_len;
        let mut offsets = vec![0usize; span];
        let mut next = r0 as i64 - ry;
        for y in (r0 as i64..r1 as i64).step_by(2) {
            // The second row's lines too where there is one.
            let two = y + 1 < r1 as i64;
            while next <= y + ry + i64::from(two) {
                let s = source_index(next, h as i64, f.border);
                let at = slot(next);
                hz.run(src.row(s), &mut ring[at..at + row_len]);
                next += 1;
            }
            for (k, o) in offsets.iter_mut().enumerate() {
                *o = slot(y - ry + k as i64);
            }
            if !two {
                let lines = Lines::new(&fy.w, &ring, &offsets[..span - 1], row_len);
                let d = out.next(row_len);
                out.commit(symfir::filter_u8(S::ISA, &lines, b, d));
                continue;
            }
            let pair = PairLines::new(&fy.w, &ring, &offsets, row_len);
            let (d0, d1) = out.next(2 * row_len).split_at_mut(row_len);
            let (a, c) = symfir::filter_u8_pair(S::ISA, &pair, b, d0, d1);
            out.commit(a);
            out.commit(c);
        }
        out.finish()
    }
}

/// The horizontal pass: its taps, the border, and its buffer.
struct Horizontal<'t, const C: usize> {
    taps: Option<&'t FixedTaps>,
    border: Border,
    width: usize,
    isa: Isa,
    /// The source row with [`FRAC`] bits, padded by the radius each side.
    pad: Vec<u16>,
    /// Where the lines of the taps `-r..=r` start in `pad`.
    offsets: Vec<usize>,
}

impl<'t, const C: usize> Horizontal<'t, C> {
    fn new(taps: Option<&'t FixedTaps>, border: Border, width: usize, isa: Isa) -> Self {
        let r = taps.map_or(0, FixedTaps::radius);
        Horizontal {
            taps,
            border,
            width,
            isa,
            pad: vec![0; (width + 2 * r) * C],
            offsets: (0..2 * r + 1).map(|i| i * C).collect(),
        }
    }

    /// `row` filtered along x, with [`FRAC`] fractional bits, into `out`.
    #[inline(always)]
    fn run(&mut self, row: &[u8], out: &mut [u16]) {
        let Some(t) = self.taps else {
            for (o, s) in out.iter_mut().zip(row) {
                *o = u16::from(*s) << FRAC;
            }
            return;
        };
        let (w, r) = (self.width as i64, t.radius());
        // The middle is the row itself; only the `r` pixels each side go
        // through the border mapping.
        let mid = &mut self.pad[r * C..(r + self.width) * C];
        for (o, s) in mid.iter_mut().zip(row) {
            *o = u16::from(*s) << FRAC;
        }
        for i in (-(r as i64)..0).chain(w..w + r as i64) {
            let s = source_index(i, w, self.border) * C;
            let d = (i + r as i64) as usize * C;
            for c in 0..C {
                self.pad[d + c] = u16::from(row[s + c]) << FRAC;
            }
        }
        let lines = Lines::new(&t.w, &self.pad, &self.offsets, self.width * C);
        symfir::filter_u16(self.isa, &lines, out);
    }
}

/// `v` rounded to u8 (`b`: [`bias`]) into `d`, through `tmp` (a row).
#[inline(always)]
fn narrow<'d>(d: &'d mut [MaybeUninit<u8>], v: &[u16], b: u16, tmp: &mut [u8]) -> &'d mut [u8] {
    for (t, v) in tmp.iter_mut().zip(v) {
        *t = (v.wrapping_add(b) >> FRAC) as u8;
    }
    mem::write_copy(d, tmp)
}
