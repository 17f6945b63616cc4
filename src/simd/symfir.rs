//! Symmetric FIR filters, many columns at a time: the kernels of the
//! separable Gaussians that filter rows and columns directly (u8 in 16-bit
//! fixed point, u16 and f32 in f32).
//!
//! A filter of radius `r` reads `2 r + 1` lines of samples ([`Lines`]: runs
//! of `n` samples at offsets into one buffer) and weights `w[0..=r]`, and
//! gives, at each column `j`,
//!
//! `init + w[0] l[r][j] + sum over k in 1..=r of w[k] (l[r - k][j] + l[r + k][j])`:
//!
//! the two samples a weight multiplies are added first, so each pair of
//! taps costs one multiply. The lines are the same row shifted by `k`
//! pixels for a pass along rows, or `2 r + 1` rows for a pass down columns.
//!
//! In 16-bit fixed point ([`filter_u16`], [`filter_u8`]) the weights are in
//! units of 2^-16, each product is `mulhi(a, w) = floor(a w / 2^16)`, and
//! every sum wraps in 16 bits. Callers keep the sums in range: with
//! samples of at most `255 << FRAC` (so a pair fits in 16 bits) and weights
//! summing to 2^16, every partial sum stays below the weighted mean, at
//! most `255 << FRAC`. [`filter_u16`] stores the sums; [`filter_u8`] drops
//! their [`FRAC`] fractional bits and stores bytes. Both run 16 columns to
//! a 256-bit vector with AVX2 (`x86::symfir`, 64 columns per block of
//! registers) and 8 to a `wide` `u16x8` elsewhere (32 per block: SSE2 on
//! x86-64, NEON on aarch64).
//!
//! In f32 ([`filter_f32`], [`filter_f32_into`]) each pair is added and
//! multiply-added into its column's sum (fused with AVX2 and FMA, 8 vectors
//! of 8 columns per block of registers; `wide` `f32x8` elsewhere, 4 per
//! block), from `init = 0`.
//!
//! Columns left over after the blocks go in vectors, the last one moved
//! back to end at `n`, and lines shorter than a vector one column at a
//! time (`walk`).

use std::mem::MaybeUninit;

use wide::{f32x8, u16x8};

use super::{mem, Isa};

/// Fractional bits of the samples [`filter_u8`] narrows.
pub const FRAC: u32 = 7;

/// The `2 r + 1` lines of a filter of radius `r`: `n` samples from each
/// offset of `base`, the centre line at offset index `r`, with the weights
/// (samples and weights both `T`: u16 or f32). Made only by
/// [`Lines::new`], which checks that every line is inside `base`, so the
/// kernels may read them without further checks.
#[derive(Debug, Clone, Copy)]
pub struct Lines<'a, T = u16> {
    pub(super) w: &'a [T],
    pub(super) base: &'a [T],
    pub(super) offsets: &'a [usize],
    pub(super) n: usize,
}

impl<'a, T: Copy> Lines<'a, T> {
    /// The lines of `n` samples at `offsets` into `base`, for the weights
    /// `w` (offsets `0..=r`). Panics unless `w` is not empty, there are
    /// `2 r + 1` offsets, and each line lies inside `base`.
    pub fn new(w: &'a [T], base: &'a [T], offsets: &'a [usize], n: usize) -> Self {
        Self::checked(w, base, offsets, n, 0)
    }

    /// [`Lines::new`] with `extra` lines more than `2 r + 1`.
    fn checked(w: &'a [T], base: &'a [T], offsets: &'a [usize], n: usize, extra: usize) -> Self {
        assert!(
            !w.is_empty() && offsets.len() == 2 * w.len() - 1 + extra,
            "symfir: {} weights need {} lines, got {}",
            w.len(),
            2 * w.len().max(1) - 1 + extra,
            offsets.len()
        );
        let inside = offsets
            .iter()
            .all(|o| o.checked_add(n).is_some_and(|e| e <= base.len()));
        assert!(inside, "symfir: a line of {n} samples past the buffer");
        Lines {
            w,
            base,
            offsets,
            n,
        }
    }

    /// The radius.
    #[inline(always)]
    pub(super) fn radius(&self) -> usize {
        self.w.len() - 1
    }
}

/// The lines of two outputs one line apart ([`filter_f32_pair`],
/// [`filter_u8_pair`]): `2 r + 2` lines, the first output's `0..=2 r` and the second's `1..=2 r + 1`.
/// Made only by [`PairLines::new`], which checks them as [`Lines::new`]
/// does.
#[derive(Debug, Clone, Copy)]
pub struct PairLines<'a, T = f32>(pub(super) Lines<'a, T>);

impl<'a, T: Copy> PairLines<'a, T> {
    /// The `2 r + 2` lines of `n` samples at `offsets` into `base`, for the
    /// weights `w`. Panics unless `w` is not empty, there are `2 r + 2`
    /// offsets, and each line lies inside `base`.
    pub fn new(w: &'a [T], base: &'a [T], offsets: &'a [usize], n: usize) -> Self {
        PairLines(Lines::checked(w, base, offsets, n, 1))
    }

    /// Output `i`'s (0 or 1) `2 r + 1` lines.
    #[inline(always)]
    pub(super) fn one(&self, i: usize) -> Lines<'a, T> {
        let r = self.0.radius();
        Lines {
            offsets: &self.0.offsets[i..i + 2 * r + 1],
            ..self.0
        }
    }
}

impl Lines<'_, f32> {
    /// The sum at column `j < n`, one column at a time.
    #[inline(always)]
    pub(super) fn column_f32(&self, j: usize) -> f32 {
        let r = self.radius();
        let at = |i: usize| self.base[self.offsets[i] + j];
        let mut acc = at(r) * self.w[0];
        for k in 1..=r {
            acc += (at(r - k) + at(r + k)) * self.w[k];
        }
        acc
    }
}

impl Lines<'_> {
    /// The sum at column `j < n`, starting from `init`, one column at a time.
    #[inline(always)]
    pub(super) fn column(&self, j: usize, init: u16) -> u16 {
        let r = self.radius();
        let at = |i: usize| self.base[self.offsets[i] + j];
        let mut acc = init.wrapping_add(mulhi(at(r), self.w[0]));
        for k in 1..=r {
            let pair = at(r - k).wrapping_add(at(r + k));
            acc = acc.wrapping_add(mulhi(pair, self.w[k]));
        }
        acc
    }
}

/// `floor(a w / 2^16)`.
#[inline(always)]
fn mulhi(a: u16, w: u16) -> u16 {
    ((u32::from(a) * u32::from(w)) >> 16) as u16
}

/// The filter's sums at columns `0..n` into `out` (at least `n` long).
pub fn filter_u16(isa: Isa, lines: &Lines<'_>, out: &mut [u16]) {
    let out = &mut out[..lines.n];
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_u16_avx2(t, lines, out);
        }
    }
    let _ = isa;
    walk::<32>(lines.n, |j, vectors| match vectors {
        0 => out[j] = lines.column(j, 0),
        1 => out[j..j + 8].copy_from_slice(&block::<1>(lines, j, 0)[0].to_array()),
        _ => {
            for (v, s) in block::<4>(lines, j, 0).iter().enumerate() {
                out[j + 8 * v..j + 8 * v + 8].copy_from_slice(&s.to_array());
            }
        }
    });
}

/// The filter's sums at columns `0..n` plus `bias`, shifted right by
/// [`FRAC`], into the bytes `out` (exactly `n` long), which come back
/// written. The callers' sums plus `bias` stay below 2^15, so each result
/// fits a byte.
pub fn filter_u8<'o>(
    isa: Isa,
    lines: &Lines<'_>,
    bias: u16,
    out: &'o mut [MaybeUninit<u8>],
) -> &'o mut [u8] {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_u8_avx2(t, lines, bias, out);
        }
    }
    let _ = isa;
    let store = |out: &mut [MaybeUninit<u8>], v: u16x8| {
        for (d, s) in out[..8].iter_mut().zip(v.to_array()) {
            d.write((s >> FRAC) as u8);
        }
    };
    walk::<32>(lines.n, |j, vectors| match vectors {
        0 => {
            out[j].write((lines.column(j, bias) >> FRAC) as u8);
        }
        1 => store(&mut out[j..], block::<1>(lines, j, bias)[0]),
        _ => {
            for (v, s) in block::<4>(lines, j, bias).into_iter().enumerate() {
                store(&mut out[j + 8 * v..], s);
            }
        }
    });
    // SAFETY: `walk` visits every column below `n = out.len()`, and each
    // visit writes its columns (one, 8 or `B`).
    unsafe { mem::assume_init_mut(out) }
}

/// The filter's sums at columns `0..n` into `out` (exactly `n` long).
pub fn filter_f32(isa: Isa, lines: &Lines<'_, f32>, out: &mut [f32]) {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_f32_avx2(t, lines, out);
        }
    }
    let _ = isa;
    walk::<32>(lines.n, |j, vectors| match vectors {
        0 => out[j] = lines.column_f32(j),
        1 => out[j..j + 8].copy_from_slice(&block_f32::<1>(lines, j)[0].to_array()),
        _ => {
            for (v, s) in block_f32::<4>(lines, j).iter().enumerate() {
                out[j + 8 * v..j + 8 * v + 8].copy_from_slice(&s.to_array());
            }
        }
    });
}

/// [`filter_f32`] into samples not yet written (`out`, exactly `n` long),
/// which come back written.
pub fn filter_f32_into<'o>(
    isa: Isa,
    lines: &Lines<'_, f32>,
    out: &'o mut [MaybeUninit<f32>],
) -> &'o mut [f32] {
    assert_eq!(out.len(), lines.n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_f32_into_avx2(t, lines, out);
        }
    }
    let _ = isa;
    let store = |out: &mut [MaybeUninit<f32>], v: f32x8| {
        for (d, s) in out[..8].iter_mut().zip(v.to_array()) {
            d.write(s);
        }
    };
    walk::<32>(lines.n, |j, vectors| match vectors {
        0 => {
            out[j].write(lines.column_f32(j));
        }
        1 => store(&mut out[j..], block_f32::<1>(lines, j)[0]),
        _ => {
            for (v, s) in block_f32::<4>(lines, j).into_iter().enumerate() {
                store(&mut out[j + 8 * v..], s);
            }
        }
    });
    // SAFETY: `walk` visits every column below `n = out.len()`, and each
    // visit writes its columns (one, 8 or `B`).
    unsafe { mem::assume_init_mut(out) }
}

/// [`filter_u8`] for two outputs one line apart, into the bytes `out0` and
/// `out1` (each exactly `n` long), which come back written: the same
/// bytes, but with AVX2 each line is loaded once for both outputs (as
/// [`filter_f32_pair`]).
pub fn filter_u8_pair<'o>(
    isa: Isa,
    lines: &PairLines<'_, u16>,
    bias: u16,
    out0: &'o mut [MaybeUninit<u8>],
    out1: &'o mut [MaybeUninit<u8>],
) -> (&'o mut [u8], &'o mut [u8]) {
    let n = lines.0.n;
    assert!(out0.len() == n && out1.len() == n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_u8_pair_avx2(t, lines, bias, out0, out1);
        }
    }
    (
        filter_u8(isa, &lines.one(0), bias, out0),
        filter_u8(isa, &lines.one(1), bias, out1),
    )
}

/// [`filter_f32`] for two outputs one line apart, into `out0` and `out1`
/// (each exactly `n` long): the same sums, bit for bit, but with AVX2 each
/// line is loaded once for both outputs, which share `2 r` of their lines
/// (a pass down columns reads its lines from L2: half the loads there).
pub fn filter_f32_pair(isa: Isa, lines: &PairLines<'_>, out0: &mut [f32], out1: &mut [f32]) {
    let n = lines.0.n;
    assert!(out0.len() == n && out1.len() == n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_f32_pair_avx2(t, lines, out0, out1);
        }
    }
    filter_f32(isa, &lines.one(0), out0);
    filter_f32(isa, &lines.one(1), out1);
}

/// [`filter_f32_pair`] into samples not yet written (`out0` and `out1`,
/// each exactly `n` long), which come back written.
pub fn filter_f32_pair_into<'o>(
    isa: Isa,
    lines: &PairLines<'_>,
    out0: &'o mut [MaybeUninit<f32>],
    out1: &'o mut [MaybeUninit<f32>],
) -> (&'o mut [f32], &'o mut [f32]) {
    let n = lines.0.n;
    assert!(out0.len() == n && out1.len() == n, "symfir: output length");
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        if let Some(t) = super::x86::Avx2::try_new() {
            return super::x86::symfir::filter_f32_pair_into_avx2(t, lines, out0, out1);
        }
    }
    (
        filter_f32_into(isa, &lines.one(0), out0),
        filter_f32_into(isa, &lines.one(1), out1),
    )
}

/// Visits columns `0..n` in blocks of `B` (`f(j, B / 8)`), then vectors of
/// 8 (`f(j, 1)`, the last moved back to end at `n`), or, when `n < 8`, one
/// column at a time (`f(j, 0)`). Every column is visited, some twice.
#[inline(always)]
pub(super) fn walk<const B: usize>(n: usize, mut f: impl FnMut(usize, usize)) {
    walk_by::<B, 8>(n, &mut f);
}

/// [`walk`] with vectors of `V` columns.
#[inline(always)]
pub(super) fn walk_by<const B: usize, const V: usize>(n: usize, f: &mut impl FnMut(usize, usize)) {
    if n < V {
        (0..n).for_each(|j| f(j, 0));
        return;
    }
    let mut j = 0;
    while j + B <= n {
        f(j, B / V);
        j += B;
    }
    while j < n {
        let j0 = j.min(n - V);
        f(j0, 1);
        j = j0 + V;
    }
}

/// The sums at columns `j..j + 8 V` from `init`, in `V` vectors.
#[inline(always)]
fn block<const V: usize>(lines: &Lines<'_>, j: usize, init: u16) -> [u16x8; V] {
    let r = lines.radius();
    let load = |i: usize, v: usize| {
        let at = lines.offsets[i] + j + 8 * v;
        u16x8::new(lines.base[at..at + 8].try_into().expect("8 samples"))
    };
    let w0 = u16x8::splat(lines.w[0]);
    let mut acc: [u16x8; V] =
        std::array::from_fn(|v| u16x8::splat(init) + load(r, v).mul_keep_high(w0));
    for k in 1..=r {
        let wk = u16x8::splat(lines.w[k]);
        for (v, a) in acc.iter_mut().enumerate() {
            *a += (load(r - k, v) + load(r + k, v)).mul_keep_high(wk);
        }
    }
    acc
}

/// The f32 sums at columns `j..j + 8 V`, in `V` vectors.
#[inline(always)]
fn block_f32<const V: usize>(lines: &Lines<'_, f32>, j: usize) -> [f32x8; V] {
    let r = lines.radius();
    let load = |i: usize, v: usize| {
        let at = lines.offsets[i] + j + 8 * v;
        f32x8::new(lines.base[at..at + 8].try_into().expect("8 samples"))
    };
    let w0 = f32x8::splat(lines.w[0]);
    let mut acc: [f32x8; V] = std::array::from_fn(|v| load(r, v) * w0);
    for k in 1..=r {
        let wk = f32x8::splat(lines.w[k]);
        for (v, a) in acc.iter_mut().enumerate() {
            *a += (load(r - k, v) + load(r + k, v)) * wk;
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        }
    }

    /// Weights of radius `r` summing to 2^16, random.
    fn weights(r: usize, next: &mut impl FnMut() -> u64) -> Vec<u16> {
        let mut w: Vec<u16> = (0..=r)
            .map(|_| (next() % (32768 / (r as u64 + 1))) as u16)
            .collect();
        let sides: u32 = w[1..].iter().map(|v| 2 * u32::from(*v)).sum();
        w[0] = (65536 - sides) as u16;
        w
    }

    /// `lines` offsets at odd, unaligned places of one buffer, some lines
    /// overlapping, for lines of `n` samples, and the buffer, of
    /// `sample()`s.
    fn buffer<T>(lines: usize, n: usize, sample: impl FnMut() -> T) -> (Vec<usize>, Vec<T>) {
        let offsets: Vec<usize> = (0..lines).map(|i| 3 * i + (i % 2) * n).collect();
        let len = offsets.iter().max().unwrap() + n + 5;
        let base = std::iter::repeat_with(sample).take(len).collect();
        (offsets, base)
    }

    /// The definition, in u32 and without wrapping.
    fn want(w: &[u16], base: &[u16], offsets: &[usize], j: usize, init: u16) -> u32 {
        let r = w.len() - 1;
        let at = |i: usize| u32::from(base[offsets[i] + j]);
        let mut s = u32::from(init) + ((at(r) * u32::from(w[0])) >> 16);
        for (k, wk) in w.iter().enumerate().skip(1) {
            s += ((at(r - k) + at(r + k)) * u32::from(*wk)) >> 16;
        }
        s
    }

    #[test]
    fn every_isa_matches_the_definition_on_odd_lengths() {
        let mut next = rng(7);
        for n in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 97, 131, 257] {
            for r in [1, 2, 3, 7, 14] {
                let w = weights(r, &mut next);
                let (offsets, base) = buffer(2 * r + 1, n, || (next() % 256) as u16 * (1 << FRAC));
                let lines = Lines::new(&w, &base, &offsets, n);
                let bias = (next() % 128) as u16;
                for isa in Isa::available() {
                    let mut got = vec![0xFFFFu16; n + 3];
                    filter_u16(isa, &lines, &mut got);
                    let mut bytes = vec![MaybeUninit::uninit(); n];
                    let got8 = filter_u8(isa, &lines, bias, &mut bytes).to_vec();
                    for j in 0..n {
                        let s = want(&w, &base, &offsets, j, 0);
                        assert_eq!(u32::from(got[j]), s, "{isa:?} n {n} r {r} col {j}");
                        let b = want(&w, &base, &offsets, j, bias) >> FRAC;
                        assert_eq!(u32::from(got8[j]), b, "{isa:?} n {n} r {r} col {j} u8");
                    }
                    assert_eq!(got[n..], [0xFFFF; 3], "{isa:?}: wrote past n");
                }
            }
        }
    }

    #[test]
    fn f32_every_isa_matches_the_definition_on_odd_lengths() {
        let mut next = rng(11);
        let mut unit = move || (next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        for n in [1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 97, 131, 257] {
            for r in [0, 1, 2, 5, 10, 14] {
                let w: Vec<f32> = (0..=r).map(|_| unit() + 0.5).collect();
                let (offsets, base) = buffer(2 * r + 1, n, || 1000.0 * unit());
                let lines = Lines::new(&w, &base, &offsets, n);
                for isa in Isa::available() {
                    let mut got = vec![f32::NAN; n];
                    filter_f32(isa, &lines, &mut got);
                    let mut fresh = vec![MaybeUninit::uninit(); n];
                    let into = filter_f32_into(isa, &lines, &mut fresh).to_vec();
                    for j in 0..n {
                        // In f64, with each pair's sum's f32 rounding bounded.
                        let at = |i: usize| f64::from(base[offsets[i] + j]);
                        let mut want = at(r) * f64::from(w[0]);
                        let mut mag = want.abs();
                        for (k, wk) in w.iter().enumerate().skip(1) {
                            let (a, b, wk) = (at(r - k), at(r + k), f64::from(*wk));
                            want += (a + b) * wk;
                            mag += (a.abs() + b.abs()) * wk;
                        }
                        let bound = 4.0 * (r as f64 + 2.0) * f64::from(f32::EPSILON) * mag;
                        for v in [got[j], into[j]] {
                            let e = (f64::from(v) - want).abs();
                            assert!(e <= bound, "{isa:?} n {n} r {r} col {j}: {v} vs {want}");
                        }
                    }
                }
            }
        }
    }

    /// Two outputs from `2 r + 2` lines equal, bit for bit, each output
    /// filtered from its own `2 r + 1` lines, on every instruction set.
    #[test]
    fn f32_pairs_equal_single_outputs() {
        let mut next = rng(13);
        let mut unit = move || (next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        for n in [1, 2, 7, 8, 9, 23, 24, 25, 31, 47, 48, 49, 97, 131, 257] {
            for r in [0, 1, 2, 5, 10, 14] {
                let w: Vec<f32> = (0..=r).map(|_| unit() + 0.5).collect();
                let (offsets, base) = buffer(2 * r + 2, n, || 1000.0 * unit());
                let pair = PairLines::new(&w, &base, &offsets, n);
                let fresh = || vec![MaybeUninit::uninit(); n];
                for isa in Isa::available() {
                    let (mut a, mut b) = (vec![f32::NAN; n], vec![f32::NAN; n]);
                    filter_f32_pair(isa, &pair, &mut a, &mut b);
                    let (mut fa, mut fb) = (fresh(), fresh());
                    let (ia, ib) = filter_f32_pair_into(isa, &pair, &mut fa, &mut fb);
                    for (i, got) in [(0, [&a[..], &ia[..]]), (1, [&b[..], &ib[..]])] {
                        let mut want = vec![f32::NAN; n];
                        let one = Lines::new(&w, &base, &offsets[i..i + 2 * r + 1], n);
                        filter_f32(isa, &one, &mut want);
                        for g in got {
                            let same = g.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits());
                            assert!(same, "{isa:?} n {n} r {r} output {i}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn extremes_fit_without_wrapping() {
        // 255 everywhere: the sums reach their bound and must narrow to 255.
        for r in [1, 5, 14, 30] {
            let mut next = rng(r as u64 + 1);
            let w = weights(r, &mut next);
            let base = vec![255u16 << FRAC; 200];
            let offsets: Vec<usize> = (0..2 * r + 1).collect();
            let lines = Lines::new(&w, &base, &offsets, 100);
            let bias = (1 << (FRAC - 1)) + (r as u16 + 1);
            for isa in Isa::available() {
                let mut bytes = vec![MaybeUninit::uninit(); 100];
                let got = filter_u8(isa, &lines, bias, &mut bytes);
                assert!(got.iter().all(|v| *v == 255), "{isa:?} r {r}: {got:?}");
            }
        }
    }

    /// The u8 pairs equal two single outputs byte for byte, on every
    /// instruction set, odd lengths and radii, two biases.
    #[test]
    fn u8_pairs_equal_single_outputs() {
        let mut next = rng(17);
        for n in [1, 2, 15, 16, 17, 31, 32, 33, 47, 65, 131, 257] {
            for r in [0, 1, 3, 7, 14] {
                let w = weights(r, &mut next);
                let (offsets, base) = buffer(2 * r + 2, n, || (next() % 256) as u16 * (1 << FRAC));
                let pair = PairLines::new(&w, &base, &offsets, n);
                let fresh = || vec![MaybeUninit::uninit(); n];
                for bias in [0, (next() % 128) as u16] {
                    for isa in Isa::available() {
                        let (mut a, mut b) = (fresh(), fresh());
                        let (a, b) = filter_u8_pair(isa, &pair, bias, &mut a, &mut b);
                        for (i, got) in [(0, a), (1, b)] {
                            let one = Lines::new(&w, &base, &offsets[i..i + 2 * r + 1], n);
                            let mut want = vec![MaybeUninit::uninit(); n];
                            let want = filter_u8(isa, &one, bias, &mut want);
                            assert_eq!(got, want, "{isa:?} n {n} r {r} bias {bias} output {i}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "2 weights need 4 lines")]
    fn pairs_need_one_line_more() {
        let base = [0f32; 10];
        let _ = PairLines::new(&[0.5, 0.25], &base, &[0, 1, 2], 5);
    }

    #[test]
    #[should_panic(expected = "past the buffer")]
    fn lines_outside_the_buffer_are_refused() {
        let base = [0u16; 10];
        let _ = Lines::new(&[65535, 0], &base, &[0, 1, 2], 9);
    }
}
