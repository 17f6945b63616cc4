//! Sums of f32 samples in f64, along a row ([`sum_row`]) and down columns
//! ([`add_rows`]): AVX-512F or AVX2 registers where the CPU has them
//! ([`super::x86`]; the compiler leaves the widening loops scalar), plain
//! Rust elsewhere and for the remainders. The results are the same up to
//! the order of f64 additions, so within the f64 sum's own rounding. Also
//! exact per-channel sums of u8 rows in u32 lanes ([`byte_sums`]).

use super::Isa;

/// Samples per step of [`sum_row`]'s lanes: a multiple of 1, 3 and 4, so
/// that lane `j` always holds channel `j % C`.
pub const STEP: usize = 48;

/// Per-channel sums, in f64, of a row of pixels of `C` channels (`row`
/// holds whole pixels). With `isa` at [`Isa::Avx2`] or above, whole steps
/// of [`STEP`] samples go through vectors of f64 lanes.
pub fn sum_row<const C: usize>(isa: Isa, row: &[f32]) -> [f64; C] {
    const {
        assert!(
            (STEP / 4).is_multiple_of(C),
            "a quarter of STEP must hold whole pixels"
        )
    };
    let mut lanes = [0f64; STEP];
    let done = sum_lanes(isa, row, &mut lanes);
    // Halve the lanes twice (24 and 12 are multiples of 1, 3 and 4, so lane
    // j keeps channel j % C), then 12 into the channels, rather than 48
    // dependent adds a row (4K f32 gray x sums, 2 threads: minima
    // 0.65-0.72 ms against 0.68-0.75 ms, 2026-11-29).
    let (lo, hi) = lanes.split_at_mut(STEP / 2);
    lo.iter_mut().zip(&*hi).for_each(|(a, b)| *a += b);
    let (lo, hi) = lo.split_at_mut(STEP / 4);
    lo.iter_mut().zip(&*hi).for_each(|(a, b)| *a += b);
    let mut out = [0f64; C];
    for (j, v) in lo.iter().enumerate() {
        out[j % C] += v;
    }
    // `done` is a multiple of STEP, so of C: sample j of the rest is channel j % C.
    for (j, v) in row[done..].iter().enumerate() {
        out[j % C] += f64::from(*v);
    }
    out
}

/// The lane sums of the whole steps of `row`; returns the samples summed.
fn sum_lanes(isa: Isa, row: &[f32], lanes: &mut [f64; STEP]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use super::x86::{widen, Avx2, Avx512};
        if isa >= Isa::Avx512 {
            if let Some(t) = Avx512::try_new() {
                return widen::sum_lanes_avx512(t, row, lanes);
            }
        }
        if isa >= Isa::Avx2 {
            if let Some(t) = Avx2::try_new() {
                return widen::sum_lanes_avx2(t, row, lanes);
            }
        }
    }
    let _ = isa;
    let mut steps = row.chunks_exact(STEP);
    for g in &mut steps {
        for (l, v) in lanes.iter_mut().zip(g) {
            *l += f64::from(*v);
        }
    }
    row.len() - steps.remainder().len()
}

/// `acc[i] += rows[0][i] + .. + rows[R - 1][i]`, each sample widened to
/// f64, for every `i` of `acc` (each row at least as long).
pub fn add_rows<const R: usize>(isa: Isa, acc: &mut [f64], rows: [&[f32]; R]) {
    assert!(
        rows.iter().all(|r| r.len() >= acc.len()),
        "add_rows: a row is shorter than the sums"
    );
    let done = add_rows_vec(isa, acc, rows);
    for (i, a) in acc.iter_mut().enumerate().skip(done) {
        let mut s = 0.0;
        for r in &rows {
            s += f64::from(r[i]);
        }
        *a += s;
    }
}

/// [`add_rows`] on the columns the CPU's vectors cover; returns how many.
fn add_rows_vec<const R: usize>(isa: Isa, acc: &mut [f64], rows: [&[f32]; R]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use super::x86::{widen, Avx2, Avx512};
        if isa >= Isa::Avx512 {
            if let Some(t) = Avx512::try_new() {
                return widen::add_rows_avx512(t, acc, rows);
            }
        }
        if isa >= Isa::Avx2 {
            if let Some(t) = Avx2::try_new() {
                return widen::add_rows_avx2(t, acc, rows);
            }
        }
    }
    let _ = (isa, acc, rows);
    0
}

/// Per-channel sums of a row of pixels of `C` u8 channels (`row` holds
/// whole pixels), exact, in u32 lanes the compiler vectorises: the
/// remainder of [`super::chansum`]'s vector steps, and its path on CPUs
/// without AVX2.
pub fn byte_sums<const C: usize>(row: &[u8]) -> [u64; C] {
    let mut out = [0u64; C];
    // A u32 lane takes one byte a step: 2^24 steps stay below 2^32.
    for block in row.chunks(STEP << 24) {
        let mut lanes = [0u32; STEP];
        let mut steps = block.chunks_exact(STEP);
        for g in &mut steps {
            for (l, v) in lanes.iter_mut().zip(g) {
                *l += u32::from(*v);
            }
        }
        for (j, l) in lanes.iter().enumerate() {
            out[j % C] += u64::from(*l);
        }
        for (j, v) in steps.remainder().iter().enumerate() {
            out[j % C] += u64::from(*v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples whose f64 sums are exact (small integers over powers of
    /// two), so every instruction set must give the same bits.
    fn samples(n: usize, seed: u32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 64.0 - 15.0)
            .collect()
    }

    #[test]
    fn row_sums_match_a_plain_f64_sum_on_every_instruction_set() {
        for isa in Isa::available() {
            for len in [0, 1, 3, 47, 48, 49, 95, 96, 97, 383, 384, 385, 1000, 3841] {
                let row = samples(len - len % 3, len as u32);
                let mut want = [0f64; 3];
                for (j, v) in row.iter().enumerate() {
                    want[j % 3] += f64::from(*v);
                }
                assert_eq!(sum_row::<3>(isa, &row), want, "{isa:?} {len}");
                let all: f64 = row.iter().map(|&v| f64::from(v)).sum();
                assert_eq!(sum_row::<1>(isa, &row), [all], "{isa:?} {len}");
                let row = &row[..row.len() - row.len() % 4];
                let mut want = [0f64; 4];
                for (j, v) in row.iter().enumerate() {
                    want[j % 4] += f64::from(*v);
                }
                assert_eq!(sum_row::<4>(isa, row), want, "{isa:?} {len}");
            }
        }
    }

    #[test]
    fn byte_sums_match_a_plain_sum() {
        for len in [0, 1, 12, 191, 192, 193, 384, 1000, 4801] {
            let row: Vec<u8> = (0..len as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
                .collect();
            let want = |c: usize| {
                let mut s = vec![0u64; c];
                for (j, v) in row[..len - len % c].iter().enumerate() {
                    s[j % c] += u64::from(*v);
                }
                s
            };
            assert_eq!(byte_sums::<1>(&row).to_vec(), want(1), "{len}");
            assert_eq!(
                byte_sums::<3>(&row[..len - len % 3]).to_vec(),
                want(3),
                "{len}"
            );
            assert_eq!(
                byte_sums::<4>(&row[..len - len % 4]).to_vec(),
                want(4),
                "{len}"
            );
        }
    }

    #[test]
    fn column_sums_match_a_plain_f64_sum_on_every_instruction_set() {
        for isa in Isa::available() {
            for len in [1, 7, 8, 9, 15, 16, 17, 33, 100] {
                let rows: Vec<Vec<f32>> = (0..8).map(|r| samples(len + r, r as u32)).collect();
                let mut acc = samples(len, 99)
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect::<Vec<_>>();
                let mut want = acc.clone();
                for (i, w) in want.iter_mut().enumerate() {
                    *w += rows.iter().map(|r| f64::from(r[i])).sum::<f64>();
                }
                let refs: [&[f32]; 8] = std::array::from_fn(|r| &rows[r][..]);
                add_rows(isa, &mut acc, refs);
                assert_eq!(acc, want, "{isa:?} {len}");
                add_rows(isa, &mut acc, [&rows[0][..]]);
                for (i, w) in want.iter_mut().enumerate() {
                    *w += f64::from(rows[0][i]);
                }
                assert_eq!(acc, want, "{isa:?} {len} one row");
            }
        }
    }
}
