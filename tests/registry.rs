//! Every variant of every operation in the registry (`ops::OPERATIONS`),
//! forced, and the CPU path, against the operation's reference, on odd
//! sizes (1x1, 1xN, Nx1, primes, sizes that are no multiple of any tile),
//! every sample type the operation reads, 1/3/4 channels and each
//! parameter set its tuning entry measures. The inputs and the comparison
//! come from the operation's own tuning case (`ops::tuning::Case`), so an
//! operation added to the registry is checked here with no edit.
//!
//! The per-operation test files go further (strided inputs, edge values,
//! error cases); this one guarantees the floor for every registered op.

use clfilter::ops::tuning::{Ask, Case};
use clfilter::ops::{Operation, OPERATIONS};
use clfilter::{Engine, Error, SampleType};

mod common;

/// Widths x heights: single pixels and lines, small primes, and sizes past
/// the common 16/32/64 tiles.
const SIZES: &[(usize, usize)] = &[(1, 1), (1, 9), (9, 1), (2, 2), (13, 11), (37, 17), (66, 70)];

/// Sigmas for parameterised operations: one below the recursive filters'
/// range (the FIR runs) and one inside it.
const SIGMAS: &[f32] = &[0.7, 3.0];

/// The operations to check: every registered one, or those named in
/// `FILTERCTL_TEST_OPS` (comma-separated), to check one operation quickly.
fn selected() -> Vec<&'static Operation> {
    let only = std::env::var("FILTERCTL_TEST_OPS").unwrap_or_default();
    let names: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    OPERATIONS
        .iter()
        .copied()
        .filter(|o| names.is_empty() || names.contains(&o.spec.name))
        .collect()
}

/// The cases of `op`: (description, case) for every type, channel count,
/// parameter set and size its tuning entry accepts.
fn cases(op: &Operation) -> Vec<(String, Box<dyn Case>)> {
    let mut out = Vec::new();
    for sample in [SampleType::U8, SampleType::U16, SampleType::F32] {
        if op.tune.reads(sample).is_err() {
            continue;
        }
        for channels in [1, 3, 4] {
            let ask = Ask {
                sigmas: SIGMAS,
                channels,
                method: None,
                bins: None,
            };
            let sets = op.tune.params(&ask).expect("parameter sets");
            for params in sets {
                for &(w, h) in SIZES {
                    let size = (w, h, channels);
                    // Sizes or channel counts the operation refuses (a CFA
                    // needs even sizes; some ops read one channel).
                    if op.tune.job_shape(sample, size, params.clone()).is_err() {
                        continue;
                    }
                    let what = format!("{} {sample}x{channels} {w}x{h} {params:?}", op.spec.name);
                    let case = op
                        .tune
                        .case(sample, size, params.clone())
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    out.push((what, case));
                }
            }
        }
    }
    out
}

/// Runs `case` on `engine` and checks it within `tolerance`; `false` when
/// the forced variant declines the request.
fn check(engine: &Engine, what: &str, case: &dyn Case, tolerance: f32) -> bool {
    let want = case
        .reference()
        .unwrap_or_else(|e| panic!("{what}: reference: {e}"));
    match case.run(engine) {
        Ok((got, _)) => {
            if let Err(why) = case.check(&got, &want, tolerance) {
                panic!("{what}: {why}");
            }
            true
        }
        Err(Error::Unsupported { .. }) => false,
        Err(e) => panic!("{what}: {e}"),
    }
}

#[test]
fn every_registered_cpu_path_matches_its_reference() {
    let engine = Engine::cpu();
    for op in selected() {
        let cases = cases(op);
        assert!(!cases.is_empty(), "{}: no case", op.spec.name);
        for (what, case) in &cases {
            let tol = case.cpu_tolerance();
            assert!(
                check(&engine, what, case.as_ref(), tol),
                "{what}: cpu declined"
            );
        }
    }
}

#[test]
fn every_registered_variant_matches_its_reference() {
    let Some(engine) = common::opencl_engine() else {
        common::skip_no_opencl("registry variants");
        return;
    };
    for op in selected() {
        let cases = cases(op);
        for spec in op.spec.variants {
            // A variant built on a device feature (an extension, a
            // vendor's dialect) is only checked where the device has it.
            let info = engine.backend().device().expect("an OpenCL engine").info();
            if let Err(why) = spec.check_device(info) {
                eprintln!(
                    "{}/{}: skipped on this device: {why}",
                    op.spec.name, spec.name
                );
                continue;
            }
            let forced = engine.with_variant(Some(op.spec.name), spec.name);
            let ran = cases
                .iter()
                .filter(|(what, case)| {
                    check(
                        &forced,
                        &format!("{what} {}", spec.name),
                        case.as_ref(),
                        spec.tolerance,
                    )
                })
                .count();
            eprintln!(
                "{}/{}: {ran} of {} cases",
                op.spec.name,
                spec.name,
                cases.len()
            );
            // Every variant must run some of the cases, or it is untested.
            assert!(
                ran > 0,
                "{}/{}: declined every case",
                op.spec.name,
                spec.name
            );
        }
    }
}
