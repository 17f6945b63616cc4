//! `iir_tiles` with both sigmas non-zero: both directions in square tiles
//! from two reads of the image, the tiles joined by the carries of both
//! directions (`cl/gaussian/tiles.cl` says how).

use super::super::coeffs::Deriche;
use super::super::geometry::{
    t2_run, t2_table_at, t2_tile, tiles_defines, working_channels, STATES, T2_CARRY_WG,
};
use super::super::passes::Both;
use super::super::policy::{tile_line, TileLine};
use super::super::{variants, GaussianParams};
use super::launch::{time, Ctx};
use crate::backend::opencl::{Arg, ClEvent, DeviceBuffer, DeviceImage, Kernel as ClKernel};
use crate::backend::Dev;
use crate::error::Result;
use crate::image::{Sample, SampleType};
use crate::ops::{OpParams, Programs, Shape, VariantSpec};
use std::time::Duration;

/// `gaussian_iir_tiles_fix`'s table for tiles of side `tile` (its parts
/// where [`t2_table_at`] says): the rows' sum weights, the columns' state
/// weights, the rows' sums of a constant 1 (see [`Deriche::tile_tables`]),
/// then the columns' and the rows' tile-line coefficients (biquads or delta
/// form, as [`tiles_defines`] builds the kernels).
fn fix_tables(cols: &Deriche, rows: &Deriche, tile: usize) -> Vec<f32> {
    let (c, r) = (cols.tile_tables(tile), rows.tile_tables(tile));
    let line = |d: &Deriche| match tile_line(d.sigma) {
        TileLine::Biquad => d.tile_biquads(),
        TileLine::Delta => d.tile_deltas(),
    };
    let [fw_at, one_at, bq_at] = t2_table_at(tile);
    let t = [
        &r[..fw_at],
        &c[fw_at..one_at],
        &r[one_at..],
        &line(cols),
        &line(rows),
    ]
    .concat();
    debug_assert_eq!(r.len(), bq_at);
    t
}

/// The buffers of one tiled blur of samples `T` besides its input.
struct Bufs<T: Sample> {
    /// STATES states per (tile row, column); like every buffer here but
    /// `out`, one f32 working pixel (float or float4) per entry.
    colsums: DeviceImage<f32>,
    /// STATES states per (tile column, row).
    rowsums: DeviceImage<f32>,
    /// Per row its first and last column-filtered values from zero state,
    /// and the raw first sample.
    edges: DeviceImage<f32>,
    /// The image's first and last rows: the column carry's lines' ends.
    colends: DeviceImage<f32>,
    /// Per row its first and last exactly column-filtered values.
    exact: DeviceImage<f32>,
    /// The result.
    out: DeviceImage<T>,
    /// [`fix_tables`].
    tables: std::sync::Arc<DeviceBuffer<f32>>,
}

/// Whether `spec` runs `p` on an image of `channels` as a [`Both`] pass
/// straight from the user's samples ([`blur_direct`]): its plan has one,
/// it runs these sigmas ([`Both::runs`]), and the pixels are gray or RGBA
/// (RGB has no 4-sample pixels to read as planes or vectors).
pub(crate) fn tiles_direct(spec: &VariantSpec, channels: usize, p: &GaussianParams) -> bool {
    let both = variants::plan(spec).and_then(|plan| plan.both);
    both.is_some_and(|b| b.runs(p.sigma_x, p.sigma_y)) && channels != 3
}

/// The plan's [`Both`] pass on the user's image `src` (any sample type,
/// gray or RGBA; [`tiles_direct`] says when): the kernels load and convert
/// the samples and round the result back into them, so that no working
/// image is written. The result and the kernels' time.
pub(crate) fn blur_direct<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    src: &DeviceImage<T>,
    p: &GaussianParams,
) -> Result<(DeviceImage<T>, Duration)> {
    let cx = Ctx {
        progs,
        dev,
        spec,
        p,
    };
    let both = variants::plan(spec).and_then(|plan| plan.both);
    match both {
        Some(b) => cx.both(b, src),
        None => Err(crate::error::Error::arg(format!(
            "{} has no pass over both directions",
            spec.name
        ))),
    }
}

impl Ctx<'_> {
    /// `both` over `src` ([`Both::runs`] the sigmas), samples `T` in and out.
    pub(super) fn both<T: Sample>(
        &self,
        both: Both,
        src: &DeviceImage<T>,
    ) -> Result<(DeviceImage<T>, Duration)> {
        match both {
            Both::Tiles => self.tiles(src),
            Both::FirTiles => self.fir_tiles(src, 1),
        }
    }

    /// [`Both::Tiles`]: both sigmas non-zero, samples `T` in and out.
    fn tiles<T: Sample>(&self, src: &DeviceImage<T>) -> Result<(DeviceImage<T>, Duration)> {
        let (w, h, ch) = (src.width(), src.height(), src.channels());
        let (tile, nc) = (t2_tile(ch), working_channels(ch));
        let (ntx, nty) = (w.div_ceil(tile), h.div_ceil(tile));
        let p = self.p;
        let shape = Shape::new(w, h, ch, T::TYPE).with_params(OpParams::new(*p));
        let run = t2_run(ntx.max(nty));
        let defines = tiles_defines(p, ch, T::TYPE == SampleType::F32, run);
        let ks = Both::Tiles
            .kernels()
            .iter()
            .map(|&k| self.kernel(&shape, &defines, k))
            .collect::<Result<Vec<_>>>()?;
        let [k_sums, k_carry, k_fix, k_apply] = &ks[..] else {
            unreachable!("the tiles run four kernels")
        };
        let (dc, dr) = (
            Deriche::new(p.sigma_y as f64),
            Deriche::new(p.sigma_x as f64),
        );
        let [_, ac, _, _] = dc.kernel_args();
        let [pr, ar, _, _] = dr.kernel_args();
        let dev = self.dev;
        let b = Bufs {
            colsums: DeviceImage::<f32>::new(dev, w, nty * STATES, nc)?,
            rowsums: DeviceImage::<f32>::new(dev, h, ntx * STATES, nc)?,
            edges: DeviceImage::<f32>::new(dev, 3, h, nc)?,
            colends: DeviceImage::<f32>::new(dev, w, 2, nc)?,
            exact: DeviceImage::<f32>::new(dev, 2, h, nc)?,
            out: DeviceImage::<T>::new(dev, w, h, ch)?,
            tables: dev.constants(&fix_tables(&dc, &dr, tile))?,
        };
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(ntx)?, Arg::int(nty)?];
        // The three tile passes take (their buffers, the sizes, their
        // coefficients), one work-item per (line, channel) of a tile.
        let tile_pass = |k: &ClKernel, bufs: &[Arg], coefs: &[[f32; 4]]| {
            let mut args = bufs.to_vec();
            args.extend(dims);
            args.extend(coefs.iter().map(|&c| Arg::F32x4(c)));
            dev.launch(k, &[ntx * tile * nc, nty], &[tile * nc, 1], &args)
        };
        let (input, cols, rows) = (Arg::img(src), Arg::img(&b.colsums), Arg::img(&b.rowsums));
        let (edges, exact, tables) = (Arg::img(&b.edges), Arg::img(&b.exact), Arg::buf(&b.tables));
        let sums_bufs = [input, cols, rows, edges, Arg::img(&b.colends), tables];
        let e1 = tile_pass(k_sums, &sums_bufs, &[ac, pr])?;
        // The columns' lines are `colends`' columns: first and last row.
        let e2 = self.tile_carry(k_carry, &b.colends, &b.colsums, false, &dc, [tile, run])?;
        let e3 = tile_pass(k_fix, &[cols, rows, edges, exact, tables], &[])?;
        // The rows' lines are `exact`'s rows: first and last value.
        let e4 = self.tile_carry(k_carry, &b.exact, &b.rowsums, true, &dr, [tile, run])?;
        let out = Arg::img(&b.out);
        let e5 = tile_pass(k_apply, &[input, cols, rows, exact, tables, out], &[ac, ar])?;
        let t = [time(e1)?, time(e2)?, time(e3)?, time(e4)?, time(e5)?];
        log::debug!(
            "gaussian tiles {w}x{h}x{ch} {}: sums {:?} col carry {:?} fix {:?} row carry {:?} apply {:?}",
            T::TYPE,
            t[0],
            t[1],
            t[2],
            t[3],
            t[4]
        );
        Ok((b.out, t.iter().sum()))
    }

    /// `gaussian_iir_tiles_carry` along the columns or, with `rows`, the
    /// rows; `ends` holds each line's first and last value (`colends`' two
    /// rows, or `exact`'s two columns), `sums` one column per line and
    /// [`STATES`] rows per block of `tile` samples, `run` blocks per
    /// work-item.
    fn tile_carry(
        &self,
        k: &ClKernel,
        ends: &DeviceImage<f32>,
        sums: &DeviceImage<f32>,
        rows: bool,
        d: &Deriche,
        [tile, run]: [usize; 2],
    ) -> Result<ClEvent> {
        // Where line x starts (x * stride) and how far on it ends (span).
        let (lines, stride, span) = if rows {
            (ends.height(), 2, 1)
        } else {
            (ends.width(), 1, ends.width())
        };
        let nblocks = sums.height() / STATES;
        let runs = nblocks.div_ceil(run);
        let [_, _, _, sa] = d.kernel_args();
        self.dev.launch(
            k,
            &[lines, runs],
            &[(T2_CARRY_WG / runs).max(1), runs],
            &[
                Arg::img(ends),
                Arg::img(sums),
                Arg::int(lines)?,
                Arg::int(stride)?,
                Arg::int(span)?,
                Arg::int(nblocks)?,
                Arg::F32x4(sa),
                Arg::F32x4(d.pole_power_args(tile)),
                Arg::F32x4(d.pole_power_args(tile * run)),
            ],
        )
    }
}
