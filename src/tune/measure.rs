//! Measuring one key: the correctness gate, kernel-only and end-to-end
//! timing, the interleaved re-timing of the best few, and the check of the
//! engine's own dispatch. Generic: the operation's [`Case`] does the rest.

use std::time::{Duration, Instant, SystemTime};

use super::run::Job;
use crate::backend::opencl::ClDevice;
use crate::bench;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::tuning::{Case, Expected, Runner};
use crate::ops::{VariantSpec, CPU};
use crate::tune::key::TuneKey;
use crate::tune::store::{Candidate, Mode, Status, Timing, TuneEntry};
use crate::tune::DispatchCheck;

/// Fewest timed runs per candidate and mode, whatever the budget says.
const MIN_RUNS: usize = 3;
/// Most timed runs per candidate and mode (fast candidates on a generous
/// budget: more runs steady the median of microsecond-scale calls).
const MAX_RUNS: usize = 100;
/// How many of the fastest candidates are re-timed interleaved.
const RETIME_TOP: usize = 3;

/// What timings are divided by: the key's pixels, the bytes each moves, and
/// the copy kernel's bandwidth (GB/s).
struct Scale {
    pixels: f64,
    bytes: f64,
    copy: f64,
}

impl Scale {
    /// Sorted samples' figures; kernel mode compares with the copy.
    fn timing(&self, mut t: Vec<Duration>, mode: Mode, retimed: bool) -> Timing {
        let copy = match mode {
            Mode::Kernel => Some(self.copy),
            Mode::E2e => None,
        };
        t.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let n = t.len();
        let mid = ms(t[n / 2]);
        let iqr = ms(t[(3 * n / 4).min(n - 1)]) - ms(t[n / 4]);
        let secs = (mid * 1e-3).max(1e-12);
        let gb = self.pixels * self.bytes / secs / 1e9;
        Timing {
            median_ms: mid,
            min_ms: ms(t[0]),
            max_ms: ms(t[n - 1]),
            spread_pct: if mid > 0.0 { 100.0 * iqr / mid } else { 0.0 },
            runs: n,
            retimed,
            mp_per_s: self.pixels / secs / 1e6,
            gb_per_s: gb,
            pct_of_copy: copy.map(|c| 100.0 * gb / c),
        }
    }
}

/// One key's measurement.
pub(super) struct Measure<'a, 'b> {
    pub engine: &'a Engine,
    pub dev: &'a ClDevice,
    pub key: &'a TuneKey,
    pub job: &'a Job,
    pub deadline: Instant,
    pub step: &'b mut dyn FnMut(&str),
}

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

impl Measure<'_, '_> {
    /// The time left until the deadline, split over `parts`.
    fn share(&self, parts: usize) -> Duration {
        self.deadline.saturating_duration_since(Instant::now()) / parts.max(1) as u32
    }

    /// Gates and times every candidate of the job, records the entry in
    /// the engine (and its file), and checks the engine's dispatch against
    /// the end-to-end winner.
    pub fn entry(&mut self, checksum: &str) -> Result<(TuneEntry, Option<DispatchCheck>)> {
        let (engine, dev, job) = (self.engine, self.dev, self.job);
        let size = (job.width, job.height, job.channels);
        let case = job.tunable.case(job.sample, size, job.params.clone())?;
        let case = &*case;
        let want = case.reference()?;
        let mut names: Vec<&'static str> = engine.variants(job.op).iter().map(|v| v.name).collect();
        names.push(CPU);
        let mut cands = self.gate(case, &want, &names);
        let passed: Vec<usize> = (0..cands.len())
            .filter(|&i| cands[i].status == Status::Ok)
            .collect();
        let (sample, channels) = (job.sample.size(), job.channels);
        let scale = Scale {
            pixels: (job.width * job.height) as f64,
            bytes: job.tunable.bytes_per_pixel(sample, channels) as f64,
            copy: bench::device::copy_bandwidth(
                engine,
                dev,
                job.width * job.height * sample * channels,
                5,
            )?,
        };
        let kernel: Vec<(usize, &'static VariantSpec)> = passed
            .iter()
            .filter_map(|&i| engine.variant(job.op, &cands[i].variant).map(|v| (i, v)))
            .collect();
        // Timings left in this key: each candidate per mode, one re-timing
        // round per mode, and the check of the engine's dispatch.
        let mut parts = kernel.len() + passed.len() + 3;
        let kernel_winner = self.kernel_mode(case, &mut cands, &kernel, &scale, &mut parts);
        let e2e_winner = self.e2e_mode(case, &mut cands, &passed, &scale, &mut parts);
        // Steps of candidates that were not timed, so the bar ends full.
        for _ in kernel.len()..names.len() {
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
            sigma: job.tunable.sigma(&job.params),
            device_name: engine.backend().describe(),
            copy_gb_per_s: Some(scale.copy),
            tuned_at: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            kernel_winner,
            e2e_winner,
            candidates: cands,
        };
        engine.tuning().record(entry.clone());
        let dispatch = match &entry.e2e_winner {
            Some(w) => match self.check_dispatch(case, w) {
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

    /// The correctness gate: each candidate (the CPU path last) runs the
    /// case forced, and passes when its result is within its tolerance.
    fn gate(&mut self, case: &dyn Case, want: &Expected, names: &[&'static str]) -> Vec<Candidate> {
        let (engine, op) = (self.engine, self.job.op);
        let shape = case.shape();
        let info = self.dev.info();
        let mut cands: Vec<Candidate> = Vec::new();
        for &name in names {
            (self.step)(&format!("{}: checking {name}", self.key));
            let unsupported = engine
                .variant(op, name)
                .and_then(|spec| spec.check_on(&shape, info).err());
            let status = match unsupported {
                Some(why) => Status::Unsupported(why),
                None => {
                    let forced = engine.with_variant(Some(op.name), name);
                    match case.run(&forced) {
                        // The device refuses it for this request (a work-group
                        // larger than the kernel allows, out of resources): it
                        // cannot run here, which is not a wrong result.
                        Err(e @ Error::Unsupported { .. }) => Status::Unsupported(e.to_string()),
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
                            match case.check(&out, want, tol) {
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
        cands
    }

    /// Kernel mode: the OpenCL candidates that passed (`kernel`), on data
    /// already on the device; returns the winner.
    fn kernel_mode(
        &mut self,
        case: &dyn Case,
        cands: &mut [Candidate],
        kernel: &[(usize, &'static VariantSpec)],
        scale: &Scale,
        parts: &mut usize,
    ) -> Option<String> {
        let mut runs: Vec<(usize, Runner<'_>)> = Vec::new();
        for c in cands.iter_mut() {
            if c.variant == CPU {
                c.kernel_note = Some("the CPU path has no kernel-only mode".into());
            } else if c.status != Status::Ok {
                c.kernel_note = Some("not timed: did not pass the gate".into());
            }
        }
        for &(i, spec) in kernel {
            (self.step)(&format!("{}: kernel mode, {}", self.key, spec.name));
            let share = self.share(*parts);
            *parts = parts.saturating_sub(1);
            let runner = case.kernel_runner(self.engine.programs(), self.dev, spec);
            let timed = runner.and_then(|mut runner| Ok((sample(&mut runner, share)?, runner)));
            match timed {
                Ok((t, runner)) => {
                    cands[i].kernel = Some(scale.timing(t, Mode::Kernel, false));
                    runs.push((i, runner));
                }
                Err(e) => cands[i].kernel_note = Some(format!("not timed: {e}")),
            }
        }
        let share = self.share(*parts);
        *parts = parts.saturating_sub(1);
        self.retime(cands, runs, Mode::Kernel, share, |t| {
            scale.timing(t, Mode::Kernel, true)
        })
    }

    /// End-to-end mode: every candidate that passed, the CPU path included;
    /// returns the winner.
    fn e2e_mode(
        &mut self,
        case: &dyn Case,
        cands: &mut [Candidate],
        passed: &[usize],
        scale: &Scale,
        parts: &mut usize,
    ) -> Option<String> {
        let engine = self.engine;
        let forced: Vec<(usize, Engine)> = passed
            .iter()
            .map(|&i| {
                (
                    i,
                    engine.with_variant(Some(self.job.op.name), &cands[i].variant),
                )
            })
            .collect();
        let mut runs: Vec<(usize, Runner<'_>)> = Vec::new();
        for (i, e) in &forced {
            let i = *i;
            (self.step)(&format!("{}: end to end, {}", self.key, cands[i].variant));
            let mut runner: Runner<'_> = Box::new(move || {
                let t = Instant::now();
                case.run(e)?;
                Ok(t.elapsed())
            });
            let share = self.share(*parts);
            *parts = parts.saturating_sub(1);
            match sample(&mut runner, share) {
                Ok(t) => {
                    cands[i].e2e = Some(scale.timing(t, Mode::E2e, false));
                    runs.push((i, runner));
                }
                Err(e) => cands[i].e2e_note = Some(format!("not timed: {e}")),
            }
        }
        for c in cands.iter_mut().filter(|c| c.status != Status::Ok) {
            c.e2e_note = Some("not timed: did not pass the gate".into());
        }
        let share = self.share(*parts);
        self.retime(cands, runs, Mode::E2e, share, |t| {
            scale.timing(t, Mode::E2e, true)
        })
    }

    /// Times the engine's unforced call and the forced `winner` end to end,
    /// alternating which goes first each round, with what is left of the
    /// key's budget (at least [`MIN_RUNS`] rounds).
    fn check_dispatch(&mut self, case: &dyn Case, winner: &str) -> Result<DispatchCheck> {
        let engine = self.engine;
        let forced = engine.with_variant(Some(self.job.op.name), winner);
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
        let mid = |mut v: Vec<Duration>| {
            v.sort_unstable();
            v[v.len() / 2].as_secs_f64() * 1e3
        };
        Ok(DispatchCheck {
            variant,
            median_ms: mid(mine),
            winner_median_ms: mid(best),
            runs: rounds,
        })
    }
}

impl Measure<'_, '_> {
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
        let mid = |c: &Candidate| c.timing(mode).map_or(f64::INFINITY, |t| t.median_ms);
        runs.sort_by(|a, b| mid(&cands[a.0]).total_cmp(&mid(&cands[b.0])));
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
                .map(|(i, _)| mid(&cands[*i]) * 1e-3)
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
            .min_by(|a, b| mid(a).total_cmp(&mid(b)))
            .map(|c| c.variant.clone())
    }
}
