//! `black` as a pipeline stage: the checked stage is [`BlackParams`].

use super::{BlackParams, SPEC};
use crate::error::Result;
use crate::image::SampleType;
use crate::ops::stage::{
    stage_any, Adapted, FrameFacts, OptionDef, StageArgs, StageDef, StageOp,
};

/// The `black` stage.
pub static BLACK: StageDef = StageDef {
    name: "black",
    summary: "black-level subtraction, max(in - black, 0) in the input's units; \
              with white=, black..white stretched to the full range (before demosaic on raw frames)",
    options: &[
        OptionDef {
            key: "black",
            value: "NUMBER",
            help: "the black level in input units, >= 0 (required; `black=64` is short for `black=black=64`)",
        },
        OptionDef {
            key: "white",
            value: "NUMBER",
            help: "the white level: stretch black..white to the type's full scale (default: no stretch)",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

fn build(a: &dyn StageArgs) -> Result<BlackParams> {
    let Some(black) = a.finite("black")? else {
        return Err(a.error("black", &"black needs a level, for example black=64"));
    };
    let p = BlackParams {
        black,
        white: a.finite("white")?,
    };
    p.validate()
        .map_err(|e| a.error(if black < 0.0 { "black" } else { "white" }, &e))?;
    Ok(p)
}

impl StageOp for BlackParams {
    fn def(&self) -> &'static StageDef {
        &BLACK
    }

    fn options(&self) -> Vec<String> {
        let mut opts = vec![format!("black={}", self.black)];
        if let Some(w) = self.white {
            opts.push(format!("white={w}"));
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// Without a white level, at most the input; with one, at most the
    /// input times the largest factor.
    fn bound(&self, input: f64) -> Option<f64> {
        match self.white {
            None => Some(input),
            Some(w) => Some(input.max(65535.0) * 65535.0 / (f64::from(w) - f64::from(self.black))),
        }
    }

    /// Without a white level the samples keep the camera's units (and its
    /// white level, less the black); a stretch rescales them.
    fn adapt_to_frame(
        &self,
        _args: &dyn StageArgs,
        _index: usize,
        frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        if self.white.is_some() {
            frame.camera_values = false;
        }
        Ok(Adapted::Keep)
    }

    crate::ops::pixel_stage::stage_arms!();
    stage_any!();
}
