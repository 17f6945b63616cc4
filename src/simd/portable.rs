//! The portable implementation, on every CPU: 4-lane f32 vectors
//! ([`F4`], the `wide` crate's `f32x4`: NEON on aarch64, SSE2 on x86-64,
//! plain arrays elsewhere) for the strips, scalars for their remainders,
//! and plain Rust (which the compiler vectorises where it can) for the rest.
//! The other implementations use its functions for their remainders.
//! `FILTERCTL_SIMD=portable` makes [`super::Isa::detect`] choose it on any
//! CPU, so that x86 runs (and CI tests) the code aarch64 runs.

use std::mem::MaybeUninit;
use std::ops::Range;

use wide::{bytemuck, f32x4, i32x4};

use super::{mem, sealed, Isa, Narrow, Quads, Simd, Strips, Vf32, WithSimd};
use crate::image::Sample;

/// The token of the portable implementation. Every CPU runs it, so anyone
/// may make one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Portable;

impl sealed::Sealed for Portable {}
impl sealed::Sealed for f32 {}
impl sealed::Sealed for F4 {}

/// 4 f32 lanes for the portable token: `wide`'s `f32x4`, whose operations
/// compile to NEON on aarch64 and SSE2 on x86-64.
pub type F4 = f32x4;

/// Lane by lane, exactly as the scalars below (a separate multiply and add
/// for `fma`, `o` where either is NaN for `max`, half to even for `round`).
impl Vf32 for F4 {
    type Token = Portable;
    const N: usize = 4;
    #[inline(always)]
    fn splat(_: Portable, v: f32) -> Self {
        f32x4::splat(v)
    }
    #[inline(always)]
    fn load(_: Portable, s: &[f32]) -> Self {
        let a: [f32; 4] = s[..4].try_into().expect("4 samples");
        f32x4::new(a)
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        s[..4].copy_from_slice(&self.to_array());
    }
    #[inline(always)]
    fn store_uninit(self, s: &mut [MaybeUninit<f32>]) {
        for (d, v) in s[..4].iter_mut().zip(self.to_array()) {
            d.write(v);
        }
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
    fn div(self, o: Self) -> Self {
        self / o
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // A comparison and a select: `o` where either is NaN (`wide`'s own
        // `max` differs between targets there).
        self.simd_gt(o).select(self, o)
    }
    #[inline(always)]
    fn round(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn mul_pow2(self, n: Self) -> Self {
        // 2^n built from its exponent bits; `n` holds integers in -125..=127.
        let e = (n.round_int() + i32x4::splat(127)) << 23;
        self * bytemuck::cast::<i32x4, f32x4>(e)
    }
}

/// A scalar is a vector of one lane.
impl Vf32 for f32 {
    type Token = Portable;
    const N: usize = 1;
    #[inline(always)]
    fn splat(_: Portable, v: f32) -> Self {
        v
    }
    #[inline(always)]
    fn load(_: Portable, s: &[f32]) -> Self {
        s[0]
    }
    #[inline(always)]
    fn store(self, s: &mut [f32]) {
        s[0] = self;
    }
    #[inline(always)]
    fn store_uninit(self, s: &mut [MaybeUninit<f32>]) {
        s[0].write(self);
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
    fn div(self, o: Self) -> Self {
        self / o
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        // `o` where either is NaN, as the x86 instruction does.
        if self > o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn round(self) -> Self {
        self.round_ties_even()
    }
    #[inline(always)]
    fn mul_pow2(self, n: Self) -> Self {
        // 2^n built from its exponent bits; `n` is an integer in -125..=127.
        self * f32::from_bits(((n as i32 + 127) as u32) << 23)
    }
}

impl Simd for Portable {
    const ISA: Isa = Isa::Portable;

    #[inline(always)]
    fn vectorize<Op: WithSimd>(self, op: Op) -> Op::Output {
        op.with_simd(self)
    }

    /// Eight columns at a time (two [`F4`]), then four, then one.
    #[inline(always)]
    fn strips<F: Strips>(self, m: usize, f: &mut F) {
        let mut j = 0;
        while j + 8 <= m {
            f.strip::<F4, 2>(self, j);
            j += 8;
        }
        while j + 4 <= m {
            f.strip::<F4, 1>(self, j);
            j += 4;
        }
        while j < m {
            f.strip::<f32, 1>(self, j);
            j += 1;
        }
    }

    #[inline(always)]
    fn transpose_in<const C: usize>(self, rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        transpose_in_from::<C>(rows, row_len, x, m, 0, 0);
    }

    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        self,
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        transpose_out_from::<D, C>(y, m, dst, row_len, 0, 0);
    }

    #[inline(always)]
    fn interleave_quads<'a, U: Narrow, const C: usize, const N: usize>(
        self,
        rows: [&'a mut [MaybeUninit<U>]; 2],
        src: &Quads<'_, N>,
        q: usize,
        alpha: f32,
    ) -> [&'a mut [U]; 2] {
        store_narrowed::<U, C, N>(rows, src, q, alpha)
    }
}

/// `transpose_in` for rows from `k0` and pixels from `i0` on (the rest is done).
#[inline(always)]
pub(super) fn transpose_in_from<const C: usize>(
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
pub(super) fn transpose_out_from<D: Sample, const C: usize>(
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

/// `interleave_quads`: each colour row narrowed on its own (a contiguous
/// loop the compiler vectorises), then interleaved.
#[inline(always)]
pub(super) fn store_narrowed<'a, U: Narrow, const C: usize, const N: usize>(
    rows: [&'a mut [MaybeUninit<U>]; 2],
    src: &Quads<'_, N>,
    q: usize,
    alpha: f32,
) -> [&'a mut [U]; 2] {
    assert!(C == 3 || C == 4);
    assert!(q <= N && rows.iter().all(|r| r.len() == 2 * q * C));
    let mut narrow = [[[U::default(); N]; 2]; 3];
    let a = U::narrow(alpha);
    let [r0, r1] = rows;
    for (py, row) in [&mut *r0, &mut *r1].into_iter().enumerate() {
        for (nc, sc) in narrow.iter_mut().zip(&src[py]) {
            for (n, s) in nc.iter_mut().zip(sc) {
                for (d, v) in n.iter_mut().zip(s.iter()) {
                    *d = U::narrow(*v);
                }
            }
        }
        let interleave = |row: &mut [MaybeUninit<U>], c: usize| {
            for (i, quad) in row.chunks_exact_mut(2 * c).take(q).enumerate() {
                for (px, d) in quad.chunks_exact_mut(c).enumerate() {
                    d[0].write(narrow[0][px][i]);
                    d[1].write(narrow[1][px][i]);
                    d[2].write(narrow[2][px][i]);
                    if c == 4 {
                        d[3].write(a);
                    }
                }
            }
        };
        if C == 4 {
            interleave(row, 4)
        } else {
            interleave(row, 3)
        }
    }
    // SAFETY: each row is `2 q C` samples (asserted above), `C` is 3 or 4
    // (the callers' const), and the loop wrote all `C` samples of both
    // pixels of each of the `q` quads.
    unsafe { [mem::assume_init_mut(r0), mem::assume_init_mut(r1)] }
}

/// Stores quads `range` of `src`, one sample at a time, into `rows`
/// (which start at the range's first quad and are `2 C` samples per quad),
/// and returns them written. (Only the x86 stores have such remainders.)
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
pub(super) fn store_quads<'a, U: Narrow, const C: usize, const N: usize>(
    rows: [&'a mut [MaybeUninit<U>]; 2],
    src: &Quads<'_, N>,
    range: Range<usize>,
    a: U,
) -> [&'a mut [U]; 2] {
    assert!(range.end <= N);
    store_quads_with::<U, C>(rows, range, a, |py, c, px, i| U::narrow(src[py][c][px][i]))
}

/// Stores quads `range`, one sample at a time: colour `c` of pixel `px` of
/// quad `i` of row `py` is `value(py, c, px, i)`.
#[inline(always)]
fn store_quads_with<U: Sample, const C: usize>(
    rows: [&mut [MaybeUninit<U>]; 2],
    range: Range<usize>,
    a: U,
    value: impl Fn(usize, usize, usize, usize) -> U,
) -> [&mut [U]; 2] {
    assert!(C == 3 || C == 4);
    assert!(rows.iter().all(|r| r.len() == 2 * range.len() * C));
    let [r0, r1] = rows;
    for (py, row) in [&mut *r0, &mut *r1].into_iter().enumerate() {
        for (i, quad) in range.clone().zip(row.chunks_exact_mut(2 * C)) {
            for (px, d) in quad.chunks_exact_mut(C).enumerate() {
                for (c, d) in d[..3].iter_mut().enumerate() {
                    d.write(value(py, c, px, i));
                }
                if C == 4 {
                    d[3].write(a);
                }
            }
        }
    }
    // SAFETY: each row holds `2 C` samples for each quad of the range
    // (asserted above), and the loop wrote every sample of every quad.
    unsafe { [mem::assume_init_mut(r0), mem::assume_init_mut(r1)] }
}
