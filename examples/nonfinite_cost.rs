//! What the non-finite check costs next to the blur it guards
//! (docs/QUALITY.md, "Non-finite pixels"): on 3840x2160 f32 images, gray
//! and RGBA, the host scan (`image::finite::scan`) against the rayon
//! Gaussian at sigma 2 and against a whole engine call; on an OpenCL
//! device (when there is one), the device chain's counting kernel against
//! the Gaussian's kernels, and the host scan against a host-in, host-out
//! device call. Medians of 11 runs after 2 warm-ups.
//!
//! `cargo run --release --example nonfinite_cost` (`FILTERCTL_DEVICE`
//! picks the device).

use std::time::{Duration, Instant};

use clfilter::bench::test_image;
use clfilter::image::finite;
use clfilter::ops::gaussian::{cpu, GaussianParams};
use clfilter::pipeline::Pipeline;
use clfilter::prelude::*;
use clfilter::{Engine, Image};

const W: usize = 3840;
const H: usize = 2160;

/// The median of 11 runs of `f`, after 2.
fn median(mut f: impl FnMut() -> Duration) -> Duration {
    f();
    f();
    let mut t: Vec<Duration> = (0..11).map(|_| f()).collect();
    t.sort();
    t[5]
}

/// Wall time of `f`.
fn wall(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let p = GaussianParams::new(2.0);
    let engine = Engine::from_env()?;
    println!("threads: {}", rayon::current_num_threads());
    println!("| image | scan ms | rayon Gaussian ms | scan / Gaussian | engine call ms |");
    println!("|---|---|---|---|---|");
    let mut imgs = Vec::new();
    for c in [1, 4] {
        let img: Image<f32> = test_image(W, H, c)?;
        let scan = median(|| wall(|| assert!(finite::scan(&img).is_none())));
        let blur = median(|| wall(|| drop(cpu::gaussian(&img, &p).unwrap())));
        let call = median(|| wall(|| drop(Engine::cpu().gaussian(&img, &p).unwrap())));
        println!(
            "| {W}x{H}x{c} f32 | {:.2} | {:.2} | {:.1}% | {:.2} |",
            ms(scan),
            ms(blur),
            100.0 * ms(scan) / ms(blur),
            ms(call)
        );
        imgs.push((c, img, scan));
    }
    if engine.backend().device().is_none() {
        println!("no OpenCL device: device rows skipped");
        return Ok(());
    }
    println!("\ndevice: {}", engine.backend().describe());
    println!("| image | count kernel ms | Gaussian kernels ms | count / Gaussian | host call ms | scan / host call |");
    println!("|---|---|---|---|---|---|");
    let chain: Pipeline = "gaussian=sigma=2".parse()?;
    for (c, img, scan) in imgs {
        let kernel_ms = |variant: Option<&str>| {
            let (_, outcomes) = chain.run(&engine, img.clone().into()).unwrap();
            let reports = &outcomes[0].reports;
            let r = reports.iter().find(|r| match variant {
                Some(v) => r.variant == v,
                None => r.op != "pipeline",
            });
            r.and_then(|r| r.kernel_time).unwrap_or_default()
        };
        let count = median(|| kernel_ms(Some("nonfinite")));
        let blur = median(|| kernel_ms(None));
        let call = median(|| wall(|| drop(engine.gaussian(&img, &p).unwrap())));
        println!(
            "| {W}x{H}x{c} f32 | {:.2} | {:.2} | {:.1}% | {:.2} | {:.1}% |",
            ms(count),
            ms(blur),
            100.0 * ms(count) / ms(blur),
            ms(call),
            100.0 * ms(scan) / ms(call)
        );
    }
    Ok(())
}
