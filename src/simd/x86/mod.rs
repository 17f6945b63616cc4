//! x86-64: AVX2 + FMA ([`Avx2`], vectors [`F8`]) and AVX-512F ([`Avx512`],
//! vectors [`F16`], with [`F8`] and scalars for narrower strips).
//!
//! The tokens are made only by [`Avx2::try_new`] and [`Avx512::try_new`],
//! after the CPU was checked for their instructions, and [`Simd::vectorize`]
//! enters the operation through a trampoline compiled for them.

use std::mem::MaybeUninit;

use super::pairs::WithPairs;
use super::{portable, sealed, Isa, Narrow, Portable, Quads, Simd, Strips, WithSimd};
use crate::image::Sample;

mod blocks;
mod bytes;
pub(crate) mod chansum;
mod f32s;
pub mod lanes;
mod lut;
mod matrix3;
mod matrix3_512;
mod matrix3_q;
mod matrix3_q256;
pub(crate) mod moments;
pub(crate) mod symfir;
pub(crate) mod widen;
mod words;

pub use f32s::{F16, F8};
pub(crate) use lut::{map_bytes_avx2, map_bytes_vbmi};
pub(crate) use matrix3::{groups as matrix3_groups, groups4 as matrix3_groups4};
pub(crate) use matrix3_q::{fixed_groups as matrix3_fixed_groups, Tables as Matrix3Tables};

/// Proof that the CPU has AVX2 and FMA.
#[derive(Debug, Clone, Copy)]
pub struct Avx2 {
    _private: (),
}

impl Avx2 {
    /// The token, where the CPU has AVX2 and FMA.
    #[inline]
    pub fn try_new() -> Option<Avx2> {
        let ok = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        ok.then_some(Avx2 { _private: () })
    }
}

/// Proof that the CPU has AVX-512F, AVX2 and FMA.
#[derive(Debug, Clone, Copy)]
pub struct Avx512 {
    _private: (),
}

impl Avx512 {
    /// The token, where the CPU has AVX-512F, AVX2 and FMA.
    #[inline]
    pub fn try_new() -> Option<Avx512> {
        let ok = Avx2::try_new().is_some() && is_x86_feature_detected!("avx512f");
        ok.then_some(Avx512 { _private: () })
    }

    /// The AVX2 + FMA token, which this one implies.
    #[inline(always)]
    pub fn avx2(self) -> Avx2 {
        Avx2 { _private: () }
    }
}

impl sealed::Sealed for Avx2 {}
impl sealed::Sealed for Avx512 {}

/// `op` compiled for AVX2 + FMA.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_entry<Op: WithSimd>(t: Avx2, op: Op) -> Op::Output {
    op.with_simd(t)
}

/// `op` compiled for AVX-512F, AVX2 and FMA.
///
/// # Safety
/// The CPU must have AVX-512F, AVX2 and FMA.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn avx512_entry<Op: WithSimd>(t: Avx512, op: Op) -> Op::Output {
    op.with_simd(t)
}

impl Simd for Avx2 {
    const ISA: Isa = Isa::Avx2;

    #[inline(always)]
    fn vectorize<Op: WithSimd>(self, op: Op) -> Op::Output {
        // SAFETY: an `Avx2` is only made where the CPU has AVX2 and FMA.
        unsafe { avx2_entry(self, op) }
    }

    /// 16 columns at a time, then 8, then one.
    #[inline(always)]
    fn strips<F: Strips>(self, m: usize, f: &mut F) {
        let mut j = 0;
        while j + 16 <= m {
            f.strip::<F8, 2>(self, j);
            j += 16;
        }
        while j + 8 <= m {
            f.strip::<F8, 1>(self, j);
            j += 8;
        }
        while j < m {
            f.strip::<f32, 1>(Portable, j);
            j += 1;
        }
    }

    #[inline(always)]
    fn transpose_in<const C: usize>(self, rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        let (k1, i1) = f32s::tiles::<F8, C>(self, rows, row_len, x, m);
        portable::transpose_in_from::<C>(rows, row_len, x, m, k1, i1);
    }

    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        self,
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        let (k1, i1) = f32s::tiles_out::<F8, D, C>(self, y, m, dst, row_len);
        portable::transpose_out_from::<D, C>(y, m, dst, row_len, k1, i1);
    }

    #[inline(always)]
    fn interleave_quads<'a, U: Narrow, const C: usize, const N: usize>(
        self,
        rows: [&'a mut [MaybeUninit<U>]; 2],
        src: &Quads<'_, N>,
        q: usize,
        alpha: f32,
    ) -> [&'a mut [U]; 2] {
        bytes::interleave_quads::<U, C, N>(self, rows, src, q, alpha)
    }

    #[inline(always)]
    fn with_pairs<Op: WithPairs>(self, op: Op) -> Op::Output {
        op.with::<bytes::P16>(self)
    }
}

impl Simd for Avx512 {
    const ISA: Isa = Isa::Avx512;

    #[inline(always)]
    fn vectorize<Op: WithSimd>(self, op: Op) -> Op::Output {
        // SAFETY: an `Avx512` is only made where the CPU has AVX-512F, AVX2
        // and FMA.
        unsafe { avx512_entry(self, op) }
    }

    /// 32 columns at a time, then 16, 8 and one.
    #[inline(always)]
    fn strips<F: Strips>(self, m: usize, f: &mut F) {
        let mut j = 0;
        while j + 32 <= m {
            f.strip::<F16, 2>(self, j);
            j += 32;
        }
        while j + 16 <= m {
            f.strip::<F16, 1>(self, j);
            j += 16;
        }
        while j + 8 <= m {
            f.strip::<F8, 1>(self.avx2(), j);
            j += 8;
        }
        while j < m {
            f.strip::<f32, 1>(Portable, j);
            j += 1;
        }
    }

    #[inline(always)]
    fn transpose_in<const C: usize>(self, rows: &[f32], row_len: usize, x: &mut [f32], m: usize) {
        let (k1, i1) = f32s::tiles::<F16, C>(self, rows, row_len, x, m);
        portable::transpose_in_from::<C>(rows, row_len, x, m, k1, i1);
    }

    #[inline(always)]
    fn transpose_out<D: Sample, const C: usize>(
        self,
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    ) {
        let (k1, i1) = f32s::tiles_out::<F16, D, C>(self, y, m, dst, row_len);
        portable::transpose_out_from::<D, C>(y, m, dst, row_len, k1, i1);
    }

    #[inline(always)]
    fn interleave_quads<'a, U: Narrow, const C: usize, const N: usize>(
        self,
        rows: [&'a mut [MaybeUninit<U>]; 2],
        src: &Quads<'_, N>,
        q: usize,
        alpha: f32,
    ) -> [&'a mut [U]; 2] {
        bytes::interleave_quads::<U, C, N>(self.avx2(), rows, src, q, alpha)
    }

    #[inline(always)]
    fn with_pairs<Op: WithPairs>(self, op: Op) -> Op::Output {
        op.with::<bytes::P16>(self.avx2())
    }
}

/// [`crate::simd::prefetch`] on x86-64 (SSE, in every x86-64 CPU).
#[inline(always)]
pub(super) fn prefetch<T>(s: &[T], from: usize, bytes: usize) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let base = s.as_ptr().wrapping_add(from) as *const i8;
    let left = std::mem::size_of_val(s).saturating_sub(from * std::mem::size_of::<T>());
    let bytes = bytes.min(left);
    let mut o = 0;
    while o < bytes {
        // SAFETY: a prefetch cannot fault, and the address stays within the slice.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(o)) };
        o += 64;
    }
}
