//! OpenCL variants of `sort`.

use crate::ops::{any_shape, Shape, VariantSpec};

/// Work-group size of every sort kernel.
pub const GROUP: usize = 256;

/// Words per work-item of a radix tile (a tile is GROUP x ITEMS words;
/// with pairs GROUP x ITEMS / 2 words and their indices).
pub const ITEMS: usize = 16;

/// Bitonic: 2 x GROUP words (and their indices) in local memory.
fn bitonic_local(s: &Shape) -> usize {
    2 * GROUP * 4 * if super::pairs_of(s) { 2 } else { 1 }
}

/// Radix scatter, the largest of the radix kernels: the tile (GROUP x
/// ITEMS words, or half as many words and their indices) and 8 packed
/// counter words per work-item, each array with one spare word per 32
/// (bank padding), and the work-group scan's two buffers. The same for
/// keys and pairs.
fn radix_local(_: &Shape) -> usize {
    let (tile, counters) = (GROUP * ITEMS, 8 * GROUP);
    4 * (tile + tile / 32 + counters + counters / 32 + 2 * GROUP)
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
        summary: "LSD radix sort, 8 bits a pass (4 passes): per-tile digit counts, a \
                  three-kernel prefix sum, each tile sorted in local memory by two stable \
                  4-bit splits and written out in runs of equal digits",
        files: &["sort/sort.cl"],
        options: "-DL=256 -DITEMS=16",
        local: [GROUP, 1],
        local_bytes: radix_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
