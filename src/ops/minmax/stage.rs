//! `minmax` as a pipeline stage, and the range other stages' device arms
//! measure with it ([`minmax_of`]).

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

    #[cfg(feature = "opencl")]
    fn run_device(
        &self,
        cx: &crate::ops::work::Chain<'_>,
        forced: Option<&str>,
        input: crate::ops::work::ChainInput<'_>,
        record: &mut StageRecord,
    ) -> Result<crate::ops::work::Work> {
        let mut w = input.into_work();
        let (m, rep) = minmax_of(cx, forced, &mut w)?;
        record.reports.push(rep);
        record.lines.push(format_minmax(&m, w.ty));
        record.minmax = Some(m);
        Ok(w)
    }

    stage_any!();
}

/// Per-channel extremes of a working image, in logical units and channels.
/// `forced` is a minmax stage's own `variant=`, or `None` for the minmax a
/// colormap or normalize stage runs for its range.
#[cfg(feature = "opencl")]
pub fn minmax_of(
    cx: &crate::ops::work::Chain<'_>,
    forced: Option<&str>,
    w: &mut crate::ops::work::Work,
) -> Result<(MinMax, crate::ops::RunReport)> {
    use crate::ops::OpParams;
    let mt = w.materialize(cx.d, cx.dev)?;
    let (logical, working) = (
        w.logical_shape(OpParams::NONE),
        w.working_shape(OpParams::NONE),
    );
    let img = &w.img;
    let (m, mut r) =
        crate::ops::dispatch_on_device(cx.d, &SPEC, forced, (&logical, &working), |dev, spec| {
            super::device::launch(cx.d.programs(), dev, spec, img)
        })?;
    r.kernel_time = r.kernel_time.map(|k| k + mt);
    let mut out = MinMax::empty(w.channels);
    out.min[..w.channels].copy_from_slice(&m.min[..w.channels]);
    out.max[..w.channels].copy_from_slice(&m.max[..w.channels]);
    Ok((out, r))
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
        SampleType::F32 => format!("{v}"),
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
