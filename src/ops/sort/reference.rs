//! The reference sorts: the standard library's stable sort, with the keys'
//! own order ([`f32::total_cmp`], or `Ord` for the integers), not the words.

use std::cmp::Ordering;

use super::SortKey;

/// The keys' order, independent of the word mapping the variants use.
pub fn order<K: SortKey>(a: &K, b: &K) -> Ordering {
    use std::any::Any;
    let (a, b): (&dyn Any, &dyn Any) = (a, b);
    if let (Some(x), Some(y)) = (a.downcast_ref::<f32>(), b.downcast_ref::<f32>()) {
        return x.total_cmp(y);
    }
    if let (Some(x), Some(y)) = (a.downcast_ref::<i32>(), b.downcast_ref::<i32>()) {
        return x.cmp(y);
    }
    match (a.downcast_ref::<u32>(), b.downcast_ref::<u32>()) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => unreachable!("SortKey is sealed to f32, i32 and u32"),
    }
}

/// `keys` in ascending order.
pub fn sort<K: SortKey>(keys: &[K]) -> Vec<K> {
    let mut v = keys.to_vec();
    v.sort_by(order);
    v
}

/// The pairs ordered by key, equal keys in input order (stable).
pub fn sort_pairs<K: SortKey>(keys: &[K], values: &[u32]) -> (Vec<K>, Vec<u32>) {
    let mut v: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    v.sort_by(|a, b| order(&a.0, &b.0));
    v.into_iter().unzip()
}
