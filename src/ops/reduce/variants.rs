//! OpenCL variants of `reduce`: two per axis, two warp-level variants of
//! the x axis (sub-groups where the device lists them, and NVIDIA's
//! shuffles through inline PTX), and `y_split` fused into one kernel.
//!
//! `tolerance` is, for this operation, the sum's bound in units of
//! `u * sum(|x|)`, u = 2^-24 (the case's `check` reads it so, and holds min
//! and max to exactness whatever it says):
//! - a sequential compensated walk (`x_row`, `y_column`): Kahan's 2u, the
//!   fold of the compensation (u), and n u^2 terms: 4;
//! - a walk per work-item, then a tree of depth d (`x_tree`: 8,
//!   `y_split`: 3): 3 + d + 1; `y_split` then adds its blocks' results
//!   (at most 64) with a second compensated walk: 2 more, 9 in all; 16
//!   covers both; `y_fused` adds in `y_split`'s order, so its results
//!   are `y_split`'s bit for bit;
//! - `x_shfl`: warps of 32 combine with butterfly shuffles (depth 5), then
//!   the 8 warps' results (depth 3): x_tree's 8, so 16;
//! - `x_subgroup`: the sub-group combine has no specified order, so a
//!   sub-group of s <= 64 lanes adds up to s - 1, then the tree 8: 80.
//!
//! On u8 and u16 input, `x_tree`, `x_shfl`, `y_split` and `y_fused` sum in integers (exact) and
//! round once to f32, well inside their bound; the float bounds above are
//! those of f32 input.

use super::{Axis, ReduceParams};
use crate::ops::{Requirement, Shape, VariantSpec};

/// The `u` of the bounds: half an ulp of 1.0 in f32.
pub const U: f32 = f32::EPSILON / 2.0;

/// Work-items of the row-tree variants (a power of two).
pub const LWS: usize = 256;
/// The longest row, in loads, that `x_tree` and `x_shfl` give a team of 32
/// work-items rather than a whole group (32 loads each at most).
pub const SHORT_ROW: usize = 1024;
/// Columns per work-group of `y_split`.
pub const COLS: usize = 32;
/// Work-items sharing one column in `y_split` (a power of two).
pub const SPLIT: usize = 8;
/// Adjacent columns per work-item of `y_split` on a `ty`, `channels`
/// image `width` wide: 4 on gray u8 and u16 whose width is a multiple of 4
/// (one vector load per row, every row aligned), else 1
/// (cl/reduce/reduce.cl, YPACK). 16-byte loads (16 u8 or 8 u16 columns)
/// were slower: a work-item's ulong16 or ulong8 in local memory (H200,
/// 8192x8192, 2026-11-27: u16 78% to 63%, u8 53% to 31% of copy).
pub fn ypack(ty: crate::image::SampleType, channels: usize, width: usize) -> usize {
    let gray_int = channels == 1 && ty != crate::image::SampleType::F32;
    if gray_int && width.is_multiple_of(4) {
        4
    } else {
        1
    }
}

/// Bytes of one accumulator in local memory (3-vectors take 4 slots): a
/// `FLOATN`, or a `ULONGN` for integer samples (x_tree and y_split; an
/// upper bound for x_subgroup, which keeps floats).
fn floatn(s: &Shape) -> usize {
    let lane = if s.sample == crate::image::SampleType::F32 { 4 } else { 8 };
    lane * if s.channels == 3 { 4 } else { s.channels }
}

fn group_floats(s: &Shape) -> usize {
    LWS * floatn(s)
}

fn split_floats(s: &Shape) -> usize {
    SPLIT * COLS * floatn(s) * ypack(s.sample, s.channels, s.width)
}

fn axis_of(s: &Shape) -> Result<Axis, String> {
    s.params
        .get::<ReduceParams>()
        .map(|p| p.axis)
        .ok_or_else(|| "needs reduce parameters".to_string())
}

fn along_x(s: &Shape) -> Result<(), String> {
    match axis_of(s)? {
        Axis::X => Ok(()),
        Axis::Y => Err("reduces along x only".into()),
    }
}

fn along_y(s: &Shape) -> Result<(), String> {
    match axis_of(s)? {
        Axis::Y => Ok(()),
        Axis::X => Err("reduces along y only".into()),
    }
}

/// The variant table (kernels in `cl/reduce/`).
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "x_row",
        summary: "axis x: one work-item per row, a compensated walk along it",
        files: &["reduce/reduce.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [64, 1],
        local_bytes: crate::ops::no_local,
        supports: along_x,
        requires: &[],
        tolerance: 4.0,
    },
    VariantSpec {
        name: "x_tree",
        summary: "axis x: 256 work-items per row (a team of 32 per short row, several rows per group), strided walks, a local-memory tree",
        files: &["reduce/reduce.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [LWS, 1],
        local_bytes: group_floats,
        supports: along_x,
        requires: &[],
        tolerance: 16.0,
    },
    VariantSpec {
        name: "x_subgroup",
        summary: "axis x: as x_tree, combining each sub-group with sub_group_reduce_*",
        files: &["reduce/reduce.cl", "reduce/subgroup.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [LWS, 1],
        local_bytes: group_floats,
        supports: along_x,
        requires: &[Requirement::AnyExtension(&[
            "cl_khr_subgroups",
            "cl_intel_subgroups",
        ])],
        tolerance: 80.0,
    },
    VariantSpec {
        name: "x_shfl",
        summary: "axis x: as x_tree, combining each warp with inline-PTX shfl.sync, gray u8 sums in dp4a (NVIDIA)",
        files: &["ptx.cl", "reduce/dp4a.cl", "reduce/reduce.cl", "reduce/shfl.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [LWS, 1],
        local_bytes: group_floats,
        supports: along_x,
        requires: &[Requirement::Vendor("NVIDIA")],
        tolerance: 16.0,
    },
    VariantSpec {
        name: "y_column",
        summary: "axis y: one work-item per column, a compensated walk down it",
        files: &["reduce/reduce.cl", "reduce/columns.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [64, 1],
        local_bytes: crate::ops::no_local,
        supports: along_y,
        requires: &[],
        tolerance: 4.0,
    },
    VariantSpec {
        name: "y_split",
        summary: "axis y in two passes: blocks of rows, 8 work-items per column in each, combined in local memory; then the blocks per column",
        files: &["reduce/reduce.cl", "reduce/columns.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [COLS, SPLIT],
        local_bytes: split_floats,
        supports: along_y,
        requires: &[],
        tolerance: 16.0,
    },
    VariantSpec {
        name: "y_fused",
        summary: "axis y: y_split's passes in one kernel, the last block of each strip of columns (a global counter) merging the strip",
        files: &["reduce/reduce.cl", "reduce/columns.cl"],
        options: "-DLWS=256 -DCOLS=32 -DSPLIT=8",
        local: [COLS, SPLIT],
        local_bytes: split_floats,
        supports: along_y,
        requires: &[],
        tolerance: 16.0,
    },
];
