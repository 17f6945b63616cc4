//! `reduce` as a pipeline stage: `reduce=axis=x:op=mean`.

use super::{Axis, ReduceExt, ReduceParams, Reduction, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `reduce` stage.
pub static REDUCE: StageDef = StageDef {
    name: "reduce",
    summary: "per-channel sum, mean, min or max along x (output 1xH) or y (Wx1), as f32",
    options: &[
        OptionDef {
            key: "axis",
            value: "x|y",
            help: "x: each row becomes one value; y: each column (required)",
        },
        OptionDef {
            key: "op",
            value: "sum|mean|min|max",
            help: "what is computed (default sum); min/max ignore NaN",
        },
    ],
    op: &SPEC,
    build,
};

fn build(a: &dyn StageArgs) -> Result<Box<dyn StageOp>> {
    let axis = match a.get("axis") {
        Some(v) => Axis::parse(v).map_err(|e| a.error("axis", &e))?,
        None => return Err(a.name_error(&"reduce needs an axis, for example reduce=axis=x")),
    };
    let op = match a.get("op") {
        Some(v) => Reduction::parse(v).map_err(|e| a.error("op", &e))?,
        None => Reduction::Sum,
    };
    Ok(Box::new(ReduceStage {
        params: ReduceParams { axis, op },
    }))
}

/// A checked `reduce` stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceStage {
    /// The axis and the reduction.
    pub params: ReduceParams,
}

impl StageOp for ReduceStage {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(self.params)
    }

    fn def(&self) -> &'static StageDef {
        &REDUCE
    }

    fn options(&self) -> Vec<String> {
        vec![
            format!("axis={}", self.params.axis.name()),
            format!("op={}", self.params.op.name()),
        ]
    }

    fn output_type(&self, _input: SampleType) -> SampleType {
        SampleType::F32
    }

    fn output_shape(&self, (w, h, c): (usize, usize, usize)) -> (usize, usize, usize) {
        let (ow, oh) = self.params.output_size(w, h);
        (ow, oh, c)
    }

    /// A mean, min or max stays within the input's bound; a sum grows with
    /// the line's length, which the stage does not know.
    fn bound(&self, input: f64) -> Option<f64> {
        (self.params.op != Reduction::Sum).then_some(input)
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (out, r) = match &input {
            DynImage::U8(i) => d.reduce_report(i, &self.params)?,
            DynImage::U16(i) => d.reduce_report(i, &self.params)?,
            DynImage::F32(i) => d.reduce_report(i, &self.params)?,
        };
        record.reports.push(r);
        Ok(DynImage::F32(out))
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
