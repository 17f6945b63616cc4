//! Criterion benches for transpose, minmax, normalize, gaussian and colormap.
//!
//! Each OpenCL variant is timed kernel-only (data on the device; the time is
//! the sum of profiling-event durations, via `iter_custom`), then the CPU
//! path and the engine's end-to-end call (upload + kernel + download) by wall
//! clock. Throughput is bytes read + written.
//!
//! `CLFILTER_BENCH_SIZE=WxH` sets the image (default 2048x2048, f32 gray);
//! `FILTERCTL_DEVICE` picks the device as for `filterctl`. The Gaussian uses sigma 2.

use clfilter::prelude::*;
use std::time::Duration;

use clfilter::bench::{bytes_per_pixel, test_image};
use clfilter::ops::gaussian::GaussianParams;
use clfilter::ops::{self, OpSpec};
use clfilter::{Engine, Image};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn size() -> (usize, usize) {
    std::env::var("CLFILTER_BENCH_SIZE")
        .ok()
        .and_then(|s| {
            let (w, h) = s.split_once('x')?;
            Some((w.parse().ok()?, h.parse().ok()?))
        })
        .unwrap_or((2048, 2048))
}

fn bench_op(c: &mut Criterion, op: &'static OpSpec) {
    let engine = Engine::from_env().expect("engine");
    let (w, h) = size();
    let img: Image<f32> = test_image(w, h, 1).expect("image");
    let gp = GaussianParams::new(2.0);
    // Gray f32 to RGBA f32 over an explicit range (the bench's own parameters).
    let cm = clfilter::ColormapParams {
        min: Some(0.1),
        max: Some(0.9),
        channels: 4,
        ..Default::default()
    };
    let mut g = c.benchmark_group(format!("{}/{w}x{h}/f32", op.name));
    g.throughput(Throughput::Bytes(
        (w * h * bytes_per_pixel(op.name, 4, 1)) as u64,
    ));
    g.sample_size(20);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));

    #[cfg(feature = "opencl")]
    if let clfilter::Backend::OpenCl(dev) = engine.backend() {
        use clfilter::bench::device::time_kernel;
        // The registry's case of the operation: this image's size, sigma 2,
        // the bench's parameters.
        let entry = ops::tuning::tunable(op).expect("tuning entry");
        let ask = ops::tuning::Ask {
            sigmas: &[2.0],
            channels: 1,
            method: None,
            bins: None,
        };
        let params = entry.params(&ask).expect("parameters")[0].clone();
        let case = entry
            .case(clfilter::SampleType::F32, (w, h, 1), params)
            .expect("case");
        for spec in op.variants {
            // Skip variants this shape or device cannot run (e.g. gray-only ones).
            if time_kernel(&engine, dev, &*case, spec, 1).is_err() {
                continue;
            }
            g.bench_function(format!("{}(kernel)", spec.name), |b| {
                b.iter_custom(|iters| {
                    time_kernel(&engine, dev, &*case, spec, iters as usize)
                        .expect("timed run")
                        .into_iter()
                        .sum()
                })
            });
        }
    }

    g.bench_function("engine(end-to-end)", |b| {
        b.iter(|| match op.name {
            "transpose" => drop(engine.transpose(&img).expect("transpose")),
            "minmax" => drop(engine.minmax(&img).expect("minmax")),
            "gaussian" => drop(engine.gaussian(&img, &gp).expect("gaussian")),
            "colormap" => drop(engine.colormap::<f32, f32>(&img, &cm).expect("colormap")),
            _ => drop(
                engine
                    .normalize::<f32, f32>(&img, &clfilter::NormalizeParams::default())
                    .expect("normalize"),
            ),
        })
    });

    let k = ops::normalize::Coefficients::explicit(&clfilter::NormalizeParams {
        sub: Some(1.0),
        factor: Some(0.5),
    })
    .expect("coefficients");
    g.bench_function("cpu", |b| {
        b.iter(|| match op.name {
            "transpose" => drop(ops::transpose::cpu::transpose(&img).expect("transpose")),
            "minmax" => drop(ops::minmax::cpu::minmax(&img)),
            "gaussian" => drop(ops::gaussian::cpu::gaussian(&img, &gp).expect("gaussian")),
            "colormap" => drop(
                ops::colormap::cpu::colormap::<f32, f32>(&img, &cm, cm.range(None).expect("range"))
                    .expect("colormap"),
            ),
            _ => drop(ops::normalize::cpu::normalize::<f32, f32>(&img, &k).expect("normalize")),
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    for op in ops::OPS {
        // Demosaic reads 1-channel u8/u16 frames, not this bench's f32
        // images: `filterctl bench --ops demosaic --type u8` times it.
        if op.name == ops::demosaic::SPEC.name {
            continue;
        }
        bench_op(c, op);
    }
}

criterion_group!(ops_benches, benches);
criterion_main!(ops_benches);
