//! Pipelines on frames of a known [`RawFormat`]: a `demosaic` stage takes
//! its pattern and bit depth from the format unless the spec gives them.
//!
//! ```
//! use clfilter::pipeline::format::parse_with_format;
//! use clfilter::pipeline::OpKind;
//!
//! let fmt = "bayer_gbrg12p".parse().unwrap();
//! let ops = parse_with_format("demosaic=method=edge,gaussian=sigma=1", Some(&fmt)).unwrap();
//! assert_eq!(ops[0].to_string(), "demosaic=pattern=gbrg:method=edge:bits=12");
//!
//! let err = parse_with_format("demosaic=pattern=rggb", Some(&fmt)).unwrap_err();
//! assert!(err.to_string().contains("pattern=rggb contradicts the format bayer_gbrg12p"));
//! ```

use std::borrow::Cow;

use super::spec::{self, parse_stages, Stage};
use super::{compile, run_stage, Op, OpKind, StageOutcome};
use crate::engine::Engine;
use crate::error::Result;
use crate::image::raw::{Depth, RawFormat, RawImage};
use crate::image::{DynImage, SampleType};
use crate::ops::demosaic::Pattern;
use crate::prelude::*;

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
    let mut pattern = fmt.pattern;
    let mut transposed_by: Vec<usize> = Vec::new();
    let mut camera_values = true;
    for (stage, op) in stages.iter().zip(ops.iter_mut()) {
        match &mut op.kind {
            OpKind::Transpose => {
                pattern = pattern.map(transposed);
                transposed_by.push(stage.index);
            }
            OpKind::Normalize { .. } => camera_values = false,
            OpKind::Demosaic { params, .. } => {
                let Some(want) = pattern else {
                    return Err(spec::error_at(
                        spec,
                        stage.name_span.clone(),
                        format!(
                            "{}: mono frames have no colour filter array (the format is \
                             {fmt}); use a bayer_* format, or leave out the demosaic stage",
                            stage.label()
                        ),
                    ));
                };
                if stage.get("pattern").is_none() {
                    params.pattern = want;
                } else if params.pattern != want {
                    return Err(spec::error_at(
                        spec,
                        stage.span_of("pattern"),
                        format!(
                            "{}: pattern={} contradicts the format {fmt}, whose frames {} {want}{}",
                            stage.label(),
                            params.pattern,
                            if transposed_by.is_empty() {
                                "are"
                            } else {
                                "become"
                            },
                            after_transposes(&transposed_by),
                        ),
                    ));
                }
                if camera_values {
                    check_bits(spec, stage, fmt, &mut params.bits)?;
                }
                break;
            }
            _ => {}
        }
    }
    Ok(ops)
}

/// Fills in, or checks, a demosaic stage's `bits` from the format.
fn check_bits(spec: &str, stage: &Stage, fmt: &RawFormat, bits: &mut Option<u32>) -> Result<()> {
    match (fmt.depth, *bits) {
        (Depth::Bits8, None) => {}
        (_, None) => *bits = Some(fmt.bits()),
        (Depth::Bits16 { .. }, Some(_)) => {}
        (_, Some(b)) if b == fmt.bits() => {}
        (_, Some(b)) => {
            return Err(spec::error_at(
                spec,
                stage.span_of("bits"),
                format!(
                    "{}: bits={b} does not fit the format {fmt}, whose samples have {} bits",
                    stage.label(),
                    fmt.bits()
                ),
            ))
        }
    }
    Ok(())
}

/// The pattern of a transposed frame: rows and columns swap, so the red
/// site at (x, y) moves to (y, x).
fn transposed(p: Pattern) -> Pattern {
    match p {
        Pattern::Grbg => Pattern::Gbrg,
        Pattern::Gbrg => Pattern::Grbg,
        same => same,
    }
}

/// ` after the transpose in stage 1` (or stages 1, 3), or nothing.
fn after_transposes(stages: &[usize]) -> String {
    match stages {
        [] => String::new(),
        [one] => format!(" after the transpose in stage {one}"),
        many => format!(
            " after the transposes in stages {}",
            many.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Runs one stage on a decoded raw frame, like [`run_stage`] on
/// [`RawImage::into_dyn`], except that a `demosaic` stage reads the frame
/// directly ([`RawImage::as_raw`]), so packed frames go to the device packed
/// and are unpacked there. A `demosaic` without `out=` writes the sample
/// type of [`RawImage::sample`] (`u16` for packed frames), as it would from
/// the unpacked image.
pub fn run_stage_raw(
    engine: &Engine,
    op: &Op,
    frame: RawImage,
) -> Result<(DynImage, StageOutcome)> {
    let OpKind::Demosaic { params, out } = &op.kind else {
        return run_stage(engine, op, frame.into_dyn());
    };
    let engine = match &op.variant {
        Some(v) => Cow::Owned(engine.with_variant(Some(op.name()), v)),
        None => Cow::Borrowed(engine),
    };
    let raw = frame.as_raw();
    let (img, report): (DynImage, _) = match out.unwrap_or(frame.sample()) {
        SampleType::U8 => engine
            .demosaic_report::<u8>(&raw, params)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::U16 => engine
            .demosaic_report::<u16>(&raw, params)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::F32 => engine
            .demosaic_report::<f32>(&raw, params)
            .map(|(o, r)| (o.into(), r))?,
    };
    Ok((
        img,
        StageOutcome {
            op: op.clone(),
            reports: vec![report],
            minmax: None,
            lines: Vec::new(),
            on_device: false,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn fmt(s: &str) -> RawFormat {
        s.parse().unwrap()
    }

    fn spec_err(r: Result<Vec<Op>>) -> String {
        match r {
            Err(Error::Spec(m)) => m,
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    #[test]
    fn transposes_swap_the_pattern() {
        let f = fmt("bayer_grbg8");
        let ops = parse_with_format("transpose,demosaic", Some(&f)).unwrap();
        assert_eq!(ops[1].to_string(), "demosaic=pattern=gbrg:method=mhc");
        let m = spec_err(parse_with_format(
            "transpose,demosaic=pattern=grbg",
            Some(&f),
        ));
        assert!(
            m.contains("frames become gbrg after the transpose in stage 1"),
            "{m}"
        );
        for p in Pattern::ALL {
            assert_eq!(transposed(transposed(p)), p);
            let (rx, ry) = p.red_at();
            assert_eq!(transposed(p).red_at(), (ry, rx));
        }
    }

    #[test]
    fn normalize_before_demosaic_keeps_the_default_white_level() {
        let f = fmt("bayer_rggb12");
        let ops = parse_with_format("normalize=factor=16,demosaic", Some(&f)).unwrap();
        assert_eq!(ops[1].to_string(), "demosaic=pattern=rggb:method=mhc");
    }
}
