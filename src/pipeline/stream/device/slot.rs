//! A stream's device memory for one batch of frames: one allocation each
//! way, so that one transfer moves the whole batch. Frame by frame, every
//! frame's input and output is a sub-buffer of it, so each frame's kernels
//! see their own frame only; stacked (see `stack`), the frames lie one
//! after another and the batch's kernels see them all at once.

use super::super::{output_shape, StreamOptions};
use crate::backend::opencl::{ClEvent, DeviceBuffer, DeviceImage};
use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::raw::Depth;
use crate::image::SampleType;
use crate::ops::work::DeviceRaw;
use crate::pipeline::Op;

/// One frame's device output, typed by the pipeline's result.
pub(super) enum DevOut {
    U8(DeviceImage<u8>),
    U16(DeviceImage<u16>),
    F32(DeviceImage<f32>),
}

/// How a batch lies in memory: frame `j` starts `j * stride` bytes into
/// the batch's buffers (pinned and device), strides rounded up to the
/// device's sub-buffer alignment.
#[derive(Clone, Copy)]
pub(super) struct Strides {
    pub(super) batch: usize,
    pub(super) input: usize,
    pub(super) output: usize,
}

impl Strides {
    /// Bytes moved for the first `count` frames of a batch whose frames
    /// are `bytes` long, `stride` apart.
    pub(super) fn span(count: usize, stride: usize, bytes: usize) -> usize {
        (count - 1) * stride + bytes
    }
}

/// One batch's device memory, allocated once: one allocation each way, so
/// one transfer moves the batch.
pub(super) struct Slot {
    /// Each frame's input and output as a sub-buffer (none for stacked
    /// batches). Declared before the allocations they alias, so dropped
    /// first.
    pub(super) inputs: Vec<DeviceRaw>,
    pub(super) outputs: Vec<DevOut>,
    pub(super) whole_in: DeviceBuffer<u8>,
    pub(super) whole_out: DeviceBuffer<u8>,
    /// The last kernels that read the inputs / the last download of the
    /// outputs.
    pub(super) computed: Option<ClEvent>,
    pub(super) downloaded: Option<ClEvent>,
}

/// `frames` frames of input from byte `offset` of `whole`, one after
/// another, as one raw image `frames` frames tall, typed by the format.
pub(super) fn raw_view(
    whole: &DeviceBuffer<u8>,
    offset: usize,
    opts: &StreamOptions,
    in_bytes: usize,
    frames: usize,
) -> Result<DeviceRaw> {
    let (w, h) = (opts.width, opts.height * frames);
    let in_bytes = in_bytes * frames;
    Ok(match opts.format.depth {
        Depth::Bits8 => DeviceRaw::U8(DeviceImage::from_buffer(
            whole.sub(offset, w * h)?,
            w,
            h,
            1,
        )?),
        Depth::Bits16 { .. } => DeviceRaw::U16(DeviceImage::from_buffer(
            whole.sub(offset, w * h)?,
            w,
            h,
            1,
        )?),
        Depth::Packed12(packing) => DeviceRaw::Packed {
            bytes: whole.sub(offset, in_bytes)?,
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

/// `frames` result frames from byte `offset` of `whole`, one image
/// `frames` frames tall.
fn out_view(
    whole: &DeviceBuffer<u8>,
    offset: usize,
    out: &OutShape,
    frames: usize,
) -> Result<DevOut> {
    let (w, h, c) = (out.width, out.height * frames, out.channels);
    let n = w * h * c;
    Ok(match out.sample {
        SampleType::U8 => DevOut::U8(DeviceImage::from_buffer(whole.sub(offset, n)?, w, h, c)?),
        SampleType::U16 => DevOut::U16(DeviceImage::from_buffer(whole.sub(offset, n)?, w, h, c)?),
        SampleType::F32 => DevOut::F32(DeviceImage::from_buffer(whole.sub(offset, n)?, w, h, c)?),
    })
}

impl Slot {
    /// Allocates a batch's device memory, and its frames' views unless the
    /// batch runs `stacked`.
    pub(super) fn new(
        dev: &Dev,
        opts: &StreamOptions,
        in_bytes: usize,
        out: &OutShape,
        st: Strides,
        stacked: bool,
    ) -> Result<Self> {
        let whole_in = DeviceBuffer::new(dev, st.batch * st.input)?;
        let whole_out = DeviceBuffer::new(dev, st.batch * st.output)?;
        let views = if stacked { 0 } else { st.batch };
        let mut inputs = Vec::with_capacity(views);
        let mut outputs = Vec::with_capacity(views);
        for j in 0..views {
            inputs.push(raw_view(&whole_in, j * st.input, opts, in_bytes, 1)?);
            outputs.push(out_view(&whole_out, j * st.output, out, 1)?);
        }
        Ok(Slot {
            inputs,
            outputs,
            whole_in,
            whole_out,
            // Buffers may come from the pool, freed by kernels still
            // queued on the device: the first upload waits for them.
            computed: Some(dev.marker()?),
            downloaded: None,
        })
    }
}

impl Slot {
    /// The first `count` frames of a stacked batch, input and output, each
    /// one image `count` frames tall.
    pub(super) fn stacked(
        &self,
        count: usize,
        opts: &StreamOptions,
        in_bytes: usize,
        out: &OutShape,
    ) -> Result<(DeviceRaw, DevOut)> {
        Ok((
            raw_view(&self.whole_in, 0, opts, in_bytes, count)?,
            out_view(&self.whole_out, 0, out, count)?,
        ))
    }
}

/// The shape of the pipeline's result, the same for every frame.
#[derive(Clone, Copy)]
pub(super) struct OutShape {
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) channels: usize,
    pub(super) sample: SampleType,
    /// Bytes of one result frame.
    pub(super) bytes: usize,
}

impl OutShape {
    /// The result of `ops` on the frames of `opts`.
    pub(super) fn of(ops: &[Op], opts: &StreamOptions) -> Self {
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
