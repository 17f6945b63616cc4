//! `normalize` as a pipeline stage, and `convert`, the stage that runs
//! normalize's table to change the sample type full scale to full scale.

use super::{NormalizeExt, NormalizeParams, Percentiles, SPEC};
use crate::error::Result;
use crate::image::{DynImage, Image, Sample, SampleType};
use crate::ops::stage::{
    stage_any, Adapted, FrameFacts, OptionDef, StageArgs, StageDef, StageOp, StageRecord,
};
use crate::ops::{Dispatch, RunReport};

/// The `normalize` stage.
pub static NORMALIZE: StageDef = StageDef {
    name: "normalize",
    summary: "(in - sub) * factor, converted to the output type; \
              without sub and factor, stretch min..max (or the percentiles low..high) to the full range",
    options: &[
        OptionDef {
            key: "sub",
            value: "NUMBER",
            help: "subtracted first (default 0 when only factor is given)",
        },
        OptionDef {
            key: "factor",
            value: "NUMBER",
            help: "multiplied second (default 1 when only sub is given)",
        },
        OptionDef {
            key: "low",
            value: "P%",
            help: "stretch from this percentile of the colour samples (default 0%, the minimum; \
                   not with sub/factor)",
        },
        OptionDef {
            key: "high",
            value: "Q%",
            help: "stretch up to this percentile (default 100%, the maximum)",
        },
        OptionDef {
            key: "out",
            value: "u8|u16|f32",
            help: "output sample type (default: the input's)",
        },
    ],
    op: &SPEC,
    build: build_normalize,
};

/// A percentage option: `P%` or `P`, finite.
fn percent(a: &dyn StageArgs, key: &str) -> Result<Option<f64>> {
    let Some(v) = a.get(key) else {
        return Ok(None);
    };
    let t = v.trim();
    let t = t.strip_suffix('%').unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(p) if p.is_finite() => Ok(Some(p)),
        _ => Err(a.error(key, &format!("'{v}' is not a percentage such as 1%"))),
    }
}

fn build_normalize(a: &dyn StageArgs) -> Result<Box<dyn StageOp>> {
    let params = NormalizeParams {
        sub: a.finite("sub")?,
        factor: a.finite("factor")?,
    };
    let out = a.sample_type("out")?;
    let (low, high) = (percent(a, "low")?, percent(a, "high")?);
    if low.is_none() && high.is_none() {
        return Ok(Box::new(NormalizeStage { params, out }));
    }
    if params.sub.is_some() || params.factor.is_some() {
        return Err(a.name_error(&"low/high percentiles and sub/factor exclude each other"));
    }
    let range = Percentiles::new(low.unwrap_or(0.0), high.unwrap_or(100.0))
        .map_err(|e| a.error(if low.is_some() { "low" } else { "high" }, &e))?;
    Ok(Box::new(PercentileStage { range, out }))
}

/// The `convert` stage.
pub static CONVERT: StageDef = StageDef {
    name: "convert",
    summary: "convert to another sample type, full scale to full scale \
              (255 for u8, 65535 for u16, 1.0 for f32); free inside device pipelines",
    options: &[OptionDef {
        key: "out",
        value: "u8|u16|f32",
        help: "the output sample type (required; `convert=u8` is short for `convert=out=u8`)",
    }],
    op: &SPEC,
    build: build_convert,
};

fn build_convert(a: &dyn StageArgs) -> Result<Box<dyn StageOp>> {
    match a.sample_type("out")? {
        Some(out) => Ok(Box::new(ConvertStage { out })),
        None => Err(a.error(
            "out",
            &"convert needs an output type, for example convert=u8",
        )),
    }
}

/// A checked `normalize` stage: `(in - sub) * factor`, or a min..max
/// stretch, converted to `out`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormalizeStage {
    /// `sub` and `factor`; both `None` stretches min..max to the full range.
    pub params: NormalizeParams,
    /// The output sample type; `None` keeps the input's.
    pub out: Option<SampleType>,
}

/// A checked `normalize=low=P%:high=Q%` stage: the colour channels'
/// percentiles stretched to `out`'s full range
/// ([`super::percentile`] defines them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PercentileStage {
    /// The percentiles.
    pub range: Percentiles,
    /// The output sample type; `None` keeps the input's.
    pub out: Option<SampleType>,
}

/// A checked `convert` stage: to another sample type, full scale to full
/// scale (255 for u8, 65535 for u16, 1.0 for f32), rounding and saturating.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvertStage {
    /// The output sample type.
    pub out: SampleType,
}

fn normalize_to<T: Sample>(
    d: &dyn Dispatch,
    img: &Image<T>,
    params: &NormalizeParams,
    out: SampleType,
) -> Result<(DynImage, Vec<RunReport>)> {
    Ok(match out {
        SampleType::U8 => {
            let (i, r) = d.normalize_report::<T, u8>(img, params)?;
            (DynImage::U8(i), r)
        }
        SampleType::U16 => {
            let (i, r) = d.normalize_report::<T, u16>(img, params)?;
            (DynImage::U16(i), r)
        }
        SampleType::F32 => {
            let (i, r) = d.normalize_report::<T, f32>(img, params)?;
            (DynImage::F32(i), r)
        }
    })
}

/// Normalizes any host image into `out`.
fn normalize_dyn(
    d: &dyn Dispatch,
    input: &DynImage,
    params: &NormalizeParams,
    out: SampleType,
    record: &mut StageRecord,
) -> Result<DynImage> {
    let (img, r) = match input {
        DynImage::U8(i) => normalize_to(d, i, params, out)?,
        DynImage::U16(i) => normalize_to(d, i, params, out)?,
        DynImage::F32(i) => normalize_to(d, i, params, out)?,
    };
    record.reports.extend(r);
    Ok(img)
}

impl StageOp for NormalizeStage {
    fn def(&self) -> &'static StageDef {
        &NORMALIZE
    }

    /// `(x - sub) * factor` for explicit coefficients; a stretch to the
    /// output's full range (at most 65535) otherwise.
    fn bound(&self, input: f64) -> Option<f64> {
        let NormalizeParams { sub, factor } = self.params;
        if sub.is_none() && factor.is_none() {
            return Some(input.max(65535.0));
        }
        let (sub, factor) = (f64::from(sub.unwrap_or(0.0)), f64::from(factor.unwrap_or(1.0)));
        Some((input + sub.abs()) * factor.abs())
    }

    fn options(&self) -> Vec<String> {
        let mut opts = Vec::new();
        if let Some(s) = self.params.sub {
            opts.push(format!("sub={s}"));
        }
        if let Some(k) = self.params.factor {
            opts.push(format!("factor={k}"));
        }
        if let Some(o) = self.out {
            opts.push(format!("out={o}"));
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        self.out.unwrap_or(input)
    }

    /// After a normalize the samples are no longer the camera's.
    fn adapt_to_frame(
        &self,
        _args: &dyn StageArgs,
        _index: usize,
        frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        frame.camera_values = false;
        Ok(Adapted::Keep)
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let out = self.out.unwrap_or(input.sample_type());
        normalize_dyn(d, &input, &self.params, out, record)
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

impl StageOp for PercentileStage {
    fn def(&self) -> &'static StageDef {
        &NORMALIZE
    }

    /// f32 outputs are not clipped at the percentiles, so samples beyond
    /// them can map anywhere: no bound.
    fn bound(&self, _input: f64) -> Option<f64> {
        None
    }

    fn options(&self) -> Vec<String> {
        let mut opts = vec![
            format!("low={}%", self.range.low),
            format!("high={}%", self.range.high),
        ];
        if let Some(o) = self.out {
            opts.push(format!("out={o}"));
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        self.out.unwrap_or(input)
    }

    /// After a normalize the samples are no longer the camera's.
    fn adapt_to_frame(
        &self,
        _args: &dyn StageArgs,
        _index: usize,
        frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        frame.camera_values = false;
        Ok(Adapted::Keep)
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let out = self.out.unwrap_or(input.sample_type());
        let (img, r) = match &input {
            DynImage::U8(i) => percentiles_to(d, i, &self.range, out)?,
            DynImage::U16(i) => percentiles_to(d, i, &self.range, out)?,
            DynImage::F32(i) => percentiles_to(d, i, &self.range, out)?,
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
        super::device::run_percentile_stage(self, cx, forced, input, record)
    }

    stage_any!();
}

fn percentiles_to<T: Sample>(
    d: &dyn Dispatch,
    img: &Image<T>,
    pc: &Percentiles,
    out: SampleType,
) -> Result<(DynImage, Vec<RunReport>)> {
    Ok(match out {
        SampleType::U8 => {
            let (i, r) = d.normalize_percentiles_report::<T, u8>(img, pc)?;
            (DynImage::U8(i), r)
        }
        SampleType::U16 => {
            let (i, r) = d.normalize_percentiles_report::<T, u16>(img, pc)?;
            (DynImage::U16(i), r)
        }
        SampleType::F32 => {
            let (i, r) = d.normalize_percentiles_report::<T, f32>(img, pc)?;
            (DynImage::F32(i), r)
        }
    })
}

impl StageOp for ConvertStage {
    fn def(&self) -> &'static StageDef {
        &CONVERT
    }

    /// Full scale to full scale: integer outputs saturate, f32 outputs
    /// from integers are at most 1.
    fn bound(&self, input: f64) -> Option<f64> {
        Some(input.max(65535.0))
    }

    /// The short form, `convert=u8`.
    fn options(&self) -> Vec<String> {
        vec![self.out.name().to_string()]
    }

    fn output_type(&self, _input: SampleType) -> SampleType {
        self.out
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        if self.out == input.sample_type() {
            return Ok(input);
        }
        let params = NormalizeParams {
            sub: Some(0.0),
            factor: Some(
                (self.out.full_scale() as f64 / input.sample_type().full_scale() as f64) as f32,
            ),
        };
        normalize_dyn(d, &input, &params, self.out, record)
    }

    /// Pointwise (a pending factor, at most a saturating pass).
    fn stacks(&self, _variants: &[&str]) -> bool {
        true
    }

    /// No kernel: the factor waits for the next stage or the store.
    fn run_device(
        &self,
        cx: &crate::ops::work::Chain<'_>,
        forced: Option<&str>,
        input: crate::ops::work::ChainInput<'_>,
        record: &mut StageRecord,
    ) -> Result<crate::ops::work::Work> {
        super::device::run_convert_stage(self, cx, forced, input, record)
    }

    stage_any!();
}
