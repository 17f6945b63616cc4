//! The device path of streams: frames overlapped on the device.

#[cfg(feature = "opencl")]
pub(super) use cl::run;

#[cfg(feature = "opencl")]
mod slot;
#[cfg(feature = "opencl")]
mod stack;

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<R: std::io::Read + Send>(
    _: &crate::engine::Engine,
    dev: &crate::backend::Dev,
    _: &[crate::pipeline::Op],
    _: &super::StreamOptions,
    _: (usize, usize),
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
        host_pipeline, reader_loop, Clock, FrameSink, Layout, OutFrame, Read_, Source,
        StreamOptions, StreamTotals,
    };
    use super::slot::{DevOut, OutShape, Slot, Strides};
    use super::stack::{probe, Probe};
    use crate::backend::opencl::{untimed, ClEvent, HostStage, TransferQueue};
    use crate::backend::Dev;
    use crate::engine::Engine;
    use crate::error::{Error, Result};
    use crate::image::DynImage;
    use crate::ops::work::{store_into, DeviceRaw};
    use crate::pipeline::device::{run_chain, ChainStart};
    use crate::pipeline::Op;

    /// A batch whose upload has been started (`up` is `None` when it runs
    /// on the host path).
    struct Staged {
        /// The first frame's index.
        index: usize,
        count: usize,
        stage: HostStage,
        slot: usize,
        up: Option<ClEvent>,
    }

    /// What the writer thread receives, in frame order.
    enum Done {
        /// `count` results from frame `index` on, in pinned memory (once
        /// their download has finished).
        Pinned(usize, usize, HostStage),
        /// A result computed on the host path after a device failure.
        Host(usize, DynImage),
    }

    /// A channel of free pinned buffers: its sending and receiving ends.
    type Pool = (mpsc::Sender<HostStage>, mpsc::Receiver<HostStage>);

    /// Frames on the device, in batches of `batch`: see the module docs of
    /// `stream`.
    pub(crate) fn run<R: Read + Send>(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        opts: &StreamOptions,
        (in_bytes, batch): (usize, usize),
        input: Source<R>,
        sink: &mut dyn FrameSink,
    ) -> Result<StreamTotals> {
        // The first batch's time includes the blank frame's kernel builds.
        let mut clock = Clock::new();
        let k = opts.in_flight;
        let out = OutShape::of(ops, opts);
        let probe = stacking(engine, dev, ops, opts, (in_bytes, batch));
        // Stacked frames lie one after another; frames by themselves each
        // start at the sub-buffer alignment.
        let align = match probe.as_ref().and_then(|p| p.stacked.as_ref()) {
            Some(_) => 1,
            None => dev.sub_buffer_align(),
        };
        let st = Strides {
            batch,
            input: in_bytes.next_multiple_of(align),
            output: out.bytes.next_multiple_of(align),
        };
        let mut feed = Feed::new(engine, dev, ops, opts, (in_bytes, out), st, probe)?;
        let ((in_free_tx, in_free_rx), (out_free_tx, out_free_rx)) = feed.pinned()?;
        let (full_tx, full_rx) = mpsc::sync_channel::<Read_<HostStage>>(k);
        let (done_tx, done_rx) = mpsc::sync_channel::<Done>(k * batch);
        let transfer_only = opts.transfer_only;
        let layout = Layout {
            batch,
            stride: st.input,
            in_bytes,
        };

        let outcome: Result<()> = std::thread::scope(|s| {
            // Owned here, so an early return (a sink or host-path error)
            // drops them and unblocks the reader before the scope joins it.
            let (full_rx, in_free_tx) = (full_rx, in_free_tx);
            s.spawn(move || {
                reader_loop(
                    input,
                    layout,
                    opts,
                    k + 1,
                    in_free_rx,
                    full_tx,
                    |b: &mut HostStage| b.bytes_mut(),
                )
            });
            let clock = &mut clock;
            let writer = s.spawn(move || {
                let w = Writer {
                    out,
                    stride: st.output,
                    transfer_only,
                };
                w.run(done_rx, sink, clock, out_free_tx)
            });
            let queues = Queues {
                full: &full_rx,
                in_free: &in_free_tx,
                out_free: &out_free_rx,
                done: &done_tx,
            };
            let run = feed.run_batches(&queues);
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
        Ok(feed.totals(&clock))
    }

    /// The blank frame's run ([`probe`]) for batches of more than one
    /// frame that run kernels; `None` otherwise, or when the run failed
    /// (the stream then runs frame by frame, and meets the failure there).
    fn stacking(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        opts: &StreamOptions,
        (in_bytes, batch): (usize, usize),
    ) -> Option<Probe> {
        if batch == 1 || opts.transfer_only {
            return None;
        }
        probe(engine, dev, ops, opts, in_bytes)
            .inspect_err(|e| log::debug!("the stream runs frame by frame: {e}"))
            .ok()
    }

    /// How the writer cuts a batch's pinned results into frames.
    struct Writer {
        out: OutShape,
        /// Bytes from one result frame's start to the next's.
        stride: usize,
        transfer_only: bool,
    }

    impl Writer {
        /// Waits for each download, hands the frames over and returns the
        /// pinned buffer. Host-path frames come with their bytes.
        fn run(
            &self,
            done_rx: mpsc::Receiver<Done>,
            sink: &mut dyn FrameSink,
            clock: &mut Clock,
            out_free_tx: mpsc::Sender<HostStage>,
        ) -> Result<()> {
            let out = &self.out;
            for done in done_rx {
                match done {
                    Done::Pinned(index, count, mut stage) => {
                        let bytes = stage.bytes()?;
                        // A transfer bound hands nothing over.
                        let frames = if self.transfer_only { 0 } else { count };
                        for j in 0..frames {
                            let at = j * self.stride;
                            sink.frame(&OutFrame {
                                index: index + j,
                                width: out.width,
                                height: out.height,
                                channels: out.channels,
                                sample: out.sample,
                                bytes: &bytes[at..at + out.bytes],
                            })?;
                        }
                        clock.tick(count);
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
                        clock.tick(1);
                    }
                }
            }
            Ok(())
        }
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
    /// downloads, batch by batch, and the host path once the device failed.
    struct Feed<'a> {
        engine: &'a Engine,
        dev: &'a Dev,
        ops: &'a [Op],
        opts: &'a StreamOptions,
        in_bytes: usize,
        out: OutShape,
        st: Strides,
        /// The chain with its variants forced, when batches run stacked
        /// (see `stack`).
        stacked: Option<Vec<Op>>,
        /// One per batch in flight; batch `n` (in staging order) uses slot
        /// `n % in_flight`. (Declared before the queues, so it is dropped
        /// first, as when they were locals.)
        slots: Vec<Slot>,
        down: TransferQueue,
        up: TransferQueue,
        /// Batches staged so far.
        n: usize,
        /// Set by the first device failure: that batch and the rest run on
        /// the host path.
        on_host: bool,
        /// The stages' reports of the first device frame, once it ran.
        stages: Option<Vec<String>>,
        fallback_frames: usize,
    }

    impl<'a> Feed<'a> {
        /// The stream's totals once every batch is written.
        fn totals(self, clock: &Clock) -> StreamTotals {
            let (elapsed, first_frame, fps) = clock.finish();
            StreamTotals {
                frames: clock.frames,
                elapsed,
                first_frame,
                fps,
                batch: self.st.batch,
                in_bytes: self.in_bytes,
                out_bytes: self.out.bytes,
                backend: self.engine.backend().describe(),
                overlapped: true,
                stages: self.stages.unwrap_or_default(),
                host_fallback_frames: self.fallback_frames,
                stacked: self.stacked.is_some(),
            }
        }

        /// The transfer queues and one slot per batch in flight.
        fn new(
            engine: &'a Engine,
            dev: &'a Dev,
            ops: &'a [Op],
            opts: &'a StreamOptions,
            (in_bytes, out): (usize, OutShape),
            st: Strides,
            probe: Option<Probe>,
        ) -> Result<Self> {
            let up = dev.transfer_queue()?;
            let down = dev.transfer_queue()?;
            let (stages, stacked) = match probe {
                Some(p) => (Some(p.stages), p.stacked),
                None => (None, None),
            };
            let slots = (0..opts.in_flight)
                .map(|_| Slot::new(dev, opts, in_bytes, &out, st, stacked.is_some()))
                .collect::<Result<_>>()?;
            Ok(Feed {
                engine,
                dev,
                ops,
                opts,
                in_bytes,
                out,
                st,
                stacked,
                slots,
                down,
                up,
                n: 0,
                on_host: false,
                stages,
                fallback_frames: 0,
            })
        }

        /// The free pinned buffers for uploads and downloads, a batch each:
        /// one more each way than slots, so the reader and the writer always
        /// have one to work on.
        fn pinned(&self) -> Result<(Pool, Pool)> {
            let (in_free_tx, in_free_rx) = mpsc::channel::<HostStage>();
            let (out_free_tx, out_free_rx) = mpsc::channel::<HostStage>();
            let st = self.st;
            for _ in 0..=self.opts.in_flight {
                in_free_tx
                    .send(self.up.stage(self.dev, st.batch * st.input)?)
                    .expect("the receiver is alive");
                out_free_tx
                    .send(self.down.stage(self.dev, st.batch * st.output)?)
                    .expect("the receiver is alive");
            }
            Ok(((in_free_tx, in_free_rx), (out_free_tx, out_free_rx)))
        }

        /// Runs every batch the reader sends, until its end (returned) or an
        /// error.
        fn run_batches(&mut self, q: &Queues<'_>) -> Result<()> {
            let mut next: Option<Staged> = None;
            let mut end: Option<Result<()>> = None;
            loop {
                let cur = match next.take() {
                    Some(c) => c,
                    None => match end.take() {
                        Some(r) => return r,
                        None => match receive(q.full) {
                            Read_::Frames(i, n, b) => self.stage_batch(i, n, b),
                            Read_::End(r) => return r,
                        },
                    },
                };
                // The next batch's upload goes in before this batch's
                // kernels, so the two overlap (the kernels below block
                // this thread until they are queued).
                if end.is_none() {
                    match receive(q.full) {
                        Read_::Frames(i, n, b) => next = Some(self.stage_batch(i, n, b)),
                        Read_::End(r) => end = Some(r),
                    }
                }
                self.finish_batch(cur, q)?;
            }
        }

        /// Starts a batch's upload into its slot (none once on the host
        /// path).
        fn stage_batch(&mut self, index: usize, count: usize, mut stage: HostStage) -> Staged {
            let slot = self.n % self.opts.in_flight;
            self.n += 1;
            let mut up_ev = None;
            if !self.on_host {
                let s = &self.slots[slot];
                let prev: Vec<&ClEvent> = s.computed.iter().collect();
                let n = Strides::span(count, self.st.input, self.in_bytes);
                match self.up.upload(&mut stage, &s.whole_in, n, &prev) {
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
                count,
                stage,
                slot,
                up: up_ev,
            }
        }

        /// Runs a staged batch on the device (its download started), or on
        /// the host path, and sends it to the writer.
        fn finish_batch(&mut self, cur: Staged, q: &Queues<'_>) -> Result<()> {
            let Staged {
                index,
                count,
                mut stage,
                slot,
                up: up_ev,
            } = cur;
            if let (false, Some(up_ev)) = (self.on_host, up_ev) {
                match self.device_batch(slot, count, &up_ev, q.out_free) {
                    Ok(None) => return Err(Error::arg("the frame writer stopped")),
                    Ok(Some(out_stage)) => {
                        let _ = q.in_free.send(stage);
                        return q
                            .done
                            .send(Done::Pinned(index, count, out_stage))
                            .map_err(|_| Error::arg("the frame writer stopped"));
                    }
                    // The host path would refuse the frame too.
                    Err(e @ Error::NonFinite { .. }) => return Err(e),
                    Err(e) => {
                        log::warn!(
                            "frames {index}..{} failed on {}: {e}; they and the rest run on the host path",
                            index + count,
                            self.dev.info().name
                        );
                        self.on_host = true;
                    }
                }
            }
            // Host path: the frames' bytes are still in `stage`.
            self.fallback_frames += count;
            let result = (0..count).try_for_each(|j| {
                let at = j * self.st.input;
                let bytes = &stage.bytes()?[at..at + self.in_bytes];
                let (img, _) = host_pipeline(self.engine, self.ops, self.opts, bytes)?;
                q.done
                    .send(Done::Host(index + j, img))
                    .map_err(|_| Error::arg("the frame writer stopped"))
            });
            let _ = q.in_free.send(stage);
            result
        }

        /// Runs the chain on each frame of a slot whose upload `up_ev` is
        /// under way, and starts the download of the results; `None` when
        /// the writer has stopped.
        fn device_batch(
            &mut self,
            slot: usize,
            count: usize,
            up_ev: &ClEvent,
            out_free: &mpsc::Receiver<HostStage>,
        ) -> Result<Option<HostStage>> {
            let (engine, dev, ops) = (self.engine, self.dev, self.ops);
            let slot = &mut self.slots[slot];
            // The kernels wait for the upload, and for the last download of
            // the slot's outputs, which they overwrite.
            let mut wait = vec![up_ev];
            wait.extend(slot.downloaded.iter());
            dev.barrier(&wait)?;
            if let (false, Some(stacked)) = (self.opts.transfer_only, &self.stacked) {
                // One chain for the batch, its kernels queued unwaited.
                let (input, output) = slot.stacked(count, self.opts, self.in_bytes, &self.out)?;
                untimed(|| chain(engine, dev, stacked, (&input, count), &output))?;
            } else if !self.opts.transfer_only {
                for (input, output) in slot.inputs.iter().zip(&slot.outputs).take(count) {
                    let run = || chain(engine, dev, ops, (input, 1), output);
                    // The first frame is timed (its report names the
                    // variants); after it the kernels are queued without
                    // waiting for each.
                    if self.stages.is_none() {
                        self.stages = Some(super::super::stage_names(&run()?));
                    } else {
                        untimed(run)?;
                    }
                }
            }
            let done = dev.marker()?;
            // The writer returns no buffer once it has stopped (the sink
            // failed): not a device fault, and its own error explains the end.
            let Ok(mut out_stage) = out_free.recv() else {
                return Ok(None);
            };
            let n = Strides::span(count, self.st.output, self.out.bytes);
            let down_ev = self
                .down
                .download(&slot.whole_out, &mut out_stage, n, &[&done])?;
            slot.computed = Some(done);
            slot.downloaded = Some(down_ev);
            Ok(Some(out_stage))
        }
    }

    /// Runs `ops` on `input` (`frames` frames stacked, or 1) and stores the
    /// result into `output`; what each stage did.
    fn chain(
        engine: &Engine,
        dev: &Dev,
        ops: &[Op],
        (input, frames): (&DeviceRaw, usize),
        output: &DevOut,
    ) -> Result<Vec<crate::pipeline::StageOutcome>> {
        let (work, outcomes) = run_chain(engine, dev, ops, ChainStart::Raw(input), frames)?;
        match output {
            DevOut::U8(o) => store_into(engine.programs(), dev, &work, o)?,
            DevOut::U16(o) => store_into(engine.programs(), dev, &work, o)?,
            DevOut::F32(o) => store_into(engine.programs(), dev, &work, o)?,
        };
        Ok(outcomes)
    }
}
