//! Deriche's sections as the f32 kernels run them ([`Iir`], [`Biquad`]),
//! and the start states of both passes at the image's borders.

use super::TAIL;
use crate::image::Sample;
use crate::ops::gaussian::coeffs::{Deriche, BIQUAD_MAX_SIGMA};
use crate::ops::gaussian::Border;

/// A complex number in f64, as (re, im).
pub(super) type Cx = (f64, f64);

pub(super) fn cmul(a: Cx, b: Cx) -> Cx {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

pub(super) fn cdiv(a: Cx, b: Cx) -> Cx {
    let d = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / d, (a.1 * b.0 - a.0 * b.1) / d)
}

/// Rows of `m` floats that hold one direction's states of `m` columns.
pub(super) const STATE_ROWS: usize = 6;

/// Deriche's sections as the f32 kernels run them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Iir {
    /// Poles `p` (re, im) of the two sections.
    pub(super) p: [[f32; 2]; 2],
    /// Anticausal output weights `a`.
    pub(super) a: [[f32; 2]; 2],
    /// Causal output weights `a p` (applied to the state before the update).
    pub(super) b: [[f32; 2]; 2],
    /// The same sections as real biquads, up to [`BIQUAD_MAX_SIGMA`].
    pub(super) bq: Option<Biquad>,
    /// The f32 poles, exactly, and the weights, in f64.
    pub(super) p64: [Cx; 2],
    pub(super) a64: [Cx; 2],
    pub(super) b64: [Cx; 2],
    /// Samples after which the slower section's memory is below [`TAIL`].
    pub(super) memory: usize,
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
pub(super) struct Biquad {
    pub(super) d1: [f32; 2],
    pub(super) d2: [f32; 2],
    pub(super) n1: [f32; 2],
    pub(super) n2: [f32; 2],
    pub(super) m0: [f32; 2],
    pub(super) m1: [f32; 2],
}

impl Iir {
    /// `Deriche::new(sigma)`'s sections, with the poles rounded to f32 first
    /// and the weights renormalised so the filter that actually runs (f32
    /// poles) has a DC gain of exactly 1. At sigma 10000 the rounding of the
    /// poles alone would otherwise change the DC gain by ~3e-4.
    pub(super) fn new(sigma: f64) -> Iir {
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
    pub(super) fn put_state(
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
/// from `refs` (see `Causal::refs`). `n` is at least 2 (a line of one is
/// left as it is).
pub(super) fn border_states<'a, S: Sample + 'a>(
    c: &Iir,
    border: Border,
    (n, m): (usize, usize),
    row: impl Fn(usize) -> &'a [S],
    refs: &[f32],
    states: (Option<&mut [f32]>, Option<&mut [f32]>),
    acc: &mut Vec<f64>,
) {
    let dev = |i: usize, j: usize| (row(i)[j].to_f32() - refs[j]) as f64;
    match border {
        Border::Replicate => replicate_states(c, (n, m), &dev, states),
        Border::Mirror => mirror_states(c, (n, m), &dev, states, acc),
    }
}

/// [`border_states`] for replicate borders; `dev(i, j)` is the deviation
/// of row `i`, column `j`.
fn replicate_states(
    c: &Iir,
    (n, m): (usize, usize),
    dev: &impl Fn(usize, usize) -> f64,
    (fw, bw): (Option<&mut [f32]>, Option<&mut [f32]>),
) {
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

/// [`border_states`] for mirror borders.
///
/// The causal pass sees x[0], x[1], .., x[n-1], x[n-1], .., x[0], x[0], ..
/// to its left (period 2n), so its start state is
/// sum_m p^m ext[m] = (F + p^n B) / (1 - p^2n), with
/// F = sum_{m<n} p^m x[m] and B = sum_{m<n} p^m x[n-1-m]. The
/// anticausal pass sees x[n-1], .., x[0], x[0], .. to its right:
/// (B + p^n F) / (1 - p^2n). Terms below TAIL / 10 are dropped.
fn mirror_states(
    c: &Iir,
    (n, m): (usize, usize),
    dev: &impl Fn(usize, usize) -> f64,
    (mut fw, mut bw): (Option<&mut [f32]>, Option<&mut [f32]>),
    acc: &mut Vec<f64>,
) {
    acc.resize(8 * m, 0.0);
    let acc = &mut acc[..8 * m];
    let (pns, dens) = mirror_sums(c, (n, m), dev, acc);
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

/// The sums F and B of [`mirror_states`] per section `k` and column `j`,
/// into `acc` (rows `4 k..4 k + 4` of `m`: F re, F im, B re, B im), and
/// per section `p^n` and `1 - p^2n`.
fn mirror_sums(
    c: &Iir,
    (n, m): (usize, usize),
    dev: &impl Fn(usize, usize) -> f64,
    acc: &mut [f64],
) -> ([Cx; 2], [Cx; 2]) {
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
    (pns, dens)
}
