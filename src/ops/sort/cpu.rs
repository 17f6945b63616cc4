//! The rayon sorts: below a cut-off a sequential comparison sort on the
//! keys' u32 words (for pairs on `word << 32 | index`, which makes equal
//! keys keep their input order), from it the parallel LSD radix sort of
//! [`super::radix`], which is stable too. Both give the same result bit
//! for bit: keys by their words, equal keys' values in input order.

use super::keys::SortKey;
use super::radix;
use crate::error::{Error, Result};

/// Keys from which [`sort`] takes the radix sort. Below it the comparison
/// sort was as fast or faster on the 2-core VM (2026-11-27: 8192 keys
/// 0.064 against 0.071 ms, 16384 keys 0.138 against 0.137 ms), and it has
/// no per-pass counts and buffers to set up.
pub const RADIX_KEYS_FROM: usize = 1 << 14;

/// Pairs from which [`sort_pairs`] takes the radix sort; moving values
/// beside the keys costs the radix sort more than it costs the comparison
/// sort on packed words (16384 pairs: 0.21 against 0.30 ms on one thread).
pub const RADIX_PAIRS_FROM: usize = 1 << 16;

/// `keys` in ascending order.
pub fn sort<K: SortKey>(keys: &[K]) -> Result<Vec<K>> {
    if keys.len() >= RADIX_KEYS_FROM {
        return Ok(radix::sort(keys));
    }
    let mut w: Vec<u32> = keys.iter().map(|k| k.to_word()).collect();
    w.sort_unstable();
    Ok(w.into_iter().map(K::from_word).collect())
}

/// The pairs ordered by key, stable; `values` must be as long as `keys`.
pub fn sort_pairs<K: SortKey>(keys: &[K], values: &[u32]) -> Result<(Vec<K>, Vec<u32>)> {
    check_pairs(keys.len(), values.len())?;
    if keys.len() >= RADIX_PAIRS_FROM {
        return Ok(radix::sort_pairs(keys, values));
    }
    let mut w: Vec<u64> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (u64::from(k.to_word()) << 32) | i as u64)
        .collect();
    w.sort_unstable();
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
