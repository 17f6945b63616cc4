//! The rayon path's radix sort, for keys alone and for keys with u32
//! values, ordered by the keys' u32 words ([`SortKey::to_word`]), in
//! digits of 8 bits.
//!
//! Most significant digit first while a range is large, least significant
//! first once it fits in a core's cache: the first pass moves every key by
//! its top digit into one of 256 buckets, and each bucket is then sorted by
//! the digits below, one rayon task each. A bucket of at most 2^15 (`SMALL`)
//! keys takes LSD passes over its remaining digits between its own range
//! of the two buffers, which stay in the core's L2 cache; a larger one
//! (keys crowded in a few top digits, as f32 keys in [0, 1) are) takes
//! another MSD pass first. So only the first pass or two move the array
//! through memory, against four for an LSD sort of the whole array (on
//! the 2-core VM, 2^24 f32 keys: see docs/results/2026-11-28-s36-sort.md).
//!
//! Every pass is stable: a pass counts its range's digits, and moves each
//! key after the keys of its digit that came before it; a large range is
//! cut into chunks, one rayon task each, whose counts are summed in
//! digit-major order (digit 0 of every chunk, then digit 1, ...), so each
//! chunk's keys land after those of earlier chunks. An MSD bucket holds a
//! contiguous run of the sorted order, and an LSD sort of the lower digits
//! is stable, so the sort is stable: equal keys keep their input order, as
//! they did in the comparison sort on `word << 32 | index` it replaces. A
//! pass whose keys all have the same digit moves nothing and is skipped.
//!
//! The passes move the keys themselves, not their words: the word is
//! computed where a digit is needed, so the first pass reads the caller's
//! slices into the result. Spare memory is only as large as the buckets
//! need: each task reuses one buffer of at most `SMALL` keys for the
//! small buckets, and the large ones share one fresh buffer of the
//! largest's size. On a VM a fresh page costs a fault, which at 2^24 keys
//! weighs as much as a pass; fresh buffers ask for huge pages
//! ([`crate::simd::mem::advise_huge_pages`]).
//!
//! The moves stay safe code: the buffers are cut by `split_at_mut` into one
//! slice per bucket (and, in a parallel pass, per digit and chunk).
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
/// The most significant digit of a 32-bit word.
const TOP: u32 = 32 / BITS - 1;
/// Keys per chunk at least, so that counting and cutting stay cheap
/// against moving the keys.
const MIN_CHUNK: usize = 1 << 14;
/// The largest range sorted by LSD passes alone: 2^15 keys are 128 KiB,
/// twice that with the spare range, within a core's L2 cache (and the
/// values' as much again).
const SMALL: usize = 1 << 15;

/// Digit `d` of `k`'s word (0: the least significant).
#[inline(always)]
fn digit<K: SortKey>(k: K, d: u32) -> usize {
    (k.to_word() >> (d * BITS)) as usize & (BUCKETS - 1)
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
    let (mut out_k, mut out_v) = (fresh(n), fresh(values.len()));
    let mut out = Arrays { k: &mut out_k, v: &mut out_v };
    // The first digit that differs moves the caller's keys into `out`.
    for d in (0..=TOP).rev() {
        if let Some(bounds) = pass(keys, values, out.reborrow(), d) {
            first_buckets(out, &bounds, d);
            return (out_k, out_v);
        }
    }
    // Every key has the same word: the input is its own order.
    out.k.copy_from_slice(keys);
    out.v.copy_from_slice(values);
    (out_k, out_v)
}

/// `n` zeroed elements (untouched pages until written), on huge pages
/// where the kernel can.
fn fresh<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    advise_huge_pages(&mut v);
    v
}

/// A range of keys and of their values (empty when the sort has none).
struct Arrays<'a, K> {
    k: &'a mut [K],
    v: &'a mut [u32],
}

impl<'a, K> Arrays<'a, K> {
    fn reborrow(&mut self) -> Arrays<'_, K> {
        Arrays { k: self.k, v: self.v }
    }

    /// The ranges `bounds[b]..bounds[b + 1]`, one per bucket.
    fn cut(self, bounds: &[usize; BUCKETS + 1]) -> Vec<Arrays<'a, K>> {
        let (mut k, mut v) = (self.k, self.v);
        (0..BUCKETS)
            .map(|b| {
                let len = bounds[b + 1] - bounds[b];
                let (kb, kr) = std::mem::take(&mut k).split_at_mut(len);
                k = kr;
                let vb = if v.is_empty() {
                    &mut []
                } else {
                    let (vb, vr) = std::mem::take(&mut v).split_at_mut(len);
                    v = vr;
                    vb
                };
                Arrays { k: kb, v: vb }
            })
            .collect()
    }
}

impl<K: Copy> Arrays<'_, K> {
    fn copy_from(&mut self, src: &Arrays<'_, K>) {
        self.k.copy_from_slice(src.k);
        self.v.copy_from_slice(src.v);
    }
}

/// [`buckets`] after the first pass, with scratch memory of the buckets'
/// size rather than the array's: small buckets in parallel, each task with
/// a buffer of at most [`SMALL`] keys it reuses, then large ones one after
/// another (each in parallel inside) through one buffer of the largest's
/// size. A fresh page costs a fault, and an array-sized spare was half of
/// the fresh pages a sort wrote.
fn first_buckets<K: SortKey>(data: Arrays<'_, K>, bounds: &[usize; BUCKETS + 1], d: u32) {
    if d == 0 {
        return;
    }
    let pairs = !data.v.is_empty();
    let (small, large): (Vec<_>, Vec<_>) = data.cut(bounds).into_iter().partition(|a| a.k.len() <= SMALL);
    small.into_par_iter().for_each_init(
        || (Vec::new(), Vec::new()),
        |(sk, sv), a| {
            let n = a.k.len();
            sk.resize(n, K::default());
            sv.resize(if pairs { n } else { 0 }, 0);
            sort_in(a, Arrays { k: &mut sk[..n], v: &mut sv[..] }, d - 1);
        },
    );
    let Some(m) = large.iter().map(|a| a.k.len()).max() else {
        return;
    };
    let (mut sk, mut sv) = (fresh(m), fresh(if pairs { m } else { 0 }));
    for a in large {
        let (n, nv) = (a.k.len(), a.v.len());
        sort_in(a, Arrays { k: &mut sk[..n], v: &mut sv[..nv] }, d - 1);
    }
}

/// After a pass on digit `d` left its buckets in `data` (bucket `b` at
/// `bounds[b]..bounds[b + 1]`), sorts each bucket by the digits below `d`
/// with the same range of `scratch`, in parallel; the result is in `data`.
fn buckets<K: SortKey>(data: Arrays<'_, K>, scratch: Arrays<'_, K>, bounds: &[usize; BUCKETS + 1], d: u32) {
    if d == 0 {
        return;
    }
    data.cut(bounds)
        .into_par_iter()
        .zip(scratch.cut(bounds))
        .for_each(|(a, b)| sort_in(a, b, d - 1));
}

/// Sorts `data` by digits `0..=top` (the digits above are equal), with
/// `scratch` (as long) to move through; the result is in `data`.
fn sort_in<K: SortKey>(mut data: Arrays<'_, K>, mut scratch: Arrays<'_, K>, top: u32) {
    if data.k.len() <= SMALL {
        return lsd(data, scratch, top, false);
    }
    for d in (0..=top).rev() {
        if let Some(bounds) = pass(data.k, data.v, scratch.reborrow(), d) {
            if d == 0 {
                return data.copy_from(&scratch);
            }
            let (a, b) = (scratch.cut(&bounds), data.cut(&bounds));
            return a.into_par_iter().zip(b).for_each(|(a, b)| sort_into(a, b, d - 1));
        }
    }
}

/// Sorts `src` by digits `0..=top` into `dst` (as long); `src` is left in
/// any order.
fn sort_into<K: SortKey>(src: Arrays<'_, K>, mut dst: Arrays<'_, K>, top: u32) {
    if src.k.len() <= SMALL {
        return lsd(src, dst, top, true);
    }
    for d in (0..=top).rev() {
        if let Some(bounds) = pass(src.k, src.v, dst.reborrow(), d) {
            return buckets(dst, src, &bounds, d);
        }
    }
    dst.copy_from(&src);
}

/// One pass on digit `d`: `src` (keys, and values unless empty) moved
/// stably by that digit into `dst`, in parallel chunks if large. Returns
/// where each digit's keys start (and the end), or None, moving nothing,
/// if every key has the same digit.
fn pass<K: SortKey>(keys: &[K], values: &[u32], dst: Arrays<'_, K>, d: u32) -> Option<[usize; BUCKETS + 1]> {
    let n = keys.len();
    let chunks = (n / MIN_CHUNK).clamp(1, 4 * rayon::current_num_threads());
    let chunk = n.div_ceil(chunks).max(1);
    let counts: Vec<[u32; BUCKETS]> = keys.par_chunks(chunk).map(|c| count(c, d)).collect();
    let mut bounds = [0usize; BUCKETS + 1];
    for b in 0..BUCKETS {
        let total: usize = counts.iter().map(|c| c[b] as usize).sum();
        if total == n {
            return None;
        }
        bounds[b + 1] = bounds[b] + total;
    }
    let (kruns, vruns) = (split(dst.k, &counts), split(dst.v, &counts));
    let src = keys.par_chunks(chunk).zip(chunk_or_empty(values, chunk, counts.len()));
    src.zip(kruns.into_par_iter().zip(vruns))
        .for_each(|((ck, cv), (kr, vr))| scatter(ck, cv, kr, vr, d));
    Some(bounds)
}

/// Sorts `a` by digits `0..=top` with LSD passes between `a` and `b` (as
/// long), on this thread; the result ends in `b` if `into_b`, else in `a`.
/// One read counts every digit, since a digit's counts over the whole
/// range do not depend on the order.
fn lsd<K: SortKey>(mut a: Arrays<'_, K>, mut b: Arrays<'_, K>, top: u32, into_b: bool) {
    let n = a.k.len();
    let mut hist = [[0u32; BUCKETS]; 32 / BITS as usize];
    for &k in a.k.iter() {
        let w = k.to_word();
        for (d, h) in hist[..=top as usize].iter_mut().enumerate() {
            h[(w >> (d as u32 * BITS)) as usize & (BUCKETS - 1)] += 1;
        }
    }
    // Whether the keys are in `b` now.
    let mut in_b = false;
    for (d, h) in hist[..=top as usize].iter().enumerate() {
        if h.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut at = [0usize; BUCKETS];
        for i in 1..BUCKETS {
            at[i] = at[i - 1] + h[i - 1] as usize;
        }
        if in_b {
            move_by_digit(&b, &mut a, &mut at, d as u32);
        } else {
            move_by_digit(&a, &mut b, &mut at, d as u32);
        }
        in_b = !in_b;
    }
    match (in_b, into_b) {
        (true, false) => a.copy_from(&b),
        (false, true) => b.copy_from(&a),
        _ => {}
    }
}

/// Moves `src` into `dst` by digit `d`, each key to `at[digit]` (then
/// advanced): the start of its digit's range, past the keys of that digit
/// already moved.
fn move_by_digit<K: SortKey>(src: &Arrays<'_, K>, dst: &mut Arrays<'_, K>, at: &mut [usize; BUCKETS], d: u32) {
    if src.v.is_empty() {
        for &k in src.k.iter() {
            let x = &mut at[digit(k, d)];
            dst.k[*x] = k;
            *x += 1;
        }
        return;
    }
    for (&k, &v) in src.k.iter().zip(src.v.iter()) {
        let x = &mut at[digit(k, d)];
        dst.k[*x] = k;
        dst.v[*x] = v;
        *x += 1;
    }
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

/// How many keys of `chunk` have each value of digit `d`.
fn count<K: SortKey>(chunk: &[K], d: u32) -> [u32; BUCKETS] {
    let mut c = [0u32; BUCKETS];
    for &k in chunk {
        c[digit(k, d)] += 1;
    }
    c
}

/// `out` cut into each chunk's runs: chunk `c`'s run for digit `d` has
/// `counts[c][d]` elements and follows every run of a smaller digit and
/// those of digit `d` from earlier chunks. An empty `out` (no values) gives
/// every chunk no runs.
fn split<'a, T>(mut out: &'a mut [T], counts: &[[u32; BUCKETS]]) -> Vec<Vec<&'a mut [T]>> {
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
/// of their digits (digit `d`).
fn scatter<K: SortKey>(
    keys: &[K],
    values: &[u32],
    kruns: Vec<&mut [K]>,
    vruns: Vec<&mut [u32]>,
    d: u32,
) {
    // The counts size every run to its keys: a slot is always there.
    let mut ks: Vec<std::slice::IterMut<K>> = kruns.into_iter().map(|r| r.iter_mut()).collect();
    if values.is_empty() {
        for &k in keys {
            if let Some(s) = ks[digit(k, d)].next() {
                *s = k;
            }
        }
        return;
    }
    let mut vs: Vec<std::slice::IterMut<u32>> = vruns.into_iter().map(|r| r.iter_mut()).collect();
    for (&k, &v) in keys.iter().zip(values) {
        let b = digit(k, d);
        if let Some(s) = ks[b].next() {
            *s = k;
        }
        if let Some(s) = vs[b].next() {
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

    /// Keys crowded in a few top digits, so that buckets outgrow [`SMALL`]
    /// and take further MSD passes: every way through `sort_in` and
    /// `sort_into` (a pass on a lower digit, a last digit, a range whose
    /// digits are all equal), keys alone and pairs (in input order).
    #[test]
    fn crowded_keys_take_msd_passes_and_stay_stable() {
        let n = 300_007;
        let mut rng = Rng::new(5);
        let cases: [fn(&mut Rng) -> u32; 3] = [
            // Digit 2 of two values, digit 1 of two, digit 0 random.
            |r| 7 << 24 | (r.below(2) as u32) << 16 | (r.below(2) as u32) << 8 | r.below(256) as u32,
            // Digit 2 of two values, digit 1 constant, digit 0 random.
            |r| 7 << 24 | (r.below(2) as u32) << 16 | r.below(256) as u32,
            // Digits 2 and 1 of two values each, digit 0 constant.
            |r| 7 << 24 | (r.below(2) as u32) << 16 | (r.below(2) as u32) << 8,
        ];
        for (i, make) in cases.iter().enumerate() {
            let keys: Vec<u32> = (0..n).map(|_| make(&mut rng)).collect();
            assert_eq!(sort(&keys), reference::sort(&keys), "case {i}, keys");
            let idx: Vec<u32> = (0..n as u32).collect();
            let (k, v) = sort_pairs(&keys, &idx);
            assert_eq!((k, v), reference::sort_pairs(&keys, &idx), "case {i}, pairs");
        }
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
