//! Streams of raw camera frames through a pipeline.
//!
//! [`run_stream`] reads headerless frames of one [`RawFormat`] from any
//! reader (a file, a pipe, stdin), runs the pipeline on each, and hands the
//! results to a [`FrameSink`] in order.
//!
//! On an OpenCL device the stream is double-buffered (more precisely,
//! `in_flight`-buffered): a reader thread fills pinned host buffers, the
//! upload of frame n+1 runs on one transfer queue while frame n's kernels
//! run on the device's queue and frame n-1's result comes back on a second
//! transfer queue into pinned memory, which a writer thread hands to the
//! sink. Device buffers are allocated once per slot, and the stages'
//! intermediates come from the device's buffer pool, so nothing is
//! allocated per frame after the first. If the device fails on a frame, the
//! reason is logged and that frame and the rest run on the host path; the
//! frame's bytes are kept until its result exists, so nothing is lost.
//!
//! On the CPU backend the same pipeline runs on rayon, frame by frame, with
//! the reading done ahead on a thread.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{run_stages, Op};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::raw::{FrameReader, RawFormat};
use crate::image::{DynImage, SampleType};

/// How to read a stream.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Frame width in pixels.
    pub width: usize,
    /// Frame height in pixels.
    pub height: usize,
    /// The pixel format of every frame.
    pub format: RawFormat,
    /// Bytes to skip after every frame (a trailer some grabbers write).
    pub skip: usize,
    /// Stop after this many frames (`None`: at the end of the input).
    pub frames: Option<usize>,
    /// Frames in flight on a device (2 = classic double buffering; 3, the
    /// default, lets upload, kernels and download of three frames overlap).
    pub in_flight: usize,
    /// Measure the transfer bound instead: upload every frame and download a
    /// result-sized buffer, with the same overlap, but run no kernels (the
    /// sink receives nothing).
    pub transfer_only: bool,
}

impl StreamOptions {
    /// Options for frames of `width x height` in `format`, three in flight.
    pub fn new(width: usize, height: usize, format: RawFormat) -> Self {
        StreamOptions {
            width,
            height,
            format,
            skip: 0,
            frames: None,
            in_flight: 3,
            transfer_only: false,
        }
    }
}

/// One result frame, as the sink sees it: packed samples of `sample` type in
/// native byte order.
#[derive(Debug)]
pub struct OutFrame<'a> {
    /// Frame number, from 0.
    pub index: usize,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Samples per pixel.
    pub channels: usize,
    /// Sample type.
    pub sample: SampleType,
    /// `width * height * channels` samples, packed.
    pub bytes: &'a [u8],
}

impl OutFrame<'_> {
    /// The frame as an owned image.
    pub fn to_image(&self) -> Result<DynImage> {
        let (w, h, c) = (self.width, self.height, self.channels);
        Ok(match self.sample {
            SampleType::U8 => crate::Image::from_vec(w, h, c, self.bytes.to_vec())?.into(),
            SampleType::U16 => crate::Image::from_vec(
                w,
                h,
                c,
                self.bytes
                    .chunks_exact(2)
                    .map(|b| u16::from_ne_bytes([b[0], b[1]]))
                    .collect(),
            )?
            .into(),
            SampleType::F32 => crate::Image::from_vec(
                w,
                h,
                c,
                self.bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            )?
            .into(),
        })
    }
}

/// Where results go, in frame order. Runs on the stream's writer thread.
pub trait FrameSink: Send {
    /// Takes one result frame.
    fn frame(&mut self, frame: &OutFrame<'_>) -> Result<()>;
}

/// What a stream did.
#[derive(Debug, Clone, Serialize)]
pub struct StreamStats {
    /// Frames processed and handed to the sink.
    pub frames: usize,
    /// From the first read to the last result handed over.
    #[serde(serialize_with = "crate::ops::ser_ms")]
    pub elapsed: Duration,
    /// The first frame alone (kernel builds and allocations happen there).
    #[serde(serialize_with = "crate::ops::ser_ms")]
    pub first_frame: Duration,
    /// Frames per second over frames 2..N (over all frames when there is one).
    pub fps: f64,
    /// Input bytes per frame.
    pub in_bytes: usize,
    /// Output bytes per frame.
    pub out_bytes: usize,
    /// Where the frames ran, in words.
    pub backend: String,
    /// Whether the overlapped device path ran (false: the host path).
    pub overlapped: bool,
    /// Each stage and the variant it used on the first frame.
    pub stages: Vec<String>,
    /// Frames that fell back to the host path after a device failure.
    pub host_fallback_frames: usize,
}

/// The result shape of `ops` on a `w x h x c` input of type `ty`.
pub fn output_shape(
    ops: &[Op],
    (mut w, mut h, mut c): (usize, usize, usize),
    mut ty: SampleType,
) -> (usize, usize, usize, SampleType) {
    for op in ops {
        (w, h, c) = op.stage.output_shape((w, h, c));
        ty = op.output_type(ty);
    }
    (w, h, c, ty)
}

/// Counts results and times the stream (shared by both paths).
struct Clock {
    start: Instant,
    first_done: Option<Instant>,
    frames: usize,
}

impl Clock {
    fn new() -> Self {
        Clock {
            start: Instant::now(),
            first_done: None,
            frames: 0,
        }
    }

    fn tick(&mut self) {
        self.frames += 1;
        if self.first_done.is_none() {
            self.first_done = Some(Instant::now());
        }
    }

    /// (elapsed, first frame, fps over frames 2..N)
    fn finish(&self) -> (Duration, Duration, f64) {
        let elapsed = self.start.elapsed();
        let first = self
            .first_done
            .map_or(elapsed, |t| t.duration_since(self.start));
        let fps = if self.frames > 1 {
            (self.frames - 1) as f64 / (elapsed - first).as_secs_f64().max(1e-9)
        } else {
            self.frames as f64 / elapsed.as_secs_f64().max(1e-9)
        };
        (elapsed, first, fps)
    }
}

/// A frame read ahead by the reader thread, or why reading stopped.
enum Read_<B> {
    Frame(usize, B),
    /// The end: `Ok` for a clean end (or the frame limit), else the error
    /// (a truncated frame names itself; the frames before it were sent).
    End(Result<()>),
}

/// Where a stream's frames come from.
pub enum Source<R> {
    /// Headerless frames read from `R` (a file, a pipe, stdin).
    Reader(R),
    /// `frames` frames of random data, generated once into the stream's
    /// input buffers (pinned memory on a device) and then cycled: nothing is
    /// read, as when a camera SDK delivers frames straight into the
    /// application's buffers. For measuring the device-side rate.
    Synthetic {
        /// How many frames to run.
        frames: usize,
    },
}

/// Fills `b` with random bytes (SplitMix64; any bytes are a valid frame).
fn fill_random(b: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for chunk in b.chunks_mut(8) {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let v = (z ^ (z >> 31)).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

/// Fills buffers handed over by `free` with frames from `source`, sending
/// them on `full`. `buffers` is how many distinct buffers circulate (a
/// synthetic source fills each once: the first `buffers` frames).
fn reader_loop<R: Read, B>(
    source: Source<R>,
    in_bytes: usize,
    opts: &StreamOptions,
    buffers: usize,
    free: mpsc::Receiver<B>,
    full: mpsc::SyncSender<Read_<B>>,
    mut bytes: impl FnMut(&mut B) -> Result<&mut [u8]>,
) {
    let (mut reader, synthetic) = match source {
        Source::Reader(r) => (Some(FrameReader::new(r, in_bytes, opts.skip)), None),
        Source::Synthetic { frames } => (None, Some(frames)),
    };
    let frames = match (opts.frames, synthetic) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut index = 0;
    let end = loop {
        if frames.is_some_and(|n| index >= n) {
            break Ok(());
        }
        // The consumer hung up (it failed): stop quietly.
        let Ok(mut buf) = free.recv() else { return };
        let got = bytes(&mut buf).and_then(|b| match &mut reader {
            Some(r) => r.read_into(b),
            None => {
                if index < buffers {
                    fill_random(b, index as u64);
                }
                Ok(true)
            }
        });
        match got {
            Ok(true) => {
                if full.send(Read_::Frame(index, buf)).is_err() {
                    return;
                }
                index += 1;
            }
            Ok(false) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let _ = full.send(Read_::End(end));
}

/// Runs `ops` over every frame of `input` (see the module docs), handing
/// each result to `sink` in order. A truncated last frame is an
/// [`Error::TruncatedFrame`] returned after every frame before it has been
/// handed to the sink.
pub fn run_stream<R: Read + Send>(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    input: R,
    sink: &mut dyn FrameSink,
) -> Result<StreamStats> {
    run_source(engine, ops, opts, Source::Reader(input), sink)
}

/// [`run_stream`] from any [`Source`], synthetic frames included.
pub fn run_source<R: Read + Send>(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    input: Source<R>,
    sink: &mut dyn FrameSink,
) -> Result<StreamStats> {
    let (w, h) = (opts.width, opts.height);
    let in_bytes = opts.format.frame_bytes(w, h)?;
    if !(2..=8).contains(&opts.in_flight) {
        return Err(Error::arg(format!(
            "frames in flight must be 2..8, got {}",
            opts.in_flight
        )));
    }
    if opts.format.pattern.is_none() && ops.iter().any(|o| o.stage.reads_raw()) {
        return Err(Error::arg(format!(
            "format {} is mono: its frames have no colour filter array to demosaic",
            opts.format
        )));
    }
    #[cfg(feature = "opencl")]
    if let crate::backend::Backend::OpenCl(dev) = engine.backend() {
        return device::run(engine, dev, ops, opts, in_bytes, input, sink);
    }
    if opts.transfer_only {
        return Err(Error::arg(
            "the transfer bound is measured on an OpenCL device; the engine runs on the CPU",
        ));
    }
    host_run(engine, ops, opts, in_bytes, input, sink)
}

/// Runs one frame's bytes through the host path. A first `demosaic` reads
/// the decoded frame directly (`format::run_stage_raw`), so packed 12-bit
/// frames keep their 12-bit white level, as on the device.
fn host_pipeline(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    bytes: &[u8],
) -> Result<(DynImage, Vec<super::StageOutcome>)> {
    let frame = opts.format.decode(bytes, opts.width, opts.height)?;
    let Some((first, rest)) = ops.split_first() else {
        return Ok((frame.into_dyn(), Vec::new()));
    };
    let (img, outcome) = super::format::run_stage_raw(engine, first, frame)?;
    let (img, mut outcomes) = run_stages(engine, rest, img)?;
    outcomes.insert(0, outcome);
    Ok((img, outcomes))
}

/// Each stage with the variants it ran (`gaussian=sigma=2 (fir_local)`).
fn stage_names(outcomes: &[super::StageOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| {
            let v: Vec<&str> = o.reports.iter().map(|r| r.variant.as_str()).collect();
            format!("{} ({})", o.op, v.join(", "))
        })
        .collect()
}

/// Runs one frame through the host path and hands it to the sink.
fn host_frame(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    index: usize,
    bytes: &[u8],
    sink: &mut dyn FrameSink,
) -> Result<Vec<String>> {
    let (img, outcomes) = host_pipeline(engine, ops, opts, bytes)?;
    let (ow, oh, oc) = img.shape();
    let sample = img.sample_type();
    let bytes = img.to_ne_bytes();
    sink.frame(&OutFrame {
        index,
        width: ow,
        height: oh,
        channels: oc,
        sample,
        bytes: &bytes,
    })?;
    Ok(stage_names(&outcomes))
}

/// The host path: frames read ahead on a thread, each run with the engine's
/// per-stage calls (rayon on the CPU backend).
fn host_run<R: Read + Send>(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    in_bytes: usize,
    input: Source<R>,
    sink: &mut dyn FrameSink,
) -> Result<StreamStats> {
    let (out_w, out_h, out_c, out_t) =
        output_shape(ops, (opts.width, opts.height, 1), opts.format.sample());
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let (full_tx, full_rx) = mpsc::sync_channel::<Read_<Vec<u8>>>(2);
    for _ in 0..2 {
        free_tx
            .send(vec![0u8; in_bytes])
            .expect("the receiver is alive");
    }
    let mut clock = Clock::new();
    let mut stages = Vec::new();
    let end = std::thread::scope(|s| {
        // Owned here, so an early return drops them and the reader, blocked
        // on one of them, ends before the scope joins it.
        let (free_tx, full_rx) = (free_tx, full_rx);
        s.spawn(move || {
            reader_loop(input, in_bytes, opts, 2, free_rx, full_tx, |b| {
                Ok(&mut b[..])
            })
        });
        loop {
            match full_rx.recv() {
                Ok(Read_::Frame(i, buf)) => {
                    let st = host_frame(engine, ops, opts, i, &buf, sink)?;
                    if stages.is_empty() {
                        stages = st;
                    }
                    clock.tick();
                    let _ = free_tx.send(buf);
                }
                Ok(Read_::End(r)) => return r,
                Err(_) => return Err(Error::arg("the frame reader stopped unexpectedly")),
            }
        }
    });
    end?;
    let (elapsed, first_frame, fps) = clock.finish();
    Ok(StreamStats {
        frames: clock.frames,
        elapsed,
        first_frame,
        fps,
        in_bytes,
        out_bytes: out_w * out_h * out_c * out_t.size(),
        backend: engine.backend().describe(),
        overlapped: false,
        stages,
        host_fallback_frames: 0,
    })
}

#[cfg(feature = "opencl")]
mod device {
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
        let (ow, oh, oc, ot) =
            output_shape(ops, (opts.width, opts.height, 1), opts.format.sample());
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
}
