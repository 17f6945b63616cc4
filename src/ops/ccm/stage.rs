//! `ccm` as a pipeline stage: the checked stage is [`CcmParams`].

use super::{CcmExt, CcmParams, MAX_COEFF, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `ccm` stage.
pub static CCM: StageDef = StageDef {
    name: "ccm",
    summary: "3x3 colour-correction matrix on RGB(A): (r, g, b) becomes M * (r, g, b), alpha copied",
    options: &[OptionDef {
        key: "m",
        value: "A/B/C/D/E/F/G/H/I",
        help: "the matrix, nine numbers row by row separated by '/' (row 1 makes red: \
               r' = A r + B g + C b), each within -64..=64 (required; `ccm=1/0/0/0/1/0/0/0/1` \
               is short for `ccm=m=...`)",
    }],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

fn build(a: &dyn StageArgs) -> Result<CcmParams> {
    let Some(text) = a.get("m") else {
        return Err(a.error("m", &"ccm needs a matrix, for example ccm=m=1.6/-0.4/-0.2/-0.3/1.5/-0.2/0/-0.5/1.5"));
    };
    let words: Vec<&str> = text.split('/').map(str::trim).collect();
    if words.len() != 9 {
        return Err(a.error(
            "m",
            &format_args!("m= takes nine numbers separated by '/', got {}", words.len()),
        ));
    }
    let mut m = [0.0f32; 9];
    for (v, w) in m.iter_mut().zip(&words) {
        *v = match w.parse::<f32>() {
            Ok(x) if x.is_finite() && x.abs() <= MAX_COEFF => x,
            Ok(_) => {
                return Err(a.error(
                    "m",
                    &format_args!("matrix entry {w} is not a finite number within -{MAX_COEFF}..={MAX_COEFF}"),
                ))
            }
            Err(_) => return Err(a.error("m", &format_args!("matrix entry '{w}' is not a number"))),
        };
    }
    Ok(CcmParams { m })
}

impl StageOp for CcmParams {
    fn def(&self) -> &'static StageDef {
        &CCM
    }

    fn options(&self) -> Vec<String> {
        let m: Vec<String> = self.m.iter().map(f32::to_string).collect();
        vec![format!("m={}", m.join("/"))]
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// At most the input times the largest row sum of magnitudes.
    fn bound(&self, input: f64) -> Option<f64> {
        Some(input * f64::from(self.gain()))
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.ccm_report(i, self).map(|(o, r)| (DynImage::U8(o), r))?,
            DynImage::U16(i) => d.ccm_report(i, self).map(|(o, r)| (DynImage::U16(o), r))?,
            DynImage::F32(i) => d.ccm_report(i, self).map(|(o, r)| (DynImage::F32(o), r))?,
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
