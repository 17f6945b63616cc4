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
//! Channels are independent columns throughout. The kernels are compiled
//! for AVX-512, AVX2 + FMA and the build's baseline, chosen at run time.

use std::any::TypeId;
use std::mem::MaybeUninit;
use std::ops::Range;

use rayon::prelude::*;

use super::coeffs::{Deriche, BIQUAD_MAX_SIGMA};
use super::reference::{source_index, taps};
use super::{Border, GaussianParams, IIR_MIN_SIGMA};
use crate::error::{Error, Result};
use crate::image::{Image, Sample};

/// Columns the horizontal blocks aim for: one AVX-512 strip.
const LANES: usize = 32;

/// Rows per step of the causal pass (states stay in registers for this long).
const STEP_ROWS: usize = 8;

/// Most bytes of causal output a task keeps for the anticausal pass.
const PARK_BYTES: usize = 8 << 20;

/// Bands per thread, for load balance, when sigma allows.
const BANDS_PER_THREAD: usize = 4;

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
            fill(img, p, Isa::detect(), uninit_view(out));
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

fn gaussian_with<T: Sample>(img: &Image<T>, p: &GaussianParams, isa: Isa) -> Result<Image<T>> {
    let n = img.width() * img.height() * img.channels();
    let mut out = Vec::<T>::with_capacity(n);
    crate::backend::cpu::advise_huge_pages(out.spare_capacity_mut());
    fill(img, p, isa, &mut out.spare_capacity_mut()[..n]);
    // SAFETY: `fill` initialises all of its n samples.
    unsafe { out.set_len(n) };
    Image::from_vec(img.width(), img.height(), img.channels(), out)
}

/// Blurs `img` into `out` (its packed samples), writing every sample.
fn fill<T: Sample>(img: &Image<T>, p: &GaussianParams, isa: Isa, out: &mut [MaybeUninit<T>]) {
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
    /// Rows per segment of the vertical recursion (see [`band_task`]).
    segment: usize,
}

fn fill_c<T: Sample, const C: usize>(
    img: &Image<T>,
    p: &GaussianParams,
    isa: Isa,
    out: &mut [MaybeUninit<T>],
) {
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
        for (d, s) in out.chunks_exact_mut(row_len).zip(img.rows()) {
            for (d, s) in d.iter_mut().zip(s) {
                d.write(*s);
            }
        }
        return;
    }
    // Each band writes all of its rows, each piece just before it is used:
    // clearing the whole buffer up front would cost a pass over memory.
    let src = Rows::of(img);
    let band = plan.band_rows(rayon::current_num_threads()) * row_len;
    out.par_chunks_mut(band).enumerate().for_each(|(b, dst)| {
        let r0 = b * (band / row_len);
        match isa {
            Isa::Base => band_task::<T, C, Base>(&plan, &src, r0, dst),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Isa::Avx2 is chosen only where the CPU has AVX2 and FMA.
            Isa::Avx2 => unsafe { avx2::band_task::<T, C>(&plan, &src, r0, dst) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: Isa::Avx512 is chosen only where the CPU has AVX-512F, AVX2 and FMA.
            Isa::Avx512 => unsafe { avx512::band_task::<T, C>(&plan, &src, r0, dst) },
        }
    });
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

/// `s`, zeroed and so initialised.
fn init_zeroed<T: Sample>(s: &mut [MaybeUninit<T>]) -> &mut [T] {
    for v in s.iter_mut() {
        v.write(T::default());
    }
    // SAFETY: every element was just written.
    unsafe { assume_init(s) }
}

/// `s` (f32 samples) as such, still uninitialised.
fn as_uninit_f32<T: Sample>(s: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<f32>] {
    assert_eq!(TypeId::of::<T>(), TypeId::of::<f32>());
    // SAFETY: the types are equal, so the cast is the identity.
    unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [MaybeUninit<f32>]) }
}

/// Initialised samples as a slice to write through.
fn uninit_view<T: Sample>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and everything written
    // through it (here) is an initialised sample, so `s` stays initialised.
    unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// `v` into the first `V::N` samples of `d`.
#[inline(always)]
fn store_uninit<V: Vf32>(v: V, d: &mut [MaybeUninit<f32>]) {
    let d = &mut d[..V::N];
    // SAFETY: `d` holds `V::N` samples, and `MaybeUninit<f32>` has `f32`'s layout.
    unsafe { v.store_ptr(d.as_mut_ptr().cast()) }
}

/// `s` as initialised samples.
///
/// # Safety
/// Every element of `s` must have been written.
unsafe fn assume_init<T: Sample>(s: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees
    // that the values are initialised.
    unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [T]) }
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

/// `s` as f32 samples when `S` is f32.
#[inline(always)]
fn as_f32<S: Sample>(s: &[S]) -> Option<&[f32]> {
    // SAFETY: the types are equal, so the cast is the identity.
    (TypeId::of::<S>() == TypeId::of::<f32>())
        .then(|| unsafe { &*(s as *const [S] as *const [f32]) })
}

/// `s` as f32 samples when `S` is f32.
#[inline(always)]
fn as_f32_mut<S: Sample>(s: &mut [S]) -> Option<&mut [f32]> {
    // SAFETY: the types are equal, so the cast is the identity.
    (TypeId::of::<S>() == TypeId::of::<f32>())
        .then(|| unsafe { &mut *(s as *mut [S] as *mut [f32]) })
}

// ---------------------------------------------------------------------------
// Filters.

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

/// A complex number in f64, as (re, im).
type Cx = (f64, f64);

fn cmul(a: Cx, b: Cx) -> Cx {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

fn cdiv(a: Cx, b: Cx) -> Cx {
    let d = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
}

/// Rows of `m` floats that hold one direction's states of `m` columns.
const STATE_ROWS: usize = 6;

/// Deriche's sections as the f32 kernels run them.
#[derive(Debug, Clone, Copy)]
struct Iir {
    /// Poles `p` (re, im) of the two sections.
    p: [[f32; 2]; 2],
    /// Anticausal output weights `a`.
    a: [[f32; 2]; 2],
    /// Causal output weights `a p` (applied to the state before the update).
    b: [[f32; 2]; 2],
    /// The same sections as real biquads, up to [`BIQUAD_MAX_SIGMA`].
    bq: Option<Biquad>,
    /// The f32 poles, exactly, and the weights, in f64.
    p64: [Cx; 2],
    a64: [Cx; 2],
    b64: [Cx; 2],
    /// Samples after which the slower section's memory is below [`TAIL`].
    memory: usize,
}

/// Each conjugate pair of Deriche's poles as a real second-order section in
/// direct form I, per section `k`:
///
/// - causal `y[n] = n1 x[n-1] + n2 x[n-2] + d1 y[n-1] + d2 y[n-2]`,
/// - anticausal `y[n] = m0 x[n] + m1 x[n+1] + d1 y[n+1] + d2 y[n+2]`,
///
/// with `d1 = 2 Re p`, `d2 = -|p|^2`, `n1 = Re b`, `n2 = -Re(b conj p)`,
/// `m0 = Re a`, `m1 = -Re(a conj p)`: the transfer functions of the complex
/// sections, which take four multiplies per step where these take two, a
/// third fewer operations in all. Their f32 rounding grows like
/// `sigma^1.5` (the poles approach a double pole at 1, and `d1`, `d2` lose
/// the poles' angle), against `sigma` for the complex form: measured on
/// random lines with steps, 5e-5 of full scale at sigma 64 against 4e-7,
/// and 1.5e-3 at sigma 500. So biquads run up to [`BIQUAD_MAX_SIGMA`].
#[derive(Debug, Clone, Copy)]
struct Biquad {
    d1: [f32; 2],
    d2: [f32; 2],
    n1: [f32; 2],
    n2: [f32; 2],
    m0: [f32; 2],
    m1: [f32; 2],
}

impl Iir {
    /// `Deriche::new(sigma)`'s sections, with the poles rounded to f32 first
    /// and the weights renormalised so the filter that actually runs (f32
    /// poles) has a DC gain of exactly 1. At sigma 10000 the rounding of the
    /// poles alone would otherwise change the DC gain by ~3e-4.
    fn new(sigma: f64) -> Iir {
        let d = Deriche::new(sigma);
        let p64 = d
            .sections
            .map(|s| (s.pole.re as f32 as f64, s.pole.im as f32 as f64));
        let a0 = d.sections.map(|s| (s.weight.re, s.weight.im));
        let ci64 = p64.map(|p| cdiv((1.0, 0.0), (1.0 - p.0, -p.1)));
        // Causal Re(a/(1-p)) plus anticausal Re(a p/(1-p)).
        let gain: f64 = (0..2)
            .map(|k| cmul(a0[k], cmul((1.0 + p64[k].0, p64[k].1), ci64[k])).0)
            .sum();
        let a64 = a0.map(|a| (a.0 / gain, a.1 / gain));
        let b64 = [cmul(a64[0], p64[0]), cmul(a64[1], p64[1])];
        let f = |c: Cx| [c.0 as f32, c.1 as f32];
        let r = p64.map(|p| p.0.hypot(p.1)).into_iter().fold(0.0, f64::max);
        let memory = (TAIL.ln() / r.ln()).ceil();
        let conj = |c: Cx| (c.0, -c.1);
        let per = |g: &dyn Fn(usize) -> f64| [g(0) as f32, g(1) as f32];
        let bq = (sigma <= BIQUAD_MAX_SIGMA).then(|| Biquad {
            d1: per(&|k| 2.0 * p64[k].0),
            d2: per(&|k| -(p64[k].0 * p64[k].0 + p64[k].1 * p64[k].1)),
            n1: per(&|k| b64[k].0),
            n2: per(&|k| -cmul(b64[k], conj(p64[k])).0),
            m0: per(&|k| a64[k].0),
            m1: per(&|k| -cmul(a64[k], conj(p64[k])).0),
        });
        Iir {
            p: p64.map(f),
            a: a64.map(f),
            b: b64.map(f),
            bq,
            p64,
            a64,
            b64,
            memory: if memory < 1e9 {
                memory as usize
            } else {
                usize::MAX / 16
            },
        }
    }

    /// Writes the states of column `j` (of `m`) into `st` ([`STATE_ROWS`]
    /// rows of `m`) in the form the kernels run, from the complex state `w`
    /// of each section entering the line's first sample in the pass's
    /// direction (the weighted sum of the samples beyond the border), and
    /// the first two of those samples, `e1` nearest.
    ///
    /// Complex form: rows (re, im) per section. Biquads: rows `e1`, `e2`,
    /// then per section its outputs one and two samples beyond the border,
    /// found by running `w = e + p w'` backwards: a causal output at `n` is
    /// `Re(b w[n-1])`, an anticausal one `Re(a w[n])`.
    fn put_state(
        &self,
        causal: bool,
        w: [Cx; 2],
        (e1, e2): (f64, f64),
        st: &mut [f32],
        m: usize,
        j: usize,
    ) {
        let mut put = |row: usize, v: f64| st[row * m + j] = v as f32;
        if self.bq.is_none() {
            for (k, w) in w.iter().enumerate() {
                put(2 * k, w.0);
                put(2 * k + 1, w.1);
            }
            return;
        }
        put(0, e1);
        put(1, e2);
        for (k, &w) in w.iter().enumerate() {
            let back = |w: Cx, e: f64| cdiv((w.0 - e, w.1), self.p64[k]);
            let (y1, y2) = if causal {
                let w2 = back(w, e1);
                let w3 = back(w2, e2);
                (cmul(self.b64[k], w2).0, cmul(self.b64[k], w3).0)
            } else {
                (cmul(self.a64[k], w).0, cmul(self.a64[k], back(w, e1)).0)
            };
            put(2 + 2 * k, y1);
            put(3 + 2 * k, y2);
        }
    }
}

/// Start states at the borders of `n` rows of `m` columns (row `i` is
/// `row(i)`): the causal state entering row 0 into `fw`, the
/// anticausal state entering row `n - 1` from below into `bw`, each as
/// [`STATE_ROWS`] rows of `m` (see [`Iir::put_state`]), for the deviations
/// from `refs` (see [`Causal::refs`]). `n` is at least 2 (a line of one is
/// left as it is).
fn border_states<'a, S: Sample + 'a>(
    c: &Iir,
    border: Border,
    (n, m): (usize, usize),
    row: impl Fn(usize) -> &'a [S],
    refs: &[f32],
    (mut fw, mut bw): (Option<&mut [f32]>, Option<&mut [f32]>),
    acc: &mut Vec<f64>,
) {
    let dev = |i: usize, j: usize| (row(i)[j].to_f32() - refs[j]) as f64;
    match border {
        Border::Replicate => {
            // A constant x beyond the border: w = x / (1 - p).
            let ci = c.p64.map(|p| cdiv((1.0, 0.0), (1.0 - p.0, -p.1)));
            for (st, edge, causal) in [(fw, 0, true), (bw, n - 1, false)] {
                let Some(st) = st else {
                    continue;
                };
                for j in 0..m {
                    let x = dev(edge, j);
                    let w = ci.map(|ci| (x * ci.0, x * ci.1));
                    c.put_state(causal, w, (x, x), st, m, j);
                }
            }
        }
        Border::Mirror => {
            // The causal pass sees x[0], x[1], .., x[n-1], x[n-1], .., x[0],
            // x[0], .. to its left (period 2n), so its start state is
            // sum_m p^m ext[m] = (F + p^n B) / (1 - p^2n), with
            // F = sum_{m<n} p^m x[m] and B = sum_{m<n} p^m x[n-1-m]. The
            // anticausal pass sees x[n-1], .., x[0], x[0], .. to its right:
            // (B + p^n F) / (1 - p^2n). Terms below TAIL / 10 are dropped.
            acc.resize(8 * m, 0.0);
            let acc = &mut acc[..8 * m];
            acc.fill(0.0);
            let mut dens = [(0.0, 0.0); 2];
            let mut pns = [(0.0, 0.0); 2];
            for k in 0..2 {
                let p = c.p64[k];
                let r = p.0.hypot(p.1);
                let terms = ((TAIL / 10.0).ln() / r.ln()).ceil();
                let terms = if terms < n as f64 { terms as usize } else { n };
                let (fr, rest) = acc[4 * k * m..(4 * k + 4) * m].split_at_mut(m);
                let (fi, rest) = rest.split_at_mut(m);
                let (br, bi) = rest.split_at_mut(m);
                let mut pm: Cx = (1.0, 0.0);
                for t in 0..terms {
                    for j in 0..m {
                        let (a, b) = (dev(t, j), dev(n - 1 - t, j));
                        fr[j] += pm.0 * a;
                        fi[j] += pm.1 * a;
                        br[j] += pm.0 * b;
                        bi[j] += pm.1 * b;
                    }
                    pm = cmul(pm, p);
                }
                // p^n from the polar form; 1 - p^2n is well conditioned in f64.
                let (lr, th) = (r.ln() * n as f64, p.1.atan2(p.0) * n as f64);
                pns[k] = (lr.exp() * th.cos(), lr.exp() * th.sin());
                let p2n = cmul(pns[k], pns[k]);
                dens[k] = (1.0 - p2n.0, -p2n.1);
            }
            for j in 0..m {
                let sums = [0, 1].map(|k| {
                    let at = |q: usize| acc[(4 * k + q) * m + j];
                    ((at(0), at(1)), (at(2), at(3)))
                });
                let state = |flip: bool| {
                    [0, 1].map(|k| {
                        let (f, b) = sums[k];
                        let (f, b) = if flip { (b, f) } else { (f, b) };
                        let pb = cmul(pns[k], b);
                        cdiv((f.0 + pb.0, f.1 + pb.1), dens[k])
                    })
                };
                if let Some(st) = fw.as_deref_mut() {
                    c.put_state(true, state(false), (dev(0, j), dev(1, j)), st, m, j);
                }
                if let Some(st) = bw.as_deref_mut() {
                    c.put_state(false, state(true), (dev(n - 1, j), dev(n - 2, j)), st, m, j);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Vectors.

/// A vector of f32 lanes. The x86 types wrap intrinsics of instruction sets
/// the CPU may lack: only the kernels compiled for those sets (modules
/// `avx2` and `avx512`, entered after detection) use them.
trait Vf32: Copy {
    /// Lanes.
    const N: usize;
    fn splat(v: f32) -> Self;
    /// The first `N` samples of `s`.
    fn load(s: &[f32]) -> Self;
    /// Into the first `N` samples of `s`.
    fn store(self, s: &mut [f32]);
    fn mul(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    /// `self * b + c`.
    fn fma(self, b: Self, c: Self) -> Self;
    /// `N` samples from `p`.
    ///
    /// # Safety
    /// `p..p + N` must be readable.
    unsafe fn load_ptr(p: *const f32) -> Self;
    /// Into `N` samples at `p`.
    ///
    /// # Safety
    /// `p..p + N` must be writable.
    unsafe fn store_ptr(self, p: *mut f32);
}

/// The first `V::N` samples of `s`, converted.
#[inline(always)]
fn load_any<V: Vf32, S: Sample>(s: &[S]) -> V {
    match as_f32(s) {
        Some(f) => V::load(f),
        None => {
            let mut a = [0f32; 16];
            for (d, v) in a[..V::N].iter_mut().zip(&s[..V::N]) {
                *d = v.to_f32();
            }
            V::load(&a)
        }
    }
}

/// `v` into the first `V::N` samples of `d`, rounded and saturated.
#[inline(always)]
fn store_any<V: Vf32, D: Sample>(v: V, d: &mut [D]) {
    match as_f32_mut(d) {
        Some(f) => v.store(f),
        None => {
            let mut a = [0f32; 16];
            v.store(&mut a);
            for (d, v) in d[..V::N].iter_mut().zip(&a) {
                *d = D::from_f32(*v);
            }
        }
    }
}

impl Vf32 for f32 {
    const N: usize = 1;
    #[inline(always)]
    fn splat(v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn load(s: &[f32]) -> Self {
        s[0]
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        s[0] = self;
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self * o
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self - o
    }
    #[inline(always)]
    fn fma(self, b: Self, c: Self) -> Self {
        self * b + c
    }
    #[inline(always)]
    unsafe fn load_ptr(p: *const f32) -> Self {
        // SAFETY: the caller's contract.
        unsafe { *p }
    }
    #[inline(always)]
    unsafe fn store_ptr(self, p: *mut f32) {
        // SAFETY: the caller's contract.
        unsafe { *p = self }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Vf32;
    use std::arch::x86_64::*;

    /// 8 lanes: AVX and FMA.
    #[derive(Clone, Copy)]
    pub(super) struct F8(pub(super) __m256);

    /// 16 lanes: AVX-512F.
    #[derive(Clone, Copy)]
    pub(super) struct F16(pub(super) __m512);

    // SAFETY, for every `unsafe` in this module: the instruction set is
    // present (see `Vf32`), and loads and stores go through slices already
    // cut to the vector's length, so they stay in bounds.
    impl Vf32 for F8 {
        const N: usize = 8;
        #[inline(always)]
        fn splat(v: f32) -> Self {
            unsafe { F8(_mm256_set1_ps(v)) }
        }
        #[inline(always)]
        fn load(s: &[f32]) -> Self {
            let s = &s[..8];
            unsafe { F8(_mm256_loadu_ps(s.as_ptr())) }
        }
        #[inline(always)]
        fn store(self, s: &mut [f32]) {
            let s = &mut s[..8];
            unsafe { _mm256_storeu_ps(s.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            unsafe { F8(_mm256_mul_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            unsafe { F8(_mm256_add_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            unsafe { F8(_mm256_sub_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn fma(self, b: Self, c: Self) -> Self {
            unsafe { F8(_mm256_fmadd_ps(self.0, b.0, c.0)) }
        }
        #[inline(always)]
        unsafe fn load_ptr(p: *const f32) -> Self {
            unsafe { F8(_mm256_loadu_ps(p)) }
        }
        #[inline(always)]
        unsafe fn store_ptr(self, p: *mut f32) {
            unsafe { _mm256_storeu_ps(p, self.0) }
        }
    }

    impl Vf32 for F16 {
        const N: usize = 16;
        #[inline(always)]
        fn splat(v: f32) -> Self {
            unsafe { F16(_mm512_set1_ps(v)) }
        }
        #[inline(always)]
        fn load(s: &[f32]) -> Self {
            let s = &s[..16];
            unsafe { F16(_mm512_loadu_ps(s.as_ptr())) }
        }
        #[inline(always)]
        fn store(self, s: &mut [f32]) {
            let s = &mut s[..16];
            unsafe { _mm512_storeu_ps(s.as_mut_ptr(), self.0) }
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            unsafe { F16(_mm512_mul_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            unsafe { F16(_mm512_add_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            unsafe { F16(_mm512_sub_ps(self.0, o.0)) }
        }
        #[inline(always)]
        fn fma(self, b: Self, c: Self) -> Self {
            unsafe { F16(_mm512_fmadd_ps(self.0, b.0, c.0)) }
        }
        #[inline(always)]
        unsafe fn load_ptr(p: *const f32) -> Self {
            unsafe { F16(_mm512_loadu_ps(p)) }
        }
        #[inline(always)]
        unsafe fn store_ptr(self, p: *mut f32) {
            unsafe { _mm512_storeu_ps(p, self.0) }
        }
    }

    /// Per 128-bit lane: the low (high) 64-bit halves of `x` and `y`, interleaved.
    #[inline(always)]
    fn lo_pd8(x: __m256, y: __m256) -> __m256 {
        unsafe { _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))) }
    }

    #[inline(always)]
    fn hi_pd8(x: __m256, y: __m256) -> __m256 {
        unsafe { _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))) }
    }

    /// Transposes 8x8: `v[i]` holds row `i`, afterwards column `i`. (No
    /// closures here or below: they would not inherit the target features.)
    #[inline(always)]
    pub(super) fn transpose8(v: &mut [F8; 8]) {
        unsafe {
            let z = _mm256_setzero_ps();
            let (mut a, mut b) = ([z; 4], [z; 4]);
            for i in 0..4 {
                a[i] = _mm256_unpacklo_ps(v[2 * i].0, v[2 * i + 1].0);
                b[i] = _mm256_unpackhi_ps(v[2 * i].0, v[2 * i + 1].0);
            }
            // c[h][q]: per 128-bit lane L, column 4L + q of rows 4h..4h+4.
            let mut c = [[z; 4]; 2];
            for (h, c) in c.iter_mut().enumerate() {
                let (i, j) = (2 * h, 2 * h + 1);
                *c = [
                    lo_pd8(a[i], a[j]),
                    hi_pd8(a[i], a[j]),
                    lo_pd8(b[i], b[j]),
                    hi_pd8(b[i], b[j]),
                ];
            }
            for q in 0..4 {
                v[q] = F8(_mm256_permute2f128_ps::<0x20>(c[0][q], c[1][q]));
                v[4 + q] = F8(_mm256_permute2f128_ps::<0x31>(c[0][q], c[1][q]));
            }
        }
    }

    /// Transposes 2x2 blocks of 128-bit lanes (RGBA pixels): `v[i]` holds
    /// pixels 0, 1 of row `i`, afterwards rows 0, 1 of pixel `i`.
    #[inline(always)]
    pub(super) fn transpose8_px(v: &mut [F8; 2]) {
        unsafe {
            let (a, b) = (v[0].0, v[1].0);
            v[0] = F8(_mm256_permute2f128_ps::<0x20>(a, b));
            v[1] = F8(_mm256_permute2f128_ps::<0x31>(a, b));
        }
    }

    /// 4x4 transpose of 128-bit lanes: `v[i]` lane `l` becomes `v[l]` lane `i`.
    #[inline(always)]
    fn lanes4(v: [__m512; 4]) -> [__m512; 4] {
        unsafe {
            let t0 = _mm512_shuffle_f32x4::<0b01_00_01_00>(v[0], v[1]);
            let t1 = _mm512_shuffle_f32x4::<0b01_00_01_00>(v[2], v[3]);
            let t2 = _mm512_shuffle_f32x4::<0b11_10_11_10>(v[0], v[1]);
            let t3 = _mm512_shuffle_f32x4::<0b11_10_11_10>(v[2], v[3]);
            [
                _mm512_shuffle_f32x4::<0b10_00_10_00>(t0, t1),
                _mm512_shuffle_f32x4::<0b11_01_11_01>(t0, t1),
                _mm512_shuffle_f32x4::<0b10_00_10_00>(t2, t3),
                _mm512_shuffle_f32x4::<0b11_01_11_01>(t2, t3),
            ]
        }
    }

    #[inline(always)]
    fn lo_pd16(x: __m512, y: __m512) -> __m512 {
        unsafe { _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(x), _mm512_castps_pd(y))) }
    }

    #[inline(always)]
    fn hi_pd16(x: __m512, y: __m512) -> __m512 {
        unsafe { _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(x), _mm512_castps_pd(y))) }
    }

    /// Transposes 16x16: `v[i]` holds row `i`, afterwards column `i`.
    #[inline(always)]
    pub(super) fn transpose16(v: &mut [F16; 16]) {
        unsafe {
            let z = _mm512_setzero_ps();
            let (mut a, mut b) = ([z; 8], [z; 8]);
            for i in 0..8 {
                a[i] = _mm512_unpacklo_ps(v[2 * i].0, v[2 * i + 1].0);
                b[i] = _mm512_unpackhi_ps(v[2 * i].0, v[2 * i + 1].0);
            }
            // c[h][q]: per 128-bit lane L, column 4L + q of rows 4h..4h+4.
            let mut c = [[z; 4]; 4];
            for (h, c) in c.iter_mut().enumerate() {
                let (i, j) = (2 * h, 2 * h + 1);
                *c = [
                    lo_pd16(a[i], a[j]),
                    hi_pd16(a[i], a[j]),
                    lo_pd16(b[i], b[j]),
                    hi_pd16(b[i], b[j]),
                ];
            }
            for q in 0..4 {
                let o = lanes4([c[0][q], c[1][q], c[2][q], c[3][q]]);
                for l in 0..4 {
                    v[4 * l + q] = F16(o[l]);
                }
            }
        }
    }

    /// Transposes 4x4 blocks of 128-bit lanes (RGBA pixels): `v[i]` holds
    /// pixels 0..4 of row `i`, afterwards rows 0..4 of pixel `i`.
    #[inline(always)]
    pub(super) fn transpose16_px(v: &mut [F16; 4]) {
        let o = lanes4([v[0].0, v[1].0, v[2].0, v[3].0]);
        for l in 0..4 {
            v[l] = F16(o[l]);
        }
    }
}

// ---------------------------------------------------------------------------
// Kernels on strips of adjacent columns.

/// Work done on a strip of `K * V::N` adjacent columns starting at `j`.
trait StripFn {
    fn strip<V: Vf32, const K: usize>(&mut self, j: usize);
}

/// One direction of Deriche's filter on a vector of columns, in one of its
/// two forms ([`Cplx`], [`Biquads`]). Outputs that a caller drops (the
/// warm-ups) cost nothing: the compiler removes their arithmetic.
trait Rec<V: Vf32> {
    /// A vector's state.
    type S: Copy;
    /// The coefficients this form runs on.
    type C;
    fn new(c: &Self::C) -> Self;
    /// The state of the `N` columns from `at`, in `st` (rows of `m`).
    fn load(st: &[f32], m: usize, at: usize) -> Self::S;
    fn save(s: &Self::S, st: &mut [f32], m: usize, at: usize);
    /// Causal: this sample's output (which does not depend on it), and the
    /// state moved past it.
    fn causal(&self, s: &mut Self::S, x: V) -> V;
    /// Anticausal: the state moved past this sample, and `acc` plus its
    /// output.
    fn anti(&self, s: &mut Self::S, x: V, acc: V) -> V;
}

/// The complex sections as vectors.
struct Cplx<V> {
    p: [(V, V, V); 2],
    b: [(V, V); 2],
    a: [(V, V); 2],
}

impl<V: Vf32> Cplx<V> {
    /// One step of both sections: the states become `x + p * state`.
    #[inline(always)]
    fn step(&self, w: [(V, V); 2], x: V) -> [(V, V); 2] {
        let [(p0r, p0i, n0i), (p1r, p1i, n1i)] = self.p;
        let [(u0r, u0i), (u1r, u1i)] = w;
        [
            (p0r.fma(u0r, n0i.fma(u0i, x)), p0r.fma(u0i, p0i.mul(u0r))),
            (p1r.fma(u1r, n1i.fma(u1i, x)), p1r.fma(u1i, p1i.mul(u1r))),
        ]
    }

    /// `acc + sum Re(wt * state)` with weights `wt` = (re, -im).
    #[inline(always)]
    fn out(wt: [(V, V); 2], w: [(V, V); 2], acc: V) -> V {
        let [(w0r, nw0i), (w1r, nw1i)] = wt;
        let [(u0r, u0i), (u1r, u1i)] = w;
        w0r.fma(u0r, nw0i.fma(u0i, w1r.fma(u1r, nw1i.fma(u1i, acc))))
    }
}

impl<V: Vf32> Rec<V> for Cplx<V> {
    type S = [(V, V); 2];
    type C = Iir;

    #[inline(always)]
    fn new(c: &Iir) -> Self {
        let sp = V::splat;
        let [[p0r, p0i], [p1r, p1i]] = c.p;
        let [[b0r, b0i], [b1r, b1i]] = c.b;
        let [[a0r, a0i], [a1r, a1i]] = c.a;
        Cplx {
            p: [(sp(p0r), sp(p0i), sp(-p0i)), (sp(p1r), sp(p1i), sp(-p1i))],
            b: [(sp(b0r), sp(-b0i)), (sp(b1r), sp(-b1i))],
            a: [(sp(a0r), sp(-a0i)), (sp(a1r), sp(-a1i))],
        }
    }

    #[inline(always)]
    fn load(st: &[f32], m: usize, at: usize) -> Self::S {
        let r = |k: usize| &st[k * m + at..];
        [
            (V::load(r(0)), V::load(r(1))),
            (V::load(r(2)), V::load(r(3))),
        ]
    }

    #[inline(always)]
    fn save(s: &Self::S, st: &mut [f32], m: usize, at: usize) {
        let [(a, b), (c, d)] = *s;
        for (k, v) in [a, b, c, d].into_iter().enumerate() {
            v.store(&mut st[k * m + at..]);
        }
    }

    #[inline(always)]
    fn causal(&self, s: &mut Self::S, x: V) -> V {
        let y = Self::out(self.b, *s, V::splat(0.0));
        *s = self.step(*s, x);
        y
    }

    #[inline(always)]
    fn anti(&self, s: &mut Self::S, x: V, acc: V) -> V {
        *s = self.step(*s, x);
        Self::out(self.a, *s, acc)
    }
}

/// The biquads ([`Biquad`]) as vectors: per section (d1, d2, n1, n2, m0, m1).
struct Biquads<V>([[V; 6]; 2]);

/// A vector's biquad state: the last two samples (causal; the anticausal
/// pass uses the first), and per section its last two outputs.
#[derive(Clone, Copy)]
struct BiquadState<V> {
    x: [V; 2],
    y: [[V; 2]; 2],
}

impl<V: Vf32> Rec<V> for Biquads<V> {
    type S = BiquadState<V>;
    type C = Biquad;

    #[inline(always)]
    fn new(q: &Biquad) -> Self {
        let z = V::splat(0.0);
        let mut v = [[z; 6]; 2];
        for (k, v) in v.iter_mut().enumerate() {
            for (v, c) in v.iter_mut().zip([q.d1, q.d2, q.n1, q.n2, q.m0, q.m1]) {
                *v = V::splat(c[k]);
            }
        }
        Biquads(v)
    }

    #[inline(always)]
    fn load(st: &[f32], m: usize, at: usize) -> Self::S {
        let r = |k: usize| &st[k * m + at..];
        BiquadState {
            x: [V::load(r(0)), V::load(r(1))],
            y: [
                [V::load(r(2)), V::load(r(3))],
                [V::load(r(4)), V::load(r(5))],
            ],
        }
    }

    #[inline(always)]
    fn save(s: &Self::S, st: &mut [f32], m: usize, at: usize) {
        let [[a, b], [c, d]] = s.y;
        for (k, v) in [s.x[0], s.x[1], a, b, c, d].into_iter().enumerate() {
            v.store(&mut st[k * m + at..]);
        }
    }

    #[inline(always)]
    fn causal(&self, s: &mut Self::S, x: V) -> V {
        let [x1, x2] = s.x;
        let mut out = [V::splat(0.0); 2];
        for (k, out) in out.iter_mut().enumerate() {
            let [d1, d2, n1, n2, ..] = self.0[k];
            let [y1, y2] = s.y[k];
            // The feed-forward terms first: only the last FMA waits on y[n-1].
            let v = d1.fma(y1, d2.fma(y2, n2.fma(x2, n1.mul(x1))));
            *out = v;
            s.y[k] = [v, y1];
        }
        s.x = [x, x1];
        out[0].add(out[1])
    }

    #[inline(always)]
    fn anti(&self, s: &mut Self::S, x: V, acc: V) -> V {
        let x1 = s.x[0];
        let mut out = acc;
        for k in 0..2 {
            let [d1, d2, _, _, m0, m1] = self.0[k];
            let [y1, y2] = s.y[k];
            let v = d1.fma(y1, d2.fma(y2, m1.fma(x1, m0.mul(x))));
            out = out.add(v);
            s.y[k] = [v, y1];
        }
        s.x[0] = x;
        out
    }
}

/// Deriche's filter down the columns of a block `x` (rows of `m`) into `y`,
/// both passes, starting from `init` (causal states, then anticausal). It
/// filters each column's deviations from its first sample (see
/// [`Causal::refs`]).
struct BlockIir<'a> {
    c: &'a Iir,
    x: &'a [f32],
    y: &'a mut [f32],
    m: usize,
    init: &'a [f32],
}

impl BlockIir<'_> {
    #[inline(always)]
    fn run<V: Vf32, const K: usize, R: Rec<V>>(&mut self, j: usize, coefs: &R::C) {
        let (m, width) = (self.m, K * V::N);
        let f = R::new(coefs);
        let r = load_refs::<V, K>(&self.x[..m], j);
        // Causal into y, then anticausal added to it.
        let mut w = [R::load(self.init, m, j); K];
        for (q, s) in w.iter_mut().enumerate().skip(1) {
            *s = R::load(self.init, m, j + q * V::N);
        }
        for (xr, yr) in self.x.chunks_exact(m).zip(self.y.chunks_exact_mut(m)) {
            let (xr, yr) = (&xr[j..j + width], &mut yr[j..j + width]);
            for q in 0..K {
                let x = V::load(&xr[q * V::N..]).sub(r[q]);
                f.causal(&mut w[q], x).store(&mut yr[q * V::N..]);
            }
        }
        let init = &self.init[STATE_ROWS * m..];
        let mut v = [R::load(init, m, j); K];
        for (q, s) in v.iter_mut().enumerate().skip(1) {
            *s = R::load(init, m, j + q * V::N);
        }
        for (xr, yr) in self.x.chunks_exact(m).zip(self.y.chunks_exact_mut(m)).rev() {
            let (xr, yr) = (&xr[j..j + width], &mut yr[j..j + width]);
            for q in 0..K {
                let x = V::load(&xr[q * V::N..]).sub(r[q]);
                let acc = V::load(&yr[q * V::N..]).add(r[q]);
                f.anti(&mut v[q], x, acc).store(&mut yr[q * V::N..]);
            }
        }
    }
}

impl StripFn for BlockIir<'_> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.run::<V, K, Biquads<V>>(j, q),
            None => self.run::<V, K, Cplx<V>>(j, c),
        }
    }
}

/// Asks for the cache lines of `row` from sample `at` on, which the next
/// strip will read. Each strip walks down (or up) only [`STEP_ROWS`] rows,
/// a few lines per row, before the next strip starts over: too short a run
/// for the hardware's stride prefetchers. Measured at 4K gray, sigma 8 and
/// 32 on the 2-core CI-class machine: 20-35% faster (noisy neighbours).
#[inline(always)]
fn prefetch_ahead<S: Sample>(row: &[S], at: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let base = row.as_ptr().wrapping_add(at) as *const i8;
        let left = std::mem::size_of_val(row).saturating_sub(at * std::mem::size_of::<S>());
        let bytes = PREFETCH_BYTES.min(left);
        let mut o = 0;
        while o < bytes {
            // SAFETY: a prefetch cannot fault, and the address stays within the row.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(o)) };
            o += 64;
        }
    }
}

/// Bytes [`prefetch_ahead`] asks for: one strip of f32 on AVX-512.
const PREFETCH_BYTES: usize = 128;

/// The reference levels of a strip's columns (see [`Causal::refs`]).
#[inline(always)]
fn load_refs<V: Vf32, const K: usize>(refs: &[f32], j: usize) -> [V; K] {
    let mut r = [V::splat(0.0); K];
    for (q, r) in r.iter_mut().enumerate() {
        *r = V::load(&refs[j + q * V::N..]);
    }
    r
}

/// The causal pass down image rows `rows` of `src`, all columns, states in
/// `st`; with `out` (rows from `rows.start`, of `m`), emits its output.
struct Causal<'a, S> {
    c: &'a Iir,
    src: Rows<'a, S>,
    /// Each column's reference level (its first sample): the passes filter
    /// the deviations from it and add it back at the end. The filter's DC
    /// gain is 1, so this changes nothing but rounding, and a constant line
    /// comes back exactly however long it is (f32 states would otherwise
    /// drift by ~1e-5 of the level over thousands of samples at sigma 1000).
    refs: &'a [f32],
    rows: Range<usize>,
    st: &'a mut [f32],
    /// Written, never read: it may start uninitialised.
    out: Option<&'a mut [MaybeUninit<f32>]>,
}

impl<S: Sample> Causal<'_, S> {
    #[inline(always)]
    fn run<V: Vf32, const K: usize, R: Rec<V>>(&mut self, j: usize, coefs: &R::C) {
        // Everything in locals: stores through `out` could otherwise alias
        // `self` and force reloads every row.
        let (src, m, width) = (self.src, self.src.len, K * V::N);
        let f = R::new(coefs);
        let r = load_refs::<V, K>(self.refs, j);
        let mut w = [R::load(self.st, m, j); K];
        for (q, s) in w.iter_mut().enumerate().skip(1) {
            *s = R::load(self.st, m, j + q * V::N);
        }
        match self.out.as_deref_mut() {
            Some(out) => {
                for (i, or) in self.rows.clone().zip(out.chunks_exact_mut(m)) {
                    prefetch_ahead(src.row(i), j + width);
                    let (xr, or) = (&src.row(i)[j..j + width], &mut or[j..j + width]);
                    for q in 0..K {
                        let x = load_any::<V, S>(&xr[q * V::N..]).sub(r[q]);
                        store_uninit(f.causal(&mut w[q], x), &mut or[q * V::N..]);
                    }
                }
            }
            None => {
                for i in self.rows.clone() {
                    prefetch_ahead(src.row(i), j + width);
                    let xr = &src.row(i)[j..j + width];
                    for q in 0..K {
                        let x = load_any::<V, S>(&xr[q * V::N..]).sub(r[q]);
                        f.causal(&mut w[q], x);
                    }
                }
            }
        }
        for (q, w) in w.iter().enumerate() {
            R::save(w, self.st, m, j + q * V::N);
        }
    }
}

impl<S: Sample> StripFn for Causal<'_, S> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.run::<V, K, Biquads<V>>(j, q),
            None => self.run::<V, K, Cplx<V>>(j, c),
        }
    }
}

/// The anticausal pass up image rows `rows` of `src` (last to first), all
/// columns, states in `st`; with `io` = (causal half, rows from
/// `rows.start`), adds the two halves into `io.1`.
struct Anticausal<'a, S, O> {
    c: &'a Iir,
    src: Rows<'a, S>,
    /// As [`Causal::refs`].
    refs: &'a [f32],
    rows: Range<usize>,
    st: &'a mut [f32],
    io: Option<(&'a [O], &'a mut [f32])>,
}

impl<S: Sample, O: Sample> Anticausal<'_, S, O> {
    #[inline(always)]
    fn run<V: Vf32, const K: usize, R: Rec<V>>(&mut self, j: usize, coefs: &R::C) {
        let (src, m, width) = (self.src, self.src.len, K * V::N);
        let f = R::new(coefs);
        let r = load_refs::<V, K>(self.refs, j);
        let mut v = [R::load(self.st, m, j); K];
        for (q, s) in v.iter_mut().enumerate().skip(1) {
            *s = R::load(self.st, m, j + q * V::N);
        }
        match self.io.as_mut() {
            Some((half, out)) => {
                let rows = self
                    .rows
                    .clone()
                    .zip(half.chunks_exact(m).zip(out.chunks_exact_mut(m)));
                for (i, (hr, or)) in rows.rev() {
                    prefetch_ahead(src.row(i), j + width);
                    prefetch_ahead(hr, j + width);
                    let xr = &src.row(i)[j..j + width];
                    let (hr, or) = (&hr[j..j + width], &mut or[j..j + width]);
                    for q in 0..K {
                        let x = load_any::<V, S>(&xr[q * V::N..]).sub(r[q]);
                        let acc = load_any::<V, O>(&hr[q * V::N..]).add(r[q]);
                        f.anti(&mut v[q], x, acc).store(&mut or[q * V::N..]);
                    }
                }
            }
            None => {
                for i in self.rows.clone().rev() {
                    prefetch_ahead(src.row(i), j + width);
                    let xr = &src.row(i)[j..j + width];
                    for q in 0..K {
                        let x = load_any::<V, S>(&xr[q * V::N..]).sub(r[q]);
                        f.anti(&mut v[q], x, V::splat(0.0));
                    }
                }
            }
        }
        for (q, v) in v.iter().enumerate() {
            R::save(v, self.st, m, j + q * V::N);
        }
    }
}

impl<S: Sample, O: Sample> StripFn for Anticausal<'_, S, O> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.run::<V, K, Biquads<V>>(j, q),
            None => self.run::<V, K, Cplx<V>>(j, c),
        }
    }
}

/// An instruction set: how it cuts `m` columns into strips, and its transposes.
trait Simd {
    fn strips<F: StripFn>(m: usize, f: &mut F);

    /// `x[i * m + k * C + c] = rows[k * row_len + i * C + c]` for the `nr`
    /// rows of `rows` (each `row_len = i_max * C`); `m = nr * C`.
    #[inline(always)]
    fn transpose_in<const C: usize>(rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        scalar_transpose_in::<C>(rows, row_len, x, m, 0, 0);
    }

    /// The inverse of `transpose_in`, converting into `dst`.
    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        scalar_transpose_out::<D, C>(y, m, dst, row_len, 0, 0);
    }
}

/// `transpose_in` for rows from `k0` and pixels from `i0` on (the rest is done).
#[inline(always)]
fn scalar_transpose_in<const C: usize>(
    rows: &[f32],
    row_len: usize,
    x: &mut [f32],
    m: usize,
    k0: usize,
    i0: usize,
) {
    let (nr, w) = (m / C, row_len / C);
    for k in 0..nr {
        let (i_start, row) = (if k < k0 { i0 } else { 0 }, &rows[k * row_len..][..row_len]);
        for i in i_start..w {
            x[i * m + k * C..][..C].copy_from_slice(&row[i * C..][..C]);
        }
    }
}

/// `transpose_out` for rows from `k0` and pixels from `i0` on (the rest is done).
#[inline(always)]
fn scalar_transpose_out<D: Sample, const C: usize>(
    y: &[f32],
    m: usize,
    dst: &mut [D],
    row_len: usize,
    k0: usize,
    i0: usize,
) {
    let (nr, w) = (m / C, row_len / C);
    for k in 0..nr {
        let (i_start, row) = (
            if k < k0 { i0 } else { 0 },
            &mut dst[k * row_len..][..row_len],
        );
        for i in i_start..w {
            for (d, v) in row[i * C..][..C].iter_mut().zip(&y[i * m + k * C..][..C]) {
                *d = D::from_f32(*v);
            }
        }
    }
}

/// The build's baseline: scalar code, four columns at a time.
struct Base;

impl Simd for Base {
    #[inline(always)]
    fn strips<F: StripFn>(m: usize, f: &mut F) {
        let mut j = 0;
        while j + 4 <= m {
            f.strip::<f32, 4>(j);
            j += 4;
        }
        while j < m {
            f.strip::<f32, 1>(j);
            j += 1;
        }
    }
}

/// AVX2 + FMA: 16 columns at a time.
#[cfg(target_arch = "x86_64")]
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Simd for Avx2 {
    #[inline(always)]
    fn strips<F: StripFn>(m: usize, f: &mut F) {
        let mut j = 0;
        while j + 16 <= m {
            f.strip::<x86::F8, 2>(j);
            j += 16;
        }
        while j + 8 <= m {
            f.strip::<x86::F8, 1>(j);
            j += 8;
        }
        while j < m {
            f.strip::<f32, 1>(j);
            j += 1;
        }
    }

    #[inline(always)]
    fn transpose_in<const C: usize>(rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        let (k1, i1) = tiles::<x86::F8, C>(rows, row_len, x, m);
        scalar_transpose_in::<C>(rows, row_len, x, m, k1, i1);
    }

    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        let (k1, i1) = tiles_out::<x86::F8, D, C>(y, m, dst, row_len);
        scalar_transpose_out::<D, C>(y, m, dst, row_len, k1, i1);
    }
}

/// AVX-512F: 32 columns at a time.
#[cfg(target_arch = "x86_64")]
struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Simd for Avx512 {
    #[inline(always)]
    fn strips<F: StripFn>(m: usize, f: &mut F) {
        let mut j = 0;
        while j + 32 <= m {
            f.strip::<x86::F16, 2>(j);
            j += 32;
        }
        while j + 16 <= m {
            f.strip::<x86::F16, 1>(j);
            j += 16;
        }
        while j + 8 <= m {
            f.strip::<x86::F8, 1>(j);
            j += 8;
        }
        while j < m {
            f.strip::<f32, 1>(j);
            j += 1;
        }
    }

    #[inline(always)]
    fn transpose_in<const C: usize>(rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        let (k1, i1) = tiles::<x86::F16, C>(rows, row_len, x, m);
        scalar_transpose_in::<C>(rows, row_len, x, m, k1, i1);
    }

    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        let (k1, i1) = tiles_out::<x86::F16, D, C>(y, m, dst, row_len);
        scalar_transpose_out::<D, C>(y, m, dst, row_len, k1, i1);
    }
}

/// A vector type's square transpose: `T` vectors, rows to columns (gray),
/// or `T` vectors of pixels (RGBA).
#[cfg(target_arch = "x86_64")]
trait Tile: Vf32 {
    /// Rows (and pixels) per tile for `C` channels; 0 when not supported.
    fn tile(c: usize) -> usize;
    /// Transposes `v[..tile(c)]`.
    fn transpose(v: &mut [Self; 16], c: usize);
}

#[cfg(target_arch = "x86_64")]
impl Tile for x86::F8 {
    #[inline(always)]
    fn tile(c: usize) -> usize {
        match c {
            1 => 8,
            4 => 2,
            _ => 0,
        }
    }
    #[inline(always)]
    fn transpose(v: &mut [Self; 16], c: usize) {
        if c == 1 {
            let t: &mut [Self; 8] = (&mut v[..8]).try_into().unwrap();
            x86::transpose8(t);
        } else {
            let t: &mut [Self; 2] = (&mut v[..2]).try_into().unwrap();
            x86::transpose8_px(t);
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Tile for x86::F16 {
    #[inline(always)]
    fn tile(c: usize) -> usize {
        match c {
            1 => 16,
            4 => 4,
            _ => 0,
        }
    }
    #[inline(always)]
    fn transpose(v: &mut [Self; 16], c: usize) {
        if c == 1 {
            x86::transpose16(v);
        } else {
            let t: &mut [Self; 4] = (&mut v[..4]).try_into().unwrap();
            x86::transpose16_px(t);
        }
    }
}

/// The vectorised part of `transpose_in`: whole tiles of rows `..k1` and
/// pixels `..i1`, returned for the scalar code to finish.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tiles<V: Tile, const C: usize>(
    rows: &[f32],
    row_len: usize,
    x: &mut [f32],
    m: usize,
) -> (usize, usize) {
    let t = V::tile(C);
    if t == 0 {
        return (0, 0);
    }
    let (nr, w) = (m / C, row_len / C);
    let (k1, i1) = (nr / t * t, w / t * t);
    debug_assert_eq!(V::N, t * C);
    assert!(rows.len() >= nr * row_len && x.len() >= w * m);
    let (rp, xp) = (rows.as_ptr(), x.as_mut_ptr());
    for tile in 0..i1 / t {
        let (i0, mut k0) = (tile * t, 0);
        while k0 < k1 {
            let mut v = [V::splat(0.0); 16];
            for (q, v) in v[..t].iter_mut().enumerate() {
                // SAFETY: row k0 + q < nr, and its pixels i0..i0 + t lie
                // within i1 <= w, so the load stays in `rows` (checked above).
                *v = unsafe { V::load_ptr(rp.add((k0 + q) * row_len + i0 * C)) };
            }
            V::transpose(&mut v, C);
            for (q, v) in v[..t].iter().enumerate() {
                // SAFETY: pixel i0 + q < w, columns k0 * C.. + V::N <= k1 * C <= m.
                unsafe { v.store_ptr(xp.add((i0 + q) * m + k0 * C)) };
            }
            k0 += t;
        }
    }
    (k1, i1)
}

/// The vectorised part of `transpose_out`, as [`tiles`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tiles_out<V: Tile, D: Sample, const C: usize>(
    y: &[f32],
    m: usize,
    dst: &mut [D],
    row_len: usize,
) -> (usize, usize) {
    let t = V::tile(C);
    if t == 0 {
        return (0, 0);
    }
    let (nr, w) = (m / C, row_len / C);
    let (k1, i1) = (nr / t * t, w / t * t);
    debug_assert_eq!(V::N, t * C);
    assert!(y.len() >= w * m && dst.len() >= nr * row_len);
    let yp = y.as_ptr();
    let fp = as_f32_mut(dst).map(|d| d.as_mut_ptr());
    for tile in 0..i1 / t {
        let (i0, mut k0) = (tile * t, 0);
        while k0 < k1 {
            let mut v = [V::splat(0.0); 16];
            for (q, v) in v[..t].iter_mut().enumerate() {
                // SAFETY: pixel i0 + q < w, columns k0 * C.. + V::N <= m (checked above).
                *v = unsafe { V::load_ptr(yp.add((i0 + q) * m + k0 * C)) };
            }
            V::transpose(&mut v, C);
            for (q, v) in v[..t].iter().enumerate() {
                let at = (k0 + q) * row_len + i0 * C;
                match fp {
                    // SAFETY: row k0 + q < nr, pixels i0..i0 + t within w.
                    Some(p) => unsafe { v.store_ptr(p.add(at)) },
                    None => store_any(*v, &mut dst[at..]),
                }
            }
            k0 += t;
        }
    }
    (k1, i1)
}

/// The sampled Gaussian down the columns of the block `x` (`n` rows of `m`).
#[inline(always)]
fn fir_block(t: &[f32], border: Border, x: &[f32], y: &mut [f32], n: usize, m: usize) {
    let r = (t.len() / 2) as i64;
    for (i, yr) in y.chunks_exact_mut(m).enumerate() {
        yr.fill(0.0);
        for (k, &tk) in t.iter().enumerate() {
            let s = source_index(i as i64 + k as i64 - r, n as i64, border);
            for (yv, xv) in yr.iter_mut().zip(&x[s * m..][..m]) {
                *yv += tk * xv;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Bands.

/// Per-task buffers.
#[derive(Default)]
struct Work {
    /// Each column's reference level, its first sample.
    refs: Vec<f32>,
    /// Causal and anticausal states down the image's columns (4 rows each).
    fw: Vec<f32>,
    bw: Vec<f32>,
    /// One chunk of vertically filtered rows.
    rows: Vec<f32>,
    /// The causal half of one segment.
    park: Vec<f32>,
    /// The chunk transposed, and its horizontal result.
    x: Vec<f32>,
    y: Vec<f32>,
    /// Start states of a block (8 rows of its width).
    init: Vec<f32>,
    /// f64 sums for mirror borders.
    acc: Vec<f64>,
}

thread_local! {
    /// Each worker's buffers, kept between bands and calls.
    static WORK: std::cell::Cell<Option<Box<Work>>> = const { std::cell::Cell::new(None) };
}

/// Work buffers above this many bytes are not kept for the next call.
const KEEP_BYTES: usize = 64 << 20;

impl Work {
    /// This thread's buffers (or new ones).
    fn take() -> Box<Work> {
        WORK.with(|w| w.take()).unwrap_or_default()
    }

    /// Hands the buffers back for the thread's next band, unless they are huge.
    fn give_back(self: Box<Work>) {
        let floats = [
            &self.refs, &self.fw, &self.bw, &self.rows, &self.park, &self.x, &self.y, &self.init,
        ]
        .iter()
        .map(|v| v.capacity())
        .sum::<usize>();
        let bytes = 4 * floats + 8 * self.acc.capacity();
        if bytes <= KEEP_BYTES {
            WORK.with(|w| w.set(Some(self)));
        }
    }
}

/// Row ranges of at most `size` rows covering `r`.
fn chunks(r: Range<usize>, size: usize) -> impl DoubleEndedIterator<Item = Range<usize>> {
    let (start, end) = (r.start, r.end);
    (0..(end - start).div_ceil(size))
        .map(move |i| start + i * size..(start + (i + 1) * size).min(end))
}

/// One band: output rows `r0..` (as many as `dst` holds), all written.
#[inline(always)]
fn band_task<T: Sample, const C: usize, I: Simd>(
    plan: &Plan,
    src: &Rows<T>,
    r0: usize,
    dst: &mut [MaybeUninit<T>],
) {
    let row_len = plan.width * C;
    let r1 = r0 + dst.len() / row_len;
    let mut wk = Work::take();
    grown(&mut wk.rows, plan.chunk.min(r1 - r0) * row_len);
    match &plan.fy {
        Axis::Copy => {
            for ch in chunks(r0..r1, plan.chunk) {
                let nr = ch.len();
                for (i, d) in ch.clone().zip(wk.rows.chunks_exact_mut(row_len)) {
                    for (d, s) in d.iter_mut().zip(src.row(i)) {
                        *d = s.to_f32();
                    }
                }
                let out = init_zeroed(&mut dst[(ch.start - r0) * row_len..][..nr * row_len]);
                horizontal::<T, C, I>(
                    plan,
                    &wk.rows[..nr * row_len],
                    out,
                    &mut wk.x,
                    &mut wk.y,
                    &mut wk.init,
                    &mut wk.acc,
                );
            }
        }
        Axis::Fir { taps, border } => {
            let r = (taps.len() / 2) as i64;
            for ch in chunks(r0..r1, plan.chunk) {
                let nr = ch.len();
                for (i, d) in ch.clone().zip(wk.rows.chunks_exact_mut(row_len)) {
                    d.fill(0.0);
                    for (k, &t) in taps.iter().enumerate() {
                        let s = source_index(i as i64 + k as i64 - r, plan.height as i64, *border);
                        for (d, s) in d.iter_mut().zip(src.row(s)) {
                            *d += t * s.to_f32();
                        }
                    }
                }
                let out = init_zeroed(&mut dst[(ch.start - r0) * row_len..][..nr * row_len]);
                horizontal::<T, C, I>(
                    plan,
                    &wk.rows[..nr * row_len],
                    out,
                    &mut wk.x,
                    &mut wk.y,
                    &mut wk.init,
                    &mut wk.acc,
                );
            }
        }
        Axis::Iir { c, border } => {
            let (n, l) = (plan.height, c.memory);
            let refs = grown(&mut wk.refs, row_len);
            for (r, x) in refs.iter_mut().zip(src.row(0)) {
                *r = x.to_f32();
            }
            let refs: &[f32] = refs;
            let fw = grown(&mut wk.fw, STATE_ROWS * row_len);
            let bw = grown(&mut wk.bw, STATE_ROWS * row_len);
            // The causal state entering row r0: from the border, or from zero
            // `l` rows above, through the rows in between.
            let start = r0.saturating_sub(l);
            if start == 0 {
                border_states(
                    c,
                    *border,
                    (n, row_len),
                    |i| src.row(i),
                    refs,
                    (Some(&mut *fw), None),
                    &mut wk.acc,
                );
            } else {
                fw.fill(0.0);
            }
            for ch in chunks(start..r0, STEP_ROWS) {
                I::strips(
                    row_len,
                    &mut Causal::<T> {
                        c,
                        src: *src,
                        refs,
                        rows: ch,
                        st: fw,
                        out: None,
                    },
                );
            }
            // Segment by segment, so that the rows in flight stay in cache:
            // the causal pass carries on down the segment, its half parked in
            // the output rows themselves for f32 (a buffer otherwise); the
            // anticausal pass starts from zero `l` rows below the segment (or
            // from the border), then runs back up through it, and each chunk
            // it finishes is filtered horizontally into `dst`.
            let in_place = TypeId::of::<T>() == TypeId::of::<f32>();
            let park = grown(
                &mut wk.park,
                if in_place {
                    0
                } else {
                    plan.segment.min(r1 - r0) * row_len
                },
            );
            for sg in chunks(r0..r1, plan.segment) {
                let seg = &mut dst[(sg.start - r0) * row_len..(sg.end - r0) * row_len];
                for ch in chunks(sg.clone(), STEP_ROWS) {
                    let (a, b) = (ch.start - sg.start, ch.end - sg.start);
                    let piece = &mut seg[a * row_len..b * row_len];
                    let out = if in_place {
                        as_uninit_f32(piece)
                    } else {
                        // Zeroed, to be initialised, just before the
                        // horizontal pass writes it, while in cache.
                        init_zeroed(piece);
                        uninit_view(&mut park[a * row_len..b * row_len])
                    };
                    I::strips(
                        row_len,
                        &mut Causal {
                            c,
                            src: *src,
                            refs,
                            rows: ch,
                            st: fw,
                            out: Some(out),
                        },
                    );
                }
                // SAFETY: the loop above initialised every row of the
                // segment: f32 rows hold the causal pass's output (the
                // strips cover every column), other types were zeroed.
                let seg = unsafe { assume_init(seg) };
                let end = (sg.end + l).min(n);
                if end == n {
                    border_states(
                        c,
                        *border,
                        (n, row_len),
                        |i| src.row(i),
                        refs,
                        (None, Some(&mut *bw)),
                        &mut wk.acc,
                    );
                } else {
                    bw.fill(0.0);
                }
                for ch in chunks(sg.end..end, STEP_ROWS).rev() {
                    I::strips(
                        row_len,
                        &mut Anticausal::<T, f32> {
                            c,
                            src: *src,
                            refs,
                            rows: ch,
                            st: bw,
                            io: None,
                        },
                    );
                }
                for ch in chunks(sg.clone(), plan.chunk).rev() {
                    let span = (ch.start - sg.start) * row_len..(ch.end - sg.start) * row_len;
                    let rows = &mut wk.rows[..ch.len() * row_len];
                    for sub in chunks(ch.clone(), STEP_ROWS).rev() {
                        let half = match as_f32(
                            &seg[(sub.start - sg.start) * row_len..(sub.end - sg.start) * row_len],
                        ) {
                            Some(d) => d,
                            None => {
                                &park[(sub.start - sg.start) * row_len
                                    ..(sub.end - sg.start) * row_len]
                            }
                        };
                        let out = &mut rows
                            [(sub.start - ch.start) * row_len..(sub.end - ch.start) * row_len];
                        I::strips(
                            row_len,
                            &mut Anticausal {
                                c,
                                src: *src,
                                refs,
                                rows: sub,
                                st: bw,
                                io: Some((half, out)),
                            },
                        );
                    }
                    horizontal::<T, C, I>(
                        plan,
                        rows,
                        &mut seg[span],
                        &mut wk.x,
                        &mut wk.y,
                        &mut wk.init,
                        &mut wk.acc,
                    );
                }
            }
        }
    }
    wk.give_back();
}

/// The horizontal filter of a chunk of rows (`rows`, f32) into `dst`.
#[inline(always)]
fn horizontal<D: Sample, const C: usize, I: Simd>(
    plan: &Plan,
    rows: &[f32],
    dst: &mut [D],
    x: &mut Vec<f32>,
    y: &mut Vec<f32>,
    init: &mut Vec<f32>,
    acc: &mut Vec<f64>,
) {
    let (w, row_len) = (plan.width, plan.width * C);
    let m = rows.len() / plan.width;
    let (x, y) = (grown(x, w * m), grown(y, w * m));
    match &plan.fx {
        Axis::Copy => {
            for (d, s) in dst.iter_mut().zip(rows) {
                *d = D::from_f32(*s);
            }
            return;
        }
        Axis::Fir { taps, border } => {
            I::transpose_in::<C>(rows, row_len, x, m);
            fir_block(taps, *border, x, y, w, m);
        }
        Axis::Iir { c, border } => {
            I::transpose_in::<C>(rows, row_len, x, m);
            let x: &[f32] = x;
            let init = grown(init, 2 * STATE_ROWS * m);
            let (fw, bw) = init.split_at_mut(STATE_ROWS * m);
            border_states(
                c,
                *border,
                (w, m),
                |i| &x[i * m..][..m],
                &x[..m],
                (Some(fw), Some(bw)),
                acc,
            );
            I::strips(m, &mut BlockIir { c, x, y, m, init });
        }
    }
    I::transpose_out::<D, C>(y, m, dst, row_len);
}

/// The first `n` entries of `v`, grown to that size if needed.
fn grown<T: Default + Clone>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::default());
    }
    &mut v[..n]
}

// ---------------------------------------------------------------------------
// Dispatch.

/// Instruction sets with their own compiled kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// The build's baseline.
    Base,
    /// AVX2 + FMA.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512F.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
            if avx2 && is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Base
    }

    /// Every instruction set this host runs, for tests.
    #[cfg(test)]
    fn all() -> Vec<Isa> {
        let mut v = vec![Isa::Base];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
                v.push(Isa::Avx2);
            }
            if Isa::detect() == Isa::Avx512 {
                v.push(Isa::Avx512);
            }
        }
        v
    }
}

/// [`band_task`] compiled for one instruction set.
macro_rules! kernels {
    ($module:ident, $features:literal, $isa:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::*;

            #[target_feature(enable = $features)]
            pub(super) fn band_task<T: Sample, const C: usize>(
                plan: &Plan,
                src: &Rows<T>,
                r0: usize,
                dst: &mut [MaybeUninit<T>],
            ) {
                super::band_task::<T, C, $isa>(plan, src, r0, dst)
            }
        }
    };
}

kernels!(avx2, "avx2,fma", Avx2);
kernels!(avx512, "avx512f,avx2,fma", Avx512);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::SampleType;
    use crate::ops::gaussian::reference;

    const SIZES: [(usize, usize); 7] =
        [(1, 1), (1, 7), (7, 1), (2, 3), (13, 11), (31, 17), (64, 5)];
    const SIGMAS: [f32; 8] = [0.0, 0.3, 0.8, 1.0, 2.5, 7.0, 40.0, 1000.0];

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    fn random<T: Sample>(w: usize, h: usize, c: usize, seed: u64) -> Image<T> {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let full = T::TYPE.full_scale();
        Image::from_fn(w, h, c, |_, _, _| T::from_f32(rng.next() * full)).unwrap()
    }

    fn params(sx: f32, sy: f32, border: Border) -> GaussianParams {
        GaussianParams {
            sigma_x: sx,
            sigma_y: sy,
            border,
        }
    }

    /// Max |cpu - reference| over every instruction set, in units of the
    /// input's max |value|, after allowing for the output's rounding.
    fn max_error<T: Sample>(img: &Image<T>, p: &GaussianParams) -> f64 {
        let want = reference::gaussian(img, p).unwrap();
        let scale = img
            .rows()
            .flatten()
            .map(|v| v.to_f32().abs())
            .fold(0.0, f32::max)
            .max(1e-30) as f64;
        let rounding = if T::TYPE == SampleType::F32 { 0.0 } else { 0.5 };
        let mut worst = 0.0f64;
        for isa in Isa::all() {
            let got = gaussian_with(img, p, isa).unwrap();
            assert_eq!(
                (got.width(), got.height(), got.channels()),
                (img.width(), img.height(), img.channels())
            );
            for (g, r) in got.rows().flatten().zip(want.rows().flatten()) {
                let e = ((g.to_f32() as f64 - *r as f64).abs() - rounding).max(0.0) / scale;
                assert!(e.is_finite(), "{isa:?} {p:?}: {g:?} vs {r}");
                worst = worst.max(e);
            }
        }
        worst
    }

    fn tolerance(p: &GaussianParams) -> f64 {
        if p.sigma_x.max(p.sigma_y) >= IIR_MIN_SIGMA {
            1e-3
        } else {
            1e-5
        }
    }

    fn check<T: Sample>(w: usize, h: usize, c: usize, p: &GaussianParams, seed: u64) {
        let img = random::<T>(w, h, c, seed);
        let e = max_error(&img, p);
        assert!(
            e <= tolerance(p),
            "{w}x{h}x{c} {}: {p:?}: error {e:.2e}",
            T::TYPE
        );
    }

    fn check_any(t: usize, w: usize, h: usize, c: usize, p: &GaussianParams, seed: u64) {
        match t % 3 {
            0 => check::<u8>(w, h, c, p, seed),
            1 => check::<u16>(w, h, c, p, seed),
            _ => check::<f32>(w, h, c, p, seed),
        }
    }

    #[test]
    fn matches_the_reference_for_every_size_and_sigma() {
        let mut i = 0;
        for (w, h) in SIZES {
            for s in SIGMAS {
                for border in [Border::Replicate, Border::Mirror] {
                    // Rotate types and channels; 1000 only on one channel (the
                    // reference is O(sigma) per sample).
                    let c = if s > 100.0 { 1 } else { [1, 3, 4][i % 3] };
                    check_any(i / 3, w, h, c, &params(s, s, border), i as u64);
                    i += 1;
                }
            }
        }
    }

    #[test]
    fn matches_the_reference_for_every_type_channel_count_and_sigma_pair() {
        let pairs = [
            (0.0, 2.5),
            (2.5, 0.0),
            (0.3, 7.0),
            (7.0, 0.8),
            (1.0, 40.0),
            (40.0, 1.0),
            (0.3, 0.8),
            (0.8, 0.0),
            (2.5, 7.0),
        ];
        let mut i = 0;
        for (sx, sy) in pairs {
            for border in [Border::Replicate, Border::Mirror] {
                for c in [1, 3, 4] {
                    for t in 0..3 {
                        let (w, h) = [(13, 11), (31, 17), (7, 1), (1, 7)][i % 4];
                        check_any(t, w, h, c, &params(sx, sy, border), i as u64);
                        i += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn both_forms_meet_the_limit_around_the_switch() {
        // Biquads up to BIQUAD_MAX_SIGMA, complex sections above: long
        // lines (rounding accumulates over them) on both sides.
        let below = BIQUAD_MAX_SIGMA as f32;
        let above = below + 0.5;
        assert!(Iir::new(below as f64).bq.is_some() && Iir::new(above as f64).bq.is_none());
        for s in [below, above] {
            for border in [Border::Replicate, Border::Mirror] {
                check::<f32>(700, 3, 1, &params(s, 0.0, border), 11);
                check::<u16>(5, 600, 4, &params(0.0, s, border), 12);
            }
        }
    }

    #[test]
    fn matches_the_reference_across_blocks_strips_and_tasks() {
        // Wide enough for several blocks and tasks and every strip width.
        for (w, h, c) in [(300, 50, 3), (45, 170, 4), (531, 9, 1)] {
            for border in [Border::Replicate, Border::Mirror] {
                check::<f32>(w, h, c, &params(2.5, 4.0, border), (w * h) as u64);
                check::<u8>(w, h, c, &params(0.6, 1.5, border), (w + h) as u64);
            }
        }
    }

    #[test]
    fn bands_and_segments_do_not_show() {
        // Tall images split into several bands and segments (warm-ups from
        // zero states), under different thread counts.
        for threads in [1, 3, 7] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                for border in [Border::Replicate, Border::Mirror] {
                    check::<f32>(40, 700, 1, &params(2.0, 2.0, border), threads as u64);
                    check::<u16>(17, 300, 4, &params(1.5, 3.0, border), 5 + threads as u64);
                    check::<u8>(9, 400, 3, &params(0.0, 1.0, border), 9 + threads as u64);
                }
            });
        }
    }

    #[test]
    fn constant_images_pass_unchanged() {
        fn run<T: Sample>(v: f32) {
            for (i, (w, h)) in SIZES.into_iter().chain([(40, 3), (3, 300)]).enumerate() {
                for (k, s) in SIGMAS.into_iter().chain([10_000.0]).enumerate() {
                    let c = [1, 3, 4][(i + k) % 3];
                    let img = Image::<T>::from_fn(w, h, c, |_, _, _| T::from_f32(v)).unwrap();
                    {
                        for border in [Border::Replicate, Border::Mirror] {
                            for p in [params(s, s, border), params(s, 1.5, border)] {
                                for isa in Isa::all() {
                                    let out = gaussian_with(&img, &p, isa).unwrap();
                                    for g in out.rows().flatten() {
                                        let ok = if T::TYPE == SampleType::F32 {
                                            (g.to_f32() - v).abs() <= 1e-6 * v
                                        } else {
                                            g.to_f32() == v
                                        };
                                        assert!(
                                            ok,
                                            "{w}x{h}x{c} {} {p:?} {isa:?}: {g:?} != {v}",
                                            T::TYPE
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        run::<u8>(201.0);
        run::<u16>(51_234.0);
        run::<f32>(0.737);
    }

    #[test]
    fn long_constant_lines_stay_exact() {
        // Where f32 recursions reach their steady state: thousands of samples
        // at sigma 1000 (each line's level is subtracted, so nothing drifts).
        for (w, h) in [(1, 40_000), (40_000, 1), (3, 9_000)] {
            for border in [Border::Replicate, Border::Mirror] {
                let p = params(1000.0, 1000.0, border);
                let img = Image::<u16>::from_fn(w, h, 3, |_, _, c| [65535, 40001, 3][c]).unwrap();
                assert_eq!(gaussian(&img, &p).unwrap(), img, "{w}x{h} {border:?}");
                let img = Image::<f32>::from_fn(w, h, 1, |_, _, _| 1.0e6).unwrap();
                assert_eq!(gaussian(&img, &p).unwrap(), img, "{w}x{h} {border:?}");
            }
        }
    }

    #[test]
    fn into_a_kept_destination_gives_the_same_result() {
        let img = random::<u16>(37, 29, 3, 21);
        let p = params(2.5, 40.0, Border::Mirror);
        let want = gaussian(&img, &p).unwrap();
        // Packed, reused twice (stale contents must not show), and padded.
        let mut dst = random::<u16>(37, 29, 3, 22);
        for _ in 0..2 {
            gaussian_into(&img, &p, &mut dst).unwrap();
            assert_eq!(dst, want);
        }
        let mut padded = Image::from_vec_with_stride(37, 29, 3, 120, vec![9u16; 29 * 120]).unwrap();
        gaussian_into(&img, &p, &mut padded).unwrap();
        assert!(padded.rows().eq(want.rows()));
        // A copy (both sigmas 0) too.
        let copy = params(0.0, 0.0, Border::Replicate);
        gaussian_into(&img, &copy, &mut dst).unwrap();
        assert_eq!(dst, img);
        // The wrong size or channel count is an error, and dst is untouched.
        for (w, h, c) in [(36, 29, 3), (37, 30, 3), (37, 29, 4)] {
            let mut bad = Image::<u16>::from_fn(w, h, c, |_, _, _| 7).unwrap();
            let e = gaussian_into(&img, &p, &mut bad).unwrap_err();
            assert!(e.to_string().contains("destination"), "{e}");
            assert!(bad.rows().flatten().all(|v| *v == 7));
        }
    }

    #[test]
    fn padded_rows_give_the_same_result() {
        let img = random::<u16>(19, 13, 3, 5);
        let mut data = vec![7u16; 13 * 61];
        for y in 0..13 {
            data[y * 61..y * 61 + 57].copy_from_slice(img.row(y));
        }
        let padded = Image::from_vec_with_stride(19, 13, 3, 61, data).unwrap();
        for p in [
            params(2.0, 3.0, Border::Mirror),
            params(0.5, 0.0, Border::Replicate),
            params(0.0, 0.0, Border::Mirror),
        ] {
            assert_eq!(gaussian(&img, &p).unwrap(), gaussian(&padded, &p).unwrap());
        }
    }

    #[test]
    fn huge_sigma_on_long_lines_stays_accurate() {
        // Far beyond the image and the reference's reach: compare with Deriche in f64.
        for border in [Border::Replicate, Border::Mirror] {
            let img = random::<f32>(1, 3000, 1, 9);
            let p = params(0.0, 10_000.0, border);
            let got = gaussian(&img, &p).unwrap();
            let x: Vec<f64> = img.rows().flatten().map(|v| *v as f64).collect();
            let want = deriche_f64(&x, 10_000.0, border);
            let e = got
                .rows()
                .flatten()
                .zip(&want)
                .map(|(a, b)| (*a as f64 - b).abs())
                .fold(0.0, f64::max);
            assert!(e < 1e-4, "{border:?}: {e:.2e}");
        }
    }

    /// Deriche's filter in f64 on the explicitly extended line (for mirror:
    /// enough periods that the rest is negligible... or all of it for replicate).
    fn deriche_f64(x: &[f64], sigma: f64, border: Border) -> Vec<f64> {
        let n = x.len() as i64;
        let pad = 40 * sigma as i64;
        let ext: Vec<f64> = (-pad..n + pad)
            .map(|i| x[source_index(i, n, border)])
            .collect();
        let d = Deriche::new(sigma);
        let mut line = ext.clone();
        let mut tmp = vec![0.0; line.len()];
        d.filter_line_f64(&mut line, &mut tmp);
        line[pad as usize..(pad + n) as usize].to_vec()
    }

    #[test]
    fn accuracy_summary() {
        // Not a limit test: prints the measured errors for the record.
        for s in [0.3f32, 0.8, 1.0, 2.0, 2.5, 7.0, 16.0, 40.0] {
            for border in [Border::Replicate, Border::Mirror] {
                let img = random::<f32>(64, 48, 1, 3);
                let e = max_error(&img, &params(s, s, border));
                eprintln!("sigma {s:>5} {border:?}: max |cpu - reference| = {e:.2e} of full scale");
            }
        }
    }
}
