//! `ccm` as a pipeline stage: the checked stage is [`CcmParams`].

use super::{CcmParams, MAX_COEFF, SPEC};
use crate::error::Result;
use crate::image::SampleType;
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp};

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

    crate::ops::pixel_stage::stage_arms!();
    stage_any!();
}
