//! OpenCL variants of `gaussian`: the variant table, and with each entry
//! the passes it runs ([`plan`]). The kernels are in `cl/gaussian/`, named
//! after the variants (`passes` says how); `iir_transpose` and
//! `iir_blocks` also run the transpose op's `local_x4`. See
//! `docs/KERNELS.md`.

use super::geometry::{
    fir_tiles_geometry, row_blk_geometry, row_local_bytes, row_local_geometry, t2_local_bytes, working_channels,
    working_pixel,
};
use super::passes::{Axis::*, Both, Line::*, Plan, Step::*};
use super::{policy, GaussianParams};
use crate::ops::{no_local, Shape, VariantSpec};

pub use super::geometry::{FIR_LX, FIR_RMAX, FIR_TX, FIR_TY};
pub use super::policy::radius;

/// The recursive variants' tolerance against the reference (Deriche's
/// approximation), also the CPU path's bound.
pub const IIR_TOLERANCE: f32 = 1e-3;

fn params(s: &Shape) -> Result<GaussianParams, String> {
    s.params
        .get::<GaussianParams>()
        .copied()
        .ok_or_else(|| "gaussian variants need gaussian parameters".into())
}

/// The recursive variants: replicate border, every non-zero sigma >= 1.
fn iir(s: &Shape) -> Result<(), String> {
    policy::iir_fits(&params(s)?)
}

fn fir(s: &Shape) -> Result<(), String> {
    policy::fir_fits(&params(s)?)
}

fn fir_local_bytes(s: &Shape) -> usize {
    let rows = FIR_LX + 2 * FIR_RMAX;
    let cols = (FIR_TY + 2 * FIR_RMAX) * FIR_TX;
    rows.max(cols) * working_pixel(s.channels)
}

fn fir_tiles(s: &Shape) -> Result<(), String> {
    policy::fir_tiles_fits(&params(s)?, s.channels)
}

/// fir_tiles: the staged band and the ring of filtered rows, at most
/// [`FIR_TILES_LOCAL`](super::geometry::FIR_TILES_LOCAL) (0 where it
/// declines the request).
fn fir_tiles_local(s: &Shape) -> usize {
    let Ok(p) = params(s) else { return 0 };
    let (rx, ry) = policy::fir_tiles_radii(&p);
    fir_tiles_geometry(rx, ry, s.channels).map_or(0, |g| g.local_bytes(rx, ry, s.channels))
}

/// iir_local: the row pass stages a whole row plus the scan's four states
/// per work-item (the column pass needs no local memory).
fn local_rows_local(s: &Shape) -> usize {
    let (wg, seg) = row_local_geometry(s.width, working_channels(s.channels));
    row_local_bytes(wg, seg, s.channels)
}

/// The recursive variants' constraints, and a row short enough for one
/// work-group to hold.
fn local_rows(s: &Shape) -> Result<(), String> {
    iir(s)?;
    policy::row_local_fits(s.width, working_channels(s.channels))
}

/// iir_rowblk: a row tile (one segment per work-item, at the odd stride)
/// plus the scan's four states per work-item; the column pass needs none.
/// 13 KiB for colour, 18.5 KiB for gray.
fn local_row_tiles(s: &Shape) -> usize {
    let (wg, seg) = row_blk_geometry(working_channels(s.channels));
    row_local_bytes(wg, seg, s.channels)
}

/// iir_tiles: one square tile per channel plane at a padded stride, 16.6
/// KiB gray (64x64) and 17 KiB colour (32x32 float4); the fix-up pass
/// needs less. [`VariantSpec::check`] compares it with the device's local
/// memory.
fn local_tiles(s: &Shape) -> usize {
    t2_local_bytes(s.channels)
}

fn transpose_tile(s: &Shape) -> usize {
    // The transpose op's local_x4 tile over working pixels.
    32 * 33 * working_pixel(s.channels)
}

/// The passes `spec` runs: its entry's plan in the table below. (The entry
/// is found by its name, the table's key: a `&'static` entry's address is
/// not unique across crates, so it cannot serve.)
pub fn plan(spec: &VariantSpec) -> Option<&'static Plan> {
    VARIANTS
        .iter()
        .position(|v| v.name == spec.name)
        .map(|i| &PLANS[i])
}

/// Builds [`VARIANTS`] and the plans from one list of (entry, plan) pairs,
/// so that each variant's passes sit with its entry.
macro_rules! table {
    ($(($spec:expr, $plan:expr)),* $(,)?) => {
        /// The variant table.
        pub static VARIANTS: &[VariantSpec] = &[$($spec),*];
        /// Each variant's passes, in [`VARIANTS`]' order.
        static PLANS: &[Plan] = &[$($plan),*];
    };
}

table!(
    (
        VariantSpec {
            name: "iir_rows_cols",
            summary: "rgH (one work-item per row, uncoalesced) then rgV (one per column)",
            files: &["gaussian/common.cl", "gaussian/iir.cl"],
            options: "",
            local: [64, 1],
            local_bytes: no_local,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        Plan {
            both: None,
            steps: &[Along(X, IirRows), Along(Y, IirCols)],
        }
    ),
    (
        VariantSpec {
            name: "iir_transpose",
            summary: "rgV, transpose (local_x4), rgV, transpose: every pass coalesced",
            files: &["gaussian/common.cl", "gaussian/iir.cl"],
            options: "",
            local: [64, 1],
            local_bytes: transpose_tile,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        Plan {
            both: None,
            steps: &[Along(Y, IirCols), Transposed(IirCols)],
        }
    ),
    (
        VariantSpec {
            name: "iir_transpose_f4",
            summary: "as iir_transpose; gray filters 4 columns per work-item with float4",
            files: &["gaussian/common.cl", "gaussian/iir.cl"],
            options: "",
            local: [64, 1],
            local_bytes: transpose_tile,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        Plan {
            both: None,
            steps: &[Along(Y, IirCols4), Transposed(IirCols4)],
        }
    ),
    (
        VariantSpec {
            name: "iir_blocks",
            summary: "block-parallel rgV (blocks of 64 gray / 16 colour rows in registers, \
                      exact carries) + transposes: fills a large GPU",
            files: &["gaussian/common.cl", "gaussian/blocks.cl"],
            options: "",
            local: [64, 1],
            local_bytes: transpose_tile,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        Plan {
            both: None,
            steps: &[Along(Y, ColBlocks), Transposed(ColBlocks)],
        }
    ),
    (
        VariantSpec {
            name: "iir_local",
            summary: "block-parallel rgV with blocks in registers, then each row whole in \
                      local memory, scanned across work-items: no transposes",
            files: &[
                "gaussian/common.cl",
                "gaussian/blocks.cl",
                "gaussian/rows.cl"
            ],
            options: "",
            local: [64, 1],
            local_bytes: local_rows_local,
            supports: local_rows,
            requires: &[],
            tolerance: 1e-3,
        },
        Plan {
            both: None,
            steps: &[Along(Y, ColBlocks), Along(X, RowLocal)],
        }
    ),
    (
        VariantSpec {
            name: "iir_rowblk",
            summary: "block-parallel rgV with blocks in registers, then rows cut into tiles \
                      staged in local memory, scanned within a tile and carried between \
                      tiles: no transposes at any width",
            files: &[
                "gaussian/common.cl",
                "gaussian/blocks.cl",
                "gaussian/rows.cl"
            ],
            options: "",
            local: [64, 1],
            local_bytes: local_row_tiles,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        Plan {
            both: None,
            steps: &[Along(Y, ColBlocks), Along(X, RowBlocks)],
        }
    ),
    (
        VariantSpec {
            name: "iir_tiles",
            summary: "square tiles read twice: column and row block sums from one read, both \
                      carries, then each tile filtered down and across",
            files: &[
                "gaussian/common.cl",
                "gaussian/blocks.cl",
                "gaussian/rows.cl",
                "gaussian/tiles.cl",
            ],
            options: "",
            local: [64, 1],
            local_bytes: local_tiles,
            supports: iir,
            requires: &[],
            tolerance: IIR_TOLERANCE,
        },
        // One sigma 0: the other axis as iir_rowblk runs it.
        Plan {
            both: Some(Both::Tiles),
            steps: &[Along(Y, ColBlocks), Along(X, RowBlocks)],
        }
    ),
    (
        VariantSpec {
            name: "fir_local",
            summary: "separable FIR, row segments and column tiles staged in local memory \
                      (radius <= 48)",
            files: &["gaussian/common.cl", "gaussian/fir.cl"],
            options: "",
            local: [128, 1],
            local_bytes: fir_local_bytes,
            supports: fir,
            requires: &[],
            tolerance: 1e-5,
        },
        Plan {
            both: None,
            steps: &[Along(X, FirRows), Along(Y, FirCols)],
        }
    ),
    (
        VariantSpec {
            name: "fir_tiles",
            summary: "separable FIR in one kernel: strips of the user's samples staged in \
                      local memory, rows then columns from register windows (radius <= 48)",
            files: &["gaussian/common.cl", "gaussian/fir.cl"],
            options: "",
            local: [256, 1],
            local_bytes: fir_tiles_local,
            supports: fir_tiles,
            requires: &[],
            tolerance: 1e-5,
        },
        // Any sigmas but both 0, as one pass (a sigma 0 is a single tap).
        Plan {
            both: Some(Both::FirTiles),
            steps: &[],
        }
    ),
);
