//! `gamma` as a pipeline stage: the checked stage is [`GammaParams`].

use super::{GammaParams, MAX_POWER, MIN_POWER, SPEC};
use crate::error::Result;
use crate::image::SampleType;
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp};

/// The `gamma` stage.
pub static GAMMA: StageDef = StageDef {
    name: "gamma",
    summary: "encoding curve, linear light to encoded values: sRGB, Rec.709 or a power 1/N \
              (alpha copied)",
    options: &[OptionDef {
        key: "curve",
        value: "srgb|rec709|NUMBER",
        help: "srgb (IEC 61966-2-1), rec709 (the BT.709 OETF) or N: L^(1/N), N within 0.1..=10 \
               (required; `gamma=srgb` is short for `gamma=curve=srgb`)",
    }],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

fn build(a: &dyn StageArgs) -> Result<GammaParams> {
    let Some(v) = a.get("curve") else {
        return Err(a.error("curve", &"gamma needs a curve: srgb, rec709 or a number such as 2.2"));
    };
    let word = v.trim().to_ascii_lowercase();
    match word.as_str() {
        "srgb" => return Ok(GammaParams::Srgb),
        "rec709" => return Ok(GammaParams::Rec709),
        _ => {}
    }
    match word.parse::<f32>() {
        Ok(n) if n.is_finite() && (MIN_POWER..=MAX_POWER).contains(&n) => Ok(GammaParams::Power(n)),
        Ok(_) => Err(a.error(
            "curve",
            &format_args!("curve={v}: a power must be within {MIN_POWER}..={MAX_POWER}"),
        )),
        Err(_) => Err(a.error(
            "curve",
            &format_args!("curve={v} is not srgb, rec709 or a number"),
        )),
    }
}

impl StageOp for GammaParams {
    fn def(&self) -> &'static StageDef {
        &GAMMA
    }

    fn options(&self) -> Vec<String> {
        vec![match self {
            GammaParams::Srgb => "curve=srgb".into(),
            GammaParams::Rec709 => "curve=rec709".into(),
            GammaParams::Power(n) => format!("curve={n}"),
        }]
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// Within 1.1 x full scale for inputs up to full scale; past it, f32
    /// samples grow as their power `1/n` (at most 10).
    fn bound(&self, input: f64) -> Option<f64> {
        let p = match *self {
            GammaParams::Power(n) => (1.0 / f64::from(n)).max(1.0),
            _ => 1.0,
        };
        Some(1.1 * input.max(65535.0).powf(p))
    }

    crate::ops::pixel_stage::stage_arms!();
    stage_any!();
}
