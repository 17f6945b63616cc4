//! The rayon Gaussian: two separable passes over f32 work blocks that stay in
//! a core's L2 cache.
//!
//! * The vertical pass (sigma_y) splits the image into column blocks. Each
//!   block (`n` rows x `m` samples) is copied into a contiguous f32 buffer,
//!   filtered down its columns, and written back; columns are independent
//!   signals, so channels need no special care.
//! * The horizontal pass (sigma_x) takes bands of rows, transposes each band
//!   into the same kind of block (`width` rows x `rows * channels` samples),
//!   filters it with the same code, and transposes it back.
//!
//! Filtering a block walks down its rows with the filter state of
//! a strip of adjacent columns held in registers, so the recursion
//! vectorises across columns. Deriche's filter runs as two complex
//! first-order sections ([`coeffs`](super::coeffs)) in f32. The causal pass
//! emits `Re(a p w[n-1])` (the causal half without its centre tap) and the
//! anticausal pass runs the same recursion backwards, `v[n] = x[n] + p v[n+1]`,
//! and adds `Re(a v[n])`, which puts the centre tap back. Both start from the
//! exact response to the infinitely extended border: the replicated edge
//! value (`x / (1 - p)`), or for mirror borders the closed-form sum over the
//! periodic extension, computed in f64. Below [`IIR_MIN_SIGMA`] an axis uses
//! the exact FIR of the reference instead.
//!
//! f32 images are filtered in place in the output (vertical pass from the
//! input into the output, horizontal pass within the output); u8/u16 go
//! through one f32 intermediate. The conversion to f32 is fused into the
//! first pass's load and the rounding into the last pass's store.

use rayon::prelude::*;

use super::coeffs::Deriche;
use super::reference::{source_index, taps};
use super::{Border, GaussianParams, IIR_MIN_SIGMA};
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};

/// Bytes of a task's two f32 block buffers together (the block and its
/// result), chosen so both stay in a core's L2 cache.
const BLOCK_BYTES: usize = 1 << 20;

/// Widest block, in samples.
const MAX_BLOCK: usize = 256;

/// Rayon tasks per thread, for load balance.
const TASKS_PER_THREAD: usize = 4;

/// Blurs `img` on the host's cores. The caller has validated `p`.
pub fn gaussian<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Result<Image<T>> {
    gaussian_with(img, p, Isa::detect())
}

fn gaussian_with<T: Sample>(img: &Image<T>, p: &GaussianParams, isa: Isa) -> Result<Image<T>> {
    match img.channels() {
        1 => run::<T, 1>(img, p, isa),
        3 => run::<T, 3>(img, p, isa),
        _ => run::<T, 4>(img, p, isa),
    }
}

fn run<T: Sample, const C: usize>(
    img: &Image<T>,
    p: &GaussianParams,
    isa: Isa,
) -> Result<Image<T>> {
    let (w, h) = (img.width(), img.height());
    let fx = Axis::new(p.sigma_x, p.border);
    let fy = Axis::new(p.sigma_y, p.border);
    let src = Rows::of(img);
    let mut out = new_buffer::<T>(w * h * C);
    match (matches!(fy, Axis::Copy), matches!(fx, Axis::Copy)) {
        (true, true) => {
            out.par_chunks_mut(w * C)
                .enumerate()
                .for_each(|(y, row)| row.copy_from_slice(img.row(y)));
        }
        (false, true) => vertical(isa, &src, &mut out, w * C, h, &fy),
        (true, false) => horizontal::<T, T, C>(isa, Some(&src), &mut out, w, &fx),
        (false, false) => {
            if T::TYPE == SampleType::F32 {
                // f32 keeps the intermediate exactly: filter in place.
                vertical(isa, &src, &mut out, w * C, h, &fy);
                horizontal::<f32, T, C>(isa, None, &mut out, w, &fx);
            } else {
                let mut mid = new_buffer::<f32>(w * h * C);
                vertical(isa, &src, &mut mid, w * C, h, &fy);
                let mid = Rows {
                    data: &mid,
                    stride: w * C,
                    len: w * C,
                };
                horizontal::<f32, T, C>(isa, Some(&mid), &mut out, w, &fx);
            }
        }
    }
    Image::from_vec(w, h, C, out)
}

/// A zeroed buffer for a whole image. Large ones are backed by transparent
/// huge pages where the kernel offers them on request: first-touch page
/// faults on 4 KiB pages otherwise cost about as much as the filter itself.
fn new_buffer<T: Sample>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    advise_huge_pages(&mut v);
    v
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn advise_huge_pages<T>(buf: &mut [T]) {
    use std::ffi::{c_int, c_void};
    unsafe extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
    const MADV_HUGEPAGE: c_int = 14;
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let (a, b) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if b >= a + 2 * HUGE {
        // SAFETY: [a, b) lies inside `buf`, which we own; MADV_HUGEPAGE is
        // advice about backing pages and never changes the memory's contents.
        // Failure (no THP support) only means the advice is not taken.
        unsafe {
            madvise(a as *mut c_void, b - a, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn advise_huge_pages<T>(_: &mut [T]) {}

/// Read-only rows of samples, `stride` apart.
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
    fn new(sigma: f32, border: Border) -> Axis {
        if sigma <= 0.0 {
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

/// Deriche's sections as the f32 kernels run them.
#[derive(Debug, Clone, Copy)]
struct Iir {
    /// Poles `p` (re, im) of the two sections.
    p: [[f32; 2]; 2],
    /// Anticausal output weights `a`.
    a: [[f32; 2]; 2],
    /// Causal output weights `a p` (applied to the state before the update).
    b: [[f32; 2]; 2],
    /// `1 / (1 - p)`: the state per unit of a constant input.
    ci: [[f32; 2]; 2],
    /// The f32 poles, exactly, in f64.
    p64: [Cx; 2],
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
        let f = |c: Cx| [c.0 as f32, c.1 as f32];
        Iir {
            p: p64.map(f),
            a: a64.map(f),
            b: [f(cmul(a64[0], p64[0])), f(cmul(a64[1], p64[1]))],
            ci: ci64.map(f),
            p64,
        }
    }
}

/// Per-task scratch besides the block buffers.
#[derive(Default)]
struct Scratch {
    /// Start states, 8 rows of `m`: causal (s0.re, s0.im, s1.re, s1.im), then anticausal.
    init: Vec<f32>,
    /// f64 sums for the mirror border's start states.
    acc: Vec<f64>,
}

/// Start states of a block for `border`: see [`Scratch::init`].
fn iir_init(c: &Iir, border: Border, x: &[f32], n: usize, m: usize, s: &mut Scratch) {
    s.init.resize(8 * m, 0.0);
    let init = &mut s.init[..8 * m];
    let (first, last) = (&x[..m], &x[(n - 1) * m..n * m]);
    match border {
        Border::Replicate => {
            for k in 0..2 {
                let [cr, ci] = c.ci[k];
                let (fw, bw) = init.split_at_mut(4 * m);
                for j in 0..m {
                    fw[2 * k * m + j] = first[j] * cr;
                    fw[(2 * k + 1) * m + j] = first[j] * ci;
                    bw[2 * k * m + j] = last[j] * cr;
                    bw[(2 * k + 1) * m + j] = last[j] * ci;
                }
            }
        }
        Border::Mirror => {
            // The causal pass sees x[0], x[1], .., x[n-1], x[n-1], .., x[0],
            // x[0], .. to its left (period 2n), so its start state is
            // sum_m p^m ext[m] = (F + p^n B) / (1 - p^2n), with
            // F = sum_{m<n} p^m x[m] and B = sum_{m<n} p^m x[n-1-m]. The
            // anticausal pass sees x[n-1], .., x[0], x[0], .. to its right:
            // (B + p^n F) / (1 - p^2n). Terms below 1e-10 are dropped.
            s.acc.resize(4 * m, 0.0);
            for k in 0..2 {
                let p = c.p64[k];
                let r = (p.0 * p.0 + p.1 * p.1).sqrt();
                let terms = ((1e-10f64).ln() / r.ln()).ceil();
                let terms = if terms.is_finite() && terms < n as f64 {
                    terms as usize
                } else {
                    n
                };
                let acc = &mut s.acc[..4 * m];
                acc.fill(0.0);
                let (f, b) = acc.split_at_mut(2 * m);
                let (fr, fi) = f.split_at_mut(m);
                let (br, bi) = b.split_at_mut(m);
                let mut pm: Cx = (1.0, 0.0);
                for t in 0..terms {
                    let xf = &x[t * m..][..m];
                    let xb = &x[(n - 1 - t) * m..][..m];
                    for j in 0..m {
                        let (a, b) = (xf[j] as f64, xb[j] as f64);
                        fr[j] += pm.0 * a;
                        fi[j] += pm.1 * a;
                        br[j] += pm.0 * b;
                        bi[j] += pm.1 * b;
                    }
                    pm = cmul(pm, p);
                }
                // p^n from the polar form; 1 - p^2n is well conditioned in f64.
                let (lr, th) = (r.ln() * n as f64, p.1.atan2(p.0) * n as f64);
                let pn = (lr.exp() * th.cos(), lr.exp() * th.sin());
                let den = {
                    let p2n = cmul(pn, pn);
                    (1.0 - p2n.0, -p2n.1)
                };
                let (fw, bw) = init.split_at_mut(4 * m);
                for j in 0..m {
                    let (fj, bj) = ((fr[j], fi[j]), (br[j], bi[j]));
                    let pb = cmul(pn, bj);
                    let pf = cmul(pn, fj);
                    let ws = cdiv((fj.0 + pb.0, fj.1 + pb.1), den);
                    let vs = cdiv((bj.0 + pf.0, bj.1 + pf.1), den);
                    fw[2 * k * m + j] = ws.0 as f32;
                    fw[(2 * k + 1) * m + j] = ws.1 as f32;
                    bw[2 * k * m + j] = vs.0 as f32;
                    bw[(2 * k + 1) * m + j] = vs.1 as f32;
                }
            }
        }
    }
}

#[inline(always)]
fn fma<const F: bool>(a: f32, b: f32, c: f32) -> f32 {
    if F {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Deriche's filter down `L` adjacent columns `j..j + L` of the block `x`
/// (`n` rows of `m`), result in `y`. The states live in registers.
#[inline(always)]
fn iir_strip<const L: usize, const F: bool>(
    c: &Iir,
    x: &[f32],
    y: &mut [f32],
    m: usize,
    j: usize,
    init: &[f32],
) {
    let ld = |k: usize| -> [f32; L] { init[k * m + j..][..L].try_into().unwrap() };
    let [[p0r, p0i], [p1r, p1i]] = c.p;
    let [[b0r, b0i], [b1r, b1i]] = c.b;
    let [[a0r, a0i], [a1r, a1i]] = c.a;

    // Causal: y[i] = Re(b w[i-1]) summed over the sections; w[i] = x[i] + p w[i-1].
    let (mut w0r, mut w0i, mut w1r, mut w1i) = (ld(0), ld(1), ld(2), ld(3));
    for (xr, yr) in x.chunks_exact(m).zip(y.chunks_exact_mut(m)) {
        let xv: &[f32; L] = xr[j..j + L].try_into().unwrap();
        let yv: &mut [f32; L] = (&mut yr[j..j + L]).try_into().unwrap();
        for l in 0..L {
            let (u0r, u0i, u1r, u1i) = (w0r[l], w0i[l], w1r[l], w1i[l]);
            let o = fma::<F>(
                b0r,
                u0r,
                fma::<F>(-b0i, u0i, fma::<F>(b1r, u1r, -b1i * u1i)),
            );
            yv[l] = o;
            w0r[l] = fma::<F>(p0r, u0r, fma::<F>(-p0i, u0i, xv[l]));
            w0i[l] = fma::<F>(p0r, u0i, p0i * u0r);
            w1r[l] = fma::<F>(p1r, u1r, fma::<F>(-p1i, u1i, xv[l]));
            w1i[l] = fma::<F>(p1r, u1i, p1i * u1r);
        }
    }

    // Anticausal: v[i] = x[i] + p v[i+1]; y[i] += Re(a v[i]).
    let (mut v0r, mut v0i, mut v1r, mut v1i) = (ld(4), ld(5), ld(6), ld(7));
    for (xr, yr) in x.chunks_exact(m).zip(y.chunks_exact_mut(m)).rev() {
        let xv: &[f32; L] = xr[j..j + L].try_into().unwrap();
        let yv: &mut [f32; L] = (&mut yr[j..j + L]).try_into().unwrap();
        for l in 0..L {
            let (u0r, u0i, u1r, u1i) = (v0r[l], v0i[l], v1r[l], v1i[l]);
            let n0r = fma::<F>(p0r, u0r, fma::<F>(-p0i, u0i, xv[l]));
            let n0i = fma::<F>(p0r, u0i, p0i * u0r);
            let n1r = fma::<F>(p1r, u1r, fma::<F>(-p1i, u1i, xv[l]));
            let n1i = fma::<F>(p1r, u1i, p1i * u1r);
            yv[l] = fma::<F>(
                a0r,
                n0r,
                fma::<F>(-a0i, n0i, fma::<F>(a1r, n1r, fma::<F>(-a1i, n1i, yv[l]))),
            );
            (v0r[l], v0i[l], v1r[l], v1i[l]) = (n0r, n0i, n1r, n1i);
        }
    }
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

/// Filters the block `x` (`n` rows of `m`, filled) down its columns into `y`.
#[inline(always)]
fn filter_block<const L: usize, const F: bool>(
    axis: &Axis,
    x: &[f32],
    y: &mut [f32],
    n: usize,
    m: usize,
    s: &mut Scratch,
) {
    match axis {
        Axis::Copy => y.copy_from_slice(x),
        Axis::Fir { taps, border } => fir_block(taps, *border, x, y, n, m),
        Axis::Iir { c, border } => {
            iir_init(c, *border, x, n, m, s);
            let init = &s.init[..8 * m];
            let mut j = 0;
            while j + L <= m {
                iir_strip::<L, F>(c, x, y, m, j, init);
                j += L;
            }
            while j + 8 <= m {
                iir_strip::<8, F>(c, x, y, m, j, init);
                j += 8;
            }
            while j < m {
                iir_strip::<1, F>(c, x, y, m, j, init);
                j += 1;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Passes.

/// Instruction sets with their own compiled kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// The build's baseline.
    Base,
    /// AVX2 + FMA, 16 columns per strip.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512F, 32 columns per strip.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
            {
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
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

/// Whether the baseline has fused multiply-add (aarch64 always does).
const BASE_FMA: bool = cfg!(target_arch = "aarch64") || cfg!(target_feature = "fma");

/// Largest multiple of 8 (at least 8) such that two blocks of `n` rows fit [`BLOCK_BYTES`].
fn block_width(n: usize) -> usize {
    (BLOCK_BYTES / (8 * n)).clamp(8, MAX_BLOCK) / 8 * 8
}

/// The vertical pass: `dst` (packed rows of `row_len`) = `src` filtered down its columns.
fn vertical<S: Sample, D: Sample>(
    isa: Isa,
    src: &Rows<S>,
    dst: &mut [D],
    row_len: usize,
    n: usize,
    axis: &Axis,
) {
    let b = block_width(n).min(row_len);
    let tasks = rayon::current_num_threads() * TASKS_PER_THREAD;
    let tw = row_len.div_ceil(tasks).next_multiple_of(b);
    // Each task owns columns [t * tw, (t + 1) * tw) of every row.
    let mut pieces: Vec<Vec<&mut [D]>> = (0..row_len.div_ceil(tw))
        .map(|_| Vec::with_capacity(n))
        .collect();
    for row in dst.chunks_exact_mut(row_len) {
        for (t, piece) in row.chunks_mut(tw).enumerate() {
            pieces[t].push(piece);
        }
    }
    pieces
        .into_par_iter()
        .enumerate()
        .for_each(|(t, mut rows)| {
            let j0 = t * tw;
            match isa {
                Isa::Base => vertical_task::<S, D, 8, BASE_FMA>(src, &mut rows, j0, b, axis),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: Isa::Avx2 is chosen only where the CPU has AVX2 and FMA.
                Isa::Avx2 => unsafe { avx2::vertical_task(src, &mut rows, j0, b, axis) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: Isa::Avx512 is chosen only where the CPU has AVX-512F, AVX2 and FMA.
                Isa::Avx512 => unsafe { avx512::vertical_task(src, &mut rows, j0, b, axis) },
            }
        });
}

/// One vertical task: columns `j0..j0 + rows[i].len()` of every row, in blocks of `b`.
#[inline(always)]
fn vertical_task<S: Sample, D: Sample, const L: usize, const F: bool>(
    src: &Rows<S>,
    rows: &mut [&mut [D]],
    j0: usize,
    b: usize,
    axis: &Axis,
) {
    let n = rows.len();
    let tw = rows[0].len();
    let cap = n * b.min(tw);
    let (mut xb, mut yb) = (vec![0f32; cap], vec![0f32; cap]);
    let mut s = Scratch::default();
    for jb in (0..tw).step_by(b) {
        let m = b.min(tw - jb);
        let (x, y) = (&mut xb[..n * m], &mut yb[..n * m]);
        for (i, xr) in x.chunks_exact_mut(m).enumerate() {
            for (d, v) in xr.iter_mut().zip(&src.row(i)[j0 + jb..][..m]) {
                *d = v.to_f32();
            }
        }
        filter_block::<L, F>(axis, x, y, n, m, &mut s);
        for (yr, dr) in y.chunks_exact(m).zip(rows.iter_mut()) {
            for (d, v) in dr[jb..jb + m].iter_mut().zip(yr) {
                *d = D::from_f32(*v);
            }
        }
    }
}

/// Rows per band of the horizontal pass: two blocks of `width` x `rows * C`
/// fit [`BLOCK_BYTES`]; at least 8 (so RGB bands are a multiple of 8 wide)
/// when that fits, and at most [`MAX_BLOCK`] samples wide.
fn band_rows(width: usize, c: usize) -> usize {
    let r = (BLOCK_BYTES / (8 * width * c)).clamp(1, MAX_BLOCK / c);
    if r >= 8 {
        r / 8 * 8
    } else {
        r
    }
}

/// The horizontal pass: `dst` (packed rows of `width * C`) = the rows of
/// `src`, or of `dst` itself when `src` is `None`, filtered along x.
fn horizontal<S: Sample, D: Sample, const C: usize>(
    isa: Isa,
    src: Option<&Rows<S>>,
    dst: &mut [D],
    width: usize,
    axis: &Axis,
) {
    let row_len = width * C;
    let h = dst.len() / row_len;
    let r = band_rows(width, C).min(h);
    let tasks = rayon::current_num_threads() * TASKS_PER_THREAD;
    let rows_per_task = h.div_ceil(tasks).next_multiple_of(r);
    dst.par_chunks_mut(rows_per_task * row_len)
        .enumerate()
        .for_each(|(t, chunk)| {
            let y0 = t * rows_per_task;
            match isa {
                Isa::Base => {
                    horizontal_task::<S, D, C, 8, BASE_FMA>(src, chunk, y0, width, r, axis)
                }
                #[cfg(target_arch = "x86_64")]
                // SAFETY: Isa::Avx2 is chosen only where the CPU has AVX2 and FMA.
                Isa::Avx2 => unsafe {
                    avx2::horizontal_task::<S, D, C>(src, chunk, y0, width, r, axis)
                },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: Isa::Avx512 is chosen only where the CPU has AVX-512F, AVX2 and FMA.
                Isa::Avx512 => unsafe {
                    avx512::horizontal_task::<S, D, C>(src, chunk, y0, width, r, axis)
                },
            }
        });
}

/// One horizontal task: the rows of `chunk` (image rows from `y0`), in bands of `r`.
#[inline(always)]
fn horizontal_task<S: Sample, D: Sample, const C: usize, const L: usize, const F: bool>(
    src: Option<&Rows<S>>,
    chunk: &mut [D],
    y0: usize,
    width: usize,
    r: usize,
    axis: &Axis,
) {
    let row_len = width * C;
    let rows = chunk.len() / row_len;
    let cap = width * r.min(rows) * C;
    let (mut xb, mut yb) = (vec![0f32; cap], vec![0f32; cap]);
    let mut s = Scratch::default();
    for b0 in (0..rows).step_by(r) {
        let nr = r.min(rows - b0);
        let m = nr * C;
        let band = &mut chunk[b0 * row_len..(b0 + nr) * row_len];
        let (x, y) = (&mut xb[..width * m], &mut yb[..width * m]);
        for k in 0..nr {
            match src {
                Some(src) => transpose_in::<S, C>(src.row(y0 + b0 + k), x, m, k),
                None => transpose_in::<D, C>(&band[k * row_len..][..row_len], x, m, k),
            }
        }
        filter_block::<L, F>(axis, x, y, width, m, &mut s);
        for (k, dr) in band.chunks_exact_mut(row_len).enumerate() {
            for (px, yr) in dr.chunks_exact_mut(C).zip(y.chunks_exact(m)) {
                for ch in 0..C {
                    px[ch] = D::from_f32(yr[k * C + ch]);
                }
            }
        }
    }
}

/// Row `k` of a band into column group `k` of the block `x` (rows of `m`).
#[inline(always)]
fn transpose_in<S: Sample, const C: usize>(row: &[S], x: &mut [f32], m: usize, k: usize) {
    for (px, xr) in row.chunks_exact(C).zip(x.chunks_exact_mut(m)) {
        for ch in 0..C {
            xr[k * C + ch] = px[ch].to_f32();
        }
    }
}

/// The kernels compiled for one instruction set.
macro_rules! kernels {
    ($module:ident, $features:literal, $lanes:literal) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::*;

            #[target_feature(enable = $features)]
            pub(super) fn vertical_task<S: Sample, D: Sample>(
                src: &Rows<S>,
                rows: &mut [&mut [D]],
                j0: usize,
                b: usize,
                axis: &Axis,
            ) {
                super::vertical_task::<S, D, $lanes, true>(src, rows, j0, b, axis)
            }

            #[target_feature(enable = $features)]
            pub(super) fn horizontal_task<S: Sample, D: Sample, const C: usize>(
                src: Option<&Rows<S>>,
                chunk: &mut [D],
                y0: usize,
                width: usize,
                r: usize,
                axis: &Axis,
            ) {
                super::horizontal_task::<S, D, C, $lanes, true>(src, chunk, y0, width, r, axis)
            }
        }
    };
}

kernels!(avx2, "avx2,fma", 16);
kernels!(avx512, "avx512f,avx2,fma", 32);

#[cfg(test)]
mod tests {
    use super::*;
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
    fn constant_images_pass_unchanged() {
        fn run<T: Sample>(v: f32) {
            for (w, h) in SIZES.into_iter().chain([(40, 3), (3, 300)]) {
                for c in [1, 3, 4] {
                    let img = Image::<T>::from_fn(w, h, c, |_, _, _| T::from_f32(v)).unwrap();
                    for s in SIGMAS.into_iter().chain([10_000.0]) {
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
                let img = random::<f32>(96, 80, 1, 3);
                let e = max_error(&img, &params(s, s, border));
                eprintln!("sigma {s:>5} {border:?}: max |cpu - reference| = {e:.2e} of full scale");
            }
        }
    }
}
