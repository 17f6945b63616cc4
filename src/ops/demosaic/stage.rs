//! `demosaic` as a pipeline stage. It reads a raw frame: as a chain's first
//! stage it gets the frame as uploaded (packed frames unpacked by its
//! kernels), and on frames of a known format it takes its pattern and bit
//! depth from the format ([`StageOp::adapt_to_frame`]).

use super::{DemosaicExt, DemosaicParams, Pattern, Raw, SPEC};
use crate::error::{Error, Result};
use crate::image::raw::{Depth, RawImage};
use crate::image::{DynImage, SampleType};
use crate::ops::stage::{
    stage_any, Adapted, FrameFacts, OptionDef, StageArgs, StageDef, StageOp, StageRecord,
};
use crate::ops::{Dispatch, RunReport};

/// The `demosaic` stage.
pub static DEMOSAIC: StageDef = StageDef {
    name: "demosaic",
    summary: "Bayer CFA (1-channel u8/u16) to RGB or RGBA",
    options: &[
        OptionDef {
            key: "pattern",
            value: "rggb|bggr|grbg|gbrg",
            help: "the top-left 2x2 block of the sensor (default rggb)",
        },
        OptionDef {
            key: "method",
            value: "bilinear|mhc|edge",
            help: "interpolation (default mhc, Malvar-He-Cutler)",
        },
        OptionDef {
            key: "black",
            value: "NUMBER",
            help: "black level in input units (default 0)",
        },
        OptionDef {
            key: "wb_r",
            value: "NUMBER",
            help: "red white-balance gain (default 1)",
        },
        OptionDef {
            key: "wb_g",
            value: "NUMBER",
            help: "green white-balance gain (default 1)",
        },
        OptionDef {
            key: "wb_b",
            value: "NUMBER",
            help: "blue white-balance gain (default 1)",
        },
        OptionDef {
            key: "channels",
            value: "3|4",
            help: "RGB or RGBA output (default 3)",
        },
        OptionDef {
            key: "bits",
            value: "8..16",
            help: "significant bits of 16-bit input, the white level 2^bits-1 (default 16)",
        },
        OptionDef {
            key: "out",
            value: "u8|u16|f32",
            help: "output sample type (default: the input's)",
        },
    ],
    op: &SPEC,
    build: |a| Ok(Box::new(build(a)?)),
};

/// A checked `demosaic` stage: a 1-channel u8/u16 Bayer frame into RGB(A)
/// of `out`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemosaicStage {
    /// Pattern, method, levels, output channels.
    pub params: DemosaicParams,
    /// The output sample type; `None` keeps the input's.
    pub out: Option<SampleType>,
}

/// Demosaic options; the numeric ones are range-checked when the stage runs
/// (the white level depends on the input).
fn build(a: &dyn StageArgs) -> Result<DemosaicStage> {
    let mut p = DemosaicParams::default();
    if let Some(v) = a.get("pattern") {
        p.pattern = v.parse().map_err(|e| a.error("pattern", &e))?;
    }
    if let Some(v) = a.get("method") {
        p.method = v.parse().map_err(|e| a.error("method", &e))?;
    }
    p.black = a.finite("black")?.unwrap_or(0.0);
    for (i, k) in ["wb_r", "wb_g", "wb_b"].into_iter().enumerate() {
        p.gains[i] = a.finite(k)?.unwrap_or(1.0);
    }
    if let Some(c) = a.channels("channels")? {
        p.channels = c;
    }
    if let Some(v) = a.get("bits") {
        p.bits = Some(
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|b| (8..=16).contains(b))
                .ok_or_else(|| a.error("bits", &format_args!("bits={v} is not 8..16")))?,
        );
    }
    if p.black < 0.0 {
        return Err(a.error("black", &"the black level must be >= 0"));
    }
    for (k, g) in ["wb_r", "wb_g", "wb_b"].iter().zip(p.gains) {
        if !(0.0..=super::MAX_GAIN).contains(&g) {
            return Err(a.error(
                k,
                &format_args!("{k}={g} is not within 0..={}", super::MAX_GAIN),
            ));
        }
    }
    Ok(DemosaicStage {
        params: p,
        out: a.sample_type("out")?,
    })
}

/// Demosaics a raw frame into an image of type `out`.
fn demosaic_to(
    d: &dyn Dispatch,
    raw: &Raw<'_>,
    p: &DemosaicParams,
    out: SampleType,
) -> Result<(DynImage, RunReport)> {
    Ok(match out {
        SampleType::U8 => d
            .demosaic_report::<u8>(raw, p)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::U16 => d
            .demosaic_report::<u16>(raw, p)
            .map(|(o, r)| (o.into(), r))?,
        SampleType::F32 => d
            .demosaic_report::<f32>(raw, p)
            .map(|(o, r)| (o.into(), r))?,
    })
}

impl StageOp for DemosaicStage {
    fn op_params(&self) -> crate::ops::OpParams {
        crate::ops::OpParams::new(self.params)
    }

    fn def(&self) -> &'static StageDef {
        &DEMOSAIC
    }

    fn options(&self) -> Vec<String> {
        let p = &self.params;
        let mut opts = vec![format!("pattern={}:method={}", p.pattern, p.method)];
        if p.black != 0.0 {
            opts.push(format!("black={}", p.black));
        }
        for (k, g) in ["wb_r", "wb_g", "wb_b"].iter().zip(p.gains) {
            if g != 1.0 {
                opts.push(format!("{k}={g}"));
            }
        }
        if p.channels != 3 {
            opts.push(format!("channels={}", p.channels));
        }
        if let Some(b) = p.bits {
            opts.push(format!("bits={b}"));
        }
        if let Some(o) = self.out {
            opts.push(format!("out={o}"));
        }
        opts
    }

    fn output_type(&self, input: SampleType) -> SampleType {
        self.out.unwrap_or(input)
    }

    fn output_shape(&self, (w, h, _): (usize, usize, usize)) -> (usize, usize, usize) {
        (w, h, self.params.channels)
    }

    /// Samples of at most 16 bits times a gain of at most
    /// [`super::MAX_GAIN`] (full scale at most 65535).
    fn bound(&self, input: f64) -> Option<f64> {
        Some(input.max(65535.0) * f64::from(super::MAX_GAIN))
    }

    fn reads_raw(&self) -> bool {
        true
    }

    /// Every variant runs stacked frames as its launch's third dimension.
    fn stacks(&self, _variants: &[&str]) -> bool {
        true
    }

    fn adapt_to_frame(
        &self,
        a: &dyn StageArgs,
        _index: usize,
        frame: &mut FrameFacts<'_>,
    ) -> Result<Adapted> {
        let fmt = frame.format;
        let Some(want) = frame.pattern else {
            return Err(a.name_error(&format_args!(
                "mono frames have no colour filter array (the format is \
                 {fmt}); use a bayer_* format, or leave out the demosaic stage"
            )));
        };
        let mut params = self.params;
        if a.get("pattern").is_none() {
            params.pattern = want;
        } else if params.pattern != want {
            return Err(a.error(
                "pattern",
                &format_args!(
                    "pattern={} contradicts the format {fmt}, whose frames {} {want}{}",
                    params.pattern,
                    if frame.transposed_by.is_empty() {
                        "are"
                    } else {
                        "become"
                    },
                    after_transposes(&frame.transposed_by),
                ),
            ));
        }
        if frame.camera_values {
            check_bits(a, frame.format, &mut params.bits)?;
        }
        Ok(Adapted::Done(Box::new(DemosaicStage { params, ..*self })))
    }

    fn run_host(
        &self,
        d: &dyn Dispatch,
        input: DynImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let out = self.out.unwrap_or(input.sample_type());
        let raw = match &input {
            DynImage::U8(i) => Raw::U8(i),
            DynImage::U16(i) => Raw::U16(i),
            DynImage::F32(_) => {
                return Err(Error::InvalidArgument(
                    "demosaic reads 8- or 16-bit Bayer frames, not f32 images".into(),
                ))
            }
        };
        let (img, r) = demosaic_to(d, &raw, &self.params, out)?;
        record.reports.push(r);
        Ok(img)
    }

    /// Reads the frame directly ([`RawImage::as_raw`]), so packed frames go
    /// to the device packed and are unpacked there. Without `out=` it writes
    /// the sample type of [`RawImage::sample`] (`u16` for packed frames), as
    /// it would from the unpacked image.
    fn run_host_raw(
        &self,
        d: &dyn Dispatch,
        frame: RawImage,
        record: &mut StageRecord,
    ) -> Result<DynImage> {
        let out = self.out.unwrap_or(frame.sample());
        let (img, r) = demosaic_to(d, &frame.as_raw(), &self.params, out)?;
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

impl FrameFacts<'_> {
    /// The frame as a stage after a transpose (stage `index`) sees it: rows
    /// and columns swap, so the colour filter pattern is transposed.
    pub fn transpose(&mut self, index: usize) {
        self.pattern = self.pattern.map(transposed);
        self.transposed_by.push(index);
    }
}

/// Fills in, or checks, a demosaic stage's `bits` from the format.
fn check_bits(
    a: &dyn StageArgs,
    fmt: &crate::image::raw::RawFormat,
    bits: &mut Option<u32>,
) -> Result<()> {
    match (fmt.depth, *bits) {
        (Depth::Bits8, None) => {}
        (_, None) => *bits = Some(fmt.bits()),
        (Depth::Bits16 { .. } | Depth::Bits16Be { .. }, Some(_)) => {}
        (_, Some(b)) if b == fmt.bits() => {}
        (_, Some(b)) => {
            return Err(a.error(
                "bits",
                &format_args!(
                    "bits={b} does not fit the format {fmt}, whose samples have {} bits",
                    fmt.bits()
                ),
            ))
        }
    }
    Ok(())
}

/// The pattern of a transposed frame: rows and columns swap, so the red
/// site at (x, y) moves to (y, x).
pub fn transposed(p: Pattern) -> Pattern {
    match p {
        Pattern::Grbg => Pattern::Gbrg,
        Pattern::Gbrg => Pattern::Grbg,
        same => same,
    }
}

/// ` after the transpose in stage 1` (or stages 1, 3), or nothing.
fn after_transposes(stages: &[usize]) -> String {
    match stages {
        [] => String::new(),
        [one] => format!(" after the transpose in stage {one}"),
        many => format!(
            " after the transposes in stages {}",
            many.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposing_twice_gives_the_pattern_back() {
        for p in Pattern::ALL {
            assert_eq!(transposed(transposed(p)), p);
            let (rx, ry) = p.red_at();
            assert_eq!(transposed(p).red_at(), (ry, rx));
        }
    }
}
