//! `demosaic`: every OpenCL variant x method x pattern x input format x
//! output type against the reference on PoCL, the rayon path against the
//! reference, the 12-bit unpackers against hand-computed bytes, typed
//! errors, flat images staying flat, and PSNR floors on the committed photo.

use clfilter::prelude::*;
mod common;

use clfilter::ops::demosaic::{
    self, mosaic, psnr, reference, DemosaicParams, Method, Packing, Pattern, Raw,
};
use clfilter::{DynImage, Engine, Error, Image};
use common::{opencl_engine, Rng, TestSample};

/// Sizes: the smallest frames, thin ones, and sizes that are not multiples
/// of the tiles (16x8 quads) or of 4.
const SIZES: &[(usize, usize)] = &[(2, 2), (2, 10), (10, 2), (6, 4), (34, 18), (258, 130)];

/// Random raw samples of every input format, never all zero.
fn raw_u8(rng: &mut Rng, w: usize, h: usize) -> Image<u8> {
    Image::from_fn(w, h, 1, |_, _, _| u8::random(rng)).unwrap()
}

fn raw_u16(rng: &mut Rng, w: usize, h: usize, bits: u32) -> Image<u16> {
    Image::from_fn(w, h, 1, |_, _, _| (rng.below(1 << bits)) as u16).unwrap()
}

/// One input of each format: (label, bits, frame).
struct Inputs {
    u8: Image<u8>,
    u16: Image<u16>,
    bits: u32,
    p12: Vec<u8>,
    gige: Vec<u8>,
}

impl Inputs {
    fn new(rng: &mut Rng, w: usize, h: usize) -> Self {
        let twelve = raw_u16(rng, w, h, 12);
        let samples = twelve.packed_samples().to_vec();
        Inputs {
            u8: raw_u8(rng, w, h),
            u16: raw_u16(rng, w, h, 10),
            bits: 10,
            p12: Packing::Pfnc12p.pack(&samples).unwrap(),
            gige: Packing::GigE12Packed.pack(&samples).unwrap(),
        }
    }

    fn each(&self) -> Vec<(&'static str, Raw<'_>, Option<u32>)> {
        let (w, h) = (self.u8.width(), self.u8.height());
        vec![
            ("u8", Raw::U8(&self.u8), None),
            ("u16", Raw::U16(&self.u16), Some(self.bits)),
            (
                "12p",
                Raw::Packed12 {
                    data: &self.p12,
                    width: w,
                    height: h,
                    packing: Packing::Pfnc12p,
                },
                None,
            ),
            (
                "12packed",
                Raw::Packed12 {
                    data: &self.gige,
                    width: w,
                    height: h,
                    packing: Packing::GigE12Packed,
                },
                None,
            ),
        ]
    }
}

/// Largest |got - want| allowed: `tol` of full scale, and one step more for
/// integer outputs (a value within float error of a rounding tie may round
/// either way).
fn compare<U: TestSample>(got: &Image<U>, want: &Image<U>, tol: f32, ctx: &str) {
    assert_eq!(
        (got.width(), got.height(), got.channels()),
        (want.width(), want.height(), want.channels()),
        "{ctx}: shape"
    );
    let full = U::TYPE.full_scale();
    let lsb = if full == 1.0 { 0.0 } else { 1.0 };
    for y in 0..want.height() {
        for (i, (g, e)) in got.row(y).iter().zip(want.row(y)).enumerate() {
            let d = (g.to_f32() - e.to_f32()).abs();
            // f32 outputs of random data reach a few times full scale.
            let limit = tol * full * e.to_f32().abs().max(full) / full + lsb;
            assert!(
                d <= limit,
                "{ctx}: pixel ({}, {y}) channel {}: got {g:?}, expected {e:?}",
                i / want.channels(),
                i % want.channels()
            );
        }
    }
}

fn params(pattern: Pattern, method: Method, channels: usize, bits: Option<u32>) -> DemosaicParams {
    DemosaicParams {
        pattern,
        method,
        black: 3.0,
        gains: [1.9, 1.0, 1.4],
        channels,
        bits,
    }
}

/// Demosaics `raw` with both channel counts on `engine` and compares with the reference.
fn check_one<U: TestSample>(
    engine: &Engine,
    label: &str,
    tol: f32,
    (fmt, raw, bits): (&str, &Raw<'_>, Option<u32>),
    (pattern, method): (Pattern, Method),
) {
    let (w, h) = raw.size();
    for ch in [3, 4] {
        let p = params(pattern, method, ch, bits);
        let lv = p.levels(raw, U::TYPE).unwrap();
        let want: Image<U> = reference::demosaic(raw, &p, &lv).unwrap();
        let (got, report) = engine.demosaic_report::<U>(raw, &p).unwrap();
        let ctx = format!(
            "{label} ran {} {w}x{h} {fmt} {pattern} {method} -> {}x{ch}",
            report.variant,
            U::TYPE
        );
        compare(&got, &want, tol, &ctx);
    }
}

/// Every pattern x method on 8-bit input and output; then every input
/// format x output type, each with another method and pattern in turn.
/// (Each OpenCL combination of method, pattern, input and output type is
/// its own program build, about a second each on PoCL, so the full product
/// of 432 builds is not run.)
fn check_engine(engine: &Engine, label: &str, tol: f32) {
    let mut turn = 0usize;
    for &(w, h) in SIZES {
        let mut rng = Rng::from_parts(&[w as u64, h as u64]);
        let inputs = Inputs::new(&mut rng, w, h);
        let all = inputs.each();
        for pattern in Pattern::ALL {
            for method in Method::ALL {
                check_one::<u8>(
                    engine,
                    label,
                    tol,
                    ("u8", &all[0].1, None),
                    (pattern, method),
                );
            }
        }
        for (fmt, raw, bits) in &all {
            for out in ["u8", "u16", "f32"] {
                if (*fmt, out) == ("u8", "u8") {
                    continue;
                }
                let k = turn;
                turn += 1;
                let (pattern, method) = (Pattern::ALL[k % 4], Method::ALL[k % 3]);
                match out {
                    "u8" => {
                        check_one::<u8>(engine, label, tol, (fmt, raw, *bits), (pattern, method))
                    }
                    "u16" => {
                        check_one::<u16>(engine, label, tol, (fmt, raw, *bits), (pattern, method))
                    }
                    _ => check_one::<f32>(engine, label, tol, (fmt, raw, *bits), (pattern, method)),
                }
            }
        }
        // Sizes repeat the same combinations (same builds).
        turn = 0;
    }
}

#[test]
fn cpu_path_matches_reference() {
    let e = Engine::cpu();
    check_engine(&e, "cpu", clfilter::ops::demosaic::variants::CPU_TOLERANCE);
    // The full product on the CPU (no builds there).
    for &(w, h) in &SIZES[..5] {
        let mut rng = Rng::from_parts(&[w as u64, h as u64, 7]);
        let inputs = Inputs::new(&mut rng, w, h);
        for (fmt, raw, bits) in inputs.each() {
            for pattern in Pattern::ALL {
                for method in Method::ALL {
                    check_one::<u8>(&e, "cpu", 1e-5, (fmt, &raw, bits), (pattern, method));
                    check_one::<u16>(&e, "cpu", 1e-5, (fmt, &raw, bits), (pattern, method));
                    check_one::<f32>(&e, "cpu", 1e-5, (fmt, &raw, bits), (pattern, method));
                }
            }
        }
    }
}

fn opencl_variant(name: &str) {
    let Some(cl) = opencl_engine() else { return };
    let spec = demosaic::SPEC.variant(name).unwrap();
    let e = cl.with_variant(Some("demosaic"), spec.name);
    check_engine(&e, spec.name, spec.tolerance);
}

#[test]
fn opencl_tile_matches_reference() {
    opencl_variant("tile");
}

#[test]
fn opencl_direct_matches_reference() {
    opencl_variant("direct");
}

#[test]
fn every_variant_is_tested() {
    let names: Vec<_> = demosaic::SPEC.variants.iter().map(|v| v.name).collect();
    assert_eq!(
        names,
        ["tile", "direct"],
        "add a test function for the new variant"
    );
}

#[test]
fn unpackers_match_hand_computed_bytes() {
    // Samples 0xABC and 0x123.
    let p12 = [0xBC, 0x3A, 0x12];
    let gige = [0xAB, 0x3C, 0x12];
    assert_eq!(Packing::Pfnc12p.unpack_pair(p12), [0xABC, 0x123]);
    assert_eq!(Packing::GigE12Packed.unpack_pair(gige), [0xABC, 0x123]);
    assert_eq!(Packing::Pfnc12p.pack(&[0xABC, 0x123]).unwrap(), p12);
    assert_eq!(Packing::GigE12Packed.pack(&[0xABC, 0x123]).unwrap(), gige);
    // The same bytes through every engine path: a 2x2 RGGB frame whose R
    // site is 0xABC; bilinear keeps a site's own sample, so R at (0, 0) is
    // 0xABC / 4095 in f32.
    let mut engines = vec![Engine::cpu()];
    if let Some(cl) = opencl_engine() {
        for v in demosaic::SPEC.variants {
            engines.push(cl.with_variant(Some("demosaic"), v.name));
        }
    }
    for (packing, bytes) in [(Packing::Pfnc12p, p12), (Packing::GigE12Packed, gige)] {
        let mut frame = bytes.to_vec();
        frame.extend_from_slice(&bytes);
        let raw = Raw::Packed12 {
            data: &frame,
            width: 2,
            height: 2,
            packing,
        };
        let p = DemosaicParams::new(Pattern::Rggb, Method::Bilinear);
        for e in &engines {
            let (out, r) = e.demosaic_report::<f32>(&raw, &p).unwrap();
            assert_eq!(
                out.get(0, 0, 0),
                0xABC as f32 / 4095.0,
                "{packing:?} on {}",
                r.variant
            );
            assert_eq!(
                out.get(1, 1, 2),
                0x123 as f32 / 4095.0,
                "{packing:?} on {}",
                r.variant
            );
        }
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let e = Engine::cpu();
    let p = DemosaicParams::default();
    for (w, h) in [(3, 4), (4, 3), (1, 2), (2, 1)] {
        let img = Image::<u8>::new(w, h, 1).unwrap();
        assert!(
            matches!(
                e.demosaic::<u8>(&Raw::U8(&img), &p),
                Err(Error::InvalidArgument(_))
            ),
            "{w}x{h}"
        );
    }
    let rgb = Image::<u8>::new(4, 4, 3).unwrap();
    assert!(matches!(
        e.demosaic::<u8>(&Raw::U8(&rgb), &p),
        Err(Error::InvalidArgument(_))
    ));
    let short = vec![0u8; 23];
    let raw = Raw::Packed12 {
        data: &short,
        width: 4,
        height: 4,
        packing: Packing::Pfnc12p,
    };
    match e.demosaic::<u8>(&raw, &p) {
        Err(Error::InvalidInput(m)) => assert!(m.contains("24") && m.contains("23"), "{m}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    assert!(Packing::GigE12Packed.unpack(&short, 4, 4).is_err());
    assert!(matches!(
        "rgbg".parse::<Pattern>(),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        "vng".parse::<Method>(),
        Err(Error::InvalidArgument(_))
    ));
    let img = Image::<u16>::new(4, 4, 1).unwrap();
    for bad in [
        DemosaicParams {
            bits: Some(17),
            ..p
        },
        DemosaicParams { bits: Some(7), ..p },
        DemosaicParams {
            black: 65535.0,
            ..p
        },
        DemosaicParams {
            black: f32::NAN,
            ..p
        },
        DemosaicParams {
            gains: [1.0, -1.0, 1.0],
            ..p
        },
        DemosaicParams { channels: 1, ..p },
    ] {
        assert!(
            matches!(
                e.demosaic::<u8>(&Raw::U16(&img), &bad),
                Err(Error::InvalidArgument(_))
            ),
            "{bad:?}"
        );
    }
    let img8 = Image::<u8>::new(4, 4, 1).unwrap();
    assert!(e
        .demosaic::<u8>(
            &Raw::U8(&img8),
            &DemosaicParams {
                bits: Some(12),
                ..p
            }
        )
        .is_err());
}

#[test]
fn constant_frames_stay_constant_to_the_edges() {
    let mut engines = vec![Engine::cpu()];
    if let Some(cl) = opencl_engine() {
        for v in demosaic::SPEC.variants {
            engines.push(cl.with_variant(Some("demosaic"), v.name));
        }
    }
    for (w, h) in [(2, 2), (6, 4), (34, 18)] {
        let img = Image::<u8>::from_fn(w, h, 1, |_, _, _| 100).unwrap();
        for pattern in Pattern::ALL {
            for method in Method::ALL {
                let p = DemosaicParams::new(pattern, method);
                for e in &engines {
                    let (out, r) = e.demosaic_report::<u8>(&Raw::U8(&img), &p).unwrap();
                    assert!(
                        out.rows().flatten().all(|&v| v == 100),
                        "{w}x{h} {pattern} {method} on {}: not flat",
                        r.variant
                    );
                }
            }
        }
    }
}

#[test]
fn psnr_floors_on_the_committed_photo() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/coffee.png");
    let DynImage::U8(rgb) = clfilter::image::load(path).unwrap() else {
        panic!("coffee.png is 8-bit")
    };
    let cfa = mosaic(&rgb, Pattern::Rggb).unwrap();
    let e = Engine::cpu();
    // Measured: 29.44, 33.17, 34.41 dB (docs/QUALITY.md).
    for (method, floor) in [
        (Method::Bilinear, 29.2),
        (Method::Mhc, 32.9),
        (Method::Edge, 34.1),
    ] {
        let p = DemosaicParams::new(Pattern::Rggb, method);
        let out: Image<u8> = e.demosaic(&Raw::U8(&cfa), &p).unwrap();
        let db = psnr(&out, &rgb, 10).unwrap();
        assert!(db >= floor, "{method}: {db:.2} dB < {floor}");
    }
    // Every pattern reads its own mosaic equally well.
    for pattern in Pattern::ALL {
        let cfa = mosaic(&rgb, pattern).unwrap();
        let out: Image<u8> = e
            .demosaic(&Raw::U8(&cfa), &DemosaicParams::new(pattern, Method::Mhc))
            .unwrap();
        assert!(psnr(&out, &rgb, 10).unwrap() >= 32.9, "{pattern}");
    }
}
