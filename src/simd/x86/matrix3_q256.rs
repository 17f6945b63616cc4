//! [`crate::simd::matrix3::rgb_fixed`] with AVX2: 32 interleaved u8 RGB
//! pixels (96 bytes) per step, computed in place as
//! [`super::matrix3_q`] does with AVX-512 VBMI, but with `vpshufb`, which
//! moves bytes only within a 128-bit lane. A step is three blocks of 32
//! outputs; a block's vector `v` (0..4) computes outputs `4v..4v + 4` of
//! the block in its low 128-bit lane and `16 + 4v..16 + 4v + 4` in its
//! high one, so that two signed and one unsigned saturating pack of the
//! four vectors leave the block's 32 bytes in order. Each lane reads 16
//! source bytes that hold its outputs' pixels (two 16-byte loads make a
//! vector's source); one `vpshufb` gathers each output's red and green as
//! two 16-bit words of its 32-bit lane and another its blue (a constant 1
//! beside it, for the rounding half), and two `vpmaddwd` against the
//! matching coefficient pairs give the i32 sum, shifted right
//! arithmetically: the scalar formula of
//! [`crate::simd::matrix3::Fixed`], sample for sample.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Bytes per step: 32 RGB pixels.
const STEP: usize = 96;

/// Where the two 16-byte loads of block `b`'s vectors `2h` and `2h + 1`
/// start in the step (low lane, high lane): at the first pixel of the
/// lane's first output, or 80 where that would read past the step.
const OFFSETS: [[[usize; 2]; 2]; 3] = {
    let mut off = [[[0; 2]; 2]; 3];
    let mut i = 0;
    while i < 12 {
        let (b, h, lane) = (i / 4, i / 2 % 2, i % 2);
        let first = 32 * b + 16 * lane + 8 * h;
        let at = first / 3 * 3;
        off[b][h][lane] = if at > STEP - 16 { STEP - 16 } else { at };
        i += 1;
    }
    off
};

/// The output (of the step) that byte lane `l` (0..8) of vector `v` of
/// block `b` computes.
const fn output(b: usize, v: usize, l: usize) -> usize {
    32 * b + 16 * (l / 4) + 4 * v + l % 4
}

/// `vpshufb` indices per block and vector: red at byte `4l`, green at
/// `4l + 2` of each 32-bit lane `l` (`RG`), blue at `4l` (`BLUE`); the
/// other bytes are zeroed (index 0x80).
const SHUFFLES: [[[u8; 32]; 12]; 2] = {
    let mut t = [[[0x80u8; 32]; 12]; 2];
    let mut i = 0;
    while i < 12 * 8 {
        let (b, v, l) = (i / 32, i / 8 % 4, i % 8);
        let pixel = output(b, v, l) / 3 * 3;
        let base = OFFSETS[b][v / 2][l / 4];
        assert!(pixel >= base && pixel + 2 < base + 16);
        let at = (pixel - base) as u8;
        let byte = 16 * (l / 4) + 4 * (l % 4);
        t[0][4 * b + v][byte] = at;
        t[0][4 * b + v][byte + 2] = at + 1;
        t[1][4 * b + v][byte] = at + 2;
        i += 1;
    }
    t
};

/// The coefficient pairs of one matrix, made once per image rather than
/// per row. A vector's lane `l` computes colour `(p + l / 4 + l % 4) % 3`,
/// `p` its phase, `(2b + v) % 3` (as 32 and 16 are 2 and 1 modulo 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tables {
    /// `q[3k], q[3k + 1]` per lane, per phase.
    rg: [[i16; 16]; 3],
    /// `q[3k + 2]` and the rounding half per lane, per phase.
    b: [[i16; 16]; 3],
}

impl Tables {
    /// The tables of coefficients `q` at scale `2^-shift` (`shift` in
    /// 1..=15).
    pub(crate) fn new(q: &[i16; 9], shift: u32) -> Tables {
        let mut t = Tables {
            rg: [[0; 16]; 3],
            b: [[0; 16]; 3],
        };
        for p in 0..3 {
            for l in 0..8 {
                let k = (p + l / 4 + l % 4) % 3;
                t.rg[p][2 * l] = q[3 * k];
                t.rg[p][2 * l + 1] = q[3 * k + 1];
                t.b[p][2 * l] = q[3 * k + 2];
                t.b[p][2 * l + 1] = 1 << (shift - 1);
            }
        }
        t
    }
}

/// Writes the fixed-point matrix (its [`Tables`] and `shift`: see
/// [`crate::simd::matrix3::Fixed`]) of the whole steps of 32 pixels at the
/// start of `src` into `dst`; returns how many bytes that was (0 without
/// AVX2).
pub(crate) fn groups(t: &Tables, shift: u32, src: &[u8], dst: &mut [MaybeUninit<u8>]) -> usize {
    if !is_x86_feature_detected!("avx2") || !(1..=15).contains(&shift) {
        return 0;
    }
    let n = src.len().min(dst.len()) / STEP * STEP;
    // SAFETY: the CPU has AVX2 (checked above); `n` is at most both
    // lengths.
    unsafe { run(t, src.as_ptr(), dst.as_mut_ptr().cast(), n, shift) };
    n
}

/// The matrix on the `n / 3` pixels at `src` into `dst`, `n` a multiple of
/// [`STEP`].
///
/// # Safety
/// The CPU must have AVX2; `src` must be readable and `dst` writable for
/// `n` bytes; `shift` in `1..=15`.
#[target_feature(enable = "avx2")]
unsafe fn run(t: &Tables, src: *const u8, dst: *mut u8, n: usize, shift: u32) {
    let ld = |p: *const i16| {
        // SAFETY: every `p` below is a 16-word array of `Tables`.
        unsafe { _mm256_loadu_si256(p.cast()) }
    };
    let qrg = t.rg.each_ref().map(|q| ld(q.as_ptr()));
    let qb = t.b.each_ref().map(|q| ld(q.as_ptr()));
    let one = _mm256_set1_epi32(0x0001_0000);
    let count = _mm_cvtsi32_si128(shift as i32);
    let mut i = 0;
    while i < n {
        for b in 0..3 {
            let pair = |h: usize| {
                let [lo, hi] = OFFSETS[b][h];
                // SAFETY: i + STEP <= n and the offsets are at most
                // STEP - 16: the 16 bytes read are inside `src` (the
                // caller's contract).
                let (lo, hi) = unsafe {
                    (
                        _mm_loadu_si128(src.add(i + lo).cast()),
                        _mm_loadu_si128(src.add(i + hi).cast()),
                    )
                };
                _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
            };
            let x = [pair(0), pair(1)];
            let sum = |v: usize| {
                let shuffle = |k: usize| {
                    // SAFETY: a 32-byte array of `SHUFFLES`.
                    let ix = unsafe { _mm256_loadu_si256(SHUFFLES[k][4 * b + v].as_ptr().cast()) };
                    _mm256_shuffle_epi8(x[v / 2], ix)
                };
                let p = (2 * b + v) % 3;
                let c = _mm256_or_si256(shuffle(1), one);
                let s = _mm256_add_epi32(
                    _mm256_madd_epi16(shuffle(0), qrg[p]),
                    _mm256_madd_epi16(c, qb[p]),
                );
                _mm256_sra_epi32(s, count)
            };
            let lo = _mm256_packs_epi32(sum(0), sum(1));
            let out = _mm256_packus_epi16(lo, _mm256_packs_epi32(sum(2), sum(3)));
            // SAFETY: i + 32b + 32 <= i + STEP <= n: inside `dst` (the
            // caller's contract).
            unsafe { _mm256_storeu_si256(dst.add(i + 32 * b).cast(), out) };
        }
        i += STEP;
    }
}
