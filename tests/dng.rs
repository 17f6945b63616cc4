//! DNG input: files written by the tests (`dng_files`: a TIFF writer and a
//! lossless JPEG encoder) read back exactly, for every Bayer pattern,
//! depth, byte order, strip and tile layout, lossless JPEG predictor and
//! component count; the levels, crop and white balance; the refusals;
//! truncated and corrupted files; and `filterctl apply` on a DNG.
#![cfg(feature = "formats")]

mod dng_files;

use std::path::Path;
use std::process::Command;

use clfilter::image::bayer::Pattern;
use clfilter::image::dng::{self, Dng};
use clfilter::image::DecodeLimits;
use clfilter::Error;
use dng_files::{ljpeg, noise, pack, tiles_of, Order, Raw, Val};

const LE: Order = Order(false);
const BE: Order = Order(true);

/// CFAPattern bytes for a pattern (0 red, 1 green, 2 blue).
fn cfa(p: Pattern) -> Vec<(u16, Val)> {
    let bytes = (0..4).map(|i| p.colour(i % 2, i / 2) as u8).collect();
    vec![(33421, Val::Short(vec![2, 2])), (33422, Val::Byte(bytes))]
}

/// An uncompressed raw image in strips of `rows` rows.
fn strips(o: Order, s: &[u16], w: usize, h: usize, bits: u16, rows: usize) -> Raw {
    let chunks = s
        .chunks(w * rows)
        .map(|c| pack(o, c, w, bits.into()))
        .collect();
    raw(w, h, bits, 1, None, rows, chunks)
}

fn raw(
    w: usize,
    h: usize,
    bits: u16,
    comp: u16,
    tile: Option<(u32, u32)>,
    rows: usize,
    chunks: Vec<Vec<u8>>,
) -> Raw {
    Raw {
        width: w as u32,
        height: h as u32,
        bits,
        compression: comp,
        tile,
        rows_per_strip: rows as u32,
        chunks,
        tags: cfa(Pattern::Rggb),
    }
}

fn read(file: &[u8]) -> clfilter::Result<Dng> {
    dng::decode(file, "test.dng", &DecodeLimits::default())
}

/// The samples of the even-sided top-left part (the default crop).
fn even(s: &[u16], w: usize, h: usize) -> Vec<u16> {
    let (ew, eh) = (w & !1, h & !1);
    (0..ew * eh).map(|i| s[(i / ew) * w + i % ew]).collect()
}

fn assert_mosaic(d: &Dng, s: &[u16], w: usize, h: usize) {
    assert_eq!((d.mosaic.width(), d.mosaic.height()), (w & !1, h & !1));
    assert_eq!(d.mosaic.clone().into_vec(), even(s, w, h));
}

#[test]
fn uncompressed_depths_byte_orders_and_strips() {
    for bits in [8u16, 10, 12, 14, 16] {
        for (i, &(w, h)) in [(2, 2), (9, 7), (14, 3), (31, 6)].iter().enumerate() {
            for (o, in_ifd0) in [(LE, false), (BE, true)] {
                let s = noise(w * h, bits.into(), (bits as u64) << 8 | i as u64);
                let r = strips(o, &s, w, h, bits, 2);
                let d = read(&dng_files::dng(o, &r, in_ifd0, &[])).unwrap();
                assert_mosaic(&d, &s, w, h);
                assert_eq!(
                    (d.bits, d.white),
                    (u32::from(bits), f64::from((1u32 << bits) - 1))
                );
                assert_eq!(d.pattern, Pattern::Rggb);
            }
        }
    }
}

#[test]
fn every_bayer_pattern_and_the_crop_shifts_it() {
    let (w, h) = (8, 6);
    let s = noise(w * h, 12, 3);
    for p in Pattern::ALL {
        let mut r = strips(LE, &s, w, h, 16, h);
        r.tags = cfa(p);
        assert_eq!(
            read(&dng_files::dng(LE, &r, false, &[])).unwrap().pattern,
            p
        );
        for (dx, dy) in [(1, 0), (0, 1), (1, 1), (2, 1)] {
            let mut r = r.clone();
            r.tags.push((50719, Val::Long(vec![dx, dy])));
            r.tags.push((50720, Val::Long(vec![5, 4]))); // 5 rounds down to 4
            let d = read(&dng_files::dng(LE, &r, false, &[])).unwrap();
            let want = Pattern::ALL
                .into_iter()
                .find(|q| {
                    (0..4).all(|i| {
                        q.colour(i % 2, i / 2) == p.colour(dx as usize + i % 2, dy as usize + i / 2)
                    })
                })
                .unwrap();
            assert_eq!(d.pattern, want, "{p} cropped at ({dx}, {dy})");
            assert_eq!((d.mosaic.width(), d.mosaic.height()), (4, 4));
            assert_eq!(d.mosaic.get(0, 0, 0), s[dy as usize * w + dx as usize]);
            assert_eq!(
                d.mosaic.get(3, 3, 0),
                s[(dy as usize + 3) * w + dx as usize + 3]
            );
        }
    }
}

#[test]
fn uncompressed_tiles_of_odd_sizes() {
    let (w, h) = (17, 13);
    for bits in [12u16, 16] {
        for (tw, th) in [(6, 5), (16, 16), (3, 1)] {
            let s = noise(w * h, bits.into(), tw as u64 * 7 + th as u64);
            let chunks = tiles_of(&s, w, h, tw, th)
                .iter()
                .map(|t| pack(BE, t, tw, bits.into()))
                .collect();
            let r = raw(w, h, bits, 1, Some((tw as u32, th as u32)), 0, chunks);
            assert_mosaic(
                &read(&dng_files::dng(BE, &r, false, &[])).unwrap(),
                &s,
                w,
                h,
            );
        }
    }
}

#[test]
fn lossless_jpeg_tiles_every_predictor_component_count_and_precision() {
    let (w, h) = (19, 11);
    for comps in [1usize, 2, 4] {
        for precision in [10u8, 12, 14, 16] {
            for predictor in 1..=7u8 {
                for restart in [0, 2] {
                    let (tw, th) = (8, 5);
                    let seed =
                        u64::from(predictor) << 16 | u64::from(precision) << 8 | comps as u64;
                    let s = noise(w * h, precision.into(), seed);
                    let chunks = tiles_of(&s, w, h, tw, th)
                        .iter()
                        .map(|t| ljpeg(t, tw / comps, th, comps, precision, predictor, restart))
                        .collect();
                    let r = raw(
                        w,
                        h,
                        precision.into(),
                        7,
                        Some((tw as u32, th as u32)),
                        0,
                        chunks,
                    );
                    let d = read(&dng_files::dng(LE, &r, false, &[])).unwrap_or_else(|e| {
                        panic!("{comps} comps, P{precision}, pred {predictor}: {e}")
                    });
                    assert_mosaic(&d, &s, w, h);
                }
            }
        }
    }
}

#[test]
fn lossless_jpeg_strips_with_a_short_last_strip() {
    let (w, h) = (10, 7);
    let s = noise(w * h, 14, 99);
    let chunks = s
        .chunks(w * 3)
        .map(|c| ljpeg(c, w / 2, c.len() / w, 2, 14, 1, 0))
        .collect();
    let r = raw(w, h, 14, 7, None, 3, chunks);
    assert_mosaic(&read(&dng_files::dng(LE, &r, true, &[])).unwrap(), &s, w, h);
}

#[test]
fn levels_crop_and_white_balance() {
    let (w, h) = (12, 10);
    let s = noise(w * h, 14, 5);
    let mut r = strips(LE, &s, w, h, 16, 4);
    // Active area: rows 1..9, columns 2..12; the crop 6x4 at (1, 2) in it.
    r.tags.extend([
        (50829, Val::Short(vec![1, 2, 9, 12])),
        (50719, Val::Rational(vec![(1, 1), (4, 2)])),
        (50720, Val::Long(vec![6, 4])),
        (50713, Val::Short(vec![2, 2])),
        (
            50714,
            Val::Rational(vec![(1001, 2), (510, 1), (505, 1), (2000, 4)]),
        ),
        (
            50715,
            Val::SRational(vec![
                (0, 1),
                (-2, 1),
                (3, 2),
                (0, 1),
                (1, 1),
                (0, 1),
                (0, 1),
                (0, 1),
                (0, 1),
                (0, 1),
            ]),
        ),
        (
            50716,
            Val::SRational(vec![
                (0, 1),
                (0, 1),
                (5, 1),
                (0, 1),
                (0, 1),
                (-1, 1),
                (0, 1),
                (0, 1),
            ]),
        ),
        (50717, Val::Long(vec![15000])),
    ]);
    let neutral = [(1, 2), (1, 1), (4, 5)];
    let file = dng_files::dng(LE, &r, false, &[(50728, Val::Rational(neutral.to_vec()))]);
    let d = read(&file).unwrap();
    let (x0, y0) = (2 + 1, 1 + 2);
    assert_eq!((d.mosaic.width(), d.mosaic.height()), (6, 4));
    assert_eq!(d.mosaic.get(0, 0, 0), s[y0 * w + x0]);
    // The levels' phase is the active area's: the crop starts at (1, 2) of it.
    let levels = [500.5, 510.0, 505.0, 500.0];
    let cell = |x: usize, y: usize| levels[((y + 2) % 2) * 2 + (x + 1) % 2];
    assert_eq!(
        d.dark.cells,
        [cell(0, 0), cell(1, 0), cell(0, 1), cell(1, 1)]
    );
    assert_eq!(d.dark.delta_h, vec![-2.0, 1.5, 0.0, 1.0, 0.0, 0.0]);
    assert_eq!(d.dark.delta_v, vec![5.0, 0.0, 0.0, -1.0]);
    assert_eq!(d.white, 15000.0);
    assert_eq!(d.as_shot_neutral, Some([0.5, 1.0, 0.8]));
    assert_eq!(d.as_shot_gains(), Some([2.0, 1.0, 1.25]));
    let lin = d.linear();
    for y in 0..4 {
        for x in 0..6 {
            let b = cell(x, y) + d.dark.delta_h[x] + d.dark.delta_v[y];
            let v = f64::from(s[(y0 + y) * w + x0 + x]);
            let want = ((v - b) * 65535.0 / (15000.0 - b))
                .round()
                .clamp(0.0, 65535.0) as u16;
            assert_eq!(lin.get(x, y, 0), want, "({x}, {y})");
        }
    }
    assert_eq!(d.linear_format().to_string(), "bayer_grbg16"); // rggb from (1, 2)
}

#[test]
fn dark_level_deltas_that_put_every_site_at_white_are_refused() {
    let s = noise(36, 12, 2);
    let base = strips(LE, &s, 6, 6, 16, 6);
    let with = |h: Vec<(i32, i32)>, v: Vec<(i32, i32)>| {
        let mut r = base.clone();
        r.tags.extend([
            (50714, Val::Short(vec![64])),
            (50715, Val::SRational(h)),
            (50716, Val::SRational(v)),
            (50717, Val::Long(vec![4000])),
        ]);
        r
    };
    // Every column's delta lifts black past white: nothing but black.
    refused(
        &with(vec![(5000, 1); 6], vec![(0, 1); 6]),
        "the deltas included",
    );
    // The rows' deltas alone, and the two together, do the same.
    refused(
        &with(vec![(0, 1); 6], vec![(3937, 1); 6]),
        "the deltas included",
    );
    refused(
        &with(vec![(2000, 1); 6], vec![(1937, 1); 6]),
        "the deltas included",
    );
    // One column of each parity below white is enough: the file is read,
    // and the sites at or above white level to 0.
    let mut h = vec![(5000, 1); 6];
    h[3] = (-10, 1);
    let d = read(&dng_files::dng(LE, &with(h, vec![(0, 1); 6]), false, &[])).unwrap();
    assert_eq!(d.dark.lowest(), 54.0);
    assert!(d
        .linear()
        .row(0)
        .iter()
        .enumerate()
        .all(|(x, &v)| x == 3 || v == 0));
}

#[test]
fn linearization_table_maps_stored_values() {
    let s: Vec<u16> = vec![0, 1, 2, 3, 7, 9, 2, 1];
    let mut r = strips(LE, &s, 4, 2, 8, 2);
    r.tags.push((50712, Val::Short(vec![10, 20, 30, 40, 50])));
    let d = read(&dng_files::dng(LE, &r, false, &[])).unwrap();
    assert_eq!(d.mosaic.into_vec(), vec![10, 20, 30, 40, 50, 50, 30, 20]);
}

fn refused(r: &Raw, needle: &str) {
    let e = read(&dng_files::dng(LE, r, false, &[])).unwrap_err();
    assert!(matches!(e, Error::Format { .. }), "{e:?}");
    assert!(e.to_string().contains(needle), "{e}");
}

#[test]
fn what_is_not_read_is_a_format_error() {
    let s = noise(36, 12, 1);
    let base = strips(LE, &s, 6, 6, 16, 6);
    let mut x = base.clone();
    x.tags = vec![
        (33421, Val::Short(vec![6, 6])),
        (33422, Val::Byte(vec![1; 36])),
    ];
    refused(&x, "X-Trans");
    let mut four = base.clone();
    four.tags = vec![
        (33421, Val::Short(vec![2, 2])),
        (33422, Val::Byte(vec![0, 1, 3, 2])),
    ];
    refused(&four, "not a Bayer pattern");
    let mut linear = base.clone();
    linear.tags.push((262, Val::Short(vec![34892])));
    refused(&linear, "linear DNG");
    let mut lossy = base.clone();
    lossy.compression = 34892;
    refused(&lossy, "lossy");
    let mut sof0 = base.clone();
    sof0.compression = 7;
    sof0.chunks = vec![vec![
        0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 6, 0, 6, 1, 1, 0x11, 0,
    ]];
    refused(&sof0, "SOF0");
    let mut short = base.clone();
    short.chunks[0].truncate(20);
    refused(&short, "need");
    // A TIFF without DNGVersion.
    let mut plain = dng_files::dng(LE, &base, true, &[]);
    assert!(dng::is_dng_bytes(&plain));
    let at = plain.windows(2).position(|w| w == [0x12, 0xC6]).unwrap(); // 50706 LE
    plain[at] = 0x13;
    assert!(!dng::is_dng_bytes(&plain));
    assert!(read(&plain).unwrap_err().to_string().contains("DNGVersion"));
}

/// Every cut of a file is an error; every byte changed is an error or an
/// image, never a panic.
fn survives(file: &[u8]) {
    for n in 0..file.len() {
        assert!(
            read(&file[..n]).is_err(),
            "a cut to {n} of {} bytes decoded",
            file.len()
        );
    }
    for i in 0..file.len() {
        for v in [0x00, 0xFF, file[i] ^ 0x01, file[i] ^ 0x80] {
            let mut f = file.to_vec();
            f[i] = v;
            let _ = read(&f);
        }
    }
    // Runs of random bytes anywhere.
    let r = noise(3 * 4000, 16, file.len() as u64);
    for k in r.chunks(3) {
        let (at, len) = (usize::from(k[0]) % file.len(), usize::from(k[1]) % 16 + 1);
        let mut f = file.to_vec();
        for (j, b) in f.iter_mut().skip(at).take(len).enumerate() {
            *b = (k[2] >> (j % 2 * 8)) as u8 ^ j as u8;
        }
        let _ = read(&f);
    }
}

#[test]
fn truncated_and_corrupt_files_are_errors_not_panics() {
    let (w, h) = (10, 6);
    let s = noise(w * h, 12, 11);
    let mut r = strips(BE, &s, w, h, 12, 4);
    r.tags.extend([
        (50714, Val::Short(vec![64])),
        (50717, Val::Short(vec![4095])),
    ]);
    survives(&dng_files::dng(
        BE,
        &r,
        false,
        &[(50728, Val::Rational(vec![(1, 2), (1, 1), (1, 3)]))],
    ));
    let chunks = tiles_of(&s, w, h, 4, 4)
        .iter()
        .map(|t| ljpeg(t, 2, 4, 2, 12, 6, 1))
        .collect();
    survives(&dng_files::dng(
        LE,
        &raw(w, h, 12, 7, Some((4, 4)), 0, chunks),
        false,
        &[],
    ));
}

#[test]
fn files_the_limit_and_the_image_loader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.dng");
    let s = noise(64, 12, 2);
    std::fs::write(
        &path,
        dng_files::dng(LE, &strips(LE, &s, 8, 8, 16, 8), false, &[]),
    )
    .unwrap();
    assert!(dng::is_dng(&path).unwrap());
    assert_mosaic(
        &dng::load(&path, &DecodeLimits::default()).unwrap(),
        &s,
        8,
        8,
    );
    let e = dng::load(&path, &DecodeLimits::new(300)).unwrap_err();
    assert!(matches!(e, Error::DecodeLimit { .. }), "{e:?}");
    let e = clfilter::image::load(&path).unwrap_err();
    assert!(
        matches!(e, Error::Format { .. }) && e.to_string().contains("DNG"),
        "{e}"
    );
}

fn filterctl(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("FILTERCTL_DEVICE")
        .args(args)
        .output()
        .unwrap()
}

/// `apply` on a DNG equals `apply` on its leveled mosaic as a
/// `bayer_PATTERN16` raw frame, and `--report` gives the as-shot `wb=`.
#[test]
fn apply_reads_a_dng_as_a_leveled_raw_frame() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (w, h) = (34, 22);
    let s = noise(w * h, 14, 8);
    let mut r = strips(LE, &s, w, h, 14, 5);
    r.tags = cfa(Pattern::Grbg);
    r.tags.extend([
        (50714, Val::Short(vec![512])),
        (50717, Val::Short(vec![16000])),
    ]);
    let file = dng_files::dng(
        LE,
        &r,
        false,
        &[(50728, Val::Rational(vec![(1, 2), (1, 1), (2, 3)]))],
    );
    std::fs::write(p("in.dng"), &file).unwrap();
    let lin = read(&file).unwrap().linear();
    let bytes: Vec<u8> = lin
        .into_vec()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(p("lin.raw"), bytes).unwrap();
    for dev in ["cpu", "auto"] {
        let a = filterctl(&[
            "--device",
            dev,
            "apply",
            "-f",
            "demosaic,wb=r=2:b=1.5",
            &p("in.dng"),
            "-o",
            &p("a.png"),
            "--report",
        ]);
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        let report = String::from_utf8_lossy(&a.stderr);
        assert!(
            report.contains("wb=r=2.0000:g=1:b=1.5000") && report.contains("grbg"),
            "{report}"
        );
        let b = filterctl(&[
            "--device",
            dev,
            "apply",
            "-f",
            "demosaic,wb=r=2:b=1.5",
            "--size",
            &format!("{w}x{h}"),
            "--format",
            "bayer_grbg16",
            &p("lin.raw"),
            "-o",
            &p("b.png"),
        ]);
        assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        let (a, b) = (
            clfilter::image::load(p("a.png")).unwrap(),
            clfilter::image::load(p("b.png")).unwrap(),
        );
        assert_eq!(a, b, "{dev}");
    }
    // --json names the frame's format; a folder's .dng files are inputs.
    let j = filterctl(&[
        "apply",
        "-f",
        "demosaic,gamma=srgb,minmax",
        &p("in.dng"),
        "--json",
    ]);
    let json = String::from_utf8_lossy(&j.stdout);
    assert!(
        j.status.success() && json.contains("\"format\": \"bayer_grbg16\""),
        "{json}{}",
        String::from_utf8_lossy(&j.stderr)
    );
    std::fs::create_dir(p("dir")).unwrap();
    std::fs::create_dir(p("out")).unwrap();
    std::fs::copy(p("in.dng"), p("dir/x.dng")).unwrap();
    let f = filterctl(&[
        "apply",
        "-f",
        "demosaic",
        &p("dir"),
        "-o",
        &p("out"),
        "--ext",
        "png",
    ]);
    assert!(f.status.success(), "{}", String::from_utf8_lossy(&f.stderr));
    assert_eq!(
        clfilter::image::load(p("out/x.png")).unwrap().shape(),
        (w, h, 3)
    );
    // Not from stdin: `-` reads image files, and says what a DNG is.
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.args([
        "apply",
        "-f",
        "demosaic",
        "-",
        "-o",
        "-",
        "--out-format",
        "png",
    ]);
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .stdin(std::fs::File::open(p("in.dng")).unwrap());
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("a DNG raw file"));
    let o = filterctl(&[
        "apply",
        "-f",
        "demosaic",
        "--format",
        "bayer_rggb12",
        &p("in.dng"),
        "-o",
        &p("c.png"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!Path::new(&p("c.png")).exists());
}

/// A camera-sized file: 6000x4000, 14 bits, 256x256 lossless JPEG tiles
/// of 2 components, read back exactly, with the times printed. Slow in a
/// debug build: `cargo test --release --test dng -- --ignored --nocapture`.
#[test]
#[ignore]
fn a_24_megapixel_lossless_jpeg_dng() {
    let (w, h, t) = (6000usize, 4000usize, 256usize);
    let s = noise(w * h, 14, 24);
    let chunks: Vec<Vec<u8>> = tiles_of(&s, w, h, t, t)
        .iter()
        .map(|c| ljpeg(c, t / 2, t, 2, 14, 1, 0))
        .collect();
    let file = dng_files::dng(
        LE,
        &raw(w, h, 14, 7, Some((t as u32, t as u32)), 0, chunks),
        false,
        &[],
    );
    let limits = DecodeLimits::new(2 << 30);
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        let d = dng::decode(&file, "big.dng", &limits).unwrap();
        let read = t0.elapsed();
        let lin = d.linear();
        println!(
            "{} MiB file: read {read:?}, leveled {:?}",
            file.len() >> 20,
            t0.elapsed()
        );
        assert_eq!(lin.width(), w);
        assert_mosaic(&d, &s, w, h);
    }
}
