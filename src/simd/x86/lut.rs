//! [`crate::simd::lut::map_bytes`] with byte shuffles.
//!
//! - AVX-512 VBMI: a 256-entry byte table is four 512-bit registers; two
//!   `vpermi2b` look 64 samples up in its low and high halves, and the
//!   samples' top bits pick between them.
//! - AVX2: the table is 16 rows of 16 bytes; `vpshufb` looks 32 samples up
//!   in every row by their low 4 bits, and their high 4 bits then pick a
//!   row in a tree of 15 `vpblendvb` (bit 4 between row pairs, then bits 5,
//!   6 and 7): 16 shuffles and 15 blends per 32 samples, where a scalar
//!   lookup is a load and a store per sample.
//!
//! Channels whose tables differ are looked up in each and blended by lane
//! masks.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Whether the CPU has what [`vbmi`] uses.
fn has_vbmi() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vbmi")
}

/// The distinct tables of `C` channels: `k` of them, table `u` first used
/// by channel `first[u]`, and channel `c` using table `owner[c]`.
struct Distinct<const C: usize> {
    owner: [usize; C],
    first: [usize; C],
    k: usize,
}

impl<const C: usize> Distinct<C> {
    fn of(tables: &[[u8; 256]; C]) -> Distinct<C> {
        let mut d = Distinct {
            owner: [0; C],
            first: [0; C],
            k: 0,
        };
        for c in 0..C {
            match (0..c).find(|&o| tables[o] == tables[c]) {
                Some(o) => d.owner[c] = d.owner[o],
                None => {
                    d.owner[c] = d.k;
                    d.first[d.k] = c;
                    d.k += 1;
                }
            }
        }
        d
    }
}

/// Maps the whole groups of `64 C` samples at the start of `src` into
/// `dst` and returns how many samples that was (0 without AVX-512 VBMI).
pub(crate) fn map_bytes_vbmi<const C: usize>(
    tables: &[[u8; 256]; C],
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
) -> usize {
    if !has_vbmi() {
        return 0;
    }
    let n = src.len().min(dst.len()) / (64 * C) * (64 * C);
    // SAFETY: the CPU has AVX-512F, BW and VBMI (checked above); `n` is at
    // most both lengths.
    unsafe { vbmi::<C>(tables, src.as_ptr(), dst.as_mut_ptr().cast(), n) };
    n
}

/// `dst[i] = tables[i % C][src[i]]` for `i < n`, `n` a multiple of `64 C`.
///
/// # Safety
/// The CPU must have AVX-512F, BW and VBMI; `src` must be readable and
/// `dst` writable for `n` bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn vbmi<const C: usize>(tables: &[[u8; 256]; C], src: *const u8, dst: *mut u8, n: usize) {
    // Distinct tables (`k` of them), each as 4 registers, with the lanes
    // of vector `v` of a group that use it (`mask[v][u]`).
    let Distinct { owner, first, k } = Distinct::of(tables);
    let mut regs = [[_mm512_setzero_si512(); 4]; C];
    let mut mask = [[0u64; C]; C];
    for (u, &c) in first[..k].iter().enumerate() {
        for (q, r) in regs[u].iter_mut().enumerate() {
            // SAFETY: 64 bytes from offset 64 q of a 256-byte table.
            *r = unsafe { _mm512_loadu_si512(tables[c][64 * q..].as_ptr().cast()) };
        }
    }
    for j in 0..64 * C {
        mask[j / 64][owner[j % C]] |= 1 << (j % 64);
    }
    let mut i = 0;
    while i < n {
        for (v, lanes) in mask.iter().enumerate() {
            // SAFETY: i + 64 v + 64 <= n, inside both buffers (the caller's contract).
            let idx = unsafe { _mm512_loadu_si512(src.add(i + 64 * v).cast()) };
            let high = _mm512_movepi8_mask(idx);
            let mut out = look(&regs[0], idx, high);
            for (m, r) in lanes[1..k].iter().zip(&regs[1..k]) {
                out = _mm512_mask_blend_epi8(*m, out, look(r, idx, high));
            }
            // SAFETY: as the load.
            unsafe { _mm512_storeu_si512(dst.add(i + 64 * v).cast(), out) };
        }
        i += 64 * C;
    }
}

/// Table `r` (4 registers) at the bytes of `idx`; `high` marks the bytes
/// of 128 and above.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn look(r: &[__m512i; 4], idx: __m512i, high: __mmask64) -> __m512i {
    let lo = _mm512_permutex2var_epi8(r[0], idx, r[1]);
    let hi = _mm512_permutex2var_epi8(r[2], idx, r[3]);
    _mm512_mask_blend_epi8(high, lo, hi)
}

/// Maps the whole groups of `32 C` samples at the start of `src` into
/// `dst` and returns how many samples that was (0 without AVX2).
pub(crate) fn map_bytes_avx2<const C: usize>(
    tables: &[[u8; 256]; C],
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
) -> usize {
    if super::Avx2::try_new().is_none() {
        return 0;
    }
    let n = src.len().min(dst.len()) / (32 * C) * (32 * C);
    // SAFETY: the CPU has AVX2 (checked above); `n` is at most both lengths.
    unsafe { avx2::<C>(tables, src.as_ptr(), dst.as_mut_ptr().cast(), n) };
    n
}

/// `dst[i] = tables[i % C][src[i]]` for `i < n`, `n` a multiple of `32 C`.
///
/// # Safety
/// The CPU must have AVX2; `src` must be readable and `dst` writable for
/// `n` bytes.
#[target_feature(enable = "avx2")]
unsafe fn avx2<const C: usize>(tables: &[[u8; 256]; C], src: *const u8, dst: *mut u8, n: usize) {
    // Distinct tables (`k` of them), each as 16 rows in both 128-bit
    // halves, with the lanes of vector `v` of a group that use it
    // (`mask[v][u]`, all ones there).
    let Distinct { owner, first, k } = Distinct::of(tables);
    let mut rows = [[_mm256_setzero_si256(); 16]; C];
    for (u, &c) in first[..k].iter().enumerate() {
        for (h, r) in rows[u].iter_mut().enumerate() {
            // SAFETY: 16 bytes from offset 16 h of a 256-byte table.
            let row = unsafe { _mm_loadu_si128(tables[c][16 * h..].as_ptr().cast()) };
            *r = _mm256_broadcastsi128_si256(row);
        }
    }
    let mut lanes = [[[0u8; 32]; C]; C];
    for j in 0..32 * C {
        lanes[j / 32][owner[j % C]][j % 32] = 0xff;
    }
    // SAFETY: each is 32 bytes.
    let mask: [[__m256i; C]; C] = std::array::from_fn(|v| {
        std::array::from_fn(|u| unsafe { _mm256_loadu_si256(lanes[v][u].as_ptr().cast()) })
    });
    let mut i = 0;
    while i < n {
        for (v, m) in mask.iter().enumerate() {
            // SAFETY: i + 32 v + 32 <= n, inside both buffers (the caller's contract).
            let idx = Nibbles::new(unsafe { _mm256_loadu_si256(src.add(i + 32 * v).cast()) });
            let mut out = rows16(&rows[0], &idx);
            for (m, r) in m[1..k].iter().zip(&rows[1..k]) {
                out = _mm256_blendv_epi8(out, rows16(r, &idx), *m);
            }
            // SAFETY: as the load.
            unsafe { _mm256_storeu_si256(dst.add(i + 32 * v).cast(), out) };
        }
        i += 32 * C;
    }
}

/// 32 indices as [`rows16`] reads them: the low 4 bits for the row
/// lookups, and bits 4, 5, 6 and 7 each in its byte's bit 7 for the blends.
struct Nibbles {
    lo: __m256i,
    b4: __m256i,
    b5: __m256i,
    b6: __m256i,
    b7: __m256i,
}

impl Nibbles {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(idx: __m256i) -> Nibbles {
        // `vpshufb` reads an index's low 4 bits, and gives 0 where its bit
        // 7 is set, so the row lookups take the low nibble alone.
        // `vpblendvb` reads bit 7 of each mask byte: shifting the 16-bit
        // words left by 3, 2 and 1 brings each byte's bit 4, 5 and 6 there
        // (what crosses from the low byte lands in the high byte's bits
        // 0-2, never bit 7).
        Nibbles {
            lo: _mm256_and_si256(idx, _mm256_set1_epi8(0x0f)),
            b4: _mm256_slli_epi16(idx, 3),
            b5: _mm256_slli_epi16(idx, 2),
            b6: _mm256_slli_epi16(idx, 1),
            b7: idx,
        }
    }
}

/// The table of `rows` (row `h` holds entries `16 h .. 16 h + 16`, in both
/// halves) at the indices `idx`.
#[inline]
#[target_feature(enable = "avx2")]
fn rows16(rows: &[__m256i; 16], idx: &Nibbles) -> __m256i {
    let pick = |h: usize| {
        let even = _mm256_shuffle_epi8(rows[2 * h], idx.lo);
        let odd = _mm256_shuffle_epi8(rows[2 * h + 1], idx.lo);
        _mm256_blendv_epi8(even, odd, idx.b4)
    };
    let quad = |q: usize| _mm256_blendv_epi8(pick(2 * q), pick(2 * q + 1), idx.b5);
    let half = |f: usize| _mm256_blendv_epi8(quad(2 * f), quad(2 * f + 1), idx.b6);
    _mm256_blendv_epi8(half(0), half(1), idx.b7)
}
