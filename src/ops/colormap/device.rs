//! `colormap` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.
//! Device passes.

#[cfg(feature = "opencl")]
pub(crate) use cl::*;
#[cfg(not(feature = "opencl"))]
pub(crate) use stub::run;

#[cfg(not(feature = "opencl"))]
mod stub {
    use super::super::ColormapParams;
    use crate::backend::Dev;
    use crate::error::Result;
    use crate::image::{Image, Sample};
    use crate::ops::{Programs, VariantSpec};
    use std::time::Duration;

    /// No device exists in a build without OpenCL.
    pub(crate) fn run<T: Sample, U: Sample>(
        _: &Programs,
        dev: &Dev,
        _: &VariantSpec,
        _: &Image<T>,
        _: &ColormapParams,
        _: (f32, f32),
    ) -> Result<(Image<U>, Duration)> {
        match *dev {}
    }
}

#[cfg(feature = "opencl")]
mod cl {
    use std::time::Duration;

    use super::super::{ColormapParams, Mapping, SPEC};
    use crate::backend::opencl::{Arg, DeviceImage};
    use crate::backend::Dev;
    use crate::error::{Error, Result};
    use crate::image::{Image, Sample, SampleType};
    use crate::ops::Programs;
    use crate::ops::{OpParams, Shape, VariantSpec};

    /// Runs `spec` on a 1-channel device image into `out` (its size, 3 or 4
    /// channels: `out` decides, `p.channels` is not read) with the resolved
    /// range `lo..hi` (from [`ColormapParams::range`]; an empty one is the
    /// step of the module docs). `out_scale` is the value of full intensity
    /// in the output: 255 for u8, 65535 for u16, 1 for f32, or 255 for f32
    /// in 8-bit units; integer outputs are rounded and saturated. Returns
    /// the kernel time. (The 4 KiB colour table is uploaded on each call.)
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch<T: Sample, U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceImage<T>,
        out: &DeviceImage<U>,
        p: &ColormapParams,
        lo: f32,
        hi: f32,
        out_scale: f32,
    ) -> Result<Duration> {
        super::super::check_input(input.channels())?;
        let (w, h) = (input.width(), input.height());
        if (out.width(), out.height()) != (w, h) || !matches!(out.channels(), 3 | 4) {
            return Err(Error::arg(format!(
                "colormap output must be {w}x{h} with 3 or 4 channels, got {}x{}x{}",
                out.width(),
                out.height(),
                out.channels()
            )));
        }
        let m = Mapping::new(lo, hi, out_scale)?;
        let shape = Shape::new(w, h, 1, T::TYPE).with_params(OpParams::new(ColormapParams {
            channels: out.channels(),
            ..*p
        }));
        let extra = format!(
            "-DTOUT={} -DOUT_FLOAT={} -DCOUT={}",
            U::TYPE.cl_name(),
            (U::TYPE == SampleType::F32) as u8,
            out.channels()
        );
        let k = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        let table = dev.constants(p.map.table())?;
        let n = input.pixel_count();
        let ev = dev.launch(
            &k,
            &[n],
            &[spec.local[0]],
            &[
                Arg::img(input),
                Arg::img(out),
                Arg::int(n)?,
                Arg::F32x4(m.kernel_arg()),
                Arg::buf(&table),
            ],
        )?;
        Ok(ev.duration()?.unwrap_or_default())
    }

    /// Host in, host out, at `U`'s full scale.
    pub(crate) fn run<T: Sample, U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        img: &Image<T>,
        p: &ColormapParams,
        (lo, hi): (f32, f32),
    ) -> Result<(Image<U>, Duration)> {
        let input = DeviceImage::upload(dev, img)?;
        let out = DeviceImage::<U>::new(dev, img.width(), img.height(), p.channels)?;
        let kt = launch(
            progs,
            dev,
            spec,
            &input,
            &out,
            p,
            lo,
            hi,
            U::TYPE.full_scale(),
        )?;
        Ok((out.download(dev)?, kt))
    }

    impl super::super::Mapping {
        /// The kernels' `float4` argument.
        pub(crate) fn kernel_arg(&self) -> [f32; 4] {
            [self.lo, self.hi, self.k, self.scale]
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::ops::colormap::ColormapParams;

        /// The device entry point the pipeline uses: f32 output in 8-bit units
        /// (`out_scale` 255) for every variant, and its shape checks.
        #[test]
        fn device_launch_scales_and_checks_shapes() {
            use crate::backend::opencl::DeviceImage;
            use crate::backend::{select, Backend, CacheDir, DeviceSelector};
            let backend = select(&DeviceSelector::Auto, &CacheDir::Disabled).unwrap();
            let progs = crate::ops::Programs::new(None, crate::ops::all_sources());
            let Backend::OpenCl(dev) = &backend else {
                if std::env::var("FILTERCTL_REQUIRE_OPENCL").is_ok_and(|v| v.trim() == "1") {
                    panic!("FILTERCTL_REQUIRE_OPENCL=1 but no OpenCL device is usable");
                }
                eprintln!("skipped: no OpenCL device");
                return;
            };
            let (w, h) = (19, 7);
            let img =
                Image::<u16>::from_fn(w, h, 1, |x, y, _| (x * 3001 + y * 777) as u16).unwrap();
            let (lo, hi) = (1000.0, 50000.0);
            let p = ColormapParams {
                min: Some(lo),
                max: Some(hi),
                channels: 4,
                ..Default::default()
            };
            let want =
                crate::ops::colormap::reference::colormap::<u16, f32>(&img, &p, (lo, hi)).unwrap();
            let input = DeviceImage::upload(dev, &img).unwrap();
            for spec in SPEC.variants {
                let out = DeviceImage::<f32>::new(dev, w, h, 4).unwrap();
                launch_ok(&progs, dev, spec, &input, &out, &p, (lo, hi, 255.0));
                let got = out.download(dev).unwrap();
                for y in 0..h {
                    for (i, (g, e)) in got.row(y).iter().zip(want.row(y)).enumerate() {
                        let ctx = format!("{}: ({}, {y}) channel {}", spec.name, i / 4, i % 4);
                        assert!(
                            (g - e * 255.0).abs()
                                <= crate::ops::colormap::variants::TOLERANCE * 255.0,
                            "{ctx}"
                        );
                        if i % 4 == 3 {
                            assert_eq!(*g, 255.0, "{ctx}: alpha");
                        }
                    }
                }
                // Wrong shapes and arguments are typed errors.
                let rgb_in = DeviceImage::<u16>::new(dev, w, h, 3).unwrap();
                let narrow = DeviceImage::<f32>::new(dev, w - 1, h, 4).unwrap();
                let gray_out = DeviceImage::<f32>::new(dev, w, h, 1).unwrap();
                for (inp, o, args) in [
                    (&rgb_in, &out, (lo, hi, 255.0)),
                    (&input, &narrow, (lo, hi, 255.0)),
                    (&input, &gray_out, (lo, hi, 255.0)),
                    (&input, &out, (lo, hi, 0.0)),
                    (&input, &out, (f32::NAN, hi, 1.0)),
                    (&input, &out, (0.0, 1e31, 1.0)),
                ] {
                    let r = launch(&progs, dev, spec, inp, o, &p, args.0, args.1, args.2);
                    assert!(
                        matches!(r, Err(Error::InvalidArgument(_))),
                        "{}: {args:?}: {r:?}",
                        spec.name
                    );
                }
            }
        }

        fn launch_ok(
            progs: &crate::ops::Programs,
            dev: &crate::backend::Dev,
            spec: &crate::ops::VariantSpec,
            input: &crate::backend::opencl::DeviceImage<u16>,
            out: &crate::backend::opencl::DeviceImage<f32>,
            p: &ColormapParams,
            (lo, hi, scale): (f32, f32, f32),
        ) {
            launch(progs, dev, spec, input, out, p, lo, hi, scale)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        }
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &super::ColormapParams,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> crate::error::Result<crate::ops::work::Work> {
    use crate::backend::opencl::DeviceImage;
    use crate::ops::stage::SpecText;
    use crate::ops::work::Work;
    use crate::ops::OpParams;
    let mut w = input.into_work();
    if w.channels != 1 {
        return Err(crate::error::Error::InvalidArgument(format!(
            "stage '{}': colormap maps 1-channel images, this one has {}",
            SpecText(stage, forced),
            w.channels
        )));
    }
    let range = if stage.needs_minmax() {
        let (m, rep) = crate::ops::minmax::device::minmax_of(cx, None, &mut w)?;
        record.reports.push(rep);
        stage.range(Some(&m))?
    } else {
        stage.range(None)?
    };
    let mt = w.materialize(cx.d, cx.dev)?;
    let params = OpParams::new(*stage);
    let (logical, working) = (w.logical_shape(params.clone()), w.working_shape(params));
    let (img, mut rep) = crate::ops::dispatch_on_device(
        cx.d,
        &super::SPEC,
        forced,
        (&logical, &working),
        |dev, spec| {
            // Float4 working pixels in 8-bit units: the store rounds.
            let out = DeviceImage::<f32>::new(dev, w.width(), w.height(), 4)?;
            let cm = super::ColormapParams {
                channels: 4,
                ..*stage
            };
            let kt = super::device::launch(
                cx.d.programs(),
                dev,
                spec,
                &w.img,
                &out,
                &cm,
                range.0,
                range.1,
                255.0,
            )?;
            Ok((out, kt))
        },
    )?;
    rep.kernel_time = rep.kernel_time.map(|t| t + mt);
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: stage.channels,
        ty: crate::image::SampleType::U8,
        scale: 1.0,
        unsaturated: false,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::ColormapParams,
    cx: &crate::ops::work::Chain<'_>,
    _: Option<&str>,
    _: crate::ops::work::ChainInput<'_>,
    _: &mut crate::ops::stage::StageRecord,
) -> crate::error::Result<crate::ops::work::Work> {
    cx.never()
}

/// A kernel-only runner of `spec` on the case's input, uploaded once
/// ([`crate::ops::tuning::Case::kernel_runner`]).
#[cfg(feature = "opencl")]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::ColormapCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        use crate::backend::opencl::DeviceImage;
        let (lo, hi) = case.p.range(None)?;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let input = case.on_device.image(dev, &case.img)?;
        let (w, h) = (input.width(), input.height());
        let out = DeviceImage::<T>::new(dev, w, h, case.p.channels)?;
        let p = case.p;
        let full = T::TYPE.full_scale();
        Ok(Box::new(move || {
            super::device::launch(progs, dev, spec, input, &out, &p, lo, hi, full)
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    case: &'a super::tune::ColormapCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    // The upload slot exists in every build; only a device fills it.
    let _ = &case.on_device;
    match *dev {}
}
