//! The passes of Deriche's filter on strips of adjacent columns (one SIMD
//! lane per column), generic over the vector type: [`Causal`] and
//! [`Anticausal`] down and up image rows, [`BlockIir`] down the columns of
//! a transposed block (the horizontal filter).

use std::ops::Range;

use super::iir::{Biquad, Iir, STATE_ROWS};
use super::Rows;
use crate::image::Sample;
use crate::simd::{load_samples, prefetch, StripOut, Strips, StripsInto, Vf32};

/// One direction of Deriche's filter on a vector of columns, in one of its
/// two forms ([`Cplx`], [`Biquads`]). Outputs that a caller drops (the
/// warm-ups) cost nothing: the compiler removes their arithmetic.
trait Rec<V: Vf32> {
    /// A vector's state.
    type S: Copy;
    /// The coefficients this form runs on.
    type C;
    fn new(t: V::Token, c: &Self::C) -> Self;
    /// The state of the `N` columns from `at`, in `st` (rows of `m`).
    fn load(t: V::Token, st: &[f32], m: usize, at: usize) -> Self::S;
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
    zero: V,
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
    fn new(t: V::Token, c: &Iir) -> Self {
        let sp = V::splat;
        let [[p0r, p0i], [p1r, p1i]] = c.p;
        let [[b0r, b0i], [b1r, b1i]] = c.b;
        let [[a0r, a0i], [a1r, a1i]] = c.a;
        Cplx {
            p: [
                (sp(t, p0r), sp(t, p0i), sp(t, -p0i)),
                (sp(t, p1r), sp(t, p1i), sp(t, -p1i)),
            ],
            b: [(sp(t, b0r), sp(t, -b0i)), (sp(t, b1r), sp(t, -b1i))],
            a: [(sp(t, a0r), sp(t, -a0i)), (sp(t, a1r), sp(t, -a1i))],
            zero: sp(t, 0.0),
        }
    }

    #[inline(always)]
    fn load(t: V::Token, st: &[f32], m: usize, at: usize) -> Self::S {
        let r = |k: usize| &st[k * m + at..];
        [
            (V::load(t, r(0)), V::load(t, r(1))),
            (V::load(t, r(2)), V::load(t, r(3))),
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
        let y = Self::out(self.b, *s, self.zero);
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
struct Biquads<V> {
    c: [[V; 6]; 2],
    zero: V,
}

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
    fn new(t: V::Token, q: &Biquad) -> Self {
        let z = V::splat(t, 0.0);
        let mut v = [[z; 6]; 2];
        for (k, v) in v.iter_mut().enumerate() {
            for (v, c) in v.iter_mut().zip([q.d1, q.d2, q.n1, q.n2, q.m0, q.m1]) {
                *v = V::splat(t, c[k]);
            }
        }
        Biquads { c: v, zero: z }
    }

    #[inline(always)]
    fn load(t: V::Token, st: &[f32], m: usize, at: usize) -> Self::S {
        let r = |k: usize| &st[k * m + at..];
        BiquadState {
            x: [V::load(t, r(0)), V::load(t, r(1))],
            y: [
                [V::load(t, r(2)), V::load(t, r(3))],
                [V::load(t, r(4)), V::load(t, r(5))],
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
        let mut out = [self.zero; 2];
        for (k, out) in out.iter_mut().enumerate() {
            let [d1, d2, n1, n2, ..] = self.c[k];
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
            let [d1, d2, _, _, m0, m1] = self.c[k];
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
pub(super) struct BlockIir<'a> {
    pub(super) c: &'a Iir,
    pub(super) x: &'a [f32],
    pub(super) y: &'a mut [f32],
    pub(super) m: usize,
    pub(super) init: &'a [f32],
}

impl BlockIir<'_> {
    #[inline(always)]
    fn run<V: Vf32, const K: usize, R: Rec<V>>(&mut self, t: V::Token, j: usize, coefs: &R::C) {
        let (m, width) = (self.m, K * V::N);
        let f = R::new(t, coefs);
        let r = load_refs::<V, K>(t, &self.x[..m], j);
        // Causal into y, then anticausal added to it.
        let mut w = [R::load(t, self.init, m, j); K];
        for (q, s) in w.iter_mut().enumerate().skip(1) {
            *s = R::load(t, self.init, m, j + q * V::N);
        }
        for (xr, yr) in self.x.chunks_exact(m).zip(self.y.chunks_exact_mut(m)) {
            let (xr, yr) = (&xr[j..j + width], &mut yr[j..j + width]);
            for q in 0..K {
                let x = V::load(t, &xr[q * V::N..]).sub(r[q]);
                f.causal(&mut w[q], x).store(&mut yr[q * V::N..]);
            }
        }
        let init = &self.init[STATE_ROWS * m..];
        let mut v = [R::load(t, init, m, j); K];
        for (q, s) in v.iter_mut().enumerate().skip(1) {
            *s = R::load(t, init, m, j + q * V::N);
        }
        for (xr, yr) in self.x.chunks_exact(m).zip(self.y.chunks_exact_mut(m)).rev() {
            let (xr, yr) = (&xr[j..j + width], &mut yr[j..j + width]);
            for q in 0..K {
                let x = V::load(t, &xr[q * V::N..]).sub(r[q]);
                let acc = V::load(t, &yr[q * V::N..]).add(r[q]);
                f.anti(&mut v[q], x, acc).store(&mut yr[q * V::N..]);
            }
        }
    }
}

impl Strips for BlockIir<'_> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.run::<V, K, Biquads<V>>(t, j, q),
            None => self.run::<V, K, Cplx<V>>(t, j, c),
        }
    }
}

/// Asks for the cache lines of `row` from sample `at` on, which the next
/// strip will read. Each strip walks down (or up) only `STEP_ROWS` rows,
/// a few lines per row, before the next strip starts over: too short a run
/// for the hardware's stride prefetchers. Measured at 4K gray, sigma 8 and
/// 32 on the 2-core CI-class machine: 20-35% faster (noisy neighbours).
#[inline(always)]
fn prefetch_ahead<S: Sample>(row: &[S], at: usize) {
    prefetch(row, at, PREFETCH_BYTES);
}

/// Bytes [`prefetch_ahead`] asks for: one strip of f32 on AVX-512.
const PREFETCH_BYTES: usize = 128;

/// The reference levels of a strip's columns (see [`Causal::refs`]).
#[inline(always)]
fn load_refs<V: Vf32, const K: usize>(t: V::Token, refs: &[f32], j: usize) -> [V; K] {
    let mut r = [V::splat(t, 0.0); K];
    for (q, r) in r.iter_mut().enumerate() {
        *r = V::load(t, &refs[j + q * V::N..]);
    }
    r
}

/// The causal pass down image rows `rows` of `src`, all columns, states in
/// `st`. As [`StripsInto`] ([`crate::simd::Simd::strips_into`]) it also
/// emits its output (rows from `rows.start`, of `m`); as [`Strips`] it only
/// moves the states on (a warm-up).
pub(super) struct Causal<'a, S> {
    pub(super) c: &'a Iir,
    pub(super) src: Rows<'a, S>,
    /// Each column's reference level (its first sample): the passes filter
    /// the deviations from it and add it back at the end. The filter's DC
    /// gain is 1, so this changes nothing but rounding, and a constant line
    /// comes back exactly however long it is (f32 states would otherwise
    /// drift by ~1e-5 of the level over thousands of samples at sigma 1000).
    pub(super) refs: &'a [f32],
    pub(super) rows: Range<usize>,
    pub(super) st: &'a mut [f32],
}

impl<S: Sample> Causal<'_, S> {
    /// The pass over the strip from column `j`, emitting its output. (Two
    /// functions, not one with an optional output: unoptimised builds would
    /// inline both branches at each call and overflow rayon's stacks.)
    #[inline(always)]
    fn emit<V: Vf32, const K: usize, R: Rec<V>>(
        &mut self,
        t: V::Token,
        j: usize,
        coefs: &R::C,
        out: &mut StripOut<'_, V, K>,
    ) {
        // Everything in locals: stores through `out` could otherwise alias
        // `self` and force reloads every row.
        let (src, m, width) = (self.src, self.src.len, K * V::N);
        let f = R::new(t, coefs);
        let r = load_refs::<V, K>(t, self.refs, j);
        let mut w = [R::load(t, self.st, m, j); K];
        for (q, s) in w.iter_mut().enumerate().skip(1) {
            *s = R::load(t, self.st, m, j + q * V::N);
        }
        for i in self.rows.clone() {
            prefetch_ahead(src.row(i), j + width);
            let xr = &src.row(i)[j..j + width];
            for q in 0..K {
                let x = load_samples::<V, S>(t, &xr[q * V::N..]).sub(r[q]);
                out.put(f.causal(&mut w[q], x));
            }
        }
        for (q, w) in w.iter().enumerate() {
            R::save(w, self.st, m, j + q * V::N);
        }
    }

    /// The pass over the strip from column `j`, only moving the states on.
    #[inline(always)]
    fn warm<V: Vf32, const K: usize, R: Rec<V>>(&mut self, t: V::Token, j: usize, coefs: &R::C) {
        let (src, m, width) = (self.src, self.src.len, K * V::N);
        let f = R::new(t, coefs);
        let r = load_refs::<V, K>(t, self.refs, j);
        let mut w = [R::load(t, self.st, m, j); K];
        for (q, s) in w.iter_mut().enumerate().skip(1) {
            *s = R::load(t, self.st, m, j + q * V::N);
        }
        for i in self.rows.clone() {
            prefetch_ahead(src.row(i), j + width);
            let xr = &src.row(i)[j..j + width];
            for q in 0..K {
                let x = load_samples::<V, S>(t, &xr[q * V::N..]).sub(r[q]);
                f.causal(&mut w[q], x);
            }
        }
        for (q, w) in w.iter().enumerate() {
            R::save(w, self.st, m, j + q * V::N);
        }
    }
}

impl<S: Sample> Strips for Causal<'_, S> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.warm::<V, K, Biquads<V>>(t, j, q),
            None => self.warm::<V, K, Cplx<V>>(t, j, c),
        }
    }
}

impl<S: Sample> StripsInto for Causal<'_, S> {
    #[inline(always)]
    fn strip_into<V: Vf32, const K: usize>(
        &mut self,
        t: V::Token,
        j: usize,
        out: &mut StripOut<'_, V, K>,
    ) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.emit::<V, K, Biquads<V>>(t, j, q, out),
            None => self.emit::<V, K, Cplx<V>>(t, j, c, out),
        }
    }
}

/// The anticausal pass up image rows `rows` of `src` (last to first), all
/// columns, states in `st`; with `io` = (causal half, rows from
/// `rows.start`), adds the two halves into `io.1`.
pub(super) struct Anticausal<'a, S, O> {
    pub(super) c: &'a Iir,
    pub(super) src: Rows<'a, S>,
    /// As [`Causal::refs`].
    pub(super) refs: &'a [f32],
    pub(super) rows: Range<usize>,
    pub(super) st: &'a mut [f32],
    pub(super) io: Option<(&'a [O], &'a mut [f32])>,
}

impl<S: Sample, O: Sample> Anticausal<'_, S, O> {
    #[inline(always)]
    fn run<V: Vf32, const K: usize, R: Rec<V>>(&mut self, t: V::Token, j: usize, coefs: &R::C) {
        let (src, m, width) = (self.src, self.src.len, K * V::N);
        let f = R::new(t, coefs);
        let r = load_refs::<V, K>(t, self.refs, j);
        let mut v = [R::load(t, self.st, m, j); K];
        for (q, s) in v.iter_mut().enumerate().skip(1) {
            *s = R::load(t, self.st, m, j + q * V::N);
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
                        let x = load_samples::<V, S>(t, &xr[q * V::N..]).sub(r[q]);
                        let acc = load_samples::<V, O>(t, &hr[q * V::N..]).add(r[q]);
                        f.anti(&mut v[q], x, acc).store(&mut or[q * V::N..]);
                    }
                }
            }
            None => {
                let zero = V::splat(t, 0.0);
                for i in self.rows.clone().rev() {
                    prefetch_ahead(src.row(i), j + width);
                    let xr = &src.row(i)[j..j + width];
                    for q in 0..K {
                        let x = load_samples::<V, S>(t, &xr[q * V::N..]).sub(r[q]);
                        f.anti(&mut v[q], x, zero);
                    }
                }
            }
        }
        for (q, v) in v.iter().enumerate() {
            R::save(v, self.st, m, j + q * V::N);
        }
    }
}

impl<S: Sample, O: Sample> Strips for Anticausal<'_, S, O> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
        let c = self.c;
        match &c.bq {
            Some(q) => self.run::<V, K, Biquads<V>>(t, j, q),
            None => self.run::<V, K, Cplx<V>>(t, j, c),
        }
    }
}
