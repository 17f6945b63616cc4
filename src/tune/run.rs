//! The tuner: for each key, gate every candidate against the reference, time
//! the survivors in kernel and end-to-end mode within the budget, re-time
//! the best few interleaved, and record the entry. Operations come from
//! the registry ([`crate::ops::tuning`]); the measuring is in `measure`.

use std::time::Instant;

use super::measure::Measure;
use crate::backend::opencl::ClDevice;
use crate::backend::Backend;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Tunable};
use crate::ops::{OpParams, OpSpec};
use crate::tune::key::{fingerprint, TuneKey};
use crate::tune::store::TuneEntry;
use crate::tune::{KeyResult, Progress, TuneConfig, TuneReport};

/// One key to measure.
pub(super) struct Job {
    /// The operation.
    pub op: &'static OpSpec,
    /// Its tuning entry.
    pub tunable: &'static dyn Tunable,
    /// Image width.
    pub width: usize,
    /// Image height.
    pub height: usize,
    /// What the job's shape carries (as the operation's entry made them).
    pub params: OpParams,
    /// The sample type measured: `--type`, or the first the operation reads
    /// when it does not read that one.
    pub sample: SampleType,
}

/// The engine's OpenCL device, or why tuning cannot run.
fn device(engine: &Engine) -> Result<std::sync::Arc<ClDevice>> {
    match engine.backend() {
        Backend::OpenCl(d) => Ok(d.clone()),
        Backend::Cpu => Err(Error::arg(
            "tuning needs an OpenCL device: the engine runs on the CPU backend, \
             which has only the `cpu` path (select a device with --device)",
        )),
    }
}

/// The operations `cfg` asks for, each with the sample type it is tuned
/// on: `cfg.sample`, or, for an operation that does not read it (deband
/// reads u8 and u16; demosaic no f32), the first of u8, u16, f32 that it
/// reads, so that a mixed `--ops` list tunes every operation.
fn readable(cfg: &TuneConfig) -> Result<Vec<(&'static dyn Tunable, SampleType)>> {
    let mut kept = Vec::new();
    for t in tuning::selected(&cfg.ops)? {
        let why = match t.reads(cfg.sample) {
            Ok(()) => {
                kept.push((t, cfg.sample));
                continue;
            }
            Err(why) => why,
        };
        let other = [SampleType::U8, SampleType::U16, SampleType::F32]
            .into_iter()
            .find(|&s| t.reads(s).is_ok());
        match other {
            Some(s) => {
                log::warn!("{} is tuned on {s}: {why}", t.spec().name);
                kept.push((t, s));
            }
            None => return Err(Error::arg(why)),
        }
    }
    Ok(kept)
}

/// One job per operation, size and parameter set, validated before
/// anything runs; sizes whose key another job has are measured once.
fn plan(cfg: &TuneConfig, fp: &str) -> Result<Vec<(TuneKey, Job)>> {
    let sigmas = if cfg.sigmas.is_empty() {
        vec![2.0]
    } else {
        cfg.sigmas.clone()
    };
    let ask = Ask {
        sigmas: &sigmas,
        channels: cfg.channels,
        method: None,
    };
    let mut jobs: Vec<(TuneKey, Job)> = Vec::new();
    for (tunable, sample) in readable(cfg)? {
        let op = tunable.spec();
        for &(width, height) in &cfg.sizes {
            for params in tunable.params(&ask)? {
                // Validates the size, channels and parameters.
                let size = (width, height, cfg.channels);
                let shape = tunable.job_shape(sample, size, params.clone())?;
                let key = TuneKey::new(fp, op.name, &shape);
                if let Some((_, j)) = jobs.iter().find(|(k, _)| *k == key) {
                    log::info!(
                        "{} {width}x{height}: same key as {}x{} ({key}); measured once",
                        op.name,
                        j.width,
                        j.height
                    );
                    continue;
                }
                let job = Job {
                    op,
                    tunable,
                    width,
                    height,
                    params,
                    sample,
                };
                jobs.push((key, job));
            }
        }
    }
    Ok(jobs)
}

/// The checksum over `op`'s variant names and kernel sources.
fn checksum(engine: &Engine, op: &OpSpec) -> Result<String> {
    let sum = engine.tuning().checksum(op.name).ok_or_else(|| {
        Error::arg(format!(
            "cannot tune {}: its kernel sources could not be read (see the warning above)",
            op.name
        ))
    })?;
    Ok(sum.to_string())
}

/// Tunes the keys `cfg` describes on `engine`'s OpenCL device, records each
/// entry in the engine (and its cache file) as soon as it is measured, and
/// returns them all. Keys with a valid entry are taken from the cache
/// unless `cfg.force` is set.
pub fn tune(
    engine: &Engine,
    cfg: &TuneConfig,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<TuneReport> {
    let dev = device(engine)?;
    if cfg.sizes.is_empty() {
        return Err(Error::arg("tuning needs at least one image size"));
    }
    let fp = fingerprint(dev.info());
    let jobs = plan(cfg, &fp)?;
    let tuning = engine.tuning();
    // Per candidate: gate, kernel mode, end to end; per mode: the re-timing.
    let steps = |op: &OpSpec| 3 * (engine.variants(op).len() + 1) + 2;
    let total: usize = jobs.iter().map(|(_, j)| steps(j.op)).sum();
    let mut done = 0;
    let start = Instant::now();
    let mut keys = Vec::new();
    let cached: Vec<Option<TuneEntry>> = jobs
        .iter()
        .map(|(k, _)| if cfg.force { None } else { tuning.exact(k) })
        .collect();
    let mut left = cached.iter().filter(|c| c.is_none()).count();
    for ((key, job), cached) in jobs.iter().zip(cached) {
        if let Some(entry) = cached {
            done += steps(job.op);
            progress(&Progress {
                done,
                total,
                message: &format!("{key}: cached"),
            });
            keys.push(KeyResult {
                cached: true,
                entry,
                dispatch: None,
            });
            continue;
        }
        let share = cfg.budget.saturating_sub(start.elapsed()) / left.max(1) as u32;
        left = left.saturating_sub(1);
        let mut step = |message: &str| {
            done += 1;
            progress(&Progress {
                done,
                total,
                message,
            });
        };
        let checksum = checksum(engine, job.op)?;
        let mut m = Measure {
            engine,
            dev: &dev,
            key,
            job,
            sample: job.sample,
            channels: cfg.channels,
            deadline: Instant::now() + share,
            step: &mut step,
        };
        let (entry, dispatch) = m.entry(&checksum)?;
        keys.push(KeyResult {
            cached: false,
            entry,
            dispatch,
        });
    }
    Ok(TuneReport {
        device: engine.backend().describe(),
        fingerprint: fp,
        file: tuning.file().map(|p| p.to_path_buf()),
        keys,
    })
}
