//! The device path of streams: frames overlapped on the device.

use std::io::Read;
use std::sync::mpsc;

use super::{
    host_pipeline, output_shape, reader_loop, Clock, FrameSink, OutFrame, Read_, Source,
    StreamOptions, StreamStats,
};
use crate::backend::opencl::{
    untimed, ClEvent, DeviceBuffer, DeviceImage, HostStage, TransferQueue,
};
use crate::backend::Dev;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::raw::Depth;
use crate::image::DynImage;
use crate::image::SampleType;
use crate::ops::work::{store_into, DeviceRaw};
use crate::pipeline::device::{run_chain, Input};
use crate::pipeline::Op;

/// The device output of one slot, typed by the pipeline's result.
enum DevOut {
    U8(DeviceImage<u8>),
    U16(DeviceImage<u16>),
    F32(DeviceImage<f32>),
}

/// One frame's device memory, allocated once.
struct Slot {
    input: DeviceRaw,
    output: DevOut,
    /// The last kernels that read `input` / the last download of `output`.
    computed: Option<ClEvent>,
    downloaded: Option<ClEvent>,
}

fn alloc_raw(dev: &Dev, opts: &StreamOptions, in_bytes: usize) -> Result<DeviceRaw> {
    let (w, h) = (opts.width, opts.height);
    Ok(match opts.format.depth {
        Depth::Bits8 => DeviceRaw::U8(DeviceImage::new(dev, w, h, 1)?),
        Depth::Bits16 { .. } => DeviceRaw::U16(DeviceImage::new(dev, w, h, 1)?),
        Depth::Packed12(packing) => DeviceRaw::Packed {
            bytes: DeviceBuffer::new(dev, in_bytes)?,
            width: w,
            height: h,
            packing,
        },
    })
}

fn upload(
    q: &TransferQueue,
    stage: &mut HostStage,
    raw: &DeviceRaw,
    wait: &[&ClEvent],
) -> Result<ClEvent> {
    match raw {
        DeviceRaw::U8(i) => q.upload(stage, i.buffer(), wait),
        DeviceRaw::U16(i) => q.upload(stage, i.buffer(), wait),
        DeviceRaw::Packed { bytes, .. } => q.upload(stage, bytes, wait),
    }
}

fn download(
    q: &TransferQueue,
    out: &DevOut,
    stage: &mut HostStage,
    wait: &[&ClEvent],
) -> Result<ClEvent> {
    match out {
        DevOut::U8(i) => q.download(i.buffer(), stage, wait),
        DevOut::U16(i) => q.download(i.buffer(), stage, wait),
        DevOut::F32(i) => q.download(i.buffer(), stage, wait),
    }
}

/// A frame whose upload has been started (`up` is `None` when it runs
/// on the host path).
struct Staged {
    index: usize,
    stage: HostStage,
    slot: usize,
    up: Option<ClEvent>,
}

/// What the writer thread receives, in frame order.
enum Done {
    /// A result in pinned memory (once its download has finished).
    Pinned(usize, HostStage),
    /// A result computed on the host path after a device failure.
    Host(usize, DynImage),
}

/// Frames on the device: see the module docs of `stream`.
pub(super) fn run<R: Read + Send>(
    engine: &Engine,
    dev: &Dev,
    ops: &[Op],
    opts: &StreamOptions,
    in_bytes: usize,
    input: Source<R>,
    sink: &mut dyn FrameSink,
) -> Result<StreamStats> {
    let k = opts.in_flight;
    let (ow, oh, oc, ot) = output_shape(ops, (opts.width, opts.height, 1), opts.format.sample());
    let out_bytes = ow * oh * oc * ot.size();
    let up = dev.transfer_queue()?;
    let down = dev.transfer_queue()?;
    let mut slots = Vec::with_capacity(k);
    for _ in 0..k {
        let output = match ot {
            SampleType::U8 => DevOut::U8(DeviceImage::new(dev, ow, oh, oc)?),
            SampleType::U16 => DevOut::U16(DeviceImage::new(dev, ow, oh, oc)?),
            SampleType::F32 => DevOut::F32(DeviceImage::new(dev, ow, oh, oc)?),
        };
        slots.push(Slot {
            input: alloc_raw(dev, opts, in_bytes)?,
            output,
            // Buffers may come from the pool, freed by kernels still
            // queued on the device: the first upload waits for them.
            computed: Some(dev.marker()?),
            downloaded: None,
        });
    }
    // One more pinned buffer each way than slots, so the reader and the
    // writer always have one to work on.
    let (in_free_tx, in_free_rx) = mpsc::channel::<HostStage>();
    let (out_free_tx, out_free_rx) = mpsc::channel::<HostStage>();
    for _ in 0..=k {
        in_free_tx
            .send(up.stage(dev, in_bytes)?)
            .expect("the receiver is alive");
        out_free_tx
            .send(down.stage(dev, out_bytes)?)
            .expect("the receiver is alive");
    }
    let (full_tx, full_rx) = mpsc::sync_channel::<Read_<HostStage>>(k);
    let (done_tx, done_rx) = mpsc::sync_channel::<Done>(k);
    let transfer_only = opts.transfer_only;
    let mut clock = Clock::new();
    let mut stages: Vec<String> = Vec::new();
    let mut fallback_frames = 0usize;

    let outcome: Result<()> = std::thread::scope(|s| {
        // Owned here, so an early return (a sink or host-path error)
        // drops them and unblocks the reader before the scope joins it.
        let (full_rx, in_free_tx) = (full_rx, in_free_tx);
        s.spawn(move || {
            reader_loop(
                input,
                in_bytes,
                opts,
                k + 1,
                in_free_rx,
                full_tx,
                |b: &mut HostStage| b.bytes_mut(),
            )
        });
        let clock = &mut clock;
        // The writer: waits for each download, hands the frame over and
        // returns the pinned buffer. Host-path frames come with their bytes.
        let writer = s.spawn(move || -> Result<()> {
            for done in done_rx {
                match done {
                    Done::Pinned(index, mut stage) => {
                        if !transfer_only {
                            let bytes = stage.bytes()?;
                            sink.frame(&OutFrame {
                                index,
                                width: ow,
                                height: oh,
                                channels: oc,
                                sample: ot,
                                bytes: &bytes[..out_bytes],
                            })?;
                        } else {
                            stage.bytes()?;
                        }
                        clock.tick();
                        let _ = out_free_tx.send(stage);
                    }
                    Done::Host(index, img) => {
                        let (width, height, channels) = img.shape();
                        sink.frame(&OutFrame {
                            index,
                            width,
                            height,
                            channels,
                            sample: img.sample_type(),
                            bytes: &img.to_ne_bytes(),
                        })?;
                        clock.tick();
                    }
                }
            }
            Ok(())
        });
        let mut on_host = false;
        let mut n = 0usize;
        // Starts a frame's upload into its slot (none once on the host path).
        let mut stage_frame = |slots: &[Slot],
                               index: usize,
                               mut stage: HostStage,
                               on_host: &mut bool| {
            let slot = n % k;
            n += 1;
            let mut up_ev = None;
            if !*on_host {
                let s = &slots[slot];
                let prev: Vec<&ClEvent> = s.computed.iter().collect();
                match upload(&up, &mut stage, &s.input, &prev) {
                    Ok(ev) => up_ev = Some(ev),
                    Err(e) => {
                        log::warn!(
                            "uploading frame {index} to {} failed: {e}; this frame and the rest run on the host path",
                            dev.info().name
                        );
                        *on_host = true;
                    }
                }
            }
            Staged {
                index,
                stage,
                slot,
                up: up_ev,
            }
        };
        let run = (|| -> Result<()> {
            let mut next: Option<Staged> = None;
            let mut end: Option<Result<()>> = None;
            loop {
                let cur = match next.take() {
                    Some(c) => c,
                    None => match end.take() {
                        Some(r) => return r,
                        None => match full_rx.recv() {
                            Ok(Read_::Frame(i, b)) => stage_frame(&slots, i, b, &mut on_host),
                            Ok(Read_::End(r)) => return r,
                            Err(_) => {
                                return Err(Error::arg("the frame reader stopped unexpectedly"))
                            }
                        },
                    },
                };
                // The next frame's upload goes in before this frame's
                // kernels, so the two overlap (the kernels below block
                // this thread until they finish).
                if end.is_none() {
                    match full_rx.recv() {
                        Ok(Read_::Frame(i, b)) => {
                            next = Some(stage_frame(&slots, i, b, &mut on_host))
                        }
                        Ok(Read_::End(r)) => end = Some(r),
                        Err(_) => {
                            end = Some(Err(Error::arg("the frame reader stopped unexpectedly")))
                        }
                    }
                }
                let Staged {
                    index,
                    mut stage,
                    slot,
                    up: up_ev,
                } = cur;
                if let (false, Some(up_ev)) = (on_host, up_ev) {
                    match device_frame(
                        engine,
                        dev,
                        ops,
                        &down,
                        &mut slots[slot],
                        &up_ev,
                        transfer_only,
                        stages.is_empty(),
                        &out_free_rx,
                    ) {
                        Ok((out_stage, names)) => {
                            if stages.is_empty() {
                                stages = names;
                            }
                            let _ = in_free_tx.send(stage);
                            done_tx
                                .send(Done::Pinned(index, out_stage))
                                .map_err(|_| Error::arg("the frame writer stopped"))?;
                            continue;
                        }
                        Err(e) => {
                            log::warn!(
                                "frame {index} failed on {}: {e}; this frame and the rest run on the host path",
                                dev.info().name
                            );
                            on_host = true;
                        }
                    }
                }
                // Host path: the frame's bytes are still in `stage`.
                fallback_frames += 1;
                let result = host_pipeline(engine, ops, opts, stage.bytes()?);
                let _ = in_free_tx.send(stage);
                let (img, _) = result?;
                done_tx
                    .send(Done::Host(index, img))
                    .map_err(|_| Error::arg("the frame writer stopped"))?;
            }
        })();
        drop(done_tx);
        let w = writer
            .join()
            .unwrap_or_else(|_| Err(Error::arg("the frame writer panicked")));
        // The writer's own error (the sink's) explains a "writer stopped".
        match w {
            Err(e) => Err(e),
            Ok(()) => run,
        }
    });
    outcome?;
    let (elapsed, first_frame, fps) = clock.finish();
    Ok(StreamStats {
        frames: clock.frames,
        elapsed,
        first_frame,
        fps,
        in_bytes,
        out_bytes,
        backend: engine.backend().describe(),
        overlapped: true,
        stages,
        host_fallback_frames: fallback_frames,
    })
}

/// Runs the chain on a slot whose upload `up_ev` is under way, and
/// starts the download of its result.
#[allow(clippy::too_many_arguments)]
fn device_frame(
    engine: &Engine,
    dev: &Dev,
    ops: &[Op],
    down: &TransferQueue,
    slot: &mut Slot,
    up_ev: &ClEvent,
    transfer_only: bool,
    first: bool,
    out_free: &mpsc::Receiver<HostStage>,
) -> Result<(HostStage, Vec<String>)> {
    // The kernels wait for the upload, and for the last download of the
    // slot's output, which they overwrite.
    let mut wait = vec![up_ev];
    wait.extend(slot.downloaded.iter());
    dev.barrier(&wait)?;
    let mut names = Vec::new();
    if !transfer_only {
        let chain = || -> Result<_> {
            let (work, outcomes) = run_chain(engine, dev, ops, Input::Raw(&slot.input))?;
            match &slot.output {
                DevOut::U8(o) => store_into(engine, dev, &work, o)?,
                DevOut::U16(o) => store_into(engine, dev, &work, o)?,
                DevOut::F32(o) => store_into(engine, dev, &work, o)?,
            };
            Ok(outcomes)
        };
        // The first frame is timed (its report names the variants);
        // after it the kernels are queued without waiting for each.
        let outcomes = if first { chain()? } else { untimed(chain)? };
        names = super::stage_names(&outcomes);
    }
    let done = dev.marker()?;
    let mut out_stage = out_free
        .recv()
        .map_err(|_| Error::arg("the frame writer stopped"))?;
    let down_ev = download(down, &slot.output, &mut out_stage, &[&done])?;
    slot.computed = Some(done);
    slot.downloaded = Some(down_ev);
    Ok((out_stage, names))
}
