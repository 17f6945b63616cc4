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
/// image `width` samples wide: on gray u8 and u16 (and integer RGB read as
/// gray, 3 x width samples), 4 where the width is a multiple of 4 (one
/// vector load per row, every row aligned), and 8 on u8 rows of 16384
/// samples and more whose width is a multiple of 8; else 1
/// (cl/reduce/columns.cl, YPACK). H200, uint block results (BLOCK_FITS),
/// `y_fused` in % of copy (docs/results/2026-11-29-s48-gpu.md): u8 8192
/// wide 74-77 with 4 against 71-73 with 8 and 60-62 with 16; 16384 wide
/// 85-86 against 83-84; 24576 (8192 RGB) 75-77 against 87-91; u16 8192
/// wide 86-88 against 77-79. Before uint block results, 16 columns
/// (ulong16 in local memory) had given u8 31%.
pub fn ypack(ty: crate::image::SampleType, channels: usize, width: usize) -> usize {
    use crate::image::SampleType;
    let gray_int = channels == 1 && ty != SampleType::F32;
    if gray_int && ty == SampleType::U8 && width >= 16384 && width.is_multiple_of(8) {
        8
    } else if gray_int && width.is_multiple_of(4) {
        4
    } else {
        1
    }
}

/// The row blocks of y_split's first pass for a `w` x `h` image: blocks of
/// at least 256 rows (32 per part), at most 64 of them, and no more than
/// bring the pass to about 2^18 work-items (a few waves of a large GPU).
/// More blocks than that only lengthen the second pass, whose work-items
/// walk a column's blocks one after another (8192x8192 u8 RGBA: 32 blocks
/// gave 62% of copy, 4 blocks 79-82%: see
/// docs/results/2026-11-27-gpu-reductions-history.md). It depends on the
/// shape alone, so chunked launches and every device add in the same order.
pub fn y_blocks(w: usize, h: usize) -> usize {
    let per_block = w.div_ceil(COLS) * COLS * SPLIT;
    let fill = (1usize << 18).div_ceil(per_block).clamp(1, 64);
    h.div_ceil(256).clamp(1, 64).min(fill)
}

/// Whether a block of y_split's first pass on `ty` samples, `w` work-items
/// wide (columns over the pack) and `h` rows high, holds its integer
/// results in uints: its rows fit one work-item's uint chunk (I_CHUNK:
/// 2^24 u8 or 2^16 u16 samples), so their sum does too (cl/reduce/columns.cl,
/// BLOCK_FITS). Not for f32.
pub fn block_fits(ty: crate::image::SampleType, w: usize, h: usize) -> bool {
    use crate::image::SampleType;
    let chunk = match ty {
        SampleType::U8 => 1 << 24,
        SampleType::U16 => 1 << 16,
        SampleType::F32 => return false,
    };
    h.div_ceil(y_blocks(w, h)) <= chunk
}

/// Bytes of one accumulator in local memory (3-vectors take 4 slots): a
/// `FLOATN`, or a `ULONGN` for integer samples (x_tree and y_split; an
/// upper bound for x_subgroup, which keeps floats).
fn floatn(s: &Shape) -> usize {
    acc_bytes(s.sample, s.channels)
}

/// [`floatn`] of `ty` samples and `c` channels.
fn acc_bytes(ty: crate::image::SampleType, c: usize) -> usize {
    let lane = if ty == crate::image::SampleType::F32 { 4 } else { 8 };
    lane * if c == 3 { 4 } else { c }
}

fn group_floats(s: &Shape) -> usize {
    LWS * floatn(s)
}

/// The width and channels that `y_split` and `y_fused` read a `ty` image
/// `w` pixels wide of `c` channels as. Column sums of integer RGB are
/// those of a gray image 3w samples wide, in the same order (channel k of
/// column x is sample column 3x + k), so RGB whose 3w is a multiple of 4
/// takes the gray kernels, which load 4 or 8 sample columns a work-item
/// where 3-sample pixels took one load each
/// (docs/results/2026-11-29-s45-gpu.md).
pub fn y_layout(ty: crate::image::SampleType, w: usize, c: usize) -> (usize, usize) {
    if c == 3 && ty != crate::image::SampleType::F32 && (3 * w).is_multiple_of(4) {
        (3 * w, 1)
    } else {
        (w, c)
    }
}

fn split_floats(s: &Shape) -> usize {
    let (w, c) = y_layout(s.sample, s.width, s.channels);
    let pack = ypack(s.sample, c, w);
    let lane = if block_fits(s.sample, w / pack, s.height) { 2 } else { 1 };
    SPLIT * COLS * acc_bytes(s.sample, c) * pack / lane
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
