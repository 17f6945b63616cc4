//! One output row of the rayon median with its column sorts shared: each
//! column of `D` samples is sorted once into `D` rank rows, which every
//! window that holds the column reads; the window's median then comes from
//! [`net::window`] on its `D x D` sorted values, all in registers.
//!
//! The samples are interleaved pixels of `c` channels, and a vector holds
//! adjacent samples, so a window's columns are `c` samples apart and no
//! channel is ever split out.

use super::net::{self, unroll, Network, Sort, Window};
use crate::simd::lanes::OrdLanes;

/// Bytes of one rank row per strip: a strip's `D` rank rows (7 x 2 KiB at
/// most) stay in the L1 cache between the sorts and the selections.
const STRIP_BYTES: usize = 2048;

/// The median of every sample of `out` (a row of `c` channels) from the
/// window's source rows `rows` (top to bottom, borders replicated), with
/// vectors `V` (made with `t`); `ranks` is scratch space. `N` is `D * D`.
#[inline(always)]
pub(super) fn median_row<V, const D: usize, const N: usize>(
    t: V::Token,
    rows: [&[V::Sample]; D],
    out: &mut [V::Sample],
    c: usize,
    ranks: &mut Vec<V::Sample>,
) where
    V: OrdLanes,
    V::Sample: Default,
{
    let (n, pad) = (out.len(), D / 2 * c);
    let strip = (STRIP_BYTES / std::mem::size_of::<V::Sample>()).max(V::LANES);
    let cap = strip + 2 * pad;
    if ranks.len() < D * cap {
        ranks.resize(D * cap, V::Sample::default());
    }
    for j0 in (0..n).step_by(strip) {
        let j1 = (j0 + strip).min(n);
        let len = j1 - j0 + 2 * pad;
        // Rank row slot `s` holds the column of sample `j0 + s - pad`.
        let (a, b) = (j0.saturating_sub(pad), (j1 + pad).min(n));
        let mut bufs = ranks.chunks_exact_mut(cap).map(|b| &mut b[..len]);
        let mut bufs: [&mut [V::Sample]; D] = std::array::from_fn(|_| bufs.next().expect("D rows"));
        let at = a + pad - j0;
        for (i, full) in Blocks::new(V::LANES, b - a) {
            match full {
                true => sort_column::<V, D>(t, &rows, a + i, &mut bufs, at + i),
                false => sort_column::<V::One, D>((), &rows, a + i, &mut bufs, at + i),
            }
        }
        // Columns past the row's ends repeat its first and last pixels.
        for s in (0..at).chain(at + b - a..len) {
            let k = (j0 + s) as isize - pad as isize;
            let px = k.div_euclid(c as isize).clamp(0, (n / c) as isize - 1) as usize;
            let from = px * c + k.rem_euclid(c as isize) as usize + pad - j0;
            for buf in bufs.iter_mut() {
                buf[s] = buf[from];
            }
        }
        let o = &mut out[j0..j1];
        let bufs = bufs.map(|b| &*b);
        for (i, full) in Blocks::new(V::LANES, o.len()) {
            match full {
                true => select::<V, D, N>(t, &bufs, c, i, &mut o[i..]),
                false => select::<V::One, D, N>((), &bufs, c, i, &mut o[i..]),
            }
        }
    }
}

/// Blocks of `l` from `i` covering `0..n`, as `(i, true)`, the last one
/// moved back to end at `n`; if `n < l`, `(i, false)` for each `i`.
pub(super) struct Blocks {
    l: usize,
    n: usize,
    i: usize,
}

impl Blocks {
    #[inline(always)]
    pub(super) fn new(l: usize, n: usize) -> Blocks {
        Blocks { l, n, i: 0 }
    }
}

impl Iterator for Blocks {
    type Item = (usize, bool);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, bool)> {
        let Blocks { l, n, i } = *self;
        if i >= n {
            return None;
        }
        if n < l {
            self.i += 1;
            return Some((i, false));
        }
        let i0 = i.min(n - l);
        self.i = i0 + l;
        Some((i0, true))
    }
}

/// Sorts the columns from sample `j` of `rows` into rank rows
/// `bufs[..][s..]`.
#[inline(always)]
fn sort_column<V: OrdLanes, const D: usize>(
    t: V::Token,
    rows: &[&[V::Sample]; D],
    j: usize,
    bufs: &mut [&mut [V::Sample]; D],
    s: usize,
) {
    let mut v = [V::load_samples(t, &rows[0][j..]); D];
    unroll!(k in 4 2 1; {
        if k < D {
            v[k] = V::load_samples(t, &rows[k][j..]);
        }
    });
    net::apply::<V, Sort<D>, D>(&mut v);
    unroll!(k in 4 2 1; {
        if k < D {
            v[k].store(&mut bufs[k][s..]);
        }
    });
}

/// The medians of the windows of output samples `o..`, from the rank rows
/// (slot `o + q c` holds the window's column `q`), into `out`.
#[inline(always)]
fn select<V: OrdLanes, const D: usize, const N: usize>(
    t: V::Token,
    bufs: &[&[V::Sample]; D],
    c: usize,
    o: usize,
    out: &mut [V::Sample],
) {
    let mut v = [V::load(t, &bufs[0][o..]); N];
    unroll!(k in 32 16 8 4 2 1; {
        if k < N {
            v[k] = V::load(t, &bufs[k / D][o + k % D * c..]);
        }
    });
    net::apply::<V, Window<D>, N>(&mut v);
    v[Window::<D>::NET.out].store_samples(out);
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::simd::lanes::{F32Keys, Lanes};
    use crate::test_rng::Rng;
    use std::cmp::Ordering;

    /// A sample type in the median's order, with its bits for comparing
    /// results exactly (f32: -0 and +0, and NaNs, told apart).
    trait Sample: Copy + Default + std::fmt::Debug {
        fn order(&self, o: &Self) -> Ordering;
        fn bits(self) -> u32;
    }

    impl Sample for u8 {
        fn order(&self, o: &Self) -> Ordering {
            self.cmp(o)
        }
        fn bits(self) -> u32 {
            self as u32
        }
    }

    impl Sample for u16 {
        fn order(&self, o: &Self) -> Ordering {
            self.cmp(o)
        }
        fn bits(self) -> u32 {
            self as u32
        }
    }

    impl Sample for f32 {
        fn order(&self, o: &Self) -> Ordering {
            self.total_cmp(o)
        }
        fn bits(self) -> u32 {
            self.to_bits()
        }
    }

    /// The median of each sample's window, gathered and sorted.
    fn expected<K: Sample, const D: usize>(rows: &[Vec<K>; D], c: usize) -> Vec<u32> {
        let n = rows[0].len();
        let w = n / c;
        (0..n)
            .map(|s| {
                let (x, ch) = (s / c, s % c);
                let mut v: Vec<K> = (0..D * D)
                    .map(|k| {
                        let xx = (x + k % D).saturating_sub(D / 2).min(w - 1);
                        rows[k / D][xx * c + ch]
                    })
                    .collect();
                v.sort_by(K::order);
                v[D * D / 2].bits()
            })
            .collect()
    }

    /// `median_row` with vectors `V` against [`expected`] on random rows
    /// of every width up to a few vectors, 1, 3 and 4 channels, and few
    /// levels (ties) or many.
    fn check<V, const D: usize, const N: usize>(t: V::Token, levels: u64, from: fn(u64) -> V::Sample)
    where
        V: OrdLanes,
        V::Sample: Sample,
    {
        let mut rng = Rng::from_parts(&[D as u64, levels]);
        let mut ranks = Vec::new();
        for c in [1, 3, 4] {
            // Three vectors and a few pixels past them (at least 10, past
            // a 7x7 window): every tail length, both edges in a full vector
            // and in a partial one.
            for w in 1..=((3 * V::LANES).div_ceil(c) + 2).max(10) {
                let rows: [Vec<V::Sample>; D] =
                    std::array::from_fn(|_| (0..w * c).map(|_| from(rng.below(levels))).collect());
                let mut out = vec![V::Sample::default(); w * c];
                median_row::<V, D, N>(t, std::array::from_fn(|i| &rows[i][..]), &mut out, c, &mut ranks);
                let got: Vec<u32> = out.into_iter().map(Sample::bits).collect();
                assert_eq!(got, expected(&rows, c), "D={D} {w}x{c} lanes {}", V::LANES);
            }
        }
    }

    fn all<V: OrdLanes>(t: V::Token, levels: u64, from: fn(u64) -> V::Sample)
    where
        V::Sample: Sample,
    {
        for l in [3, 8, levels] {
            check::<V, 3, 9>(t, l, from);
            check::<V, 5, 25>(t, l, from);
            check::<V, 7, 49>(t, l, from);
        }
    }

    /// f32 samples: below 8, zeros of both signs, NaNs of both signs (one
    /// with a payload), infinities and ordinary values; above, any bits
    /// (NaNs among them).
    pub(in crate::ops::median) fn f32_sample(x: u64) -> f32 {
        // -0, +0, NaN, -NaN with a payload, -inf, +inf, 1.5, -2.
        const SPECIAL: [u32; 8] = [
            0x8000_0000,
            0,
            0x7FC0_0000,
            0xFFC0_0001,
            0xFF80_0000,
            0x7F80_0000,
            0x3FC0_0000,
            0xC000_0000,
        ];
        f32::from_bits(SPECIAL.get(x as usize).copied().unwrap_or(x as u32))
    }

    #[test]
    fn every_vector_type_matches_sorting_the_window() {
        all::<Lanes<u8, 16>>((), 256, |x| x as u8);
        all::<Lanes<u16, 8>>((), 65536, |x| x as u16);
        all::<F32Keys<4>>((), 1 << 32, f32_sample);
        all::<Lanes<u8, 1>>((), 256, |x| x as u8);
        all::<F32Keys<1>>((), 1 << 32, f32_sample);
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = crate::simd::x86::Avx2::try_new() {
            use crate::simd::x86::lanes::{F32x8, U16x16, U8x32};
            all::<U8x32>(t, 256, |x| x as u8);
            all::<U16x16>(t, 65536, |x| x as u16);
            all::<F32x8>(t, 1 << 32, f32_sample);
        }
    }
}
