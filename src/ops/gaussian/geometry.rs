//! The device kernels' sizes: tiles, segments, blocks, work-groups and
//! table layouts. Each is defined here once and reaches `cl/gaussian/` as a
//! `-D` build option ([`fixed_defines`] for every build, the other
//! `*_defines` functions per pass); the `.cl` files check each one with
//! `#error` instead of defaulting it. The cut-offs that choose between
//! paths are in [`super::policy`].

use super::coeffs::line;
use super::policy::{tile_line, TileLine};
use super::GaussianParams;

/// The largest FIR radius `fir_local` stages (`FIR_RMAX`).
pub const FIR_RMAX: usize = 48;
/// `fir_local`'s row-pass segment width and work-group size (`FIR_LX`).
pub const FIR_LX: usize = 128;
/// `fir_local`'s column-pass tile width (`FIR_TX`).
pub const FIR_TX: usize = 16;
/// `fir_local`'s column-pass tile height (`FIR_TY`).
pub const FIR_TY: usize = 16;

/// Local memory `fir_tiles` plans its tiles for: what NVIDIA and most
/// GPUs give one work-group. A device with less declines the larger tiles
/// ([`crate::ops::VariantSpec::check`]).
pub const FIR_TILES_LOCAL: usize = 48 << 10;

/// The largest radius `fir_tiles` takes (6 sigma: sigma 8), as `fir_local`.
pub const FIR_TILES_RMAX: usize = FIR_RMAX;

/// `fir_tiles`' sizes (`cl/gaussian/fir.cl`): `tw` columns per work-group
/// (`FIR_TW`), bands of `band` rows (`FIR_B`), `k` adjacent outputs per
/// work-item in each pass (`FIR_K`), strips of `strip` rows (`FIR_SH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirTiles {
    /// Columns per work-group.
    pub tw: usize,
    /// Rows per band.
    pub band: usize,
    /// Outputs per work-item and pass.
    pub k: usize,
    /// Rows per work-group.
    pub strip: usize,
}

impl FirTiles {
    /// Work-items per work-group: one per `k` outputs of a band.
    pub fn wg(&self) -> usize {
        self.band * self.tw / self.k
    }

    /// Local memory for radii `rx` (rows) and `ry` (columns) and working
    /// pixels of `channels`: the staged band with its halo, and the ring
    /// of `2 ry + band` filtered rows, each at a stride one past its length.
    pub fn local_bytes(&self, rx: usize, ry: usize, channels: usize) -> usize {
        let staged = (self.tw + 2 * rx) * (self.band + 1);
        let ring = (2 * ry + self.band) * (self.tw + 1);
        (staged + ring) * working_pixel(channels)
    }
}

/// `fir_tiles`' sizes for radii `rx`, `ry` and working pixels of
/// `channels`: the first candidate that fits [`FIR_TILES_LOCAL`] (wider
/// tiles read less halo; longer register windows read local memory less
/// often), or `None` past [`FIR_TILES_RMAX`].
pub fn fir_tiles_geometry(rx: usize, ry: usize, channels: usize) -> Option<FirTiles> {
    let t = |tw, band, k| FirTiles {
        tw,
        band,
        k,
        strip: 256,
    };
    let gray = [t(64, 32, 8), t(32, 32, 8)];
    let colour = [t(32, 16, 8), t(32, 8, 4), t(16, 16, 8), t(16, 8, 4)];
    let list: &[FirTiles] = if channels == 1 { &gray } else { &colour };
    list.iter()
        .copied()
        .find(|g| g.local_bytes(rx, ry, channels) <= FIR_TILES_LOCAL)
        .filter(|_| rx.max(ry) <= FIR_TILES_RMAX)
}

/// `fir_tiles`' build options: radii `rx`, `ry`, sizes `g`, user samples
/// `float` or not.
pub fn fir_tiles_defines(rx: usize, ry: usize, g: &FirTiles, float: bool) -> String {
    let d = [
        ("FIR_RX", rx),
        ("FIR_RY", ry),
        ("FIR_TW", g.tw),
        ("FIR_B", g.band),
        ("FIR_K", g.k),
        ("FIR_SH", g.strip),
    ];
    format!("{} {}", is_float(float), defines(&d))
}

/// Work-items per work-group of the working-image conversions.
pub const CONVERT_WG: usize = 256;

/// Lines per work-group of the block-parallel passes' carry
/// (`gaussian_blk_carry`, `CARRY_LINES`).
pub const CARRY_LINES: usize = 32;
/// Runs of blocks per line in the carry, one work-item each (`CARRY_LANES`):
/// the work-group is `CARRY_LINES x CARRY_LANES`.
pub const CARRY_LANES: usize = 8;

/// Working values per block in the block sums: the causal and anticausal
/// states of both sections, (re, im) each (`SUMS_AT` in `blocks.cl`).
pub const STATES: usize = 8;

/// Side of `iir_tiles`' square tiles on gray images (`T2_TILE`): a tile's
/// column is held in registers twice, as `iir_local`'s column blocks are.
pub const T2_TILE_GRAY: usize = 64;
/// Side of `iir_tiles`' square tiles on colour (float4) images: four float
/// planes of this side, padded ([`t2_plane`]), take 17 KiB of local memory
/// where 64 would take 66 KiB, past the 48 KiB most GPUs give a work-group.
pub const T2_TILE_COLOUR: usize = 32;

/// `iir_tiles`' tile side for working pixels of `channels` (1, else float4).
pub fn t2_tile(channels: usize) -> usize {
    if channels == 1 {
        T2_TILE_GRAY
    } else {
        T2_TILE_COLOUR
    }
}

/// Work-items per work-group of `iir_tiles`' carries
/// (`gaussian_iir_tiles_carry`, `T2_CARRY_WG`): lines x runs of blocks.
pub const T2_CARRY_WG: usize = 256;

/// Blocks per work-item in `iir_tiles`' carries (`T2_RUN`) when the
/// longer line has `max_blocks` tiles: 8, or more where a line would need
/// more than [`T2_CARRY_WG`] runs. (8 float4 blocks took 226 µs per carry
/// at 8192x8192 RGBA on an H100, 4 took 257 and 2 took 442;
/// docs/results/2026-11-27-gpu-gaussian-colour-history.md.)
pub fn t2_run(max_blocks: usize) -> usize {
    max_blocks.div_ceil(T2_CARRY_WG).max(8)
}

/// `iir_tiles`' tile stride in local memory (`TSP`): one past the side, so a
/// row's and a column's samples fall in different banks.
pub fn t2_stride(tile: usize) -> usize {
    tile + 1
}

/// Floats between `iir_tiles`' channel planes in local memory (`T2_CS`):
/// a plane ([`t2_stride`] per row) rounded up to 8 mod 32 banks, so that a
/// warp's 32 work-items (8 lines of 4 channels) reading their lines' m-th
/// sample hit 32 different banks.
pub fn t2_plane(tile: usize) -> usize {
    let n = tile * t2_stride(tile);
    n + (40 - n % 32) % 32
}

/// Local memory of `iir_tiles`' tile passes for working pixels of
/// `channels`: one plane per channel (the fix-up pass needs less).
pub fn t2_local_bytes(channels: usize) -> usize {
    let tile = t2_tile(channels);
    working_channels(channels) * t2_plane(tile) * 4
}

/// Where the parts of `iir_tiles`' table (`fix_tables` in the device code)
/// start for tiles of side `tile`: the rows' sum weights at 0, the columns'
/// state weights (`T2_FW_AT`), the rows' sums of a constant 1
/// (`T2_ONE_AT`), then the columns' and the rows' tile-line coefficients
/// (`T2_BQ_AT`, each [`line::LEN`] long). The first three parts are
/// [`Deriche::tile_tables`](super::coeffs::Deriche::tile_tables)' layout.
pub fn t2_table_at(tile: usize) -> [usize; 3] {
    let one = 2 * STATES * tile;
    [STATES * tile, one, one + STATES]
}

/// Work-group size and samples per work-item of `iir_local`'s row pass for
/// rows of `width` working pixels (`channels` 1, else float4).
pub fn row_local_geometry(width: usize, channels: usize) -> (usize, usize) {
    // A float4 segment takes 4x the registers, so it is shorter.
    let seg = if channels == 1 { 32 } else { 8 };
    (width.div_ceil(seg).next_multiple_of(32), seg)
}

/// Work-group size and samples per work-item of the row tiles
/// (`gaussian_rowblk_sums` / `_apply`) for working pixels of `channels`
/// (1, else float4): a row tile is their product, 4096 gray or 512 colour
/// pixels. Segments are as long as `iir_local`'s (the causal outputs are
/// held in registers); the group sizes are first guesses, not measured.
pub fn row_blk_geometry(channels: usize) -> (usize, usize) {
    if channels == 1 {
        (128, 32)
    } else {
        (64, 8)
    }
}

/// Stride of the staged row segments (`RSP`): odd, so the 32 work-items of
/// a warp reading "their" m-th sample hit 32 different banks.
pub fn row_stride(seg: usize) -> usize {
    seg + 1
}

/// Rows per block of the block-parallel column pass (`COL_BLK`): the block
/// is held in registers twice (input and causal output). 64 gray rows beat
/// 32 (twice the blocks make the carry pass dearer) and 96 (which spills).
pub fn col_block(channels: usize) -> usize {
    if channels == 1 {
        64
    } else {
        16
    }
}

/// The working image's channels: 1 (gray) or 4 (colour, float4).
pub fn working_channels(channels: usize) -> usize {
    if channels == 1 {
        1
    } else {
        4
    }
}

/// Bytes of one working pixel: float (gray) or float4 (colour).
pub fn working_pixel(channels: usize) -> usize {
    4 * working_channels(channels)
}

/// Local memory of a row pass's work-group (`iir_local`, `iir_rowblk`): the
/// staged segments plus the scan's four states per work-item.
pub fn row_local_bytes(wg: usize, seg: usize, channels: usize) -> usize {
    (wg * row_stride(seg) + 4 * wg) * working_pixel(channels)
}

/// The constants every gaussian kernel build gets (none depends on the
/// request): the FIR's staging sizes, the carry's work-group and
/// `iir_tiles`' tile lines' coefficient layout.
pub fn fixed_defines() -> &'static str {
    // Built once: every launch's kernel lookup reads it (a stream of small
    // frames spent a tenth of its host time formatting it per launch).
    static DEFINES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DEFINES.get_or_init(|| {
        let mut d = vec![
            ("FIR_RMAX", FIR_RMAX),
            ("FIR_LX", FIR_LX),
            ("FIR_TX", FIR_TX),
            ("FIR_TY", FIR_TY),
            ("CARRY_LINES", CARRY_LINES),
            ("CARRY_LANES", CARRY_LANES),
        ];
        d.extend(line::FIELDS.iter().map(|&(name, at)| (name, at)));
        defines(&d)
    })
}

/// `-DT_IS_FLOAT=1|0`: whether the kernels' user type `T` is float.
pub fn is_float(float: bool) -> String {
    format!("-DT_IS_FLOAT={}", float as u8)
}

/// The column blocks' build options for working pixels of `channels`.
pub fn col_blocks_defines(channels: usize) -> String {
    format!(
        "{} {}",
        is_float(true),
        defines(&[("COL_BLK", col_block(channels))])
    )
}

/// A row pass's build options: work-groups of `wg` work-items, `seg`
/// samples each.
pub fn rows_defines(wg: usize, seg: usize) -> String {
    let d = [("ROW_SEG", seg), ("ROW_WG", wg), ("RSP", row_stride(seg))];
    format!("{} {}", is_float(true), defines(&d))
}

/// `iir_tiles`' build options for `channels` per pixel and user samples
/// that are `float` or not, the carries' runs `run` blocks long
/// ([`t2_run`]): the tile and its table's layout, each direction's
/// tile-line form ([`tile_line`]: `T2_BQC` columns, `T2_BQR` rows; 1
/// biquads, 2 delta form) and the carries' runs and work-group.
pub fn tiles_defines(p: &GaussianParams, channels: usize, float: bool, run: usize) -> String {
    let form = |sigma: f32| match tile_line(sigma as f64) {
        TileLine::Biquad => 1,
        TileLine::Delta => 2,
    };
    let tile = t2_tile(channels);
    let [fw, one, bq] = t2_table_at(tile);
    let d = [
        ("T2_RUN", run),
        ("T2_CARRY_WG", T2_CARRY_WG),
        ("T2_TILE", tile),
        ("TSP", t2_stride(tile)),
        ("T2_CS", t2_plane(tile)),
        ("T2_FW_AT", fw),
        ("T2_ONE_AT", one),
        ("T2_BQ_AT", bq),
        ("T2_BQC", form(p.sigma_y)),
        ("T2_BQR", form(p.sigma_x)),
    ];
    format!("{} {}", is_float(float), defines(&d))
}

/// `-DNAME=value` for each pair, space-separated.
fn defines(d: &[(&str, usize)]) -> String {
    d.iter()
        .map(|(name, v)| format!("-D{name}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names a `.cl` text checks with `#ifndef NAME` / `#error`.
    fn required(text: &str) -> Vec<String> {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines
            .windows(2)
            .filter(|w| w[1].starts_with("#error"))
            .filter_map(|w| w[0].strip_prefix("#ifndef "))
            .map(|n| n.trim().to_string())
            .collect()
    }

    /// Every constant a gaussian `.cl` file requires is passed by some
    /// build, and every constant passed is used somewhere.
    #[test]
    fn every_required_define_is_passed() {
        let p = GaussianParams::new(3.0);
        let passed = [
            fixed_defines().to_string(),
            col_blocks_defines(1),
            rows_defines(32, 8),
            tiles_defines(&p, 4, true, 4),
            fir_tiles_defines(12, 12, &fir_tiles_geometry(12, 12, 1).unwrap(), true),
            is_float(false),
            "-DMIRROR=1".to_string(),
        ]
        .join(" ");
        let passed: Vec<&str> = passed
            .split_whitespace()
            .map(|d| d.trim_start_matches("-D").split('=').next().unwrap())
            .collect();
        let required: Vec<String> = super::super::SPEC
            .sources
            .iter()
            .flat_map(|(_, text)| required(text))
            .collect();
        for name in &required {
            assert!(passed.contains(&name.as_str()), "{name} is never passed");
        }
        for name in &passed {
            let used = super::super::SPEC
                .sources
                .iter()
                .any(|(_, text)| text.contains(name));
            assert!(used, "{name} is passed but no .cl file uses it");
        }
    }

    /// Every radius up to the maximum fits the budget, gray and colour,
    /// with a work-group that splits evenly into both passes' jobs.
    #[test]
    fn fir_tiles_fit_every_radius() {
        for ch in [1, 4] {
            for r in 0..=FIR_TILES_RMAX {
                let g = fir_tiles_geometry(r, r, ch).expect("fits");
                assert!(g.local_bytes(r, r, ch) <= FIR_TILES_LOCAL, "{ch} {r}");
                assert_eq!(g.tw % g.k, 0);
                assert_eq!(g.band % g.k, 0);
                assert_eq!(g.strip % g.band, 0);
            }
            assert_eq!(fir_tiles_geometry(FIR_TILES_RMAX + 1, 0, ch), None);
        }
    }
}
