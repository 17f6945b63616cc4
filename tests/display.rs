//! Pipelines into display pixels (`Pipeline::run_display`, RGBA8 and
//! RGBA32F): on the device the conversion runs there, and must give the
//! very numbers of `image::display::to_display` applied to the same
//! device chain's stored result, for every sample type and channel count,
//! odd sizes, raw frames and pending scales; on the CPU engine it is the
//! host conversion of the host result. Needs an OpenCL device for the
//! device half (PoCL in CI; "skipped: no OpenCL device" otherwise).

mod common;

use clfilter::image::display::{to_display, DisplayFormat, DisplayFrame};
use clfilter::image::raw::RawImage;
use clfilter::pipeline::{Input, Pipeline};
use clfilter::{DynImage, Engine, Image};
use common::{opencl_engine, random_image, Rng, TestSample};

const SIZES: &[(usize, usize)] = &[(1, 1), (1, 9), (9, 1), (17, 5), (33, 31)];
const FORMATS: [DisplayFormat; 2] = [DisplayFormat::Rgba8, DisplayFormat::Rgba32F];

/// Bit-exact, NaN equal to NaN.
fn same_frames(got: &DisplayFrame, want: &DisplayFrame, ctx: &str) {
    match (got, want) {
        (DisplayFrame::Rgba8(g), DisplayFrame::Rgba8(w)) => assert_eq!(g, w, "{ctx}"),
        (DisplayFrame::Rgba32F(g), DisplayFrame::Rgba32F(w)) => {
            assert_eq!((g.width(), g.height()), (w.width(), w.height()), "{ctx}");
            let (g, w) = (g.packed_samples(), w.packed_samples());
            for (i, (a, b)) in g.iter().zip(w.iter()).enumerate() {
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{ctx}: sample {i}: {a} != {b}"
                );
            }
        }
        _ => panic!("{ctx}: formats differ"),
    }
}

/// Every type, channel count, size and format through `spec` on `engine`.
fn check_all(engine: &Engine, spec: &str) {
    let p: Pipeline = spec.parse().unwrap();
    let mut rng = Rng::new(1818);
    fn one<T: TestSample>(engine: &Engine, p: &Pipeline, rng: &mut Rng, spec: &str)
    where
        DynImage: From<Image<T>>,
    {
        for &(w, h) in SIZES {
            for c in [1, 3, 4] {
                let img: DynImage = random_image::<T>(rng, w, h, c).into();
                let (stored, _) = p.run(engine, img.clone()).unwrap();
                for f in FORMATS {
                    let (got, stages) = p.run_display(engine, Input::Image(&img), f).unwrap();
                    let device = engine.backend().device().is_some();
                    assert!(stages.iter().all(|s| s.on_device == device), "{spec}");
                    let want = to_display(&stored, f).unwrap();
                    let ctx = format!("{spec} on {} {w}x{h}x{c} {f:?}", T::TYPE);
                    same_frames(&got, &want, &ctx);
                }
            }
        }
    }
    one::<u8>(engine, &p, &mut rng, spec);
    one::<u16>(engine, &p, &mut rng, spec);
    one::<f32>(engine, &p, &mut rng, spec);
}

#[test]
fn device_display_pixels_are_the_host_conversion_of_the_result() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    // A filter, a pending scale (convert), a change of type, and a
    // transpose (a result of another shape).
    for spec in [
        "gaussian=sigma=1.5",
        "convert=f32",
        "gaussian=sigma=1,convert=u8",
        "convert=u16,transpose",
    ] {
        check_all(&engine, spec);
    }
}

#[test]
fn cpu_display_pixels_are_the_host_conversion_of_the_result() {
    check_all(&Engine::cpu(), "gaussian=sigma=1.5,convert=u16");
}

#[test]
fn raw_frames_run_into_display_pixels() {
    let mut rng = Rng::new(7);
    let raw = random_image::<u16>(&mut rng, 38, 22, 1);
    let frame = RawImage::U16(raw.clone());
    let p: Pipeline = "demosaic=pattern=rggb:method=bilinear:bits=12,gaussian=sigma=1"
        .parse()
        .unwrap();
    let mut engines = vec![Engine::cpu()];
    engines.extend(opencl_engine());
    for engine in &engines {
        let (stored, _) = p.run_frame(engine, frame.clone()).unwrap();
        let (got, stages) = p
            .run_display(engine, Input::Frame(&frame), DisplayFormat::Rgba8)
            .unwrap();
        assert_eq!(stages.len(), 2);
        let device = engine.backend().device().is_some();
        assert!(stages.iter().all(|s| s.on_device == device));
        let want = to_display(&stored, DisplayFormat::Rgba8).unwrap();
        same_frames(&got, &want, &format!("raw frame on {:?}", engine.backend()));
        let DisplayFrame::Rgba8(img) = got else {
            unreachable!()
        };
        assert!(img.packed_samples().chunks_exact(4).all(|p| p[3] == 255));
    }
}

#[test]
fn no_stages_show_the_input() {
    let img: DynImage = Image::<u8>::from_vec(2, 1, 1, vec![7, 200]).unwrap().into();
    let (got, stages) = Pipeline::default()
        .run_display(&Engine::cpu(), (&img).into(), DisplayFormat::Rgba8)
        .unwrap();
    assert!(stages.is_empty());
    let DisplayFrame::Rgba8(got) = got else {
        unreachable!()
    };
    assert_eq!(
        got.packed_samples().as_ref(),
        &[7, 7, 7, 255, 200, 200, 200, 255]
    );
}
