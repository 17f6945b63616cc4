//! `deband` as a pipeline stage.

use super::{DebandExt, DebandParams, Space, MAX_RANGE, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `deband` stage.
pub static DEBAND: StageDef = StageDef {
    name: "deband",
    summary: "banding reduction (f3kdb): average 2 or 4 random references closer than \
              threshold, then add uniform grain; u8 and u16, deterministic per seed",
    options: &[
        OptionDef {
            key: "range",
            value: "1..255",
            help: "largest reference offset in pixels (default 15)",
        },
        OptionDef {
            key: "threshold",
            value: "LEVELS",
            help: "references closer than this, in 8-bit levels, count as banding (default 4)",
        },
        OptionDef {
            key: "grain",
            value: "LEVELS",
            help: "uniform grain amplitude in 8-bit levels (default 1; 0 adds none)",
        },
        OptionDef {
            key: "seed",
            value: "0..4294967295",
            help: "random seed: equal seeds give byte-identical results everywhere (default 0)",
        },
        OptionDef {
            key: "space",
            value: "rgb|ycc",
            help: "filter the channels as they are, or in 16-bit YCbCr (RGB/RGBA only; default rgb)",
        },
        OptionDef {
            key: "samples",
            value: "2|4",
            help: "references per pixel: 2 in the column, 4 in a square (default 4)",
        },
    ],
    op: &SPEC,
    build,
};

/// Option `key` as an integer in `lo..=hi`, or `default`.
fn int(a: &dyn StageArgs, key: &str, (lo, hi): (u32, u32), default: u32) -> Result<u32> {
    let Some(v) = a.get(key) else {
        return Ok(default);
    };
    match v.trim().parse::<u32>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(a.error(key, &format_args!("{key}={v} is not an integer in {lo}..={hi}"))),
    }
}

/// Option `key` as a number of 8-bit levels in `0..=255`, or `default`.
fn levels(a: &dyn StageArgs, key: &str, default: f32) -> Result<f32> {
    match a.finite(key)? {
        None => Ok(default),
        Some(v) if (0.0..=super::MAX_LEVELS).contains(&v) => Ok(v),
        Some(v) => Err(a.error(
            key,
            &format_args!("{key}={v} is outside 0..=255 (8-bit levels)"),
        )),
    }
}

fn build(a: &dyn StageArgs) -> Result<Box<dyn StageOp>> {
    let d = DebandParams::default();
    let space = match a.get("space") {
        None => d.space,
        Some(v) => Space::parse(v.trim())
            .ok_or_else(|| a.error("space", &format_args!("space={v} is not rgb or ycc")))?,
    };
    let samples = int(a, "samples", (2, 4), d.samples)?;
    if samples == 3 {
        return Err(a.error("samples", &"samples=3 is not 2 or 4"));
    }
    let p = DebandParams {
        range: int(a, "range", (1, MAX_RANGE), d.range)?,
        threshold: levels(a, "threshold", d.threshold)?,
        grain: levels(a, "grain", d.grain)?,
        seed: int(a, "seed", (0, u32::MAX), d.seed)?,
        space,
        samples,
    };
    p.validate()?;
    Ok(Box::new(p))
}

impl StageOp for DebandParams {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(*self)
    }

    fn def(&self) -> &'static StageDef {
        &DEBAND
    }

    fn options(&self) -> Vec<String> {
        vec![
            format!("range={}", self.range),
            format!("threshold={}", self.threshold),
            format!("grain={}", self.grain),
            format!("seed={}", self.seed),
            format!("space={}", self.space),
            format!("samples={}", self.samples),
        ]
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.deband_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::U16(i) => d.deband_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::F32(_) => return Err(super::f32_refused()),
        };
        record.reports.push(r);
        Ok(img)
    }

    fn run_device(
        &self,
        cx: &crate::ops::work::Chain<'_>,
        forced: Option<&str>,
        input: crate::ops::work::ChainInput<'_>,
        record: &mut StageRecord,
    ) -> Result<crate::ops::work::Work> {
        super::device::run_stage(self, cx, forced, input, record)
    }

    stage_any!();
}
