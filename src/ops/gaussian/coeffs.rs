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

/// Largest sigma whose recursions run as real biquads (the rayon path's
/// lines, `iir_tiles`' tile lines); above it the rayon path runs complex
/// sections and `iir_tiles` the delta form ([`Deriche::tile_deltas`]),
/// which keep f32 rounding small. (See `Deriche::tile_biquads` and the
/// rayon path's `Biquad` for the measured rounding.)
pub const BIQUAD_MAX_SIGMA: f64 = 64.0;

/// Length of [`Deriche::tile_biquads`]' and [`Deriche::tile_deltas`]' tables.
pub const TILE_BIQUAD_LEN: usize = 26;

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

    /// Tables for `iir_tiles`' fix-up pass (`gaussian_t2_fix`) over tiles of
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
    /// (`t2_line_bq` in cl/gaussian.cl), [`TILE_BIQUAD_LEN`] values, each
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
    /// [`BIQUAD_MAX_SIGMA`] (`t2_line_dq` in cl/gaussian.cl). Each biquad
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
        let v: Vec<f64> = [
            per(feedback[0]),
            per(feedback[1]),
            per(&|s| s.weight.re),
            per(&|s| -conj(s.pole).mul(s.weight).re),
            per(&|s| s.pole.mul(s.weight).re),
            per(&|s| -norm(s.pole) * s.weight.re),
        ]
        .concat()
        .into_iter()
        .chain([start(&s0).re, start(&s0).im, start(&s1).re, start(&s1).im])
        .chain(inv(&s0))
        .chain(inv(&s1))
        .chain(per(&|s| s.weight.div(s.pole).re))
        .collect();
        std::array::from_fn(|i| v[i] as f32)
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
mod tests {
    use super::*;

    /// The sampled Gaussian, normalised, radius ceil(6 sigma), replicate border.
    fn fir(line: &[f64], sigma: f64) -> Vec<f64> {
        let r = (6.0 * sigma).ceil() as i64;
        let w: Vec<f64> = (-r..=r)
            .map(|i| (-(i * i) as f64 / (2.0 * sigma * sigma)).exp())
            .collect();
        let sum: f64 = w.iter().sum();
        let n = line.len() as i64;
        (0..n)
            .map(|i| {
                (-r..=r)
                    .map(|k| line[(i + k).clamp(0, n - 1) as usize] * w[(k + r) as usize])
                    .sum::<f64>()
                    / sum
            })
            .collect()
    }

    fn random_line(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    /// `tile_biquads` against the complex sections over one 64-sample tile
    /// from random states, as `t2_line_bq` uses it (in f64, so only the
    /// coefficients' f32 rounding remains): both directions' outputs, and
    /// the complex states recovered at the far ends.
    #[test]
    fn tile_biquads_match_the_complex_sections() {
        for (i, sigma) in [1.0, 8.0, 64.0].into_iter().enumerate() {
            let d = Deriche::new(sigma);
            let q: Vec<f64> = d.tile_biquads().iter().map(|&v| v as f64).collect();
            let x: Vec<f64> = random_line(64, 11 + i as u64)
                .iter()
                .map(|v| 2.0 * v - 1.0)
                .collect();
            let r = random_line(8, 5 + i as u64);
            for (k, s) in d.sections.iter().enumerate() {
                let (p, a) = (s.pole, s.weight);
                let (w0, v0) = (
                    C64::new(r[4 * k], r[4 * k + 1]),
                    C64::new(r[4 * k + 2], r[4 * k + 3]),
                );
                let (d1, d2) = (q[k], q[2 + k]);
                let (n0, n1, m0, m1) = (q[4 + k], q[6 + k], q[8 + k], q[10 + k]);
                let b = C64::new(q[12 + 2 * k], q[13 + 2 * k]);
                let inv = &q[16 + 4 * k..20 + 4 * k];
                let cr = q[24 + k];
                let re = |c: C64, w: C64| c.re * w.re - c.im * w.im;
                let tol = 1e-6 * sigma.max(1.0);
                // Causal: Re(a w[m]) after w[m] = x[m] + p w[m-1].
                let mut w = w0;
                let (mut y1, mut y) = (re(a, w0), re(b, w0) + n0 * x[0]);
                for m in 0..64 {
                    w = p.mul(w);
                    w.re += x[m];
                    if m > 0 {
                        (y1, y) = (y, d1 * y + d2 * y1 + n0 * x[m] + n1 * x[m - 1]);
                    }
                    assert!((y - re(a, w)).abs() < tol, "sigma {sigma} causal {m}: {y}");
                }
                let e = y1 + cr * x[63];
                let back = C64::new(inv[0] * y + inv[1] * e, inv[2] * y + inv[3] * e);
                let scale = w.re.abs() + w.im.abs();
                assert!((back.re - w.re).abs() + (back.im - w.im).abs() < tol * scale);
                // Anticausal: Re(a v[m]), v[m-1] = p (x[m] + v[m]).
                let mut v = v0;
                let (mut q2, mut q1) = (re(a, v0), re(b, v0) + b.re * x[63]);
                for m in (0..64).rev() {
                    let want = re(a, v);
                    let got = match m {
                        63 => q2,
                        62 => q1,
                        _ => {
                            let n = d1 * q1 + d2 * q2 + m0 * x[m + 1] + m1 * x[m + 2];
                            (q2, q1) = (q1, n);
                            n
                        }
                    };
                    assert!(
                        (got - want).abs() < tol,
                        "sigma {sigma} anticausal {m}: {got}"
                    );
                    v = p.mul(C64::new(v.re + x[m], v.im));
                }
                let q_before = d1 * q1 + d2 * q2 + m0 * x[0] + m1 * x[1];
                let e = q1 + a.re * x[0];
                let back = C64::new(
                    inv[0] * q_before + inv[1] * e,
                    inv[2] * q_before + inv[3] * e,
                );
                let scale = v.re.abs() + v.im.abs();
                assert!((back.re - v.re).abs() + (back.im - v.im).abs() < tol * scale);
            }
        }
    }

    /// One section's causal line in `t2_line_dq`'s delta form, in `F`
    /// (f32 as the kernels run it, f64 to check the table): outputs
    /// `Re(a w[m])` from the incoming complex state `w` and the samples `x`,
    /// and the state after the last sample, recovered through the inverse.
    fn delta_causal<F>(q: &[f32], k: usize, a: C64, w: C64, x: &[F]) -> (Vec<F>, [F; 2])
    where
        F: Copy
            + From<f32>
            + std::ops::Add<Output = F>
            + std::ops::Sub<Output = F>
            + std::ops::Mul<Output = F>,
    {
        let f = |v: f32| F::from(v);
        let c = |v: f64| F::from(v as f32);
        let (e1, g, n0, n1) = (f(q[k]), f(q[2 + k]), f(q[4 + k]), f(q[6 + k]));
        let (br, bi) = (f(q[12 + 2 * k]), f(q[13 + 2 * k]));
        let (wr, wi) = (c(w.re), c(w.im));
        let mut e = br * wr - bi * wi + n0 * x[0];
        let mut y = c(a.re) * wr - c(a.im) * wi + e;
        let mut ys = vec![y];
        for m in 1..x.len() {
            e = e1 * y + g * e + n0 * x[m] + n1 * x[m - 1];
            y = y + e;
            ys.push(y);
        }
        let inv = &q[16 + 4 * k..20 + 4 * k];
        let ed = e - f(q[24 + k]) * x[x.len() - 1];
        let back = [
            f(inv[0]) * y + f(inv[1]) * ed,
            f(inv[2]) * y + f(inv[3]) * ed,
        ];
        (ys, back)
    }

    /// `tile_deltas` against the complex sections over one 64-sample tile
    /// from random states, in f64 as `tile_biquads_match_the_complex_
    /// sections` does, now up to sigma 10000: both directions' outputs and
    /// the states recovered at the far ends (measured: `|a| |dw|` at most
    /// 2.1e-7).
    #[test]
    fn tile_deltas_match_the_complex_sections() {
        for (i, sigma) in [1.0, 8.0, 65.0, 1000.0, 10000.0].into_iter().enumerate() {
            let d = Deriche::new(sigma);
            let q = d.tile_deltas();
            let qf: Vec<f64> = q.iter().map(|&v| v as f64).collect();
            let x: Vec<f64> = random_line(64, 21 + i as u64)
                .iter()
                .map(|v| 2.0 * v - 1.0)
                .collect();
            let r = random_line(8, 15 + i as u64);
            for (k, s) in d.sections.iter().enumerate() {
                let (p, a) = (s.pole, s.weight);
                let (w0, v0) = (
                    C64::new(r[4 * k], r[4 * k + 1]),
                    C64::new(r[4 * k + 2], r[4 * k + 3]),
                );
                let re = |c: C64, w: C64| c.re * w.re - c.im * w.im;
                let tol = 1e-6;
                // A state error `dw` moves later outputs by at most
                // `|a| |dw|`, which is what the recovered states are held to.
                let a_abs = a.re.hypot(a.im);
                // Causal: Re(a w[m]) after w[m] = x[m] + p w[m-1].
                let (ys, back) = delta_causal::<f64>(&q, k, a, w0, &x);
                let mut w = w0;
                for (m, y) in ys.iter().enumerate() {
                    w = p.mul(w);
                    w.re += x[m];
                    let want = re(a, w);
                    assert!((y - want).abs() < tol, "sigma {sigma} causal {m}: {y}");
                }
                let err = (back[0] - w.re).abs() + (back[1] - w.im).abs();
                assert!(err * a_abs < 5e-7, "sigma {sigma} causal state: {err:e}");
                // Anticausal: Re(a v[m]), v[m-1] = p (x[m] + v[m]), run as
                // t2_line_dq does: q[63] from the state, then steps.
                let (e1, g, m0, m1) = (qf[k], qf[2 + k], qf[8 + k], qf[10 + k]);
                let st = C64::new(qf[12 + 2 * k], qf[13 + 2 * k]);
                let mut v = v0;
                let mut qv = re(a, v0);
                let mut e = re(st, v0) + m0 * x[63];
                for m in (0..64).rev() {
                    let want = re(a, v);
                    if m < 63 {
                        if m < 62 {
                            e = e1 * qv + g * e + m0 * x[m + 1] + m1 * x[m + 2];
                        }
                        qv += e;
                    }
                    assert!(
                        (qv - want).abs() < tol,
                        "sigma {sigma} anticausal {m}: {qv}"
                    );
                    v = p.mul(C64::new(v.re + x[m], v.im));
                }
                e = e1 * qv + g * e + m0 * x[0] + m1 * x[1];
                qv += e;
                let inv = &qf[16 + 4 * k..20 + 4 * k];
                let ed = e - a.re * x[0];
                let back = C64::new(inv[0] * qv + inv[1] * ed, inv[2] * qv + inv[3] * ed);
                let err = (back.re - v.re).abs() + (back.im - v.im).abs();
                assert!(
                    err * a_abs < 5e-7,
                    "sigma {sigma} anticausal state: {err:e}"
                );
            }
        }
    }

    /// Why the tile lines switch from biquads to the delta form above
    /// BIQUAD_MAX_SIGMA: run in f32 over a line of 64 tiles, each
    /// restarted from the state the previous one handed on, as `iir_tiles`
    /// does, the delta form's causal outputs stay within 1e-6 of full scale
    /// up to sigma 1000 and 1e-5 at 10000 (measured 1.3e-7, 3.1e-7 and
    /// 7.4e-6 at sigma 100, 1000, 10000; the biquads reached 4e-5 at sigma
    /// 1000 on PoCL's whole filter).
    #[test]
    fn delta_form_rounding_stays_small_at_large_sigma() {
        for sigma in [100.0, 1000.0, 10000.0] {
            let d = Deriche::new(sigma);
            let q = d.tile_deltas();
            let x: Vec<f64> = random_line(64 * 64, 3)
                .iter()
                .map(|v| 2.0 * v - 1.0)
                .collect();
            let s = d.sections[0];
            let (p, a) = (s.pole, s.weight);
            // The steady state for x[0] repeated, as a replicate border gives.
            let mut w = s.causal_init.scale(x[0]);
            let mut w_exact = w;
            let mut worst = 0.0f64;
            for tile in x.chunks(64) {
                let xf: Vec<f32> = tile.iter().map(|&v| v as f32).collect();
                let (ys, back) = delta_causal::<f32>(&q, 0, a, w, &xf);
                for (y, &xm) in ys.iter().zip(tile) {
                    w_exact = p.mul(w_exact);
                    w_exact.re += xm;
                    worst = worst.max((*y as f64 - (a.mul(w_exact)).re).abs());
                }
                w = C64::new(back[0] as f64, back[1] as f64);
            }
            let bound = if sigma <= 1000.0 { 1e-6 } else { 1e-5 };
            assert!(worst < bound, "sigma {sigma}: {worst:e}");
        }
    }

    #[test]
    fn pole_powers_match_repeated_products() {
        let d = Deriche::new(3.7);
        let mut q = [C64::new(1.0, 0.0); 2];
        for _ in 0..64 {
            q = [q[0].mul(d.sections[0].pole), q[1].mul(d.sections[1].pole)];
        }
        let got = d.pole_power_args(64);
        let want = [q[0].re, q[0].im, q[1].re, q[1].im];
        for (g, w) in got.iter().zip(want) {
            assert!((*g as f64 - w).abs() < 1e-6, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn dc_gain_is_one_and_constants_pass_unchanged() {
        for sigma in [0.5, 1.0, 2.0, 7.3, 100.0, 1000.0] {
            let d = Deriche::new(sigma);
            let mut line = vec![0.25; 37];
            let mut tmp = vec![0.0; 37];
            d.filter_line_f64(&mut line, &mut tmp);
            for v in line {
                assert!((v - 0.25).abs() < 1e-12, "sigma {sigma}: {v}");
            }
        }
    }

    #[test]
    fn matches_the_sampled_gaussian_within_deriche_accuracy() {
        for sigma in [1.0, 2.0, 5.0, 16.0, 40.0] {
            let d = Deriche::new(sigma);
            let x = random_line(400, 7);
            let want = fir(&x, sigma);
            let mut got = x.clone();
            let mut tmp = vec![0.0; x.len()];
            d.filter_line_f64(&mut got, &mut tmp);
            let err = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            eprintln!("sigma {sigma}: Deriche (f64) vs sampled Gaussian: max error {err:.2e}");
            assert!(err < 1e-3, "sigma {sigma}: max error {err}");
        }
    }

    /// The reason for the section form: in f32, the expanded 4th-order
    /// direct form loses all accuracy at large sigma; the sections do not.
    #[test]
    fn f32_sections_stay_accurate_where_the_direct_form_fails() {
        let sigma = 200.0;
        let d = Deriche::new(sigma);
        let x = random_line(3000, 3);
        let mut exact = x.clone();
        let mut tmp = vec![0.0; x.len()];
        d.filter_line_f64(&mut exact, &mut tmp);

        // Sections in f32.
        let mut sec = vec![0f32; x.len()];
        for s in &d.sections {
            let (pr, pi) = (s.pole.re as f32, s.pole.im as f32);
            let (ar, ai) = (s.weight.re as f32, s.weight.im as f32);
            let (mut wr, mut wi) = (
                s.causal_init.re as f32 * x[0] as f32,
                s.causal_init.im as f32 * x[0] as f32,
            );
            for i in 0..x.len() {
                let t = pr * wr - pi * wi + x[i] as f32;
                wi = pr * wi + pi * wr;
                wr = t;
                sec[i] += ar * wr - ai * wi;
            }
            let xl = x[x.len() - 1] as f32;
            let (mut vr, mut vi) = (s.anti_init.re as f32 * xl, s.anti_init.im as f32 * xl);
            for i in (0..x.len()).rev() {
                sec[i] += ar * vr - ai * vi;
                let (ur, ui) = (x[i] as f32 + vr, vi);
                vr = pr * ur - pi * ui;
                vi = pr * ui + pi * ur;
            }
        }
        let sec_err = sec
            .iter()
            .zip(&exact)
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0.0, f64::max);

        // The same causal filter multiplied out to 1 + a1 z^-1 + .. + a4 z^-4, in f32.
        let p: Vec<C64> = d
            .sections
            .iter()
            .flat_map(|s| [s.pole, C64::new(s.pole.re, -s.pole.im)])
            .collect();
        let mut den = vec![C64::new(1.0, 0.0)];
        for pk in &p {
            let mut next = vec![C64::new(0.0, 0.0); den.len() + 1];
            for (i, c) in den.iter().enumerate() {
                next[i].re += c.re;
                next[i].im += c.im;
                let m = c.mul(*pk);
                next[i + 1].re -= m.re;
                next[i + 1].im -= m.im;
            }
            den = next;
        }
        let a: Vec<f32> = den.iter().map(|c| c.re as f32).collect();
        // Recursion with unit numerator, started from its steady state, compared
        // with the same recursion in f64: only the denominator's conditioning differs.
        let run = |f32_mode: bool| -> Vec<f64> {
            let dc: f64 = den.iter().map(|c| c.re).sum();
            let mut y = vec![x[0] / dc; 4];
            let mut out = Vec::with_capacity(x.len());
            for &xi in &x {
                let v = if f32_mode {
                    let (y1, y2, y3, y4) = (
                        y[y.len() - 1] as f32,
                        y[y.len() - 2] as f32,
                        y[y.len() - 3] as f32,
                        y[y.len() - 4] as f32,
                    );
                    (xi as f32 - a[1] * y1 - a[2] * y2 - a[3] * y3 - a[4] * y4) as f64
                } else {
                    let n = y.len();
                    xi - den[1].re * y[n - 1]
                        - den[2].re * y[n - 2]
                        - den[3].re * y[n - 3]
                        - den[4].re * y[n - 4]
                };
                y.push(v);
                out.push(v * dc);
            }
            out
        };
        let (d32, d64) = (run(true), run(false));
        let direct_err = d32
            .iter()
            .zip(&d64)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "sigma {sigma}: f32 sections max error {sec_err:.2e}, f32 direct form {direct_err:.2e}"
        );
        assert!(sec_err < 1e-4, "sections in f32: max error {sec_err}");
        assert!(
            direct_err > 100.0 * sec_err,
            "direct form in f32: max error {direct_err}, sections {sec_err}"
        );
    }
}
