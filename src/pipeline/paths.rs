//! Which way a pipeline runs: as a device-resident chain, or stage by
//! stage as host calls ([`host_preferred`]), and both ways for the tuner
//! ([`run_both_ways`]).

use super::{device, run_on_host, to_spec, Input, Op};
use crate::engine::Engine;
use crate::error::Result;

/// Runs the stages both ways an engine may run them, and drops the
/// results: as a device-resident chain when the engine has a device
/// (whatever [`host_preferred`] would say; a chain that cannot run is
/// logged), then one by one as host calls. What `filterctl tune --for`
/// runs under [`crate::dispatch::recording`] to learn every tuning key a
/// pipeline looks up.
pub(crate) fn run_both_ways(engine: &Engine, stages: &[Op], input: Input<'_>) -> Result<()> {
    if let (Some(dev), false) = (engine.backend().device(), stages.is_empty()) {
        let chain = device::run_with(engine, dev, stages, input, |w| {
            device::download(engine, dev, w)
        });
        if let Err(e) = chain {
            log::info!(
                "pipeline '{}' does not stay on {}: {e}",
                to_spec(stages),
                dev.info().name
            );
        }
    }
    run_on_host(engine, stages, input).map(drop)
}

/// Why the stages should run one by one as host calls, each choosing
/// between the device and the CPU path from end-to-end tuning, rather than
/// as a device-resident chain: on an OpenCL CPU device that `auto` kept
/// ([`Engine::cpu_first_untuned`]), unless every stage is forced onto the
/// device or was measured faster there; and for a single stage that tuning
/// measured faster on the CPU path end to end.
pub(super) fn host_preferred(
    engine: &Engine,
    stages: &[Op],
    input: Input<'_>,
) -> Option<&'static str> {
    let (w, h, c, ty) = input.shape();
    let first_e2e = |op: &Op| {
        let shape = crate::ops::Shape::new(w, h, c, ty).with_params(op.stage.op_params());
        engine
            .tuned_order(op.def().op, &shape, crate::dispatch::store::Mode::E2e)
            .and_then(|order| order.into_iter().next())
    };
    let forced_device = |op: &Op| {
        op.variant
            .as_deref()
            .or_else(|| engine.forced(op.def().op))
            .is_some_and(|v| v != crate::ops::CPU)
    };
    let device_proven = |op: &Op| first_e2e(op).is_some_and(|v| v != crate::ops::CPU);
    if engine.cpu_first_untuned()
        && !stages
            .iter()
            .all(|op| forced_device(op) || device_proven(op))
    {
        return Some("tuning has not measured every stage faster on this OpenCL CPU device");
    }
    match stages {
        [op] if !forced_device(op) && first_e2e(op).as_deref() == Some(crate::ops::CPU) => {
            Some("tuning measured the CPU path faster end to end")
        }
        _ => None,
    }
}
