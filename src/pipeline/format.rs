//! Pipelines on frames of a known [`RawFormat`]: a `demosaic` stage takes
//! its pattern and bit depth from the format unless the spec gives them.
//!
//! ```
//! use clfilter::pipeline::format::parse_with_format;
//!
//! let fmt = "bayer_gbrg12p".parse().unwrap();
//! let ops = parse_with_format("demosaic=method=edge,gaussian=sigma=1", Some(&fmt)).unwrap();
//! assert_eq!(ops[0].to_string(), "demosaic=pattern=gbrg:method=edge:bits=12");
//!
//! let err = parse_with_format("demosaic=pattern=rggb", Some(&fmt)).unwrap_err();
//! assert!(err.to_string().contains("pattern=rggb contradicts the format bayer_gbrg12p"));
//! ```

use super::compile::Args;
#[cfg(doc)]
use super::run_stage;
use super::spec::parse_stages;
use super::{compile, stage_engine, Op, StageOutcome};
use crate::engine::Engine;
use crate::error::Result;
use crate::image::raw::{RawFormat, RawImage};
use crate::image::DynImage;
use crate::ops::stage::{Adapted, FrameFacts, StageRecord};

/// Parses and checks a spec like [`super::parse`], for frames of `fmt`
/// (`None`: exactly [`super::parse`]).
///
/// The first `demosaic` stage reads the format's facts:
///
/// - Without `pattern=`, it takes the format's pattern. A `pattern=` that
///   contradicts the format is an [`Error::Spec`](crate::Error::Spec) pointing at the option.
///   A `transpose` before the stage transposes the pattern (`grbg` becomes
///   `gbrg`), and the stage gets (or is checked against) the transposed one.
/// - Without `bits=`, it takes the format's bits: 10..16 for 16-bit
///   containers, 12 for the packed layouts (8-bit formats need none). After
///   a `normalize` the samples are no longer the camera's, so then it keeps
///   its own default (the container's full range). An explicit `bits=`
///   overrides a 16-bit container's (a camera that sends 12 significant bits
///   as `bayer_rggb16`); for 8-bit and packed formats it must equal the
///   format's bits.
/// - On a mono format a `demosaic` stage is an [`Error::Spec`](crate::Error::Spec): mono frames
///   have no colour filter array.
///
/// Stages after the first `demosaic` are left as written.
pub fn parse_with_format(spec: &str, fmt: Option<&RawFormat>) -> Result<Vec<Op>> {
    let stages = parse_stages(spec)?;
    let mut ops = compile(spec, &stages)?;
    let Some(fmt) = fmt else {
        return Ok(ops);
    };
    // The frame as each stage sees it: its pattern (transposes swap it) and
    // whether its samples are still the camera's.
    let mut frame = FrameFacts {
        format: fmt,
        pattern: fmt.pattern,
        transposed_by: Vec::new(),
        camera_values: true,
    };
    for (stage, op) in stages.iter().zip(ops.iter_mut()) {
        let args = Args { spec, stage };
        match op.stage.adapt_to_frame(&args, stage.index, &mut frame)? {
            Adapted::Keep => {}
            Adapted::Done(adapted) => {
                op.stage = adapted.into();
                break;
            }
        }
    }
    Ok(ops)
}

/// Runs one stage on a decoded raw frame, like [`run_stage`] on
/// [`RawImage::into_dyn`], except that a stage that reads raw frames reads
/// it directly ([`crate::ops::StageOp::run_host_raw`]).
pub fn run_stage_raw(
    engine: &Engine,
    op: &Op,
    frame: RawImage,
) -> Result<(DynImage, StageOutcome)> {
    let engine = stage_engine(engine, op);
    let mut record = StageRecord::default();
    let since = crate::backend::Backend::dispatches_on_this_thread();
    let img = op.stage.run_host_raw(&*engine, frame, &mut record)?;
    Ok((img, StageOutcome::of(op, record, false, since)))
}
