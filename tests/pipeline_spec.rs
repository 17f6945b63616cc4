//! The spec compiler, the host path and raw-format adaptation, through the
//! public API with real operations: typed stages, canonical Display
//! round-trips, errors that list or suggest the known stages and options,
//! carets for hand-built stages, `parse_with_format`, and the stream error
//! for mono frames into a raw-reading stage. (The syntax alone
//! is tested in `src/pipeline/spec.rs` with neutral names.)

use clfilter::image::raw::RawFormat;
use clfilter::ops::demosaic::stage::DemosaicStage;
use clfilter::ops::gaussian::{Border, GaussianParams};
use clfilter::ops::minmax::stage::{format_minmax, MinMaxStage};
use clfilter::ops::minmax::MinMax;
use clfilter::ops::normalize::stage::NormalizeStage;
use clfilter::ops::normalize::NormalizeParams;
use clfilter::ops::transpose::stage::TransposeStage;
use clfilter::pipeline::stream::{run_stream, FrameSink, OutFrame, StreamOptions};
use clfilter::pipeline::{compile, output_type, parse, parse_with_format, run, to_spec, Op, Stage};
use clfilter::{DynImage, Engine, Error, Image, Result, SampleType};

fn err(spec: &str) -> String {
    match parse(spec).unwrap_err() {
        Error::Spec(m) => m,
        other => panic!("expected a spec error, got {other:?}"),
    }
}

fn first_line(spec: &str) -> String {
    err(spec).lines().next().unwrap().to_string()
}

#[test]
fn good_specs() {
    let ops = parse("transpose,minmax,normalize").unwrap();
    assert_eq!(ops[0], Op::new(TransposeStage));
    assert_eq!(ops[1], Op::new(MinMaxStage));
    assert_eq!(
        ops[2],
        Op::new(NormalizeStage {
            params: NormalizeParams::default(),
            out: None
        })
    );
    let ops = parse("normalize=sub=-1.5:factor=2e-3:out=f32:variant=x4").unwrap();
    assert_eq!(
        ops[0],
        Op {
            variant: Some("x4".into()),
            ..Op::new(NormalizeStage {
                params: NormalizeParams {
                    sub: Some(-1.5),
                    factor: Some(2e-3)
                },
                out: Some(SampleType::F32)
            })
        }
    );
    let ops = parse("transpose=variant=local_x4, minmax=variant=cpu").unwrap();
    assert_eq!(ops[0].variant.as_deref(), Some("local_x4"));
    assert_eq!(ops[1].variant.as_deref(), Some("cpu"));
}

#[test]
fn demosaic_stages() {
    let ops =
        parse("demosaic=pattern=grbg:method=edge:black=16:wb_r=2:channels=4:out=f32").unwrap();
    let Some(DemosaicStage { params: p, out }) = ops[0].params::<DemosaicStage>() else {
        panic!("not a demosaic stage: {:?}", ops[0])
    };
    assert_eq!((p.pattern.name(), p.method.name()), ("grbg", "edge"));
    assert_eq!(
        (p.black, p.gains, p.channels, *out),
        (16.0, [2.0, 1.0, 1.0], 4, Some(SampleType::F32))
    );
    assert_eq!(parse(&to_spec(&ops)).unwrap(), ops);
    assert_eq!(ops[0].output_type(SampleType::U8), SampleType::F32);
    for bad in [
        "demosaic=pattern=rgbg",
        "demosaic=method=vng",
        "demosaic=channels=2",
        "demosaic=bits=20",
    ] {
        assert!(matches!(parse(bad), Err(Error::Spec(_))), "{bad}");
    }
    // A 4x2 RGGB frame through the CPU engine.
    let img = Image::<u8>::from_vec(4, 2, 1, vec![10, 20, 10, 20, 20, 30, 20, 30]).unwrap();
    let (out, _, _) = run(
        &Engine::cpu(),
        &parse("demosaic").unwrap(),
        DynImage::U8(img),
    )
    .unwrap();
    assert_eq!(out.shape(), (4, 2, 3));
    let gray = Image::<f32>::new(4, 2, 1).unwrap();
    assert!(run(
        &Engine::cpu(),
        &parse("demosaic").unwrap(),
        DynImage::F32(gray)
    )
    .is_err());
}

#[test]
fn gaussian_stages() {
    let ops = parse("gaussian=sigma=2:sigma_y=5").unwrap();
    assert_eq!(
        ops[0].params::<GaussianParams>(),
        Some(&GaussianParams {
            sigma_x: 2.0,
            sigma_y: 5.0,
            border: Border::Replicate
        })
    );
    assert!(first_line("gaussian").contains("needs sigma"));
    assert!(first_line("gaussian=sigma_x=1").contains("needs sigma"));
    assert!(first_line("gaussian=sigma=-1").contains(">= 0"));
    assert!(first_line("gaussian=sigma=1e9").contains("exceeds"));
    assert!(first_line("gaussian=sigma=nan").contains("not a finite number"));
    assert!(first_line("gaussian=sigma=1:border=wrap").contains("replicate or mirror"));
    assert!(first_line("gaussian=sigma=1:variant=iir_blox").contains("iir_"));
}

#[test]
fn display_round_trips() {
    for spec in [
        "transpose",
        "minmax=variant=tree",
        "normalize=sub=1:factor=0.5:out=u16:variant=pixel",
        "normalize=out=f32,transpose,minmax",
        "gaussian=sigma=2",
        "gaussian=sigma_x=0.5:sigma_y=3:border=mirror:variant=fir_local",
    ] {
        let ops = parse(spec).unwrap();
        assert_eq!(to_spec(&ops), spec);
        assert_eq!(parse(&to_spec(&ops)).unwrap(), ops);
    }
}

#[test]
fn output_types_follow_the_stages() {
    let ops = parse("normalize=out=f32,transpose").unwrap();
    assert_eq!(output_type(&ops, SampleType::U8), SampleType::F32);
    let ops = parse("normalize,minmax").unwrap();
    assert_eq!(output_type(&ops, SampleType::U16), SampleType::U16);
    assert_eq!(output_type(&[], SampleType::U8), SampleType::U8);
}

#[test]
fn unknown_operations_get_a_suggestion() {
    assert_eq!(
        first_line("transpose,normlize"),
        "stage 2 'normlize': unknown operation (did you mean 'normalize'?)"
    );
    assert_eq!(
        first_line("Transpose"),
        "stage 1 'Transpose': unknown operation (did you mean 'transpose'?)"
    );
    assert_eq!(
        first_line("blur=sigma=2"),
        "stage 1 'blur': unknown operation (known: transpose, minmax, normalize, convert, gaussian, demosaic, colormap, median, bilateral, deband, reduce, stats, black, wb, ccm, gamma)"
    );
    // The caret is under the name.
    let m = err("transpose,normlize=out=u8");
    assert!(
        m.ends_with(&format!("\n    {}{}", " ".repeat(10), "^".repeat(8))),
        "{m}"
    );
}

#[test]
fn unknown_options() {
    assert_eq!(
        first_line("normalize=factr=2"),
        "stage 1 'normalize': option 'factr' unknown (known: sub, factor, low, high, out, variant); \
         did you mean 'factor'?"
    );
    assert_eq!(
        first_line("transpose=x=1"),
        "stage 1 'transpose': option 'x' unknown (known: variant)"
    );
}

#[test]
fn bad_values() {
    assert_eq!(
        first_line("normalize=factor=abc"),
        "stage 1 'normalize': factor=abc is not a number"
    );
    assert_eq!(
        first_line("minmax,normalize=sub=inf"),
        "stage 2 'normalize': sub=inf is not a finite number"
    );
    assert_eq!(
        first_line("normalize=factor=NaN"),
        "stage 1 'normalize': factor=NaN is not a finite number"
    );
    assert_eq!(
        first_line("normalize=out=u32"),
        "stage 1 'normalize': out=u32 is not a sample type (use u8, u16 or f32)"
    );
    assert_eq!(
        first_line("transpose=variant=locl"),
        "stage 1 'transpose': variant=locl unknown \
         (known: naive, local, local_diag, local_x4, cpu; did you mean 'local'?)"
    );
    assert!(first_line("minmax=variant=zzz").contains("known: tree, tree_vec4, cpu)"));
    // The caret is under the failing option.
    let m = err("normalize=out=u8:factor=abc");
    assert!(
        m.ends_with(&format!("\n    {}{}", " ".repeat(17), "^".repeat(10))),
        "{m}"
    );
}

#[test]
fn hand_built_stages_with_mismatched_spans_do_not_panic() {
    // More options than option spans, and spans past the spec's end or
    // inside a multi-byte character: errors point at the stage instead.
    let spec = "normalize=é";
    let stage = Stage {
        index: 1,
        name: "normalize".into(),
        options: vec![("factor".into(), "2".into()), ("bogus".into(), "1".into())],
        span: 0..spec.len(),
        name_span: 0..9,
        option_spans: vec![],
    };
    let m = err_of(compile(spec, std::slice::from_ref(&stage)));
    assert!(
        m.starts_with("stage 1 'normalize': option 'bogus' unknown"),
        "{m}"
    );
    assert!(m.ends_with(&format!("\n    {}", "^".repeat(11))), "{m}");

    let stage = Stage {
        options: vec![("factor".into(), "x".into())],
        span: 3..1000,
        name_span: std::ops::Range { start: 11, end: 10 },
        ..stage
    };
    let m = err_of(compile(spec, std::slice::from_ref(&stage)));
    assert!(
        m.starts_with("stage 1 'normalize': factor=x is not a number"),
        "{m}"
    );
    assert!(
        m.ends_with(&format!("\n    {}{}", " ".repeat(3), "^".repeat(8))),
        "{m}"
    );
    // Spans inside 'é' (bytes 10..12) and options that check fine.
    let stage = Stage {
        options: vec![("out".into(), "u8".into())],
        name_span: 11..11,
        option_spans: std::iter::once(11..12).collect(),
        ..stage
    };
    assert!(compile(spec, &[stage]).is_ok());
    let stage = Stage {
        index: 2,
        name: "normlize".into(),
        options: vec![],
        span: 11..11,
        name_span: 11..11,
        option_spans: vec![],
    };
    let m = err_of(compile(spec, &[stage]));
    assert!(m.ends_with("\n              ^"), "{m}");
}

fn err_of(r: Result<Vec<Op>>) -> String {
    match r.unwrap_err() {
        Error::Spec(m) => m,
        other => panic!("expected a spec error, got {other:?}"),
    }
}

#[test]
fn minmax_lines() {
    let mut m = MinMax::empty(3);
    m.min[..3].copy_from_slice(&[12.0, 3.0, 0.0]);
    m.max[..3].copy_from_slice(&[255.0, 250.0, 251.0]);
    assert_eq!(
        format_minmax(&m, SampleType::U8),
        "minmax: R 12..255, G 3..250, B 0..251"
    );
    let mut g = MinMax::empty(1);
    g.min[0] = 0.25;
    g.max[0] = 0.5;
    assert_eq!(format_minmax(&g, SampleType::F32), "minmax: 0.25..0.5");
    assert_eq!(
        format_minmax(&MinMax::empty(1), SampleType::F32),
        "minmax: (no numbers)"
    );
}

#[test]
fn runs_on_the_cpu_engine() {
    let img = Image::<u8>::from_fn(3, 2, 1, |x, y, _| (10 * (x + 3 * y)) as u8).unwrap();
    let ops = parse("minmax,normalize=out=f32,transpose,normalize=out=u8").unwrap();
    let (out, reports, lines) = run(&Engine::cpu(), &ops, img.clone().into()).unwrap();
    assert_eq!(lines, vec!["minmax: 0..50".to_string()]);
    // minmax, (minmax + normalize), transpose, (minmax + normalize)
    let names: Vec<&str> = reports.iter().map(|r| r.op).collect();
    assert_eq!(
        names,
        [
            "minmax",
            "minmax",
            "normalize",
            "transpose",
            "minmax",
            "normalize"
        ]
    );
    assert!(reports.iter().all(|r| r.variant == "cpu"));
    let DynImage::U8(out) = out else {
        panic!("expected u8")
    };
    assert_eq!((out.width(), out.height()), (2, 3));
    assert_eq!(out.get(0, 0, 0), 0);
    assert_eq!(out.get(1, 2, 0), 255);
    // Transposing twice gives the input back.
    let ops = parse("transpose,transpose=variant=cpu").unwrap();
    let (back, _, _) = run(&Engine::cpu(), &ops, img.clone().into()).unwrap();
    assert_eq!(back, DynImage::U8(img));
}

// ---------------------------------------------------------------- raw formats

fn fmt(s: &str) -> RawFormat {
    s.parse().unwrap()
}

fn spec_err(r: Result<Vec<Op>>) -> String {
    match r {
        Err(Error::Spec(m)) => m,
        other => panic!("expected a spec error, got {other:?}"),
    }
}

#[test]
fn transposes_swap_the_pattern() {
    let f = fmt("bayer_grbg8");
    let ops = parse_with_format("transpose,demosaic", Some(&f)).unwrap();
    assert_eq!(ops[1].to_string(), "demosaic=pattern=gbrg:method=mhc");
    let m = spec_err(parse_with_format(
        "transpose,demosaic=pattern=grbg",
        Some(&f),
    ));
    assert!(
        m.contains("frames become gbrg after the transpose in stage 1"),
        "{m}"
    );
    // The pattern's own transposition: `ops::demosaic::stage`'s tests.
}

#[test]
fn normalize_before_demosaic_keeps_the_default_white_level() {
    let f = fmt("bayer_rggb12");
    let ops = parse_with_format("normalize=factor=16,demosaic", Some(&f)).unwrap();
    assert_eq!(ops[1].to_string(), "demosaic=pattern=rggb:method=mhc");
}

/// A stream of mono frames into a stage that reads raw frames is an error
/// that names the format and the stage.
#[test]
fn mono_streams_name_the_raw_stage() {
    struct Discard;
    impl FrameSink for Discard {
        fn frame(&mut self, _: &OutFrame<'_>) -> Result<()> {
            Ok(())
        }
    }
    let ops = parse("transpose,demosaic").unwrap();
    let e = run_stream(
        &Engine::cpu(),
        &ops,
        &StreamOptions::new(4, 4, fmt("mono8")),
        std::io::Cursor::new(vec![0u8; 16]),
        &mut Discard,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("format mono8 is mono: its frames have no colour filter array to demosaic"),
        "{e}"
    );
}
