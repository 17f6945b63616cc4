//! `gaussian`: Gaussian blur whose cost does not grow with sigma (Deriche's
//! 4th-order recursive filter, see [`coeffs`]) and whose borders are exact:
//! the result equals filtering an infinitely replicate-padded (or mirrored)
//! image. Small sigma uses an exact separable FIR, where Deriche's
//! approximation is poor.

pub mod coeffs;
pub mod cpu;
pub mod policy;
pub mod reference;
pub mod variants;

pub use policy::{IIR_MIN_SIGMA, MAX_SIGMA};

use crate::engine::{Dev, Engine};
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::ops::{OpParams, OpSpec, RunReport, Shape};

/// How the image continues past its edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Border {
    /// Clamp to the edge pixel (`aaa|abc|ccc`), the default.
    #[default]
    Replicate,
    /// Half-sample symmetric mirror (`cba|abc|cba`).
    Mirror,
}

impl std::str::FromStr for Border {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "replicate" | "clamp" => Ok(Border::Replicate),
            "mirror" | "reflect" => Ok(Border::Mirror),
            _ => Err(Error::arg(format!(
                "unknown border '{s}'; use replicate or mirror"
            ))),
        }
    }
}

/// Parameters of a Gaussian blur.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GaussianParams {
    /// Standard deviation along rows (x), in pixels. 0 leaves rows unfiltered.
    pub sigma_x: f32,
    /// Standard deviation along columns (y), in pixels. 0 leaves columns unfiltered.
    pub sigma_y: f32,
    /// Border handling.
    pub border: Border,
}

impl GaussianParams {
    /// The same sigma on both axes, replicate borders.
    pub fn new(sigma: f32) -> Self {
        GaussianParams {
            sigma_x: sigma,
            sigma_y: sigma,
            border: Border::Replicate,
        }
    }

    /// Checks that both sigmas are finite, non-negative and at most [`MAX_SIGMA`].
    pub fn validate(&self) -> Result<()> {
        for (name, s) in [("sigma_x", self.sigma_x), ("sigma_y", self.sigma_y)] {
            if !s.is_finite() || s < 0.0 {
                return Err(Error::arg(format!(
                    "gaussian {name} must be a finite number >= 0, got {s}"
                )));
            }
            if s > MAX_SIGMA {
                return Err(Error::arg(format!(
                    "gaussian {name} = {s} exceeds the limit of {MAX_SIGMA}"
                )));
            }
        }
        Ok(())
    }

    /// The smallest non-zero sigma, or `None` when both are 0 (a copy).
    pub fn min_nonzero_sigma(&self) -> Option<f32> {
        [self.sigma_x, self.sigma_y]
            .into_iter()
            .filter(|s| *s > 0.0)
            .reduce(f32::min)
    }
}

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "gaussian",
    sources: &[crate::cl_source!("gaussian/gaussian.cl")],
    variants: variants::VARIANTS,
    gpu_order: &[
        "iir_local",
        "iir_tiles",
        "iir_rowblk",
        "iir_blocks",
        "iir_transpose_f4",
        "iir_transpose",
        "fir_local",
        "iir_rows_cols",
    ],
    cpu_device_order: &[
        "iir_rows_cols",
        "iir_transpose",
        "fir_local",
        "iir_transpose_f4",
        "iir_blocks",
        "iir_rowblk",
        "iir_local",
        "iir_tiles",
    ],
    prefer: Some(policy::prefer),
};

/// Work-group size and samples per work-item of `gaussian_row_local`
/// (`iir_local`) for rows of `width` working pixels (`channels` 1, else float4).
pub(crate) fn row_local_geometry(width: usize, channels: usize) -> (usize, usize) {
    // A float4 segment takes 4x the registers, so it is shorter.
    let seg = if channels == 1 { 32 } else { 8 };
    (width.div_ceil(seg).next_multiple_of(32), seg)
}

/// Side of `iir_tiles`' square tiles (`T2_TILE`): a tile's column is held
/// in registers twice, as `iir_local`'s column blocks are.
pub(crate) const T2_TILE: usize = 64;

/// Work-group size and samples per work-item of `gaussian_rowblk_sums` /
/// `_apply` (`iir_rowblk`) for working pixels of `channels` (1, else float4):
/// a row tile is their product, 4096 gray or 512 colour pixels. Segments are
/// as long as `iir_local`'s (the causal outputs are held in registers); the
/// group sizes are first guesses, not measured.
pub(crate) fn row_blk_geometry(channels: usize) -> (usize, usize) {
    if channels == 1 {
        (128, 32)
    } else {
        (64, 8)
    }
}

/// Device passes. The working image is f32 with 1 channel (gray) or 4
/// (RGB/RGBA); for f32 gray and RGBA input it is the user's buffer itself.
#[cfg(feature = "opencl")]
pub(crate) mod device {
    use std::any::Any;
    use std::time::Duration;

    use super::policy::{self, TileLine};
    use super::{
        coeffs::Deriche, reference, row_blk_geometry, row_local_geometry, variants, GaussianParams,
        SPEC, T2_TILE,
    };
    use crate::backend::opencl::{Arg, ClEvent, DeviceBuffer, DeviceImage, Kernel};
    use crate::engine::{Dev, Engine};
    use crate::error::Result;
    use crate::image::{Image, Sample, SampleType};
    use crate::ops::{OpParams, Shape, VariantSpec};

    /// One pass: the current image in, the next image and its kernel time out.
    type Pass<'a> = dyn FnMut(&DeviceImage<f32>) -> Result<(DeviceImage<f32>, Duration)> + 'a;

    fn time(ev: ClEvent) -> Result<Duration> {
        Ok(ev.duration()?.unwrap_or_default())
    }

    /// The working-image shape (f32, 1 or 4 channels) for kernel builds.
    fn w_shape(img: &DeviceImage<f32>, p: &GaussianParams) -> Shape {
        Shape::new(img.width(), img.height(), img.channels(), SampleType::F32)
            .with_params(OpParams::Gaussian(*p))
    }

    /// One recursive pass along columns (`cols`, `cols4`) or rows (`rows`).
    fn iir_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        stage: &str,
        src: &DeviceImage<f32>,
        sigma: f32,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = (src.width(), src.height());
        let out = DeviceImage::<f32>::new(dev, w, h, src.channels())?;
        let k = engine.kernel(
            dev,
            SPEC.name,
            spec,
            &w_shape(src, p),
            "-DT_IS_FLOAT=1",
            &format!("gaussian_iir_{stage}"),
        )?;
        let items = match stage {
            "rows" => h,
            "cols4" => w.div_ceil(4),
            _ => w,
        };
        let [pole, weight, _, sa] = Deriche::new(sigma as f64).kernel_args();
        let ev = dev.launch(
            &k,
            &[items],
            &[spec.local[0]],
            &[
                Arg::img(src),
                Arg::img(&out),
                Arg::int(w)?,
                Arg::int(h)?,
                Arg::F32x4(pole),
                Arg::F32x4(weight),
                Arg::F32x4(sa),
            ],
        )?;
        Ok((out, time(ev)?))
    }

    /// Rows per block of the block-parallel column pass (`COL_BLK`): the block
    /// is held in registers twice (input and causal output). On an H100 at
    /// 8192x8192 gray, 64 beat 32 and 96 (fewer blocks make the carry pass
    /// 4x cheaper; 96 spills).
    pub(crate) fn col_block(channels: usize) -> usize {
        if channels == 1 {
            64
        } else {
            16
        }
    }

    /// One block-parallel recursive pass along columns, blocks in registers
    /// (`iir_blocks`, `iir_local`).
    fn col_blocks_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        src: &DeviceImage<f32>,
        sigma: f32,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h, c) = (src.width(), src.height(), src.channels());
        let blk = col_block(c);
        let nb = h.div_ceil(blk);
        let shape = w_shape(src, p);
        let opts = format!("-DT_IS_FLOAT=1 -DCOL_BLK={blk}");
        let kernel = |name: &str| engine.kernel(dev, SPEC.name, spec, &shape, &opts, name);
        let (k1, k2, k3) = (
            kernel("gaussian_blk_sums")?,
            kernel("gaussian_blk_carry")?,
            kernel("gaussian_blk_apply")?,
        );
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, _] = d.kernel_args();
        // Eight working pixels per (block, column): the sections' states.
        let sums = DeviceImage::<f32>::new(dev, w, nb * 8, c)?;
        let out = DeviceImage::<f32>::new(dev, w, h, c)?;
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(nb)?];
        let e1 = dev.launch(
            &k1,
            &[w, nb],
            &[spec.local[0], 1],
            &[
                Arg::img(src),
                Arg::img(&sums),
                dims[0],
                dims[1],
                dims[2],
                Arg::F32x4(pole),
            ],
        )?;
        let e2 = carry(dev, &k2, src, &sums, false, &d, blk)?;
        let e3 = dev.launch(
            &k3,
            &[w, nb],
            &[spec.local[0], 1],
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

    /// One recursive pass along rows, each row whole in local memory (`iir_local`).
    fn row_local_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        src: &DeviceImage<f32>,
        sigma: f32,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = (src.width(), src.height());
        let (wg, seg) = row_local_geometry(w, src.channels());
        let out = DeviceImage::<f32>::new(dev, w, h, src.channels())?;
        let k = engine.kernel(
            dev,
            SPEC.name,
            spec,
            &w_shape(src, p),
            &format!("-DT_IS_FLOAT=1 -DROW_SEG={seg} -DROW_WG={wg}"),
            "gaussian_row_local",
        )?;
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, sa] = d.kernel_args();
        let ev = dev.launch(
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

    /// `gaussian_blk_carry` along the columns or, with `rows`, the rows of
    /// `src`, blocks of `blk` samples; `sums` has one column per line and 8
    /// rows per block.
    fn carry(
        dev: &Dev,
        k: &Kernel,
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
        // 32 lines x CARRY_LANES (8) runs of blocks per work-group.
        dev.launch(
            k,
            &[lines, 8],
            &[32, 8],
            &[
                Arg::img(src),
                Arg::img(sums),
                Arg::int(lines)?,
                Arg::int(stride)?,
                Arg::int(span)?,
                Arg::int(sums.height() / 8)?,
                Arg::F32x4(sa),
                Arg::F32x4(d.pole_power_args(blk)),
            ],
        )
    }

    /// One block-parallel recursive pass along rows without transposes
    /// (`iir_rowblk`): rows cut into tiles of `wg * seg` samples, each tile
    /// staged in local memory and scanned across its work-group as in
    /// `iir_local`, the tiles joined by the column passes' carry.
    fn row_blocks_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        src: &DeviceImage<f32>,
        sigma: f32,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h, c) = (src.width(), src.height(), src.channels());
        let (wg, seg) = row_blk_geometry(c);
        let tile = wg * seg;
        let nb = w.div_ceil(tile);
        let shape = w_shape(src, p);
        let opts = format!("-DT_IS_FLOAT=1 -DROW_SEG={seg} -DROW_WG={wg}");
        let kernel = |name: &str| engine.kernel(dev, SPEC.name, spec, &shape, &opts, name);
        let (k1, k2, k3) = (
            kernel("gaussian_rowblk_sums")?,
            kernel("gaussian_blk_carry")?,
            kernel("gaussian_rowblk_apply")?,
        );
        let d = Deriche::new(sigma as f64);
        let [pole, weight, _, _] = d.kernel_args();
        let ps = Arg::F32x4(d.pole_power_args(seg));
        // Eight working pixels per (tile, row), rows adjacent (SUMS_AT).
        let sums = DeviceImage::<f32>::new(dev, h, nb * 8, c)?;
        let out = DeviceImage::<f32>::new(dev, w, h, c)?;
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(nb)?];
        let e1 = dev.launch(
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
        let e2 = carry(dev, &k2, src, &sums, true, &d, tile)?;
        let e3 = dev.launch(
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

    /// `gaussian_t2_fix`'s table: the rows' sum weights, the columns' state
    /// weights, the rows' sums of a constant 1 (see [`Deriche::tile_tables`]),
    /// then the columns' and the rows' tile-line coefficients (biquads or
    /// delta form, as `tiles_pass` builds the kernels).
    fn fix_tables(cols: &Deriche, rows: &Deriche) -> Vec<f32> {
        let n = 8 * T2_TILE;
        let (c, r) = (cols.tile_tables(T2_TILE), rows.tile_tables(T2_TILE));
        let line = |d: &Deriche| match policy::tile_line(d.sigma) {
            TileLine::Biquad => d.tile_biquads(),
            TileLine::Delta => d.tile_deltas(),
        };
        [&r[..n], &c[n..2 * n], &r[2 * n..], &line(cols), &line(rows)].concat()
    }

    /// `iir_tiles`: both directions in square tiles from two reads of the
    /// image, the tiles joined by the carries of both directions (the
    /// `gaussian_t2_*` kernels in cl/gaussian.cl say how). Gray, both
    /// sigmas non-zero.
    fn tiles_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        src: &DeviceImage<f32>,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = (src.width(), src.height());
        let (ntx, nty) = (w.div_ceil(T2_TILE), h.div_ceil(T2_TILE));
        let shape = w_shape(src, p);
        // Each direction's tile lines as biquads where its sigma allows,
        // in delta form above (`fix_tables` matches).
        let bq = |sigma: f32, flag: &str| match policy::tile_line(sigma as f64) {
            TileLine::Biquad => format!(" -D{flag}=1"),
            TileLine::Delta => format!(" -D{flag}=2"),
        };
        let opts = format!(
            "-DT_IS_FLOAT=1 -DCOL_BLK={T2_TILE} -DT2_TILE={T2_TILE}{}{}",
            bq(p.sigma_y, "T2_BQC"),
            bq(p.sigma_x, "T2_BQR")
        );
        let kernel = |name: &str| engine.kernel(dev, SPEC.name, spec, &shape, &opts, name);
        let (k_sums, k_carry, k_fix, k_apply) = (
            kernel("gaussian_t2_sums")?,
            kernel("gaussian_blk_carry")?,
            kernel("gaussian_t2_fix")?,
            kernel("gaussian_t2_apply")?,
        );
        let (dc, dr) = (
            Deriche::new(p.sigma_y as f64),
            Deriche::new(p.sigma_x as f64),
        );
        let [_, ac, _, _] = dc.kernel_args();
        let [pr, ar, _, _] = dr.kernel_args();
        // Eight states per (tile row, column) and per (tile column, row);
        // per row its first and last column-filtered values, zero-state
        // (`edges`, with the raw first sample) and exact (`exact`).
        let colsums = DeviceImage::<f32>::new(dev, w, nty * 8, 1)?;
        let rowsums = DeviceImage::<f32>::new(dev, h, ntx * 8, 1)?;
        let edges = DeviceImage::<f32>::new(dev, 3, h, 1)?;
        let exact = DeviceImage::<f32>::new(dev, 2, h, 1)?;
        let out = DeviceImage::<f32>::new(dev, w, h, 1)?;
        let dims = [Arg::int(w)?, Arg::int(h)?, Arg::int(ntx)?, Arg::int(nty)?];
        let (global, local) = ([ntx * T2_TILE, nty], [T2_TILE, 1]);
        let tables = DeviceBuffer::from_slice(dev, &fix_tables(&dc, &dr))?;
        // The three tile passes take (in, colsums, rowsums, their own
        // buffers, the sizes, their coefficients).
        let tile_pass = |k: &Kernel, bufs: &[Arg], coefs: &[[f32; 4]]| {
            let mut args = vec![Arg::img(src), Arg::img(&colsums), Arg::img(&rowsums)];
            args.extend_from_slice(bufs);
            args.extend(dims);
            args.extend(coefs.iter().map(|&c| Arg::F32x4(c)));
            dev.launch(k, &global, &local, &args)
        };
        let e1 = tile_pass(&k_sums, &[Arg::img(&edges), Arg::buf(&tables)], &[ac, pr])?;
        let e2 = carry(dev, &k_carry, src, &colsums, false, &dc, T2_TILE)?;
        let e3 = tile_pass(
            &k_fix,
            &[Arg::img(&edges), Arg::img(&exact), Arg::buf(&tables)],
            &[],
        )?;
        // The rows' lines are `exact`'s rows: first and last value.
        let e4 = carry(dev, &k_carry, &exact, &rowsums, true, &dr, T2_TILE)?;
        let e5 = tile_pass(
            &k_apply,
            &[Arg::img(&exact), Arg::buf(&tables), Arg::img(&out)],
            &[ac, ar],
        )?;
        let t = [time(e1)?, time(e2)?, time(e3)?, time(e4)?, time(e5)?];
        log::debug!(
            "gaussian tiles {w}x{h}: sums {:?} col carry {:?} fix {:?} row carry {:?} apply {:?}",
            t[0],
            t[1],
            t[2],
            t[3],
            t[4]
        );
        Ok((out, t.iter().sum()))
    }

    fn transpose(
        engine: &Engine,
        dev: &Dev,
        src: &DeviceImage<f32>,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let out = DeviceImage::<f32>::new(dev, src.height(), src.width(), src.channels())?;
        let spec = crate::ops::transpose::SPEC
            .variant("local_x4")
            .expect("the transpose table has local_x4");
        let ev = crate::ops::transpose::launch(engine, dev, spec, src, &out)?;
        Ok((out, time(ev)?))
    }

    fn fir_pass(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        rows: bool,
        src: &DeviceImage<f32>,
        sigma: f32,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = (src.width(), src.height());
        let out = DeviceImage::<f32>::new(dev, w, h, src.channels())?;
        let mirror = if p.border == super::Border::Mirror {
            " -DMIRROR"
        } else {
            ""
        };
        let name = if rows {
            "gaussian_fir_rows"
        } else {
            "gaussian_fir_cols"
        };
        let k = engine.kernel(
            dev,
            SPEC.name,
            spec,
            &w_shape(src, p),
            &format!("-DT_IS_FLOAT=1{mirror}"),
            name,
        )?;
        // Rounded to f32 and renormalised there, so the taps sum to 1 as
        // closely as f32 allows and constants pass unchanged.
        let taps: Vec<f32> = reference::taps(sigma as f64)
            .into_iter()
            .map(|t| t as f32)
            .collect();
        let sum: f64 = taps.iter().map(|&t| t as f64).sum();
        let taps: Vec<f32> = taps.iter().map(|&t| (t as f64 / sum) as f32).collect();
        let r = taps.len() / 2;
        let taps = DeviceBuffer::from_slice(dev, &taps)?;
        let args = [
            Arg::img(src),
            Arg::img(&out),
            Arg::int(w)?,
            Arg::int(h)?,
            Arg::buf(&taps),
            Arg::int(r)?,
        ];
        let ev = if rows {
            dev.launch(&k, &[w, h], &[variants::FIR_LX, 1], &args)?
        } else {
            dev.launch(&k, &[w, h], &[variants::FIR_TX, variants::FIR_TY], &args)?
        };
        Ok((out, time(ev)?))
    }

    /// Runs `spec`'s passes on a working image; returns the result and the
    /// summed kernel time. At least one sigma must be non-zero.
    pub(crate) fn blur_w(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        src: &DeviceImage<f32>,
        p: &GaussianParams,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let mut total = Duration::ZERO;
        let mut cur: Option<DeviceImage<f32>> = None;
        // Each step consumes the current image (or the source) and yields the next.
        let mut step = |f: &mut Pass<'_>| -> Result<()> {
            let (next, t) = f(cur.as_ref().unwrap_or(src))?;
            total += t;
            cur = Some(next);
            Ok(())
        };
        let cols = if spec.name == "iir_transpose_f4" && src.channels() == 1 {
            "cols4"
        } else {
            "cols"
        };
        match spec.name {
            "iir_rows_cols" => {
                if p.sigma_x > 0.0 {
                    step(&mut |s| iir_pass(engine, dev, spec, "rows", s, p.sigma_x, p))?;
                }
                if p.sigma_y > 0.0 {
                    step(&mut |s| iir_pass(engine, dev, spec, "cols", s, p.sigma_y, p))?;
                }
            }
            "fir_local" => {
                if p.sigma_x > 0.0 {
                    step(&mut |s| fir_pass(engine, dev, spec, true, s, p.sigma_x, p))?;
                }
                if p.sigma_y > 0.0 {
                    step(&mut |s| fir_pass(engine, dev, spec, false, s, p.sigma_y, p))?;
                }
            }
            "iir_local" => {
                if p.sigma_y > 0.0 {
                    step(&mut |s| col_blocks_pass(engine, dev, spec, s, p.sigma_y, p))?;
                }
                if p.sigma_x > 0.0 {
                    step(&mut |s| row_local_pass(engine, dev, spec, s, p.sigma_x, p))?;
                }
            }
            "iir_tiles" if p.sigma_x > 0.0 && p.sigma_y > 0.0 => {
                step(&mut |s| tiles_pass(engine, dev, spec, s, p))?;
            }
            "iir_tiles" => {
                if p.sigma_y > 0.0 {
                    step(&mut |s| col_blocks_pass(engine, dev, spec, s, p.sigma_y, p))?;
                }
                if p.sigma_x > 0.0 {
                    step(&mut |s| row_blocks_pass(engine, dev, spec, s, p.sigma_x, p))?;
                }
            }
            "iir_rowblk" => {
                if p.sigma_y > 0.0 {
                    step(&mut |s| col_blocks_pass(engine, dev, spec, s, p.sigma_y, p))?;
                }
                if p.sigma_x > 0.0 {
                    step(&mut |s| row_blocks_pass(engine, dev, spec, s, p.sigma_x, p))?;
                }
            }
            "iir_blocks" => {
                if p.sigma_y > 0.0 {
                    step(&mut |s| col_blocks_pass(engine, dev, spec, s, p.sigma_y, p))?;
                }
                if p.sigma_x > 0.0 {
                    step(&mut |s| transpose(engine, dev, s))?;
                    step(&mut |s| col_blocks_pass(engine, dev, spec, s, p.sigma_x, p))?;
                    step(&mut |s| transpose(engine, dev, s))?;
                }
            }
            _ => {
                // rgV, transpose, rgV, transpose.
                if p.sigma_y > 0.0 {
                    step(&mut |s| iir_pass(engine, dev, spec, cols, s, p.sigma_y, p))?;
                }
                if p.sigma_x > 0.0 {
                    step(&mut |s| transpose(engine, dev, s))?;
                    step(&mut |s| iir_pass(engine, dev, spec, cols, s, p.sigma_x, p))?;
                    step(&mut |s| transpose(engine, dev, s))?;
                }
            }
        }
        let out =
            cur.ok_or_else(|| crate::Error::arg("gaussian with both sigmas 0 has no passes"))?;
        Ok((out, total))
    }

    /// Host in, host out: upload, convert to the working image if needed,
    /// blur, convert back, download.
    pub(crate) fn run<T: Sample>(
        engine: &Engine,
        dev: &Dev,
        spec: &VariantSpec,
        img: &Image<T>,
        p: &GaussianParams,
    ) -> Result<(Image<T>, Duration)> {
        let ch = img.channels();
        if ch != 3 {
            if let Some(f) = (img as &dyn Any).downcast_ref::<Image<f32>>() {
                let src = DeviceImage::upload(dev, f)?;
                let (out, kt) = blur_w(engine, dev, spec, &src, p)?;
                let boxed: Box<dyn Any> = Box::new(out.download(dev)?);
                let out = boxed.downcast::<Image<T>>().expect("T is f32 on this path");
                return Ok((*out, kt));
            }
        }
        let (w, h) = (img.width(), img.height());
        let n = w * h;
        let user = Shape::new(w, h, ch, T::TYPE).with_params(OpParams::Gaussian(*p));
        let is_float = format!("-DT_IS_FLOAT={}", (T::TYPE == SampleType::F32) as u8);
        let input = DeviceImage::upload(dev, img)?;
        let work = DeviceImage::<f32>::new(dev, w, h, if ch == 1 { 1 } else { 4 })?;
        let to_w = engine.kernel(dev, SPEC.name, spec, &user, &is_float, "gaussian_to_w")?;
        let e1 = dev.launch(
            &to_w,
            &[n],
            &[256],
            &[Arg::img(&input), Arg::img(&work), Arg::int(n)?],
        )?;
        let (blurred, kt) = blur_w(engine, dev, spec, &work, p)?;
        let out = DeviceImage::<T>::new(dev, w, h, ch)?;
        let from_w = engine.kernel(dev, SPEC.name, spec, &user, &is_float, "gaussian_from_w")?;
        let e2 = dev.launch(
            &from_w,
            &[n],
            &[256],
            &[Arg::img(&blurred), Arg::img(&out), Arg::int(n)?],
        )?;
        let kt = kt + time(e1)? + time(e2)?;
        Ok((out.download(dev)?, kt))
    }
}

impl Engine {
    /// Blurs `img` with a Gaussian (see [`GaussianParams`]); the result has
    /// the input's size, channels and sample type. Both sigmas 0 is a copy.
    pub fn gaussian<T: Sample>(&self, img: &Image<T>, p: &GaussianParams) -> Result<Image<T>> {
        self.gaussian_report(img, p).map(|(i, _)| i)
    }

    /// [`Engine::gaussian`], also saying which variant ran and how long it took.
    pub fn gaussian_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GaussianParams,
    ) -> Result<(Image<T>, RunReport)> {
        p.validate()?;
        if p.min_nonzero_sigma().is_none() {
            let start = std::time::Instant::now();
            let out = img.clone();
            return Ok((out, copy_report(start)));
        }
        self.dispatch(
            &SPEC,
            &gaussian_shape(img, p),
            |dev: &Dev, spec| self.gaussian_on(dev, spec, img, p),
            || cpu::gaussian(img, p),
        )
    }

    /// [`Engine::gaussian`] into `dst`, which must have the input's size
    /// and channels (else [`Error::InvalidArgument`](crate::Error), and
    /// `dst` is left as it was); all its samples are overwritten. On the
    /// CPU path nothing is allocated when `dst`'s rows are packed, so a loop
    /// that keeps `dst` from frame to frame saves an allocation per call and
    /// the clearing of its fresh pages. A device result is downloaded and
    /// copied in. Returns what ran.
    pub fn gaussian_into<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GaussianParams,
        dst: &mut Image<T>,
    ) -> Result<RunReport> {
        p.validate()?;
        if p.min_nonzero_sigma().is_none() {
            let start = std::time::Instant::now();
            cpu::gaussian_into(img, p, dst)?;
            return Ok(copy_report(start));
        }
        cpu::check_into(img, dst)?;
        let (out, report) = self.dispatch(
            &SPEC,
            &gaussian_shape(img, p),
            |dev: &Dev, spec| {
                self.gaussian_on(dev, spec, img, p)
                    .map(|(out, t)| (Some(out), t))
            },
            || cpu::gaussian_into(img, p, dst).map(|()| None),
        )?;
        if let Some(out) = out {
            for (y, row) in out.rows().enumerate() {
                dst.row_mut(y).copy_from_slice(row);
            }
        }
        Ok(report)
    }

    /// One device variant's run of the blur, and its kernel time.
    #[cfg_attr(not(feature = "opencl"), allow(unused_variables))]
    fn gaussian_on<T: Sample>(
        &self,
        dev: &Dev,
        spec: &'static crate::ops::VariantSpec,
        img: &Image<T>,
        p: &GaussianParams,
    ) -> Result<(Image<T>, std::time::Duration)> {
        #[cfg(feature = "opencl")]
        {
            device::run(self, dev, spec, img, p)
        }
        #[cfg(not(feature = "opencl"))]
        {
            match *dev {}
        }
    }
}

/// The dispatch key of a blur of `img`.
fn gaussian_shape<T: Sample>(img: &Image<T>, p: &GaussianParams) -> Shape {
    Shape::new(img.width(), img.height(), img.channels(), T::TYPE)
        .with_params(OpParams::Gaussian(*p))
}

/// The report of a blur with both sigmas 0: a copy on the host.
fn copy_report(start: std::time::Instant) -> RunReport {
    RunReport {
        op: SPEC.name,
        variant: "copy".into(),
        backend: crate::backend::cpu::describe(),
        elapsed: start.elapsed(),
        kernel_time: None,
        fallbacks: Vec::new(),
    }
}
