//! The tuner: for each key, gate every candidate against the reference, time
//! the survivors in kernel and end-to-end mode within the budget, re-time
//! the best few interleaved, and record the entry.

use std::time::{Duration, Instant, SystemTime};

use super::cases::Case;
use super::key::{fingerprint, TuneKey};
use super::store::{Candidate, Mode, Status, Timing, TuneEntry};
use super::{DispatchCheck, KeyResult, Progress, TuneConfig, TuneReport};
use crate::backend::opencl::{ClDevice, DeviceImage};
use crate::backend::Backend;
use crate::bench;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{Sample, SampleType};
use crate::ops::colormap::ColormapParams;
use crate::ops::demosaic::{self, DemosaicParams, Method, Pattern};
use crate::ops::gaussian::GaussianParams;
use crate::ops::{self, OpParams, OpSpec, Shape, VariantSpec, CPU};

/// Fewest timed runs per candidate and mode, whatever the budget says.
const MIN_RUNS: usize = 3;
/// Most timed runs per candidate and mode (fast candidates on a generous
/// budget: more runs steady the median of microsecond-scale calls).
const MAX_RUNS: usize = 100;
/// How many of the fastest candidates are re-timed interleaved.
const RETIME_TOP: usize = 3;

struct Job {
    op: &'static OpSpec,
    width: usize,
    height: usize,
    /// What the job's shape carries: gaussian sigma, demosaic method.
    params: OpParams,
}

/// One job per parameter set an operation is tuned at: each sigma for
/// `gaussian`, each method for `demosaic`, one otherwise (for `colormap`,
/// Turbo into RGB or RGBA: every map costs the same).
fn job_params(op: &OpSpec, sigmas: &[f32], channels: usize) -> Vec<OpParams> {
    match op.name {
        "gaussian" => sigmas
            .iter()
            .map(|&s| OpParams::Gaussian(GaussianParams::new(s)))
            .collect(),
        "demosaic" => Method::ALL
            .iter()
            .map(|&m| {
                OpParams::Demosaic(DemosaicParams {
                    channels: bench::demosaic_channels(channels),
                    ..DemosaicParams::new(Pattern::Rggb, m)
                })
            })
            .collect(),
        "colormap" => vec![OpParams::Colormap(ColormapParams {
            channels: bench::demosaic_channels(channels),
            ..ColormapParams::default()
        })],
        _ => vec![OpParams::None],
    }
}

fn selected(names: &[String]) -> Result<Vec<&'static OpSpec>> {
    if names.is_empty() {
        return Ok(ops::OPS.to_vec());
    }
    names
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

/// Tunes the keys `cfg` describes on `engine`'s OpenCL device, records each
/// entry in the engine (and its cache file) as soon as it is measured, and
/// returns them all. Keys with a valid entry are taken from the cache
/// unless `cfg.force` is set.
pub fn tune(
    engine: &Engine,
    cfg: &TuneConfig,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<TuneReport> {
    let dev = match engine.backend() {
        Backend::OpenCl(d) => d.clone(),
        Backend::Cpu => {
            return Err(Error::arg(
                "tuning needs an OpenCL device: the engine runs on the CPU backend, \
                 which has only the `cpu` path (select a device with --device)",
            ))
        }
    };
    if cfg.sizes.is_empty() {
        return Err(Error::arg("tuning needs at least one image size"));
    }
    let mut ops = selected(&cfg.ops)?;
    if cfg.sample == SampleType::F32 && ops.iter().any(|o| o.name == demosaic::SPEC.name) {
        // Bayer frames are integers; asked for by name it is an error.
        if cfg.ops.is_empty() {
            log::info!("demosaic not tuned: it reads u8 or u16 frames (tune it with --type u8)");
            ops.retain(|o| o.name != demosaic::SPEC.name);
        } else {
            return Err(Error::arg(
                "demosaic reads u8 or u16 Bayer frames: tune it with --type u8 or --type u16",
            ));
        }
    }
    let sigmas = if cfg.sigmas.is_empty() {
        vec![2.0]
    } else {
        cfg.sigmas.clone()
    };
    let fp = fingerprint(dev.info());
    let mut jobs: Vec<(TuneKey, Job)> = Vec::new();
    for op in &ops {
        for &(width, height) in &cfg.sizes {
            for params in job_params(op, &sigmas, cfg.channels) {
                // Validates the size, channels and parameters before anything runs.
                let shape = job_shape(cfg.sample, width, height, cfg.channels, params)?;
                let key = TuneKey::new(&fp, op.name, &shape);
                if let Some((_, j)) = jobs.iter().find(|(k, _)| *k == key) {
                    log::info!(
                        "{} {width}x{height}: same key as {}x{} ({key}); measured once",
                        op.name,
                        j.width,
                        j.height
                    );
                    continue;
                }
                jobs.push((
                    key,
                    Job {
                        op,
                        width,
                        height,
                        params,
                    },
                ));
            }
        }
    }
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
        let checksum = tuning
            .checksum(job.op.name)
            .ok_or_else(|| {
                Error::arg(format!(
                    "cannot tune {}: its kernel sources could not be read (see the warning above)",
                    job.op.name
                ))
            })?
            .to_string();
        let mut m = Measure {
            engine,
            dev: &dev,
            key,
            job,
            deadline: Instant::now() + share,
            step: &mut step,
        };
        let (entry, dispatch) = match cfg.sample {
            SampleType::U8 => m.typed::<u8>(cfg.channels, &checksum)?,
            SampleType::U16 => m.typed::<u16>(cfg.channels, &checksum)?,
            SampleType::F32 => m.typed::<f32>(cfg.channels, &checksum)?,
        };
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

/// The shape the engine's dispatch sees for a job (gaussian jobs carry a
/// sigma; demosaic and colormap jobs read a 1-channel image and carry
/// their parameters),
/// after checking the size, channels and parameters.
fn job_shape(sample: SampleType, w: usize, h: usize, c: usize, params: OpParams) -> Result<Shape> {
    crate::image::check_shape(w, h, c)?;
    match params {
        OpParams::Gaussian(p) => {
            p.validate()?;
            if p.sigma_x <= 0.0 {
                return Err(Error::arg("tuning gaussian needs a sigma > 0"));
            }
        }
        OpParams::Demosaic(_) => {
            demosaic::check_cfa_size(w, h)?;
            return Ok(Shape::new(w, h, 1, sample).with_params(params));
        }
        OpParams::Colormap(p) => {
            p.validate()?;
            crate::image::check_shape(w, h, p.channels)?;
            return Ok(Shape::new(w, h, 1, sample).with_params(params));
        }
        _ => {}
    }
    Ok(Shape::new(w, h, c, sample).with_params(params))
}

/// Sorted samples' figures.
fn timing(
    mut t: Vec<Duration>,
    pixels: f64,
    bytes: f64,
    copy: Option<f64>,
    retimed: bool,
) -> Timing {
    t.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = t.len();
    let median = ms(t[n / 2]);
    let iqr = ms(t[(3 * n / 4).min(n - 1)]) - ms(t[n / 4]);
    let secs = (median * 1e-3).max(1e-12);
    let gb = pixels * bytes / secs / 1e9;
    Timing {
        median_ms: median,
        min_ms: ms(t[0]),
        max_ms: ms(t[n - 1]),
        spread_pct: if median > 0.0 {
            100.0 * iqr / median
        } else {
            0.0
        },
        runs: n,
        retimed,
        mp_per_s: pixels / secs / 1e6,
        gb_per_s: gb,
        pct_of_copy: copy.map(|c| 100.0 * gb / c),
    }
}

/// A candidate's timed runner in one mode: one call per run, returning the
/// time to record.
type Runner<'a> = Box<dyn FnMut() -> Result<Duration> + 'a>;

struct Measure<'a, 'b> {
    engine: &'a Engine,
    dev: &'a ClDevice,
    key: &'a TuneKey,
    job: &'a Job,
    deadline: Instant,
    step: &'b mut dyn FnMut(&str),
}

impl Measure<'_, '_> {
    /// Timed runs of `run`: one warm-up, then as many as `share` allows
    /// (estimated from the first timed run's wall time), within
    /// [`MIN_RUNS`]..=[`MAX_RUNS`].
    fn sample(run: &mut Runner<'_>, share: Duration) -> Result<Vec<Duration>> {
        run()?;
        let wall = Instant::now();
        let first = run()?;
        let per_run = wall.elapsed().max(Duration::from_micros(1));
        let n = ((share.as_secs_f64() / per_run.as_secs_f64()) as usize).clamp(MIN_RUNS, MAX_RUNS);
        let mut v = Vec::with_capacity(n);
        v.push(first);
        while v.len() < n {
            v.push(run()?);
        }
        Ok(v)
    }

    /// The time left until the deadline, split over `parts`.
    fn share(&self, parts: usize) -> Duration {
        self.deadline.saturating_duration_since(Instant::now()) / parts.max(1) as u32
    }

    /// Gates and times every candidate of the job, records the entry in
    /// the engine (and its file), and checks the engine's dispatch against
    /// the end-to-end winner.
    fn typed<T: Sample>(
        &mut self,
        channels: usize,
        checksum: &str,
    ) -> Result<(TuneEntry, Option<DispatchCheck>)> {
        let job = self.job;
        let (engine, dev, op) = (self.engine, self.dev, job.op);
        let case = Case::<T>::new(op, job.width, job.height, channels, job.params)?;
        let shape = case.shape();
        let want = case.reference()?;
        let local_mem = dev.info().local_mem;
        let mut names: Vec<&'static str> = engine.variants(op).iter().map(|v| v.name).collect();
        names.push(CPU);

        // The correctness gate.
        let mut cands: Vec<Candidate> = Vec::new();
        for &name in &names {
            (self.step)(&format!("{}: checking {name}", self.key));
            let unsupported = engine
                .variant(op, name)
                .and_then(|spec| spec.check(&shape, local_mem).err());
            let status = match unsupported {
                Some(why) => Status::Unsupported(why),
                None => {
                    let forced = engine.with_variant(Some(op.name), name);
                    match case.run(&forced) {
                        Err(e) => Status::Disqualified(e.to_string()),
                        Ok((_, r)) if r.variant != name => Status::Disqualified(format!(
                            "variant {} ran instead (fallbacks: {})",
                            r.variant,
                            r.fallbacks.join("; ")
                        )),
                        Ok((out, _)) => {
                            let tol = engine
                                .variant(op, name)
                                .map_or(case.cpu_tolerance(), |v| v.tolerance);
                            match case.check(&out, &want, tol) {
                                Ok(()) => Status::Ok,
                                Err(why) => Status::Disqualified(why),
                            }
                        }
                    }
                }
            };
            if let Status::Disqualified(why) = &status {
                log::warn!("{}: {name} disqualified: {why}", self.key);
            }
            cands.push(Candidate {
                variant: name.to_string(),
                status,
                kernel: None,
                kernel_note: None,
                e2e: None,
                e2e_note: None,
            });
        }
        let passed: Vec<usize> = (0..cands.len())
            .filter(|&i| cands[i].status == Status::Ok)
            .collect();

        let pixels = (job.width * job.height) as f64;
        let bytes = bench::bytes_per_pixel(op.name, T::TYPE.size(), channels) as f64;
        let copy = bench::device::copy_bandwidth(
            engine,
            dev,
            job.width * job.height * T::TYPE.size() * channels,
            5,
        )?;
        let input = DeviceImage::upload(dev, &case.img)?;

        // Kernel mode: the OpenCL candidates that passed.
        let kernel_idx: Vec<(usize, &'static VariantSpec)> = passed
            .iter()
            .filter_map(|&i| engine.variant(op, &cands[i].variant).map(|v| (i, v)))
            .collect();
        // Timings left in this key: each candidate per mode, one re-timing
        // round per mode, and the check of the engine's dispatch.
        let mut parts = kernel_idx.len() + passed.len() + 3;
        let mut kernel_runs: Vec<(usize, Runner<'_>)> = Vec::new();
        for c in cands.iter_mut() {
            if c.variant == CPU {
                c.kernel_note = Some("the CPU path has no kernel-only mode".into());
            } else if c.status != Status::Ok {
                c.kernel_note = Some("not timed: did not pass the gate".into());
            }
        }
        for &(i, spec) in &kernel_idx {
            (self.step)(&format!("{}: kernel mode, {}", self.key, spec.name));
            let share = self.share(parts);
            parts = parts.saturating_sub(1);
            let runner = match (&case.demosaic, &case.colormap) {
                (Some(p), _) => bench::device::demosaic_runner(engine, dev, spec, &case.img, p),
                (_, Some(p)) => bench::device::colormap_runner(engine, dev, spec, &input, p),
                _ => bench::device::variant_runner(engine, dev, op, spec, &input, &case.gauss),
            };
            let timed =
                runner.and_then(|mut runner| Ok((Self::sample(&mut runner, share)?, runner)));
            match timed {
                Ok((t, runner)) => {
                    cands[i].kernel = Some(timing(t, pixels, bytes, Some(copy), false));
                    kernel_runs.push((i, runner));
                }
                Err(e) => cands[i].kernel_note = Some(format!("not timed: {e}")),
            }
        }
        let share = self.share(parts);
        parts = parts.saturating_sub(1);
        let kernel_winner = self.retime(&mut cands, kernel_runs, Mode::Kernel, share, |t| {
            timing(t, pixels, bytes, Some(copy), true)
        });

        // End-to-end mode: every candidate that passed, the CPU path included.
        let forced: Vec<(usize, Engine)> = passed
            .iter()
            .map(|&i| (i, engine.with_variant(Some(op.name), &cands[i].variant)))
            .collect();
        let mut e2e_runs: Vec<(usize, Runner<'_>)> = Vec::new();
        for (i, e) in &forced {
            let i = *i;
            (self.step)(&format!("{}: end to end, {}", self.key, cands[i].variant));
            let case = &case;
            let mut runner: Runner<'_> = Box::new(move || {
                let t = Instant::now();
                case.run(e)?;
                Ok(t.elapsed())
            });
            let share = self.share(parts);
            parts = parts.saturating_sub(1);
            match Self::sample(&mut runner, share) {
                Ok(t) => {
                    cands[i].e2e = Some(timing(t, pixels, bytes, None, false));
                    e2e_runs.push((i, runner));
                }
                Err(e) => cands[i].e2e_note = Some(format!("not timed: {e}")),
            }
        }
        for c in cands.iter_mut().filter(|c| c.status != Status::Ok) {
            c.e2e_note = Some("not timed: did not pass the gate".into());
        }
        let share = self.share(parts);
        let e2e_winner = self.retime(&mut cands, e2e_runs, Mode::E2e, share, |t| {
            timing(t, pixels, bytes, None, true)
        });
        // Steps of candidates that were not timed, so the bar ends full.
        for _ in kernel_idx.len()..names.len() {
            (self.step)(&format!("{}: done", self.key));
        }
        for _ in passed.len()..names.len() {
            (self.step)(&format!("{}: done", self.key));
        }
        let entry = TuneEntry {
            key: self.key.clone(),
            checksum: checksum.to_string(),
            width: job.width,
            height: job.height,
            sigma: match job.params {
                OpParams::Gaussian(p) => Some(p.sigma_x),
                _ => None,
            },
            device_name: engine.backend().describe(),
            copy_gb_per_s: Some(copy),
            tuned_at: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            kernel_winner,
            e2e_winner,
            candidates: cands,
        };
        engine.tuning().record(entry.clone());
        let dispatch = match &entry.e2e_winner {
            Some(w) => match self.check_dispatch(&case, w) {
                Ok(c) => Some(c),
                Err(e) => {
                    log::warn!("{}: the engine's tuned call failed: {e}", self.key);
                    None
                }
            },
            None => None,
        };
        Ok((entry, dispatch))
    }

    /// Times the engine's unforced call and the forced `winner` end to end,
    /// alternating which goes first each round, with what is left of the
    /// key's budget (at least [`MIN_RUNS`] rounds).
    fn check_dispatch<T: Sample>(&mut self, case: &Case<T>, winner: &str) -> Result<DispatchCheck> {
        let engine = self.engine;
        let forced = engine.with_variant(Some(case.op.name), winner);
        let time = |e: &Engine| -> Result<(Duration, String)> {
            let t = Instant::now();
            let (_, r) = case.run(e)?;
            Ok((t.elapsed(), r.variant))
        };
        // Warm-up, and the per-round estimate.
        let wall = Instant::now();
        let (_, variant) = time(engine)?;
        time(&forced)?;
        let round = wall.elapsed().max(Duration::from_micros(1));
        let rounds = ((self.share(1).as_secs_f64() / round.as_secs_f64()) as usize)
            .clamp(MIN_RUNS, MAX_RUNS);
        let (mut mine, mut best) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        for r in 0..rounds {
            if r % 2 == 0 {
                mine.push(time(engine)?.0);
                best.push(time(&forced)?.0);
            } else {
                best.push(time(&forced)?.0);
                mine.push(time(engine)?.0);
            }
        }
        let median = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e3
        };
        Ok(DispatchCheck {
            variant,
            median_ms: median(mine),
            winner_median_ms: median(best),
            runs: rounds,
        })
    }

    /// Re-times the [`RETIME_TOP`] fastest of `runs` in interleaved rounds
    /// (each round runs each once, starting one further along), replaces
    /// their figures, and returns the fastest candidate of `mode` by median.
    fn retime(
        &mut self,
        cands: &mut [Candidate],
        mut runs: Vec<(usize, Runner<'_>)>,
        mode: Mode,
        share: Duration,
        figures: impl Fn(Vec<Duration>) -> Timing,
    ) -> Option<String> {
        let median = |c: &Candidate| c.timing(mode).map_or(f64::INFINITY, |t| t.median_ms);
        runs.sort_by(|a, b| median(&cands[a.0]).total_cmp(&median(&cands[b.0])));
        runs.truncate(RETIME_TOP);
        (self.step)(&format!(
            "{}: {mode} re-timing the best {}",
            self.key,
            runs.len()
        ));
        if runs.is_empty() {
            return None;
        }
        if runs.len() > 1 {
            let round: f64 = runs
                .iter()
                .map(|(i, _)| median(&cands[*i]) * 1e-3)
                .sum::<f64>()
                .max(1e-6);
            let rounds = ((share.as_secs_f64() / round) as usize).clamp(MIN_RUNS, MAX_RUNS);
            // `None` once a candidate fails: it is dropped from this mode.
            let mut samples: Vec<Option<Vec<Duration>>> =
                vec![Some(Vec::with_capacity(rounds)); runs.len()];
            let mut failed: Vec<Option<String>> = vec![None; runs.len()];
            for r in 0..rounds {
                for k in 0..runs.len() {
                    let j = (r + k) % runs.len();
                    if let Some(v) = &mut samples[j] {
                        match (runs[j].1)() {
                            Ok(t) => v.push(t),
                            Err(e) => {
                                failed[j] = Some(format!("failed while re-timing: {e}"));
                                samples[j] = None;
                            }
                        }
                    }
                }
            }
            for (((i, _), t), why) in runs.iter().zip(samples).zip(failed) {
                let c = &mut cands[*i];
                let t = t.map(&figures);
                match mode {
                    Mode::Kernel => (c.kernel, c.kernel_note) = (t, why),
                    Mode::E2e => (c.e2e, c.e2e_note) = (t, why),
                }
            }
        }
        // The fastest by the final figures: usually one of the re-timed, but
        // a candidate whose first figures beat the re-timed ones wins too.
        cands
            .iter()
            .filter(|c| c.timing(mode).is_some())
            .min_by(|a, b| median(a).total_cmp(&median(b)))
            .map(|c| c.variant.clone())
    }
}
