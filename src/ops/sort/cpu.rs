//! The rayon sorts: below a cut-off rayon's `par_sort_unstable` on the
//! keys' u32 words (for pairs on `word << 32 | index`, which makes equal
//! keys keep their input order; the words are made sequentially, and
//! rayon sorts short slices on one thread, so small sorts pay no rayon
//! set-up), from it the parallel radix sort of `radix.rs`, which
//! is stable too. Both give the same result bit for bit: keys by their
//! words, equal keys' values in input order.

use rayon::slice::ParallelSliceMut;

use super::keys::SortKey;
use super::radix;
use crate::error::{Error, Result};

/// Keys (and pairs) from which [`sort`] and [`sort_pairs`] take the radix
/// sort. On the 2-core VM (2026-11-27, docs/results/2026-11-27-s31-sort.md)
/// the radix sort was ahead from 2^20 keys on and mixed at 2^16 (equal in
/// one run, 1.6x slower in the other), so 2^16 keys stay with the
/// comparison sort.
pub const RADIX_FROM: usize = 1 << 17;

/// `keys` in ascending order.
pub fn sort<K: SortKey>(keys: &[K]) -> Result<Vec<K>> {
    if keys.len() >= RADIX_FROM {
        return Ok(radix::sort(keys));
    }
    let mut w: Vec<u32> = keys.iter().map(|k| k.to_word()).collect();
    w.par_sort_unstable();
    Ok(w.into_iter().map(K::from_word).collect())
}

/// The pairs ordered by key, stable; `values` must be as long as `keys`.
pub fn sort_pairs<K: SortKey>(keys: &[K], values: &[u32]) -> Result<(Vec<K>, Vec<u32>)> {
    check_pairs(keys.len(), values.len())?;
    if keys.len() >= RADIX_FROM {
        return Ok(radix::sort_pairs(keys, values));
    }
    let mut w: Vec<u64> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (u64::from(k.to_word()) << 32) | i as u64)
        .collect();
    w.par_sort_unstable();
    Ok(w.into_iter()
        .map(|x| (K::from_word((x >> 32) as u32), values[x as u32 as usize]))
        .unzip())
}

/// [`Error::InvalidArgument`] unless there is one value per key and the
/// indices fit u32.
pub fn check_pairs(keys: usize, values: usize) -> Result<()> {
    if keys != values {
        return Err(Error::arg(format!(
            "sort_pairs needs one value per key: {keys} keys, {values} values"
        )));
    }
    if keys > u32::MAX as usize {
        return Err(Error::arg(format!(
            "sort_pairs indexes with u32: {keys} keys are too many"
        )));
    }
    Ok(())
}
