//! `histogram`: exact counts against counts written here for every variant
//! and the CPU path (every u8 and u16 level in its own bin, the hi edge,
//! values outside the range and NaN left out; u8 images over narrower
//! ranges and finer bins), typed errors for bad
//! parameters, and `filterctl histogram`'s JSON and PNG outputs.

use clfilter::ops::histogram::{self, HistogramExt, HistogramParams};
use clfilter::{DynImage, Engine, Error, Image};

mod common;
use common::Rng;

/// The CPU engine, then each OpenCL variant, forced.
fn engines() -> Vec<(String, Engine)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu())];
    match common::opencl_engine() {
        Some(e) => {
            for spec in histogram::SPEC.variants {
                out.push((
                    spec.name.into(),
                    e.with_variant(Some("histogram"), spec.name),
                ));
            }
        }
        None => common::skip_no_opencl("histogram variants"),
    }
    out
}

/// Counts with the documented rule, in f64 arithmetic where it cannot
/// differ from f32's (the tests' ranges and values are exact in both).
fn count(values: &[f32], channels: usize, bins: usize, lo: f64, hi: f64) -> Vec<Vec<u64>> {
    let mut out = vec![vec![0u64; bins]; channels];
    for (i, &v) in values.iter().enumerate() {
        let v = v as f64;
        if v >= lo && v <= hi {
            let b = (((v - lo) * bins as f64 / (hi - lo)).floor() as usize).min(bins - 1);
            out[i % channels][b] += 1;
        }
    }
    out
}

/// An image's samples in order, as f32.
fn values<T: clfilter::Sample>(img: &Image<T>) -> Vec<f32> {
    img.rows()
        .flat_map(|r| r.iter().map(|v| v.to_f32()))
        .collect()
}

/// Counts with the library's f32 bins (`Binning::bin`), for ranges where
/// f64 could put an edge sample in the next bin.
fn count_by(b: &histogram::Binning, values: &[f32], channels: usize) -> Vec<Vec<u64>> {
    let mut out = vec![vec![0u64; b.bins]; channels];
    for (i, &v) in values.iter().enumerate() {
        if let Some(k) = b.bin(v) {
            out[i % channels][k] += 1;
        }
    }
    out
}

#[test]
fn every_integer_level_has_its_own_bin() {
    // u8: every level once per channel, 256 bins over 0:255 (the default).
    let img = Image::<u8>::from_fn(256, 1, 3, |x, _, c| ((x + 7 * c) % 256) as u8).unwrap();
    // u16: every level once, one bin per level.
    let img16 = Image::<u16>::from_fn(256, 256, 1, |x, y, _| (y * 256 + x) as u16).unwrap();
    let per_level = HistogramParams::per_level(clfilter::SampleType::U16).unwrap();
    for (name, e) in engines() {
        let h = e
            .histogram(
                &img,
                &HistogramParams::default_for(clfilter::SampleType::U8),
            )
            .unwrap();
        assert_eq!(h.counts, vec![vec![1u64; 256]; 3], "{name} u8");
        match e.histogram(&img16, &per_level) {
            Ok(h) => assert_eq!(h.counts, vec![vec![1u64; 65536]], "{name} u16"),
            // The private variant keeps at most 16384 bins of a channel.
            Err(Error::Unsupported { .. }) => assert_eq!(name, "local_private"),
            Err(err) => panic!("{name}: {err}"),
        }
    }
}

#[test]
fn f32_counts_are_exact_with_the_edges_and_nan_rules() {
    let mut rng = Rng::new(11);
    for (w, h, c) in [
        (1, 1, 1),
        (1, 37, 3),
        (263, 1, 4),
        (131, 67, 1),
        (17, 13, 3),
    ] {
        let mut img: Image<f32> = common::random_image_nan(&mut rng, w, h, c, 17);
        // The hi edge, the lo edge and values outside the range.
        let n = w * h * c;
        let data: Vec<f32> = img
            .rows()
            .flat_map(|r| r.iter().copied())
            .enumerate()
            .map(|(i, v)| match i % 11 {
                0 => 2.0,
                1 => -2.0,
                _ => v,
            })
            .collect();
        img = Image::from_vec(w, h, c, data.clone()).unwrap();
        // local_private keeps 8192 counts as words, 16384 as 16-bit
        // halves (3000 bins of 3 or 4 channels, 12000 of gray), more as
        // halves of a channel per group (12000 bins of 3 or 4 channels).
        for bins in [1, 7, 256, 1000, 3000, 12000] {
            let p = HistogramParams {
                bins,
                lo: -2.0,
                hi: 2.0,
            };
            let want = count(&data, c, bins, -2.0, 2.0);
            let counted: u64 = want.iter().flatten().sum();
            for (name, e) in engines() {
                let got = e
                    .histogram(&img, &p)
                    .unwrap_or_else(|err| panic!("{name} bins {bins}: {err}"));
                assert_eq!(got.counts, want, "{name} {w}x{h}x{c} bins {bins}");
                let excluded: u64 = got.excluded.iter().sum();
                assert_eq!(excluded + counted, n as u64, "{name}: excluded");
            }
        }
    }
}

/// u8 images (the CPU path's level table and private tables): ranges that
/// leave levels out at both ends, bins finer and coarser than the levels,
/// widths that end inside a group of pixels.
#[test]
fn u8_counts_follow_the_rule_for_any_range() {
    let mut rng = Rng::new(12);
    for (w, h, c) in [(1, 1, 1), (5, 3, 3), (263, 7, 4), (131, 67, 1), (17, 13, 3)] {
        let img: Image<u8> = common::random_image(&mut rng, w, h, c);
        let data = values(&img);
        // Every variant takes every binning of u8 (local_private counts
        // the levels and bins them at its merge).
        for (bins, lo, hi) in [
            (256, 0.0, 255.0),
            (7, 10.0, 200.0),
            (4096, 0.0, 255.0),
            (1, 100.0, 101.0),
            (100, 0.5, 256.5),
            (256, 0.0, 256.0),
            (300, -20.0, 280.0),
            (20000, 3.0, 250.0),
            (2, 0.0, 256.0),
            (16, 0.0, 255.0),
        ] {
            let p = HistogramParams { bins, lo, hi };
            let want = count(&data, c, bins, lo as f64, hi as f64);
            for (name, e) in engines() {
                let got = e
                    .histogram(&img, &p)
                    .unwrap_or_else(|err| panic!("{name} {bins} {lo}:{hi}: {err}"));
                assert_eq!(got.counts, want, "{name} {w}x{h}x{c} bins {bins} {lo}:{hi}");
            }
        }
    }
}

#[test]
fn bad_parameters_are_typed_errors() {
    let img = Image::<f32>::from_vec(2, 1, 1, vec![0.5, 0.25]).unwrap();
    let e = Engine::cpu();
    for (bins, lo, hi) in [
        (0, 0.0, 1.0),
        (histogram::MAX_BINS + 1, 0.0, 1.0),
        (usize::MAX, 0.0, 1.0),
        (16, 1.0, 1.0),
        (16, 2.0, 1.0),
        (16, f32::NAN, 1.0),
        (16, 0.0, f32::INFINITY),
        (16, -3e38, 3e38),
        (1 << 20, 0.0, 1e-40),
    ] {
        let p = HistogramParams { bins, lo, hi };
        assert!(
            matches!(e.histogram(&img, &p), Err(Error::InvalidArgument(_))),
            "{p:?}"
        );
    }
}

fn filterctl() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", common::process_cache_dir())
        .env_remove("FILTERCTL_DEVICE")
        .env_remove("FILTERCTL_VARIANT");
    c
}

#[test]
fn the_cli_prints_the_json_shape_and_draws_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.png");
    let img =
        Image::<u8>::from_fn(61, 29, 3, |x, y, c| ((x * 3 + y * 5 + c * 40) % 256) as u8).unwrap();
    clfilter::image::save(&DynImage::U8(img.clone()), &input).unwrap();
    let out = filterctl()
        .args(["--device", "cpu", "histogram", "--json", "--bins", "16"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["bins", "counts", "range"]);
    assert_eq!(v["bins"], 16);
    assert_eq!(v["range"], serde_json::json!([0.0, 255.0]));
    let values: Vec<f32> = img
        .rows()
        .flat_map(|r| r.iter().map(|&s| s as f32))
        .collect();
    let want = count(&values, 3, 16, 0.0, 255.0);
    assert_eq!(v["counts"], serde_json::json!(want));

    let png = dir.path().join("hist.png");
    filterctl()
        .args(["--device", "cpu", "histogram", "--plot"])
        .arg(&png)
        .arg(&input)
        .assert()
        .success();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let DynImage::U8(chart) = clfilter::image::load(&png).unwrap() else {
        panic!("an 8-bit PNG")
    };
    assert!(chart.width() >= 640 && chart.height() >= 360);

    for bad in [
        ["--bins", "0"],
        ["--range", "5:1"],
        ["--range", "nan:1"],
        ["--range", "x"],
    ] {
        filterctl()
            .args(["--device", "cpu", "histogram"])
            .args(bad)
            .arg(&input)
            .assert()
            .code(2);
    }
    // An end past f32's range is named as typed, not as the infinity it
    // would round to.
    filterctl()
        .args(["--device", "cpu", "histogram", "--range", "0:1e300"])
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("1e300 is beyond the f32 range"));
}

#[test]
fn u8_smooth_images_count_alike_on_every_path_and_channel_count() {
    // Smooth ramps put a warp's samples in one or two bins (the byte path's
    // bank slots); odd sizes leave tails shorter than a 16-byte (gray,
    // RGBA) or 12-byte (RGB) chunk.
    for (w, h, c) in [
        (1, 1, 1),
        (1, 37, 3),
        (257, 31, 4),
        (1021, 13, 3),
        (613, 7, 1),
        (517, 131, 4),
    ] {
        let img = Image::<u8>::from_fn(w, h, c, |x, y, k| ((x / 9 + y + 40 * k) % 256) as u8)
            .expect("shape");
        // Flat channels over several groups: one bin takes every sample of
        // a group (RGB: channel 2's 16-bit halves take many).
        let flat = Image::<u8>::from_fn(w, h, c, |_, _, k| if k % 2 == 0 { 200 } else { 255 })
            .expect("shape");
        for img in [img, flat] {
            for params in [
                HistogramParams::default_for(clfilter::SampleType::U8),
                HistogramParams::per_level(clfilter::SampleType::U8).expect("u8 levels"),
            ] {
                let mut want = vec![vec![0u64; 256]; c];
                for y in 0..h {
                    for x in 0..w {
                        for (k, counts) in want.iter_mut().enumerate() {
                            counts[img.get(x, y, k) as usize] += 1;
                        }
                    }
                }
                for (name, e) in engines() {
                    let got = e.histogram(&img, &params).expect("histogram");
                    assert_eq!(got.counts, want, "{name} {w}x{h}x{c} {params:?}");
                }
            }
        }
    }
}

#[test]
fn u8_large_images_count_exactly_with_more_pixels_per_item() {
    // Large images give each work-item of the byte path more pixels: gray
    // and RGBA 256 while every compute unit keeps 6 groups (PoCL on 2
    // cores: from 786432 pixels), RGB 128 while it keeps 16 (from 2^20);
    // a prime-ish size leaves a ragged last group and a
    // tail shorter than a 16-byte chunk. Random bins, and a constant image
    // (RGB: lanes 30 and 31 count all of channel 2's samples of a bin in
    // 16-bit halves, the most they can hold in a group).
    let mut rng = Rng::new(0x4849_5354);
    for c in [1, 3, 4] {
        let random: Image<u8> = common::random_image(&mut rng, 1031, 1021, c);
        let flat =
            Image::<u8>::from_fn(1031, 1021, c, |_, _, k| [9u8, 250, 77, 3][k]).expect("shape");
        for (what, img) in [("random", random), ("constant", flat)] {
            let params = HistogramParams::default_for(clfilter::SampleType::U8);
            let want = count_by(&params.binning().expect("binning"), &values(&img), c);
            for (name, e) in engines() {
                let got = e.histogram(&img, &params).expect("histogram");
                assert_eq!(got.counts, want, "{name} {what} 1031x1021x{c}");
            }
            // Levels binned at the merge of every group: coarse bins (many
            // levels, and groups, adding into one bin) and fine ones.
            let data = values(&img);
            for (bins, lo, hi) in [(37, 5.5, 250.0), (4096, 0.0, 255.0)] {
                let want = count(&data, c, bins, lo as f64, hi as f64);
                let p = HistogramParams { bins, lo, hi };
                for (name, e) in engines() {
                    let got = e.histogram(&img, &p).expect("histogram");
                    assert_eq!(got.counts, want, "{name} {what} 1031x1021x{c} {bins}");
                }
            }
        }
    }
}

#[test]
fn u16_and_f32_counts_hold_in_every_local_layout() {
    // local_private keeps at most 8192 counts (channels x bins) in
    // words; past 8192 it keeps 16-bit
    // halves (3 or 4 channels of 3072 or 4096 bins), past 16384 one
    // channel's halves per group (6144 bins; a second launch dimension).
    // Random samples on odd sizes, ranges that leave samples out at both
    // ends, and constant images (a group's whole count in one half).
    let mut rng = Rng::new(0x0C4A);
    for (w, h, c) in [
        (1, 1, 3),
        (1, 41, 4),
        (263, 1, 3),
        (131, 67, 4),
        (1031, 97, 3),
    ] {
        let random: Image<u16> = common::random_image(&mut rng, w, h, c);
        let flat =
            Image::<u16>::from_fn(w, h, c, |_, _, k| [65535u16, 2, 40000, 0][k]).expect("shape");
        for img16 in [random, flat] {
            let d16 = values(&img16);
            // Bin widths of powers of two: f64 and f32 bin alike.
            for (bins, lo, hi) in [
                (4096, 0.0, 65536.0),
                (6144, 1000.0, 25576.0),
                (3072, 0.0, 24576.0),
            ] {
                let p = HistogramParams { bins, lo, hi };
                let want = count(&d16, c, bins, lo as f64, hi as f64);
                for (name, e) in engines() {
                    let got = e.histogram(&img16, &p).expect("u16 histogram");
                    assert_eq!(got.counts, want, "{name} u16 {w}x{h}x{c} {bins}");
                }
            }
        }
        // Gray u16: the default 256 bins over 0:65535 (v * 256 / 65535 is
        // whole only at the ends), and 100 over a narrower range.
        let gray: Image<u16> = common::random_image(&mut rng, w, h * c, 1);
        let dg = values(&gray);
        for (bins, lo, hi) in [(256, 0.0, 65535.0), (100, 12800.0, 38400.0)] {
            let p = HistogramParams { bins, lo, hi };
            let want = count(&dg, 1, bins, lo as f64, hi as f64);
            for (name, e) in engines() {
                let got = e.histogram(&gray, &p).expect("u16 histogram");
                assert_eq!(got.counts, want, "{name} u16 {w}x{}x1 {bins}", h * c);
            }
        }
        let img32: Image<f32> = common::random_image(&mut rng, w, h, c);
        let d32 = values(&img32);
        for bins in [4096, 8192] {
            let p = HistogramParams {
                bins,
                lo: 0.0,
                hi: 0.5,
            };
            let want = count(&d32, c, bins, 0.0, 0.5);
            for (name, e) in engines() {
                let got = e.histogram(&img32, &p).expect("f32 histogram");
                assert_eq!(got.counts, want, "{name} f32 {w}x{h}x{c} {bins}");
            }
        }
    }
}

#[test]
fn u8_constant_and_two_value_images_count_exactly() {
    // One value (every lane of every warp on one bin per channel) and two
    // values picked at random per pixel, on sizes with ragged last groups
    // and tails shorter than a 16-byte word, past one group of pixels
    // (the byte path's bank slots, RGB's 16-bit halves, the tail path).
    let mut rng = Rng::new(0x2_7A1);
    for (w, h) in [(1, 1), (3, 1), (1, 5), (509, 257), (1031, 67)] {
        for c in [1, 3, 4] {
            let one =
                Image::<u8>::from_fn(w, h, c, |_, _, k| [7u8, 255, 0, 128][k]).expect("shape");
            let a = [0u8, 200, 31, 255];
            let b = [1u8, 13, 31, 254];
            let mut data = Vec::with_capacity(w * h * c);
            for _ in 0..w * h {
                let px = if rng.below(2) == 0 { a } else { b };
                data.extend_from_slice(&px[..c]);
            }
            let two = Image::<u8>::from_vec(w, h, c, data).expect("shape");
            for (what, img) in [("constant", one), ("two-value", two)] {
                let mut want = vec![vec![0u64; 256]; c];
                for y in 0..h {
                    for (i, &v) in img.row(y).iter().enumerate() {
                        want[i % c][v as usize] += 1;
                    }
                }
                let params = HistogramParams::default_for(clfilter::SampleType::U8);
                for (name, e) in engines() {
                    let got = e.histogram(&img, &params).expect("histogram");
                    assert_eq!(got.counts, want, "{name} {what} {w}x{h}x{c}");
                }
            }
        }
    }
}

#[test]
fn cpu_u8_level_counts_bin_like_the_reference_on_padded_and_flat_images() {
    // The CPU path counts levels (24 bytes a step, several tables per
    // channel) and bins them afterwards: any bin count and range must give
    // the reference's counts, on rows that are not whole steps, padded
    // rows (the padding holds samples that must not be counted) and flat
    // images (one counter takes every sample).
    let mut rng = Rng::new(0x4c45_564c);
    for (w, h) in [(1, 1), (1, 41), (23, 2), (25, 3), (97, 67), (1031, 9)] {
        for c in [1, 3, 4] {
            let img: Image<u8> = common::random_image(&mut rng, w, h, c);
            let stride = w * c + 7;
            let mut data = vec![0u8; stride * h];
            for y in 0..h {
                data[y * stride..][..w * c].copy_from_slice(img.row(y));
            }
            let padded = Image::from_vec_with_stride(w, h, c, stride, data).expect("stride");
            let flat = Image::<u8>::from_fn(w, h, c, |_, _, k| 17 * k as u8).expect("shape");
            for img in [img, padded, flat] {
                for (bins, lo, hi) in [
                    (256, 0.0, 255.0),
                    (4096, 0.0, 256.0),
                    (5, 10.5, 99.0),
                    (3, -4.0, 1e6),
                ] {
                    let b = HistogramParams { bins, lo, hi }.binning().expect("binning");
                    let got = Engine::cpu()
                        .histogram(&img, &HistogramParams { bins, lo, hi })
                        .expect("histogram");
                    assert_eq!(
                        got,
                        histogram::reference::histogram(&img, &b),
                        "{w}x{h}x{c} {bins} {lo}:{hi}"
                    );
                }
            }
        }
    }
}

#[test]
fn u16_level_shifts_hold_for_every_level() {
    // Binnings whose bins are a shift of the u16 levels (the kernels then
    // bin by the shift), and near misses that must not be taken for one.
    for (bins, lo, hi, want) in [
        (256, 0.0, 65535.0, Some((8, 65535, 255))),
        (4096, 0.0, 65536.0, Some((4, 65535, 4095))),
        (1024, -0.5, 4095.5, Some((2, 4095, 1023))),
        (1, 0.0, 65535.0, Some((16, 65535, 0))),
        // The hi edge's level clamped into the last bin.
        (4096, 0.0, 4096.0, Some((0, 4096, 4095))),
        (3072, 0.0, 24576.0, Some((3, 24576, 3071))),
        // 4096 / 4095 rounded to f32 puts level 4094 in bin 4095.
        (4096, 0.0, 4095.0, None),
        // Level 0 outside the range or not in bin 0; bins of no shift.
        (100, 12800.0, 38400.0, None),
        (256, -1.0, 255.0, None),
        (1000, 0.0, 65535.0, None),
    ] {
        let b = HistogramParams { bins, lo, hi }.binning().expect("binning");
        let got = b.level_shift(65535);
        assert_eq!(got, want, "{bins} {lo}:{hi}");
        if let Some((s, top, last)) = got {
            for v in 0..=65535u32 {
                let rule = (v <= top).then_some((v >> s).min(last) as usize);
                assert_eq!(b.bin(v as f32), rule, "{bins} {lo}:{hi} level {v}");
            }
        }
    }
}

#[test]
fn u16_shifted_bins_count_like_the_rule_on_every_path() {
    // 12-bit data in u16 and full-range u16 (past TOP: left out), gray and
    // colour, in binnings the kernels take by a shift.
    let mut rng = Rng::new(0x5_4F7);
    for (w, h, c) in [(1, 1, 1), (263, 3, 3), (131, 67, 1), (517, 31, 4)] {
        let full: Image<u16> = common::random_image(&mut rng, w, h, c);
        let twelve = Image::<u16>::from_fn(w, h, c, |x, y, k| {
            ((x * 7919 + y * 104_729 + k * 31) % 4096) as u16
        })
        .expect("shape");
        for img in [full, twelve] {
            let data = values(&img);
            for (bins, lo, hi) in [
                (256, 0.0, 65535.0),
                (4096, 0.0, 4095.0),
                (1024, -0.5, 4095.5),
            ] {
                let p = HistogramParams { bins, lo, hi };
                let want = count_by(&p.binning().expect("binning"), &data, c);
                for (name, e) in engines() {
                    let got = e.histogram(&img, &p).expect("histogram");
                    assert_eq!(got.counts, want, "{name} {w}x{h}x{c} {bins} {lo}:{hi}");
                }
            }
        }
    }
}

#[test]
fn large_images_count_exactly_with_longer_items_in_every_layout() {
    // On PoCL (2 compute units, 12 groups wanted) local_private gives a
    // work-item 128 pixels past 360448 and 256 past 720896 (128 at most
    // with 16-bit halves). Constant images put a group's every sample of
    // a channel in one count: 256 x 128 = 32768 in one 16-bit half.
    let mut rng = Rng::new(0x10_46);
    let cases: [(usize, usize, usize, usize, f32, f32); 5] = [
        // u16 RGB, 4096 bins: halves, 128 pixels an item.
        (1031, 400, 3, 4096, 0.0, 65536.0),
        // u16 gray, 12288 bins: halves of 8-sample loads.
        (1031, 400, 1, 12288, 0.0, 65535.0),
        // u16 RGB, 8192 bins by a shift of 3: a channel per group.
        (1031, 400, 3, 8192, 0.0, 65536.0),
        // 256 bins: words, 256 pixels an item (u16 by a shift of 8).
        (1031, 721, 3, 256, 0.0, 65535.0),
        (1031, 721, 1, 256, 0.0, 65535.0),
    ];
    for (w, h, c, bins, lo, hi) in cases {
        let random: Image<u16> = common::random_image(&mut rng, w, h, c);
        let flat =
            Image::<u16>::from_fn(w, h, c, |_, _, k| [65535u16, 0, 30000][k]).expect("shape");
        let p = HistogramParams { bins, lo, hi };
        let b = p.binning().expect("binning");
        for (what, img) in [("random", random), ("constant", flat)] {
            let want = count_by(&b, &values(&img), c);
            for (name, e) in engines() {
                let got = e.histogram(&img, &p).expect("histogram");
                assert_eq!(got.counts, want, "{name} {what} {w}x{h}x{c} {bins}");
            }
        }
    }
    // f32 gray at 256 pixels an item.
    let img: Image<f32> = common::random_image(&mut rng, 1031, 721, 1);
    let p = HistogramParams {
        bins: 256,
        lo: 0.0,
        hi: 1.0,
    };
    let want = count_by(&p.binning().expect("binning"), &values(&img), 1);
    for (name, e) in engines() {
        let got = e.histogram(&img, &p).expect("histogram");
        assert_eq!(got.counts, want, "{name} f32 1031x721");
    }
}
