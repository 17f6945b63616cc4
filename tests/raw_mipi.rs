//! The MIPI CSI-2 packings (`10mipi`, `12mipi`) and big-endian 16-bit
//! containers (`10be`..`16be`): random samples packed here by independent
//! packers written from the layouts (V4L2's `SRGGB10P` / `SRGGB12P`, the
//! CSI-2 RAW10 / RAW12 byte orders) decode back to the samples; hand-made
//! bytes give the documented values; sizes and byte counts are typed
//! errors, and so is a truncated stream; a `12mipi` frame demosaics on the
//! device (where it is unpacked) as its unpacked samples do on the CPU, and
//! `10mipi` / `16be` streams (decoded on the host) match per-frame runs.

mod common;

use std::io::Cursor;

use clfilter::image::raw::RawImage;
use clfilter::pipeline::stream::{run_stream, FrameSink, OutFrame, StreamOptions};
use clfilter::pipeline::{self, format::parse_with_format, run_frame, run_stages};
use clfilter::{DynImage, Engine, Error, Image, RawFormat};
use common::{opencl_engine, Rng};

fn fmt(s: &str) -> RawFormat {
    s.parse().unwrap()
}

/// RAW10: per group of four, the samples' bits 9..2, then one byte of
/// their bits 1..0 with the first sample's lowest.
fn pack_raw10(s: &[u16]) -> Vec<u8> {
    let mut out = Vec::new();
    for g in s.chunks(4) {
        assert_eq!(g.len(), 4);
        out.extend(g.iter().map(|&v| (v >> 2) as u8));
        out.push(g.iter().rev().fold(0u8, |acc, &v| acc << 2 | (v & 3) as u8));
    }
    out
}

/// RAW12: per pair, the samples' bits 11..4, then one byte of their bits
/// 3..0 with the first sample's in the low nibble.
fn pack_raw12(s: &[u16]) -> Vec<u8> {
    let mut out = Vec::new();
    for g in s.chunks(2) {
        out.push((g[0] >> 4) as u8);
        out.push((g[1] >> 4) as u8);
        out.push((g[1] as u8 & 0xF) << 4 | (g[0] as u8 & 0xF));
    }
    out
}

fn pack_be(s: &[u16]) -> Vec<u8> {
    s.iter().flat_map(|v| [(v >> 8) as u8, *v as u8]).collect()
}

/// A packer of samples into a frame's bytes.
type Packer = fn(&[u16]) -> Vec<u8>;

fn samples(rng: &mut Rng, n: usize, bits: u32) -> Vec<u16> {
    (0..n).map(|_| rng.below(1 << bits) as u16).collect()
}

fn decoded(f: &RawFormat, bytes: &[u8], w: usize, h: usize) -> Vec<u16> {
    match f.decode(bytes, w, h).unwrap().to_dyn().unwrap() {
        DynImage::U16(i) => i.into_vec(),
        other => panic!("{f}: {other:?}"),
    }
}

#[test]
fn independent_packers_decode_to_their_samples() {
    let mut rng = Rng::new(2301);
    let cases: [(&str, u32, Packer); 8] = [
        ("bayer_rggb10mipi", 10, pack_raw10),
        ("mono10mipi", 10, pack_raw10),
        ("bayer_gbrg12mipi", 12, pack_raw12),
        ("mono12mipi", 12, pack_raw12),
        ("bayer_bggr16be", 16, pack_be),
        ("mono12be", 16, pack_be),
        ("bayer_grbg10be", 16, pack_be),
        ("mono14be", 16, pack_be),
    ];
    for (name, bits, pack) in cases {
        let f = fmt(name);
        for (w, h) in [(4, 2), (8, 6), (12, 2), (20, 14), (4, 1), (8, 3), (36, 1)] {
            if f.pattern.is_some() && h % 2 == 1 {
                continue;
            }
            let s = samples(&mut rng, w * h, bits);
            let bytes = pack(&s);
            assert_eq!(bytes.len(), f.frame_bytes(w, h).unwrap(), "{name} {w}x{h}");
            assert_eq!(decoded(&f, &bytes, w, h), s, "{name} {w}x{h}");
            // And the library's encoder is the packer's inverse too.
            let img = DynImage::U16(Image::from_vec(w, h, 1, s).unwrap());
            assert_eq!(clfilter::image::raw::encode(&img, &f).unwrap(), bytes);
        }
    }
}

#[test]
fn hand_made_bytes_give_the_documented_values() {
    let raw10 = [0xAB, 0xCD, 0xEF, 0x12, 0b11_10_01_00];
    assert_eq!(
        decoded(&fmt("mono10mipi"), &raw10, 4, 1),
        vec![0xAB << 2, 0xCD << 2 | 1, 0xEF << 2 | 2, 0x12 << 2 | 3]
    );
    assert_eq!(
        decoded(&fmt("mono12mipi"), &[0xAB, 0xCD, 0xEF], 2, 1),
        vec![0xABF, 0xCDE]
    );
    // Big-endian containers keep values above the white level, as the
    // little-endian ones do.
    assert_eq!(
        decoded(
            &fmt("bayer_rggb12be"),
            &[0x12, 0x34, 0x0F, 0xFF, 0, 0, 0, 1],
            2,
            2
        ),
        vec![0x1234, 0x0FFF, 0, 1]
    );
    assert_eq!(fmt("bayer_rggb10mipi").bits(), 10);
    assert_eq!(fmt("mono12mipi").bits(), 12);
    assert_eq!(fmt("mono14be").bits(), 14);
    assert!(matches!(
        fmt("bayer_rggb12mipi").decode(&[0; 6], 2, 2).unwrap(),
        RawImage::Packed12 { .. }
    ));
}

#[test]
fn sizes_byte_counts_and_samples_are_checked() {
    for (name, w, h) in [
        ("bayer_rggb10mipi", 6, 2),
        ("mono10mipi", 5, 4),
        ("mono12mipi", 3, 2),
    ] {
        match fmt(name).frame_bytes(w, h) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("must be a multiple of"), "{m}"),
            other => panic!("{name} {w}x{h}: {other:?}"),
        }
    }
    for (name, len) in [
        ("bayer_rggb10mipi", 10),
        ("bayer_rggb12mipi", 12),
        ("bayer_rggb16be", 16),
    ] {
        let f = fmt(name);
        for bad in [0, len - 1, len + 1] {
            assert!(
                matches!(f.decode(&vec![0; bad], 4, 2), Err(Error::InvalidInput(_))),
                "{name} {bad} bytes"
            );
        }
        assert!(f.decode(&vec![0; len], 4, 2).is_ok());
    }
    let big = DynImage::U16(Image::from_vec(4, 1, 1, vec![0, 1023, 1024, 0]).unwrap());
    match clfilter::image::raw::encode(&big, &fmt("mono10mipi")) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("pixel (2, 0) is 1024"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// Collects every frame a stream hands over.
#[derive(Default)]
struct Collect(Vec<DynImage>);

impl FrameSink for Collect {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        self.0.push(f.to_image()?);
        Ok(())
    }
}

#[test]
fn truncated_streams_are_typed_errors() {
    let f = fmt("bayer_rggb10mipi");
    let ops = parse_with_format("demosaic", Some(&f)).unwrap();
    let mut bytes = vec![0u8; 2 * f.frame_bytes(8, 4).unwrap()];
    bytes.truncate(bytes.len() - 3);
    let e = run_stream(
        &Engine::cpu(),
        &ops,
        &StreamOptions::new(8, 4, f),
        Cursor::new(bytes),
        &mut Collect::default(),
    );
    assert!(
        matches!(e, Err(Error::TruncatedFrame { index: 1, .. })),
        "{e:?}"
    );
}

#[test]
fn device_paths_match_the_cpu() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(2302);
    let (w, h) = (24, 10);
    let spec = "demosaic=method=mhc,black=64,wb=r=1.5:b=1.3,gamma=srgb,convert=u8";
    // 12mipi is unpacked on the device (demosaic.cl, pipeline.cl).
    for name in ["bayer_rggb12mipi", "bayer_grbg12p"] {
        let f = fmt(name);
        let s = samples(&mut rng, w * h, 12);
        let bytes = clfilter::image::raw::encode(
            &DynImage::U16(Image::from_vec(w, h, 1, s.clone()).unwrap()),
            &f,
        )
        .unwrap();
        let ops = parse_with_format(spec, Some(&f)).unwrap();
        let (got, outcomes) = run_frame(&engine, &ops, f.decode(&bytes, w, h).unwrap()).unwrap();
        assert!(
            outcomes.iter().all(|o| o.on_device),
            "{name} left the device"
        );
        let unpacked = RawFormat {
            depth: clfilter::image::raw::Depth::Bits16 { bits: 12 },
            ..f
        };
        let ops16 = parse_with_format(spec, Some(&unpacked)).unwrap();
        let (want, _) = run_stages(
            &Engine::cpu(),
            &ops16,
            DynImage::U16(Image::from_vec(w, h, 1, s).unwrap()),
        )
        .unwrap();
        assert_eq!(got.shape(), want.shape());
        let (DynImage::U8(g), DynImage::U8(wa)) = (&got, &want) else {
            panic!()
        };
        let diff = g
            .rows()
            .flatten()
            .zip(wa.rows().flatten())
            .map(|(a, b)| a.abs_diff(*b))
            .max();
        assert!(diff <= Some(1), "{name}: device and CPU differ by {diff:?}");
    }
    // 10mipi and 16be streams decode on the host, each frame then runs
    // through the engine (on the device).
    for (name, bits) in [("bayer_rggb10mipi", 10), ("bayer_bggr16be", 16)] {
        let f = fmt(name);
        let ops = parse_with_format("demosaic=method=bilinear", Some(&f)).unwrap();
        let imgs: Vec<DynImage> = (0..3)
            .map(|_| {
                DynImage::U16(Image::from_vec(w, h, 1, samples(&mut rng, w * h, bits)).unwrap())
            })
            .collect();
        let bytes: Vec<u8> = imgs
            .iter()
            .flat_map(|i| clfilter::image::raw::encode(i, &f).unwrap())
            .collect();
        let mut sink = Collect::default();
        let totals = run_stream(
            &engine,
            &ops,
            &StreamOptions::new(w, h, f),
            Cursor::new(bytes),
            &mut sink,
        )
        .unwrap();
        assert_eq!(totals.frames, 3);
        for (got, img) in sink.0.iter().zip(imgs) {
            let (want, _) = pipeline::run_frame(
                &Engine::cpu(),
                &ops,
                f.decode(&clfilter::image::raw::encode(&img, &f).unwrap(), w, h)
                    .unwrap(),
            )
            .unwrap();
            let (DynImage::U16(g), DynImage::U16(wa)) = (got, &want) else {
                panic!("{name}: {got:?}")
            };
            let diff = g
                .rows()
                .flatten()
                .zip(wa.rows().flatten())
                .map(|(a, b)| a.abs_diff(*b))
                .max();
            assert!(diff <= Some(1), "{name}: stream and CPU differ by {diff:?}");
        }
    }
}
