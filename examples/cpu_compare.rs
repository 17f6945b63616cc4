//! CPU timings for `benches/cpu_compare.py`, best of 3 (after one warm-up),
//! one `name ms` line each:
//! - `median`: the rayon median (`ops::median::cpu`) on 3840x2160 u8 RGB
//!   and gray (pseudo-random), radius 1, 2, 3, and u16 and f32 RGB,
//!   radius 1, 2;
//! - `gaussian`: the rayon Gaussian (`ops::gaussian::cpu`) on 3840x2160 u8
//!   RGB and gray (pseudo-random), sigma 1, 2, 3 and 4, replicate border;
//! - `gaussian_f32`: the same on 3840x2160 f32 gray and RGBA
//!   (pseudo-random in 0..1), sigma 2, 8 and 32;
//! - `sort N`: N pseudo-random f32 keys through the rayon sort
//!   (`ops::sort::cpu`, total order, the key mapping included) and through
//!   Rust's `par_sort_unstable_by(f32::total_cmp)` and `par_sort_unstable`
//!   on the u32 words alone.
//!
//! `cargo run --release --example cpu_compare -- median`, `-- gaussian`,
//! `-- gaussian_f32` or `-- sort 1048576`.

use std::time::{Duration, Instant};

use clfilter::ops::gaussian::{cpu as gaussian_cpu, Border, GaussianParams};
use clfilter::ops::median::{cpu as median_cpu, MedianParams};
use clfilter::ops::sort::{cpu as sort_cpu, keys};
use clfilter::Image;
use rayon::prelude::*;

/// Best of 3 runs of `f` after one warm-up.
fn best(mut f: impl FnMut()) -> Duration {
    f();
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// One `NAME_sSIGMA ms` line per sigma: the rayon Gaussian of `img`,
/// replicate border, best of 3.
fn gaussians<T: clfilter::Sample>(img: &Image<T>, sigmas: &[f32], name: &str) {
    for &sigma in sigmas {
        let p = GaussianParams {
            sigma_x: sigma,
            sigma_y: sigma,
            border: Border::Replicate,
        };
        let t = best(|| drop(gaussian_cpu::gaussian(img, &p).expect("gaussian")));
        println!("{name}_s{sigma} {:.3}", t.as_secs_f64() * 1e3);
    }
}

/// xorshift64, as the script's generator.
fn xorshift(n: usize) -> Vec<u32> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u32
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("median") => {
            let (w, h) = (3840, 2160);
            for (c, name) in [(3, ""), (1, "_gray")] {
                let data: Vec<u8> = xorshift(w * h * c).into_iter().map(|v| v as u8).collect();
                let img = Image::from_vec(w, h, c, data).expect("image");
                for r in 1..=3 {
                    let p = MedianParams::new(r).expect("radius");
                    let t = best(|| drop(median_cpu::median(&img, &p).expect("median")));
                    println!("clfilter_median{name}_r{r} {:.3}", t.as_secs_f64() * 1e3);
                }
            }
            // u16 and f32 RGB at the sizes OpenCV's medianBlur takes them.
            let n = w * h * 3;
            let img16 =
                Image::from_vec(w, h, 3, xorshift(n).into_iter().map(|v| v as u16).collect())
                    .expect("image");
            let imgf =
                Image::from_vec(w, h, 3, xorshift(n).into_iter().map(|v| v as f32).collect())
                    .expect("image");
            for r in 1..=2 {
                let p = MedianParams::new(r).expect("radius");
                let t = best(|| drop(median_cpu::median(&img16, &p).expect("median")));
                println!("clfilter_median_u16_r{r} {:.3}", t.as_secs_f64() * 1e3);
                let t = best(|| drop(median_cpu::median(&imgf, &p).expect("median")));
                println!("clfilter_median_f32_r{r} {:.3}", t.as_secs_f64() * 1e3);
            }
        }
        Some("gaussian") => {
            let (w, h) = (3840, 2160);
            for (c, key) in [(3, ""), (1, "_gray")] {
                let data: Vec<u8> = xorshift(w * h * c).into_iter().map(|v| v as u8).collect();
                let img = Image::from_vec(w, h, c, data).expect("image");
                gaussians(
                    &img,
                    &[1.0, 2.0, 3.0, 4.0],
                    &format!("clfilter_gaussian{key}"),
                );
            }
        }
        Some("gaussian_f32") => {
            // f32 gray and RGBA at sigma 2, 8 and 32 (the recursive filter).
            let (w, h) = (3840, 2160);
            for (c, key) in [(1, "_gray"), (4, "_rgba")] {
                let data: Vec<f32> = xorshift(w * h * c)
                    .into_iter()
                    .map(|v| (v >> 8) as f32 / (1u32 << 24) as f32)
                    .collect();
                let img = Image::from_vec(w, h, c, data).expect("image");
                gaussians(
                    &img,
                    &[2.0, 8.0, 32.0],
                    &format!("clfilter_gaussian_f32{key}"),
                );
            }
        }
        Some("sort") => {
            let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
            // Finite keys: numpy's sort puts every NaN last, unlike totalOrder.
            let keys: Vec<f32> = xorshift(n)
                .into_iter()
                .map(|v| (v >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0)
                .collect();
            let t = best(|| drop(sort_cpu::sort(&keys).expect("sort")));
            println!("clfilter_cpu {:.3}", t.as_secs_f64() * 1e3);
            let idx: Vec<u32> = (0..n as u32).collect();
            let t = best(|| drop(sort_cpu::sort_pairs(&keys, &idx).expect("sort_pairs")));
            println!("clfilter_cpu_pairs {:.3}", t.as_secs_f64() * 1e3);
            let t = best(|| {
                let mut v = keys.clone();
                v.par_sort_unstable_by(f32::total_cmp);
            });
            println!(
                "par_sort_unstable_by_total_cmp {:.3}",
                t.as_secs_f64() * 1e3
            );
            let words = keys::to_words(&keys);
            let t = best(|| {
                let mut v = words.clone();
                v.par_sort_unstable();
            });
            println!("par_sort_unstable_u32_words {:.3}", t.as_secs_f64() * 1e3);
        }
        _ => eprintln!("usage: cpu_compare median | gaussian | sort N"),
    }
}
