//! Host in, host out; the plan walk; the passes of one work-item per line
//! (recursive and FIR) and the transposes around them.

use std::any::Any;
use std::time::Duration;

use super::super::geometry::{is_float, CONVERT_WG, FIR_LX, FIR_TX, FIR_TY};
use super::super::passes::{Axis, Both, Kernel, Line, Shared, Step};
use super::super::{coeffs::Deriche, geometry, reference, variants, Border, GaussianParams, SPEC};
use crate::backend::opencl::{Arg, ClEvent, DeviceImage, Kernel as ClKernel};
use crate::backend::Dev;
use crate::ops::Programs;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{OpParams, Shape, VariantSpec};

/// A pass's result: the next working image and its kernels' time.
pub(super) type Out = (DeviceImage<f32>, Duration);

/// What every pass of one blur needs.
pub(super) struct Ctx<'a> {
    pub progs: &'a Programs,
    pub dev: &'a Dev,
    pub spec: &'a VariantSpec,
    pub p: &'a GaussianParams,
}

impl Ctx<'_> {
    /// Builds `kernel` of the variant's program for `shape` with the fixed
    /// constants ([`geometry::fixed_defines`]) and the pass's `defines`.
    pub fn kernel(&self, shape: &Shape, defines: &str, kernel: Kernel) -> Result<ClKernel> {
        let options = format!("{} {defines}", geometry::fixed_defines());
        let name = kernel.name(self.spec);
        let (progs, dev) = (self.progs, self.dev);
        progs.kernel(dev, SPEC.name, self.spec, shape, &options, &name)
    }

    /// The working-image shape (f32, 1 or 4 channels) for kernel builds.
    pub fn w_shape(&self, img: &DeviceImage<f32>) -> Shape {
        Shape::new(img.width(), img.height(), img.channels(), SampleType::F32)
            .with_params(OpParams::new(*self.p))
    }

    /// `line` over `src` with `sigma`.
    fn line(&self, line: Line, src: &DeviceImage<f32>, sigma: f32) -> Result<Out> {
        match line {
            Line::IirRows | Line::IirCols | Line::IirCols4 => self.iir(line, src, sigma),
            Line::ColBlocks => self.col_blocks(src, sigma),
            Line::RowLocal => self.row_local(src, sigma),
            Line::RowBlocks => self.row_blocks(src, sigma),
            Line::FirRows => self.fir(true, src, sigma, 1),
            Line::FirCols => self.fir(false, src, sigma, 1),
        }
    }

    /// One recursive pass, one work-item per row ([`Line::IirRows`]), per
    /// column ([`Line::IirCols`]) or per four gray columns
    /// ([`Line::IirCols4`]).
    fn iir(&self, line: Line, src: &DeviceImage<f32>, sigma: f32) -> Result<Out> {
        let (w, h) = (src.width(), src.height());
        let gray = src.channels() == 1;
        let out = DeviceImage::<f32>::new(self.dev, w, h, src.channels())?;
        let k = self.kernel(&self.w_shape(src), &is_float(true), line.kernels(gray)[0])?;
        let items = match line {
            Line::IirRows => h,
            Line::IirCols4 if gray => w.div_ceil(4),
            _ => w,
        };
        let [pole, weight, _, sa] = Deriche::new(sigma as f64).kernel_args();
        let ev = self.dev.launch(
            &k,
            &[items],
            &[self.spec.local[0]],
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

    /// One FIR pass along rows or columns, the reference's taps, over
    /// `frames` frames stacked in `src` (rows never meet another frame's;
    /// columns are filtered frame by frame, in one launch).
    fn fir(&self, rows: bool, src: &DeviceImage<f32>, sigma: f32, frames: usize) -> Result<Out> {
        let (w, h) = (src.width(), src.height());
        let out = DeviceImage::<f32>::new(self.dev, w, h, src.channels())?;
        let mirror = if self.p.border == Border::Mirror {
            " -DMIRROR"
        } else {
            ""
        };
        let line = if rows { Line::FirRows } else { Line::FirCols };
        let defines = format!("{}{mirror}", is_float(true));
        let k = self.kernel(&self.w_shape(src), &defines, line.kernels(true)[0])?;
        let taps = fir_taps(sigma);
        let r = taps.len() / 2;
        let taps = self.dev.constants(&taps)?;
        let (global, local, height) = match (rows, frames) {
            (true, _) => (vec![w, h], vec![FIR_LX, 1], h),
            (false, 1) => (vec![w, h], vec![FIR_TX, FIR_TY], h),
            (false, n) => (vec![w, h / n, n], vec![FIR_TX, FIR_TY, 1], h / n),
        };
        let args = [
            Arg::img(src),
            Arg::img(&out),
            Arg::int(w)?,
            Arg::int(height)?,
            Arg::buf(&taps),
            Arg::int(r)?,
        ];
        let ev = self.dev.launch(&k, &global, &local, &args)?;
        Ok((out, time(ev)?))
    }

    /// The transpose op's `local_x4` on a working image.
    fn transpose(&self, src: &DeviceImage<f32>) -> Result<Out> {
        let dev = self.dev;
        let out = DeviceImage::<f32>::new(dev, src.height(), src.width(), src.channels())?;
        let spec = crate::ops::transpose::SPEC
            .variant("local_x4")
            .expect("the transpose table has local_x4");
        let ev = crate::ops::transpose::device::launch(self.progs, dev, spec, src, &out)?;
        Ok((out, time(ev)?))
    }
}

/// The FIR's taps for `sigma` (the reference's, radius ceil(6 sigma); sigma
/// 0 is the single tap 1), rounded to f32 and renormalised there, so they
/// sum to 1 as closely as f32 allows and constants pass unchanged.
pub(super) fn fir_taps(sigma: f32) -> Vec<f32> {
    if sigma <= 0.0 {
        return vec![1.0];
    }
    let taps: Vec<f32> = reference::taps(sigma as f64)
        .into_iter()
        .map(|t| t as f32)
        .collect();
    let sum: f64 = taps.iter().map(|&t| t as f64).sum();
    taps.iter().map(|&t| (t as f64 / sum) as f32).collect()
}

/// A kernel's time from its profiling event.
pub(super) fn time(ev: ClEvent) -> Result<Duration> {
    Ok(ev.duration()?.unwrap_or_default())
}

/// Runs `spec`'s plan on a working image; returns the result and the
/// summed kernel time. At least one sigma must be non-zero.
pub(crate) fn blur_w(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    src: &DeviceImage<f32>,
    p: &GaussianParams,
) -> Result<Out> {
    let plan = variants::plan(spec)
        .ok_or_else(|| Error::arg(format!("{} is not a gaussian variant", spec.name)))?;
    let cx = Ctx {
        progs,
        dev,
        spec,
        p,
    };
    let mut total = Duration::ZERO;
    let mut cur: Option<DeviceImage<f32>> = None;
    // Each pass consumes the current image (or the source) and yields the next.
    let mut pass = |f: &dyn Fn(&DeviceImage<f32>) -> Result<Out>| -> Result<()> {
        let (next, t) = f(cur.as_ref().unwrap_or(src))?;
        total += t;
        cur = Some(next);
        Ok(())
    };
    match plan.both {
        Some(both) if both.runs(p.sigma_x, p.sigma_y) => pass(&|s| cx.both(both, s))?,
        _ => {
            for step in plan.steps {
                match *step {
                    Step::Along(axis, line) => {
                        let sigma = match axis {
                            Axis::X => p.sigma_x,
                            Axis::Y => p.sigma_y,
                        };
                        if sigma > 0.0 {
                            pass(&|s| cx.line(line, s, sigma))?;
                        }
                    }
                    Step::Transposed(line) if p.sigma_x > 0.0 => {
                        pass(&|s| cx.transpose(s))?;
                        pass(&|s| cx.line(line, s, p.sigma_x))?;
                        pass(&|s| cx.transpose(s))?;
                    }
                    Step::Transposed(_) => {}
                }
            }
        }
    }
    let out = cur.ok_or_else(|| Error::arg("gaussian with both sigmas 0 has no passes"))?;
    Ok((out, total))
}

/// [`blur_w`] on `frames` frames stacked in `src` (each `height / frames`
/// rows), each blurred on its own, in one launch per pass: only variants
/// of FIR passes ([`super::stacks`]); the others are [`Error::Unsupported`].
pub(crate) fn blur_stack(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    src: &DeviceImage<f32>,
    p: &GaussianParams,
    frames: usize,
) -> Result<Out> {
    if frames <= 1 {
        return blur_w(progs, dev, spec, src, p);
    }
    let plan = variants::plan(spec)
        .filter(|_| super::stacks(spec.name) && src.height().is_multiple_of(frames));
    let Some(plan) = plan else {
        return Err(Error::Unsupported {
            op: SPEC.name.into(),
            variant: spec.name.into(),
            reason: format!("{} rows do not run as {frames} stacked frames", src.height()),
        });
    };
    let cx = Ctx {
        progs,
        dev,
        spec,
        p,
    };
    if plan.both == Some(Both::FirTiles) {
        return cx.fir_tiles(src, frames);
    }
    let mut total = Duration::ZERO;
    let mut cur: Option<DeviceImage<f32>> = None;
    for step in plan.steps {
        let (rows, sigma) = match *step {
            Step::Along(Axis::X, Line::FirRows) => (true, p.sigma_x),
            Step::Along(Axis::Y, Line::FirCols) => (false, p.sigma_y),
            _ => return Err(Error::arg(format!("{}: a pass that does not stack", spec.name))),
        };
        if sigma > 0.0 {
            let (next, t) = cx.fir(rows, cur.as_ref().unwrap_or(src), sigma, frames)?;
            total += t;
            cur = Some(next);
        }
    }
    let out = cur.ok_or_else(|| Error::arg("gaussian with both sigmas 0 has no passes"))?;
    Ok((out, total))
}

/// Host in, host out: upload, convert to the working image if needed,
/// blur, convert back, download. `iir_tiles` and `fir_tiles` read and
/// write u8 and u16 gray and RGBA images themselves (`tiles::blur_direct`).
pub(crate) fn run<T: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    p: &GaussianParams,
) -> Result<(Image<T>, Duration)> {
    let ch = img.channels();
    if T::TYPE != SampleType::F32 && super::tiles::tiles_direct(spec, ch, p) {
        let src = DeviceImage::upload(dev, img)?;
        let (out, kt) = super::tiles::blur_direct(progs, dev, spec, &src, p)?;
        return Ok((out.download(dev)?, kt));
    }
    if ch != 3 {
        if let Some(f) = (img as &dyn Any).downcast_ref::<Image<f32>>() {
            let src = DeviceImage::upload(dev, f)?;
            let (out, kt) = blur_w(progs, dev, spec, &src, p)?;
            let boxed: Box<dyn Any> = Box::new(out.download(dev)?);
            let out = boxed.downcast::<Image<T>>().expect("T is f32 on this path");
            return Ok((*out, kt));
        }
    }
    let cx = Ctx {
        progs,
        dev,
        spec,
        p,
    };
    let (w, h) = (img.width(), img.height());
    let n = w * h;
    let user = Shape::new(w, h, ch, T::TYPE).with_params(OpParams::new(*p));
    let float = is_float(T::TYPE == SampleType::F32);
    let input = DeviceImage::upload(dev, img)?;
    let work = DeviceImage::<f32>::new(dev, w, h, if ch == 1 { 1 } else { 4 })?;
    let to_w = cx.kernel(&user, &float, Kernel::Shared(Shared::ToW))?;
    let convert = |k: &ClKernel, from: Arg, to: Arg| {
        dev.launch(k, &[n], &[CONVERT_WG], &[from, to, Arg::int(n)?])
    };
    let e1 = convert(&to_w, Arg::img(&input), Arg::img(&work))?;
    let (blurred, kt) = blur_w(progs, dev, spec, &work, p)?;
    let out = DeviceImage::<T>::new(dev, w, h, ch)?;
    let from_w = cx.kernel(&user, &float, Kernel::Shared(Shared::FromW))?;
    let e2 = convert(&from_w, Arg::img(&blurred), Arg::img(&out))?;
    let kt = kt + time(e1)? + time(e2)?;
    Ok((out.download(dev)?, kt))
}
