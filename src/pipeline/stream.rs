//! Streams of raw camera frames through a pipeline.
//!
//! [`run_stream`] reads headerless frames of one [`RawFormat`] from any
//! reader (a file, a pipe, stdin), runs the pipeline on each, and hands the
//! results to a [`FrameSink`] in order.
//!
//! On an OpenCL device the stream is double-buffered (more precisely,
//! `in_flight`-buffered) in batches of frames: a reader thread fills pinned
//! host buffers, each with a batch of frames one after another, the upload
//! of batch n+1 runs on one transfer queue while batch n's kernels run on
//! the device's queue and batch n-1's results come back on a second
//! transfer queue into pinned memory, which a writer thread hands to the
//! sink frame by frame. A batch is one upload and one download (its frames
//! lie in one device allocation). When every stage can, the batch runs
//! stacked: its frames lie one after another and each kernel is launched
//! once for the whole batch, stencil kernels filtering each frame on its
//! own (frames as the launch's third dimension); otherwise each frame lies
//! in a sub-buffer of its own and its kernels run on it alone. Either way
//! a frame's result does not depend on the batch it came in. Small frames are batched so that each
//! transfer moves a few megabytes ([`batch_size`]): per frame, the fixed
//! costs of transfers and of the host's hand-offs would otherwise bound the
//! rate. Device buffers are allocated once per slot, and the stages'
//! intermediates come from the device's buffer pool, so nothing is
//! allocated per frame after the first batch. If the device fails on a
//! batch, the reason is logged and that batch and the rest run on the host
//! path; the frames' bytes are kept until their results exist, so nothing
//! is lost.
//!
//! On the CPU backend the same pipeline runs on rayon, frame by frame, with
//! the reading done ahead on a thread.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Op;
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
    /// Batches in flight on a device (2 = classic double buffering; 3, the
    /// default, lets upload, kernels and download of three batches overlap).
    pub in_flight: usize,
    /// Frames per batch on a device (1..=[`MAX_BATCH`]); `None` chooses
    /// from the frame size ([`batch_size`]).
    pub batch: Option<usize>,
    /// Measure the transfer bound instead: upload every frame and download a
    /// result-sized buffer, with the same overlap, but run no kernels (the
    /// sink receives nothing).
    pub transfer_only: bool,
    /// The input's name in read errors (a path, or `stdin`).
    pub input_name: std::path::PathBuf,
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
            batch: None,
            transfer_only: false,
            input_name: "stdin".into(),
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
pub struct StreamTotals {
    /// Frames processed and handed to the sink.
    pub frames: usize,
    /// From the first read to the last result handed over.
    #[serde(serialize_with = "crate::ops::ser_ms")]
    pub elapsed: Duration,
    /// The first frame alone (kernel builds and allocations happen there);
    /// on a device, the first batch.
    #[serde(serialize_with = "crate::ops::ser_ms")]
    pub first_frame: Duration,
    /// Frames per second after the first frame (on a device, after the
    /// first batch); over all frames when there is only that one.
    pub fps: f64,
    /// Frames per batch (1 on the host path).
    pub batch: usize,
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
    /// Whether each batch ran stacked: its frames one after another in
    /// device memory and each kernel launched once for the whole batch
    /// (false: frame by frame, the host path, or batches of one frame).
    pub stacked: bool,
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
    /// Frames handed over at the first tick (a batch comes at once).
    first_frames: usize,
    frames: usize,
}

impl Clock {
    fn new() -> Self {
        Clock {
            start: Instant::now(),
            first_done: None,
            first_frames: 0,
            frames: 0,
        }
    }

    /// `n` more frames handed over.
    fn tick(&mut self, n: usize) {
        self.frames += n;
        if self.first_done.is_none() {
            self.first_done = Some(Instant::now());
            self.first_frames = n;
        }
    }

    /// (elapsed, first tick, fps over the frames after the first tick)
    fn finish(&self) -> (Duration, Duration, f64) {
        let elapsed = self.start.elapsed();
        let first = self
            .first_done
            .map_or(elapsed, |t| t.duration_since(self.start));
        let fps = if self.frames > self.first_frames {
            (self.frames - self.first_frames) as f64 / (elapsed - first).as_secs_f64().max(1e-9)
        } else {
            self.frames as f64 / elapsed.as_secs_f64().max(1e-9)
        };
        (elapsed, first, fps)
    }
}

/// A batch read ahead by the reader thread (its first frame's index, its
/// frame count and the buffer), or why reading stopped.
enum Read_<B> {
    Frames(usize, usize, B),
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

/// How frames lie in a buffer: `batch` of them, `stride` bytes apart, each
/// `in_bytes` long.
#[derive(Clone, Copy)]
struct Layout {
    batch: usize,
    stride: usize,
    in_bytes: usize,
}

/// Fills buffers handed over by `free` with batches of frames from
/// `source`, sending them on `full` (a batch cut short by the end of the
/// input goes out before the end). `buffers` is how many distinct buffers
/// circulate (a synthetic source fills each once: the first `buffers`
/// batches).
fn reader_loop<R: Read, B>(
    source: Source<R>,
    layout: Layout,
    opts: &StreamOptions,
    buffers: usize,
    free: mpsc::Receiver<B>,
    full: mpsc::SyncSender<Read_<B>>,
    mut bytes: impl FnMut(&mut B) -> Result<&mut [u8]>,
) {
    let Layout {
        batch,
        stride,
        in_bytes,
    } = layout;
    let (mut reader, synthetic) = match source {
        Source::Reader(r) => (
            Some(FrameReader::new(r, in_bytes, opts.skip).with_path(&opts.input_name)),
            None,
        ),
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
        let mut count = 0;
        let mut stop = None;
        match bytes(&mut buf) {
            Err(e) => stop = Some(Err(e)),
            Ok(b) => {
                while count < batch && frames.is_none_or(|n| index + count < n) {
                    let f = &mut b[count * stride..count * stride + in_bytes];
                    let got = match &mut reader {
                        Some(r) => r.read_into(f),
                        None => {
                            if index < buffers * batch {
                                fill_random(f, (index + count) as u64);
                            }
                            Ok(true)
                        }
                    };
                    match got {
                        Ok(true) => count += 1,
                        Ok(false) => stop = Some(Ok(())),
                        Err(e) => stop = Some(Err(e)),
                    }
                    if stop.is_some() {
                        break;
                    }
                }
            }
        }
        if count > 0 {
            if full.send(Read_::Frames(index, count, buf)).is_err() {
                return;
            }
            index += count;
        }
        if let Some(end) = stop {
            break end;
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
) -> Result<StreamTotals> {
    run_source(engine, ops, opts, Source::Reader(input), sink)
}

/// [`run_stream`] from any [`Source`], synthetic frames included.
pub fn run_source<R: Read + Send>(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    input: Source<R>,
    sink: &mut dyn FrameSink,
) -> Result<StreamTotals> {
    let (w, h) = (opts.width, opts.height);
    let in_bytes = opts.format.frame_bytes(w, h)?;
    if !(2..=8).contains(&opts.in_flight) {
        return Err(Error::arg(format!(
            "batches in flight must be 2..8, got {}",
            opts.in_flight
        )));
    }
    let batch = batch_size(opts.batch, in_bytes)?;
    check_stages(ops)?;
    let raw_reader = ops.iter().find(|o| o.stage.reads_raw());
    if let (None, Some(op)) = (opts.format.pattern, raw_reader) {
        return Err(Error::arg(format!(
            "format {} is mono: its frames have no colour filter array to {}",
            opts.format,
            op.name()
        )));
    }
    // Big-endian and RAW10 frames are decoded on the host, frame by frame;
    // the overlapped device path uploads the bytes as they are.
    if let Some(dev) = engine.backend().device() {
        if opts.format.depth.device_reads_bytes() {
            return device::run(engine, dev, ops, opts, (in_bytes, batch), input, sink);
        }
        if opts.transfer_only {
            return Err(Error::arg(format!(
                "the transfer bound is measured on frames uploaded as they are; {} frames \
                 are decoded on the host",
                opts.format
            )));
        }
    }
    if opts.transfer_only {
        return Err(Error::arg(
            "the transfer bound is measured on an OpenCL device; the engine runs on the CPU",
        ));
    }
    host_run(engine, ops, opts, in_bytes, input, sink)
}

/// Refuses stages that a stream cannot run: one that reports on its input
/// (`minmax`, `stats`). A stream hands its sink frames, not stage records,
/// so the numbers would be computed and lost (and, on a stacked batch,
/// taken over several frames at once).
pub fn check_stages(ops: &[Op]) -> Result<()> {
    match ops.iter().find(|o| o.stage.reports()) {
        Some(op) => Err(Error::arg(format!(
            "{} reports on one image, and a stream keeps no per-frame reports; run it on a \
             frame with `filterctl apply --size WxH --format FMT FRAME -f ...`",
            op.name()
        ))),
        None => Ok(()),
    }
}

/// Bytes one batch's upload aims for: below a few megabytes, the fixed
/// costs of each transfer and of the host's work per batch weigh on the rate
/// (docs/PERFORMANCE.md, "Camera streams").
pub const BATCH_TARGET_BYTES: usize = 4 << 20;

/// The most frames the automatic choice puts in a batch.
pub const AUTO_BATCH_MAX: usize = 16;

/// The most frames a batch may hold.
pub const MAX_BATCH: usize = 64;

/// Frames per batch on a device for frames of `in_bytes`: `chosen` if given
/// (1..=[`MAX_BATCH`]), else enough frames for [`BATCH_TARGET_BYTES`] per
/// upload, at most [`AUTO_BATCH_MAX`] (1 for frames of that size or more).
pub fn batch_size(chosen: Option<usize>, in_bytes: usize) -> Result<usize> {
    match chosen {
        Some(b) if (1..=MAX_BATCH).contains(&b) => Ok(b),
        Some(b) => Err(Error::arg(format!(
            "frames per batch must be 1..{MAX_BATCH}, got {b}"
        ))),
        None => Ok(BATCH_TARGET_BYTES
            .div_ceil(in_bytes.max(1))
            .clamp(1, AUTO_BATCH_MAX)),
    }
}

/// Runs one frame's bytes through the host path
/// ([`super::run_frame_on_host`]).
fn host_pipeline(
    engine: &Engine,
    ops: &[Op],
    opts: &StreamOptions,
    bytes: &[u8],
) -> Result<(DynImage, Vec<super::StageOutcome>)> {
    let frame = opts.format.decode(bytes, opts.width, opts.height)?;
    super::run_frame_on_host(engine, ops, frame)
}

/// Each stage with the variants it ran (`gaussian=sigma=2 (fir_local)`).
fn stage_names(outcomes: &[super::StageOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| {
            let v: Vec<&str> = o.reports.iter().map(|r| r.variant.as_str()).collect();
            // A stage that runs no operation (a type conversion) has no
            // variant to name.
            if v.is_empty() {
                o.op.to_string()
            } else {
                format!("{} ({})", o.op, v.join(", "))
            }
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
) -> Result<StreamTotals> {
    let (out_w, out_h, out_c, out_t) =
        output_shape(ops, (opts.width, opts.height, 1), opts.format.sample());
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    let (full_tx, full_rx) = mpsc::sync_channel::<Read_<Vec<u8>>>(2);
    for _ in 0..2 {
        free_tx
            .send(crate::simd::mem::try_zeroed::<u8>(in_bytes)?)
            .expect("the receiver is alive");
    }
    let mut clock = Clock::new();
    let mut stages = Vec::new();
    let end = std::thread::scope(|s| {
        // Owned here, so an early return drops them and the reader, blocked
        // on one of them, ends before the scope joins it.
        let (free_tx, full_rx) = (free_tx, full_rx);
        s.spawn(move || {
            let layout = Layout {
                batch: 1,
                stride: in_bytes,
                in_bytes,
            };
            reader_loop(input, layout, opts, 2, free_rx, full_tx, |b| Ok(&mut b[..]))
        });
        loop {
            match full_rx.recv() {
                // Batches of one frame (the layout above).
                Ok(Read_::Frames(i, n, buf)) => {
                    for (j, frame) in buf.chunks_exact(in_bytes).take(n).enumerate() {
                        let st = host_frame(engine, ops, opts, i + j, frame, sink)?;
                        if stages.is_empty() {
                            stages = st;
                        }
                        clock.tick(1);
                    }
                    let _ = free_tx.send(buf);
                }
                Ok(Read_::End(r)) => return r,
                Err(_) => return Err(Error::arg("the frame reader stopped unexpectedly")),
            }
        }
    });
    end?;
    let (elapsed, first_frame, fps) = clock.finish();
    Ok(StreamTotals {
        frames: clock.frames,
        elapsed,
        first_frame,
        fps,
        batch: 1,
        in_bytes,
        out_bytes: out_w * out_h * out_c * out_t.size(),
        backend: engine.backend().describe(),
        overlapped: false,
        stages,
        host_fallback_frames: 0,
        stacked: false,
    })
}

mod device;
