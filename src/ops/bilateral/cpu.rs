//! The rayon bilateral filter.
//!
//! Each rayon task owns a band of 16 output rows (`BAND_ROWS`). It copies the
//! rows the band reads (`radius` more above and below, `radius` columns more
//! on each side, the border applied) into f32 colour planes, so the tap loop
//! reads without index checks for borders and without deinterleaving. Then,
//! row by row and strip by strip of columns ([`Simd::strips`]: 16 or 8 lanes
//! per vector, two vectors per strip), it walks the disk's taps: per tap and
//! lane, the colour distance (`CC` fused multiply-adds), one
//! [`exp2_nonpositive`] of `log2 e · (d² · -k_r + log w_s)` (the spatial
//! weight folded into the exponent, `log2 e` into both coefficients), and
//! `CC + 1` accumulations. The centre's weight is exactly 1, so the sum of
//! weights is never below 1.
//!
//! `exp2_nonpositive` is within 5e-7 (relative), the exponent within a few
//! 1e-7 of itself, and the sums are f32 over at most 3,209 positive
//! weights: a relative error `e` in every weight moves a mean by at most
//! `2e` of the window's range, so every result is within about 1e-5 of
//! full scale of the f64 reference, ten times inside the exact bound.
//!
//! f32 samples scale each difference by `sqrt(log2 e · k_r)` before
//! squaring it (`CC` more multiplies; the exponent is then `log w_s - d²`):
//! squared as they are, differences of f32 samples overflow from 2^64, and
//! `k_r` overflows or underflows for a `sigma_r` far from 1. Integer
//! differences are below 65536, so they square exactly.

use std::f64::consts::LOG2_E;

use rayon::prelude::*;

use super::BilateralParams;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::gaussian::reference::source_index;
use crate::simd::{self, exp2_nonpositive, Simd, Strips, Vf32, WithSimd};

/// Output rows per rayon task: the band re-reads `2 radius` rows, so it
/// should be tall; 2160 rows give 135 tasks, plenty for load balance.
const BAND_ROWS: usize = 16;

/// The filter of `img` (see the module docs of [`super`]).
pub fn bilateral<T: Sample>(img: &Image<T>, p: &BilateralParams) -> Result<Image<T>> {
    p.validate()?;
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let mut out = Image::<T>::new(w, h, c)?;
    let setup = Setup::new(img, p);
    let dst = out
        .as_packed_mut()
        .ok_or_else(|| Error::arg("a new image is packed"))?;
    dst.par_chunks_mut(BAND_ROWS * w * c)
        .enumerate()
        .for_each_init(Scratch::default, |scratch, (b, rows)| {
            match T::TYPE {
                SampleType::F32 => setup.band::<T, true>(img, b * BAND_ROWS, rows, scratch),
                _ => setup.band::<T, false>(img, b * BAND_ROWS, rows, scratch),
            }
        });
    Ok(out)
}

/// What every band shares.
struct Setup {
    /// Each tap's offset in the padded planes (from the centre) and its
    /// spatial weight's base-2 log.
    taps: Vec<(isize, f32)>,
    /// f32 samples: `sqrt(log2 e / (2 sigma_r²))` in sample units
    /// (differences times this, squared, are the range weight's base-2
    /// exponent); integers: `log2 e / (2 sigma_r²)`. At most `f32::MAX`,
    /// so a zero difference weighs 1, never NaN.
    rk: f32,
    /// The radius.
    r: usize,
    /// The padded planes' width.
    pw: usize,
    /// The source column of each padded column.
    xmap: Vec<usize>,
    border: super::Border,
}

/// A task's buffers, kept from band to band.
#[derive(Default)]
struct Scratch {
    /// Colour planes of the band's padded rows, one after another.
    planes: Vec<f32>,
    /// One output row, per colour.
    res: Vec<f32>,
}

impl Setup {
    fn new<T: Sample>(img: &Image<T>, p: &BilateralParams) -> Self {
        let r = p.radius();
        let pw = img.width() + 2 * r;
        let taps = p
            .taps()
            .iter()
            .map(|t| {
                let off = t.dy as isize * pw as isize + t.dx as isize;
                (off, (f64::from(t.log_weight) * LOG2_E) as f32)
            })
            .collect();
        let xmap = (0..pw)
            .map(|x| source_index(x as i64 - r as i64, img.width() as i64, p.border))
            .collect();
        Setup {
            taps,
            rk: match T::TYPE {
                SampleType::F32 => f64::from(p.range_scale(T::TYPE.full_scale())) * LOG2_E.sqrt(),
                _ => f64::from(p.range_coefficient(T::TYPE.full_scale())) * LOG2_E,
            }
            .min(f64::from(f32::MAX)) as f32,
            r,
            pw,
            xmap,
            border: p.border,
        }
    }

    /// Filters the output rows `y0..` that `dst` holds; `SCALED`: f32
    /// samples (see [`Setup::rk`]).
    fn band<T: Sample, const SCALED: bool>(
        &self,
        img: &Image<T>,
        y0: usize,
        dst: &mut [T],
        s: &mut Scratch,
    ) {
        let (w, c) = (img.width(), img.channels());
        let rows = dst.len() / (w * c);
        let colours = c.min(3);
        let ph = rows + 2 * self.r;
        let plane = ph * self.pw;
        s.planes.resize(colours * plane, 0.0);
        s.res.resize(colours * w, 0.0);
        for py in 0..ph {
            let sy = source_index(
                (y0 + py) as i64 - self.r as i64,
                img.height() as i64,
                self.border,
            );
            let src = img.row(sy);
            for ch in 0..colours {
                let line = &mut s.planes[ch * plane + py * self.pw..][..self.pw];
                for (d, &sx) in line.iter_mut().zip(&self.xmap) {
                    *d = src[sx * c + ch].to_f32();
                }
            }
        }
        for (yy, out) in dst.chunks_exact_mut(w * c).enumerate() {
            let base = (yy + self.r) * self.pw + self.r;
            let planes = &s.planes;
            let res = &mut s.res;
            match colours {
                1 => simd::dispatch(RowOp::<1, SCALED> {
                    planes: [&planes[..plane]],
                    res: [&mut res[..w]],
                    taps: &self.taps,
                    rk: self.rk,
                    base,
                }),
                _ => {
                    let (p0, rest) = planes.split_at(plane);
                    let (p1, p2) = rest.split_at(plane);
                    let (r0, rest) = res.split_at_mut(w);
                    let (r1, r2) = rest.split_at_mut(w);
                    simd::dispatch(RowOp::<3, SCALED> {
                        planes: [p0, p1, &p2[..plane]],
                        res: [r0, r1, &mut r2[..w]],
                        taps: &self.taps,
                        rk: self.rk,
                        base,
                    })
                }
            }
            let src = img.row(y0 + yy);
            for (x, px) in out.chunks_exact_mut(c).enumerate() {
                for (ch, v) in px.iter_mut().enumerate().take(colours) {
                    *v = T::from_f32(s.res[ch * w + x]);
                }
                if c == 4 {
                    // Alpha passes through.
                    px[3] = src[x * c + 3];
                }
            }
        }
    }
}

/// One output row of `CC` colours: [`Simd::strips`] over its columns;
/// `SCALED`: differences scaled before squaring (f32 samples).
struct RowOp<'a, const CC: usize, const SCALED: bool> {
    /// The band's padded colour planes.
    planes: [&'a [f32]; CC],
    /// The row's results, per colour.
    res: [&'a mut [f32]; CC],
    taps: &'a [(isize, f32)],
    rk: f32,
    /// The planes' index of the row's column 0.
    base: usize,
}

impl<const CC: usize, const SCALED: bool> WithSimd for RowOp<'_, CC, SCALED> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(mut self, simd: S) {
        let m = self.res[0].len();
        simd.strips(m, &mut self);
    }
}

impl<const CC: usize, const SCALED: bool> Strips for RowOp<'_, CC, SCALED> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
        let zero = V::splat(t, 0.0);
        let c0 = self.base + j;
        let mut centre = [[zero; CC]; K];
        for (k, cen) in centre.iter_mut().enumerate() {
            for (v, plane) in cen.iter_mut().zip(&self.planes) {
                *v = V::load(t, &plane[c0 + k * V::N..]);
            }
        }
        let mut acc = [[zero; CC]; K];
        let mut wsum = [zero; K];
        let rk = V::splat(t, self.rk);
        let nrk = V::splat(t, -self.rk);
        for &(off, lw) in self.taps {
            let i = c0.wrapping_add_signed(off);
            // One bounds check per plane and tap; the loads below index
            // within the window by constants.
            // (No closure: it would not inherit the target features.)
            let mut win: [&[f32]; CC] = [&[]; CC];
            for (w, p) in win.iter_mut().zip(&self.planes) {
                *w = &p[i..i + K * V::N];
            }
            let lw = V::splat(t, lw);
            for k in 0..K {
                let mut n = [zero; CC];
                let mut d2 = zero;
                for ch in 0..CC {
                    n[ch] = V::load(t, &win[ch][k * V::N..]);
                    let d = n[ch].sub(centre[k][ch]);
                    let d = if SCALED { d.mul(rk) } else { d };
                    d2 = d.fma(d, d2);
                }
                let e = if SCALED { lw.sub(d2) } else { d2.fma(nrk, lw) };
                let wt = exp2_nonpositive(t, e);
                wsum[k] = wsum[k].add(wt);
                for ch in 0..CC {
                    acc[k][ch] = wt.fma(n[ch], acc[k][ch]);
                }
            }
        }
        for (k, (acc, ws)) in acc.iter().zip(wsum).enumerate() {
            for (a, res) in acc.iter().zip(self.res.iter_mut()) {
                a.div(ws).store(&mut res[j + k * V::N..]);
            }
        }
    }
}
