//! The float Gaussian for small sigmas as a direct FIR (u16 and f32, both
//! sigmas up to [`FIR_MAX_SIGMA`]): rows first, then columns, each output
//! `w[0] x[0] + sum over k of w[k] (x[-k] + x[k])`, so a pair of taps costs
//! one add and one fused multiply-add.
//!
//! - Weights: the reference's taps within a radius, renormalised, in f32.
//!   The radius is the smallest whose weights (as f32) are within
//!   [`FIR_MAX_ERROR`] of the reference's full ceil(6 sigma) kernel in L1
//!   distance: 5 at sigma 1, 10 at 2, 14 at 3, where OpenCV's default
//!   float window has 4, 8 and 12 and the reference 6, 12 and 18.
//! - Error: the weights move an output by at most their L1 distance times
//!   the largest |input| per axis, and the horizontal pass's error passes
//!   through the vertical one (whose weights sum to 1). The f32 sums add a
//!   few units in the last place: within 1e-5 of the largest |input| in
//!   all (`tests`), where Deriche's recursion is held to 1e-3.
//! - Why: at sigma 2 the recursion costs about 16 multiply-adds per sample
//!   and axis plus two block transposes; this costs 11 multiply-adds and
//!   10 adds, and no transposes (docs/PERFORMANCE.md has the times).
//!
//! Borders are the reference's ([`source_index`]), as in `fixed`: the
//! horizontal pass reads a row padded on both sides by its radius (through
//! the border mapping) and writes into a ring of `2 r + 2` filtered rows,
//! slot `v mod (2 r + 2)` for row `v`, where a row outside the image is the
//! filtered copy of the one the border mapping names; the vertical pass
//! reads the ring and writes two output rows at a time, each ring row
//! loaded once for both ([`symfir::filter_f32_pair`]; about 10% off 4K
//! gray and 14% off RGBA at sigma 2 on one AVX2 core). Both passes are
//! `symfir`'s f32 kernels. Each rayon task owns a band of output rows and filters the
//! `2 r` rows around it again. Within a band, rows are cut into column
//! ranges of whole pixels, about [`SEGMENT`] samples each, each with its own
//! ring, and each range runs down [`GROUP`] output rows before the next one
//! takes over ([`mem::fill_segment_pairs`]), so that the ring in use stays in
//! the core's L2 cache however long the rows are.

use std::any::TypeId;
use std::mem::MaybeUninit;
use std::ops::Range;

use super::super::reference::{source_index, taps};
use super::super::{Border, GaussianParams};
use super::Rows;
use crate::image::Sample;
use crate::simd::mem::{self, Filler};
use crate::simd::symfir::{self, Lines, PairLines};
use crate::simd::{Isa, Narrow, Simd, WithSimd};

/// The largest sigma the FIR takes; above it, Deriche's recursion is
/// cheaper (its cost does not grow with sigma). Measured on the 2-core
/// AVX2 VM, 4K f32 (docs/results/2026-11-28-s38-cpu.md).
pub(crate) const FIR_MAX_SIGMA: f32 = 3.0;

/// The largest sigma the FIR takes for f32 gray where the recursion runs
/// on 512-bit vectors ([`Isa::Avx512`]): on the GPU host's 16-core AVX-512
/// Xeon (4K, 2, 8 and 16 threads) the FIR was level with it or faster up
/// to sigma 1.5 (with 2 threads at 1.5, level in one call and slower in
/// another), level at 1.75, and slower from 2
/// (docs/results/2026-11-28-s39-cpu.md); on a 2-core Sapphire Rapids VM
/// gray is level at 2 (docs/results/2026-11-29-s43-audit.md). Colour f32
/// keeps [`FIR_MAX_SIGMA`]: on that VM RGBA at sigma 2, 2.5 and 3 took
/// 29-30, 34 and 37 ms through the FIR against the recursion's 39-42
/// (the Xeon host's two threads had it the other way at sigma 2, 82-95
/// against 74-76 ms; with 16 threads level). u16, whose recursion converts
/// each sample on the way in and out, had the FIR faster at sigma 2 at
/// every thread count there, so it keeps [`FIR_MAX_SIGMA`] too.
pub(crate) const FIR_MAX_SIGMA_F32_512: f32 = 1.5;

/// The most L1 distance allowed between an axis's f32 weights and the
/// reference's taps: the error it adds is at most this times the largest
/// |input| (module docs).
pub(crate) const FIR_MAX_ERROR: f64 = 3e-6;

/// Samples per column range, about (ranges are cut on whole pixels, so one
/// may hold a pixel's samples more): a range's ring (`2 r + 2` rows, 30 at
/// sigma 3) then stays near 240 KiB, inside a core's L2 cache. Whole rows
/// spilled it for colour 4K (1.3 MB at RGBA sigma 2), which made RGBA no
/// faster than the recursion.
const SEGMENT: usize = 2048;

/// Output rows per group: each range runs down this many rows before the
/// next range takes over, so its ring is fetched into L2 once per group.
/// Even, so that only a band's last group can end on a row without a pair.
const GROUP: usize = 16;

/// One axis's weights for offsets `0..=r`, the centre first.
#[derive(Debug, Clone)]
pub(crate) struct FirTaps {
    pub(super) w: Vec<f32>,
}

impl FirTaps {
    /// The reference's kernel for `sigma`, cut to the smallest radius whose
    /// [`weight_error`] is at most [`FIR_MAX_ERROR`] (the whole kernel if
    /// none is).
    pub(crate) fn new(sigma: f32) -> FirTaps {
        let t = taps(sigma as f64);
        let r = t.len() / 2;
        let w = (0..=r)
            .map(|radius| weights(&t, radius))
            .find(|w| weight_error(&t, w) <= FIR_MAX_ERROR)
            .unwrap_or_else(|| weights(&t, r));
        FirTaps { w }
    }

    /// The identity (a copied axis).
    fn identity() -> FirTaps {
        FirTaps { w: vec![1.0] }
    }

    /// The kept radius.
    pub(super) fn radius(&self) -> usize {
        self.w.len() - 1
    }
}

/// The reference's taps `t` (centre at `t.len() / 2`) for offsets
/// `0..=radius`, renormalised over `-radius..=radius`, in f32.
pub(super) fn weights(t: &[f64], radius: usize) -> Vec<f32> {
    let r = t.len() / 2;
    let kept: f64 = t[r - radius..=r + radius].iter().sum();
    t[r..=r + radius].iter().map(|v| (v / kept) as f32).collect()
}

/// The L1 distance between the weights `w` (offsets `0..`) and the
/// reference's taps `t`, over all of the reference's offsets: the dropped
/// tail, the renormalisation and the rounding to f32.
pub(crate) fn weight_error(t: &[f64], w: &[f32]) -> f64 {
    let r = t.len() / 2;
    t.iter()
        .enumerate()
        .map(|(i, tap)| (w.get(i.abs_diff(r)).map_or(0.0, |v| f64::from(*v)) - tap).abs())
        .sum()
}

/// The FIR of each axis (the identity for a copied axis).
pub(crate) struct Fir {
    fx: FirTaps,
    fy: FirTaps,
    border: Border,
}

impl Fir {
    /// The plan for a `width` x `height` image of `channels` samples `T`
    /// on the instruction set `isa`, or `None` when `T` is not u16 or f32,
    /// or a sigma is above [`FIR_MAX_SIGMA`] (for f32 gray with 512-bit
    /// vectors, [`FIR_MAX_SIGMA_F32_512`]). The caller handles both axes
    /// being copies.
    pub(crate) fn new<T: Sample>(
        p: &GaussianParams,
        (width, height, channels): (usize, usize, usize),
        isa: Isa,
    ) -> Option<Fir> {
        let float = [TypeId::of::<f32>(), TypeId::of::<u16>()].contains(&TypeId::of::<T>());
        let most = if same::<T, f32>() && channels == 1 && isa.vector_bits() >= 512 {
            FIR_MAX_SIGMA_F32_512
        } else {
            FIR_MAX_SIGMA
        };
        let axis = |sigma: f32, n: usize| -> Option<FirTaps> {
            if sigma <= 0.0 || n == 1 {
                Some(FirTaps::identity())
            } else {
                (sigma <= most).then(|| FirTaps::new(sigma))
            }
        };
        if !float {
            return None;
        }
        Some(Fir {
            fx: axis(p.sigma_x, width)?,
            fy: axis(p.sigma_y, height)?,
            border: p.border,
        })
    }
}

/// Blurs the rows `src` (`w` x `h` pixels of `C` channels) into `out` (its
/// packed samples), writing every sample.
pub(super) fn fill<'o, T: Sample, const C: usize>(
    src: Rows<'_, T>,
    (w, h): (usize, usize),
    f: &Fir,
    isa: Isa,
    out: &'o mut [MaybeUninit<T>],
) -> &'o mut [T] {
    let band = super::direct_band(h, f.fy.radius());
    mem::par_fill(
        out,
        band * w * C,
        || (),
        |_, b, dst| {
            isa.vectorize(BandOp::<T, C> {
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
struct BandOp<'a, 'd, T, const C: usize> {
    f: &'a Fir,
    src: &'a Rows<'a, T>,
    size: (usize, usize),
    r0: usize,
    dst: &'d mut [MaybeUninit<T>],
}

impl<'d, T: Sample, const C: usize> WithSimd for BandOp<'_, 'd, T, C> {
    type Output = &'d mut [T];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> &'d mut [T] {
        let BandOp {
            f,
            src,
            size: (w, h),
            r0,
            dst,
        } = self;
        let row_len = w * C;
        let r1 = r0 + dst.len() / row_len;
        let (rx, ry) = (f.fx.radius(), f.fy.radius());
        // Two output rows at a time: rows `y - ry..=y + 1 + ry`.
        let span = 2 * ry + 2;
        // Columns in ranges of whole pixels, each with its own ring of
        // horizontally filtered rows `y - ry..=y + 1 + ry` around output
        // rows `y` and `y + 1` (row `v` in slot `v mod (2 ry + 2)`) and the
        // next row it needs.
        let cols = row_len.div_ceil(SEGMENT).max(1);
        let px = w.div_ceil(cols);
        let segs: Vec<Range<usize>> = (0..w.div_ceil(px))
            .map(|k| k * px * C..((k + 1) * px).min(w) * C)
            .collect();
        let mut rings: Vec<(Vec<f32>, i64)> = segs
            .iter()
            .map(|r| (vec![0f32; span * r.len()], r0 as i64 - ry as i64))
            .collect();
        // A range of the source row as f32, padded by `rx` pixels each
        // side, and where its lines for the taps `-rx..=rx` start.
        let mut pad = vec![0f32; (px + 2 * rx) * C];
        let across: Vec<usize> = (0..=2 * rx).map(|k| k * C).collect();
        let mut down = vec![0usize; span];
        // Output rows of u16 pass through f32 first.
        let mut narrow = vec![0f32; if same::<T, f32>() { 0 } else { 2 * px * C }];
        let mut out = Filler::new(dst);
        for g in (r0..r1).step_by(GROUP) {
            let block = out.next(GROUP.min(r1 - g) * row_len);
            let done = mem::fill_segment_pairs(block, row_len, &segs, |k, i, d0, d1| {
                let (ring, next) = &mut rings[k];
                let (n, x0) = (segs[k].len(), segs[k].start / C);
                let y = (g + i) as i64;
                let slot = |v: i64| v.rem_euclid(span as i64) as usize * n;
                // The second row's lines too where there is one (a band of
                // odd height ends on a row alone, and filters no row past
                // what that row needs).
                let last = y + ry as i64 + i64::from(d1.is_some());
                while *next <= last {
                    let s = source_index(*next, h as i64, f.border);
                    let pad = &mut pad[..n + 2 * rx * C];
                    pad_range::<T, C>(src.row(s), x0, rx, f.border, pad);
                    let lines = Lines::new(&f.fx.w, pad, &across, n);
                    let at = slot(*next);
                    symfir::filter_f32(S::ISA, &lines, &mut ring[at..at + n]);
                    *next += 1;
                }
                for (t, o) in down.iter_mut().enumerate() {
                    *o = slot(y - ry as i64 + t as i64);
                }
                let column = Column {
                    isa: S::ISA,
                    w: &f.fy.w,
                    ring,
                    down: &down,
                    n,
                };
                column.rows(&mut narrow, d0, d1)
            });
            out.commit(done);
        }
        out.finish()
    }
}

/// Whether `A` is `B`.
fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

/// The column pass over one range's ring: the weights `w`, the ring's
/// slots of rows `y - r..=y + 1 + r` (`down`), `n` samples per row.
struct Column<'a> {
    isa: Isa,
    w: &'a [f32],
    ring: &'a [f32],
    down: &'a [usize],
    n: usize,
}

impl Column<'_> {
    /// Output row `y` into `d0` and, if there is one, row `y + 1` into
    /// `d1` (both from one pass over the ring), which come back written;
    /// u16 samples through `narrow` (at least `2 n` long).
    #[inline(always)]
    fn rows<'c, T: Sample>(
        &self,
        narrow: &mut [f32],
        d0: &'c mut [MaybeUninit<T>],
        d1: Option<&'c mut [MaybeUninit<T>]>,
    ) -> (&'c mut [T], Option<&'c mut [T]>) {
        let (isa, n) = (self.isa, self.n);
        let Some(d1) = d1 else {
            let lines = Lines::new(self.w, self.ring, &self.down[..self.down.len() - 1], n);
            if same::<T, f32>() {
                let d = mem::cast_uninit_mut::<T, f32>(d0).expect("f32 samples");
                let done = symfir::filter_f32_into(isa, &lines, d);
                return (mem::cast_slice_mut::<f32, T>(done).expect("f32 samples"), None);
            }
            symfir::filter_f32(isa, &lines, &mut narrow[..n]);
            return (narrow_into(d0, &narrow[..n]), None);
        };
        let lines = PairLines::new(self.w, self.ring, self.down, n);
        if same::<T, f32>() {
            let d0 = mem::cast_uninit_mut::<T, f32>(d0).expect("f32 samples");
            let d1 = mem::cast_uninit_mut::<T, f32>(d1).expect("f32 samples");
            let (a, b) = symfir::filter_f32_pair_into(isa, &lines, d0, d1);
            let cast = |x| mem::cast_slice_mut::<f32, T>(x).expect("f32 samples");
            return (cast(a), Some(cast(b)));
        }
        let (a, b) = narrow[..2 * n].split_at_mut(n);
        symfir::filter_f32_pair(isa, &lines, a, b);
        (narrow_into(d0, a), Some(narrow_into(d1, b)))
    }
}

/// `v` rounded and saturated into `d` (as [`Sample::from_f32`]), which
/// comes back written.
#[inline(always)]
fn narrow_into<'d, T: Sample>(d: &'d mut [MaybeUninit<T>], v: &[f32]) -> &'d mut [T] {
    // `Narrow` rounds with a few vector instructions wherever this is
    // compiled; `from_f32`'s `round_ties_even` is a library call on x86-64
    // without SSE4.1 (this runs in a closure, which does not take on the
    // band's instruction set).
    if same::<T, u16>() {
        let d = mem::cast_uninit_mut::<T, u16>(d).expect("u16 samples");
        let done = mem::write_pixels::<f32, u16, 1>(d, v, |[x]| [Narrow::narrow(x)]);
        return mem::cast_slice_mut::<u16, T>(done).expect("u16 samples");
    }
    mem::write_pixels::<f32, T, 1>(d, v, |[x]| [T::from_f32(x)])
}

/// The `pad.len() / C - 2 r` pixels of `row` from pixel `x0`, as f32, into
/// the middle of `pad`, and the `r` pixels each side (through the border
/// mapping where they fall outside the row).
#[inline(always)]
fn pad_range<T: Sample, const C: usize>(
    row: &[T],
    x0: usize,
    r: usize,
    border: Border,
    pad: &mut [f32],
) {
    let (w, n) = (row.len() / C, pad.len() / C - 2 * r);
    let (lo, hi) = (x0 as i64 - r as i64, (x0 + n + r) as i64);
    // The part inside the row, then each pixel outside it.
    let (a, b) = (lo.max(0), hi.min(w as i64));
    let inside = &mut pad[(a - lo) as usize * C..(b - lo) as usize * C];
    for (o, s) in inside.iter_mut().zip(&row[a as usize * C..b as usize * C]) {
        *o = s.to_f32();
    }
    for i in (lo..a).chain(b..hi) {
        let s = source_index(i, w as i64, border) * C;
        let d = (i - lo) as usize * C;
        for c in 0..C {
            pad[d + c] = row[s + c].to_f32();
        }
    }
}
