//! `fir_tiles`: the FIR over both directions in one kernel, straight from
//! the user's samples to theirs (`gaussian_fir_tiles_both` in
//! `cl/gaussian/fir.cl` says how).

use super::super::geometry::{fir_tiles_defines, fir_tiles_geometry};
use super::super::passes::Both;
use super::super::{policy::fir_tiles_radii, Border, SPEC};
use super::launch::{fir_taps, time, Ctx};
use crate::backend::opencl::{Arg, DeviceImage};
use crate::error::{Error, Result};
use crate::image::{Sample, SampleType};
use crate::ops::{OpParams, Shape};
use std::time::Duration;

impl Ctx<'_> {
    /// [`Both::FirTiles`] over `frames` frames stacked in `src` (gray or
    /// RGBA samples `T`, or the float4 working image), each filtered alone:
    /// one launch, one work-group per strip of a frame.
    pub(super) fn fir_tiles<T: Sample>(
        &self,
        src: &DeviceImage<T>,
        frames: usize,
    ) -> Result<(DeviceImage<T>, Duration)> {
        let (w, ch) = (src.width(), src.channels());
        let (h, frames) = (src.height() / frames.max(1), frames.max(1));
        let p = self.p;
        let (rx, ry) = fir_tiles_radii(p);
        let g = fir_tiles_geometry(rx, ry, ch).ok_or_else(|| Error::Unsupported {
            op: SPEC.name.into(),
            variant: self.spec.name.into(),
            reason: format!("radii {rx}, {ry} do not fit its tiles"),
        })?;
        let mirror = if p.border == Border::Mirror {
            " -DMIRROR"
        } else {
            ""
        };
        let defines = format!(
            "{}{mirror}",
            fir_tiles_defines(rx, ry, &g, T::TYPE == SampleType::F32)
        );
        let shape = Shape::new(w, h, ch, T::TYPE).with_params(OpParams::new(*p));
        let k = self.kernel(&shape, &defines, Both::FirTiles.kernels()[0])?;
        let dev = self.dev;
        let (tx, ty) = (
            dev.constants(&fir_taps(p.sigma_x))?,
            dev.constants(&fir_taps(p.sigma_y))?,
        );
        let out = DeviceImage::<T>::new(dev, w, h * frames, ch)?;
        let ev = dev.launch(
            &k,
            &[w.div_ceil(g.tw) * g.wg(), h.div_ceil(g.strip), frames],
            &[g.wg(), 1, 1],
            &[
                Arg::img(src),
                Arg::img(&out),
                Arg::int(w)?,
                Arg::int(h)?,
                Arg::buf(&tx),
                Arg::buf(&ty),
            ],
        )?;
        Ok((out, time(ev)?))
    }
}
