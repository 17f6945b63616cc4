//! Device-resident pipelines and frame streams, on the OpenCL device (PoCL
//! in CI): every chained pipeline against the same stages run one by one on
//! the CPU engine, streams against per-frame host runs, the buffer pool,
//! the fallbacks, and the error cases.

mod common;

use std::io::Cursor;

use clfilter::image::raw::{encode, RawFormat};
use clfilter::pipeline::stream::{run_stream, FrameSink, OutFrame, StreamOptions};
use clfilter::pipeline::{self, run_outcomes, run_stages};
use clfilter::{Backend, DynImage, Engine, Error, Image};
use common::{opencl_engine, random_image, Rng};

/// Largest |a - b| over all samples, in units of the sample type's step
/// (f32: absolute).
fn max_diff(a: &DynImage, b: &DynImage) -> f64 {
    assert_eq!(a.shape(), b.shape(), "shapes differ");
    assert_eq!(a.sample_type(), b.sample_type(), "types differ");
    fn d<T: clfilter::Sample + Into<f64> + Copy>(a: &Image<T>, b: &Image<T>) -> f64 {
        a.rows()
            .flatten()
            .zip(b.rows().flatten())
            .map(|(&x, &y)| (x.into() - y.into()).abs())
            .fold(0.0, f64::max)
    }
    match (a, b) {
        (DynImage::U8(a), DynImage::U8(b)) => d(a, b),
        (DynImage::U16(a), DynImage::U16(b)) => d(a, b),
        (DynImage::F32(a), DynImage::F32(b)) => d(a, b),
        _ => unreachable!(),
    }
}

/// A random Bayer frame: smooth colour plus noise, so demosaic and blur
/// see edges and flat areas.
fn bayer_u8(rng: &mut Rng, w: usize, h: usize) -> Image<u8> {
    random_image::<u8>(rng, w, h, 1)
}

fn bayer_u16(rng: &mut Rng, w: usize, h: usize, bits: u32) -> Image<u16> {
    let mut img = random_image::<u16>(rng, w, h, 1);
    let max = (1u32 << bits) - 1;
    for y in 0..h {
        for v in img.row_mut(y) {
            *v = (*v as u32 % (max + 1)) as u16;
        }
    }
    img
}

/// Sizes: tiny, thin, prime-ish (even for Bayer), not multiples of tiles.
const BAYER_SIZES: &[(usize, usize)] = &[(2, 2), (2, 38), (38, 2), (34, 18), (66, 130)];

/// Runs `spec` chained on the device and stage by stage on the CPU engine;
/// the results must agree within `steps` of the output type (the host path
/// rounds after every stage, the device path only at the end).
fn check(engine: &Engine, spec: &str, input: DynImage, steps: f64) {
    let ops = pipeline::parse(spec).unwrap();
    let (got, outcomes) = run_outcomes(engine, &ops, input.clone()).unwrap();
    for o in &outcomes {
        assert!(o.on_device, "{spec}: stage {} left the device", o.op);
        for r in &o.reports {
            assert_ne!(
                r.variant, "cpu",
                "{spec}: stage {} ran on the CPU, not on the device",
                o.op
            );
        }
    }
    // The CPU engine runs no forced OpenCL variant: the same stages without.
    let plain: Vec<_> = ops
        .iter()
        .cloned()
        .map(|mut o| {
            o.variant = None;
            o
        })
        .collect();
    let (want, _) = run_stages(&Engine::cpu(), &plain, input).unwrap();
    let diff = max_diff(&got, &want);
    let tol = if got.sample_type() == clfilter::SampleType::F32 {
        steps * 1e-3
    } else {
        steps
    };
    assert!(
        diff <= tol,
        "{spec} {:?}: device and host differ by {diff} (allowed {tol})",
        got.shape()
    );
}

#[test]
fn chained_pipelines_match_the_host_path() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(51);
    for &(w, h) in BAYER_SIZES {
        let f8 = DynImage::U8(bayer_u8(&mut rng, w, h));
        let f12 = DynImage::U16(bayer_u16(&mut rng, w, h, 12));
        for method in ["bilinear", "mhc", "edge"] {
            check(
                &engine,
                &format!("demosaic=method={method},gaussian=sigma=2,convert=u8"),
                f8.clone(),
                2.0,
            );
            // Each side runs its own variant, each within its documented
            // tolerance of the reference (1e-3 of the range for the
            // recursive ones, docs/QUALITY.md): up to twice that of the
            // 12-bit range apart, plus rounding. (An H100 showed 5 and 8
            // steps on 38x2 frames.)
            check(
                &engine,
                &format!("demosaic=method={method}:bits=12:channels=4,gaussian=sigma=1.5"),
                f12.clone(),
                2.0 + 2e-3 * 4095.0,
            );
        }
        // The host rounds the demosaic to u8 before the range weights see
        // it, the chain does not: a step apart at most.
        check(
            &engine,
            "demosaic=method=mhc,bilateral=sigma_s=1.5:sigma_r=0.1,convert=u8",
            f8.clone(),
            2.0,
        );
        check(&engine, "demosaic=pattern=gbrg:out=f32", f8.clone(), 1.0);
        check(
            &engine,
            "demosaic=bits=12,convert=u8,transpose,minmax",
            f12.clone(),
            1.0,
        );
    }
    for &(w, h) in &[(1, 1), (1, 17), (17, 1), (31, 33), (257, 5)] {
        for c in [1, 3, 4] {
            let img = DynImage::U8(random_image::<u8>(&mut rng, w, h, c));
            // A min..max stretch after a rounding stage would amplify the
            // host's rounding; from f32 both paths see the same values.
            // Sigma above 3 (the rayon FIR's limit): both paths then run
            // Deriche's recursion, and the stretch to u16 does not amplify
            // the recursion's own 1e-3 error against the host's exact FIR.
            check(
                &engine,
                "convert=f32,gaussian=sigma=3.5,transpose,normalize=out=u16",
                img.clone(),
                2.0,
            );
            check(
                &engine,
                "convert=f32,gaussian=sigma=0.7,convert=u16",
                img.clone(),
                2.0 * 257.0,
            );
            check(
                &engine,
                "minmax,normalize=sub=10:factor=2",
                img.clone(),
                1.0,
            );
            // A stage's variant applies to its own table only (the range's
            // minmax keeps the engine's choice).
            check(&engine, "convert=f32,normalize=out=u8:variant=x4", img, 1.0);
            // Narrowing then widening keeps the narrow type's steps.
            let wide = DynImage::U16(random_image::<u16>(&mut rng, w, h, c));
            check(&engine, "convert=u8,convert=u16", wide.clone(), 0.0);
            check(
                &engine,
                "gaussian=sigma=2,convert=u8,convert=f32",
                wide,
                4.0, // one u8 step (1/255) of double rounding on the host: u16, then u8
            );
            let f = DynImage::F32(random_image::<f32>(&mut rng, w, h, c));
            // Sigma above 3, as above: at 1.2 the host's exact FIR and the
            // device's recursion (1e-3 of the +-300 samples) differ by more
            // than the u8 steps this checks.
            check(&engine, "gaussian=sigma=3.5,convert=u8", f, 2.0);
        }
    }
}

#[test]
fn colormaps_chain_on_the_device() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(77);
    for &(w, h) in &[(1, 1), (1, 9), (9, 1), (31, 17), (257, 3)] {
        let u8img = DynImage::U8(random_image::<u8>(&mut rng, w, h, 1));
        let u16img = DynImage::U16(random_image::<u16>(&mut rng, w, h, 1));
        let f = DynImage::F32(random_image::<f32>(&mut rng, w, h, 1));
        check(&engine, "colormap", u8img.clone(), 1.0);
        check(
            &engine,
            "colormap=rainbow:min=10:max=200:channels=4",
            u8img.clone(),
            1.0,
        );
        check(&engine, "colormap=map=gray:min=0:max=65535", u16img, 1.0);
        check(
            &engine,
            "convert=f32,colormap=turbo:min=0:max=1",
            f.clone(),
            1.0,
        );
        // Sigma above 3, as above: the colour map's steps would show the
        // recursion's 1e-3 against the host's exact FIR.
        check(
            &engine,
            "gaussian=sigma=4,colormap=turbo:min=-2:max=3",
            f,
            2.0,
        );
    }
    let e = pipeline::parse("colormap=jet").unwrap_err().to_string();
    assert!(e.contains("unknown colour map 'jet'"), "{e}");
    let e = pipeline::parse("colormap=min=5:max=5")
        .unwrap_err()
        .to_string();
    assert!(e.contains("stage 1 'colormap'"), "{e}");
    // Colour input is a typed error on both paths.
    let rgb = DynImage::U8(random_image::<u8>(&mut rng, 4, 4, 3));
    let ops = pipeline::parse("colormap").unwrap();
    assert!(run_outcomes(&engine, &ops, rgb).is_err());
}

#[test]
fn minmax_lines_and_convert_shorthand() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let img = Image::<u16>::from_fn(9, 7, 1, |x, y, _| (100 * x + y) as u16).unwrap();
    let ops = pipeline::parse("convert=u8,minmax").unwrap();
    assert_eq!(pipeline::to_spec(&ops), "convert=u8,minmax");
    let (out, _, lines) = pipeline::run(&engine, &ops, img.clone().into()).unwrap();
    assert_eq!(out.sample_type(), clfilter::SampleType::U8);
    // 806 * 255 / 65535 = 3.14: the device rounds it as the host does
    // before minmax reads it (tests/pipeline_quantize.rs has more).
    let (_, _, want) = pipeline::run(&Engine::cpu(), &ops, img.into()).unwrap();
    assert_eq!(lines, want);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].ends_with("0..3"), "{}", lines[0]);
    let e = pipeline::parse("convert=u9").unwrap_err().to_string();
    assert!(e.contains("not a sample type"), "{e}");
    let e = pipeline::parse("convert").unwrap_err().to_string();
    assert!(e.contains("convert needs an output type"), "{e}");
    let e = pipeline::parse("convert=u8:out=f32")
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
}

#[test]
fn a_stage_forced_to_the_cpu_runs_the_host_path() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mut rng = Rng::new(7);
    let f = DynImage::U8(bayer_u8(&mut rng, 34, 18));
    let ops = pipeline::parse("demosaic,gaussian=sigma=2:variant=cpu").unwrap();
    let (got, outcomes) = run_outcomes(&engine, &ops, f.clone()).unwrap();
    assert_eq!(outcomes[1].reports[0].variant, "cpu");
    let (want, _) = run_stages(&Engine::cpu(), &ops, f).unwrap();
    assert_eq!(got, want);
}

/// Collects every frame the stream hands over.
#[derive(Default)]
struct Collect(Vec<DynImage>, Vec<usize>);

impl FrameSink for Collect {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        self.1.push(f.index);
        self.0.push(f.to_image()?);
        Ok(())
    }
}

/// `n` random frames of `fmt`, each followed by `skip` trailer bytes, and
/// the frames as images.
fn frames(
    rng: &mut Rng,
    fmt: &RawFormat,
    w: usize,
    h: usize,
    n: usize,
    skip: usize,
) -> (Vec<u8>, Vec<DynImage>) {
    let mut bytes = Vec::new();
    let mut imgs = Vec::new();
    for _ in 0..n {
        let img: DynImage = if fmt.bits() == 8 {
            bayer_u8(rng, w, h).into()
        } else {
            bayer_u16(rng, w, h, fmt.bits()).into()
        };
        bytes.extend(encode(&img, fmt).unwrap());
        bytes.extend(std::iter::repeat_n(0xA5u8, skip));
        imgs.push(img);
    }
    (bytes, imgs)
}

fn stream_check(
    engine: &Engine,
    spec: &str,
    fmt: &str,
    (w, h): (usize, usize),
    n: usize,
    in_flight: usize,
    skip: usize,
) {
    let fmt: RawFormat = fmt.parse().unwrap();
    let mut rng = Rng::from_parts(&[w as u64, h as u64, n as u64, in_flight as u64]);
    let (bytes, imgs) = frames(&mut rng, &fmt, w, h, n, skip);
    let ops = pipeline::format::parse_with_format(spec, Some(&fmt)).unwrap();
    let mut opts = StreamOptions::new(w, h, fmt);
    opts.in_flight = in_flight;
    opts.skip = skip;
    let mut sink = Collect::default();
    let stats = run_stream(engine, &ops, &opts, Cursor::new(bytes), &mut sink).unwrap();
    assert_eq!(stats.frames, n);
    assert_eq!(sink.1, (0..n).collect::<Vec<_>>(), "frames out of order");
    assert_eq!(stats.overlapped, !matches!(engine.backend(), Backend::Cpu));
    for (i, (got, img)) in sink.0.iter().zip(imgs).enumerate() {
        let (want, _) = run_stages(&Engine::cpu(), &ops, img).unwrap();
        let diff = max_diff(got, &want);
        assert!(diff <= 2.0, "{spec} {fmt} frame {i}: differs by {diff}");
    }
}

#[test]
fn streams_match_per_frame_host_runs() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let spec = "demosaic=method=mhc,gaussian=sigma=2,convert=u8";
    for fmt in [
        "bayer_rggb8",
        "bayer_bggr12",
        "bayer_rggb12p",
        "bayer_grbg12packed",
        "bayer_gbrg16",
    ] {
        stream_check(&engine, spec, fmt, (34, 18), 5, 3, 0);
    }
    stream_check(&engine, spec, "bayer_rggb12p", (66, 38), 7, 2, 16);
    stream_check(
        &engine,
        "gaussian=sigma=1.5,convert=u8",
        "mono12p",
        (30, 20),
        4,
        3,
        0,
    );
    stream_check(&engine, "transpose", "mono16", (31, 7), 3, 4, 3);
    stream_check(&engine, "convert=u16", "mono8", (5, 3), 2, 2, 0);
    // The CPU engine runs the same streams on rayon.
    stream_check(&Engine::cpu(), spec, "bayer_rggb12p", (34, 18), 3, 3, 0);
}

#[cfg(feature = "opencl")]
#[test]
fn streams_allocate_nothing_after_the_first_frame() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let Backend::OpenCl(dev) = engine.backend() else {
        unreachable!()
    };
    let fmt: RawFormat = "bayer_rggb12p".parse().unwrap();
    let ops =
        pipeline::format::parse_with_format("demosaic,gaussian=sigma=2,convert=u8", Some(&fmt))
            .unwrap();
    let mut rng = Rng::new(3);
    let run = |n: usize, rng: &mut Rng| {
        let (bytes, _) = frames(rng, &fmt, 40, 20, n, 0);
        let before = dev.buffers_created();
        let mut opts = StreamOptions::new(40, 20, fmt);
        opts.in_flight = 2;
        run_stream(
            &engine,
            &ops,
            &opts,
            Cursor::new(bytes),
            &mut Collect::default(),
        )
        .unwrap();
        dev.buffers_created() - before
    };
    // Warm the pool with one stream, then compare a short and a long one:
    // the long one must not create more buffers.
    run(2, &mut rng);
    let short = run(2, &mut rng);
    let long = run(12, &mut rng);
    assert_eq!(short, long, "buffers created grow with the frame count");
}

#[test]
fn truncated_streams_hand_over_every_whole_frame_then_fail() {
    for engine in opencl_engine().into_iter().chain([Engine::cpu()]) {
        let fmt: RawFormat = "bayer_rggb8".parse().unwrap();
        let mut rng = Rng::new(11);
        let (mut bytes, _) = frames(&mut rng, &fmt, 8, 4, 3, 0);
        bytes.truncate(bytes.len() - 5);
        let ops = pipeline::format::parse_with_format("demosaic", Some(&fmt)).unwrap();
        let mut sink = Collect::default();
        let err = run_stream(
            &engine,
            &ops,
            &StreamOptions::new(8, 4, fmt),
            Cursor::new(bytes),
            &mut sink,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                Error::TruncatedFrame {
                    index: 2,
                    got: 27,
                    want: 32
                }
            ),
            "{err:?}"
        );
        assert_eq!(sink.1, vec![0, 1], "the whole frames before the cut");
    }
}

#[test]
fn stream_errors_are_typed() {
    let engine = Engine::cpu();
    let mono: RawFormat = "mono8".parse().unwrap();
    let ops = pipeline::parse("demosaic").unwrap();
    let e = run_stream(
        &engine,
        &ops,
        &StreamOptions::new(4, 4, mono),
        Cursor::new(vec![0u8; 16]),
        &mut Collect::default(),
    );
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
    let bayer: RawFormat = "bayer_rggb8".parse().unwrap();
    let e = run_stream(
        &engine,
        &[],
        &StreamOptions::new(5, 4, bayer),
        Cursor::new(vec![0u8; 20]),
        &mut Collect::default(),
    );
    assert!(e.is_err(), "odd Bayer width accepted");
    let mut o = StreamOptions::new(4, 4, bayer);
    o.in_flight = 1;
    assert!(run_stream(
        &engine,
        &[],
        &o,
        Cursor::new(vec![]),
        &mut Collect::default()
    )
    .is_err());
    // An empty input is zero frames, not an error.
    let s = run_stream(
        &engine,
        &[],
        &StreamOptions::new(4, 4, bayer),
        Cursor::new(vec![]),
        &mut Collect::default(),
    )
    .unwrap();
    assert_eq!(s.frames, 0);
}

#[test]
fn transfer_bound_runs_on_the_device() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let fmt: RawFormat = "bayer_rggb12p".parse().unwrap();
    let mut rng = Rng::new(5);
    let (bytes, _) = frames(&mut rng, &fmt, 64, 32, 4, 0);
    let ops = pipeline::format::parse_with_format("demosaic,convert=u8", Some(&fmt)).unwrap();
    let mut o = StreamOptions::new(64, 32, fmt);
    o.transfer_only = true;
    let mut sink = Collect::default();
    let s = run_stream(&engine, &ops, &o, Cursor::new(bytes), &mut sink).unwrap();
    assert_eq!((s.frames, sink.0.len()), (4, 0));
    assert_eq!((s.in_bytes, s.out_bytes), (64 * 32 * 3 / 2, 64 * 32 * 3));
    o.transfer_only = true;
    assert!(run_stream(
        &Engine::cpu(),
        &ops,
        &o,
        Cursor::new(vec![]),
        &mut Collect::default()
    )
    .is_err());
}

#[test]
fn synthetic_sources_run_without_input() {
    use clfilter::pipeline::stream::{run_source, Source};
    let fmt: RawFormat = "bayer_rggb12packed".parse().unwrap();
    let ops = pipeline::format::parse_with_format("demosaic,convert=u8", Some(&fmt)).unwrap();
    for engine in opencl_engine().into_iter().chain([Engine::cpu()]) {
        let mut sink = Collect::default();
        let src: Source<std::io::Empty> = Source::Synthetic { frames: 5 };
        let s = run_source(
            &engine,
            &ops,
            &StreamOptions::new(16, 8, fmt),
            src,
            &mut sink,
        )
        .unwrap();
        assert_eq!((s.frames, sink.1.len()), (5, 5));
        // Frames are random, not blank, and the first buffers differ.
        assert_ne!(sink.0[0], sink.0[1]);
    }
}

/// Fails on the frame given.
struct FailAt(usize);

impl FrameSink for FailAt {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        if f.index == self.0 {
            return Err(Error::InvalidInput("the sink is full".into()));
        }
        Ok(())
    }
}

#[test]
fn a_failing_sink_ends_the_stream_with_its_error() {
    use clfilter::pipeline::stream::{run_source, Source};
    let fmt: RawFormat = "bayer_rggb8".parse().unwrap();
    let ops = pipeline::format::parse_with_format("demosaic", Some(&fmt)).unwrap();
    for engine in opencl_engine().into_iter().chain([Engine::cpu()]) {
        let src: Source<std::io::Empty> = Source::Synthetic { frames: 50 };
        let e = run_source(
            &engine,
            &ops,
            &StreamOptions::new(16, 8, fmt),
            src,
            &mut FailAt(1),
        )
        .unwrap_err();
        assert!(e.to_string().contains("the sink is full"), "{e}");
    }
}
