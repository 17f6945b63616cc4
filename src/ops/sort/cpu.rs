//! The rayon sorts: `par_sort_unstable` on the words, and for pairs on
//! `word << 32 | index`, which makes equal keys keep their input order.

use rayon::prelude::*;

use super::keys::{from_words, to_words, SortKey};
use crate::error::{Error, Result};

/// `keys` in ascending order.
pub fn sort<K: SortKey>(keys: &[K]) -> Result<Vec<K>> {
    let mut w = to_words(keys);
    w.par_sort_unstable();
    Ok(from_words(&w))
}

/// The pairs ordered by key, stable; `values` must be as long as `keys`.
pub fn sort_pairs<K: SortKey>(keys: &[K], values: &[u32]) -> Result<(Vec<K>, Vec<u32>)> {
    check_pairs(keys.len(), values.len())?;
    let mut w: Vec<u64> = keys
        .par_iter()
        .enumerate()
        .map(|(i, k)| (u64::from(k.to_word()) << 32) | i as u64)
        .collect();
    w.par_sort_unstable();
    Ok(w
        .par_iter()
        .map(|&x| (K::from_word((x >> 32) as u32), values[x as u32 as usize]))
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
