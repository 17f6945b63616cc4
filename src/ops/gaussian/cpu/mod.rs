//! The rayon Gaussian: both axes in one sweep over bands of rows, reading
//! and writing the image in sequential rows, with the rows in flight kept
//! small enough to stay in cache.
//!
//! Each rayon task owns a band of output rows (full width) and walks it in
//! segments. Per segment it
//!
//! 1. runs the vertical filter's causal pass on down through the segment, all
//!    columns at once (strips of adjacent columns, one SIMD lane per column,
//!    states in registers for a few rows at a time), parking the causal half
//!    in the output rows (f32) or a segment buffer (u8/u16);
//! 2. runs the anticausal pass up from below the segment and back through it
//!    in chunks of a few rows; each finished chunk is transposed into a small
//!    block (`width` rows x `rows * channels` columns), filtered down its
//!    columns, which is the horizontal filter, and transposed back into the
//!    output, rounded for u8/u16.
//!
//! A recursion's memory decays as `|p|^k`, so the state entering row `r` is
//! found by running it from zero over the `k` rows before `r` until `|p|^k`
//! is below 1e-8 ("warm-up"), or from the image border when that is nearer.
//! At the border each pass starts from its exact response to the infinitely
//! extended image: `x / (1 - p)` for replicate, the closed-form sum over the
//! periodic extension (in f64) for mirror. So the result does not depend on
//! how rows are split: segments are twice the memory (the anticausal warm-up
//! below each costs half a pass), and large sigmas use fewer, taller bands.
//!
//! Deriche's filter runs in f32 as two sections, each a conjugate pole pair
//! ([`coeffs`](super::coeffs)). Up to sigma 64 each section is a real
//! biquad in direct form I (two multiplies per step for the feedback; see
//! `Biquad`); above that, where the biquads' rounding grows too fast, a
//! complex first-order recursion (four). In the complex form the causal
//! pass emits `Re(a p w[n-1])` (its half without the centre tap) and the
//! anticausal pass runs the same recursion backwards,
//! `v[n] = x[n] + p v[n+1]`, adding `Re(a v[n])`, which puts the centre tap
//! back; the biquads are the same transfer functions. Loads of the source
//! are prefetched one strip ahead (`prefetch_ahead`), and the causal half
//! is written straight into the (uninitialised) output rows. Below
//! [`IIR_MIN_SIGMA`] an axis uses the reference's exact FIR instead.
//! Channels are independent columns throughout.
//!
//! The vector code is [`crate::simd`]'s: the kernels are generic over its
//! token, and each band is compiled for AVX-512, AVX2 + FMA and the build's
//! baseline, chosen at run time ([`Isa`]).
//!
//! u8 images with both sigmas up to 4 (or 0) skip all of the above: `fixed`
//! runs the reference's kernel in 16-bit fixed point, rows then columns,
//! within one level of the reference (see its docs). u16 and f32 images
//! with both sigmas up to 3 (or 0) skip it too: `fir` runs the reference's
//! kernel, cut to a weight budget, in f32, within 1e-5 of the reference.
//!
//! Files: this one (entry points, the plan, the filters per axis), `fixed`
//! (the u8 fixed-point path), `fir` (the u16/f32 FIR path), `iir`
//! (the recursion's coefficients and border states), `kernels` (the passes
//! on strips of columns), `band` (one rayon task), `tests`.

use std::any::TypeId;
use std::mem::MaybeUninit;

use super::reference::taps;
use super::{Border, GaussianParams, IIR_MIN_SIGMA};
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::simd::mem::{self, Filler};
use crate::simd::{Isa, Simd, WithSimd};

mod band;
mod fir;
mod fixed;
mod iir;
mod kernels;
#[cfg(test)]
mod tests;

use fir::Fir;
use fixed::Fixed;
use iir::Iir;

/// Columns the horizontal blocks aim for: one AVX-512 strip.
const LANES: usize = 32;

/// Rows per step of the causal pass (states stay in registers for this long).
const STEP_ROWS: usize = 8;

/// Most bytes of causal output a task keeps for the anticausal pass.
const PARK_BYTES: usize = 8 << 20;

/// Bands per thread, for load balance, when sigma allows.
const BANDS_PER_THREAD: usize = 4;

/// Output rows per rayon task of the direct filters (`fir`, `fixed`), each
/// of whose tasks filters the `2 ry` rows around its band horizontally
/// again: two bands per thread (for balance) where a band is then at least
/// `16 ry` rows tall (an eighth more horizontal passes at most), else one
/// per thread, and never fewer than `4 ry` rows (small images on many
/// threads: fewer tasks rather than most rows filtered twice). With 16
/// threads, two bands per thread of a 4K image at sigma 2 were 68 rows,
/// each filtering 20 more: the FIR ran 1.3-1.5x slower than the recursion
/// on a 16-core Xeon (docs/results/2026-11-28-s38-cpu.md).
fn direct_band(h: usize, ry: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let per_thread = if h >= 2 * threads * 16 * ry { 2 } else { 1 };
    h.div_ceil(threads * per_thread).max(4 * ry).clamp(1, h.max(1))
}

/// The recursions' memory is cut where `|p|^k` falls below this (f32 keeps
/// 6e-8).
const TAIL: f64 = 1e-8;

/// Blurs `img` on the host's cores. The caller has validated `p`.
pub fn gaussian<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Result<Image<T>> {
    gaussian_with(img, p, Isa::detect())
}

/// Blurs `img` into `dst`, which must have its size and channels; every
/// sample of `dst` is overwritten. Nothing is allocated when `dst`'s rows
/// are packed, so a caller that keeps `dst` from frame to frame also saves
/// the kernel's clearing of fresh pages (a fifth of the time at 4K RGBA).
/// The caller has validated `p`.
pub fn gaussian_into<T: Sample>(
    img: &Image<T>,
    p: &GaussianParams,
    dst: &mut Image<T>,
) -> Result<()> {
    check_into(img, dst)?;
    match dst.as_packed_mut() {
        Some(out) => {
            let isa = Isa::detect();
            mem::overwrite(out, |out| fill(img, p, isa, out));
            Ok(())
        }
        None => {
            let out = gaussian(img, p)?;
            for (y, s) in out.rows().enumerate() {
                dst.row_mut(y).copy_from_slice(s);
            }
            Ok(())
        }
    }
}

/// An error unless `dst` has `img`'s size and channels.
pub(crate) fn check_into<T: Sample>(img: &Image<T>, dst: &Image<T>) -> Result<()> {
    let dims = |i: &Image<T>| (i.width(), i.height(), i.channels());
    if dims(dst) != dims(img) {
        return Err(Error::arg(format!(
            "gaussian_into: destination is {:?} (width, height, channels), the input {:?}",
            dims(dst),
            dims(img)
        )));
    }
    Ok(())
}

/// [`gaussian`] with the instruction set `isa` (or the best one below it
/// that the CPU runs).
fn gaussian_with<T: Sample>(img: &Image<T>, p: &GaussianParams, isa: Isa) -> Result<Image<T>> {
    let n = img.width() * img.height() * img.channels();
    let out = mem::vec_filled(n, |out| Ok::<_, Error>(fill(img, p, isa, out)))?;
    Image::from_vec(img.width(), img.height(), img.channels(), out)
}

/// Blurs `img` into `out` (its packed samples), writing every sample.
fn fill<'o, T: Sample>(
    img: &Image<T>,
    p: &GaussianParams,
    isa: Isa,
    out: &'o mut [MaybeUninit<T>],
) -> &'o mut [T] {
    match img.channels() {
        1 => fill_c::<T, 1>(img, p, isa, out),
        3 => fill_c::<T, 3>(img, p, isa, out),
        _ => fill_c::<T, 4>(img, p, isa, out),
    }
}

/// What every band needs to know.
struct Plan {
    fx: Axis,
    fy: Axis,
    width: usize,
    height: usize,
    /// Rows per chunk of the anticausal pass and the horizontal blocks.
    chunk: usize,
    /// Rows per segment of the vertical recursion (see `band_task`).
    segment: usize,
}

fn fill_c<'o, T: Sample, const C: usize>(
    img: &Image<T>,
    p: &GaussianParams,
    isa: Isa,
    out: &'o mut [MaybeUninit<T>],
) -> &'o mut [T] {
    let (w, h) = (img.width(), img.height());
    let row_len = w * C;
    let plan = Plan {
        fx: Axis::new(p.sigma_x, p.border, w),
        fy: Axis::new(p.sigma_y, p.border, h),
        width: w,
        height: h,
        chunk: if C == 1 { LANES } else { LANES / 4 },
        segment: 0,
    };
    let plan = Plan {
        segment: plan.segment_rows(row_len, TypeId::of::<T>() == TypeId::of::<f32>()),
        ..plan
    };
    if matches!((&plan.fx, &plan.fy), (Axis::Copy, Axis::Copy)) {
        let mut out = Filler::new(out);
        for s in img.rows() {
            let d = out.next(row_len);
            out.commit(mem::write_copy(d, s));
        }
        return out.finish();
    }
    if TypeId::of::<T>() == TypeId::of::<u8>() {
        if let Some(f) = Fixed::new(p, w, h) {
            let src = Rows::<u8> {
                data: mem::cast_slice(img.data()).expect("u8 samples"),
                stride: img.stride(),
                len: row_len,
            };
            let out = mem::cast_uninit_mut::<T, u8>(out).expect("u8 samples");
            let out = fixed::fill::<C>(src, (w, h), &f, isa, out);
            return mem::cast_slice_mut::<u8, T>(out).expect("u8 samples");
        }
    }
    if let Some(f) = Fir::new::<T>(p, (w, h, C), isa) {
        return fir::fill::<T, C>(Rows::of(img), (w, h), &f, isa, out);
    }
    // Each band writes all of its rows, each piece just before it is used:
    // clearing the whole buffer up front would cost a pass over memory.
    let src = Rows::of(img);
    let band = plan.band_rows(rayon::current_num_threads()) * row_len;
    mem::par_fill(
        out,
        band,
        || (),
        |_, b, dst| {
            let (plan, src, r0) = (&plan, &src, b * (band / row_len));
            isa.vectorize(BandOp::<T, C> { plan, src, r0, dst })
        },
    )
}

/// One band (`band::band_task`), for [`Isa::vectorize`].
struct BandOp<'a, 'd, T, const C: usize> {
    plan: &'a Plan,
    src: &'a Rows<'a, T>,
    r0: usize,
    dst: &'d mut [MaybeUninit<T>],
}

impl<'d, T: Sample, const C: usize> WithSimd for BandOp<'_, 'd, T, C> {
    type Output = &'d mut [T];

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> &'d mut [T] {
        band::band_task::<T, C, S>(simd, self.plan, self.src, self.r0, self.dst)
    }
}

impl Plan {
    /// Rows per band: a multiple of the chunk, as many bands as the threads
    /// want while the causal warm-up (`memory` rows per band) stays below
    /// an eighth of the rows.
    fn band_rows(&self, threads: usize) -> usize {
        let h = self.height;
        let mut bands = threads * BANDS_PER_THREAD;
        if let Axis::Iir { c, .. } = &self.fy {
            let fit = 1 + h / (8 * c.memory).max(1);
            bands = bands.min((fit / threads * threads).max(threads));
        }
        h.div_ceil(bands.clamp(1, h))
            .next_multiple_of(self.chunk)
            .min(h)
    }

    /// Rows per segment: twice the recursion's memory (the anticausal
    /// warm-up below each segment then costs half a pass), in whole chunks,
    /// and, unless the output itself parks them, at most [`PARK_BYTES`] of
    /// parked rows.
    fn segment_rows(&self, row_len: usize, in_place: bool) -> usize {
        let cap = match in_place {
            true => 1 << 20,
            false => (PARK_BYTES / (4 * row_len)).max(1),
        };
        match &self.fy {
            Axis::Iir { c, .. } => c
                .memory
                .saturating_mul(2)
                .min(cap)
                .max(self.chunk)
                .next_multiple_of(self.chunk),
            _ => self.chunk,
        }
    }
}

/// Read-only rows of samples, `stride` apart.
#[derive(Clone, Copy)]
struct Rows<'a, S> {
    data: &'a [S],
    stride: usize,
    len: usize,
}

impl<'a, S: Sample> Rows<'a, S> {
    fn of(img: &'a Image<S>) -> Self {
        Rows {
            data: img.data(),
            stride: img.stride(),
            len: img.row_len(),
        }
    }

    #[inline(always)]
    fn row(&self, y: usize) -> &'a [S] {
        &self.data[y * self.stride..][..self.len]
    }
}

/// The filter along one axis.
enum Axis {
    /// sigma == 0: the axis is left as it is.
    Copy,
    /// The reference's sampled Gaussian, exactly.
    Fir { taps: Vec<f32>, border: Border },
    /// Deriche's recursive filter.
    Iir { c: Iir, border: Border },
}

impl Axis {
    /// The filter for lines of `n` samples. Both borders repeat a single
    /// sample, so a line of one is left as it is.
    fn new(sigma: f32, border: Border, n: usize) -> Axis {
        if sigma <= 0.0 || n == 1 {
            Axis::Copy
        } else if sigma < IIR_MIN_SIGMA {
            Axis::Fir {
                taps: taps(sigma as f64).into_iter().map(|t| t as f32).collect(),
                border,
            }
        } else {
            Axis::Iir {
                c: Iir::new(sigma as f64),
                border,
            }
        }
    }
}
