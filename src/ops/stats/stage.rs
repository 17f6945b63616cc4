//! `stats` as a pipeline stage: reports one line of per-channel
//! statistics; the image passes through.

use super::{Stats, StatsExt, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `stats` stage.
pub static STATS: StageDef = StageDef {
    name: "stats",
    summary: "report per-channel sum, mean, std, min and max (one fused pass); the image passes through",
    options: &[],
    op: &SPEC,
    build: |_| Ok(Box::new(StatsStage)),
};

/// A checked `stats` stage (it has no parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsStage;

impl StageOp for StatsStage {
    fn def(&self) -> &'static StageDef {
        &STATS
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
        let (s, r) = match &input {
            DynImage::U8(i) => d.stats_report(i)?,
            DynImage::U16(i) => d.stats_report(i)?,
            DynImage::F32(i) => d.stats_report(i)?,
        };
        record.reports.push(r);
        record.lines.push(format_stats(&s, input.sample_type()));
        record.stats = Some(s);
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

/// Formats [`Stats`] as one line:
/// `stats: n=240000; R mean 128.3 std 70.1 min 0 max 255 sum 30792000; G ...`
/// (no channel name for one channel). Means and deviations get 4
/// significant decimals; integer types' extremes print as integers.
pub fn format_stats(s: &Stats, sample: SampleType) -> String {
    let names: &[&str] = match s.channels {
        1 => &[""],
        3 => &["R ", "G ", "B "],
        _ => &["R ", "G ", "B ", "A "],
    };
    let ext = |v: f64| match sample {
        SampleType::F32 => crate::error::num(v),
        _ => format!("{v:.0}"),
    };
    let parts: Vec<String> = names
        .iter()
        .enumerate()
        .take(s.channels)
        .map(|(c, n)| {
            format!(
                "{n}mean {:.4} std {:.4} min {} max {} sum {}",
                s.mean[c],
                s.std[c],
                ext(s.min[c]),
                ext(s.max[c]),
                s.sum[c]
            )
        })
        .collect();
    format!("stats: n={}; {}", s.count, parts.join("; "))
}
