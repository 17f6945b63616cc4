//! OpenCL variants of `median`.

use crate::ops::{any_shape, no_local, Shape, VariantSpec};

/// The local variant's work-group edge.
pub const TILE: usize = 16;

/// The radius a request carries (3 when it carries none: the most local
/// memory any request needs).
pub fn radius(s: &Shape) -> usize {
    s.params
        .get::<super::MedianParams>()
        .map_or(super::MAX_RADIUS, |p| p.radius) as usize
}

/// A tile of (TILE + 2r)^2 u32 keys.
fn tile_keys(s: &Shape) -> usize {
    let e = TILE + 2 * radius(s);
    e * e * 4
}

/// The variant table. Both select with min/max only: bit-exact (tolerance 0).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "network",
        summary: "one work-item per pixel, the window in registers: the 19-exchange \
                  network (3x3) or forgetful selection (5x5, 7x7)",
        files: &["median/median.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "local",
        summary: "as network, the 16x16 tile plus the radius staged in local memory \
                  one channel at a time",
        files: &["median/median.cl"],
        options: "-DTILE=16",
        local: [TILE, TILE],
        local_bytes: tile_keys,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
