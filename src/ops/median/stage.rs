//! `median` as a pipeline stage.

use super::{MedianExt, MedianParams, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `median` stage.
pub static MEDIAN: StageDef = StageDef {
    name: "median",
    summary: "median of each pixel's (2r+1)x(2r+1) window per channel, replicate border, \
              alpha copied; removes hot pixels",
    options: &[OptionDef {
        key: "radius",
        value: "1|2|3",
        help: "window radius: 1 = 3x3 (default), 2 = 5x5, 3 = 7x7",
    }],
    op: &SPEC,
    build: build_median,
};

fn build_median(a: &dyn StageArgs) -> Result<Box<dyn StageOp>> {
    let radius = match a.get("radius") {
        None => 1,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(r) if (1..=super::MAX_RADIUS).contains(&r) => r,
            _ => {
                return Err(a.error(
                    "radius",
                    &format_args!("radius={v} is not 1, 2 or 3 (3x3, 5x5, 7x7)"),
                ))
            }
        },
    };
    Ok(Box::new(MedianStage {
        params: MedianParams::new(radius)?,
    }))
}

/// A checked `median` stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MedianStage {
    /// The window.
    pub params: MedianParams,
}

impl StageOp for MedianStage {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(self.params)
    }

    fn def(&self) -> &'static StageDef {
        &MEDIAN
    }

    fn options(&self) -> Vec<String> {
        vec![format!("radius={}", self.params.radius)]
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
        let p = &self.params;
        let (img, r) = match &input {
            DynImage::U8(i) => d.median_report(i, p).map(|(o, r)| (o.into(), r))?,
            DynImage::U16(i) => d.median_report(i, p).map(|(o, r)| (o.into(), r))?,
            DynImage::F32(i) => d.median_report(i, p).map(|(o, r)| (o.into(), r))?,
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
