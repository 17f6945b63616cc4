//! Device-resident pipelines: the input is uploaded once, every stage runs
//! on the device on f32 working images ([`Work`], see `crate::ops::work`),
//! and one download brings the result back.
//!
//! A chained pipeline is at least as exact as the same stages run one by
//! one on the host, which round after every stage; the two differ by about
//! one step of the output type per rounding the host path does
//! (tests/pipeline.rs allows two).
//!
//! Each stage runs its own device arm ([`crate::ops::StageOp::run_device`]),
//! which picks its variant like an engine call, but from the tuner's
//! kernel-mode ranking (data stays on the device), then the device's default
//! order; a variant that fails gives way to the next, and a stage that no
//! variant can run fails the chain, after which [`super::run`] runs the
//! whole pipeline on the host path instead.

#[cfg(feature = "opencl")]
pub(crate) use cl::{display, download, download_into, run_chain, run_with, ChainStart};
#[cfg(feature = "gl")]
pub(crate) use cl::{display_on_device, DeviceDisplay};

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run_with<R>(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &[super::Op],
    input: super::Input<'_>,
    _: impl FnOnce(&crate::ops::work::Work) -> crate::error::Result<R>,
) -> crate::error::Result<(R, Vec<super::StageOutcome>)> {
    // Both inputs exist in every build; only a device reads them.
    match input {
        super::Input::Image(i) => {
            let _ = i;
        }
        super::Input::Frame(f) => {
            let _ = f;
        }
        super::Input::View(v) => {
            let _ = v;
        }
    }
    match *dev {}
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn download_into(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &crate::ops::work::Work,
    _: &mut crate::image::DynViewMut<'_>,
) -> crate::error::Result<()> {
    match *dev {}
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn download(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &crate::ops::work::Work,
) -> crate::error::Result<crate::image::DynImage> {
    match *dev {}
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn display(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &crate::ops::work::Work,
    _: crate::image::display::DisplayFormat,
) -> crate::error::Result<crate::image::display::DisplayFrame> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use std::time::Instant;

    use super::super::{to_spec, Input, Op, StageOutcome};
    use crate::backend::opencl::DeviceImage;
    use crate::backend::Dev;
    use crate::engine::Engine;
    use crate::error::Result;
    use crate::image::display::{DisplayFormat, DisplayFrame};
    use crate::image::{DynImage, DynView, DynViewMut, Image, ImageViewMut, Sample, SampleType};
    use crate::ops::stage::StageRecord;
    use crate::ops::work::{
        display_into, load, load_raw, store_into, upload_frame, upload_image_frame, Chain,
        ChainInput, DeviceRaw, Work,
    };

    /// What a chain starts from.
    pub(crate) enum ChainStart<'a> {
        /// A raw frame (for a first stage that reads raw frames, else mono).
        Raw(&'a DeviceRaw),
        /// An image already in working form.
        Work(Work),
    }

    /// Runs `ops` on the device from `input`, an image of `frames` frames
    /// one below the other (1 but for stages that stack, see
    /// [`Chain::frames`]); returns the last stage's working image and what
    /// each stage did.
    pub(crate) fn run_chain(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        input: ChainStart<'_>,
        frames: usize,
    ) -> Result<(Work, Vec<StageOutcome>)> {
        let cx = Chain {
            d: engine,
            dev,
            backend: engine.backend().describe(),
            frames,
        };
        let mut outcomes = Vec::with_capacity(ops.len());
        let (mut raw, mut cur) = match input {
            ChainStart::Raw(r) => (Some(r), None),
            ChainStart::Work(w) => (None, Some(w)),
        };
        // Integer data is bounded, and stays so through each stage's bound:
        // no non-finite check is needed while the bound is in range.
        let mut bound = cur
            .as_ref()
            .is_none_or(|w| w.ty != SampleType::F32)
            .then_some(super::super::INTEGER_BOUND);
        let in_range = super::super::in_range;
        for op in ops {
            let mut record = StageRecord::default();
            let since = crate::backend::Backend::dispatches_on_this_thread();
            let stage_input = match (raw.take(), cur.take()) {
                (Some(r), _) if op.stage.reads_raw() => ChainInput::raw(r),
                (_, Some(w)) if in_range(bound) => ChainInput::work(w),
                (_, Some(w)) => ChainInput::work(checked(&cx, op, w, &mut record)?),
                (Some(r), None) => {
                    // Every other stage works on a working image.
                    let start = Instant::now();
                    let (w, kt) = load_raw(engine, dev, r)?;
                    record.reports.push(cx.own_report("load", start, kt));
                    ChainInput::work(w)
                }
                (None, None) => unreachable!("a chain starts from a frame or an image"),
            };
            let next = op
                .stage
                .run_device(&cx, op.variant.as_deref(), stage_input, &mut record)?;
            cur = Some(next);
            bound = bound.and_then(|b| op.stage.bound(b));
            outcomes.push(StageOutcome::of(op, record, true, since));
        }
        let w = match (cur, raw) {
            (Some(w), _) => w,
            // No stages: the frame itself.
            (None, Some(r)) => load_raw(engine, dev, r)?.0,
            (None, None) => unreachable!("a chain starts from a frame or an image"),
        };
        Ok((w, outcomes))
    }

    /// `w` as `op` may read it: for a stage that spreads non-finite
    /// values, checked (and repaired) on the device under the stage's
    /// policy, else the engine's.
    fn checked(cx: &Chain<'_>, op: &Op, mut w: Work, record: &mut StageRecord) -> Result<Work> {
        if op.stage.spreads_nonfinite() {
            let start = Instant::now();
            let policy = op.nonfinite.unwrap_or(cx.d.nonfinite());
            if let Some(kt) = w.apply_nonfinite(cx.d, cx.dev, op.def().op.name, policy)? {
                record.reports.push(cx.own_report("nonfinite", start, kt));
            }
        }
        Ok(w)
    }

    /// Uploads `input`, chains the stages on the device, and hands the
    /// last working image to `sink` (which downloads it, or converts it for
    /// display).
    pub(crate) fn run_with<R>(
        engine: &Engine,
        dev: &Dev,
        stages: &[Op],
        input: Input<'_>,
        sink: impl FnOnce(&Work) -> Result<R>,
    ) -> Result<(R, Vec<StageOutcome>)> {
        let start = Instant::now();
        let raw_first = stages[0].stage.reads_raw();
        let raw;
        let chain_input = match input {
            // Mono frames may have any size; a stage that reads raw frames
            // checks its own.
            Input::Frame(f) => {
                raw = upload_frame(dev, f)?;
                ChainStart::Raw(&raw)
            }
            Input::Image(i) => match if raw_first {
                upload_image_frame(dev, i)?
            } else {
                None
            } {
                Some(frame) => {
                    raw = frame;
                    ChainStart::Raw(&raw)
                }
                None => ChainStart::Work(match i {
                    DynImage::U8(i) => load(engine, dev, &DeviceImage::upload(dev, i)?)?.0,
                    DynImage::U16(i) => load(engine, dev, &DeviceImage::upload(dev, i)?)?.0,
                    DynImage::F32(i) => load(engine, dev, &DeviceImage::upload(dev, i)?)?.0,
                }),
            },
            // A first stage that reads raw frames reads an image copy.
            Input::View(v) => match if raw_first {
                upload_image_frame(dev, &v.to_dyn_image())?
            } else {
                None
            } {
                Some(frame) => {
                    raw = frame;
                    ChainStart::Raw(&raw)
                }
                None => ChainStart::Work(match v {
                    DynView::U8(v) => load(engine, dev, &DeviceImage::upload_view(dev, &v)?)?.0,
                    DynView::U16(v) => load(engine, dev, &DeviceImage::upload_view(dev, &v)?)?.0,
                    DynView::F32(v) => load(engine, dev, &DeviceImage::upload_view(dev, &v)?)?.0,
                }),
            },
        };
        let (work, outcomes) = run_chain(engine, dev, stages, chain_input, 1)?;
        let out = sink(&work)?;
        log::debug!(
            "pipeline '{}' ran on {} in {:?} (one upload, one download)",
            to_spec(stages),
            dev.info().name,
            start.elapsed()
        );
        Ok((out, outcomes))
    }

    /// The working image stored as its logical type and downloaded.
    pub(crate) fn download(engine: &Engine, dev: &Dev, work: &Work) -> Result<DynImage> {
        fn fetch<U: Sample>(engine: &Engine, dev: &Dev, work: &Work) -> Result<Image<U>> {
            let out =
                DeviceImage::<U>::new(dev, work.img.width(), work.img.height(), work.channels)?;
            store_into(engine.programs(), dev, work, &out)?;
            out.download(dev)
        }
        Ok(match work.ty {
            SampleType::U8 => fetch::<u8>(engine, dev, work)?.into(),
            SampleType::U16 => fetch::<u16>(engine, dev, work)?.into(),
            SampleType::F32 => fetch::<f32>(engine, dev, work)?.into(),
        })
    }

    /// The working image stored as `out`'s type and read straight into
    /// its rows (`clEnqueueReadBufferRect` when they are padded), or
    /// [`crate::image::ViewError::Mismatch`] when `out` is not of the
    /// result's type and shape.
    pub(crate) fn download_into(
        engine: &Engine,
        dev: &Dev,
        work: &Work,
        out: &mut DynViewMut<'_>,
    ) -> Result<()> {
        fn fetch<U: Sample>(
            engine: &Engine,
            dev: &Dev,
            work: &Work,
            out: &mut ImageViewMut<'_, U>,
        ) -> Result<()> {
            let img = DeviceImage::<U>::new(dev, out.width(), out.height(), out.channels())?;
            store_into(engine.programs(), dev, work, &img)?;
            img.read_into_view(dev, out)
        }
        out.check((work.width(), work.height(), work.channels), work.ty)?;
        match out {
            DynViewMut::U8(v) => fetch(engine, dev, work, v),
            DynViewMut::U16(v) => fetch(engine, dev, work, v),
            DynViewMut::F32(v) => fetch(engine, dev, work, v),
        }
    }

    /// Display pixels on the device.
    pub(crate) enum DeviceDisplay {
        Rgba8(DeviceImage<u8>),
        Rgba32F(DeviceImage<f32>),
    }

    /// Converts the working image into display pixels on the device.
    pub(crate) fn display_on_device(
        engine: &Engine,
        dev: &Dev,
        w: &Work,
        format: DisplayFormat,
    ) -> Result<DeviceDisplay> {
        let (width, height) = (w.img.width(), w.img.height());
        Ok(match format {
            DisplayFormat::Rgba8 => {
                let out = DeviceImage::new(dev, width, height, 4)?;
                display_into(engine, dev, w, &out)?;
                DeviceDisplay::Rgba8(out)
            }
            DisplayFormat::Rgba32F => {
                let out = DeviceImage::new(dev, width, height, 4)?;
                display_into(engine, dev, w, &out)?;
                DeviceDisplay::Rgba32F(out)
            }
        })
    }

    /// The working image as display pixels, converted on the device and
    /// downloaded.
    pub(crate) fn display(
        engine: &Engine,
        dev: &Dev,
        w: &Work,
        format: DisplayFormat,
    ) -> Result<DisplayFrame> {
        Ok(match display_on_device(engine, dev, w, format)? {
            DeviceDisplay::Rgba8(i) => DisplayFrame::Rgba8(i.download(dev)?),
            DeviceDisplay::Rgba32F(i) => DisplayFrame::Rgba32F(i.download(dev)?),
        })
    }
}
