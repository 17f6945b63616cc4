//! The one place that chooses a variant, for single calls and pipeline
//! stages alike: the forced variant, else the tuned order, then the
//! device's default order, each variant falling back to the next on
//! failure, then (for host calls) the CPU path. It also reads the tuning
//! cache ([`Tuning`], [`key`], [`store`]) that orders the candidates.

pub mod key;
pub mod store;
mod tuning;

use std::cell::RefCell;
use std::time::{Duration, Instant};

pub use tuning::Tuning;

use crate::backend::{self, Dev, DeviceInfo};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::{OpSpec, RunCl, RunReport, Shape, VariantSpec, CPU};
use store::Mode;

/// Where a call's data lives, which decides what the choice may use.
pub(crate) enum Call<'a> {
    /// Host in, host out: end-to-end tuning figures; the CPU path is a
    /// candidate, and the last resort.
    Host {
        /// Runs the CPU path.
        run_cpu: &'a mut dyn FnMut() -> Result<()>,
    },
    /// The data stays on the device (a pipeline stage): kernel-mode
    /// figures, device variants only.
    Device {
        /// The stage's own `variant=`, before the engine's forced ones.
        stage_forced: Option<&'a str>,
        /// The user's pixels (what tuning keys on); the shape passed beside
        /// it is what the kernels process.
        logical: &'a Shape,
    },
}

/// A request whose tuned order the dispatch looked up, as
/// [`crate::tune::requests_for`] collects them: what `filterctl tune
/// --for` measures.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The operation.
    pub op: &'static OpSpec,
    /// The request's shape: a host call's input, or a device stage's
    /// working or logical image.
    pub shape: Shape,
}

thread_local! {
    /// The lookups of this thread while [`recording`] runs.
    static ASKED: RefCell<Option<Vec<Asked>>> = const { RefCell::new(None) };
}

/// Runs `f`, and returns with its result every request whose tuned order
/// the dispatch looked up on this thread meanwhile, in order (a device
/// stage's working shape, then its logical one). Forced variants look
/// nothing up.
pub(crate) fn recording<R>(f: impl FnOnce() -> R) -> (R, Vec<Asked>) {
    let outer = ASKED.with(|a| a.borrow_mut().replace(Vec::new()));
    let r = f();
    let asked = ASKED.with(|a| std::mem::replace(&mut *a.borrow_mut(), outer));
    (r, asked.unwrap_or_default())
}

/// Notes a lookup for [`recording`], when it runs.
fn note_asked(op: &'static OpSpec, shape: &Shape) {
    ASKED.with(|a| {
        if let Some(v) = a.borrow_mut().as_mut() {
            v.push(Asked {
                op,
                shape: shape.clone(),
            });
        }
    });
}

/// Runs `op` for `shape` (see the module docs) and reports what ran.
pub(crate) fn run(
    engine: &Engine,
    op: &'static OpSpec,
    shape: &Shape,
    mut call: Call<'_>,
    run_cl: &mut RunCl<'_>,
) -> Result<RunReport> {
    let start = Instant::now();
    let stage_forced = match &call {
        Call::Device { stage_forced, .. } => *stage_forced,
        Call::Host { .. } => None,
    };
    let forced = stage_forced.or_else(|| engine.forced(op));
    if let Some(name) = forced.filter(|n| *n != CPU) {
        if engine.variant(op, name).is_none() {
            return Err(Error::UnknownVariant {
                op: op.name.into(),
                variant: name.into(),
                known: op.names().join(", "),
            });
        }
    }
    let dev = engine.backend().device();
    let on_cpu = forced == Some(CPU) || dev.is_none();
    if let (true, Call::Host { run_cpu }) = (on_cpu, &mut call) {
        if let Some(name) = forced.filter(|n| *n != CPU) {
            return Err(unsupported(
                op,
                name,
                "the engine runs on the CPU backend; select an OpenCL device with --device",
            ));
        }
        run_cpu()?;
        log::debug!(target: "clfilter::dispatch", "{} ran variant=cpu", op.name);
        return Ok(report(engine, op, CPU, start, None, Vec::new()));
    }
    let Some(dev) = dev.filter(|_| forced != Some(CPU)) else {
        return Err(unsupported(
            op,
            CPU,
            "the CPU path is forced, so this stage cannot stay on the device",
        ));
    };
    if let Some(name) = forced {
        return run_forced(engine, dev, op, name, shape, start, run_cl);
    }
    try_in_order(engine, dev, op, shape, call, start, run_cl)
}

/// Tries the planned candidates in order; the first that works wins.
fn try_in_order(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    shape: &Shape,
    mut call: Call<'_>,
    start: Instant,
    run_cl: &mut RunCl<'_>,
) -> Result<RunReport> {
    let mut fallbacks = Vec::new();
    let mut last = None;
    for name in plan(engine, dev, op, shape, &call) {
        if name == CPU {
            if let Call::Host { run_cpu } = &mut call {
                run_cpu()?;
                log::debug!(
                    target: "clfilter::dispatch",
                    "{} ran variant=cpu (tuned: faster end to end than {})",
                    op.name,
                    dev.info().name
                );
                return Ok(report(engine, op, CPU, start, None, fallbacks));
            }
            continue;
        }
        let Some(spec) = engine.variant(op, &name) else {
            continue;
        };
        match run_cl(dev, spec) {
            Ok(kt) => {
                log::debug!(
                    target: "clfilter::dispatch",
                    "{} ran variant={} on {}{}",
                    op.name,
                    spec.name,
                    dev.info().name,
                    if matches!(call, Call::Device { .. }) { " (device-resident)" } else { "" }
                );
                return Ok(report(engine, op, spec.name, start, Some(kt), fallbacks));
            }
            Err(e) => {
                log::warn!(
                    "{}/{} failed on {}: {e}; trying the next variant",
                    op.name,
                    spec.name,
                    dev.info().name
                );
                fallbacks.push(format!("{}: {e}", spec.name));
                last = Some(e);
            }
        }
    }
    finish(engine, dev, op, call, start, fallbacks, last)
}

/// After every candidate: the CPU path for host calls, else an error.
fn finish(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    call: Call<'_>,
    start: Instant,
    fallbacks: Vec<String>,
    last: Option<Error>,
) -> Result<RunReport> {
    let Call::Host { run_cpu } = call else {
        return Err(last.unwrap_or_else(|| {
            unsupported(
                op,
                "",
                &format!(
                    "no OpenCL variant supports this request on {}",
                    dev.info().name
                ),
            )
        }));
    };
    if fallbacks.is_empty() {
        log::info!(
            "no OpenCL variant of {} supports this request on {}; running on the CPU",
            op.name,
            dev.info().name
        );
    } else {
        log::warn!(
            "every OpenCL variant of {} that could run failed on {}; running on the CPU",
            op.name,
            dev.info().name
        );
    }
    run_cpu()?;
    Ok(report(engine, op, CPU, start, None, fallbacks))
}

/// The forced device variant alone: an error if it cannot run the request.
fn run_forced(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    name: &str,
    shape: &Shape,
    start: Instant,
    run_cl: &mut RunCl<'_>,
) -> Result<RunReport> {
    let spec = engine
        .variant(op, name)
        .ok_or_else(|| Error::UnknownVariant {
            op: op.name.into(),
            variant: name.into(),
            known: op.names().join(", "),
        })?;
    spec.check_on(shape, dev.info())
        .map_err(|why| unsupported(op, name, &why))?;
    let kt = run_cl(dev, spec).map_err(|e| name_unsupported(e, op.name, name))?;
    Ok(report(engine, op, spec.name, start, Some(kt), Vec::new()))
}

/// The candidates in order: the tuned ranking (end-to-end figures for host
/// calls, which may rank the CPU path; kernel figures for device-resident
/// stages, for the working shape, else the logical one), then the device's
/// default order for what the tuning did not rank. An untuned host call on
/// an OpenCL CPU device that `auto` kept tries the CPU path first.
/// Variants that cannot run the shape are left out.
fn plan(
    engine: &Engine,
    dev: &Dev,
    op: &'static OpSpec,
    shape: &Shape,
    call: &Call<'_>,
) -> Vec<String> {
    note_asked(op, shape);
    if let Call::Device { logical, .. } = call {
        note_asked(op, logical);
    }
    let tuned = match call {
        Call::Host { .. } => engine.tuned_order(op, shape, Mode::E2e),
        Call::Device { logical, .. } => engine
            .tuned_order(op, shape, Mode::Kernel)
            .or_else(|| engine.tuned_order(op, logical, Mode::Kernel))
            .map(|o| o.into_iter().filter(|n| n != CPU).collect()),
    };
    let untuned = tuned.is_none();
    let mut names: Vec<String> = tuned.unwrap_or_default();
    if untuned && engine.cpu_first_untuned() && matches!(call, Call::Host { .. }) {
        // `auto` kept this CPU device for what tuning measured, not this.
        names.push(CPU.to_string());
    }
    for spec in op.order_for(dev.info().kind, shape) {
        if !names.iter().any(|n| n == spec.name) {
            names.push(spec.name.to_string());
        }
    }
    names.retain(|n| match engine.variant(op, n) {
        Some(spec) => supported(op, spec, shape, dev.info()),
        None => n == CPU,
    });
    names
}

fn supported(op: &OpSpec, spec: &VariantSpec, shape: &Shape, info: &DeviceInfo) -> bool {
    match spec.check_on(shape, info) {
        Ok(()) => true,
        Err(why) => {
            log::debug!("{}/{} skipped: {why}", op.name, spec.name);
            false
        }
    }
}

fn report(
    engine: &Engine,
    op: &OpSpec,
    variant: &str,
    start: Instant,
    kernel_time: Option<Duration>,
    fallbacks: Vec<String>,
) -> RunReport {
    RunReport {
        op: op.name,
        variant: variant.to_string(),
        backend: if variant == CPU {
            backend::cpu::describe()
        } else {
            engine.backend().describe()
        },
        elapsed: start.elapsed(),
        kernel_time,
        fallbacks,
    }
}

fn unsupported(op: &OpSpec, variant: &str, reason: &str) -> Error {
    Error::Unsupported {
        op: op.name.into(),
        variant: variant.into(),
        reason: reason.into(),
    }
}

/// Fills in the op/variant of an `Unsupported` raised deep in a launch.
fn name_unsupported(e: Error, op: &str, variant: &str) -> Error {
    match e {
        Error::Unsupported { reason, .. } => Error::Unsupported {
            op: op.into(),
            variant: variant.into(),
            reason,
        },
        other => other,
    }
}
