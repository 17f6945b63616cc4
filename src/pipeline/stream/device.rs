//! The device path of streams: frames overlapped on the device.

#[cfg(feature = "opencl")]
pub(super) use cl::run;

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<R: std::io::Read + Send>(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &[crate::pipeline::Op],
    _: &super::StreamOptions,
    _: usize,
    _: super::Source<R>,
    _: &mut dyn super::FrameSink,
) -> crate::error::Result<super::StreamTotals> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use std::io::Read;
    use std::sync::mpsc;

    use super::super::{
        host_pipeline, output_shape, reader_loop, Clock, FrameSink, OutFrame, Read_, Source,
        StreamOptions, StreamTotals,
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
    use crate::pipeline::device::{run_chain, ChainStart};
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
            // run_source decodes these on the host.
            Depth::Bits16Be { .. } | Depth::Mipi10 => {
                return Err(Error::arg(format!(
                    "{} frames are decoded on the host, not uploaded as bytes",
                    opts.format
                )))
            }
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

    /// The shape of the pipeline's result, the same for every frame.
    #[derive(Clone, Copy)]
    struct OutShape {
        width: usize,
        height: usize,
        channels: usize,
        sample: SampleType,
        /// Bytes of one result frame.
        bytes: usize,
    }

    impl OutShape {
        /// The result of `ops` on the frames of `opts`.
        fn of(ops: &[Op], opts: &StreamOptions) -> Self {
            let (width, height, channels, sample) =
                output_shape(ops, (opts.width, opts.height, 1), opts.format.sample());
            OutShape {
                width,
                height,
                channels,
                sample,
                bytes: width * height * channels * sample.size(),
            }
        }
    }

    /// A channel of free pinned buffers: its sending and receiving ends.
    type Pool = (mpsc::Sender<HostStage>, mpsc::Receiver<HostStage>);

    /// Frames on the device: see the module docs of `stream`.
    pub(crate) fn run<R: Read + Send>(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        opts: &StreamOptions,
        in_bytes: usize,
        input: Source<R>,
        sink: &mut dyn FrameSink,
    ) -> Result<StreamTotals> {
        let k = opts.in_flight;
        let out = OutShape::of(ops, opts);
        let mut feed = Feed::new(engine, dev, ops, opts, in_bytes, &out)?;
        let ((in_free_tx, in_free_rx), (out_free_tx, out_free_rx)) =
            feed.pinned(in_bytes, out.bytes)?;
        let (full_tx, full_rx) = mpsc::sync_channel::<Read_<HostStage>>(k);
        let (done_tx, done_rx) = mpsc::sync_channel::<Done>(k);
        let transfer_only = opts.transfer_only;
        let mut clock = Clock::new();

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
            let writer = s
                .spawn(move || write_frames(done_rx, sink, out, transfer_only, clock, out_free_tx));
            let queues = Queues {
                full: &full_rx,
                in_free: &in_free_tx,
                out_free: &out_free_rx,
                done: &done_tx,
            };
            let run = feed.run_frames(&queues);
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
        Ok(StreamTotals {
            frames: clock.frames,
            elapsed,
            first_frame,
            fps,
            in_bytes,
            out_bytes: out.bytes,
            backend: engine.backend().describe(),
            overlapped: true,
            stages: feed.stages,
            host_fallback_frames: feed.fallback_frames,
        })
    }

    /// The writer: waits for each download, hands the frame over and returns
    /// the pinned buffer. Host-path frames come with their bytes.
    fn write_frames(
        done_rx: mpsc::Receiver<Done>,
        sink: &mut dyn FrameSink,
        out: OutShape,
        transfer_only: bool,
        clock: &mut Clock,
        out_free_tx: mpsc::Sender<HostStage>,
    ) -> Result<()> {
        for done in done_rx {
            match done {
                Done::Pinned(index, mut stage) => {
                    if !transfer_only {
                        let bytes = stage.bytes()?;
                        sink.frame(&OutFrame {
                            index,
                            width: out.width,
                            height: out.height,
                            channels: out.channels,
                            sample: out.sample,
                            bytes: &bytes[..out.bytes],
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
    }

    /// The channels the compute loop talks through.
    struct Queues<'a> {
        /// Frames read into pinned buffers, in order, then the end.
        full: &'a mpsc::Receiver<Read_<HostStage>>,
        /// Input pinned buffers going back to the reader.
        in_free: &'a mpsc::Sender<HostStage>,
        /// Output pinned buffers coming back from the writer.
        out_free: &'a mpsc::Receiver<HostStage>,
        /// Results going to the writer, in frame order.
        done: &'a mpsc::SyncSender<Done>,
    }

    /// The next message from the reader; a reader gone without its end
    /// message is an error end.
    fn receive(full: &mpsc::Receiver<Read_<HostStage>>) -> Read_<HostStage> {
        full.recv().unwrap_or_else(|_| {
            Read_::End(Err(Error::arg("the frame reader stopped unexpectedly")))
        })
    }

    /// The compute side of the stream (this thread): uploads, kernels and
    /// downloads, frame by frame, and the host path once the device failed.
    struct Feed<'a> {
        engine: &'a Engine,
        dev: &'a Dev,
        ops: &'a [Op],
        opts: &'a StreamOptions,
        /// One per frame in flight; frame `n` (in staging order) uses slot
        /// `n % in_flight`. (Declared before the queues, so it is dropped
        /// first, as when they were locals.)
        slots: Vec<Slot>,
        down: TransferQueue,
        up: TransferQueue,
        /// Frames staged so far.
        n: usize,
        /// Set by the first device failure: that frame and the rest run on the
        /// host path.
        on_host: bool,
        /// The stages' reports of the first device frame.
        stages: Vec<String>,
        fallback_frames: usize,
    }

    impl<'a> Feed<'a> {
        /// The transfer queues and one slot per frame in flight.
        fn new(
            engine: &'a Engine,
            dev: &'a Dev,
            ops: &'a [Op],
            opts: &'a StreamOptions,
            in_bytes: usize,
            out: &OutShape,
        ) -> Result<Self> {
            let up = dev.transfer_queue()?;
            let down = dev.transfer_queue()?;
            let (ow, oh, oc) = (out.width, out.height, out.channels);
            let mut slots = Vec::with_capacity(opts.in_flight);
            for _ in 0..opts.in_flight {
                let output = match out.sample {
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
            Ok(Feed {
                engine,
                dev,
                ops,
                opts,
                slots,
                down,
                up,
                n: 0,
                on_host: false,
                stages: Vec::new(),
                fallback_frames: 0,
            })
        }

        /// The free pinned buffers for uploads (`in_bytes` each) and downloads
        /// (`out_bytes` each): one more each way than slots, so the reader and
        /// the writer always have one to work on.
        fn pinned(&self, in_bytes: usize, out_bytes: usize) -> Result<(Pool, Pool)> {
            let (in_free_tx, in_free_rx) = mpsc::channel::<HostStage>();
            let (out_free_tx, out_free_rx) = mpsc::channel::<HostStage>();
            for _ in 0..=self.opts.in_flight {
                in_free_tx
                    .send(self.up.stage(self.dev, in_bytes)?)
                    .expect("the receiver is alive");
                out_free_tx
                    .send(self.down.stage(self.dev, out_bytes)?)
                    .expect("the receiver is alive");
            }
            Ok(((in_free_tx, in_free_rx), (out_free_tx, out_free_rx)))
        }

        /// Runs every frame the reader sends, until its end (returned) or an
        /// error.
        fn run_frames(&mut self, q: &Queues<'_>) -> Result<()> {
            let mut next: Option<Staged> = None;
            let mut end: Option<Result<()>> = None;
            loop {
                let cur = match next.take() {
                    Some(c) => c,
                    None => match end.take() {
                        Some(r) => return r,
                        None => match receive(q.full) {
                            Read_::Frame(i, b) => self.stage_frame(i, b),
                            Read_::End(r) => return r,
                        },
                    },
                };
                // The next frame's upload goes in before this frame's
                // kernels, so the two overlap (the kernels below block
                // this thread until they finish).
                if end.is_none() {
                    match receive(q.full) {
                        Read_::Frame(i, b) => next = Some(self.stage_frame(i, b)),
                        Read_::End(r) => end = Some(r),
                    }
                }
                self.finish_frame(cur, q)?;
            }
        }

        /// Starts a frame's upload into its slot (none once on the host path).
        fn stage_frame(&mut self, index: usize, mut stage: HostStage) -> Staged {
            let slot = self.n % self.opts.in_flight;
            self.n += 1;
            let mut up_ev = None;
            if !self.on_host {
                let s = &self.slots[slot];
                let prev: Vec<&ClEvent> = s.computed.iter().collect();
                match upload(&self.up, &mut stage, &s.input, &prev) {
                    Ok(ev) => up_ev = Some(ev),
                    Err(e) => {
                        log::warn!(
                            "uploading frame {index} to {} failed: {e}; this frame and the rest run on the host path",
                            self.dev.info().name
                        );
                        self.on_host = true;
                    }
                }
            }
            Staged {
                index,
                stage,
                slot,
                up: up_ev,
            }
        }

        /// Runs a staged frame on the device (its download started), or on the
        /// host path, and sends it to the writer.
        fn finish_frame(&mut self, cur: Staged, q: &Queues<'_>) -> Result<()> {
            let Staged {
                index,
                mut stage,
                slot,
                up: up_ev,
            } = cur;
            if let (false, Some(up_ev)) = (self.on_host, up_ev) {
                match device_frame(
                    self.engine,
                    self.dev,
                    self.ops,
                    &self.down,
                    &mut self.slots[slot],
                    &up_ev,
                    self.opts.transfer_only,
                    self.stages.is_empty(),
                    q.out_free,
                ) {
                    Ok(None) => return Err(Error::arg("the frame writer stopped")),
                    Ok(Some((out_stage, names))) => {
                        if self.stages.is_empty() {
                            self.stages = names;
                        }
                        let _ = q.in_free.send(stage);
                        return q
                            .done
                            .send(Done::Pinned(index, out_stage))
                            .map_err(|_| Error::arg("the frame writer stopped"));
                    }
                    // The host path would refuse the frame too.
                    Err(e @ Error::NonFinite { .. }) => return Err(e),
                    Err(e) => {
                        log::warn!(
                            "frame {index} failed on {}: {e}; this frame and the rest run on the host path",
                            self.dev.info().name
                        );
                        self.on_host = true;
                    }
                }
            }
            // Host path: the frame's bytes are still in `stage`.
            self.fallback_frames += 1;
            let result = host_pipeline(self.engine, self.ops, self.opts, stage.bytes()?);
            let _ = q.in_free.send(stage);
            let (img, _) = result?;
            q.done
                .send(Done::Host(index, img))
                .map_err(|_| Error::arg("the frame writer stopped"))
        }
    }

    /// Runs the chain on a slot whose upload `up_ev` is under way, and
    /// starts the download of its result; `None` when the writer has stopped.
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
    ) -> Result<Option<(HostStage, Vec<String>)>> {
        // The kernels wait for the upload, and for the last download of the
        // slot's output, which they overwrite.
        let mut wait = vec![up_ev];
        wait.extend(slot.downloaded.iter());
        dev.barrier(&wait)?;
        let mut names = Vec::new();
        if !transfer_only {
            let chain = || -> Result<_> {
                let (work, outcomes) = run_chain(engine, dev, ops, ChainStart::Raw(&slot.input))?;
                match &slot.output {
                    DevOut::U8(o) => store_into(engine.programs(), dev, &work, o)?,
                    DevOut::U16(o) => store_into(engine.programs(), dev, &work, o)?,
                    DevOut::F32(o) => store_into(engine.programs(), dev, &work, o)?,
                };
                Ok(outcomes)
            };
            // The first frame is timed (its report names the variants);
            // after it the kernels are queued without waiting for each.
            let outcomes = if first { chain()? } else { untimed(chain)? };
            names = super::super::stage_names(&outcomes);
        }
        let done = dev.marker()?;
        // The writer returns no buffer once it has stopped (the sink failed):
        // not a device fault, and its own error explains the end.
        let Ok(mut out_stage) = out_free.recv() else {
            return Ok(None);
        };
        let down_ev = download(down, &slot.output, &mut out_stage, &[&done])?;
        slot.computed = Some(done);
        slot.downloaded = Some(down_ev);
        Ok(Some((out_stage, names)))
    }
}
