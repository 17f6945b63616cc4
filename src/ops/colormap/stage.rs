//! `colormap` as a pipeline stage: the checked stage is [`ColormapParams`].

use super::{ColormapExt, ColormapParams, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `colormap` stage.
pub static COLORMAP: StageDef = StageDef {
    name: "colormap",
    summary: "1-channel image to RGB(A) u8 through a colour map (for looking at mono data)",
    options: &[
        OptionDef {
            key: "map",
            value: "turbo|rainbow|gray",
            help: "the colour map (default turbo)",
        },
        OptionDef {
            key: "min",
            value: "NUMBER",
            help:
                "input value mapped to the low end, in input units (default: the image's minimum)",
        },
        OptionDef {
            key: "max",
            value: "NUMBER",
            help: "input value mapped to the high end (default: the image's maximum)",
        },
        OptionDef {
            key: "channels",
            value: "3|4",
            help: "RGB or RGBA output (default 3)",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

/// Colormap options, checked as `ColormapParams::validate` checks them.
fn build(a: &dyn StageArgs) -> Result<ColormapParams> {
    let mut p = ColormapParams::default();
    if let Some(v) = a.get("map") {
        p.map = v.parse().map_err(|e| a.error("map", &e))?;
    }
    p.min = a.finite("min")?;
    p.max = a.finite("max")?;
    if let Some(c) = a.channels("channels")? {
        p.channels = c;
    }
    p.validate().map_err(|e| a.error("min", &e))?;
    Ok(p)
}

impl StageOp for ColormapParams {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(*self)
    }

    fn def(&self) -> &'static StageDef {
        &COLORMAP
    }

    fn options(&self) -> Vec<String> {
        let mut opts = vec![format!("map={}", self.map)];
        if let Some(v) = self.min {
            opts.push(format!("min={v}"));
        }
        if let Some(v) = self.max {
            opts.push(format!("max={v}"));
        }
        if self.channels != 3 {
            opts.push(format!("channels={}", self.channels));
        }
        opts
    }

    fn output_type(&self, _input: SampleType) -> SampleType {
        SampleType::U8
    }

    fn output_shape(&self, (w, h, _): (usize, usize, usize)) -> (usize, usize, usize) {
        (w, h, self.channels)
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.colormap_report::<u8, u8>(i, self)?,
            DynImage::U16(i) => d.colormap_report::<u16, u8>(i, self)?,
            DynImage::F32(i) => d.colormap_report::<f32, u8>(i, self)?,
        };
        record.reports.push(r);
        Ok(img.into())
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
