//! Raw camera frames: format names, frame sizes, decode/encode round trips,
//! the frame reader over short reads and truncated streams, pipelines that
//! take their demosaic defaults from the format, and `filterctl apply` on raw
//! frames and Bayer image files.

use clfilter::prelude::*;
mod common;

use std::io::{Cursor, ErrorKind, Read};
use std::path::Path;
use std::process::{Command, Output};

use clfilter::image::raw::{self, Depth, FrameReader, RawImage};
use clfilter::ops::demosaic::stage::DemosaicStage;
use clfilter::ops::demosaic::{DemosaicParams, Method, Packing, Pattern};
use clfilter::pipeline::{self, parse_with_format};
use clfilter::{DynImage, Engine, Error, Image, RawFormat};
use common::Rng;

fn fmt(s: &str) -> RawFormat {
    s.parse()
        .unwrap_or_else(|e| panic!("format {s} does not parse: {e}"))
}

/// Random samples that a frame of `f` can hold: any byte, any 16-bit value
/// (above the white level too: decode keeps them), 12-bit for packed,
/// 10-bit for `10mipi`.
fn random_frame(rng: &mut Rng, f: &RawFormat, w: usize, h: usize) -> DynImage {
    match f.depth {
        Depth::Bits8 => Image::from_fn(w, h, 1, |_, _, _| rng.next_u64() as u8)
            .unwrap()
            .into(),
        Depth::Bits16 { .. } | Depth::Bits16Be { .. } => {
            Image::from_fn(w, h, 1, |_, _, _| rng.next_u64() as u16)
                .unwrap()
                .into()
        }
        Depth::Mipi10 => Image::from_fn(w, h, 1, |_, _, _| rng.below(1024) as u16)
            .unwrap()
            .into(),
        Depth::Packed12(_) => Image::from_fn(w, h, 1, |_, _, _| rng.below(4096) as u16)
            .unwrap()
            .into(),
    }
}

fn random_bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

// ---------------------------------------------------------------- names

#[test]
fn every_format_name_parses_and_round_trips() {
    let mut names = Vec::new();
    for prefix in [
        "bayer_rggb",
        "bayer_bggr",
        "bayer_grbg",
        "bayer_gbrg",
        "mono",
    ] {
        for depth in [
            "8", "10", "12", "14", "16", "12p", "12packed", "12mipi", "10mipi", "10be", "12be",
            "14be", "16be",
        ] {
            names.push(format!("{prefix}{depth}"));
        }
    }
    assert_eq!(names.len(), 65);
    let all: Vec<String> = RawFormat::all().iter().map(|f| f.to_string()).collect();
    assert_eq!(all, names);
    for name in &names {
        let f = fmt(name);
        assert_eq!(&f.to_string(), name);
        assert_eq!(fmt(&name.to_uppercase()), f);
        assert_eq!(fmt(&format!("  {name}\t")), f);
        assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{name}\""));
    }
    let f = fmt("Bayer_GBRG12Packed");
    assert_eq!(f.pattern, Some(Pattern::Gbrg));
    assert_eq!(f.depth, Depth::Packed12(Packing::GigE12Packed));
    let f = fmt("mono14");
    assert_eq!((f.pattern, f.depth), (None, Depth::Bits16 { bits: 14 }));
    assert_eq!(
        fmt("bayer_rggb12p").depth,
        Depth::Packed12(Packing::Pfnc12p)
    );
}

#[test]
fn bits_and_sample_types() {
    for f in RawFormat::all() {
        let (bits, sample) = match f.depth {
            Depth::Bits8 => (8, clfilter::SampleType::U8),
            Depth::Bits16 { bits } | Depth::Bits16Be { bits } => (bits, clfilter::SampleType::U16),
            Depth::Packed12(_) => (12, clfilter::SampleType::U16),
            Depth::Mipi10 => (10, clfilter::SampleType::U16),
        };
        assert_eq!((f.bits(), f.sample()), (bits, sample), "{f}");
    }
}

#[test]
fn unknown_names_are_typed_errors_with_a_suggestion() {
    for (bad, want) in [
        ("BayerRG12p", Some("bayer_rggb12p")),
        ("BayerGB12Packed", Some("bayer_gbrg12packed")),
        ("Mono12p ", None),
        ("bayer_rggb12pp", Some("bayer_rggb12p")),
        ("bayer_rgb8", Some("bayer_rggb8")),
        ("rggb16", Some("bayer_rggb16")),
        ("mono_10", Some("mono10")),
        ("mono9", Some("mono8")),
        ("bayer_rggb", None),
        ("", None),
        ("png", None),
    ] {
        if bad == "Mono12p " {
            // Valid: case and whitespace do not matter.
            assert!(bad.parse::<RawFormat>().is_ok());
            continue;
        }
        let e = bad.parse::<RawFormat>().unwrap_err();
        let Error::InvalidArgument(m) = &e else {
            panic!("{bad}: expected InvalidArgument, got {e:?}")
        };
        assert!(m.starts_with(&format!("unknown raw format '{bad}'")), "{m}");
        assert!(m.contains("bayer_PATTERN DEPTH or mono DEPTH"), "{m}");
        assert!(
            m.contains("12p (PFNC packed), 12packed (GigE Vision packed), 12mipi or 10mipi"),
            "{m}"
        );
        match want {
            Some(w) => assert!(m.contains(&format!("(did you mean '{w}'?)")), "{bad}: {m}"),
            None if bad.is_empty() || bad == "png" => {
                assert!(!m.contains("did you mean"), "{bad}: {m}")
            }
            None => {}
        }
    }
}

// ---------------------------------------------------------- frame sizes

#[test]
fn frame_bytes_per_depth() {
    let (w, h) = (640, 480);
    for f in RawFormat::all() {
        let want = match f.depth {
            Depth::Bits8 => w * h,
            Depth::Bits16 { .. } | Depth::Bits16Be { .. } => w * h * 2,
            Depth::Packed12(_) => w * h * 3 / 2,
            Depth::Mipi10 => w * h * 5 / 4,
        };
        assert_eq!(f.frame_bytes(w, h).unwrap(), want, "{f}");
    }
    assert_eq!(fmt("bayer_rggb12p").frame_bytes(2, 2).unwrap(), 6);
    assert_eq!(fmt("mono12packed").frame_bytes(3, 2).unwrap(), 9);
    assert_eq!(fmt("mono8").frame_bytes(1, 1).unwrap(), 1);
    assert_eq!(fmt("mono16").frame_bytes(3, 3).unwrap(), 18);
}

#[test]
fn frame_bytes_rejects_bad_sizes() {
    let arg = |f: &str, w: usize, h: usize| match fmt(f).frame_bytes(w, h) {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{f} {w}x{h}: expected InvalidArgument, got {other:?}"),
    };
    for f in RawFormat::all().iter().filter(|f| f.pattern.is_some()) {
        let name = f.to_string();
        for (w, h) in [(3, 4), (4, 3), (5, 5), (1, 2), (0, 4), (4, 0)] {
            let m = arg(&name, w, h);
            assert!(m.contains(&format!("{name} frame of {w}x{h}")), "{m}");
        }
        assert!(arg(&name, 3, 4).contains("even width and height"));
    }
    for depth in ["12p", "12packed"] {
        let name = format!("mono{depth}");
        assert!(arg(&name, 3, 3).contains("width x height must be even"));
        assert!(arg(&name, 1, 1).contains("width x height must be even"));
        assert!(fmt(&name).frame_bytes(1, 2).is_ok());
    }
    // Empty and huge sizes: errors, never overflows or panics.
    for f in RawFormat::all() {
        let name = f.to_string();
        arg(&name, 0, 0);
        arg(&name, 1 << 20, 1 << 20);
        arg(&name, usize::MAX, 2);
        arg(&name, usize::MAX, usize::MAX);
        arg(&name, 2, usize::MAX - 1);
    }
    // Hand-built depths that no name has.
    let odd = RawFormat {
        pattern: None,
        depth: Depth::Bits16 { bits: 9 },
    };
    assert!(matches!(
        odd.frame_bytes(4, 4),
        Err(Error::InvalidArgument(_))
    ));
}

// ------------------------------------------------------ decode / encode

#[test]
fn decode_encode_round_trip_on_random_data() {
    let mut rng = Rng::new(7);
    for f in RawFormat::all() {
        let sizes: &[(usize, usize)] = if f.pattern.is_some() {
            &[(2, 2), (6, 4), (18, 10), (4, 2), (12, 6)]
        } else {
            &[(1, 2), (3, 2), (5, 6), (17, 2), (4, 1), (8, 3)]
        };
        // The MIPI layouts take whole groups per line (tests/raw_mipi.rs).
        for &(w, h) in sizes.iter().filter(|&&(w, h)| f.frame_bytes(w, h).is_ok()) {
            // image -> bytes -> image
            let img = random_frame(&mut rng, &f, w, h);
            let bytes = raw::encode(&img, &f).unwrap();
            assert_eq!(bytes.len(), f.frame_bytes(w, h).unwrap(), "{f} {w}x{h}");
            let frame = f.decode(&bytes, w, h).unwrap();
            assert_eq!(frame.size(), (w, h));
            assert_eq!(frame.sample(), f.sample());
            assert_eq!(frame.to_dyn().unwrap(), img, "{f} {w}x{h}");
            assert_eq!(frame.clone().into_dyn().unwrap(), img, "{f} {w}x{h}");
            assert_eq!(f.decode_vec(bytes.clone(), w, h).unwrap(), frame);
            match (&frame, f.depth) {
                (RawImage::U8(_), Depth::Bits8)
                | (
                    RawImage::U16(_),
                    Depth::Bits16 { .. } | Depth::Bits16Be { .. } | Depth::Mipi10,
                ) => {}
                (RawImage::Packed12 { packing, data, .. }, Depth::Packed12(p)) => {
                    assert_eq!(*packing, p);
                    assert_eq!(data, &bytes);
                }
                other => panic!("{f}: decoded as {other:?}"),
            }
            // bytes -> image -> bytes: every byte pattern is a valid frame.
            let bytes = random_bytes(&mut rng, bytes.len());
            let back = raw::encode(&f.decode(&bytes, w, h).unwrap().to_dyn().unwrap(), &f).unwrap();
            assert_eq!(back, bytes, "{f} {w}x{h}");
        }
    }
}

#[test]
fn sixteen_bit_samples_are_little_endian_and_kept_above_white() {
    // bayer_rggb12: 0x1234 is above 4095 and kept as it is.
    let bytes = [0x34, 0x12, 0xFF, 0x0F, 0x00, 0x00, 0x01, 0x00];
    let RawImage::U16(img) = fmt("bayer_rggb12").decode(&bytes, 2, 2).unwrap() else {
        panic!("not u16")
    };
    assert_eq!(img.into_vec(), vec![0x1234, 0x0FFF, 0, 1]);
}

#[test]
fn packed_layouts_match_the_demosaic_unpacker() {
    let mut rng = Rng::new(11);
    let (w, h) = (8, 6);
    for p in [Packing::Pfnc12p, Packing::GigE12Packed] {
        let f = RawFormat {
            pattern: Some(Pattern::Rggb),
            depth: Depth::Packed12(p),
        };
        let bytes = random_bytes(&mut rng, f.frame_bytes(w, h).unwrap());
        let want = p.unpack(&bytes, w, h).unwrap();
        assert_eq!(
            f.decode(&bytes, w, h).unwrap().to_dyn().unwrap(),
            DynImage::U16(want)
        );
    }
    // PFNC 12p: LSB first; GigE 12Packed: high bits in bytes 0 and 2.
    let bytes = [0xAB, 0xCD, 0xEF];
    let pfnc = fmt("mono12p")
        .decode(&bytes, 2, 1)
        .unwrap()
        .to_dyn()
        .unwrap();
    let gige = fmt("mono12packed")
        .decode(&bytes, 2, 1)
        .unwrap()
        .to_dyn()
        .unwrap();
    let DynImage::U16(pfnc) = pfnc else { panic!() };
    let DynImage::U16(gige) = gige else { panic!() };
    assert_eq!(pfnc.into_vec(), vec![0xDAB, 0xEFC]);
    assert_eq!(gige.into_vec(), vec![0xABD, 0xEFC]);
}

#[test]
fn decode_checks_the_byte_count() {
    let f = fmt("bayer_rggb12p");
    for len in [0, 5, 7, 100] {
        match f.decode(&vec![0; len], 2, 2) {
            Err(Error::InvalidInput(m)) => assert_eq!(
                m,
                format!("a 2x2 bayer_rggb12p frame has 6 bytes, got {len}")
            ),
            other => panic!("{len} bytes: {other:?}"),
        }
        assert!(matches!(
            f.decode_vec(vec![0; len], 2, 2),
            Err(Error::InvalidInput(_))
        ));
    }
    assert!(matches!(
        fmt("bayer_rggb8").decode(&[0; 9], 3, 3),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn encode_refuses_what_the_format_cannot_hold() {
    let rgb = Image::<u8>::new(2, 2, 3).unwrap();
    assert!(matches!(
        raw::encode(&rgb.into(), &fmt("bayer_rggb8")),
        Err(Error::InvalidArgument(_))
    ));
    let g8 = DynImage::U8(Image::new(2, 2, 1).unwrap());
    let g16 = DynImage::U16(Image::from_vec(2, 2, 1, vec![0, 4095, 4096, 1]).unwrap());
    assert!(matches!(
        raw::encode(&g8, &fmt("bayer_rggb12")),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        raw::encode(&g16, &fmt("mono8")),
        Err(Error::InvalidArgument(_))
    ));
    match raw::encode(&g16, &fmt("mono12p")) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("pixel (0, 1) is 4096"), "{m}"),
        other => panic!("{other:?}"),
    }
    // 16-bit containers keep values above the white level.
    assert_eq!(raw::encode(&g16, &fmt("mono12")).unwrap().len(), 8);
    let odd = DynImage::U8(Image::new(3, 2, 1).unwrap());
    assert!(matches!(
        raw::encode(&odd, &fmt("bayer_rggb8")),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn packed_frames_demosaic_like_their_unpacked_samples() {
    let mut rng = Rng::new(3);
    let engine = Engine::cpu();
    let (w, h) = (10, 8);
    for name in ["bayer_grbg12p", "bayer_bggr12packed"] {
        let f = fmt(name);
        let img = random_frame(&mut rng, &f, w, h);
        let frame = f.decode(&raw::encode(&img, &f).unwrap(), w, h).unwrap();
        let p = DemosaicParams::new(f.pattern.unwrap(), Method::Mhc);
        let packed: Image<u8> = engine.demosaic(&frame.as_raw(), &p).unwrap();
        let DynImage::U16(unpacked) = frame.to_dyn().unwrap() else {
            panic!()
        };
        let p12 = DemosaicParams {
            bits: Some(12),
            ..p
        };
        let want: Image<u8> = engine
            .demosaic(&clfilter::ops::demosaic::Raw::U16(&unpacked), &p12)
            .unwrap();
        assert_eq!(packed, want, "{name}");
    }
}

/// A hand-built packed frame whose bytes do not match its size is a typed
/// error on every engine, before a kernel reads the frame (the OpenCL
/// pipeline uploaded the bytes as they were, and its kernels read past
/// them: garbage, or a crash on PoCL); a consistent one runs.
#[test]
fn hand_built_packed_frames_are_checked_on_every_engine() {
    let mut engines = vec![Engine::cpu()];
    engines.extend(common::opencl_engine());
    let p: pipeline::Pipeline = "demosaic,convert=u8".parse().unwrap();
    for engine in &engines {
        let name = engine.backend().describe();
        for (w, h, len) in [(2048, 2048, 3), (8, 8, 95), (8, 8, 97), (8, 8, 0)] {
            let frame = RawImage::Packed12 {
                data: vec![0xAB; len],
                width: w,
                height: h,
                packing: Packing::Pfnc12p,
            };
            let e = p.run_frame(engine, frame).unwrap_err();
            assert!(
                matches!(e, Error::InvalidInput(_)),
                "{name} {w}x{h} {len}: {e:?}"
            );
            assert!(e.to_string().contains("12-bit packed frame has"), "{e}");
        }
        let frame = RawImage::Packed12 {
            data: vec![0xAB; 96],
            width: 8,
            height: 8,
            packing: Packing::Pfnc12p,
        };
        let (out, _) = p.run_frame(engine, frame).unwrap();
        assert_eq!(out.shape(), (8, 8, 3), "{name}");
    }
}

// ---------------------------------------------------------- FrameReader

/// Returns at most `chunk` bytes per read, with an `Interrupted` error
/// before every other read.
struct Trickle<R> {
    inner: R,
    chunk: usize,
    interrupt: bool,
}

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.interrupt = !self.interrupt;
        if self.interrupt {
            return Err(std::io::Error::new(ErrorKind::Interrupted, "signal"));
        }
        let n = buf.len().min(self.chunk);
        self.inner.read(&mut buf[..n])
    }
}

/// `n` random frames of `len` bytes, each followed by `skip` trailer bytes.
fn stream(rng: &mut Rng, n: usize, len: usize, skip: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
    let frames: Vec<Vec<u8>> = (0..n).map(|_| random_bytes(rng, len)).collect();
    let mut bytes = Vec::new();
    for f in &frames {
        bytes.extend_from_slice(f);
        bytes.extend(random_bytes(rng, skip));
    }
    (frames, bytes)
}

/// Reads frames until the end or an error; returns them and the outcome.
fn read_all<R: Read>(r: &mut FrameReader<R>, len: usize) -> (Vec<Vec<u8>>, clfilter::Result<()>) {
    let mut got = Vec::new();
    let mut buf = vec![0; len];
    loop {
        match r.read_into(&mut buf) {
            Ok(true) => got.push(buf.clone()),
            Ok(false) => return (got, Ok(())),
            Err(e) => return (got, Err(e)),
        }
    }
}

#[test]
fn reader_returns_whole_frames_then_a_clean_end() {
    let mut rng = Rng::new(21);
    for (n, len, skip) in [(5, 12, 0), (3, 7, 4), (1, 1, 0), (4, 6, 1), (2, 9, 100)] {
        let (frames, bytes) = stream(&mut rng, n, len, skip);
        let mut r = FrameReader::new(Cursor::new(bytes), len, skip);
        let (got, end) = read_all(&mut r, len);
        end.unwrap();
        assert_eq!(got, frames, "{n} x {len} + {skip}");
        assert_eq!(r.frames_read(), n);
        // Fused: the end stays the end.
        assert!(!r.read_into(&mut vec![0; len]).unwrap());
        assert_eq!(r.frames_read(), n);
        assert_eq!((r.frame_bytes(), r.skip()), (len, skip));
    }
}

#[test]
fn reader_survives_one_byte_reads_and_interruptions() {
    let mut rng = Rng::new(22);
    let (frames, bytes) = stream(&mut rng, 4, 15, 3);
    let trickle = Trickle {
        inner: Cursor::new(bytes),
        chunk: 1,
        interrupt: false,
    };
    let mut r = FrameReader::new(trickle, 15, 3);
    let (got, end) = read_all(&mut r, 15);
    end.unwrap();
    assert_eq!(got, frames);
    assert_eq!(r.frames_read(), 4);
}

#[test]
fn reader_reports_a_truncated_last_frame() {
    let mut rng = Rng::new(23);
    for (skip, short_reads) in [(0, false), (2, false), (0, true), (5, true)] {
        let (frames, mut bytes) = stream(&mut rng, 3, 12, skip);
        bytes.extend(random_bytes(&mut rng, 5));
        let src: Box<dyn Read> = if short_reads {
            Box::new(Trickle {
                inner: Cursor::new(bytes),
                chunk: 1,
                interrupt: false,
            })
        } else {
            Box::new(Cursor::new(bytes))
        };
        let mut r = FrameReader::new(src, 12, skip);
        let (got, end) = read_all(&mut r, 12);
        assert_eq!(got, frames, "the frames before it come through");
        let e = end.unwrap_err();
        assert!(
            matches!(
                e,
                Error::TruncatedFrame {
                    index: 3,
                    got: 5,
                    want: 12
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "frame 3 is truncated: the input ended after 5 of its 12 bytes; \
             the 3 frames before it are complete"
        );
        assert_eq!(r.frames_read(), 3);
        assert!(!r.read_into(&mut [0; 12]).unwrap());
    }
    // The first frame, and the second.
    let e = read_all(&mut FrameReader::new(&[1u8, 2][..], 4, 0), 4)
        .1
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "frame 0 is truncated: the input ended after 2 of its 4 bytes; \
         there is no frame before it"
    );
    let e = read_all(&mut FrameReader::new(&[1u8, 2, 3, 4, 5][..], 4, 0), 4)
        .1
        .unwrap_err();
    assert!(
        e.to_string().ends_with("the 1 frame before it is complete"),
        "{e}"
    );
}

#[test]
fn reader_counts_a_frame_whose_trailer_is_cut_short() {
    let mut rng = Rng::new(24);
    for cut in [0, 1, 3] {
        let (frames, mut bytes) = stream(&mut rng, 2, 8, 4);
        bytes.truncate(bytes.len() - 4 + cut);
        let mut r = FrameReader::new(Cursor::new(bytes), 8, 4);
        let (got, end) = read_all(&mut r, 8);
        end.unwrap();
        assert_eq!(got, frames, "trailer cut to {cut} bytes");
        assert_eq!(r.frames_read(), 2);
    }
}

#[test]
fn reader_on_empty_input_and_bad_buffers() {
    let mut r = FrameReader::new(std::io::empty(), 16, 2);
    assert!(!r.read_into(&mut [0; 16]).unwrap());
    assert_eq!(r.frames_read(), 0);
    let mut r = FrameReader::new(Cursor::new(vec![0u8; 32]), 16, 0);
    assert!(matches!(
        r.read_into(&mut [0; 15]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        r.read_into(&mut [0; 17]),
        Err(Error::InvalidArgument(_))
    ));
    // A bad buffer reads nothing.
    assert!(r.read_into(&mut [0; 16]).unwrap());
    let mut r = FrameReader::new(Cursor::new(vec![0u8; 4]), 0, 0);
    assert!(matches!(
        r.read_into(&mut []),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn reader_io_errors_name_the_input() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("cable unplugged"))
        }
    }
    let mut r = FrameReader::new(Broken, 4, 0);
    match r.read_into(&mut [0; 4]) {
        Err(Error::Io { path, source }) => {
            assert_eq!(path, Path::new("-"));
            assert_eq!(source.to_string(), "cable unplugged");
        }
        other => panic!("{other:?}"),
    }
    assert!(!r.read_into(&mut [0; 4]).unwrap(), "ended after the error");
    let mut r = FrameReader::new(Broken, 4, 0).with_path("/dev/cam0");
    let e = r.read_into(&mut [0; 4]).unwrap_err();
    assert_eq!(e.to_string(), "/dev/cam0: cable unplugged");
}

// ------------------------------------------------------ parse_with_format

fn demosaic_of(ops: &[pipeline::Op], i: usize) -> DemosaicParams {
    match ops[i].params::<DemosaicStage>() {
        Some(d) => d.params,
        None => panic!("stage {i} is {:?}", ops[i]),
    }
}

fn spec_error(spec: &str, f: &str) -> String {
    match parse_with_format(spec, Some(&fmt(f))) {
        Err(Error::Spec(m)) => m,
        other => panic!("{spec} on {f}: expected a spec error, got {other:?}"),
    }
}

#[test]
fn demosaic_takes_pattern_and_bits_from_the_format() {
    for f in RawFormat::all().into_iter().filter(|f| f.pattern.is_some()) {
        let ops = parse_with_format("gaussian=sigma=1,demosaic=method=edge", Some(&f)).unwrap();
        let p = demosaic_of(&ops, 1);
        assert_eq!(Some(p.pattern), f.pattern, "{f}");
        assert_eq!(p.method, Method::Edge);
        let bits = match f.depth {
            Depth::Bits8 => None,
            Depth::Bits16 { bits } | Depth::Bits16Be { bits } => Some(bits),
            Depth::Packed12(_) => Some(12),
            Depth::Mipi10 => Some(10),
        };
        assert_eq!(p.bits, bits, "{f}");
        // The same pattern and bits given explicitly are fine.
        let spec = format!("demosaic=pattern={}:bits={}", f.pattern.unwrap(), f.bits());
        let ops = parse_with_format(&spec, Some(&f)).unwrap();
        assert_eq!(demosaic_of(&ops, 0).bits, Some(f.bits()));
    }
    // Without a format: exactly pipeline::parse.
    for spec in [
        "demosaic",
        "demosaic=pattern=gbrg:bits=10,minmax",
        "transpose",
    ] {
        assert_eq!(
            parse_with_format(spec, None).unwrap(),
            pipeline::parse(spec).unwrap()
        );
    }
    // Specs without a demosaic stage are unchanged.
    assert_eq!(
        parse_with_format("minmax,normalize=out=u8", Some(&fmt("mono12p"))).unwrap(),
        pipeline::parse("minmax,normalize=out=u8").unwrap()
    );
    // The canonical spec carries the defaults.
    let ops = parse_with_format("demosaic", Some(&fmt("bayer_bggr10"))).unwrap();
    assert_eq!(
        pipeline::to_spec(&ops),
        "demosaic=pattern=bggr:method=mhc:bits=10"
    );
    // An explicit bits overrides a 16-bit container's.
    let ops = parse_with_format("demosaic=bits=12", Some(&fmt("bayer_rggb16"))).unwrap();
    assert_eq!(demosaic_of(&ops, 0).bits, Some(12));
}

#[test]
fn contradictions_and_mono_frames_are_spec_errors() {
    let m = spec_error("minmax,demosaic=method=edge:pattern=bggr", "bayer_rggb12p");
    let lines: Vec<&str> = m.lines().collect();
    assert_eq!(
        lines[0],
        "stage 2 'demosaic': pattern=bggr contradicts the format bayer_rggb12p, whose frames are rggb"
    );
    assert_eq!(lines[1], "    minmax,demosaic=method=edge:pattern=bggr");
    assert_eq!(
        lines[2],
        format!("    {}{}", " ".repeat(28), "^".repeat(12))
    );

    let m = spec_error("gaussian=sigma=2,demosaic", "mono12p");
    assert!(
        m.starts_with(
            "stage 2 'demosaic': mono frames have no colour filter array (the format is mono12p)"
        ),
        "{m}"
    );
    assert!(
        m.ends_with(&format!("\n    {}{}", " ".repeat(17), "^".repeat(8))),
        "{m}"
    );

    for (f, spec) in [
        ("bayer_rggb12p", "demosaic=bits=16"),
        ("bayer_rggb12packed", "demosaic=bits=10"),
        ("bayer_gbrg8", "demosaic=bits=12"),
    ] {
        let m = spec_error(spec, f);
        assert!(m.contains(&format!("does not fit the format {f}")), "{m}");
        assert!(m.ends_with("^^^^^^^"), "{m}");
    }
    // Syntax and option errors come first, as in pipeline::parse.
    assert!(spec_error("demosaic=pattern=xyzw", "mono8").contains("unknown Bayer pattern"));
    assert!(spec_error("demosaic,,minmax", "bayer_rggb8").contains("stage 2 is empty"));
}

// ------------------------------------------------------- filterctl apply

fn filterctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_filterctl"))
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT")
        .env_remove("FILTERCTL_DEVICE")
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "filterctl failed: {}", stderr(&o));
    o
}

/// Runs `filterctl` expecting exit code `code`; returns stderr.
fn fails(args: &[&str], code: i32) -> String {
    let o = filterctl(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(!e.contains("panicked"), "{e}");
    e
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The CPU engine's demosaic of a 1-channel u16 frame, as u16 RGB.
fn cpu_demosaic<U: clfilter::Sample>(img: &Image<u16>, pattern: Pattern, bits: u32) -> Image<U> {
    let params = DemosaicParams {
        bits: Some(bits),
        ..DemosaicParams::new(pattern, Method::Mhc)
    };
    Engine::cpu()
        .demosaic(&clfilter::ops::demosaic::Raw::U16(img), &params)
        .unwrap()
}

fn load_u16(path: &Path) -> Image<u16> {
    match clfilter::image::load(path).unwrap() {
        DynImage::U16(i) => i,
        other => panic!("{} loaded as {:?}", path.display(), other.sample_type()),
    }
}

fn load_u8(path: &Path) -> Image<u8> {
    match clfilter::image::load(path).unwrap() {
        DynImage::U8(i) => i,
        other => panic!("{} loaded as {:?}", path.display(), other.sample_type()),
    }
}

fn random_12bit(seed: u64, w: usize, h: usize) -> Image<u16> {
    let mut rng = Rng::new(seed);
    Image::from_fn(w, h, 1, |_, _, _| rng.below(4096) as u16).unwrap()
}

#[test]
fn apply_demosaics_a_packed_raw_frame() {
    let d = tempfile::tempdir().unwrap();
    let (w, h) = (24, 16);
    let img = random_12bit(31, w, h);
    for name in ["bayer_grbg12p", "bayer_gbrg12packed"] {
        let f = fmt(name);
        let frame = d.path().join(format!("{name}.raw"));
        std::fs::write(&frame, raw::encode(&img.clone().into(), &f).unwrap()).unwrap();
        let out = d.path().join(format!("{name}.png"));
        ok(filterctl(&[
            "--device",
            "cpu",
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            name,
            p(&frame),
            "-o",
            p(&out),
        ]));
        // u16 RGB, equal to the engine's demosaic of the unpacked samples.
        let got = load_u16(&out);
        assert_eq!(got.channels(), 3);
        assert_eq!(
            got,
            cpu_demosaic::<u16>(&img, f.pattern.unwrap(), 12),
            "{name}"
        );
    }
    // The default device (OpenCL when there is one) unpacks on the device;
    // its result agrees to within a step of the CPU's.
    let frame = d.path().join("bayer_grbg12p.raw");
    let out = d.path().join("auto.png");
    let o = ok(filterctl(&[
        "apply",
        "-f",
        "demosaic=out=u8",
        "--size",
        "24x16",
        "--format",
        "bayer_grbg12p",
        p(&frame),
        "-o",
        p(&out),
        "--json",
    ]));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        json["spec"],
        "demosaic=pattern=grbg:method=mhc:bits=12:out=u8"
    );
    assert_eq!(json["files"][0]["format"], "bayer_grbg12p");
    assert_eq!(json["files"][0]["sample"], "u16");
    let got = load_u8(&out);
    let want = cpu_demosaic::<u8>(&img, Pattern::Grbg, 12);
    let worst = got
        .data()
        .iter()
        .zip(want.data())
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(worst <= 1, "device vs CPU: {worst}");
}

#[test]
fn apply_reads_every_depth() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(41);
    for f in [
        "bayer_bggr8",
        "bayer_rggb10",
        "bayer_gbrg16",
        "mono12",
        "mono12packed",
    ] {
        let f = fmt(f);
        let img = random_frame(&mut rng, &f, 6, 4);
        let frame = d.path().join("frame.bin");
        std::fs::write(&frame, raw::encode(&img, &f).unwrap()).unwrap();
        // minmax on the decoded samples: the values as stored.
        let o = ok(filterctl(&[
            "--device",
            "cpu",
            "apply",
            "-f",
            "minmax",
            "--size",
            "6x4",
            "--format",
            &f.to_string(),
            p(&frame),
        ]));
        let (lo, hi) = match &img {
            DynImage::U8(i) => (
                *i.data().iter().min().unwrap() as u32,
                *i.data().iter().max().unwrap() as u32,
            ),
            DynImage::U16(i) => (
                *i.data().iter().min().unwrap() as u32,
                *i.data().iter().max().unwrap() as u32,
            ),
            DynImage::F32(_) => unreachable!(),
        };
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            format!("minmax: {lo}..{hi}"),
            "{f}"
        );
    }
}

#[test]
fn apply_demosaics_bayer_image_files() {
    let d = tempfile::tempdir().unwrap();
    let (w, h) = (20, 14);
    let img = random_12bit(51, w, h);
    let want16 = cpu_demosaic::<u16>(&img, Pattern::Rggb, 12);

    // A 16-bit PGM (maxval 65535, as clfilter saves it) loads as 1-channel u16.
    let pgm = d.path().join("bayer16.pgm");
    clfilter::image::save(&img.clone().into(), &pgm).unwrap();
    assert_eq!(load_u16(&pgm), img);
    let out = d.path().join("a.png");
    ok(filterctl(&[
        "--device",
        "cpu",
        "apply",
        "-f",
        "demosaic=pattern=rggb:bits=12",
        p(&pgm),
        "-o",
        p(&out),
    ]));
    assert_eq!(load_u16(&out), want16);
    // --format sets the pattern and the bits, as for the raw frame.
    let out_fmt = d.path().join("b.png");
    ok(filterctl(&[
        "--device",
        "cpu",
        "apply",
        "-f",
        "demosaic",
        "--format",
        "bayer_rggb12",
        p(&pgm),
        "-o",
        p(&out_fmt),
    ]));
    assert_eq!(load_u16(&out_fmt), want16);
    let frame = d.path().join("frame.raw");
    std::fs::write(
        &frame,
        raw::encode(&img.clone().into(), &fmt("bayer_rggb12")).unwrap(),
    )
    .unwrap();
    let out_raw = d.path().join("c.png");
    ok(filterctl(&[
        "--device",
        "cpu",
        "apply",
        "-f",
        "demosaic",
        "--size",
        "20x14",
        "--format",
        "bayer_rggb12",
        p(&frame),
        "-o",
        p(&out_raw),
    ]));
    assert_eq!(load_u16(&out_raw), want16);

    // A 12-bit PGM (maxval 4095): the loader scales it to 0..65535, and
    // --format bayer_rggb12 still levels it right.
    let pgm12 = d.path().join("bayer12.pgm");
    let mut bytes = format!("P5\n# 12-bit sensor\n{w} {h}\n4095\n").into_bytes();
    for v in img.data() {
        bytes.extend_from_slice(&v.to_be_bytes());
    }
    std::fs::write(&pgm12, bytes).unwrap();
    let out12 = d.path().join("d.png");
    ok(filterctl(&[
        "--device",
        "cpu",
        "apply",
        "-f",
        "demosaic=out=u8",
        "--format",
        "bayer_rggb12",
        p(&pgm12),
        "-o",
        p(&out12),
    ]));
    let want8 = cpu_demosaic::<u8>(&img, Pattern::Rggb, 12);
    let got = load_u8(&out12);
    let worst = got
        .data()
        .iter()
        .zip(want8.data())
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(worst <= 1, "maxval 4095 PGM: {worst}");
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--format",
            "bayer_rggb10",
            p(&pgm12),
            "-o",
            p(&out12),
        ],
        2,
    );
    assert!(
        e.contains("white level 1023), but the file's maxval is 4095"),
        "{e}"
    );

    // 8-bit gray PGM and PNG.
    let mut rng = Rng::new(52);
    let img8 = Image::<u8>::from_fn(w, h, 1, |_, _, _| rng.next_u64() as u8).unwrap();
    let want = Engine::cpu()
        .demosaic::<u8>(
            &clfilter::ops::demosaic::Raw::U8(&img8),
            &DemosaicParams::new(Pattern::Gbrg, Method::Bilinear),
        )
        .unwrap();
    for ext in ["pgm", "png"] {
        let file = d.path().join(format!("bayer8.{ext}"));
        clfilter::image::save(&img8.clone().into(), &file).unwrap();
        for extra in [&["--format", "bayer_gbrg8"][..], &[]] {
            let spec = if extra.is_empty() {
                "demosaic=pattern=gbrg:method=bilinear"
            } else {
                "demosaic=method=bilinear"
            };
            let out = d.path().join(format!("out-{ext}.png"));
            let mut args = vec![
                "--device",
                "cpu",
                "apply",
                "-f",
                spec,
                p(&file),
                "-o",
                p(&out),
            ];
            args.extend_from_slice(extra);
            ok(filterctl(&args));
            assert_eq!(load_u8(&out), want, "{ext} {extra:?}");
        }
    }
}

#[test]
fn apply_errors_on_raw_frames() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(61);
    let frame = d.path().join("f.raw");
    std::fs::write(&frame, random_bytes(&mut rng, 24 * 16 * 3 / 2)).unwrap();
    let out = d.path().join("o.png");
    let (f, o) = (p(&frame), p(&out));

    // The wrong size: exit 1, naming both sizes and what the file fits.
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            "bayer_rggb12",
            f,
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("a 24x16 bayer_rggb12 frame is 768 bytes, but the file has 576 (192 fewer)"),
        "{e}"
    );
    assert!(
        e.contains("fits a 24x16 frame of packed 12-bit samples"),
        "{e}"
    );
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            "bayer_rggb8",
            f,
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("is 384 bytes, but the file has 576 (192 more)"),
        "{e}"
    );
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x8",
            "--format",
            "bayer_rggb12",
            f,
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("is 384 bytes, but the file has 576 (192 more)"),
        "{e}"
    );
    assert!(!e.contains("fits") && !e.contains("whole frames"), "{e}");
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "16x12",
            "--format",
            "bayer_rggb12p",
            f,
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("that is 2 whole frames, and apply reads one frame per file"),
        "{e}"
    );
    // A truncated file.
    let short = d.path().join("short.raw");
    std::fs::write(&short, random_bytes(&mut rng, 575)).unwrap();
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            "bayer_rggb12p",
            p(&short),
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("is 576 bytes, but the file has 575 (1 fewer)"),
        "{e}"
    );
    assert!(!out.exists());

    // Bad names and sizes: usage errors (exit 2).
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            "BayerRG12p",
            f,
            "-o",
            o,
        ],
        2,
    );
    assert!(e.contains("did you mean 'bayer_rggb12p'?"), "{e}");
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "23x16",
            "--format",
            "bayer_rggb12p",
            f,
            "-o",
            o,
        ],
        2,
    );
    assert!(e.contains("bayer_rggb12p frame of 23x16"), "{e}");
    assert!(e.contains("even width and height"), "{e}");
    let e = fails(
        &[
            "apply", "-f", "minmax", "--size", "3x3", "--format", "mono12p", f,
        ],
        2,
    );
    assert!(e.contains("width x height must be even"), "{e}");
    let e = fails(
        &["apply", "-f", "demosaic", "--size", "24x16", f, "-o", o],
        2,
    );
    assert!(e.contains("--format <FMT>"), "{e}");
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24",
            "--format",
            "bayer_rggb8",
            f,
            "-o",
            o,
        ],
        2,
    );
    assert!(e.contains("has no 'x'"), "{e}");
    let e = fails(
        &[
            "apply", "-f", "demosaic", "--size", "24x16", "--format", "mono12p", f, "-o", o,
        ],
        2,
    );
    assert!(e.contains("mono frames have no colour filter array"), "{e}");
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic=pattern=bggr",
            "--size",
            "24x16",
            "--format",
            "bayer_rggb12p",
            f,
            "-o",
            o,
        ],
        2,
    );
    assert!(e.contains("contradicts the format bayer_rggb12p"), "{e}");
    // A demosaic result does not fit a 1-channel format.
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "24x16",
            "--format",
            "bayer_rggb12p",
            f,
            "-o",
            p(&d.path().join("o.pgm")),
        ],
        2,
    );
    assert!(e.contains("PGM (.pgm, P5) holds 1 channel"), "{e}");

    // --format without --size on a raw file: a hint.
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--format",
            "bayer_rggb12p",
            f,
            "-o",
            o,
        ],
        1,
    );
    assert!(e.contains("needs --size WxH as well as --format"), "{e}");
    // An image file that --format does not describe.
    let rgb = d.path().join("rgb.png");
    clfilter::image::save(&Image::<u8>::new(4, 4, 3).unwrap().into(), &rgb).unwrap();
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--format",
            "bayer_rggb8",
            p(&rgb),
            "-o",
            o,
        ],
        2,
    );
    assert!(
        e.contains("describes 1-channel frames, but the file is 4x4 RGB u8"),
        "{e}"
    );
    let gray = d.path().join("gray.png");
    clfilter::image::save(&Image::<u8>::new(5, 4, 1).unwrap().into(), &gray).unwrap();
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--format",
            "bayer_rggb12",
            p(&gray),
            "-o",
            o,
        ],
        2,
    );
    assert!(
        e.contains("but the file has u8 samples; use --format bayer_rggb8"),
        "{e}"
    );
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--format",
            "bayer_rggb8",
            p(&gray),
            "-o",
            o,
        ],
        2,
    );
    assert!(e.contains("even width and height"), "{e}");
    // An image file given as a raw frame.
    let e = fails(
        &[
            "apply",
            "-f",
            "demosaic",
            "--size",
            "4x4",
            "--format",
            "bayer_rggb8",
            p(&rgb),
            "-o",
            o,
        ],
        1,
    );
    assert!(
        e.contains("looks like an image file, which loads without --size"),
        "{e}"
    );
}
