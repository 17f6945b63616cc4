//! `gaussian` as a pipeline stage: the checked stage is [`GaussianParams`].

use super::{Border, GaussianExt, GaussianParams, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `gaussian` stage.
pub static GAUSSIAN: StageDef = StageDef {
    name: "gaussian",
    summary: "Gaussian blur (recursive, cost independent of sigma; exact FIR below sigma 1)",
    options: &[
        OptionDef {
            key: "sigma",
            value: "NUMBER",
            help: "standard deviation in pixels, both axes (0 = no blur)",
        },
        OptionDef {
            key: "sigma_x",
            value: "NUMBER",
            help: "along rows, overriding sigma",
        },
        OptionDef {
            key: "sigma_y",
            value: "NUMBER",
            help: "along columns, overriding sigma",
        },
        OptionDef {
            key: "border",
            value: "replicate|mirror",
            help: "how the image continues past its edges (default replicate)",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

/// Gaussian options: `sigma` sets both axes, `sigma_x`/`sigma_y` override one.
fn build(a: &dyn StageArgs) -> Result<GaussianParams> {
    let both = a.finite("sigma")?;
    let (sx, sy) = (a.finite("sigma_x")?.or(both), a.finite("sigma_y")?.or(both));
    let (Some(sigma_x), Some(sigma_y)) = (sx, sy) else {
        return Err(a.error(
            "sigma",
            &"gaussian needs sigma=S (or both sigma_x and sigma_y)",
        ));
    };
    let border = match a.get("border") {
        None => Border::Replicate,
        Some(v) => v.parse::<Border>().map_err(|_| {
            a.error(
                "border",
                &format_args!("border={v} is not replicate or mirror"),
            )
        })?,
    };
    let p = GaussianParams {
        sigma_x,
        sigma_y,
        border,
    };
    p.validate().map_err(|e| {
        let key = if a.get("sigma").is_some() {
            "sigma"
        } else {
            "sigma_x"
        };
        a.error(key, &e)
    })?;
    Ok(p)
}

impl StageOp for GaussianParams {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(*self)
    }

    fn def(&self) -> &'static StageDef {
        &GAUSSIAN
    }

    fn options(&self) -> Vec<String> {
        let mut opts = Vec::new();
        if self.sigma_x == self.sigma_y {
            opts.push(format!("sigma={}", self.sigma_x));
        } else {
            opts.push(format!("sigma_x={}:sigma_y={}", self.sigma_x, self.sigma_y));
        }
        if self.border != Border::Replicate {
            opts.push("border=mirror".into());
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// Both sigmas 0 is an exact copy, which keeps NaN where it is.
    fn spreads_nonfinite(&self) -> bool {
        self.min_nonzero_sigma().is_some()
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.gaussian_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::U16(i) => d.gaussian_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::F32(i) => d.gaussian_report(i, self).map(|(o, r)| (o.into(), r))?,
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

    /// The FIR variant, and the pointwise saturation before it.
    fn stacks(&self, variants: &[&str]) -> bool {
        variants
            .iter()
            .all(|v| *v == "saturate" || super::device::stacks(v))
    }

    stage_any!();
}
