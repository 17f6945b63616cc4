//! `bilateral` as a pipeline stage: the checked stage is [`BilateralParams`].

use super::{BilateralExt, BilateralParams, Border, Precision, MAX_RADIUS, SPEC};
use crate::error::Result;
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{stage_any, OptionDef, StageArgs, StageDef, StageOp, StageRecord};
use crate::ops::Dispatch;

/// The `bilateral` stage.
pub static BILATERAL: StageDef = StageDef {
    name: "bilateral",
    summary: "edge-preserving bilateral filter (disk window, Gaussian spatial and range weights)",
    options: &[
        OptionDef {
            key: "sigma_s",
            value: "NUMBER",
            help: "spatial standard deviation in pixels (> 0; required)",
        },
        OptionDef {
            key: "sigma_r",
            value: "NUMBER",
            help: "range standard deviation in units of full scale \
                   (1.0 = 255 for u8, 65535 for u16, 1.0 for f32; > 0; required)",
        },
        OptionDef {
            key: "radius",
            value: "N",
            help: "the disk's radius, 0..=32 (default ceil(2 sigma_s))",
        },
        OptionDef {
            key: "border",
            value: "replicate|mirror",
            help: "how the image continues past its edges (default replicate; \
                   mirror is half-sample symmetric, cba|abc)",
        },
        OptionDef {
            key: "precision",
            value: "exact|fast",
            help: "exact: within 1e-4 of full scale of the f64 definition (default); \
                   fast: within 2e-3, lets native_exp variants run",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

/// Bilateral options: both sigmas required, the rest optional.
fn build(a: &dyn StageArgs) -> Result<BilateralParams> {
    let need = |key: &str| -> Result<f32> {
        a.finite(key)?.ok_or_else(|| {
            a.error(
                key,
                &format_args!("bilateral needs {key}=, for example sigma_s=3:sigma_r=0.1"),
            )
        })
    };
    let (sigma_s, sigma_r) = (need("sigma_s")?, need("sigma_r")?);
    let radius = match a.get("radius") {
        None => None,
        Some(v) => Some(v.trim().parse::<usize>().map_err(|_| {
            a.error(
                "radius",
                &format_args!("radius={v} is not a whole number 0..={MAX_RADIUS}"),
            )
        })?),
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
    let precision = match a.get("precision") {
        None => Precision::Exact,
        Some(v) => v.parse::<Precision>().map_err(|_| {
            a.error(
                "precision",
                &format_args!("precision={v} is not exact or fast"),
            )
        })?,
    };
    let p = BilateralParams {
        sigma_s,
        sigma_r,
        radius,
        border,
        precision,
    };
    p.validate().map_err(|e| {
        let key = if sigma_s <= 0.0 {
            "sigma_s"
        } else if sigma_r <= 0.0 {
            "sigma_r"
        } else if radius.is_some() {
            "radius"
        } else {
            "sigma_s"
        };
        a.error(key, &e)
    })?;
    Ok(p)
}

impl StageOp for BilateralParams {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(*self)
    }

    fn def(&self) -> &'static StageDef {
        &BILATERAL
    }

    fn options(&self) -> Vec<String> {
        let mut opts = vec![
            format!("sigma_s={}", self.sigma_s),
            format!("sigma_r={}", self.sigma_r),
        ];
        if let Some(r) = self.radius {
            opts.push(format!("radius={r}"));
        }
        if self.border != Border::Replicate {
            opts.push("border=mirror".into());
        }
        if self.precision != Precision::Exact {
            opts.push(format!("precision={}", self.precision.name()));
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        input
    }

    /// Radius 0 is an exact copy, which keeps NaN where it is.
    fn spreads_nonfinite(&self) -> bool {
        self.radius() > 0
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let (img, r) = match &input {
            DynImage::U8(i) => d.bilateral_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::U16(i) => d.bilateral_report(i, self).map(|(o, r)| (o.into(), r))?,
            DynImage::F32(i) => d.bilateral_report(i, self).map(|(o, r)| (o.into(), r))?,
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
