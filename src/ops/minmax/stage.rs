//! `minmax` as a pipeline stage, and the range other stages' device arms
//! measure with it (`device::minmax_of`).

use super::{MinMax, MinmaxExt, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `minmax` stage: reports the per-channel range.
pub static MINMAX: StageDef = StageDef {
    name: "minmax",
    summary: "report the per-channel minimum and maximum; the image passes through",
    options: &[],
    op: &SPEC,
    build: |_| Ok(Box::new(MinMaxStage)),
};

/// A checked `minmax` stage (it has no parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinMaxStage;

impl StageOp for MinMaxStage {
    fn def(&self) -> &'static StageDef {
        &MINMAX
    }

    fn options(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    fn reports(&self) -> bool {
        true
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (m, r) = match &input {
            DynImage::U8(i) => d.minmax_report(i)?,
            DynImage::U16(i) => d.minmax_report(i)?,
            DynImage::F32(i) => d.minmax_report(i)?,
        };
        record.reports.push(r);
        record.minmax = Some(m);
        record.lines.push(format_minmax(&m, input.sample_type()));
        Ok(input)
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


/// Formats a [`MinMax`] as `minmax: R 12..255, G 3..250, B 0..251`
/// (`minmax: 0..255` for one channel).
pub fn format_minmax(m: &MinMax, sample: SampleType) -> String {
    let names: &[&str] = match m.channels {
        1 => &[""],
        3 => &["R ", "G ", "B "],
        _ => &["R ", "G ", "B ", "A "],
    };
    let num = |v: f32| match sample {
        SampleType::F32 => crate::error::num(v),
        _ => format!("{v:.0}"),
    };
    let parts: Vec<String> = names
        .iter()
        .enumerate()
        .take(m.channels)
        .map(|(c, n)| {
            if m.min[c] > m.max[c] {
                format!("{n}(no numbers)")
            } else {
                format!("{n}{}..{}", num(m.min[c]), num(m.max[c]))
            }
        })
        .collect();
    format!("minmax: {}", parts.join(", "))
}
