//! The block-parallel recursive passes: column blocks in registers, rows
//! whole in one work-group, row tiles, and the carry that joins blocks.

use super::super::coeffs::Deriche;
use super::super::geometry::{
    col_blocks_defines, row_blk_geometry, row_local_geometry, rows_defines, CARRY_LANES,
    CARRY_LINES, STATES,
};
use super::super::passes::Line;
use super::launch::{time, Ctx, Out};
use crate::backend::opencl::{Arg, ClEvent, DeviceImage, Kernel as ClKernel};
use crate::error::Result;

impl Ctx<'_> {
    /// One block-parallel recursive pass along columns, blocks in registers
    /// ([`Line::ColBlocks`]).
    pub(super) fn col_blocks(&self, src: &DeviceImage<f32>, sigma: f32) -> Result<Out> {
        let (w, h, c) = (src.width(), src.height(), src.channels());
        let blk = super::super::geometry::col_block(c);
        let nb = h.div_ceil(blk);
        let [k1, k2, k3] = self.kernels(src, &col_blocks_defines(c), Line::ColBlocks)?;
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, _] = d.kernel_args();
        // STATES working pixels per (block, column): the sections' states.
        let sums = DeviceImage::<f32>::new(self.dev, w, nb * STATES, c)?;
        let out = DeviceImage::<f32>::new(self.dev, w, h, c)?;
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(nb)?];
        let local = [self.spec.local[0], 1];
        let e1 = self.dev.launch(
            &k1,
            &[w, nb],
            &local,
            &[
                Arg::img(src),
                Arg::img(&sums),
                dims[0],
                dims[1],
                dims[2],
                Arg::F32x4(pole),
            ],
        )?;
        let e2 = self.carry(&k2, src, &sums, false, &d, blk)?;
        let e3 = self.dev.launch(
            &k3,
            &[w, nb],
            &local,
            &[
                Arg::img(src),
                Arg::img(&sums),
                Arg::img(&out),
                dims[0],
                dims[1],
                dims[2],
                Arg::F32x4(pole),
                Arg::F32x4(weight),
            ],
        )?;
        let (t1, t2, t3) = (time(e1)?, time(e2)?, time(e3)?);
        log::debug!("gaussian blk {w}x{h}: sums {t1:?} carry {t2:?} apply {t3:?}");
        Ok((out, t1 + t2 + t3))
    }

    /// One recursive pass along rows, each row whole in local memory
    /// ([`Line::RowLocal`]).
    pub(super) fn row_local(&self, src: &DeviceImage<f32>, sigma: f32) -> Result<Out> {
        let (w, h) = (src.width(), src.height());
        let (wg, seg) = row_local_geometry(w, src.channels());
        let out = DeviceImage::<f32>::new(self.dev, w, h, src.channels())?;
        let [k] = self.kernels(src, &rows_defines(wg, seg), Line::RowLocal)?;
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, sa] = d.kernel_args();
        let ev = self.dev.launch(
            &k,
            &[wg * h],
            &[wg],
            &[
                Arg::img(src),
                Arg::img(&out),
                Arg::int(w)?,
                Arg::int(h)?,
                Arg::F32x4(pole),
                Arg::F32x4(weight),
                Arg::F32x4(sa),
                Arg::F32x4(d.pole_power_args(seg)),
            ],
        )?;
        let t = time(ev)?;
        log::debug!("gaussian row_local {w}x{h} wg {wg} seg {seg}: {t:?}");
        Ok((out, t))
    }

    /// One block-parallel recursive pass along rows without transposes
    /// ([`Line::RowBlocks`]): rows cut into tiles of `wg * seg` samples,
    /// each tile staged in local memory and scanned across its work-group
    /// as in [`Line::RowLocal`], the tiles joined by the columns' carry.
    pub(super) fn row_blocks(&self, src: &DeviceImage<f32>, sigma: f32) -> Result<Out> {
        let (w, h, c) = (src.width(), src.height(), src.channels());
        let (wg, seg) = row_blk_geometry(c);
        let tile = wg * seg;
        let nb = w.div_ceil(tile);
        let [k1, k2, k3] = self.kernels(src, &rows_defines(wg, seg), Line::RowBlocks)?;
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, _] = d.kernel_args();
        let ps = Arg::F32x4(d.pole_power_args(seg));
        // STATES working pixels per (tile, row), rows adjacent (SUMS_AT).
        let sums = DeviceImage::<f32>::new(self.dev, h, nb * STATES, c)?;
        let out = DeviceImage::<f32>::new(self.dev, w, h, c)?;
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(nb)?];
        let e1 = self.dev.launch(
            &k1,
            &[wg * nb, h],
            &[wg, 1],
            &[
                Arg::img(src),
                Arg::img(&sums),
                dims[0],
                dims[1],
                dims[2],
                Arg::F32x4(pole),
                ps,
            ],
        )?;
        let e2 = self.carry(&k2, src, &sums, true, &d, tile)?;
        let e3 = self.dev.launch(
            &k3,
            &[wg * nb, h],
            &[wg, 1],
            &[
                Arg::img(src),
                Arg::img(&sums),
                Arg::img(&out),
                dims[0],
                dims[1],
                dims[2],
                Arg::F32x4(pole),
                Arg::F32x4(weight),
                ps,
            ],
        )?;
        let (t1, t2, t3) = (time(e1)?, time(e2)?, time(e3)?);
        log::debug!("gaussian rowblk {w}x{h} tile {tile}: sums {t1:?} carry {t2:?} apply {t3:?}");
        Ok((out, t1 + t2 + t3))
    }

    /// A line pass's kernels, in [`Line::kernels`]' order, built with
    /// `defines` for the working image `src`.
    fn kernels<const N: usize>(
        &self,
        src: &DeviceImage<f32>,
        defines: &str,
        line: Line,
    ) -> Result<[ClKernel; N]> {
        let shape = self.w_shape(src);
        let names = line.kernels(src.channels() == 1);
        assert_eq!(names.len(), N, "{line:?} runs {} kernels", names.len());
        let built = names
            .iter()
            .map(|&k| self.kernel(&shape, defines, k))
            .collect::<Result<Vec<_>>>()?;
        Ok(built.try_into().unwrap_or_else(|_| unreachable!()))
    }

    /// `gaussian_blk_carry` along the columns or, with `rows`, the rows of
    /// `src`, blocks of `blk` samples; `sums` has one column per line and
    /// [`STATES`] rows per block.
    pub(super) fn carry(
        &self,
        k: &ClKernel,
        src: &DeviceImage<f32>,
        sums: &DeviceImage<f32>,
        rows: bool,
        d: &Deriche,
        blk: usize,
    ) -> Result<ClEvent> {
        let (w, h) = (src.width(), src.height());
        // Where line x starts (x * stride) and how far on it ends (span).
        let (lines, stride, span) = if rows {
            (h, w, w - 1)
        } else {
            (w, 1, (h - 1) * w)
        };
        let [_, _, _, sa] = d.kernel_args();
        // CARRY_LINES lines x CARRY_LANES runs of blocks per work-group.
        self.dev.launch(
            k,
            &[lines, CARRY_LANES],
            &[CARRY_LINES, CARRY_LANES],
            &[
                Arg::img(src),
                Arg::img(sums),
                Arg::int(lines)?,
                Arg::int(stride)?,
                Arg::int(span)?,
                Arg::int(sums.height() / STATES)?,
                Arg::F32x4(sa),
                Arg::F32x4(d.pole_power_args(blk)),
            ],
        )
    }
}
