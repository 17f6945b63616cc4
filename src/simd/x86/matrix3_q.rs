//! [`crate::simd::matrix3::rgb_fixed`] with AVX-512BW and VBMI: 16
//! interleaved u8 RGB pixels (48 bytes) per step, computed in place rather
//! than split into colours. For each of the 48 outputs, one `vpermb`
//! gathers its pixel's red and green as two 16-bit words of a 32-bit lane
//! and another its blue beside a constant 1; two `vpmaddwd` against the
//! matching coefficient pairs (`q[3k], q[3k + 1]` and `q[3k + 2]`, the
//! rounding half) give the i32 sum, shifted right arithmetically. Signed
//! then unsigned saturating packs clamp to 0..=255 and a last `vpermb` puts
//! the bytes back in order: the scalar formula of
//! [`crate::simd::matrix3::Fixed`], sample for sample.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::matrix3_q256 as q256;

/// Bytes per step: 16 RGB pixels.
const STEP: usize = 48;

/// Whether the CPU has what [`run`] uses.
fn has_vbmi() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vbmi")
}

/// Writes the fixed-point matrix (its [`Tables`] and `shift`: see
/// [`crate::simd::matrix3::Fixed`]) of the whole steps at the start of
/// `src` into `dst`; returns how many bytes that was. With `wide` on a CPU
/// with AVX-512BW and VBMI, steps of 16 pixels here; otherwise steps of 32
/// pixels through [`super::matrix3_q256`] (0 without AVX2).
pub(crate) fn fixed_groups(
    t: &Tables,
    shift: u32,
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    wide: bool,
) -> usize {
    if !(wide && has_vbmi()) {
        return q256::groups(&t.avx2, shift, src, dst);
    }
    if !(1..=15).contains(&shift) {
        return 0;
    }
    let n = src.len().min(dst.len()) / STEP * STEP;
    // SAFETY: the CPU has AVX-512F, BW and VBMI (checked above); `n` is at
    // most both lengths.
    unsafe { run(t, src.as_ptr(), dst.as_mut_ptr().cast(), n, shift) };
    n
}

/// The kernels' constants for one matrix, made once per image rather than
/// per row: a [`Block`] per 16 outputs of a step here, and the AVX2
/// kernel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tables {
    blocks: [Block; 3],
    avx2: q256::Tables,
}

impl Tables {
    /// The tables of coefficients `q` at scale `2^-shift` (`shift` in
    /// 1..=15).
    pub(crate) fn new(q: &[i16; 9], shift: u32) -> Tables {
        Tables {
            blocks: [0, 1, 2].map(|t| Block::new(q, shift, t)),
            avx2: q256::Tables::new(q, shift),
        }
    }
}

/// Output byte `o = 16t + j` of a step sits, after the packs, in 128-bit
/// lane `j / 4`, at `4t + j % 4`.
const ORDER: [u8; 64] = {
    let mut order = [0u8; 64];
    let mut o = 0;
    while o < 64 {
        order[o] = (16 * (o % 16 / 4) + 4 * (o / 16 % 4) + o % 4) as u8;
        o += 1;
    }
    order
};

/// The byte-permute indices and coefficient pairs of output block `t`
/// (outputs `16t..16t + 16` of a step): lane `j`'s pixel is
/// `(16t + j) / 3` and its colour `k = (16t + j) % 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    /// Red at byte `4j`, green at `4j + 2` (the odd bytes are zeroed).
    rg: [u8; 64],
    /// Blue at byte `4j` (the 1 at `4j + 2` comes from a constant).
    b: [u8; 64],
    /// `q[3k], q[3k + 1]` per lane.
    qrg: [i16; 32],
    /// `q[3k + 2]` and the rounding half per lane.
    qb: [i16; 32],
}

impl Block {
    fn new(q: &[i16; 9], shift: u32, t: usize) -> Block {
        let mut b = Block {
            rg: [0; 64],
            b: [0; 64],
            qrg: [0; 32],
            qb: [0; 32],
        };
        for j in 0..16 {
            let (p, k) = ((16 * t + j) / 3, (16 * t + j) % 3);
            b.rg[4 * j] = (3 * p) as u8;
            b.rg[4 * j + 2] = (3 * p + 1) as u8;
            b.b[4 * j] = (3 * p + 2) as u8;
            b.qrg[2 * j] = q[3 * k];
            b.qrg[2 * j + 1] = q[3 * k + 1];
            b.qb[2 * j] = q[3 * k + 2];
            b.qb[2 * j + 1] = 1 << (shift - 1);
        }
        b
    }
}

/// The matrix on the `n / 3` pixels at `src` into `dst`, `n` a multiple of
/// [`STEP`].
///
/// # Safety
/// The CPU must have AVX-512F, BW and VBMI; `src` must be readable and
/// `dst` writable for `n` bytes; `shift` in `1..=15`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn run(tables: &Tables, src: *const u8, dst: *mut u8, n: usize, shift: u32) {
    let ld = |p: *const u8| {
        // SAFETY: every `p` below is a 64-byte array (`Block`'s and `ORDER`).
        unsafe { _mm512_loadu_si512(p.cast()) }
    };
    let blocks = &tables.blocks;
    let rg = blocks.each_ref().map(|b| ld(b.rg.as_ptr()));
    let bl = blocks.each_ref().map(|b| ld(b.b.as_ptr()));
    let qrg = blocks.each_ref().map(|b| ld(b.qrg.as_ptr().cast()));
    let qb = blocks.each_ref().map(|b| ld(b.qb.as_ptr().cast()));
    let order = ld(ORDER.as_ptr());
    let one = _mm512_set1_epi32(0x0001_0000);
    let count = _mm_cvtsi32_si128(shift as i32);
    let whole: __mmask64 = (1 << STEP) - 1;
    let mut i = 0;
    while i < n {
        // SAFETY: i + 48 <= n: the 48 bytes read and written are inside
        // both buffers (the caller's contract); the mask leaves the rest.
        let x = unsafe { _mm512_maskz_loadu_epi8(whole, src.add(i).cast()) };
        let sum = |t: usize| {
            let a = _mm512_maskz_permutexvar_epi8(0x5555_5555_5555_5555, rg[t], x);
            let b = _mm512_mask_permutexvar_epi8(one, 0x1111_1111_1111_1111, bl[t], x);
            let s = _mm512_add_epi32(_mm512_madd_epi16(a, qrg[t]), _mm512_madd_epi16(b, qb[t]));
            _mm512_sra_epi32(s, count)
        };
        let (s0, s1, s2) = (sum(0), sum(1), sum(2));
        let bytes = _mm512_packus_epi16(_mm512_packs_epi32(s0, s1), _mm512_packs_epi32(s2, s2));
        let out = _mm512_permutexvar_epi8(order, bytes);
        // SAFETY: as the load.
        unsafe { _mm512_mask_storeu_epi8(dst.add(i).cast(), whole, out) };
        i += STEP;
    }
}
