//! OpenCL variants of `demosaic`. Both run every method, pattern and input
//! format; they differ in how a quad's neighbourhood reaches the work-item.

use super::Method;
use crate::ops::{any_shape, no_local, Shape, VariantSpec};

/// `tile` work-group shape in quads (`-DTX`, `-DTY` in its options).
pub const TILE: [usize; 2] = [16, 8];

/// The method a request asks for (mhc when the shape carries no parameters).
fn method(s: &Shape) -> Method {
    s.params
        .get::<super::DemosaicParams>()
        .map_or_else(Method::default, |p| p.method)
}

/// Local memory of `tile`: one f32 per sample of the tile and its apron.
fn tile_local(s: &Shape) -> usize {
    let r = method(s).radius();
    (2 * TILE[0] + 2 * r) * (2 * TILE[1] + 2 * r) * 4
}

/// The rayon path's bound against the reference, in units of the output's
/// full scale: it too sums in its own order.
pub const CPU_TOLERANCE: f32 = 1e-5;

/// The variant table. Tolerances: the kernels sum in another order than
/// the reference (and may contract to fma), so results differ by a few
/// f32 rounding steps of the largest neighbour.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "tile",
        summary:
            "CFA tile + apron in local memory, loaded (unpacked, levelled) once per work-group; \
                  one 2x2 quad per work-item, vector stores",
        files: &["demosaic/demosaic.cl"],
        options: "-DTX=16 -DTY=8",
        local: TILE,
        local_bytes: tile_local,
        supports: any_shape,
        requires: &[],
        tolerance: 1e-5,
    },
    VariantSpec {
        name: "direct",
        summary: "each work-item reads its quad's neighbourhood from global memory",
        files: &["demosaic/demosaic.cl"],
        options: "",
        local: [16, 8],
        local_bytes: no_local,
        supports: any_shape,
        requires: &[],
        tolerance: 1e-5,
    },
];
