//! `sort`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::keys::{from_words, to_words};
use super::*;
use crate::ops::Dispatch;

/// `sort` on an engine: `engine.sort(..)`, `engine.sort_pairs(..)` (in
/// [`crate::prelude`]).
pub trait SortExt: Dispatch {
    /// `keys` in ascending order (f32 by `totalOrder`, see [`crate::ops::sort`]).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// assert_eq!(Engine::cpu().sort(&[5u32, 1, 3])?, [1, 3, 5]);
    /// let (keys, idx) = Engine::cpu().sort_pairs(&[3.0f32, -1.0, 2.0], &[0, 1, 2])?;
    /// assert_eq!((keys, idx), (vec![-1.0, 2.0, 3.0], vec![1, 2, 0]));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn sort<K: SortKey>(&self, keys: &[K]) -> Result<Vec<K>> {
        self.sort_report(keys).map(|(k, _)| k)
    }

    /// [`SortExt::sort`], also saying which variant ran and how long it took.
    fn sort_report<K: SortKey>(&self, keys: &[K]) -> Result<(Vec<K>, RunReport)> {
        let shape = super::shape(keys.len(), false);
        crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| {
                let (s, kt) = device::run(self.programs(), dev, spec, &to_words(keys), false)?;
                Ok((from_words(&s.words), kt))
            },
            || cpu::sort(keys),
        )
    }

    /// The pairs `(keys[i], values[i])` ordered by key; equal keys keep
    /// their input order (stable). Returns the sorted keys and their
    /// values. `values` must be as long as `keys` ([`crate::Error::InvalidArgument`]).
    /// An argsort is `sort_pairs(keys, &(0..n).collect::<Vec<u32>>())`.
    fn sort_pairs<K: SortKey>(&self, keys: &[K], values: &[u32]) -> Result<(Vec<K>, Vec<u32>)> {
        self.sort_pairs_report(keys, values).map(|(k, v, _)| (k, v))
    }

    /// [`SortExt::sort_pairs`], also saying which variant ran and how long it took.
    fn sort_pairs_report<K: SortKey>(
        &self,
        keys: &[K],
        values: &[u32],
    ) -> Result<(Vec<K>, Vec<u32>, RunReport)> {
        cpu::check_pairs(keys.len(), values.len())?;
        let shape = super::shape(keys.len(), true);
        let ((k, v), r) = crate::ops::dispatch(
            self,
            &SPEC,
            &shape,
            |dev: &Dev, spec| {
                let (s, kt) = device::run(self.programs(), dev, spec, &to_words(keys), true)?;
                let idx = s.idx.unwrap_or_default();
                let v = idx
                    .iter()
                    .map(|&i| values.get(i as usize).copied())
                    .collect::<Option<Vec<u32>>>()
                    .filter(|v| v.len() == keys.len())
                    .ok_or_else(|| {
                        crate::Error::arg(format!("sort variant {} lost track of its values", spec.name))
                    })?;
                Ok(((from_words(&s.words), v), kt))
            },
            || cpu::sort_pairs(keys, values),
        )?;
        Ok((k, v, r))
    }
}

impl<D: Dispatch + ?Sized> SortExt for D {}
