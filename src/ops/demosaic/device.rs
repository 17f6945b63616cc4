//! `demosaic` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.
//! Device passes: upload a raw frame (packed frames as their bytes) and
//! demosaic it into a device image.

#[cfg(feature = "opencl")]
pub(crate) use cl::*;
#[cfg(not(feature = "opencl"))]
pub(crate) use stub::run;

#[cfg(not(feature = "opencl"))]
mod stub {
    use super::super::{DemosaicParams, Levels, Raw};
    use crate::backend::Dev;
    use crate::error::Result;
    use crate::image::{Image, Sample};
    use crate::ops::{Programs, VariantSpec};
    use std::time::Duration;

    /// No device exists in a build without OpenCL.
    pub(crate) fn run<U: Sample>(
        _: &Programs,
        dev: &Dev,
        _: &VariantSpec,
        _: &Raw<'_>,
        _: &DemosaicParams,
        _: &Levels,
    ) -> Result<(Image<U>, Duration)> {
        match *dev {}
    }
}

#[cfg(feature = "opencl")]
mod cl {
    use std::time::Duration;

    use super::super::{DemosaicParams, Levels, Packing, Raw, SPEC};
    use crate::backend::opencl::{Arg, DeviceBuffer, DeviceImage};
    use crate::backend::Dev;
    use crate::error::{Error, Result};
    use crate::image::{Image, Sample, SampleType};
    use crate::ops::Programs;
    use crate::ops::{OpParams, Shape, VariantSpec};

    /// A raw frame on the device.
    pub(crate) enum DeviceRaw {
        /// 8-bit samples.
        U8(DeviceImage<u8>),
        /// 16-bit containers.
        U16(DeviceImage<u16>),
        /// Packed 12-bit bytes.
        Packed {
            bytes: DeviceBuffer<u8>,
            width: usize,
            height: usize,
            packing: Packing,
        },
    }

    impl DeviceRaw {
        /// Uploads `raw` as it is (packed frames stay packed).
        pub(crate) fn upload(dev: &Dev, raw: &Raw<'_>) -> Result<Self> {
            raw.validate()?;
            Ok(match raw {
                Raw::U8(i) => DeviceRaw::U8(DeviceImage::upload(dev, i)?),
                Raw::U16(i) => DeviceRaw::U16(DeviceImage::upload(dev, i)?),
                Raw::Packed12 {
                    data,
                    width,
                    height,
                    packing,
                } => DeviceRaw::Packed {
                    bytes: DeviceBuffer::from_slice(dev, data)?,
                    width: *width,
                    height: *height,
                    packing: *packing,
                },
            })
        }

        /// The most bits a sample holds and whether samples sit in 16-bit
        /// containers (see `DemosaicParams::levels_for`).
        pub(crate) fn depth(&self) -> (u32, bool) {
            match self {
                DeviceRaw::U8(_) => (8, false),
                DeviceRaw::U16(_) => (16, true),
                DeviceRaw::Packed { .. } => (12, false),
            }
        }

        pub(crate) fn size(&self) -> (usize, usize) {
            match self {
                DeviceRaw::U8(i) => (i.width(), i.height()),
                DeviceRaw::U16(i) => (i.width(), i.height()),
                DeviceRaw::Packed { width, height, .. } => (*width, *height),
            }
        }

        fn arg(&self) -> Arg<'_> {
            match self {
                DeviceRaw::U8(i) => Arg::img(i),
                DeviceRaw::U16(i) => Arg::img(i),
                DeviceRaw::Packed { bytes, .. } => Arg::buf(bytes),
            }
        }

        /// The kernel's input type and its `PACKED` option.
        fn build(&self) -> (SampleType, u8) {
            match self {
                DeviceRaw::U8(_) => (SampleType::U8, 0),
                DeviceRaw::U16(_) => (SampleType::U16, 0),
                DeviceRaw::Packed { packing, .. } => (
                    SampleType::U8,
                    packing.kernel_code(),
                ),
            }
        }
    }

    /// A device frame as a kernel sees it: the buffer, the size, the input
    /// sample type and the `PACKED` option; `frames` frames of `height`
    /// rows one after another (a stream's stacked batch), else 1.
    pub(crate) struct RawArg<'a> {
        pub(crate) arg: Arg<'a>,
        pub(crate) width: usize,
        pub(crate) height: usize,
        pub(crate) sample: SampleType,
        pub(crate) packed: u8,
        pub(crate) frames: usize,
    }

    impl DeviceRaw {
        pub(crate) fn raw_arg(&self) -> RawArg<'_> {
            let (width, height) = self.size();
            let (sample, packed) = self.build();
            RawArg {
                arg: self.arg(),
                width,
                height,
                sample,
                packed,
                frames: 1,
            }
        }
    }

    /// Runs `spec` on a device frame into `out` (the frame's size, 3 or 4
    /// channels; for stacked frames, their stack), one launch for all its
    /// frames; returns the kernel time. `clamp_hi` saturates f32 output
    /// to `0..clamp_hi` (for pipelines whose stage type is an integer one).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch<U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: RawArg<'_>,
        out: &DeviceImage<U>,
        p: &DemosaicParams,
        lv: &Levels,
        clamp_hi: Option<f32>,
    ) -> Result<Duration> {
        let (w, h, frames) = (input.width, input.height, input.frames);
        super::super::check_cfa_size(w, h)?;
        if (out.width(), out.height()) != (w, h * frames) || !matches!(out.channels(), 3 | 4) {
            return Err(Error::arg(format!(
                "demosaic output must be {w}x{} with 3 or 4 channels, got {}x{}x{}",
                h * frames,
                out.width(),
                out.height(),
                out.channels()
            )));
        }
        let shape = Shape::new(w, h, 1, input.sample).with_params(OpParams::new(*p));
        let (rx, ry) = p.pattern.red_at();
        let mut extra = format!(
            "-DPACKED={} -DTOUT={} -DOUT_FLOAT={} -DMETHOD={} -DRX={rx} -DRY={ry}",
            input.packed,
            U::TYPE.cl_name(),
            (U::TYPE == SampleType::F32) as u8,
            p.method as u8,
        );
        if let (Some(hi), SampleType::F32) = (clamp_hi, U::TYPE) {
            extra.push_str(&format!(" -DCLAMP_HI={hi:?}f"));
        }
        let k = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        let [lev, scale] = lv.kernel_args();
        // Stacked frames are the third dimension, one frame per group.
        let (global, local) = match frames {
            1 => (vec![w / 2, h / 2], spec.local.to_vec()),
            n => (vec![w / 2, h / 2, n], vec![spec.local[0], spec.local[1], 1]),
        };
        let ev = dev.launch(
            &k,
            &global,
            &local,
            &[
                input.arg,
                Arg::img(out),
                Arg::int(out.channels())?,
                Arg::int(w)?,
                Arg::int(h)?,
                Arg::F32x4(lev),
                Arg::F32x4(scale),
            ],
        )?;
        Ok(ev.duration()?.unwrap_or_default())
    }

    /// Demosaics a device frame into a float4 working image (RGBA f32, in
    /// the units `lv` levels to, alpha at full scale), the input of the
    /// Gaussian's device passes (`ops::gaussian::device::blur_w`) and of
    /// device-resident pipelines. `input` holds `frames` frames one below
    /// the other, each demosaiced on its own. `p.channels` is ignored;
    /// `clamp_hi` as in [`launch`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn demosaic_w(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &DeviceRaw,
        frames: usize,
        p: &DemosaicParams,
        lv: &Levels,
        clamp_hi: Option<f32>,
    ) -> Result<(DeviceImage<f32>, Duration)> {
        let (w, h) = input.size();
        let out = DeviceImage::<f32>::new(dev, w, h, 4)?;
        let p = DemosaicParams { channels: 4, ..*p };
        let mut arg = input.raw_arg();
        if frames == 0 || !h.is_multiple_of(frames) {
            return Err(Error::arg(format!(
                "{frames} frames do not cut {h} rows evenly"
            )));
        }
        arg.height = h / frames;
        arg.frames = frames;
        let kt = launch(progs, dev, spec, arg, &out, &p, lv, clamp_hi)?;
        Ok((out, kt))
    }

    /// Host in, host out.
    pub(crate) fn run<U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        raw: &Raw<'_>,
        p: &DemosaicParams,
        lv: &Levels,
    ) -> Result<(Image<U>, Duration)> {
        let input = DeviceRaw::upload(dev, raw)?;
        if U::TYPE == SampleType::F32 && p.channels == 4 {
            // RGBA f32 is the working image itself.
            let (out, kt) = demosaic_w(progs, dev, spec, &input, 1, p, lv, None)?;
            let boxed: Box<dyn std::any::Any> = Box::new(out.download(dev)?);
            let out = boxed
                .downcast::<Image<U>>()
                .map_err(|_| Error::arg("demosaic: f32 output type mismatch"))?;
            return Ok((*out, kt));
        }
        let (w, h) = input.size();
        let out = DeviceImage::<U>::new(dev, w, h, p.channels)?;
        let kt = launch(progs, dev, spec, input.raw_arg(), &out, p, lv, None)?;
        Ok((out.download(dev)?, kt))
    }
}

/// The stage's arm in a device-resident chain ([`crate::ops::StageOp::run_device`]).
#[cfg(feature = "opencl")]
pub(crate) fn run_stage(
    stage: &super::stage::DemosaicStage,
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    input: crate::ops::work::ChainInput<'_>,
    record: &mut crate::ops::stage::StageRecord,
) -> crate::error::Result<crate::ops::work::Work> {
    use crate::ops::stage::SpecText;
    use crate::ops::work::Work;
    use crate::ops::{OpParams, Shape};
    let Ok(r) = input.into_raw() else {
        return Err(crate::error::Error::InvalidInput(format!(
            "stage '{}': demosaic reads a raw frame, one channel of u8 or u16 samples at the \
             start of a chain, and its input here is not one",
            SpecText(stage, forced)
        )));
    };
    let (w, h) = r.size();
    // A stack of frames is cut into frames of equal height.
    let frames = cx.frames.max(1);
    let h = h / frames;
    let input_ty = r.raw_arg().sample;
    let (max, wide) = r.depth();
    let out_ty = stage
        .out
        .unwrap_or(if max > 8 { crate::image::SampleType::U16 } else { input_ty });
    let p = &stage.params;
    let lv = p.levels_for(max, wide, out_ty)?;
    let shape = Shape::new(w, h, 1, input_ty).with_params(OpParams::new(*p));
    let clamp = (out_ty != crate::image::SampleType::F32).then(|| out_ty.full_scale());
    let (img, rep) =
        crate::ops::dispatch_on_device(cx.d, &super::SPEC, forced, (&shape, &shape), |dev, spec| {
            super::device::demosaic_w(cx.d.programs(), dev, spec, r, frames, p, &lv, clamp)
        })?;
    record.reports.push(rep);
    Ok(Work {
        img,
        channels: p.channels,
        ty: out_ty,
        scale: 1.0,
        unsaturated: false,
    })
}

/// No chain exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run_stage(
    _: &super::stage::DemosaicStage,
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
    case: &'a super::tune::DemosaicCase<T>,
    progs: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    spec: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    use crate::ops::tuning::Case;
        use crate::backend::opencl::DeviceImage;
        let raw = case.raw()?;
        let lv = case.p.levels(&raw, T::TYPE)?;
        crate::ops::tuning::check_variant(&super::SPEC, spec, &case.shape(), dev.info().local_mem)?;
        let input = super::device::DeviceRaw::upload(dev, &raw)?;
        let (w, h) = (case.cfa.width(), case.cfa.height());
        let out = DeviceImage::<T>::new(dev, w, h, case.p.channels)?;
        let p = case.p;
        Ok(Box::new(move || {
            super::device::launch(progs, dev, spec, input.raw_arg(), &out, &p, &lv, None)
        }))
    }

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a, T: crate::image::Sample>(
    _: &'a super::tune::DemosaicCase<T>,
    _: &'a crate::ops::Programs,
    dev: &'a crate::backend::Dev,
    _: &'static crate::ops::VariantSpec,
) -> crate::error::Result<crate::ops::tuning::Runner<'a>> {
    match *dev {}
}
