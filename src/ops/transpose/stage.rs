//! `transpose` as a pipeline stage.

use super::{TransposeExt, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{
    stage_any, Adapted, FrameFacts, StageArgs, StageDef, StageOp, StageRecord,
};
use crate::ops::Dispatch;

/// The `transpose` stage: swaps rows and columns.
pub static TRANSPOSE: StageDef = StageDef {
    name: "transpose",
    summary: "swap rows and columns (the result is height x width)",
    options: &[],
    op: &SPEC,
    build: |_| Ok(Box::new(TransposeStage)),
};

/// A checked `transpose` stage (it has no parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeStage;

impl StageOp for TransposeStage {
    fn def(&self) -> &'static StageDef {
        &TRANSPOSE
    }

    fn options(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    fn output_shape(&self, (w, h, c): (usize, usize, usize)) -> (usize, usize, usize) {
        (h, w, c)
    }

    /// A transposed frame's colour filter pattern is transposed too.
    fn adapt_to_frame(
        &self,
        _args: &dyn StageArgs,
        index: usize,
        frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        frame.transpose(index);
        Ok(Adapted::Keep)
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.transpose_report(i).map(|(o, r)| (o.into(), r))?,
            DynImage::U16(i) => d.transpose_report(i).map(|(o, r)| (o.into(), r))?,
            DynImage::F32(i) => d.transpose_report(i).map(|(o, r)| (o.into(), r))?,
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
