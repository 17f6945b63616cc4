//! OpenCL variants of `gaussian`. Multi-pass variants are made of stage
//! kernels in `cl/gaussian.cl` (`gaussian_iir_rows`, `gaussian_iir_cols`,
//! `gaussian_iir_cols4`, `gaussian_blk_*`, `gaussian_row_local`,
//! `gaussian_rowblk_*`, `gaussian_fir_rows`, `gaussian_fir_cols`) plus the
//! transpose op's `local_x4` kernel; see `docs/KERNELS.md`.

use super::{policy, GaussianParams};
use crate::ops::{no_local, OpParams, Shape, VariantSpec};

/// The recursive variants' tolerance against the reference (Deriche's
/// approximation), also the CPU path's bound.
pub const IIR_TOLERANCE: f32 = 1e-3;

/// The largest FIR radius the local-memory FIR variant stages (`FIR_RMAX`).
pub const FIR_RMAX: usize = 48;
/// FIR row-pass segment width and column-pass tile (`FIR_LX`, `FIR_TX`, `FIR_TY`).
pub const FIR_LX: usize = 128;
/// Column-pass tile width.
pub const FIR_TX: usize = 16;
/// Column-pass tile height.
pub const FIR_TY: usize = 16;

fn params(s: &Shape) -> Result<GaussianParams, String> {
    match s.params {
        OpParams::Gaussian(p) => Ok(p),
        _ => Err("gaussian variants need gaussian parameters".into()),
    }
}

/// The recursive variants: replicate border, every non-zero sigma >= 1.
fn iir(s: &Shape) -> Result<(), String> {
    policy::iir_fits(&params(s)?)
}

pub use policy::radius;

fn fir(s: &Shape) -> Result<(), String> {
    policy::fir_fits(&params(s)?)
}

/// The working image is float (gray) or float4 (colour).
fn working_pixel(s: &Shape) -> usize {
    if s.channels == 1 {
        4
    } else {
        16
    }
}

fn fir_tiles(s: &Shape) -> usize {
    let rows = FIR_LX + 2 * FIR_RMAX;
    let cols = (FIR_TY + 2 * FIR_RMAX) * FIR_TX;
    rows.max(cols) * working_pixel(s)
}

/// iir_local: the row pass stages a whole row plus the scan's four states
/// per work-item (the column pass needs no local memory).
fn local_rows_local(s: &Shape) -> usize {
    let (wg, seg) = super::row_local_geometry(s.width, working_channels(s));
    (wg * (seg + 1) + 4 * wg) * working_pixel(s)
}

/// The recursive variants' constraints, and a row short enough for one
/// work-group to hold.
fn local_rows(s: &Shape) -> Result<(), String> {
    iir(s)?;
    policy::row_local_fits(s.width, working_channels(s))
}

/// iir_rowblk: a row tile (one segment per work-item, at the odd stride)
/// plus the scan's four states per work-item; the column pass needs none.
/// 13 KiB for colour, 18.5 KiB for gray.
fn local_row_tiles(s: &Shape) -> usize {
    let (wg, seg) = super::row_blk_geometry(working_channels(s));
    (wg * (seg + 1) + 4 * wg) * working_pixel(s)
}

/// iir_tiles: gray only (a float4 tile would not fit local memory).
fn gray_tiles(s: &Shape) -> Result<(), String> {
    iir(s)?;
    if s.channels != 1 {
        return Err("iir_tiles stages gray tiles only".into());
    }
    Ok(())
}

/// iir_tiles: one square tile at a padded stride (the fix-up pass needs
/// less).
fn local_tiles(_: &Shape) -> usize {
    let t = super::T2_TILE;
    t * (t + 1) * 4
}

fn working_channels(s: &Shape) -> usize {
    if s.channels == 1 {
        1
    } else {
        4
    }
}

fn transpose_tile(s: &Shape) -> usize {
    // The transpose op's local_x4 tile over working pixels.
    32 * 33 * working_pixel(s)
}

/// The variant table.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "iir_rows_cols",
        summary: "rgH (one work-item per row, uncoalesced) then rgV (one per column)",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: no_local,
        supports: iir,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "iir_transpose",
        summary: "rgV, transpose (local_x4), rgV, transpose: every pass coalesced",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: transpose_tile,
        supports: iir,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "iir_transpose_f4",
        summary: "as iir_transpose; gray filters 4 columns per work-item with float4",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: transpose_tile,
        supports: iir,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "iir_blocks",
        summary: "block-parallel rgV (blocks of 64 gray / 16 colour rows in registers, exact \
                  carries) + transposes: fills a large GPU",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: transpose_tile,
        supports: iir,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "iir_local",
        summary: "block-parallel rgV with blocks in registers, then each row whole in local \
                  memory, scanned across work-items: no transposes",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: local_rows_local,
        supports: local_rows,
        tolerance: 1e-3,
    },
    VariantSpec {
        name: "iir_rowblk",
        summary: "block-parallel rgV with blocks in registers, then rows cut into tiles staged \
                  in local memory, scanned within a tile and carried between tiles: no \
                  transposes at any width",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: local_row_tiles,
        supports: iir,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "iir_tiles",
        summary: "square tiles read twice: column and row block sums from one read, both \
                  carries, then each tile filtered down and across (gray)",
        files: &["gaussian/gaussian.cl"],
        options: "",
        local: [64, 1],
        local_bytes: local_tiles,
        supports: gray_tiles,
        tolerance: IIR_TOLERANCE,
    },
    VariantSpec {
        name: "fir_local",
        summary:
            "separable FIR, row segments and column tiles staged in local memory (radius <= 48)",
        files: &["gaussian/gaussian.cl"],
        options: "-DFIR_RMAX=48 -DFIR_LX=128 -DFIR_TX=16 -DFIR_TY=16",
        local: [128, 1],
        local_bytes: fir_tiles,
        supports: fir,
        tolerance: 1e-5,
    },
];
