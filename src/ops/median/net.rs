//! The compare-exchange networks of the rayon median, built at compile time
//! (`const fn`) and run fully unrolled, so that every index is a constant
//! and the values stay in registers.
//!
//! A window of `D x D` samples arrives with its columns sorted (`v[D i + q]`
//! is rank `i` of column `q`; the column sorts are shared by the windows
//! that hold the column). [`window`] sorts each rank row as well, which
//! keeps the columns sorted (a classic lemma), so sample `(i, j)` is at or
//! above the `(i + 1)(j + 1)` samples up and left of it, and at or below
//! the `(D - i)(D - j)` down and right. Where one of those counts reaches
//! the median's rank `(D^2 + 1) / 2` (7x7: exceeds it, see `excluding`),
//! the sample cannot be the median unless it equals it, and as many such
//! samples lie on each side: the median is the median of the others (3 of
//! 9, 13 of 25, 29 of 49),
//! chosen by forgetful selection, which skips the exchanges whose outcome
//! the sorted axes already tell (`Known`). The compiler drops every min or max
//! whose result is never read (a row's low ranks where only its high ones
//! are candidates, the last maxima of the selection).

use crate::simd::lanes::OrdLanes;

/// Room for the largest network (7x7: 112 row exchanges and 139 of the
/// selection); [`apply`] unrolls this many steps.
const MAX_PAIRS: usize = 512;

/// A network: `len` compare-exchanges (min into the first index, max into
/// the second), and the index that holds the result.
#[derive(Debug, Clone, Copy)]
pub(super) struct Net {
    pairs: [(u8, u8); MAX_PAIRS],
    len: usize,
    /// Where the median lands ([`window`]); 0 for a sort.
    pub out: usize,
}

/// Optimal sorting networks for 3, 5 and 7 values (3, 9, 16 exchanges).
const SORT3: [(u8, u8); 3] = [(0, 1), (1, 2), (0, 1)];
const SORT5: [(u8, u8); 9] = [
    (0, 1), (3, 4), (2, 4), (2, 3), (1, 4), (0, 3), (0, 2), (1, 3), (1, 2),
];
const SORT7: [(u8, u8); 16] = [
    (0, 6), (2, 3), (4, 5), (0, 2), (1, 4), (3, 6), (0, 1), (2, 5),
    (3, 4), (1, 2), (4, 6), (2, 3), (4, 5), (1, 2), (3, 4), (5, 6),
];

const EMPTY: Net = Net {
    pairs: [(0, 0); MAX_PAIRS],
    len: 0,
    out: 0,
};

const fn push(mut n: Net, a: usize, b: usize) -> Net {
    n.pairs[n.len] = (a as u8, b as u8);
    n.len += 1;
    n
}

/// The network that sorts `d` (3, 5 or 7) values.
pub(super) const fn sort(d: usize) -> Net {
    let s: &[(u8, u8)] = match d {
        3 => &SORT3,
        5 => &SORT5,
        _ => &SORT7,
    };
    let mut n = EMPTY;
    let mut k = 0;
    while k < s.len() {
        n = push(n, s[k].0 as usize, s[k].1 as usize);
        k += 1;
    }
    n
}

/// The network that leaves the median of a `d x d` window whose columns
/// are sorted in `v[out]` (see the module docs).
pub(super) const fn window(d: usize) -> Net {
    // Sort the rank rows: the window is then sorted along both axes.
    let s = sort(d);
    let mut n = EMPTY;
    let mut i = 0;
    while i < d {
        let mut k = 0;
        while k < s.len {
            n = push(n, d * i + s.pairs[k].0 as usize, d * i + s.pairs[k].1 as usize);
            k += 1;
        }
        i += 1;
    }
    let t = excluding(d);
    let mut cands = [0usize; 49];
    let mut nc = 0;
    let mut i = 0;
    while i < d * d {
        let (y, x) = (i / d, i % d);
        if (y + 1) * (x + 1) < t && (d - y) * (d - x) < t {
            cands[nc] = i;
            nc += 1;
        }
        i += 1;
    }
    // Forgetful selection: of the 2m+1 candidates, any m+2 hold the
    // median's, and their minimum and maximum cannot be it; both leave,
    // the next candidate takes the maximum's slot.
    let mut k = Known::sorted(d);
    let mid = nc / 2;
    let hi = mid + 2;
    let mut slot = cands;
    let mut lo = 0;
    while lo < mid {
        let mut i = lo + 1;
        while i < hi {
            n = k.cas(n, slot[lo], slot[i]);
            i += 1;
        }
        let mut i = lo + 1;
        while i + 1 < hi {
            n = k.cas(n, slot[i], slot[hi - 1]);
            i += 1;
        }
        if lo + 1 < mid {
            slot[hi - 1] = cands[hi + lo];
        }
        lo += 1;
    }
    n.out = k.phys[slot[mid]];
    n
}

/// The count of samples known to lie on one side of a sample (see the
/// module docs) from which the sample leaves the candidates: the median's
/// rank, or one more where a rectangle of exactly that many samples fits
/// in the window (7x7: 5 x 5 = 25). There, with ties, a sample whose
/// rectangle holds exactly the median's rank may equal the median while
/// the candidates left hold too few of its copies (a 0/1 window whose
/// zeros fill the top-left 5 x 5 block); one more keeps the counts right,
/// which `tests::windows_select_the_median_of_every_sorted_zero_one_window`
/// checks on every such window.
const fn excluding(d: usize) -> usize {
    let rank = (d * d).div_ceil(2);
    let mut a = 1;
    while a <= d {
        if rank.is_multiple_of(a) && rank / a <= d {
            return rank + 1;
        }
        a += 1;
    }
    rank
}

/// What the selection knows of the order of the values it holds, so that
/// it skips the exchanges whose outcome is known (16 of the 5x5 window's
/// 48, 85 of the 7x7's 224). The selection works on
/// logical slots; a known exchange only swaps which register (`phys`)
/// holds which slot.
struct Known {
    /// `le[a][b]`: slot `a`'s value is known to be at most slot `b`'s.
    le: [[bool; 49]; 49],
    phys: [usize; 49],
    n: usize,
}

impl Known {
    /// A `d x d` window sorted along both axes.
    const fn sorted(d: usize) -> Known {
        let mut k = Known {
            le: [[false; 49]; 49],
            phys: [0; 49],
            n: d * d,
        };
        let mut a = 0;
        while a < k.n {
            k.phys[a] = a;
            let mut b = 0;
            while b < k.n {
                k.le[a][b] = a / d <= b / d && a % d <= b % d;
                b += 1;
            }
            a += 1;
        }
        k
    }

    /// The exchange of slots `a` (min) and `b` (max), added to `n` unless
    /// its outcome is known. After it, the new minimum is at most what
    /// either input was at most, at least what both were at least, and so
    /// on for the maximum.
    const fn cas(&mut self, n: Net, a: usize, b: usize) -> Net {
        if self.le[a][b] {
            return n;
        }
        if self.le[b][a] {
            self.phys.swap(a, b);
            self.le.swap(a, b);
            let mut x = 0;
            while x < self.n {
                self.le[x].swap(a, b);
                x += 1;
            }
            return n;
        }
        let n = push(n, self.phys[a], self.phys[b]);
        let mut x = 0;
        while x < self.n {
            if x != a && x != b {
                let (ax, bx, xa, xb) = (self.le[a][x], self.le[b][x], self.le[x][a], self.le[x][b]);
                self.le[a][x] = ax || bx;
                self.le[x][a] = xa && xb;
                self.le[b][x] = ax && bx;
                self.le[x][b] = xa || xb;
            }
            x += 1;
        }
        self.le[a][b] = true;
        n
    }
}

/// Expands `$body` once for each `$k` in `0..2^bits` (the bits listed from
/// the highest), with `$k` a constant.
macro_rules! unroll {
    ($k:ident in $($bit:literal)*; $body:block) => { unroll!(@ 0usize; $($bit)*; $k $body) };
    (@ $b:expr; ; $k:ident $body:block) => {{ let $k: usize = $b; $body }};
    (@ $b:expr; $h:literal $($t:literal)*; $k:ident $body:block) => {
        unroll!(@ $b; $($t)*; $k $body);
        unroll!(@ $b + $h; $($t)*; $k $body);
    };
}

pub(super) use unroll;

/// A network known at compile time.
pub(super) trait Network {
    /// The network.
    const NET: Net;
}

/// The network that sorts `D` values.
pub(super) struct Sort<const D: usize>;

impl<const D: usize> Network for Sort<D> {
    const NET: Net = sort(D);
}

/// The network that leaves the median of a `D x D` window with sorted
/// columns in `v[Window::<D>::NET.out]`.
pub(super) struct Window<const D: usize>;

impl<const D: usize> Network for Window<D> {
    const NET: Net = window(D);
}

/// Runs `W`'s network on `v`, unrolled, so every index is a constant.
/// (Written out here, not in closures: a closure is compiled on its own,
/// without the instruction set of the trampoline that calls it.)
#[inline(always)]
pub(super) fn apply<V: OrdLanes, W: Network, const N: usize>(v: &mut [V; N]) {
    // One reference to the constant: each mention of `W::NET` by value
    // would copy it (1 KiB) onto the stack in an unoptimised build.
    let net: &'static Net = const { &W::NET };
    unroll!(k in 256 128 64 32 16 8 4 2 1; {
        if k < net.len {
            let (i, j) = net.pairs[k];
            let (a, b) = (v[i as usize], v[j as usize]);
            v[i as usize] = a.min(b);
            v[j as usize] = a.max(b);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::lanes::Lanes;
    use crate::test_rng::Rng;

    /// Runs `net` on 64 inputs at once: bit `b` of `v[i]` is input `i` of
    /// the `b`-th 0/1 vector (min is AND, max is OR).
    fn bits(net: &Net, v: &mut [u64]) {
        for &(i, j) in &net.pairs[..net.len] {
            let (a, b) = (v[i as usize], v[j as usize]);
            v[i as usize] = a & b;
            v[j as usize] = a | b;
        }
    }

    #[test]
    fn sorts_sort_every_zero_one_input() {
        // The 0-1 principle: a network that sorts every 0/1 input sorts all.
        for d in [3, 5, 7] {
            let net = sort(d);
            for x in 0u32..1 << d {
                let mut v: Vec<u64> = (0..d).map(|i| (x >> i & 1) as u64).collect();
                bits(&net, &mut v);
                assert!(v.windows(2).all(|p| p[0] <= p[1]), "d={d} {x:b}: {v:?}");
            }
        }
    }

    /// Every 0/1 window of `d x d` (columns sorted first), 64 per step:
    /// the network must leave its median (1 where most samples are 1).
    fn check_window(d: usize, windows: impl Iterator<Item = u64>) {
        let (col, win) = (sort(d), window(d));
        let n = d * d;
        let mut batch: Vec<u64> = Vec::new();
        let run = |batch: &mut Vec<u64>| {
            let mut v = vec![0u64; n];
            for (b, x) in batch.iter().enumerate() {
                for (i, v) in v.iter_mut().enumerate() {
                    *v |= (x >> i & 1) << b;
                }
            }
            for q in 0..d {
                let mut c: Vec<u64> = (0..d).map(|i| v[d * i + q]).collect();
                bits(&col, &mut c);
                for i in 0..d {
                    v[d * i + q] = c[i];
                }
            }
            bits(&win, &mut v);
            for (b, x) in batch.iter().enumerate() {
                let want = (x.count_ones() as usize > n / 2) as u64;
                assert_eq!(v[win.out] >> b & 1, want, "d={d} window {x:b}");
            }
            batch.clear();
        };
        for x in windows {
            batch.push(x);
            if batch.len() == 64 {
                run(&mut batch);
            }
        }
        if !batch.is_empty() {
            run(&mut batch);
        }
    }

    #[test]
    fn windows_select_the_median_of_every_zero_one_input() {
        // 3x3 and 5x5 exhaustively (the 0-1 principle holds for selection
        // networks too); 7x7 (2^49 inputs) on random windows of 24 or 25
        // ones, where the median is decided by one sample.
        check_window(3, 0..1 << 9);
        check_window(5, 0..1 << 25);
        let mut rng = Rng::new(7);
        let random = (0..1 << 20).map(move |t| {
            let mut idx: Vec<u64> = (0..49).collect();
            for i in (1..49).rev() {
                idx.swap(i, rng.below(i as u64 + 1) as usize);
            }
            idx[..24 + t % 2].iter().fold(0u64, |x, &i| x | 1 << i)
        });
        check_window(7, random);
    }

    #[test]
    fn windows_select_the_median_of_every_sorted_zero_one_window() {
        // The row and column sorts turn any 0/1 window into one sorted
        // along both axes: its zeros fill the first `z[i]` samples of row
        // `i`, `z` non-increasing. Every such window (3432 for 7x7), with
        // the 0-1 principle, proves the whole network for all inputs.
        for d in [3, 5, 7] {
            let (col, win) = (sort(d), window(d));
            let mut z = vec![0usize; d];
            loop {
                let mut v: Vec<u64> = (0..d * d).map(|k| (k % d >= z[k / d]) as u64).collect();
                let ones = v.iter().sum::<u64>() as usize;
                for q in 0..d {
                    let mut c: Vec<u64> = (0..d).map(|i| v[d * i + q]).collect();
                    bits(&col, &mut c);
                    (0..d).for_each(|i| v[d * i + q] = c[i]);
                }
                bits(&win, &mut v);
                assert_eq!(v[win.out], (ones > d * d / 2) as u64, "d={d} zeros per row {z:?}");
                // The next non-increasing `z` (as digits, row 0 first).
                let Some(i) = (0..d).rev().find(|&i| z[i] < if i == 0 { d } else { z[i - 1] }) else {
                    break;
                };
                z[i] += 1;
                z[i + 1..].iter_mut().for_each(|x| *x = 0);
            }
        }
    }

    #[test]
    fn apply_runs_the_network_on_lanes() {
        let net = window(5);
        let mut v: [Lanes<u8, 2>; 25] = std::array::from_fn(|i| Lanes([i as u8, 24 - i as u8]));
        for q in 0..5 {
            let mut c: [Lanes<u8, 2>; 5] = std::array::from_fn(|i| v[5 * i + q]);
            apply::<_, Sort<5>, 5>(&mut c);
            (0..5).for_each(|i| v[5 * i + q] = c[i]);
        }
        apply::<_, Window<5>, 25>(&mut v);
        assert_eq!(v[net.out].0, [12, 12]);
    }
}
