//! OpenCL variants of `transpose`.

use crate::ops::{any_shape, no_local, Shape, VariantSpec};

/// A 16x17 padded tile of pixels.
fn tile16_padded(s: &Shape) -> usize {
    16 * 17 * s.local_pixel_bytes()
}

/// A 16x16 tile of pixels.
fn tile16(s: &Shape) -> usize {
    16 * 16 * s.local_pixel_bytes()
}

/// A 32x33 padded tile of pixels.
fn tile32_padded(s: &Shape) -> usize {
    32 * 33 * s.local_pixel_bytes()
}

/// The variant table. Every entry is bit-exact (tolerance 0).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "naive",
        summary: "one work-item per pixel; coalesced reads, strided writes",
        files: &["transpose/transpose.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "local",
        summary: "16x16 tile in local memory, padded by one column against bank conflicts",
        files: &["transpose/transpose.cl"],
        options: "-DTILE=16",
        local: [16, 16],
        local_bytes: tile16_padded,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "local_diag",
        summary: "16x16 tile without padding; columns rotated by the row (diagonal layout)",
        files: &["transpose/transpose.cl"],
        options: "-DTILE=16",
        local: [16, 16],
        local_bytes: tile16,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "local_x4",
        summary: "32x32 padded tile moved by a 32x8 work-group, 4 pixels per work-item",
        files: &["transpose/transpose.cl"],
        options: "-DTILE=32 -DROWS=8",
        local: [32, 8],
        local_bytes: tile32_padded,
        supports: any_shape,
        requires: &[],
        tolerance: 0.0,
    },
];
