//! Deriche's 4th-order recursive Gaussian, as two complex first-order sections.
//!
//! Deriche (1993) approximates the causal half of a Gaussian by
//! `h[n] = c * sum_k alpha_k * p_k^n` (n >= 0) with four poles
//! `p_k = exp(-lambda_k / sigma)` in two conjugate pairs; the anticausal half
//! is its mirror image without the n = 0 tap. Multiplying the four sections
//! out gives the familiar direct form
//! `y[n] = b0 x[n] + .. + b3 x[n-3] - a1 y[n-1] - .. - a4 y[n-4]`, which is the
//! same transfer function, but in f32 its coefficients cancel catastrophically
//! once the poles approach 1 (sigma in the tens and beyond; see the test
//! below). We therefore run the partial-fraction form: per conjugate pair one
//! complex recursion `w[n] = x[n] + p w[n-1]` and output `Re(a w[n])`, where
//! rounding errors grow only linearly with sigma.
//!
//! Coefficients are computed in f64 and normalised so the DC gain is exactly
//! one. Borders start from the steady state of the replicated edge value,
//! which equals filtering an infinitely replicate-padded signal.

/// Deriche's optimised K = 4 parameters (alpha, lambda) for the two pole pairs
/// we keep; the other two are their complex conjugates.
const ALPHA: [(f64, f64); 2] = [(0.84, 1.8675), (-0.34015, -0.1299)];
const LAMBDA: [(f64, f64); 2] = [(1.783, 0.6318), (1.723, 1.997)];

pub use super::policy::BIQUAD_MAX_SIGMA;

/// Length of [`Deriche::tile_biquads`]' and [`Deriche::tile_deltas`]' tables.
pub const TILE_BIQUAD_LEN: usize = line::LEN;

/// Where each field of a tile-line table ([`Deriche::tile_biquads`],
/// [`Deriche::tile_deltas`]) starts; each field holds (section 0,
/// section 1) unless said otherwise. The kernels get these as `-DBQ_*`
/// ([`FIELDS`](line::FIELDS)).
pub mod line {
    /// The first feedback coefficient: `d1` (biquads), `e1` (delta form).
    pub const D1: usize = 0;
    /// The second feedback coefficient: `d2` (biquads), `g` (delta form).
    pub const D2: usize = 2;
    /// The causal feed-forward `n0`.
    pub const N0: usize = 4;
    /// The causal feed-forward `n1`.
    pub const N1: usize = 6;
    /// The anticausal feed-forward `m0`.
    pub const M0: usize = 8;
    /// The anticausal feed-forward `m1`.
    pub const M1: usize = 10;
    /// A line's first value (or step) from a complex state: (re0, im0,
    /// re1, im1).
    pub const B: usize = 12;
    /// The two sections' 2x2 inverses, row-major, 4 values each.
    pub const INV: usize = 16;
    /// `Re(a / p)`.
    pub const CR: usize = 24;
    /// The table's length.
    pub const LEN: usize = 26;
    /// The `.cl` names of the fields, as build options pass them.
    pub const FIELDS: &[(&str, usize)] = &[
        ("BQ_D1", D1),
        ("BQ_D2", D2),
        ("BQ_N0", N0),
        ("BQ_N1", N1),
        ("BQ_M0", M0),
        ("BQ_M1", M1),
        ("BQ_B", B),
        ("BQ_INV", INV),
        ("BQ_CR", CR),
        ("BQ_LEN", LEN),
    ];
}

/// A complex number (re, im) in f64.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct C64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl C64 {
    fn new(re: f64, im: f64) -> Self {
        C64 { re, im }
    }
    fn mul(self, o: C64) -> C64 {
        C64::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
    fn div(self, o: C64) -> C64 {
        let d = o.re * o.re + o.im * o.im;
        C64::new(
            (self.re * o.re + self.im * o.im) / d,
            (self.im * o.re - self.re * o.im) / d,
        )
    }
    fn scale(self, s: f64) -> C64 {
        C64::new(self.re * s, self.im * s)
    }
}

/// One complex first-order section of the filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Section {
    /// The pole `p`: causal `w[n] = x[n] + p w[n-1]`, anticausal
    /// `v[n] = p (x[n+1] + v[n+1])`.
    pub pole: C64,
    /// Output weight: the section adds `Re(weight * (w[n] + v[n]))`. It folds
    /// in the conjugate section and the normalisation.
    pub weight: C64,
    /// Causal steady state for a constant input `x`: `w = x * causal_init`.
    pub causal_init: C64,
    /// Anticausal steady state for a constant input `x`: `v = x * anti_init`.
    pub anti_init: C64,
}

/// The filter for one sigma: two sections whose outputs add up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deriche {
    /// The sigma these coefficients are for.
    pub sigma: f64,
    /// The two sections.
    pub sections: [Section; 2],
}

impl Deriche {
    /// Coefficients for `sigma` (> 0; callers validate the range).
    pub fn new(sigma: f64) -> Self {
        let poles = LAMBDA.map(|(lr, li)| {
            // p = exp(-(lr + i li) / sigma)
            let m = (-lr / sigma).exp();
            C64::new(m * (li / sigma).cos(), -m * (li / sigma).sin())
        });
        let one = C64::new(1.0, 0.0);
        // DC gain of alpha/(1 - p z^-1) summed with its anticausal mirror
        // p/(1 - p): alpha (1 + p) / (1 - p); conjugate sections double the real part.
        let dc: f64 = (0..2)
            .map(|k| {
                let a = C64::new(ALPHA[k].0, ALPHA[k].1);
                let p = poles[k];
                2.0 * a
                    .mul(C64::new(1.0 + p.re, p.im))
                    .div(C64::new(1.0 - p.re, -p.im))
                    .re
            })
            .sum();
        let sections = [0, 1].map(|k| {
            let p = poles[k];
            let one_minus_p = C64::new(1.0 - p.re, -p.im);
            Section {
                pole: p,
                weight: C64::new(ALPHA[k].0, ALPHA[k].1).scale(2.0 / dc),
                causal_init: one.div(one_minus_p),
                anti_init: p.div(one_minus_p),
            }
        });
        Deriche { sigma, sections }
    }

    /// The sections as four float4 kernel arguments:
    /// poles `(p0.re, p0.im, p1.re, p1.im)`, weights, causal and anticausal inits.
    pub fn kernel_args(&self) -> [[f32; 4]; 4] {
        let pack = |f: fn(&Section) -> C64| {
            let (a, b) = (f(&self.sections[0]), f(&self.sections[1]));
            [a.re as f32, a.im as f32, b.re as f32, b.im as f32]
        };
        [
            pack(|s| s.pole),
            pack(|s| s.weight),
            pack(|s| s.causal_init),
            pack(|s| s.anti_init),
        ]
    }

    /// `p^n` for both sections' poles, packed as `(re0, im0, re1, im1)`:
    /// the factor that carries a state across `n` samples (block-parallel
    /// filtering). Computed from `lambda` directly, not by repeated products.
    pub fn pole_power_args(&self, n: usize) -> [f32; 4] {
        let pw = |k: usize| {
            let (lr, li) = LAMBDA[k];
            let m = (-(n as f64) * lr / self.sigma).exp();
            let a = n as f64 * li / self.sigma;
            (m * a.cos(), -m * a.sin())
        };
        let (a, b) = (pw(0), pw(1));
        [a.0 as f32, a.1 as f32, b.0 as f32, b.1 as f32]
    }

    /// Tables for `iir_tiles`' fix-up pass (`gaussian_iir_tiles_fix`) over tiles of
    /// `n` samples, in the block sums' order of states `k` (w0 re, w0 im,
    /// w1 re, w1 im, v0 re, v0 im, v1 re, v1 im; w causal, v anticausal):
    /// - `8 * n` sum weights, `[k * n + j]`: what sample `j` adds to the
    ///   tile's zero-state sum `k` (causal: `p^(n-1-j)`, anticausal:
    ///   `p^(j+1)`, the real or imaginary part),
    /// - `8 * n` state weights, `[k * n + m]`: what incoming state `k` adds
    ///   to the output at sample `m` (`Re(a p^(m+1) state)` causal,
    ///   `Re(a p^(n-1-m) state)` anticausal, as a real weight on the state's
    ///   real or imaginary part),
    /// - 8 sums of the sum weights (the sums of a constant 1).
    ///
    /// Computed in f64, rounded once.
    pub fn tile_tables(&self, n: usize) -> Vec<f32> {
        let one = C64::new(1.0, 0.0);
        let power = |p: C64, e: usize| (0..e).fold(one, |q, _| q.mul(p));
        let mut sum_w = vec![0.0f64; 8 * n];
        let mut state_w = vec![0.0f64; 8 * n];
        for (sec, s) in self.sections.iter().enumerate() {
            for j in 0..n {
                let (c, a) = (power(s.pole, n - 1 - j), power(s.pole, j + 1));
                sum_w[(2 * sec) * n + j] = c.re;
                sum_w[(2 * sec + 1) * n + j] = c.im;
                sum_w[(4 + 2 * sec) * n + j] = a.re;
                sum_w[(4 + 2 * sec + 1) * n + j] = a.im;
                let (gc, ga) = (
                    s.weight.mul(power(s.pole, j + 1)),
                    s.weight.mul(power(s.pole, n - 1 - j)),
                );
                state_w[(2 * sec) * n + j] = gc.re;
                state_w[(2 * sec + 1) * n + j] = -gc.im;
                state_w[(4 + 2 * sec) * n + j] = ga.re;
                state_w[(4 + 2 * sec + 1) * n + j] = -ga.im;
            }
        }
        let ones = (0..8).map(|k| sum_w[k * n..(k + 1) * n].iter().sum::<f64>());
        sum_w
            .iter()
            .chain(&state_w)
            .copied()
            .chain(ones)
            .map(|v| v as f32)
            .collect()
    }

    /// The sections as real biquads for `iir_tiles`' tile lines
    /// (`t2_line_bq` in cl/gaussian/tiles.cl), [`TILE_BIQUAD_LEN`] values, each
    /// field as (section 0, section 1):
    /// - `d1 = 2 Re p`, `d2 = -|p|^2`: the feedback of both directions;
    /// - `n0 = Re a`, `n1 = -Re(conj(p) a)`: the causal feed-forward, for
    ///   outputs `Re(a w[n])` of `w[n] = x[n] + p w[n-1]`;
    /// - `m0 = Re(p a)`, `m1 = -|p|^2 Re a`: the anticausal feed-forward,
    ///   for outputs `Re(a v[n])` of `v[n] = p (x[n+1] + v[n+1])`;
    /// - `b = p a` as (re0, im0, re1, im1): a line's second output from a
    ///   complex state;
    /// - per section the inverse of `[[Re a, -Im a], [Re c, -Im c]]` with
    ///   `c = a / p`, row-major: a complex state back from two successive
    ///   outputs (`Re(a w[n]) = y[n]`, `Re(c w[n]) = y[n-1] + Re(c) x[n]`);
    /// - `Re c`.
    ///
    /// The inverse's size grows like sigma (the two rows differ by the
    /// poles' angle, about 0.63 / sigma), and f32 rounding in the outputs
    /// with it, so the kernels use these only up to [`BIQUAD_MAX_SIGMA`].
    pub fn tile_biquads(&self) -> [f32; TILE_BIQUAD_LEN] {
        let norm = |p: C64| p.re * p.re + p.im * p.im;
        self.line_table(
            [&|s| 2.0 * s.pole.re, &|s| -norm(s.pole)],
            &|s| s.pole.mul(s.weight),
            &|s| s.weight.div(s.pole),
        )
    }

    /// The sections in delta form for `iir_tiles`' tile lines above
    /// [`BIQUAD_MAX_SIGMA`] (`t2_line_dq` in cl/gaussian/tiles.cl). Each biquad
    /// `y[n] = d1 y[n-1] + d2 y[n-2] + ..` is run on its output and the
    /// output's step `e[n] = y[n] - y[n-1]`:
    /// `e[n] = e1 y[n-1] + g e[n-1] + n0 x[n] + n1 x[n-1]`, `y[n] = y[n-1] +
    /// e[n]`, with `e1 = d1 + d2 - 1 = -|1 - p|^2` and `g = -d2 = |p|^2`
    /// (anticausal the same upwards with `m0`, `m1`). Near the double pole
    /// at 1 the biquad's feedback carries the whole signal, so its rounding
    /// grows like sigma^2; here the feedback carries the steps, small
    /// coefficients times the signal, and the rounding grows like sigma, as
    /// in the complex form, for five operations per step against its six to
    /// seven. [`TILE_BIQUAD_LEN`] values, each field as (section 0,
    /// section 1):
    /// - `e1`, `g`;
    /// - `n0`, `n1`, `m0`, `m1` as in [`Deriche::tile_biquads`];
    /// - `b - a = a (p - 1)` as (re0, im0, re1, im1): a line's first step
    ///   from a complex state;
    /// - per section the inverse of `[[Re a, -Im a], [Re d, -Im d]]` with
    ///   `d = a - c`, `c = a / p`, row-major: a complex state back from an
    ///   output and its step (`Re(a w[n]) = y[n]`, `Re(d w[n]) = e[n] -
    ///   Re(c) x[n]`);
    /// - `Re c`.
    ///
    /// The inverse stays near `1 / |a|` in both rows' units: the step row
    /// is a factor `|1 - p|` smaller, as the steps are.
    pub fn tile_deltas(&self) -> [f32; TILE_BIQUAD_LEN] {
        let norm = |p: C64| p.re * p.re + p.im * p.im;
        self.line_table(
            [&|s| -norm(C64::new(1.0 - s.pole.re, -s.pole.im)), &|s| {
                norm(s.pole)
            }],
            &|s| s.weight.mul(C64::new(s.pole.re - 1.0, s.pole.im)),
            &|s| {
                let c = s.weight.div(s.pole);
                C64::new(s.weight.re - c.re, s.weight.im - c.im)
            },
        )
    }

    /// The layout [`Deriche::tile_biquads`] and [`Deriche::tile_deltas`]
    /// share, per section: the two `feedback` coefficients, the
    /// feed-forward `n0`, `n1`, `m0`, `m1`, the complex coefficient `start`
    /// that gives a line's first value after the complex state's own
    /// output, the inverse of `[[Re a, -Im a], [Re r, -Im r]]` for the
    /// second row `r = row(s)`, and `Re(a / p)`.
    fn line_table(
        &self,
        feedback: [&dyn Fn(&Section) -> f64; 2],
        start: &dyn Fn(&Section) -> C64,
        row: &dyn Fn(&Section) -> C64,
    ) -> [f32; TILE_BIQUAD_LEN] {
        let [s0, s1] = self.sections;
        let per = |f: &dyn Fn(&Section) -> f64| [f(&s0), f(&s1)];
        let norm = |p: C64| p.re * p.re + p.im * p.im;
        let conj = |p: C64| C64::new(p.re, -p.im);
        let inv = |s: &Section| {
            let (a, r) = (s.weight, row(s));
            let det = a.im * r.re - a.re * r.im;
            [-r.im / det, a.im / det, -r.re / det, a.re / det]
        };
        let mut v = [0.0f32; TILE_BIQUAD_LEN];
        let mut put = |at: usize, values: &[f64]| {
            for (slot, x) in v[at..at + values.len()].iter_mut().zip(values) {
                *slot = *x as f32;
            }
        };
        put(line::D1, &per(feedback[0]));
        put(line::D2, &per(feedback[1]));
        put(line::N0, &per(&|s| s.weight.re));
        put(line::N1, &per(&|s| -conj(s.pole).mul(s.weight).re));
        put(line::M0, &per(&|s| s.pole.mul(s.weight).re));
        put(line::M1, &per(&|s| -norm(s.pole) * s.weight.re));
        let (b0, b1) = (start(&s0), start(&s1));
        put(line::B, &[b0.re, b0.im, b1.re, b1.im]);
        put(line::INV, &[inv(&s0), inv(&s1)].concat());
        put(line::CR, &per(&|s| s.weight.div(s.pole).re));
        v
    }

    /// Filters one line in place, replicate borders, in f64 (used by tests and
    /// by the CPU path's per-line fallback). `tmp` must have `line.len()` entries.
    pub fn filter_line_f64(&self, line: &mut [f64], tmp: &mut [f64]) {
        let n = line.len();
        if n == 0 {
            return;
        }
        tmp.fill(0.0);
        for s in &self.sections {
            let (p, a) = (s.pole, s.weight);
            let mut w = s.causal_init.scale(line[0]);
            for i in 0..n {
                w = p.mul(w);
                w.re += line[i];
                tmp[i] += a.mul(w).re;
            }
            let mut v = s.anti_init.scale(line[n - 1]);
            for i in (0..n).rev() {
                tmp[i] += a.mul(v).re;
                v = p.mul(C64::new(line[i] + v.re, v.im));
            }
        }
        line.copy_from_slice(tmp);
    }
}

#[cfg(test)]
mod tests;
