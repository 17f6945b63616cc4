//! Stacked batches: a batch's frames lie one after another in its device
//! buffers, and the chain runs once on the whole batch, one launch per
//! kernel, as an image of `batch` frames one below the other
//! ([`crate::ops::work::Chain::frames`]). Pointwise kernels see one tall
//! image; stencil stages (demosaic, the FIR Gaussian) filter each frame on
//! its own, so every frame comes out byte for byte as it would alone.
//!
//! Which variant a stage runs is chosen per frame shape; a blank frame run
//! through the chain once, before the stream starts, shows it. When every
//! stage stacks the variant it ran ([`crate::ops::StageOp::stacks`]), the
//! batches run with those variants forced, so they run the same kernels as
//! frames one by one would; otherwise the stream runs frame by frame.

use super::super::{stage_names, StreamOptions};
use super::slot::raw_view;
use crate::backend::opencl::DeviceBuffer;
use crate::backend::Dev;
use crate::engine::Engine;
use crate::error::Result;
use crate::pipeline::device::{run_chain, ChainStart};
use crate::pipeline::{Op, StageOutcome};

/// What the blank frame showed: the stages' reports, and the chain with
/// each stage's variant forced when every stage stacks.
pub(super) struct Probe {
    pub(super) stages: Vec<String>,
    pub(super) stacked: Option<Vec<Op>>,
}

/// Runs `ops` once on a blank frame (uploaded on the device's queue) and
/// sees whether the batches can run stacked.
pub(super) fn probe(
    engine: &Engine,
    dev: &Dev,
    ops: &[Op],
    opts: &StreamOptions,
    in_bytes: usize,
) -> Result<Probe> {
    let blank = DeviceBuffer::from_slice(dev, &crate::simd::mem::try_zeroed::<u8>(in_bytes)?)?;
    let raw = raw_view(&blank, 0, opts, in_bytes, 1)?;
    let (_, outcomes) = run_chain(engine, dev, ops, ChainStart::Raw(&raw), 1)?;
    Ok(Probe {
        stages: stage_names(&outcomes),
        stacked: forced(&outcomes),
    })
}

/// The stages of `outcomes` with the variants they ran forced, or `None`
/// when a stage does not stack its variants. The chain's own plumbing
/// (loads, saturation, non-finite checks: reported as `pipeline`) is
/// pointwise, so it stacks.
fn forced(outcomes: &[StageOutcome]) -> Option<Vec<Op>> {
    outcomes
        .iter()
        .map(|o| {
            let variants: Vec<&str> = o
                .reports
                .iter()
                .filter(|r| r.op != "pipeline")
                .map(|r| r.variant.as_str())
                .collect();
            if !o.op.stage.stacks(&variants) {
                return None;
            }
            let own = o.reports.iter().find(|r| r.op == o.op.def().op.name);
            Some(Op {
                variant: own.map(|r| r.variant.clone()).or(o.op.variant.clone()),
                ..o.op.clone()
            })
        })
        .collect()
}
