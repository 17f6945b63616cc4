//! The rayon path's LSD radix sort, for keys alone and for keys with u32
//! values, ordered by the keys' u32 words ([`SortKey::to_word`]).
//!
//! Four passes of 8 bits, least significant first. Each pass cuts the
//! keys into chunks, one rayon task each: every task counts its chunk's
//! digits, the counts are summed across chunks in digit-major order
//! (digit 0 of every chunk, then digit 1, ...), and every task moves its
//! chunk's keys (and values) into the ranges those sums give it. A pass
//! puts each key after the keys of its digit that came before it, so it is
//! stable, and so is the sort: equal keys keep their input order, as they
//! did in the comparison sort on `word << 32 | index` it replaces.
//! A pass in which every key has the same digit would move nothing and is
//! skipped.
//!
//! The passes move the keys themselves, not their words: the word is
//! computed where a digit is needed, so the first pass reads the caller's
//! slices and the last one leaves the result in a vector of keys, and the
//! sort touches only two fresh buffers per array (the result and one
//! spare). On a VM a fresh page costs a fault, which at 2^24 keys weighs as
//! much as a pass; both buffers ask for huge pages
//! ([`crate::simd::mem::advise_huge_pages`]).
//!
//! The moves stay safe code: the output is cut by `split_at_mut` into one
//! slice per (digit, chunk), and each task writes through iterators over
//! its own slices, which the counts fill exactly.
//!
//! Own code rather than a crate: `rdst` 0.20 is an unstable sort (pairs
//! would have to carry their index inside the key, doubling the bytes each
//! pass moves) and brings `arbitrary-chunks` and `partition`;
//! `voracious_radix_sort` also adds crates to the library's dependency
//! count (README, "Library"). This file needs only `rayon`, which the
//! library already has.

use rayon::prelude::*;

use super::keys::SortKey;
use crate::simd::mem::advise_huge_pages;

/// Bits of a digit.
const BITS: u32 = 8;
/// Digit values of a pass.
const BUCKETS: usize = 1 << BITS;
/// Passes over a 32-bit word.
const PASSES: u32 = 32 / BITS;
/// Keys per chunk at least, so that counting and cutting stay cheap
/// against moving the keys.
const MIN_CHUNK: usize = 1 << 14;

/// Digit `pass` of `k`'s word.
#[inline(always)]
fn digit<K: SortKey>(k: K, pass: u32) -> usize {
    (k.to_word() >> (pass * BITS)) as usize & (BUCKETS - 1)
}

/// `keys` ordered by their words.
pub fn sort<K: SortKey>(keys: &[K]) -> Vec<K> {
    sort_arrays(keys, &[]).0
}

/// The pairs `(keys[i], values[i])` ordered by the keys' words, stable;
/// `values` is as long as `keys`.
pub fn sort_pairs<K: SortKey>(keys: &[K], values: &[u32]) -> (Vec<K>, Vec<u32>) {
    sort_arrays(keys, values)
}

/// Keys and values (none, or one per key) ordered by the keys' words.
fn sort_arrays<K: SortKey>(keys: &[K], values: &[u32]) -> (Vec<K>, Vec<u32>) {
    let n = keys.len();
    let chunks = (n / MIN_CHUNK).clamp(1, 4 * rayon::current_num_threads());
    let chunk = n.div_ceil(chunks).max(1);
    // `cur`: where the keys are now (None: still the caller's slices).
    let mut cur: Option<(Vec<K>, Vec<u32>)> = None;
    let mut spare: Option<(Vec<K>, Vec<u32>)> = None;
    for pass in 0..PASSES {
        let (sk, sv) = match &cur {
            Some((k, v)) => (&k[..], &v[..]),
            None => (keys, values),
        };
        let counts: Vec<Vec<u32>> = sk.par_chunks(chunk).map(|c| count(c, pass)).collect();
        if (0..BUCKETS).any(|d| counts.iter().map(|c| c[d] as usize).sum::<usize>() == n) {
            continue;
        }
        let (mut dk, mut dv) = spare.take().unwrap_or_else(|| (fresh(n), fresh(values.len())));
        let (kruns, vruns) = (split(&mut dk, &counts), split(&mut dv, &counts));
        let src = sk.par_chunks(chunk).zip(chunk_or_empty(sv, chunk, counts.len()));
        src.zip(kruns.into_par_iter().zip(vruns))
            .for_each(|((ck, cv), (kr, vr))| scatter(ck, cv, kr, vr, pass));
        spare = cur.replace((dk, dv));
    }
    cur.unwrap_or_else(|| (keys.to_vec(), values.to_vec()))
}

/// `n` zeroed elements (untouched pages until written), on huge pages
/// where the kernel can.
fn fresh<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    advise_huge_pages(&mut v);
    v
}

/// `values` in chunks of `chunk`, or `chunks` empty slices when there are
/// no values.
fn chunk_or_empty(values: &[u32], chunk: usize, chunks: usize) -> Vec<&[u32]> {
    if values.is_empty() {
        vec![&[][..]; chunks]
    } else {
        values.chunks(chunk).collect()
    }
}

/// How many keys of `chunk` have each digit value in `pass`.
fn count<K: SortKey>(chunk: &[K], pass: u32) -> Vec<u32> {
    let mut c = vec![0u32; BUCKETS];
    for &k in chunk {
        c[digit(k, pass)] += 1;
    }
    c
}

/// `out` cut into each chunk's runs: chunk `c`'s run for digit `d` has
/// `counts[c][d]` elements and follows every run of a smaller digit and
/// those of digit `d` from earlier chunks. An empty `out` (no values) gives
/// every chunk no runs.
fn split<'a, T>(mut out: &'a mut [T], counts: &[Vec<u32>]) -> Vec<Vec<&'a mut [T]>> {
    if out.is_empty() {
        return counts.iter().map(|_| Vec::new()).collect();
    }
    let mut runs: Vec<Vec<&mut [T]>> = counts.iter().map(|_| Vec::with_capacity(BUCKETS)).collect();
    for d in 0..BUCKETS {
        for (r, c) in runs.iter_mut().zip(counts) {
            let (run, rest) = std::mem::take(&mut out).split_at_mut(c[d] as usize);
            r.push(run);
            out = rest;
        }
    }
    runs
}

/// Moves a chunk's keys (and its values, if any), in order, into the runs
/// of their digits.
fn scatter<K: SortKey>(
    keys: &[K],
    values: &[u32],
    kruns: Vec<&mut [K]>,
    vruns: Vec<&mut [u32]>,
    pass: u32,
) {
    // The counts size every run to its keys: a slot is always there.
    let mut ks: Vec<std::slice::IterMut<K>> = kruns.into_iter().map(|r| r.iter_mut()).collect();
    if values.is_empty() {
        for &k in keys {
            if let Some(s) = ks[digit(k, pass)].next() {
                *s = k;
            }
        }
        return;
    }
    let mut vs: Vec<std::slice::IterMut<u32>> = vruns.into_iter().map(|r| r.iter_mut()).collect();
    for (&k, &v) in keys.iter().zip(values) {
        let d = digit(k, pass);
        if let Some(s) = ks[d].next() {
            *s = k;
        }
        if let Some(s) = vs[d].next() {
            *s = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{cpu, reference};
    use super::*;
    use crate::test_rng::Rng;

    /// Sizes: empty, tiny, primes, around the cut-off (2^17), and above
    /// a single chunk per thread.
    const SIZES: &[usize] = &[
        0,
        1,
        2,
        3,
        7,
        13,
        251,
        4099,
        16_381,
        cpu::RADIX_FROM - 1,
        cpu::RADIX_FROM,
        cpu::RADIX_FROM + 3,
        200_003,
    ];

    /// f32 keys: random bit patterns (NaNs of both signs, subnormals,
    /// infinities among them), the specials, and repeats of a few values.
    fn f32_keys(rng: &mut Rng, n: usize) -> Vec<f32> {
        let specials = [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0xffc0_0001),
            f32::from_bits(0x7f80_0001),
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MIN_POSITIVE / 2.0,
            1.0,
        ];
        (0..n)
            .map(|_| match rng.below(4) {
                0 => specials[rng.below(specials.len() as u64) as usize],
                1 => rng.unit() * 2.0 - 1.0,
                2 => [0.5f32, -3.0, 7.25][rng.below(3) as usize],
                _ => f32::from_bits(rng.next_u64() as u32),
            })
            .collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn f32_keys_match_the_reference_bit_for_bit() {
        for &n in SIZES {
            let keys = f32_keys(&mut Rng::from_parts(&[1, n as u64]), n);
            let want = bits(&reference::sort(&keys));
            assert_eq!(bits(&sort(&keys)), want, "radix, {n} keys");
            assert_eq!(bits(&cpu::sort(&keys).unwrap()), want, "cpu, {n} keys");
        }
    }

    #[test]
    fn integer_keys_match_the_reference() {
        for &n in SIZES {
            let mut rng = Rng::from_parts(&[2, n as u64]);
            let u: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let i: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32 >> rng.below(32)).collect();
            assert_eq!(sort(&u), reference::sort(&u), "u32, {n} keys");
            assert_eq!(sort(&i), reference::sort(&i), "i32, {n} keys");
            assert_eq!(cpu::sort(&i).unwrap(), reference::sort(&i), "cpu i32, {n} keys");
        }
    }

    #[test]
    fn passes_with_one_digit_are_skipped_and_the_result_still_sorted() {
        let mut rng = Rng::new(3);
        // One byte of difference: three of four passes see a single digit.
        let small: Vec<u32> = (0..70_001).map(|_| rng.below(256) as u32 + (7 << 24)).collect();
        assert_eq!(sort(&small), reference::sort(&small));
        // Every key equal: no pass runs and the keys come back as given.
        let same = vec![-0.0f32; 70_001];
        assert_eq!(bits(&sort(&same)), bits(&same));
        let values: Vec<u32> = (0..70_001).rev().collect();
        assert_eq!(sort_pairs(&same, &values).1, values);
    }

    #[test]
    fn pairs_match_the_reference_and_keep_equal_keys_in_input_order() {
        for &n in SIZES {
            let mut rng = Rng::from_parts(&[4, n as u64]);
            let keys = f32_keys(&mut rng, n);
            let values: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let (wk, wv) = reference::sort_pairs(&keys, &values);
            let (k, v) = sort_pairs(&keys, &values);
            assert_eq!((bits(&k), &v), (bits(&wk), &wv), "radix, {n} pairs");
            let (k, v) = cpu::sort_pairs(&keys, &values).unwrap();
            assert_eq!((bits(&k), &v), (bits(&wk), &wv), "cpu, {n} pairs");
            // Few distinct keys: long runs of equal keys, whose indices
            // must come out ascending.
            let few: Vec<i32> = (0..n).map(|_| rng.below(5) as i32 - 2).collect();
            let idx: Vec<u32> = (0..n as u32).collect();
            let (k, v) = sort_pairs(&few, &idx);
            assert_eq!((k.clone(), v.clone()), reference::sort_pairs(&few, &idx), "{n} pairs");
            assert!(v.windows(2).zip(k.windows(2)).all(|(v, k)| k[0] != k[1] || v[0] < v[1]));
        }
    }
}
