//! CPU SIMD: the one place for vector instructions, and for `unsafe` on the
//! CPU paths.
//!
//! The pattern is the `pulp` crate's. Operations are written once, generic
//! over a token type `S:` [`Simd`] whose methods are all safe. A token can
//! only be made after the CPU has been checked for its instruction set, so
//! holding one proves the instructions exist. [`dispatch`] (or
//! [`Isa::vectorize`]) detects the instruction set and calls the operation's
//! [`WithSimd::with_simd`] with the token, through a trampoline compiled for
//! that set (`#[target_feature]`): the operation's generic code, marked
//! `#[inline(always)]`, is inlined into the trampoline and compiled with the
//! set's features. A function not inlined there runs with the build's
//! baseline features (still correct, only slower).
//!
//! Vectors of f32 lanes ([`Vf32`]) are made from the token of their
//! instruction set ([`Vf32::Token`]); their arithmetic is safe for the same
//! reason. Column-strip walks ([`Simd::strips`], [`Simd::strips_into`]),
//! block transposes and the narrowing, interleaving stores of colour planes
//! ([`Simd::interleave_quads`]) are the token's methods.
//!
//! Implementations, one module each, side by side: `portable` (4-lane
//! vectors of the `wide` crate, NEON on aarch64 and SSE2 on x86-64, and
//! plain Rust; every CPU), and `x86` (AVX2 + FMA and AVX-512F). aarch64
//! runs `portable`; `FILTERCTL_SIMD=portable` makes x86 run it too, so it
//! is tested there. [`blocks`] holds the cache-blocked image
//! transposes, [`lanes`] the integer vectors with lane-wise min and max
//! that sorting networks are made of, [`pairs`] the integer vectors of
//! byte pairs that colour-filter-array filters use, [`moments`] the exact sums of
//! integer samples, and [`mem`] the safe helpers for
//! uninitialised output buffers and slice casts.
//!
//! Every `unsafe` block here carries a `// SAFETY:` note.
//!
//! [`Simd`]: crate::simd::Simd
//! [`dispatch`]: crate::simd::dispatch
//! [`Isa`]: crate::simd::Isa
//! [`Isa::vectorize`]: crate::simd::Isa::vectorize
//! [`WithSimd::with_simd`]: crate::simd::WithSimd::with_simd
//! [`Vf32`]: crate::simd::Vf32
//! [`Vf32::Token`]: crate::simd::Vf32::Token
//! [`Simd::strips`]: crate::simd::Simd::strips
//! [`Simd::strips_into`]: crate::simd::Simd::strips_into
//! [`Simd::interleave_quads`]: crate::simd::Simd::interleave_quads
//! [`mem`]: crate::simd::mem
//! [`blocks`]: crate::simd::blocks
//! [`lanes`]: crate::simd::lanes
//! [`pairs`]: crate::simd::pairs
//! [`moments`]: crate::simd::moments

use std::fmt::Debug;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crate::image::Sample;

pub mod blocks;
pub mod chansum;
pub mod lanes;
pub mod lut;
pub mod matrix3;
pub mod mem;
pub mod moments;
pub mod pairs;
mod portable;
pub mod symfir;
pub mod widen;
#[cfg(target_arch = "x86_64")]
pub mod x86;

#[cfg(test)]
mod tests;

pub use portable::{Portable, F4};

mod sealed {
    /// Only this module implements [`super::Simd`] and [`super::Vf32`].
    pub trait Sealed {}
}

/// Instruction sets with their own compiled code, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Portable vectors (4 lanes: NEON on aarch64, SSE2 on x86-64) and
    /// plain Rust for the build's baseline target: every CPU runs it.
    Portable,
    /// x86-64 AVX2 + FMA: 256-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// x86-64 AVX-512F (with AVX2 and FMA): 512-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// The best instruction set this CPU runs.
    pub fn detect() -> Isa {
        Isa::detect_up_to(usize::MAX)
    }

    /// The best instruction set this CPU runs whose vectors are at most
    /// `bits` wide (see [`Isa::vector_bits`]), and at most what
    /// `FILTERCTL_SIMD` allows ([`Isa::env_cap`]).
    pub fn detect_up_to(bits: usize) -> Isa {
        let bits = bits.min(Isa::env_cap());
        #[cfg(target_arch = "x86_64")]
        {
            if bits >= 512 && x86::Avx512::try_new().is_some() {
                return Isa::Avx512;
            }
            if bits >= 256 && x86::Avx2::try_new().is_some() {
                return Isa::Avx2;
            }
        }
        let _ = bits;
        Isa::Portable
    }

    /// The widest vectors `FILTERCTL_SIMD` allows [`Isa::detect`] to
    /// choose, in bits, read once: `portable` (0: [`Isa::Portable`] on
    /// every CPU, as aarch64 runs it), `avx2` (256), `avx512` or unset (no
    /// limit). Another value is ignored, with a warning.
    pub fn env_cap() -> usize {
        static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *CAP.get_or_init(|| {
            // A value that is not text (invalid UTF-8) is unknown too.
            let v = std::env::var_os("FILTERCTL_SIMD");
            let cap = match &v {
                Some(os) => os.to_str().and_then(|t| Isa::cap_of(Some(t))),
                None => Isa::cap_of(None),
            };
            cap.unwrap_or_else(|| {
                let v = v.unwrap_or_default();
                log::warn!("FILTERCTL_SIMD={v:?} is not portable, avx2 or avx512; ignored");
                usize::MAX
            })
        })
    }

    /// The vector width cap a `FILTERCTL_SIMD` value names (`None`: unknown).
    fn cap_of(v: Option<&str>) -> Option<usize> {
        match v {
            Some("portable") => Some(0),
            Some("avx2") => Some(256),
            Some("avx512") | Some("") | None => Some(usize::MAX),
            Some(_) => None,
        }
    }

    /// The width of the set's widest f32 vectors in bits (128 for
    /// [`Isa::Portable`]'s [`Portable`] vectors).
    pub fn vector_bits(self) -> usize {
        match self {
            Isa::Portable => 128,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => 256,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => 512,
        }
    }

    /// Every instruction set this CPU runs, lowest first (for tests and
    /// comparisons).
    pub fn available() -> Vec<Isa> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut v = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if x86::Avx2::try_new().is_some() {
                v.push(Isa::Avx2);
            }
            if x86::Avx512::try_new().is_some() {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    /// Runs `op` with this instruction set's token, or, where the CPU lacks
    /// it, with the best set below it that the CPU runs.
    #[inline]
    pub fn vectorize<Op: WithSimd>(self, op: Op) -> Op::Output {
        #[cfg(target_arch = "x86_64")]
        {
            if self >= Isa::Avx512 {
                if let Some(t) = x86::Avx512::try_new() {
                    return t.vectorize(op);
                }
            }
            if self >= Isa::Avx2 {
                if let Some(t) = x86::Avx2::try_new() {
                    return t.vectorize(op);
                }
            }
        }
        Portable.vectorize(op)
    }
}

/// Runs `op` with the best instruction set this CPU runs.
#[inline]
pub fn dispatch<Op: WithSimd>(op: Op) -> Op::Output {
    Isa::detect().vectorize(op)
}

/// Code generic over an instruction set: what [`dispatch`] runs.
pub trait WithSimd {
    /// What the code returns.
    type Output;
    /// Runs the code with `simd`'s instructions. Implementations should be
    /// `#[inline(always)]` (and so should what they call), so that the code
    /// is compiled into the instruction set's trampoline.
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output;
}

/// An instruction set's token. Holding one proves that the CPU runs the
/// set; every method is safe.
pub trait Simd:
    sealed::Sealed + blocks::BlockTranspose + Copy + Send + Sync + Debug + 'static
{
    /// The instruction set.
    const ISA: Isa;

    /// Runs `op` compiled for this instruction set.
    fn vectorize<Op: WithSimd>(self, op: Op) -> Op::Output;

    /// Cuts columns `0..m` into strips of adjacent columns, left to right,
    /// each as wide as the set's vectors allow, and calls `f` on each.
    fn strips<F: Strips>(self, m: usize, f: &mut F);

    /// `x[i * m + k * C + c] = rows[k * row_len + i * C + c]` for the
    /// `m / C` rows of `rows` (each `row_len = width * C` long): rows of
    /// pixels of `C` channels become columns.
    fn transpose_in<const C: usize>(self, rows: &[f32], row_len: usize, x: &mut [f32], m: usize);

    /// The inverse of [`Simd::transpose_in`], converting into `dst` as
    /// [`Sample::from_f32`] does.
    fn transpose_out<D: Sample, const C: usize>(
        self,
        y: &[f32],
        m: usize,
        dst: &mut [D],
        row_len: usize,
    );

    /// Stores quads `0..q` of two rows of colour planes as interleaved
    /// pixels of `C` channels (3: RGB, 4: RGBA with alpha `alpha`),
    /// narrowed by [`Narrow::narrow`]. `src[row][colour][parity]` holds a
    /// colour of the even (parity 0) or odd (parity 1) pixels of the row,
    /// one value per quad (2x2 block), so quad `i` of a row is its pixels
    /// `2i` and `2i + 1`. Each row must be `2 q C` samples long; all of them
    /// are written and returned as such.
    fn interleave_quads<'a, U: Narrow, const C: usize, const N: usize>(
        self,
        rows: [&'a mut [MaybeUninit<U>]; 2],
        src: &Quads<'_, N>,
        q: usize,
        alpha: f32,
    ) -> [&'a mut [U]; 2];

    /// Runs `op` with this set's [`pairs::BytePairs`] vectors:
    /// [`pairs::Pairs16`] here (plain arrays), AVX2 registers on AVX2 and
    /// above.
    #[inline(always)]
    fn with_pairs<Op: pairs::WithPairs>(self, op: Op) -> Op::Output {
        op.with::<pairs::Pairs16>(())
    }

    /// [`Simd::strips`] over a block of rows of `m` columns (`out`) that
    /// each strip writes ([`StripsInto`]), row by row: returns the block,
    /// every sample written. Panics if a strip does not write each of its
    /// rows once.
    #[inline(always)]
    fn strips_into<'a, F: StripsInto>(
        self,
        m: usize,
        out: &'a mut [MaybeUninit<f32>],
        f: &mut F,
    ) -> &'a mut [f32] {
        let rows = out.len().checked_div(m).unwrap_or(0);
        assert_eq!(rows * m, out.len(), "strips_into: a block of whole rows");
        let mut walk = IntoWalk { f, out, m, next: 0 };
        self.strips(m, &mut walk);
        let IntoWalk { out, next, .. } = walk;
        assert_eq!(next, m, "strips_into: columns left out");
        // SAFETY: every strip, left to right from column 0 (checked in
        // `IntoWalk::strip`) to `m` (checked above), wrote its `K` vectors
        // of every row (`IntoWalk::strip` checks that `StripOut` went
        // through all rows and finished the last), so all of `out`'s
        // `rows * m` samples are initialised.
        unsafe { mem::assume_init_mut(out) }
    }
}

/// Work on strips of adjacent columns: [`Simd::strips`] calls
/// [`Strips::strip`] on each.
pub trait Strips {
    /// Works on the `K * V::N` columns from `j`, as `K` vectors `V`; `t`
    /// makes the vectors.
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize);
}

/// Work on strips of adjacent columns that writes a block of rows:
/// [`Simd::strips_into`] calls [`StripsInto::strip_into`] on each.
pub trait StripsInto {
    /// As [`Strips::strip`]; stores the strip's columns of each row of the
    /// block, top to bottom, through `out` ([`StripOut::put`]: `K` vectors
    /// per row).
    fn strip_into<V: Vf32, const K: usize>(
        &mut self,
        t: V::Token,
        j: usize,
        out: &mut StripOut<'_, V, K>,
    );
}

/// The walk of [`Simd::strips_into`]: checks that the strips follow each
/// other and that each stores all of its rows.
struct IntoWalk<'f, 'o, F> {
    f: &'f mut F,
    out: &'o mut [MaybeUninit<f32>],
    m: usize,
    /// The next strip's first column.
    next: usize,
}

impl<F: StripsInto> Strips for IntoWalk<'_, '_, F> {
    #[inline(always)]
    fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
        let width = K * V::N;
        assert!(
            j == self.next && j + width <= self.m,
            "strips_into: strip {j}"
        );
        self.next = j + width;
        let mut out = StripOut::<V, K> {
            rest: &mut *self.out,
            win: &mut [],
            q: 0,
            m: self.m,
            j,
            _v: PhantomData,
        };
        self.f.strip_into(t, j, &mut out);
        let done = out.rest.is_empty() && out.q == 0;
        assert!(done, "strips_into: rows left out");
    }
}

/// The rows of one strip of a block, stored one vector after another (see
/// [`StripsInto`]).
pub struct StripOut<'o, V, const K: usize> {
    /// The rows after the current one.
    rest: &'o mut [MaybeUninit<f32>],
    /// The strip's columns of the current row.
    win: &'o mut [MaybeUninit<f32>],
    /// Vectors of the current row stored so far (0: the row is done, or
    /// none was started).
    q: usize,
    m: usize,
    j: usize,
    _v: PhantomData<V>,
}

impl<V: Vf32, const K: usize> StripOut<'_, V, K> {
    /// Stores the strip's next vector: vectors `0..K` of the first row (left
    /// to right), then of the next row, and so on. Each is stored as soon
    /// as it is put, as a plain store would be. Panics past the last row.
    #[inline(always)]
    pub fn put(&mut self, v: V) {
        if self.q == 0 {
            let (row, rest) = std::mem::take(&mut self.rest).split_at_mut(self.m);
            self.win = &mut row[self.j..self.j + K * V::N];
            self.rest = rest;
        }
        v.store_uninit(&mut self.win[self.q * V::N..]);
        self.q = if self.q + 1 == K { 0 } else { self.q + 1 };
    }
}

/// A vector of f32 lanes. A vector is made from its instruction set's token
/// ([`Vf32::Token`]), so holding one proves that its instructions run.
pub trait Vf32: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The token that makes these vectors.
    type Token: Copy;
    /// Lanes.
    const N: usize;
    /// `v` in every lane.
    fn splat(t: Self::Token, v: f32) -> Self;
    /// The first `N` samples of `s`.
    fn load(t: Self::Token, s: &[f32]) -> Self;
    /// Into the first `N` samples of `s`.
    fn store(self, s: &mut [f32]);
    /// Into the first `N` samples of `s`, which may be uninitialised.
    fn store_uninit(self, s: &mut [MaybeUninit<f32>]);
    /// `self * o`, lane by lane.
    fn mul(self, o: Self) -> Self;
    /// `self + o`.
    fn add(self, o: Self) -> Self;
    /// `self - o`.
    fn sub(self, o: Self) -> Self;
    /// `self * b + c`: fused (one rounding) where the set has FMA, a
    /// multiply and an add on [`Portable`]'s scalars.
    fn fma(self, b: Self, c: Self) -> Self;
    /// `self / o`, correctly rounded.
    fn div(self, o: Self) -> Self;
    /// The larger of `self` and `o`, lane by lane (`o` where either is NaN).
    fn max(self, o: Self) -> Self;
    /// Rounded to the nearest integer, half to even.
    fn round(self) -> Self;
    /// `self * 2^n` for lanes of `n` that hold integers in `-125..=127`
    /// and lanes of `self` that are normal with the result normal
    /// (anything else is unspecified).
    fn mul_pow2(self, n: Self) -> Self;
}

/// `2^x` for `x <= 0`, lane by lane, with a relative error below 5e-7
/// for `x >= -124`; below that, `2^-124` (4.7e-38), which is 0 next to any
/// weight a filter keeps. `x = n + f` with `n` the nearest integer, a
/// degree-5 polynomial (fitted for relative error) for `2^f` on
/// `|f| <= 1/2`, and `n` added to the exponent. Positive `x` is not handled.
#[inline(always)]
pub fn exp2_nonpositive<V: Vf32>(t: V::Token, x: V) -> V {
    let x = x.max(V::splat(t, -124.0));
    let n = x.round();
    let f = x.sub(n);
    let mut p = V::splat(t, 1.291_567e-3);
    for c in [9.668_531e-3, 5.551_689e-2, 0.240_222_65, 0.693_146_47, 1.0] {
        p = p.fma(f, V::splat(t, c));
    }
    p.mul_pow2(n)
}

/// The first `V::N` samples of `s`, converted to f32 (`V::N` <= 16).
#[inline(always)]
pub fn load_samples<V: Vf32, S: Sample>(t: V::Token, s: &[S]) -> V {
    match mem::cast_slice::<S, f32>(s) {
        Some(f) => V::load(t, f),
        None => {
            let mut a = [0f32; 16];
            for (d, v) in a[..V::N].iter_mut().zip(&s[..V::N]) {
                *d = v.to_f32();
            }
            V::load(t, &a)
        }
    }
}

/// `v` into the first `V::N` samples of `d`, rounded and saturated as
/// [`Sample::from_f32`] does (`V::N` <= 16).
#[inline(always)]
pub fn store_samples<V: Vf32, D: Sample>(v: V, d: &mut [D]) {
    match mem::cast_slice_mut::<D, f32>(d) {
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

/// A row of colour planes for [`Simd::interleave_quads`]:
/// `[row][colour][column parity]`, `N` quads each.
pub type Quads<'a, const N: usize> = [[[&'a [f32; N]; 2]; 3]; 2];

/// Output samples with a narrowing from f32 that is exactly
/// [`Sample::from_f32`] (round half to even, saturate, NaN to 0) but
/// inlines to a few instructions: `round_ties_even` is a library call on
/// x86-64 without SSE4.1.
pub trait Narrow: Sample {
    /// `v` narrowed.
    fn narrow(v: f32) -> Self;
}

/// 2^23: adding it to a float in [0, 2^23) rounds it to an integer, half
/// to even (the default rounding mode), and leaves that integer in the low
/// mantissa bits, so no float-to-int conversion is needed.
const MAGIC: f32 = 8_388_608.0;

// `max(0).min(hi)`, not `clamp`: max/min return the number when the
// other operand is NaN, so NaN narrows to 0, as `from_f32` and OpenCL do.
#[allow(clippy::manual_clamp)]
impl Narrow for u8 {
    #[inline(always)]
    fn narrow(v: f32) -> Self {
        (v.max(0.0).min(255.0) + MAGIC).to_bits() as u8
    }
}

#[allow(clippy::manual_clamp)]
impl Narrow for u16 {
    #[inline(always)]
    fn narrow(v: f32) -> Self {
        (v.max(0.0).min(65535.0) + MAGIC).to_bits() as u16
    }
}

impl Narrow for f32 {
    #[inline(always)]
    fn narrow(v: f32) -> Self {
        v
    }
}

/// Asks for the cache lines of `s` from element `from` on, up to `bytes`
/// bytes and never past its end (a hint: it changes no values, and does
/// nothing where the target has no prefetch instruction).
#[inline(always)]
pub fn prefetch<T>(s: &[T], from: usize, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    x86::prefetch(s, from, bytes);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, from, bytes);
}
