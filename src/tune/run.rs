//! The tuner: for each key, gate every candidate against the reference, time
//! the survivors in kernel and end-to-end mode within the budget, re-time
//! the best few interleaved, and record the entry. Operations come from
//! the registry ([`crate::ops::tuning`]); the measuring is in `measure`.

use std::time::{Duration, Instant};

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
use crate::tune::{Asked, Formats, KeyResult, Progress, TuneConfig, TuneReport, COMMON_FORMATS};

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
    /// Channels per pixel, as the operation's case reads them.
    pub channels: usize,
    /// What the job's shape carries (as the operation's entry made them).
    pub params: OpParams,
    /// The sample type measured.
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

/// The formats to tune `t` on: for [`Formats::Only`], its type, or, for an
/// operation that does not read it (deband reads u8 and u16; demosaic no
/// f32), the first of u8, u16, f32 that it reads, so that a mixed `--ops`
/// list tunes every operation; for [`Formats::Common`], those of
/// [`COMMON_FORMATS`] that it takes ([`Tunable::takes`]).
fn formats(t: &dyn Tunable, formats: Formats) -> Result<Vec<(SampleType, usize)>> {
    match formats {
        // Said at info: a format an operation never takes is not a key the
        // user asked for (unlike a size it refuses, said at warn in `plan`).
        Formats::Common => Ok(COMMON_FORMATS
            .into_iter()
            .filter(|&(s, c)| match t.takes(s, c) {
                Ok(()) => true,
                Err(why) => {
                    log::info!("{} is not tuned on {s}x{c}: {why}", t.spec().name);
                    false
                }
            })
            .collect()),
        Formats::Only(sample, channels) => {
            let why = match t.takes(sample, channels) {
                Ok(()) => return Ok(vec![(sample, channels)]),
                Err(why) => why,
            };
            let other = [SampleType::U8, SampleType::U16, SampleType::F32]
                .into_iter()
                .find(|&s| t.takes(s, channels).is_ok())
                .ok_or_else(|| Error::arg(why.clone()))?;
            log::warn!("{} is tuned on {other}: {why}", t.spec().name);
            Ok(vec![(other, channels)])
        }
    }
}

/// Adds `job` under `key` unless another job has that key (logged).
fn push_job(jobs: &mut Vec<(TuneKey, Job)>, key: TuneKey, job: Job) {
    if let Some((_, j)) = jobs.iter().find(|(k, _)| *k == key) {
        log::info!(
            "{} {}x{}x{} {}: same key as {}x{}x{} {} ({key}); measured once",
            job.op.name,
            job.width,
            job.height,
            job.channels,
            job.sample,
            j.width,
            j.height,
            j.channels,
            j.sample
        );
        return;
    }
    jobs.push((key, job));
}

/// One job per operation, format, size and parameter set, validated
/// before anything runs; jobs with the key of an earlier one are measured
/// once. A format an operation cannot take is an error when asked for
/// alone, and left out of the common formats (logged).
fn plan(cfg: &TuneConfig, fp: &str) -> Result<Vec<(TuneKey, Job)>> {
    let sigmas = if cfg.sigmas.is_empty() {
        vec![2.0]
    } else {
        cfg.sigmas.clone()
    };
    let mut jobs: Vec<(TuneKey, Job)> = Vec::new();
    let mut said = std::collections::HashSet::new();
    let selected = tuning::selected(&cfg.ops)?;
    // With several operations, one that refuses the asked format is left
    // out (said below); asked alone, its refusal is the answer.
    let skip_refusals = cfg.formats == Formats::Common || selected.len() > 1;
    for tunable in selected {
        let op = tunable.spec();
        let formats = match formats(tunable, cfg.formats) {
            Ok(f) => f,
            Err(e) if skip_refusals => {
                log::warn!("{} is not tuned: {e}", op.name);
                continue;
            }
            Err(e) => return Err(e),
        };
        for (sample, channels) in formats {
            let ask = Ask {
                sigmas: &sigmas,
                channels,
                method: None,
                bins: None,
            };
            for &(width, height) in &cfg.sizes {
                for params in tunable.params(&ask)? {
                    // Validates the size, channels and parameters.
                    let size = (width, height, channels);
                    let shape = match tunable.job_shape(sample, size, params.clone()) {
                        Ok(shape) => shape,
                        // Said at warn: a size the operation refuses (an odd
                        // Bayer size) leaves its keys untuned, which the
                        // summary table would not show.
                        Err(e) if skip_refusals => {
                            let why = format!(
                                "{} is not tuned on {sample}x{channels} at {width}x{height}: {e}",
                                op.name
                            );
                            // Once, not once per parameter set.
                            if said.insert(why.clone()) {
                                log::warn!("{why}");
                            }
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    let key = TuneKey::new(fp, op.name, &shape);
                    let job = Job {
                        op,
                        tunable,
                        width,
                        height,
                        channels,
                        params,
                        sample,
                    };
                    push_job(&mut jobs, key, job);
                }
            }
        }
    }
    Ok(jobs)
}

/// One job per request, with the request's own parameters; a request
/// whose key the operation's tuning entry cannot reproduce is left out
/// with a warning.
fn plan_requests(requests: &[Asked], fp: &str) -> Result<Vec<(TuneKey, Job)>> {
    let mut jobs: Vec<(TuneKey, Job)> = Vec::new();
    for a in requests {
        let tunable = tuning::tunable(a.op)?;
        let s = &a.shape;
        let key = TuneKey::new(fp, a.op.name, s);
        let size = (s.width, s.height, s.channels);
        let same = tunable
            .job_shape(s.sample, size, s.params.clone())
            .map(|shape| TuneKey::new(fp, a.op.name, &shape) == key);
        match same {
            Ok(true) => {}
            Ok(false) => {
                log::warn!("{key}: the tuner cannot measure this request's key; left out");
                continue;
            }
            Err(e) => {
                log::warn!("{key}: left out: {e}");
                continue;
            }
        }
        let job = Job {
            op: a.op,
            tunable,
            width: s.width,
            height: s.height,
            channels: s.channels,
            params: s.params.clone(),
            sample: s.sample,
        };
        push_job(&mut jobs, key, job);
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
    run_jobs(engine, dev, fp, &jobs, cfg.budget, cfg.force, progress)
}

/// [`tune`] for exactly these requests (as [`crate::tune::requests_for`] finds
/// them), each with its own shape and parameters, within `budget`.
pub fn tune_requests(
    engine: &Engine,
    requests: &[Asked],
    budget: Duration,
    force: bool,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<TuneReport> {
    let dev = device(engine)?;
    let fp = fingerprint(dev.info());
    let jobs = plan_requests(requests, &fp)?;
    run_jobs(engine, dev, fp, &jobs, budget, force, progress)
}

/// Measures the jobs in order (see [`tune`]).
fn run_jobs(
    engine: &Engine,
    dev: std::sync::Arc<ClDevice>,
    fp: String,
    jobs: &[(TuneKey, Job)],
    budget: Duration,
    force: bool,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<TuneReport> {
    let tuning = engine.tuning();
    // Per candidate: gate, kernel mode, end to end; per mode: the re-timing.
    let steps = |op: &OpSpec| 3 * (engine.variants(op).len() + 1) + 2;
    let total: usize = jobs.iter().map(|(_, j)| steps(j.op)).sum();
    let mut done = 0;
    let start = Instant::now();
    let mut keys = Vec::new();
    let cached: Vec<Option<TuneEntry>> = jobs
        .iter()
        .map(|(k, _)| if force { None } else { tuning.exact(k) })
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
        let share = budget.saturating_sub(start.elapsed()) / left.max(1) as u32;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(ops: &[&str], formats: Formats) -> TuneConfig {
        TuneConfig {
            ops: ops.iter().map(|s| s.to_string()).collect(),
            sizes: vec![(64, 48)],
            formats,
            sigmas: vec![],
            budget: Duration::from_secs(1),
            force: false,
        }
    }

    /// Among several operations, one that takes no gray pixels is left
    /// out; asked alone, its refusal is the error, with one prefix.
    #[test]
    fn a_refusing_operation_is_skipped_only_among_others() {
        let all = tuning::selected(&[]).unwrap();
        let gray_only = |t: &&&dyn Tunable| {
            [SampleType::U8, SampleType::U16, SampleType::F32]
                .into_iter()
                .all(|s| t.takes(s, 1).is_err())
        };
        let refusing = all.iter().find(gray_only).expect("an RGB-only operation");
        let taking = all
            .iter()
            .find(|t| t.takes(SampleType::U8, 1).is_ok())
            .expect("an operation on gray u8");
        let (no, yes) = (refusing.spec().name, taking.spec().name);
        let gray = Formats::Only(SampleType::U8, 1);
        let jobs = plan(&config(&[no, yes], gray), "fp").unwrap();
        assert!(!jobs.is_empty());
        assert!(
            jobs.iter().all(|(_, j)| j.op.name == yes),
            "{no} was planned"
        );
        let err = plan(&config(&[no], gray), "fp").err().expect("refused");
        let msg = err.to_string();
        assert_eq!(msg.matches("invalid").count(), 1, "{msg}");
    }
}
