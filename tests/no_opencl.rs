//! With OpenCL hidden (the ICD loader finds no platform), the default engine
//! runs on the CPU backend and every operation still works.
//!
//! This binary holds a single test: the environment must be changed before
//! any OpenCL call in the process, and no other thread may read it meanwhile.

use clfilter::prelude::*;
mod common;

use clfilter::ops::{minmax, normalize, transpose};
use clfilter::{Backend, DeviceSelector, Engine, EngineOptions, Error, Image, NormalizeParams};
use common::{assert_images, random_image, random_image_nan, Rng};

#[test]
fn hidden_opencl_gives_a_working_cpu_engine() {
    let empty = tempfile::tempdir().unwrap();
    // ocl-icd reads these when it first loads, which is below. Nothing else
    // runs in this process, so setting them cannot race.
    std::env::set_var("OCL_ICD_VENDORS", empty.path());
    std::env::set_var("OCL_ICD_FILENAMES", "");

    match clfilter::backend::list_devices() {
        Err(reason) => assert!(!reason.is_empty()),
        Ok(devices) => assert!(devices.is_empty(), "{devices:?}"),
    }

    let engine = Engine::new(EngineOptions::default()).expect("Auto never fails");
    assert!(
        matches!(engine.backend(), Backend::Cpu),
        "expected the CPU backend, got {}",
        engine.backend().describe()
    );
    assert!(engine.backend().device_info().is_none());

    let mut rng = Rng::new(42);
    for &(w, h) in &[(1, 1), (1, 9), (9, 1), (33, 17), (64, 64)] {
        for c in [1, 3, 4] {
            let ctx = format!("{w}x{h}x{c}");
            let img = random_image::<u8>(&mut rng, w, h, c);
            let (t, r) = engine.transpose_report(&img).unwrap();
            assert_eq!(r.variant, "cpu");
            assert_images(
                &t,
                &transpose::reference::transpose(&img).unwrap(),
                0.0,
                &ctx,
            );

            let f = random_image_nan::<f32>(&mut rng, w, h, c, 10);
            let (m, r) = engine.minmax_report(&f).unwrap();
            assert_eq!(r.variant, "cpu");
            assert_eq!(m, minmax::reference::minmax(&f), "{ctx}");

            let g = random_image::<u16>(&mut rng, w, h, c);
            let auto = NormalizeParams::default();
            let (n, reports) = engine.normalize_report::<u16, u8>(&g, &auto).unwrap();
            assert!(reports.iter().all(|r| r.variant == "cpu"));
            let k = normalize::Coefficients::stretch(
                &minmax::reference::minmax(&g),
                clfilter::SampleType::U16,
                clfilter::SampleType::U8,
            )
            .unwrap();
            let want: Image<u8> = normalize::reference::normalize(&g, &k).unwrap();
            assert_images(&n, &want, 0.0, &ctx);

            let explicit = NormalizeParams {
                sub: Some(100.0),
                factor: Some(0.01),
            };
            let n: Image<f32> = engine.normalize(&f, &explicit).unwrap();
            let k = normalize::Coefficients::explicit(&explicit).unwrap();
            assert_images(
                &n,
                &normalize::reference::normalize(&f, &k).unwrap(),
                0.0,
                &ctx,
            );
        }
    }

    // Asking for an OpenCL variant or device is an error that says why.
    match engine
        .with_variant(Some("transpose"), "naive")
        .transpose(&random_image::<u8>(&mut rng, 4, 4, 1))
    {
        Err(Error::Unsupported { .. }) => {}
        other => panic!("forced OpenCL variant: expected Unsupported, got {other:?}"),
    }
    for sel in [
        DeviceSelector::Gpu,
        DeviceSelector::Index(0, 0),
        DeviceSelector::Name("pocl".into()),
    ] {
        match Engine::new(EngineOptions {
            device: sel.clone(),
            ..Default::default()
        }) {
            Err(Error::DeviceNotFound { available, .. }) => {
                // "none (<reason>)"; a build without OpenCL gives its reason alone.
                assert!(
                    available.starts_with("none") || !cfg!(feature = "opencl"),
                    "{sel:?}: {available}"
                );
            }
            other => panic!("{sel:?}: expected DeviceNotFound, got {other:?}"),
        }
    }
    let cpu = Engine::new(EngineOptions {
        device: DeviceSelector::Cpu,
        ..Default::default()
    })
    .unwrap();
    assert!(matches!(cpu.backend(), Backend::Cpu));
}
