//! `reduce`: the sum's error bound on 8192-long lines against f64, the NaN
//! and infinity rules, and the stage (host and device chains, errors).
//! Odd sizes, every sample type and 1/3/4 channels for every variant are
//! in `tests/registry.rs` (through the operation's tuning case).

use clfilter::ops::reduce::{self, Axis, ReduceParams, Reduction};
use clfilter::prelude::*;
use clfilter::{DynImage, Engine, Error, Image, Pipeline, Sample};

mod common;
use common::Rng;

/// u = 2^-24, the unit of the stated bounds.
const U: f64 = (f32::EPSILON / 2.0) as f64;

/// The CPU engine (bound 2u: f64 sums rounded once), then each OpenCL
/// variant the device can run, forced, with its table bound.
fn engines() -> Vec<(String, Engine, f64)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu(), 2.0)];
    match common::opencl_engine() {
        Some(e) => {
            let info = e.backend().device().expect("device").info().clone();
            for spec in reduce::SPEC.variants {
                if spec.check_device(&info).is_ok() {
                    let forced = e.with_variant(Some("reduce"), spec.name);
                    out.push((spec.name.to_string(), forced, spec.tolerance as f64));
                }
            }
        }
        None => common::skip_no_opencl("reduce variants"),
    }
    out
}

/// f64 sums and sums of magnitudes along `axis`, per output and channel.
fn f64_sums(img: &Image<f32>, axis: Axis) -> (Vec<f64>, Vec<f64>) {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let (outs, len) = if axis == Axis::X { (h, w) } else { (w, h) };
    let mut sums = vec![0.0; outs * c];
    let mut abs = vec![0.0; outs * c];
    for o in 0..outs {
        for i in 0..len {
            let (x, y) = if axis == Axis::X { (i, o) } else { (o, i) };
            for ch in 0..c {
                let v = img.get(x, y, ch) as f64;
                sums[o * c + ch] += v;
                abs[o * c + ch] += v.abs();
            }
        }
    }
    (sums, abs)
}

fn values(img: &Image<f32>) -> Vec<f32> {
    img.rows().flat_map(|r| r.iter().copied()).collect()
}

/// Mixed signs and magnitudes (1e-3 .. 1e3), where a plain f32 running
/// sum over 8192 samples loses digits.
fn awkward(rng: &mut Rng, w: usize, h: usize, c: usize) -> Image<f32> {
    let data = (0..w * h * c)
        .map(|_| {
            let mag = 10f32.powf(rng.unit() * 6.0 - 3.0);
            if rng.below(2) == 0 {
                mag
            } else {
                -mag * 0.999
            }
        })
        .collect();
    Image::from_vec(w, h, c, data).unwrap()
}

#[test]
fn sums_of_8192_samples_stay_within_the_stated_bound() {
    let mut rng = Rng::new(20);
    for (name, e, k) in engines() {
        for (axis, w, h, c) in [
            (Axis::X, 8192, 3, 1),
            (Axis::Y, 5, 8192, 3),
            (Axis::X, 8191, 2, 4),
        ] {
            let img = awkward(&mut rng, w, h, c);
            let (sums, abs) = f64_sums(&img, axis);
            for op in [Reduction::Sum, Reduction::Mean] {
                let p = ReduceParams { axis, op };
                let got = match e.reduce(&img, &p) {
                    Ok(g) => g,
                    // Variants of the other axis decline.
                    Err(Error::Unsupported { .. }) => continue,
                    Err(err) => panic!("{name} {p}: {err}"),
                };
                let n = if axis == Axis::X { w } else { h } as f64;
                for (i, g) in values(&got).into_iter().enumerate() {
                    let (want, limit) = match op {
                        Reduction::Sum => (sums[i], k * U * abs[i]),
                        _ => (sums[i] / n, (k + 3.0) * U * abs[i] / n),
                    };
                    let err = (g as f64 - want).abs();
                    assert!(
                        err <= limit,
                        "{name} {p} {w}x{h}x{c} output {i}: {g} vs {want}, error {err:e} > {limit:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn min_max_ignore_nan_and_sums_propagate_it() {
    // Row 0: a NaN among numbers; row 1: +inf; row 2: only NaN; row 3: +inf and -inf.
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let img = Image::from_vec(
        3,
        4,
        1,
        vec![1.0, nan, -2.0, 1.0, inf, 3.0, nan, nan, nan, inf, -inf, 0.5],
    )
    .unwrap();
    let want = |op| -> Vec<f32> {
        match op {
            Reduction::Sum => vec![nan, inf, nan, nan],
            Reduction::Mean => vec![nan, inf, nan, nan],
            Reduction::Min => vec![-2.0, 1.0, inf, -inf],
            Reduction::Max => vec![1.0, inf, -inf, inf],
        }
    };
    for (name, e, _) in engines() {
        for op in Reduction::ALL {
            let p = ReduceParams { axis: Axis::X, op };
            let got = match e.reduce(&img, &p) {
                Ok(g) => values(&g),
                Err(Error::Unsupported { .. }) => continue,
                Err(err) => panic!("{name} {p}: {err}"),
            };
            for (g, w) in got.iter().zip(want(op)) {
                assert!(
                    g == &w || (g.is_nan() && w.is_nan()),
                    "{name} {p}: {got:?}, want {:?}",
                    want(op)
                );
            }
        }
    }
}

#[test]
fn integer_sums_are_exact_below_2_pow_24() {
    let mut rng = Rng::new(7);
    let img: Image<u16> = common::random_image(&mut rng, 257, 31, 3);
    for (name, e, _) in engines() {
        let p = ReduceParams {
            axis: Axis::Y,
            op: Reduction::Sum,
        };
        let got = match e.reduce(&img, &p) {
            Ok(g) => g,
            Err(Error::Unsupported { .. }) => continue,
            Err(err) => panic!("{name}: {err}"),
        };
        assert_eq!((got.width(), got.height(), got.channels()), (257, 1, 3));
        for x in 0..257 {
            for c in 0..3 {
                let want: u64 = (0..31).map(|y| img.get(x, y, c) as u64).sum();
                assert_eq!(
                    got.get(x, 0, c) as u64,
                    want,
                    "{name} column {x} channel {c}"
                );
            }
        }
    }
}

#[test]
fn the_stage_runs_on_host_and_device_and_refuses_bad_options() {
    let p: Pipeline = "reduce=axis=y:op=mean".parse().unwrap();
    assert_eq!(p.to_string(), "reduce=axis=y:op=mean");
    let short: Pipeline = "reduce=axis=x".parse().unwrap();
    assert_eq!(short.to_string(), "reduce=axis=x:op=sum");
    for bad in ["reduce", "reduce=axis=z", "reduce=axis=x:op=median"] {
        assert!(
            matches!(bad.parse::<Pipeline>(), Err(Error::Spec(_))),
            "{bad} should be a spec error"
        );
    }
    let mut rng = Rng::new(3);
    let img: Image<u8> = common::random_image(&mut rng, 37, 17, 3);
    let (host, _) = p.run(&Engine::cpu(), DynImage::U8(img.clone())).unwrap();
    let DynImage::F32(host) = host else {
        panic!("reduce outputs f32")
    };
    assert_eq!((host.width(), host.height(), host.channels()), (37, 1, 3));
    if let Some(e) = common::opencl_engine() {
        // The device chain: u8 loads, then the reduction, then a download.
        let (dev, _) = p.run(&e, DynImage::U8(img)).unwrap();
        let DynImage::F32(dev) = dev else {
            panic!("reduce outputs f32")
        };
        for (a, b) in values(&host).iter().zip(values(&dev)) {
            assert!((a - b).abs() <= 1e-4 * a.abs(), "{a} vs {b}");
        }
    } else {
        common::skip_no_opencl("reduce device chain");
    }
}

/// Variants whose integer sums are rounded once (f64 or the OpenCL integer
/// path); the others are held to their float bound elsewhere.
const ROUNDED_ONCE: &[&str] = &["cpu", "x_tree", "x_shfl", "y_split", "y_fused"];

/// Sums, means, min and max of every channel of `img` along both axes
/// against u64 arithmetic, for the variants of [`ROUNDED_ONCE`].
fn check_integer_exact<T: Sample>(img: &Image<T>) {
    let (w, h) = (img.width(), img.height());
    for (name, e, _) in engines() {
        if !ROUNDED_ONCE.contains(&name.as_str()) {
            continue;
        }
        for axis in [Axis::X, Axis::Y] {
            for op in [
                Reduction::Sum,
                Reduction::Mean,
                Reduction::Min,
                Reduction::Max,
            ] {
                let got = match e.reduce(img, &ReduceParams { axis, op }) {
                    Ok(g) => g,
                    Err(Error::Unsupported { .. }) => continue,
                    Err(err) => panic!("{name}: {err}"),
                };
                let (n, len) = if axis == Axis::X { (h, w) } else { (w, h) };
                for (i, ch) in (0..n).flat_map(|i| (0..img.channels()).map(move |ch| (i, ch))) {
                    let at = |j| {
                        let v = if axis == Axis::X {
                            img.get(j, i, ch)
                        } else {
                            img.get(i, j, ch)
                        };
                        v.to_f32() as u64
                    };
                    let want = match op {
                        Reduction::Sum | Reduction::Mean => (0..len).map(at).sum::<u64>(),
                        Reduction::Min => (0..len).map(at).min().unwrap_or(0),
                        _ => (0..len).map(at).max().unwrap_or(0),
                    };
                    let g = if axis == Axis::X {
                        got.get(0, i, ch)
                    } else {
                        got.get(i, 0, ch)
                    };
                    let at_line = format!("{name} {axis:?} {op:?} line {i} channel {ch}");
                    if op == Reduction::Mean {
                        // The exact sum rounded once, then divided: within two
                        // roundings of the exact mean.
                        let exact = want as f64 / len as f64;
                        let err = (f64::from(g) - exact).abs();
                        assert!(
                            err <= exact * 2f64.powi(-23),
                            "{at_line}: {g} against {exact}"
                        );
                    } else {
                        assert_eq!(g, want as f32, "{at_line}");
                    }
                }
            }
        }
    }
}

#[test]
fn integer_sums_past_2_pow_24_are_rounded_once_and_max_is_exact() {
    let mut rng = Rng::new(11);
    // Near-full-scale u16: every line's sum passes 2^24 within ~260 samples.
    let data = (0..37 * 1301)
        .map(|_| 65535 - rng.below(1000) as u16)
        .collect();
    check_integer_exact(&Image::from_vec(37, 1301, 1, data).expect("shape"));
    let data = (0..1301 * 3)
        .map(|_| 65535 - rng.below(1000) as u16)
        .collect();
    check_integer_exact(&Image::from_vec(1301, 3, 1, data).expect("shape"));
}

#[test]
fn gray_integer_lines_sum_exactly_whatever_their_alignment() {
    // Gray integer rows load 16 bytes at a time from each row's first
    // 16-byte boundary: rows of every length mod 16 (so every start
    // offset), shorter and longer than one load per work-item. Columns go
    // 4 to a work-item when the width is a multiple of 4 (4, 64, 1028,
    // 8192: one and several groups of columns, the last one partial), and
    // u8 columns 8 to a work-item on rows of 16384 samples and more that
    // are a multiple of 8 (16392: a partial group of 256 columns). Rows
    // of up to 1024 loads (16384 u8, 8192 u16 samples) take a team of 32
    // work-items, 8 rows to a group (heights not multiples of 8); longer
    // ones the whole group (16387).
    let mut rng = Rng::new(12);
    let sizes = [
        (1, 3),
        (15, 17),
        (17, 33),
        (4, 5),
        (64, 300),
        (200, 13),
        (1028, 37),
        (4096 + 4099, 19),
        (8192, 9),
        (16387, 3),
        (16392, 41),
    ];
    for (w, h) in sizes {
        let data = (0..w * h).map(|_| rng.below(256) as u8).collect();
        check_integer_exact(&Image::from_vec(w, h, 1, data).expect("shape"));
        let data = (0..w * h).map(|_| rng.below(65536) as u16).collect();
        check_integer_exact(&Image::from_vec(w, h, 1, data).expect("shape"));
    }
}

#[test]
fn u8_rgb_lines_sum_exactly_whatever_their_alignment() {
    // x_tree and x_shfl read u8 RGB rows as bytes in 16-byte loads from
    // each row's first 16-byte boundary, a load's bytes going to the
    // channels by its start (mod 3): widths of every length mod 16 (so
    // rows start at every offset and phase), rows shorter than one load,
    // of one to a few loads per work-item, and rows of 16 whose byte
    // count is odd (so they start at every offset mod 16) long enough for
    // the walk's four loads in flight, with teams of 32 (1365: 255 loads
    // a row) and of the whole group (5467: 1025 loads, one past the
    // teams of 32 that 5466 still takes; 16387). Each channel has its own
    // range, so a byte counted in the wrong channel changes a sum, a min
    // or a max.
    let mut rng = Rng::new(15);
    let sizes = [
        (1, 5),
        (5, 3),
        (6, 7),
        (11, 9),
        (16, 4),
        (21, 13),
        (43, 11),
        (333, 10),
        (1365, 16),
        (5466, 4),
        (5467, 16),
        (16387, 16),
    ];
    for (w, h) in sizes {
        let data = (0..w * h * 3)
            .map(|i| match i % 3 {
                0 => rng.below(60) as u8,
                1 => 100 + rng.below(60) as u8,
                _ => 255 - rng.below(60) as u8,
            })
            .collect();
        check_integer_exact(&Image::from_vec(w, h, 3, data).expect("shape"));
    }
}

#[test]
fn tall_narrow_u8_gray_columns_sum_exactly() {
    // y_split and y_fused on tall narrow u8 images: 64 blocks, each part
    // of a block walking hundreds of rows (4 x 200003: 391 rows a part;
    // 12 x 131101: 257), near full scale, so that a walk that lost or
    // wrapped a narrower count of rows would show.
    let mut rng = Rng::new(13);
    for (w, h) in [(4, 200_003), (12, 131_101)] {
        let data = (0..w * h).map(|_| 255 - rng.below(3) as u8).collect();
        check_integer_exact(&Image::from_vec(w, h, 1, data).expect("shape"));
    }
}

#[test]
fn integer_rgb_columns_sum_exactly_read_as_gray_or_as_pixels() {
    // y_split and y_fused read integer RGB whose 3 x width is a multiple of
    // 4 as gray samples 3 x width wide (4, 8, 1364: one and several groups
    // of columns; 1364 x 520 is 32 strips of 3 blocks, so y_fused's last
    // group of each strip merges; 5464: u8 16392 samples wide, 8 columns a
    // work-item), other widths (5, 7) as pixels. Near full
    // scale; 4 x 3001 and 5 x 777 have several blocks too.
    let mut rng = Rng::new(14);
    for (w, h) in [
        (4, 3001),
        (5, 777),
        (7, 300),
        (8, 9),
        (1364, 520),
        (5464, 40),
    ] {
        let data = (0..w * h * 3).map(|_| 255 - rng.below(7) as u8).collect();
        check_integer_exact(&Image::from_vec(w, h, 3, data).expect("shape"));
        let data = (0..w * h * 3)
            .map(|_| 65535 - rng.below(1000) as u16)
            .collect();
        check_integer_exact(&Image::from_vec(w, h, 3, data).expect("shape"));
    }
}

#[test]
fn a_u16_row_longer_than_a_work_items_uint_still_sums_exactly() {
    // x_tree's work-item adds width / 256 samples: past 2^16 of them, the
    // uint accumulator must fold into the ulong before it overflows.
    let w = 256 * 65536 + 777;
    let img = Image::<u16>::from_vec(w, 1, 1, vec![65535; w]).expect("shape");
    check_integer_exact(&img);
}

/// Sums, min and max of every column and channel from `y_split` and
/// `y_fused` alone against u64 arithmetic (for images too tall for
/// [`check_integer_exact`]'s every variant on both axes).
fn check_columns_exact<T: Sample>(img: &Image<T>) {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let (mut sum, mut min, mut max) = (vec![0u64; w * c], vec![u64::MAX; w * c], vec![0u64; w * c]);
    for y in 0..h {
        for (i, v) in img.row(y).iter().enumerate() {
            let v = v.to_f32() as u64;
            sum[i] += v;
            min[i] = min[i].min(v);
            max[i] = max[i].max(v);
        }
    }
    for (name, e, _) in engines() {
        if name != "y_split" && name != "y_fused" {
            continue;
        }
        for (op, want) in [
            (Reduction::Sum, &sum),
            (Reduction::Min, &min),
            (Reduction::Max, &max),
        ] {
            let got = e
                .reduce(img, &ReduceParams { axis: Axis::Y, op })
                .expect(&name);
            let got: Vec<f32> = (0..w * c).map(|i| got.get(i / c, 0, i % c)).collect();
            let want: Vec<f32> = want.iter().map(|&v| v as f32).collect();
            assert_eq!(got, want, "{name} {op:?} {w}x{h}x{c}");
        }
    }
}

#[test]
fn u16_columns_whose_blocks_pass_a_uint_still_sum_exactly() {
    // y_split and y_fused hold a block's column results in uints where its
    // rows fit 2^16 u16 samples (BLOCK_FITS), else in ulongs written as two
    // words. 64 blocks of 65601 rows pass it, near full scale: gray read 4
    // columns a load, and RGB pixels one at a time (3 x 1 is no multiple
    // of 4). Only those variants, along y: the image is 4 M rows high.
    let mut rng = Rng::new(16);
    let h = 64 * 65_600 + 5;
    for (w, c) in [(4, 1), (1, 3)] {
        let data = (0..w * h * c)
            .map(|_| 65535 - rng.below(5) as u16)
            .collect();
        check_columns_exact(&Image::<u16>::from_vec(w, h, c, data).expect("shape"));
    }
}

#[test]
fn integer_columns_in_several_blocks_sum_exactly() {
    // Several row blocks, so the blocks' partial rows and their merge
    // (y_split's second pass, y_fused's last group of a strip): u8 gray
    // 16392 wide (8 columns a work-item, 3 blocks), RGB 5464 wide read as
    // gray (u8 16392 samples: 8 columns; u16: 4), RGBA pixels (4 blocks).
    let mut rng = Rng::new(17);
    for (w, h, c) in [(16392, 520, 1), (5464, 300, 3), (37, 777, 4)] {
        let data = (0..w * h * c).map(|_| rng.below(256) as u8).collect();
        check_columns_exact(&Image::<u8>::from_vec(w, h, c, data).expect("shape"));
        let data = (0..w * h * c).map(|_| rng.below(65536) as u16).collect();
        check_columns_exact(&Image::<u16>::from_vec(w, h, c, data).expect("shape"));
    }
}

/// `img` with each row padded by `pad` samples of garbage (NaN for f32),
/// which no path may read.
fn padded<T: Sample>(img: &Image<T>, pad: usize, junk: T) -> Image<T> {
    let stride = img.row_len() + pad;
    let mut data = vec![junk; stride * img.height()];
    for y in 0..img.height() {
        data[y * stride..][..img.row_len()].copy_from_slice(img.row(y));
    }
    Image::from_vec_with_stride(img.width(), img.height(), img.channels(), stride, data)
        .expect("stride")
}

/// The CPU path on both sides of its steps (48-sample row lanes, 8 and
/// 16 columns of vectors, 8-row groups and 64-row bands), packed and
/// padded, every channel count: sums and means within the CPU bound of
/// 2u against f64, min and max equal to the reference.
#[test]
fn the_cpu_path_holds_its_bound_around_its_steps_and_bands() {
    let mut rng = Rng::new(0x5245_4443);
    let e = Engine::cpu();
    for (w, h) in [
        (1, 1),
        (1, 67),
        (47, 9),
        (49, 8),
        (97, 65),
        (131, 7),
        (1031, 3),
    ] {
        for c in [1, 3, 4] {
            let img = awkward(&mut rng, w, h, c);
            for img in [padded(&img, 5, f32::NAN), img] {
                for p in params() {
                    let got = values(&e.reduce(&img, &p).expect("reduce"));
                    let want = reduce::reference::reduce(&img, &p);
                    let n = want.count as f64;
                    for (i, (g, (v, a))) in got
                        .iter()
                        .zip(want.value.iter().zip(&want.abs_sum))
                        .enumerate()
                    {
                        let limit = match p.op {
                            Reduction::Sum => 2.0 * U * a,
                            Reduction::Mean => 5.0 * U * a / n,
                            _ => 0.0,
                        };
                        let err = (*g as f64 - v).abs();
                        assert!(
                            err <= limit,
                            "{w}x{h}x{c} {p} output {i}: {g} vs {v}, error {err:e} > {limit:e}"
                        );
                    }
                }
            }
        }
    }
}

fn params() -> impl Iterator<Item = ReduceParams> {
    [Axis::X, Axis::Y]
        .into_iter()
        .flat_map(|axis| Reduction::ALL.map(|op| ReduceParams { axis, op }))
}

/// u8 and u16 sums on the CPU are exact integers rounded once to f32, and
/// means the exact sum over the count rounded once, on odd sizes, packed
/// and padded.
#[test]
fn cpu_integer_sums_and_means_are_rounded_once() {
    let mut rng = Rng::new(0x494e_5453);
    for (w, h) in [(1, 1), (3, 70), (49, 13), (1031, 5)] {
        for c in [1, 3, 4] {
            let img8: Image<u8> = common::random_image(&mut rng, w, h, c);
            check_rounded_once(&img8);
            check_rounded_once(&padded(&img8, 3, 255));
            // Near full scale, so long lines pass 2^24.
            let data = (0..w * h * c)
                .map(|_| 65535 - rng.below(300) as u16)
                .collect();
            let img16 = Image::<u16>::from_vec(w, h, c, data).expect("shape");
            check_rounded_once(&img16);
            check_rounded_once(&padded(&img16, 3, 65535));
        }
    }
}

fn check_rounded_once<T: Sample>(img: &Image<T>) {
    let (w, h, c) = (img.width(), img.height(), img.channels());
    for p in params().filter(|p| matches!(p.op, Reduction::Sum | Reduction::Mean)) {
        let got = Engine::cpu().reduce(img, &p).expect("reduce");
        let (outs, len) = if p.axis == Axis::X { (h, w) } else { (w, h) };
        for o in 0..outs {
            for ch in 0..c {
                let at = |i| {
                    let (x, y) = if p.axis == Axis::X { (i, o) } else { (o, i) };
                    img.get(x, y, ch).to_f32() as u64
                };
                let sum: u64 = (0..len).map(at).sum();
                let want = match p.op {
                    Reduction::Sum => sum as f32,
                    _ => (sum as f64 / len as f64) as f32,
                };
                let (x, y) = if p.axis == Axis::X { (0, o) } else { (o, 0) };
                assert_eq!(
                    got.get(x, y, ch),
                    want,
                    "{w}x{h}x{c} {p} line {o} channel {ch}"
                );
            }
        }
    }
}

/// NaN and infinities inside the vector lanes of the CPU path (not only
/// in short lines): a NaN makes its line's sum NaN, +inf makes it +inf,
/// both infinities NaN; min and max skip the NaN.
#[test]
fn cpu_nan_and_infinities_inside_long_lines_follow_the_rules() {
    let (w, h) = (203, 131);
    let base = Image::<f32>::from_fn(w, h, 1, |x, y, _| ((x * 7 + y * 3) % 19) as f32 - 9.0)
        .expect("shape");
    let mut data: Vec<f32> = base.rows().flatten().copied().collect();
    data[50 * w + 100] = f32::NAN; // row 50, column 100
    data[60 * w + 101] = f32::INFINITY; // row 60, column 101
    data[70 * w + 102] = f32::INFINITY; // row 70, column 102 ...
    data[71 * w + 102] = f32::NEG_INFINITY; // ... and row 71
    let img = Image::from_vec(w, h, 1, data).expect("shape");
    let e = Engine::cpu();
    for p in params() {
        let got = values(&e.reduce(&img, &p).expect("reduce"));
        let want = reduce::reference::reduce(&img, &p);
        for (i, (g, v)) in got.iter().zip(&want.value).enumerate() {
            if v.is_finite() {
                continue; // the bound is checked elsewhere
            }
            assert!(
                (*g as f64 == *v) || (g.is_nan() && v.is_nan()),
                "{p} output {i}: {g}, want {v}"
            );
        }
        let nonfinite = want.value.iter().filter(|v| !v.is_finite()).count();
        // Min and max leave NaN out, so only the infinities show.
        let expect = match (p.axis, p.op) {
            // row 71 (-inf); column 102 (-inf)
            (_, Reduction::Min) => 1,
            // rows 60 and 70 (+inf); columns 101 and 102 (+inf)
            (_, Reduction::Max) => 2,
            // rows 50 (NaN), 60 (+inf), 70 (+inf), 71 (-inf)
            (Axis::X, _) => 4,
            // columns 100 (NaN), 101 (+inf), 102 (+inf - inf: NaN)
            (Axis::Y, _) => 3,
        };
        assert_eq!(
            nonfinite, expect,
            "{p}: the NaN and infinities reach their own lines"
        );
    }
}
