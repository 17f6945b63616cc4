//! Measurement shared by `filterctl bench` and the criterion benches: every
//! variant of an operation timed with OpenCL profiling events (kernel time,
//! data already on the device), the CPU path timed by wall clock, and a plain
//! copy kernel on the same device as the bandwidth yardstick.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::{self, OpSpec};

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Operations by name (`transpose`, `minmax`, `normalize`); empty = all.
    pub ops: Vec<String>,
    /// Image width in pixels.
    pub width: usize,
    /// Image height in pixels.
    pub height: usize,
    /// Samples per pixel.
    pub channels: usize,
    /// Sample type.
    pub sample: SampleType,
    /// Timed runs per variant (after one warm-up run).
    pub iters: usize,
    /// Also time the rayon CPU path.
    pub cpu: bool,
    /// Gaussian sigma (both axes), for `gaussian`.
    pub sigma: f32,
    /// Method for `demosaic`, which reads a 1-channel RGGB frame of the
    /// sample type (u8 or u16) and writes `channels` (3 or 4; 4 when
    /// `channels` is 1) of the same type.
    pub demosaic_method: ops::demosaic::Method,
}

/// One measured variant.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    /// Operation.
    pub op: String,
    /// Variant (`cpu` for the rayon path).
    pub variant: String,
    /// Median time per run, ms.
    pub median_ms: f64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Megapixels per second at the median.
    pub mp_per_s: f64,
    /// Bytes read plus bytes written per second at the median, GB/s (1e9).
    pub gb_per_s: f64,
    /// `gb_per_s` as a percentage of the copy kernel's, on OpenCL rows.
    pub pct_of_copy: Option<f64>,
    /// Why the variant could not be measured, if it could not.
    pub error: Option<String>,
}

/// Everything one `bench` run measured.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The OpenCL device, or the CPU backend's description.
    pub device: String,
    /// Image width.
    pub width: usize,
    /// Image height.
    pub height: usize,
    /// Channels.
    pub channels: usize,
    /// Sample type.
    pub sample: SampleType,
    /// Copy kernel bandwidth (read + write), GB/s; `None` without a device.
    pub copy_gb_per_s: Option<f64>,
    /// One row per variant.
    pub rows: Vec<BenchRow>,
}

/// Bytes each operation must read plus write per pixel, for samples of
/// `sample` bytes and `channels` per pixel. For multi-pass operations
/// (gaussian) this is the one-read, one-write minimum, so GB/s is an
/// effective figure against the copy. `demosaic` and `colormap` read one
/// sample and write a pixel of [`demosaic_channels`].
pub fn bytes_per_pixel(op: &str, sample: usize, channels: usize) -> usize {
    match op {
        "minmax" => sample * channels,
        "demosaic" | "colormap" => sample * (1 + demosaic_channels(channels)),
        _ => 2 * sample * channels,
    }
}

/// The output channels of `demosaic` and `colormap` rows for a configured
/// channel count.
pub fn demosaic_channels(channels: usize) -> usize {
    if channels == 3 {
        3
    } else {
        4
    }
}

/// The demosaic bench parameters: RGGB, `method`, `channels` out.
fn demosaic_params(cfg: &BenchConfig) -> ops::demosaic::DemosaicParams {
    ops::demosaic::DemosaicParams {
        channels: demosaic_channels(cfg.channels),
        ..ops::demosaic::DemosaicParams::new(ops::demosaic::Pattern::Rggb, cfg.demosaic_method)
    }
}

/// The colormap bench parameters: Turbo over the middle 80% of the type's
/// range (explicit, so no `minmax` is timed), `channels` out.
pub fn colormap_params<T: Sample>(channels: usize) -> ops::colormap::ColormapParams {
    let full = T::TYPE.full_scale();
    ops::colormap::ColormapParams {
        min: Some(0.1 * full),
        max: Some(0.9 * full),
        channels: demosaic_channels(channels),
        ..Default::default()
    }
}

/// A 1-channel image as a demosaic input (u8 or u16 only).
fn as_raw<T: Sample>(img: &Image<T>) -> Result<ops::demosaic::Raw<'_>> {
    let any = img as &dyn std::any::Any;
    if let Some(i) = any.downcast_ref::<Image<u8>>() {
        return Ok(ops::demosaic::Raw::U8(i));
    }
    if let Some(i) = any.downcast_ref::<Image<u16>>() {
        return Ok(ops::demosaic::Raw::U16(i));
    }
    Err(Error::arg(
        "demosaic benches read u8 or u16 frames (--type u8|u16)",
    ))
}

/// Median, min and max of a set of durations, in ms.
fn stats(mut t: Vec<Duration>) -> (f64, f64, f64) {
    t.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(t[t.len() / 2]), ms(t[0]), ms(t[t.len() - 1]))
}

/// A reproducible pseudo-random image (xorshift), spanning the type's range.
pub fn test_image<T: Sample>(width: usize, height: usize, channels: usize) -> Result<Image<T>> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let full = T::TYPE.full_scale();
    Image::from_fn(width, height, channels, |_, _, _| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        T::from_f32((s >> 40) as f32 / (1u64 << 24) as f32 * full)
    })
}

/// Runs the measurements `cfg` asks for on `engine`'s backend.
pub fn run(engine: &Engine, cfg: &BenchConfig) -> Result<BenchReport> {
    match cfg.sample {
        SampleType::U8 => run_typed::<u8>(engine, cfg),
        SampleType::U16 => run_typed::<u16>(engine, cfg),
        SampleType::F32 => run_typed::<f32>(engine, cfg),
    }
}

fn selected(cfg: &BenchConfig) -> Result<Vec<&'static OpSpec>> {
    if cfg.ops.is_empty() {
        return Ok(ops::OPS.to_vec());
    }
    cfg.ops
        .iter()
        .map(|n| {
            ops::OPS
                .iter()
                .copied()
                .find(|o| o.name == n)
                .ok_or_else(|| {
                    Error::arg(format!(
                        "unknown operation '{n}'; known: {}",
                        ops::OPS
                            .iter()
                            .map(|o| o.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
        })
        .collect()
}

fn run_typed<T: Sample>(engine: &Engine, cfg: &BenchConfig) -> Result<BenchReport> {
    if cfg.iters == 0 {
        return Err(Error::arg("iters must be at least 1"));
    }
    let ops = selected(cfg)?;
    let img = test_image::<T>(cfg.width, cfg.height, cfg.channels)?;
    // Demosaic and colormap read a 1-channel image.
    let cfa = if cfg.channels == 1 {
        img.clone()
    } else {
        test_image::<T>(cfg.width, cfg.height, 1)?
    };
    let pixels = img.pixel_count() as f64;
    let mut report = BenchReport {
        device: engine.backend().describe(),
        width: cfg.width,
        height: cfg.height,
        channels: cfg.channels,
        sample: T::TYPE,
        copy_gb_per_s: None,
        rows: Vec::new(),
    };
    let row = |op: &str, variant: &str, times: Vec<Duration>, copy: Option<f64>| {
        let (median, min, max) = stats(times);
        let bpp = bytes_per_pixel(op, T::TYPE.size(), cfg.channels);
        let gb = pixels * bpp as f64 / (median * 1e-3) / 1e9;
        BenchRow {
            op: op.to_string(),
            variant: variant.to_string(),
            median_ms: median,
            min_ms: min,
            max_ms: max,
            mp_per_s: pixels / (median * 1e-3) / 1e6,
            gb_per_s: gb,
            pct_of_copy: copy.map(|c| 100.0 * gb / c),
            error: None,
        }
    };
    #[cfg(feature = "opencl")]
    if let crate::Backend::OpenCl(dev) = engine.backend() {
        let copy = device::copy_bandwidth(
            engine,
            dev,
            img.pixel_count() * T::TYPE.size() * cfg.channels,
            cfg.iters,
        )?;
        report.copy_gb_per_s = Some(copy);
        let input = crate::backend::opencl::DeviceImage::upload(dev, &img)?;
        for op in &ops {
            for spec in op.variants {
                let measured = if op.name == ops::demosaic::SPEC.name {
                    device::time_demosaic(
                        engine,
                        dev,
                        spec.name,
                        &cfa,
                        &demosaic_params(cfg),
                        cfg.iters,
                    )
                } else if op.name == ops::colormap::SPEC.name {
                    device::time_colormap(
                        engine,
                        dev,
                        spec.name,
                        &cfa,
                        &colormap_params::<T>(cfg.channels),
                        cfg.iters,
                    )
                } else {
                    device::time_variant(
                        engine, dev, op.name, spec.name, &input, cfg.iters, cfg.sigma,
                    )
                };
                report.rows.push(match measured {
                    Ok(times) => row(op.name, spec.name, times, Some(copy)),
                    Err(e) => BenchRow {
                        op: op.name.into(),
                        variant: spec.name.into(),
                        median_ms: f64::NAN,
                        min_ms: f64::NAN,
                        max_ms: f64::NAN,
                        mp_per_s: f64::NAN,
                        gb_per_s: f64::NAN,
                        pct_of_copy: None,
                        error: Some(e.to_string()),
                    },
                });
            }
        }
    }
    if cfg.cpu {
        for op in &ops {
            let times = if op.name == ops::demosaic::SPEC.name {
                // A frame type demosaic does not read is the row's error.
                match time_cpu_demosaic(&cfa, &demosaic_params(cfg), cfg.iters) {
                    Ok(t) => t,
                    Err(e) => {
                        report.rows.push(BenchRow {
                            op: op.name.into(),
                            variant: ops::CPU.into(),
                            median_ms: f64::NAN,
                            min_ms: f64::NAN,
                            max_ms: f64::NAN,
                            mp_per_s: f64::NAN,
                            gb_per_s: f64::NAN,
                            pct_of_copy: None,
                            error: Some(e.to_string()),
                        });
                        continue;
                    }
                }
            } else if op.name == ops::colormap::SPEC.name {
                time_cpu_colormap(&cfa, &colormap_params::<T>(cfg.channels), cfg.iters)?
            } else {
                time_cpu(op.name, &img, cfg.iters, cfg.sigma)?
            };
            report.rows.push(row(op.name, ops::CPU, times, None));
        }
    }
    Ok(report)
}

fn time_cpu_demosaic<T: Sample>(
    cfa: &Image<T>,
    p: &ops::demosaic::DemosaicParams,
    iters: usize,
) -> Result<Vec<Duration>> {
    let raw = as_raw(cfa)?;
    let lv = p.levels(&raw, T::TYPE)?;
    let once = || ops::demosaic::cpu::demosaic::<T>(&raw, p, &lv).map(drop);
    once()?;
    (0..iters)
        .map(|_| {
            let t = Instant::now();
            once()?;
            Ok(t.elapsed())
        })
        .collect()
}

fn time_cpu_colormap<T: Sample>(
    gray: &Image<T>,
    p: &ops::colormap::ColormapParams,
    iters: usize,
) -> Result<Vec<Duration>> {
    let range = p.range(None)?;
    let once = || ops::colormap::cpu::colormap::<T, T>(gray, p, range).map(drop);
    once()?;
    (0..iters)
        .map(|_| {
            let t = Instant::now();
            once()?;
            Ok(t.elapsed())
        })
        .collect()
}

fn time_cpu<T: Sample>(
    op: &str,
    img: &Image<T>,
    iters: usize,
    sigma: f32,
) -> Result<Vec<Duration>> {
    let gp = ops::gaussian::GaussianParams::new(sigma);
    let k = ops::normalize::Coefficients::explicit(&ops::normalize::NormalizeParams {
        sub: Some(1.0),
        factor: Some(0.5),
    })?;
    let once = || -> Result<()> {
        match op {
            "transpose" => drop(ops::transpose::cpu::transpose(img)?),
            "minmax" => drop(ops::minmax::cpu::minmax(img)),
            "gaussian" => drop(ops::gaussian::cpu::gaussian(img, &gp)?),
            _ => drop(ops::normalize::cpu::normalize::<T, T>(img, &k)?),
        }
        Ok(())
    };
    once()?;
    (0..iters)
        .map(|_| {
            let t = Instant::now();
            once()?;
            Ok(t.elapsed())
        })
        .collect()
}

/// Device-side timing helpers (also used by the criterion benches).
#[cfg(feature = "opencl")]
pub mod device {
    use std::time::Duration;

    use crate::backend::opencl::{Arg, ClDevice, DeviceBuffer, DeviceImage};
    use crate::engine::Engine;
    use crate::error::{Error, Result};
    use crate::image::{Sample, SampleType};
    use crate::ops::{self, OpSpec, Shape, VariantSpec};

    /// The copy variant: a plain float4 copy, kept out of the op tables
    /// because it is a yardstick, not an operation.
    static COPY: VariantSpec = VariantSpec {
        name: "f4",
        summary: "float4 copy, the bandwidth yardstick",
        files: &["copy.cl"],
        options: "",
        local: [256, 1],
        local_bytes: ops::no_local,
        supports: ops::any_shape,
        tolerance: 0.0,
    };

    /// Read + write GB/s of the copy kernel over `bytes` (rounded up to 16),
    /// the median of `iters` runs (at least 1) after a warm-up.
    pub fn copy_bandwidth(
        engine: &Engine,
        dev: &ClDevice,
        bytes: usize,
        iters: usize,
    ) -> Result<f64> {
        let n4 = bytes.div_ceil(16).max(1);
        let shape = Shape::new(n4, 1, 4, SampleType::F32);
        let k = engine
            .programs()
            .kernel(dev, "copy", &COPY, &shape, "", "copy_f4")?;
        let a = DeviceBuffer::<[f32; 4]>::new(dev, n4)?;
        let b = DeviceBuffer::<[f32; 4]>::new(dev, n4)?;
        let iters = iters.max(1);
        let mut times = Vec::with_capacity(iters);
        for i in 0..=iters {
            let ev = dev.launch(
                &k,
                &[n4],
                &[256],
                &[Arg::buf(&a), Arg::buf(&b), Arg::int(n4)?],
            )?;
            let t = ev.duration()?.unwrap_or_default();
            if i > 0 {
                times.push(t);
            }
        }
        times.sort();
        let median = times[times.len() / 2].as_secs_f64();
        Ok(2.0 * (n4 * 16) as f64 / median / 1e9)
    }

    /// Kernel times of `iters` runs of `demosaic` variant `variant` on a
    /// frame already on the device (u8 or u16), into an output of the
    /// frame's sample type with `p.channels`.
    pub fn time_demosaic<T: Sample>(
        engine: &Engine,
        dev: &ClDevice,
        variant: &str,
        cfa: &crate::image::Image<T>,
        p: &ops::demosaic::DemosaicParams,
        iters: usize,
    ) -> Result<Vec<Duration>> {
        use ops::demosaic::SPEC;
        let spec = SPEC.variant(variant).ok_or_else(|| Error::UnknownVariant {
            op: SPEC.name.into(),
            variant: variant.into(),
            known: SPEC.names().join(", "),
        })?;
        let mut once = demosaic_runner(engine, dev, spec, cfa, p)?;
        once()?;
        (0..iters).map(|_| once()).collect()
    }

    /// One kernel-only run of `demosaic` variant `spec` per call, on `cfa`
    /// (u8 or u16, uploaded once) into a device output of the frame's sample
    /// type with `p.channels`, returning the kernel time: what
    /// [`time_demosaic`] and the tuner's kernel mode time.
    pub fn demosaic_runner<'a, T: Sample>(
        engine: &'a Engine,
        dev: &'a ClDevice,
        spec: &'a VariantSpec,
        cfa: &crate::image::Image<T>,
        p: &ops::demosaic::DemosaicParams,
    ) -> Result<Box<dyn FnMut() -> Result<Duration> + 'a>> {
        let raw = super::as_raw(cfa)?;
        let lv = p.levels(&raw, T::TYPE)?;
        let shape = Shape::new(cfa.width(), cfa.height(), 1, T::TYPE)
            .with_params(ops::OpParams::Demosaic(*p));
        spec.check(&shape, dev.info().local_mem)
            .map_err(|reason| Error::Unsupported {
                op: ops::demosaic::SPEC.name.into(),
                variant: spec.name.into(),
                reason,
            })?;
        let input = ops::demosaic::device::DeviceRaw::upload(dev, &raw)?;
        let out = DeviceImage::<T>::new(dev, cfa.width(), cfa.height(), p.channels)?;
        let p = *p;
        Ok(Box::new(move || {
            ops::demosaic::device::launch(
                engine.programs(),
                dev,
                spec,
                input.raw_arg(),
                &out,
                &p,
                &lv,
                None,
            )
        }))
    }

    /// Kernel times of `iters` runs of `colormap` variant `variant` on the
    /// 1-channel `gray` (uploaded once) into a device output of its sample
    /// type with `p.channels`; `p` needs an explicit range.
    pub fn time_colormap<T: Sample>(
        engine: &Engine,
        dev: &ClDevice,
        variant: &str,
        gray: &crate::image::Image<T>,
        p: &ops::colormap::ColormapParams,
        iters: usize,
    ) -> Result<Vec<Duration>> {
        use ops::colormap::SPEC;
        let spec = SPEC.variant(variant).ok_or_else(|| Error::UnknownVariant {
            op: SPEC.name.into(),
            variant: variant.into(),
            known: SPEC.names().join(", "),
        })?;
        let input = DeviceImage::upload(dev, gray)?;
        let mut once = colormap_runner(engine, dev, spec, &input, p)?;
        once()?;
        (0..iters).map(|_| once()).collect()
    }

    /// One kernel-only run of `colormap` variant `spec` per call, on the
    /// 1-channel `input` (already on the device) into a device output of its
    /// sample type with `p.channels`, returning the kernel time: what
    /// [`time_colormap`] and the tuner's kernel mode time. `p` needs an
    /// explicit range.
    pub fn colormap_runner<'a, T: Sample>(
        engine: &'a Engine,
        dev: &'a ClDevice,
        spec: &'a VariantSpec,
        input: &'a DeviceImage<T>,
        p: &ops::colormap::ColormapParams,
    ) -> Result<Box<dyn FnMut() -> Result<Duration> + 'a>> {
        let (lo, hi) = p.range(None)?;
        let shape = Shape::new(input.width(), input.height(), 1, T::TYPE)
            .with_params(ops::OpParams::Colormap(*p));
        spec.check(&shape, dev.info().local_mem)
            .map_err(|reason| Error::Unsupported {
                op: ops::colormap::SPEC.name.into(),
                variant: spec.name.into(),
                reason,
            })?;
        let out = DeviceImage::<T>::new(dev, input.width(), input.height(), p.channels)?;
        let p = *p;
        let full = T::TYPE.full_scale();
        Ok(Box::new(move || {
            ops::colormap::device::launch(
                engine.programs(),
                dev,
                spec,
                input,
                &out,
                &p,
                lo,
                hi,
                full,
            )
        }))
    }

    /// Kernel times of `iters` runs of variant `variant` of operation `op`
    /// (names from the tables in [`crate::ops::OPS`]), after one warm-up.
    /// `sigma` is used by `gaussian`, which is timed on its working image:
    /// f32 gray or RGBA input only (other inputs add conversion passes).
    pub fn time_variant<T: Sample>(
        engine: &Engine,
        dev: &ClDevice,
        op: &str,
        variant: &str,
        input: &DeviceImage<T>,
        iters: usize,
        sigma: f32,
    ) -> Result<Vec<Duration>> {
        let op: &OpSpec = ops::OPS
            .iter()
            .copied()
            .find(|o| o.name == op)
            .ok_or_else(|| Error::arg(format!("no operation '{op}'")))?;
        let spec = op.variant(variant).ok_or_else(|| Error::UnknownVariant {
            op: op.name.into(),
            variant: variant.into(),
            known: op.names().join(", "),
        })?;
        let gp = ops::gaussian::GaussianParams::new(sigma);
        let mut once = variant_runner(engine, dev, op, spec, input, &gp)?;
        once()?;
        (0..iters).map(|_| once()).collect()
    }

    /// One kernel-only run of `spec` per call, on `input` (already on the
    /// device), returning the kernels' device time: what [`time_variant`]
    /// and the tuner's kernel mode time. The shape is checked against the
    /// variant first; `gp` is used by `gaussian`, which runs on its working
    /// image (f32 gray or RGBA input only: other inputs add conversion passes).
    /// `colormap` runs as [`colormap_runner`] with the bench parameters
    /// (`input` must be 1-channel).
    pub fn variant_runner<'a, T: Sample>(
        engine: &'a Engine,
        dev: &'a ClDevice,
        op: &'a OpSpec,
        spec: &'a VariantSpec,
        input: &'a DeviceImage<T>,
        gp: &ops::gaussian::GaussianParams,
    ) -> Result<Box<dyn FnMut() -> Result<Duration> + 'a>> {
        let gp = *gp;
        let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE)
            .with_params(ops::OpParams::Gaussian(gp));
        spec.check(&shape, dev.info().local_mem)
            .map_err(|reason| Error::Unsupported {
                op: op.name.into(),
                variant: spec.name.into(),
                reason,
            })?;
        let (w, h, c) = (input.width(), input.height(), input.channels());
        if op.name == ops::colormap::SPEC.name {
            let p = super::colormap_params::<T>(c);
            return colormap_runner(engine, dev, spec, input, &p);
        }
        if op.name == "gaussian" {
            let work = (input as &dyn std::any::Any)
                .downcast_ref::<DeviceImage<f32>>()
                .filter(|i| i.channels() != 3)
                .ok_or_else(|| Error::Unsupported {
                    op: op.name.into(),
                    variant: spec.name.into(),
                    reason: "kernel-only timing runs on f32 gray or RGBA images".into(),
                })?;
            return Ok(Box::new(move || {
                ops::gaussian::device::blur_w(engine.programs(), dev, spec, work, &gp).map(|r| r.1)
            }));
        }
        let k = ops::normalize::Coefficients::explicit(&ops::normalize::NormalizeParams {
            sub: Some(1.0),
            factor: Some(0.5),
        })?;
        let out = DeviceImage::<T>::new(
            dev,
            if op.name == "transpose" { h } else { w },
            if op.name == "transpose" { w } else { h },
            c,
        )?;
        Ok(Box::new(move || -> Result<Duration> {
            Ok(match op.name {
                "transpose" => {
                    ops::transpose::device::launch(engine.programs(), dev, spec, input, &out)?
                        .duration()?
                        .unwrap_or_default()
                }
                "minmax" => ops::minmax::device::launch(engine.programs(), dev, spec, input)?.1,
                _ => ops::normalize::device::launch::<T, T>(
                    engine.programs(),
                    dev,
                    spec,
                    input,
                    &out,
                    &k,
                )?
                .duration()?
                .unwrap_or_default(),
            })
        }))
    }
}
