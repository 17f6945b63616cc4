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
pub(crate) use cl::{run, run_chain, Input};

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &[super::Op],
    input: super::Source<'_>,
) -> crate::error::Result<(crate::image::DynImage, Vec<super::StageOutcome>)> {
    // Both inputs exist in every build; only a device reads them.
    match input {
        super::Source::Image(i) => {
            let _ = i;
        }
        super::Source::Frame(f) => {
            let _ = f;
        }
    }
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use std::time::Instant;

    use super::super::{to_spec, Op, Source, StageOutcome};
    use crate::backend::opencl::DeviceImage;
    use crate::backend::Dev;
    use crate::engine::Engine;
    use crate::error::Result;
    use crate::image::{DynImage, Image, Sample, SampleType};
    use crate::ops::stage::StageRecord;
    use crate::ops::work::{
        load, load_raw, store_into, upload_frame, upload_image_frame, Chain, ChainInput, DeviceRaw,
        Work,
    };

    /// What a chain starts from.
    pub(crate) enum Input<'a> {
        /// A raw frame (for a first stage that reads raw frames, else mono).
        Raw(&'a DeviceRaw),
        /// An image already in working form.
        Work(Work),
    }

    /// Runs `ops` on the device from `input`; returns the last stage's working
    /// image and what each stage did.
    pub(crate) fn run_chain(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        input: Input<'_>,
    ) -> Result<(Work, Vec<StageOutcome>)> {
        let cx = Chain {
            d: engine,
            dev,
            backend: engine.backend().describe(),
        };
        let mut outcomes = Vec::with_capacity(ops.len());
        let (mut raw, mut cur) = match input {
            Input::Raw(r) => (Some(r), None),
            Input::Work(w) => (None, Some(w)),
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
            outcomes.push(StageOutcome::of(op, record, true));
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

    /// Uploads `input`, chains the stages on the device, downloads the result.
    pub(crate) fn run(
        engine: &Engine,
        dev: &Dev,
        stages: &[Op],
        input: Source<'_>,
    ) -> Result<(DynImage, Vec<StageOutcome>)> {
        let start = Instant::now();
        let raw_first = stages[0].stage.reads_raw();
        let raw;
        let input = match input {
            Source::Image(i) => i,
            Source::Frame(f) => {
                // Mono frames may have any size; a stage that reads raw frames
                // checks its own.
                raw = upload_frame(dev, f)?;
                return finish(engine, dev, stages, Input::Raw(&raw), start);
            }
        };
        if raw_first {
            if let Some(frame) = upload_image_frame(dev, input)? {
                raw = frame;
                return finish(engine, dev, stages, Input::Raw(&raw), start);
            }
        }
        let chain_input = match input {
            DynImage::U8(i) => Input::Work(load(engine, dev, &DeviceImage::upload(dev, i)?)?.0),
            DynImage::U16(i) => Input::Work(load(engine, dev, &DeviceImage::upload(dev, i)?)?.0),
            DynImage::F32(i) => Input::Work(load(engine, dev, &DeviceImage::upload(dev, i)?)?.0),
        };
        finish(engine, dev, stages, chain_input, start)
    }

    /// Runs the chain from `chain_input` and downloads the result.
    fn finish(
        engine: &Engine,
        dev: &Dev,
        stages: &[Op],
        chain_input: Input<'_>,
        start: Instant,
    ) -> Result<(DynImage, Vec<StageOutcome>)> {
        let (work, outcomes) = run_chain(engine, dev, stages, chain_input)?;
        let (w, h, c) = (work.img.width(), work.img.height(), work.channels);
        fn fetch<U: Sample>(
            engine: &Engine,
            dev: &Dev,
            work: &Work,
            (w, h, c): (usize, usize, usize),
        ) -> Result<Image<U>> {
            let out = DeviceImage::<U>::new(dev, w, h, c)?;
            store_into(engine, dev, work, &out)?;
            out.download(dev)
        }
        let out: DynImage = match work.ty {
            SampleType::U8 => fetch::<u8>(engine, dev, &work, (w, h, c))?.into(),
            SampleType::U16 => fetch::<u16>(engine, dev, &work, (w, h, c))?.into(),
            SampleType::F32 => fetch::<f32>(engine, dev, &work, (w, h, c))?.into(),
        };
        log::debug!(
            "pipeline '{}' ran on {} in {:?} (one upload, one download)",
            to_spec(stages),
            dev.info().name,
            start.elapsed()
        );
        Ok((out, outcomes))
    }
}
