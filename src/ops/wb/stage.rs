//! `wb` as a pipeline stage: the checked stage is [`WbParams`].

use super::{WbExt, WbParams, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `wb` stage.
pub static WB: StageDef = StageDef {
    name: "wb",
    summary: "white balance of RGB(A): given gains (r=, g=, b=) or the gray world (wb=auto)",
    options: &[
        OptionDef {
            key: "mode",
            value: "auto|camera",
            help: "auto: gray world, the gains that make the red and blue means equal the green \
                   mean (`wb=auto` is short for `wb=mode=auto`; not with r/g/b); camera: the \
                   gains a DNG input recorded (AsShotNeutral), filled in by `filterctl apply`",
        },
        OptionDef {
            key: "r",
            value: "NUMBER",
            help: "red gain, 0..=64 (default 1)",
        },
        OptionDef {
            key: "g",
            value: "NUMBER",
            help: "green gain (default 1)",
        },
        OptionDef {
            key: "b",
            value: "NUMBER",
            help: "blue gain (default 1)",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

fn build(a: &dyn StageArgs) -> Result<WbParams> {
    let keys = ["r", "g", "b"];
    if let Some(m) = a.get("mode") {
        if m.trim().eq_ignore_ascii_case("camera") {
            // `filterctl apply` replaces wb=camera with a DNG's gains before
            // parsing; any other input has no recorded white balance.
            return Err(a.error(
                "mode",
                &"wb=camera takes the white balance a DNG file recorded (AsShotNeutral): \
                  only a DNG input to `filterctl apply` has one; give r=, g=, b= or use wb=auto",
            ));
        }
        if !m.trim().eq_ignore_ascii_case("auto") {
            return Err(a.error("mode", &format_args!("mode={m} is not auto or camera")));
        }
        if let Some(k) = keys.iter().find(|k| a.get(k).is_some()) {
            return Err(a.error(k, &"wb=auto finds the gains itself: leave out r, g and b"));
        }
        return Ok(WbParams::Auto);
    }
    let mut g = [1.0f32; 3];
    for (i, k) in keys.iter().enumerate() {
        if let Some(v) = a.finite(k)? {
            if !(0.0..=super::MAX_GAIN).contains(&v) {
                return Err(a.error(
                    k,
                    &format_args!("{k}={v} is not within 0..={}", super::MAX_GAIN),
                ));
            }
            g[i] = v;
        }
    }
    Ok(WbParams::Gains(g))
}

impl StageOp for WbParams {
    fn def(&self) -> &'static StageDef {
        &WB
    }

    fn options(&self) -> Vec<String> {
        match self {
            WbParams::Auto => vec!["auto".into()],
            WbParams::Gains(g) => vec![format!("r={}", g[0]), format!("g={}", g[1]), format!("b={}", g[2])],
        }
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// At most the input times the largest gain.
    fn bound(&self, input: f64) -> Option<f64> {
        Some(input * f64::from(super::MAX_GAIN))
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.wb_report(i, self).map(|(o, r)| (DynImage::U8(o), r))?,
            DynImage::U16(i) => d.wb_report(i, self).map(|(o, r)| (DynImage::U16(o), r))?,
            DynImage::F32(i) => d.wb_report(i, self).map(|(o, r)| (DynImage::F32(o), r))?,
        };
        record.reports.extend(r);
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
