//! The 3x3 median of the rayon path, without rank rows: each source row's
//! three samples of a window row (a pixel and its left and right
//! neighbours, `c` samples apart) are sorted once in registers, from
//! three shifted loads, and serve the windows of every output row of a
//! group that holds that source row (4 output rows from 6 source rows).
//! With each window row sorted, the median is the median of the largest
//! low, the median middle and the smallest high (the classic 3x3
//! shortcut); two output rows next to each other share the maximum of
//! their common lows, the minimum of their common highs and the order of
//! their common middles. Per vector of 4 outputs that is 18 loads, 76
//! min/max and 4 stores, against 48, 72 and 16 with rank rows in memory
//! (`shared`).

use super::net::unroll;
use super::shared::Blocks;
use crate::simd::lanes::OrdLanes;

/// The largest `V::LANES + 2 c` that [`window_row`] gathers at an edge
/// (64 lanes, 4 channels).
const EDGE: usize = 72;

/// One source row's samples at the three columns of the windows of a
/// vector of outputs, sorted lane by lane.
#[derive(Clone, Copy)]
struct Sorted<V> {
    lo: V,
    mid: V,
    hi: V,
}

/// Medians of output rows `y..y + K` from their source rows `y - 1 ..= y +
/// K` (`src`, `R = K + 2` rows, borders replicated) into `out` (`K` rows,
/// all as long as the source rows: `c`-channel pixels). `K` is 1 to 4.
#[inline(always)]
pub(super) fn rows<V: OrdLanes, const K: usize, const R: usize>(
    t: V::Token,
    src: &[&[V::Sample]; R],
    out: &mut [&mut [V::Sample]; K],
    c: usize,
) {
    const { assert!(R == K + 2 && K >= 1 && K <= 4) };
    let n = out[0].len();
    for (j, full) in Blocks::new(V::LANES, n) {
        match full {
            true => block::<V, K, R>(t, src, out, j, c),
            false => block::<V::One, K, R>((), src, out, j, c),
        }
    }
}

/// [`rows`] at samples `j..j + V::LANES`.
#[inline(always)]
fn block<V: OrdLanes, const K: usize, const R: usize>(
    t: V::Token,
    src: &[&[V::Sample]; R],
    out: &mut [&mut [V::Sample]; K],
    j: usize,
    c: usize,
) {
    let edge = j < c || j + V::LANES + c > src[0].len();
    // Source rows are sorted as the outputs reach them (rows 0-3 for the
    // first pair, 4-5 for the second), so that no more than four rows (12
    // vectors) are live at once.
    let mut s = [window_row::<V>(t, src[0], j, c, edge); R];
    unroll!(p in 2 1; {
        let k = 2 * p;
        unroll!(i in 2 1; {
            let r = if k == 0 { i } else { k + 2 + i % 2 };
            if r > 0 && r < R && (k == 0 || i < 2) {
                s[r] = window_row::<V>(t, src[r], j, c, edge);
            }
        });
        if k + 1 < K {
            // Outputs k and k + 1 share source rows k + 1 and k + 2.
            let (a, b, d, e) = (s[k], s[k + 1], s[k + 2], s[k + 3]);
            let lo = b.lo.max(d.lo);
            let hi = b.hi.min(d.hi);
            let (m0, m1) = (b.mid.min(d.mid), b.mid.max(d.mid));
            let o0 = med3(a.lo.max(lo), m0.max(a.mid.min(m1)), a.hi.min(hi));
            let o1 = med3(e.lo.max(lo), m0.max(e.mid.min(m1)), e.hi.min(hi));
            o0.store_samples(&mut out[k][j..]);
            o1.store_samples(&mut out[k + 1][j..]);
        } else if k < K {
            let (a, b, d) = (s[k], s[k + 1], s[k + 2]);
            let lo = a.lo.max(b.lo).max(d.lo);
            let hi = a.hi.min(b.hi).min(d.hi);
            let o = med3(lo, med3(a.mid, b.mid, d.mid), hi);
            o.store_samples(&mut out[k][j..]);
        }
    });
}

/// The median of three vectors, lane by lane.
#[inline(always)]
fn med3<V: OrdLanes>(a: V, b: V, d: V) -> V {
    a.min(b).max(a.max(b).min(d))
}

/// Samples `j - c`, `j` and `j + c` (`V::LANES` each) of `row`, sorted lane
/// by lane. At an `edge` (a load would leave the row), the samples are
/// gathered first, pixels past the row's ends repeating its first and
/// last.
#[inline(always)]
fn window_row<V: OrdLanes>(
    t: V::Token,
    row: &[V::Sample],
    j: usize,
    c: usize,
    edge: bool,
) -> Sorted<V> {
    let (a, b, d) = if edge {
        // The loads cover samples `j - c .. j + V::LANES + c`, which reach
        // at most one pixel past either end of the row (a full block ends
        // at or before the row's end): the first pixel stands in for the
        // one before it, the last for the one after. Three copies, no
        // per-sample arithmetic: these blocks start and end every row.
        let mut buf = [row[0]; EDGE];
        let (n, hi) = (row.len(), j + V::LANES + c);
        let left = if j < c { &row[j..c] } else { &[] };
        let mid = &row[j.saturating_sub(c)..hi.min(n)];
        let right = if hi > n { &row[n - c..hi - c] } else { &[] };
        let mut at = 0;
        for part in [left, mid, right] {
            buf[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        debug_assert_eq!(at, V::LANES + 2 * c);
        (
            V::load_samples(t, &buf),
            V::load_samples(t, &buf[c..]),
            V::load_samples(t, &buf[2 * c..]),
        )
    } else {
        (
            V::load_samples(t, &row[j - c..]),
            V::load_samples(t, &row[j..]),
            V::load_samples(t, &row[j + c..]),
        )
    };
    let (a, b) = (a.min(b), a.max(b));
    let (b, d) = (b.min(d), b.max(d));
    Sorted {
        lo: a.min(b),
        mid: a.max(b),
        hi: d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::lanes::{F32Keys, Lanes};
    use crate::test_rng::Rng;

    /// The 3x3 medians of output rows `1..=K` of `src` (`K + 2` rows of
    /// `c`-channel pixels), each window gathered and sorted by `key`, as
    /// bits.
    fn expected<S: Copy>(src: &[Vec<S>], c: usize, key: fn(S) -> i64, bits: fn(S) -> u32) -> Vec<Vec<u32>> {
        let n = src[0].len();
        let w = n / c;
        (1..src.len() - 1)
            .map(|y| {
                (0..n)
                    .map(|s| {
                        let (x, ch) = (s / c, s % c);
                        let mut v: Vec<S> = (0..9)
                            .map(|k| src[y + k / 3 - 1][(x + k % 3).saturating_sub(1).min(w - 1) * c + ch])
                            .collect();
                        v.sort_by_key(|s| key(*s));
                        bits(v[4])
                    })
                    .collect()
            })
            .collect()
    }

    /// [`rows`] with vectors `V` and `K` output rows against [`expected`],
    /// on random rows of every width up to a few vectors, 1, 3 and 4
    /// channels, with `levels` distinct values (ties where few).
    fn check<V: OrdLanes, const K: usize, const R: usize>(
        t: V::Token,
        levels: u64,
        from: fn(u64) -> V::Sample,
        key: fn(V::Sample) -> i64,
        bits: fn(V::Sample) -> u32,
    ) where
        V::Sample: Default,
    {
        let mut rng = Rng::from_parts(&[K as u64, R as u64, levels]);
        for c in [1, 3, 4] {
            // Three vectors and a few pixels past them (at least 10, past
            // a 7x7 window): every tail length, both edges in a full vector
            // and in a partial one.
            for w in 1..=((3 * V::LANES).div_ceil(c) + 2).max(10) {
                let src: Vec<Vec<V::Sample>> =
                    (0..R).map(|_| (0..w * c).map(|_| from(rng.below(levels))).collect()).collect();
                let mut out = vec![vec![V::Sample::default(); w * c]; K];
                let srcs: [&[V::Sample]; R] = std::array::from_fn(|i| &src[i][..]);
                let mut it = out.iter_mut();
                let mut outs: [&mut [V::Sample]; K] = std::array::from_fn(|_| &mut it.next().unwrap()[..]);
                rows::<V, K, R>(t, &srcs, &mut outs, c);
                let got: Vec<Vec<u32>> = out.iter().map(|r| r.iter().map(|v| bits(*v)).collect()).collect();
                assert_eq!(got, expected(&src, c, key, bits), "K={K} {w}x{c} lanes {}", V::LANES);
            }
        }
    }

    fn all<V: OrdLanes>(
        t: V::Token,
        levels: u64,
        from: fn(u64) -> V::Sample,
        key: fn(V::Sample) -> i64,
        bits: fn(V::Sample) -> u32,
    ) where
        V::Sample: Default,
    {
        for l in [2, 5, levels] {
            check::<V, 1, 3>(t, l, from, key, bits);
            check::<V, 2, 4>(t, l, from, key, bits);
            check::<V, 4, 6>(t, l, from, key, bits);
        }
    }

    use crate::ops::median::shared::tests::f32_sample;

    /// `totalOrder` as an integer key.
    fn f32_order(v: f32) -> i64 {
        crate::simd::lanes::f32_key(v.to_bits() as i32) as i64
    }

    #[test]
    fn every_vector_type_matches_sorting_the_window() {
        let u8k: fn(u8) -> i64 = |v| v as i64;
        let u8b: fn(u8) -> u32 = |v| v as u32;
        let u16k: fn(u16) -> i64 = |v| v as i64;
        let u16b: fn(u16) -> u32 = |v| v as u32;
        let f32b: fn(f32) -> u32 = f32::to_bits;
        all::<Lanes<u8, 16>>((), 256, |x| x as u8, u8k, u8b);
        all::<Lanes<u8, 1>>((), 256, |x| x as u8, u8k, u8b);
        all::<Lanes<u16, 8>>((), 65536, |x| x as u16, u16k, u16b);
        all::<F32Keys<4>>((), 1 << 32, f32_sample, f32_order, f32b);
        all::<F32Keys<1>>((), 1 << 32, f32_sample, f32_order, f32b);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = crate::simd::x86::Avx2::try_new() {
            use crate::simd::x86::lanes::{F32x8, U16x16, U8x32};
            all::<U8x32>(t, 256, |x| x as u8, u8k, u8b);
            all::<U16x16>(t, 65536, |x| x as u16, u16k, u16b);
            all::<F32x8>(t, 1 << 32, f32_sample, f32_order, f32b);
        }
    }
}
