//! Measurement shared by `filterctl bench` and the criterion benches: every
//! variant of an operation timed with OpenCL profiling events (kernel time,
//! data already on the device), the CPU path timed by wall clock, and a plain
//! copy kernel on the same device as the bandwidth yardstick. Operations
//! come from the registry: each one's inputs and runners are in its
//! `tune.rs` ([`crate::ops::tuning`]).

pub mod device;

use std::time::Duration;

use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Tunable};
use crate::ops::{self, OpParams};

pub use crate::ops::tuning::test_image;

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
    /// Blur sigma (both axes), for operations that take one.
    pub sigma: f32,
    /// The method, by name, of operations that have several (the Bayer
    /// interpolation: `bilinear`, `mhc` or `edge`; such an operation reads
    /// a 1-channel frame of the sample type, u8 or u16, and writes
    /// `channels`, 3 or 4, 4 when `channels` is 1, of the same type).
    pub method: String,
    /// Histogram bins over the type's default range; `None`: 256 and 4096.
    pub bins: Option<usize>,
}

/// One measured variant.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    /// Operation.
    pub op: String,
    /// Variant (`cpu` for the rayon path).
    pub variant: String,
    /// The parameter set's tuning bucket (`ycc samples4`), for operations
    /// that measure several; `None` for those without parameters.
    pub params: Option<String>,
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

impl BenchRow {
    /// The row of a variant that could not be measured.
    fn failed(op: &str, variant: &str, params: &OpParams, e: &Error) -> Self {
        BenchRow {
            op: op.into(),
            variant: variant.into(),
            params: params_label(params),
            median_ms: f64::NAN,
            min_ms: f64::NAN,
            max_ms: f64::NAN,
            mp_per_s: f64::NAN,
            gb_per_s: f64::NAN,
            pct_of_copy: None,
            error: Some(e.to_string()),
        }
    }
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

/// Bytes operation `op` must read plus write per pixel, for samples of
/// `sample` bytes and `channels` per pixel (see
/// [`Tunable::bytes_per_pixel`]; one read and one write of the pixel for
/// an operation without a tuning entry).
pub fn bytes_per_pixel(op: &str, sample: usize, channels: usize) -> usize {
    tuning::tunables()
        .find(|t| t.spec().name == op)
        .map_or(2 * sample * channels, |t| {
            t.bytes_per_pixel(sample, channels)
        })
}

/// A parameter set as the rows name it: its tuning bucket's words.
fn params_label(params: &OpParams) -> Option<String> {
    params
        .bucket_words()
        .map(|(a, b)| format!("{a} {b}").trim().to_string())
}

/// Median, min and max of a set of durations, in ms.
fn spread(mut t: Vec<Duration>) -> (f64, f64, f64) {
    t.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(t[t.len() / 2]), ms(t[0]), ms(t[t.len() - 1]))
}

/// The least time a CPU row's warm-up calls take.
const CPU_WARM: Duration = Duration::from_millis(50);

/// How long every thread of the rayon pool spins before the first CPU row.
const POOL_WARM: Duration = Duration::from_millis(150);

/// Keeps every thread of the rayon pool busy for [`POOL_WARM`]. Measured
/// on a 2-core VM (s44): in a process's first 0.1 s or so the pool's
/// second thread took part in about half of the calls of a 0.14 ms
/// reduction (the median of 200 was 0.28 ms), so the first row that a
/// `bench` timed was slower than the same calls later, even after
/// [`warm_up`].
fn warm_pool() {
    let until = std::time::Instant::now() + POOL_WARM;
    rayon::broadcast(|_| {
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
    });
}

/// Calls `once` back to back for at least [`CPU_WARM`] (and at least once)
/// before a CPU row is timed, so that the timed calls find the rayon
/// pool's threads awake, as a peer's back-to-back calls do. Measured on a
/// 2-core VM (docs/PERFORMANCE.md, s44): after the pause in which a row's
/// input is made, the first calls of a 0.14 ms reduction ran on one thread
/// (0.3-0.45 ms, and up to 1.2 ms), so `--iters 3` timed a waking pool.
fn warm_up(once: &mut tuning::Runner<'_>) -> Result<()> {
    let start = std::time::Instant::now();
    once()?;
    while start.elapsed() < CPU_WARM {
        once()?;
    }
    Ok(())
}

/// The operations to time, each with the parameter sets `cfg` asks for.
type Plan = Vec<(&'static dyn Tunable, Vec<OpParams>)>;

/// A run's settings, plan and report.
struct Bench<'a> {
    cfg: &'a BenchConfig,
    plan: Plan,
    report: BenchReport,
}

impl Bench<'_> {
    /// The case of `t` with `params` at the configured size and type.
    fn case(&self, t: &dyn Tunable, params: OpParams) -> Result<Box<dyn Case>> {
        let c = self.cfg;
        t.case(c.sample, (c.width, c.height, c.channels), params)
    }

    /// The row of `variant` of `op` with `params` timed at `times`.
    fn row(
        &self,
        (t, params): (&dyn Tunable, &OpParams),
        variant: &str,
        times: Vec<Duration>,
        copy: Option<f64>,
    ) -> BenchRow {
        let pixels = (self.cfg.width * self.cfg.height) as f64;
        let (mid, min, max) = spread(times);
        let bpp = t.bytes_per_pixel(self.cfg.sample.size(), self.cfg.channels);
        let gb = pixels * bpp as f64 / (mid * 1e-3) / 1e9;
        BenchRow {
            op: t.spec().name.to_string(),
            variant: variant.to_string(),
            params: params_label(params),
            median_ms: mid,
            min_ms: min,
            max_ms: max,
            mp_per_s: pixels / (mid * 1e-3) / 1e6,
            gb_per_s: gb,
            pct_of_copy: copy.map(|c| 100.0 * gb / c),
            error: None,
        }
    }

    /// The rayon CPU path's wall times: a case or a runner that cannot be
    /// built (a sample type or channel count the operation does not read)
    /// is the row's error.
    fn cpu_rows(&mut self) -> Result<()> {
        warm_pool();
        for (t, sets) in &self.plan {
            for params in sets.iter() {
                let case = match self.case(*t, params.clone()) {
                    Ok(c) => c,
                    Err(e) => {
                        let row = BenchRow::failed(t.spec().name, ops::CPU, params, &e);
                        self.report.rows.push(row);
                        continue;
                    }
                };
                let mut once = match case.cpu_runner() {
                    Ok(r) => r,
                    Err(e) => {
                        let row = BenchRow::failed(t.spec().name, ops::CPU, params, &e);
                        self.report.rows.push(row);
                        continue;
                    }
                };
                warm_up(&mut once)?;
                let times = (0..self.cfg.iters)
                    .map(|_| once())
                    .collect::<Result<Vec<_>>>()?;
                let row = self.row((*t, params), ops::CPU, times, None);
                self.report.rows.push(row);
            }
        }
        Ok(())
    }
}

/// Runs the measurements `cfg` asks for on `engine`'s backend.
pub fn run(engine: &Engine, cfg: &BenchConfig) -> Result<BenchReport> {
    if cfg.iters == 0 {
        return Err(Error::arg("iters must be at least 1"));
    }
    let ask = Ask {
        sigmas: &[cfg.sigma],
        channels: cfg.channels,
        method: Some(&cfg.method),
        bins: cfg.bins,
    };
    let plan = tuning::selected(&cfg.ops)?
        .into_iter()
        .map(|t| Ok((t, t.params(&ask)?)))
        .collect::<Result<Plan>>()?;
    crate::image::check_shape(cfg.width, cfg.height, cfg.channels)?;
    let mut bench = Bench {
        cfg,
        plan,
        report: BenchReport {
            device: engine.backend().describe(),
            width: cfg.width,
            height: cfg.height,
            channels: cfg.channels,
            sample: cfg.sample,
            copy_gb_per_s: None,
            rows: Vec::new(),
        },
    };
    if let Some(dev) = engine.backend().device() {
        bench.device_rows(engine, dev)?;
    }
    if cfg.cpu {
        bench.cpu_rows()?;
    }
    Ok(bench.report)
}
