//! OpenCL variants of `sort`.

use crate::ops::{any_shape, Shape, VariantSpec};

/// Work-group size of every sort kernel.
pub const GROUP: usize = 256;

/// Words per work-item of the radix kernels (a block is GROUP x ITEMS).
pub const ITEMS: usize = 8;

/// Bitonic: 2 x GROUP words (and their indices) in local memory.
fn bitonic_local(s: &Shape) -> usize {
    2 * GROUP * 4 * if super::pairs_of(s) { 2 } else { 1 }
}

/// Radix scatter: the block's words (and indices), 16 u16 counters per
/// work-item and the work-items' partial sums.
fn radix_local(s: &Shape) -> usize {
    let block = GROUP * ITEMS * 4 * if super::pairs_of(s) { 2 } else { 1 };
    block + 16 * GROUP * 2 + GROUP * 4
}

/// The variant table: both are exact (tolerance 0), and both equal the
/// reference bit for bit (pairs: stable).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "bitonic",
        summary: "bitonic network padded to a power of two; global steps for strides of \
                  2x256 and more, all shorter strides of a stage fused in local memory",
        files: &["sort/sort.cl"],
        options: "-DL=256",
        local: [GROUP, 1],
        local_bytes: bitonic_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "radix",
        summary: "LSD radix sort, 4 bits a pass (8 passes): per-group digit counts, one \
                  prefix sum, stable scatter through local memory",
        files: &["sort/sort.cl"],
        options: "-DL=256 -DITEMS=8",
        local: [GROUP, 1],
        local_bytes: radix_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
