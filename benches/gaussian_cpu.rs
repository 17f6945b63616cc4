//! Criterion benches for the rayon Gaussian (`ops::gaussian::cpu`): 3840x2160
//! gray and RGBA f32 at sigma 2, 8 and 32, and u8 RGB at sigma 2, replicate
//! borders. Each `sigma=S` iteration is one whole call (allocation of the
//! result included); `sigma=S/into` blurs into a destination kept across
//! iterations (`cpu::gaussian_into`), as a frame loop would.
//! `CLFILTER_GAUSSIAN_BORDER=mirror` times mirror borders instead.

use std::time::Duration;

use clfilter::bench::test_image;
use clfilter::ops::gaussian::{cpu, Border, GaussianParams};
use clfilter::{Image, Sample};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const W: usize = 3840;
const H: usize = 2160;

fn border() -> Border {
    match std::env::var("CLFILTER_GAUSSIAN_BORDER").as_deref() {
        Ok("mirror") => Border::Mirror,
        _ => Border::Replicate,
    }
}

fn bench_case<T: Sample>(c: &mut Criterion, label: &str, channels: usize, sigmas: &[f32]) {
    let img: Image<T> = test_image(W, H, channels).expect("image");
    let mut g = c.benchmark_group(format!("gaussian_cpu/{W}x{H}/{label}"));
    // Bytes read plus written.
    g.throughput(Throughput::Bytes(
        (2 * W * H * channels * std::mem::size_of::<T>()) as u64,
    ));
    g.sample_size(20);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(3));
    for &sigma in sigmas {
        let p = GaussianParams {
            sigma_x: sigma,
            sigma_y: sigma,
            border: border(),
        };
        g.bench_function(format!("sigma={sigma}"), |b| {
            b.iter(|| drop(cpu::gaussian(&img, &p).expect("gaussian")))
        });
        let mut dst = img.clone();
        g.bench_function(format!("sigma={sigma}/into"), |b| {
            b.iter(|| cpu::gaussian_into(&img, &p, &mut dst).expect("gaussian_into"))
        });
    }
    g.finish();
}

fn gaussian_cpu(c: &mut Criterion) {
    bench_case::<f32>(c, "gray_f32", 1, &[2.0, 8.0, 32.0]);
    bench_case::<f32>(c, "rgba_f32", 4, &[2.0, 8.0, 32.0]);
    bench_case::<u8>(c, "rgb_u8", 3, &[2.0]);
}

criterion_group!(benches, gaussian_cpu);
criterion_main!(benches);
