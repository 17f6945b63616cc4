//! `filterctl demo`: the main operations on the built-in photo (or `--input`),
//! with the device, variant and time of every stage, and a round-trip check.
//!
//! The demo is a table of [`Step`]s, each a pipeline spec run on the photo or
//! on an earlier step's result. A new operation joins the demo with one more
//! entry in [`STEPS`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use clfilter::{pipeline, DynImage, Engine};

use crate::error::CliError;
use crate::util::{describe, difference, file_name_for, ms, report_line, short_backend};
use crate::Global;

mod input;

use input::demo_input;

/// The built-in photo: 600x400 RGB, 8 bits (CC0).
const PHOTO: &[u8] = include_bytes!("../../../../examples/data/coffee.png");

/// Options of `filterctl demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder for the results (created if missing).
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "DIR",
        default_value = "filterctl-demo"
    )]
    out: PathBuf,

    /// Use this image instead of the built-in photo.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
}

/// What a step checks about its result.
enum Check {
    /// The result must equal this earlier image, sample for sample.
    Equals(&'static str),
    /// PSNR against this earlier 8-bit RGB image (10-pixel border left
    /// out): printed, and on the built-in photo a failure below `min` dB
    /// (the floor is that photo's; another photo's detail sets its own).
    Psnr(&'static str, f64),
}

/// How a step makes its result.
enum Make {
    /// A pipeline spec (chained on the device when there is one).
    Spec(&'static str),
    /// Samples the image (8- or 16-bit RGB) through an RGGB colour filter
    /// array, as a camera sensor sees it (the demosaic steps' input).
    Mosaic,
    /// Sets one sample in 400 to full scale, as a sensor's hot pixels
    /// (the median step's input).
    HotPixels,
    /// Counts the image's histogram (the type's default bins) and draws it
    /// into `<name>.png` (with the `plot` feature); the image passes on.
    HistogramPlot,
}

/// One demo step: a spec run on `from` (`input` or an earlier step's name).
struct Step {
    /// The result's name (and file name without extension).
    name: &'static str,
    /// What it shows.
    about: &'static str,
    /// The image it starts from.
    from: &'static str,
    /// What it runs.
    make: Make,
    /// Whether to write the result (`name.png`, `name.tif` for f32).
    save: bool,
    /// A check on the result.
    check: Option<Check>,
}

/// The demo: each operation, then the camera pipeline. The PSNR floors are
/// those `tests/demosaic.rs` enforces on this photo (docs/QUALITY.md).
const STEPS: &[Step] = &[
    Step {
        name: "blurred",
        about: "Gaussian blur, sigma 2 (recursive, exact replicate borders)",
        from: "input",
        make: Make::Spec("gaussian=sigma=2"),
        save: true,
        check: None,
    },
    Step {
        name: "blurred-heavy",
        about: "Gaussian blur, sigma 16: same cost as sigma 2",
        from: "input",
        make: Make::Spec("gaussian=sigma=16"),
        save: true,
        check: None,
    },
    Step {
        name: "minmax",
        about: "per-channel range of the photo",
        from: "input",
        make: Make::Spec("minmax"),
        save: false,
        check: None,
    },
    Step {
        name: "stats",
        about: "per-channel sum, mean, std, min and max in one fused pass",
        from: "input",
        make: Make::Spec("stats"),
        save: false,
        check: None,
    },
    Step {
        name: "histogram",
        about: "per-channel histogram of the photo, drawn as a chart",
        from: "input",
        make: Make::HistogramPlot,
        save: false,
        check: None,
    },
    Step {
        name: "normalized-percentiles",
        about: "stretch the 1st..99th percentiles (found through the histogram) to 0..255",
        from: "input",
        make: Make::Spec("normalize=low=1%:high=99%"),
        save: true,
        check: None,
    },
    Step {
        name: "normalized-f32",
        about: "stretch min..max to 0..1 as f32",
        from: "input",
        make: Make::Spec("normalize=out=f32"),
        save: true,
        check: None,
    },
    Step {
        name: "normalized",
        about: "and back to u8, stretched to 0..255",
        from: "normalized-f32",
        make: Make::Spec("normalize=out=u8"),
        save: true,
        check: None,
    },
    Step {
        name: "bilateral",
        about: "bilateral filter, sigma_s 3, sigma_r 0.1: flat areas smoothed, edges kept",
        from: "input",
        make: Make::Spec("bilateral=sigma_s=3:sigma_r=0.1"),
        save: true,
        check: Some(Check::Psnr("input", 34.5)),
    },
    Step {
        name: "transposed",
        about: "rows and columns swapped",
        from: "input",
        make: Make::Spec("transpose"),
        save: true,
        check: None,
    },
    Step {
        name: "transposed-back",
        about: "transposed again: must equal the input",
        from: "transposed",
        make: Make::Spec("transpose"),
        save: false,
        check: Some(Check::Equals("input")),
    },
    Step {
        name: "bayer",
        about: "the photo as an RGGB sensor sees it (one colour per pixel)",
        from: "input",
        make: Make::Mosaic,
        save: true,
        check: None,
    },
    Step {
        name: "demosaic-bilinear",
        about: "Bayer to RGB, bilinear",
        from: "bayer",
        make: Make::Spec("demosaic=method=bilinear"),
        save: true,
        check: Some(Check::Psnr("input", 29.2)),
    },
    Step {
        name: "demosaic-mhc",
        about: "Bayer to RGB, Malvar-He-Cutler",
        from: "bayer",
        make: Make::Spec("demosaic=method=mhc"),
        save: true,
        check: Some(Check::Psnr("input", 32.9)),
    },
    Step {
        name: "demosaic-edge",
        about: "Bayer to RGB, edge-directed",
        from: "bayer",
        make: Make::Spec("demosaic=method=edge"),
        save: true,
        check: Some(Check::Psnr("input", 34.1)),
    },
    Step {
        name: "hot-pixels",
        about: "the photo with synthetic hot pixels (one sample in 400 at 255)",
        from: "input",
        make: Make::HotPixels,
        save: true,
        check: None,
    },
    Step {
        name: "median",
        about: "3x3 median (19-exchange network): the hot pixels are gone",
        from: "hot-pixels",
        make: Make::Spec("median=radius=1"),
        save: true,
        check: Some(Check::Psnr("input", 29.0)),
    },
    Step {
        name: "heatmap",
        about: "the raw sensor data as a mono image, blurred, through the Turbo colour map",
        from: "bayer",
        make: Make::Spec("gaussian=sigma=3,colormap=map=turbo"),
        save: true,
        check: None,
    },
    Step {
        name: "debanded",
        about: "banding reduction (f3kdb): flat areas averaged, 1 level of grain; detail kept",
        from: "input",
        make: Make::Spec("deband=range=15:threshold=4:grain=1:seed=1"),
        save: true,
        check: Some(Check::Psnr("input", 42.0)),
    },
    Step {
        name: "debanded-ycc",
        about: "the same in 16-bit YCbCr (the seed's PIXEL_YC), same seed",
        from: "input",
        make: Make::Spec("deband=range=15:threshold=4:grain=1:seed=1:space=ycc"),
        save: true,
        check: Some(Check::Psnr("input", 42.0)),
    },
    Step {
        name: "debanded-again",
        about: "the first deband again: the same seed gives the same bytes",
        from: "input",
        make: Make::Spec("deband=range=15:threshold=4:grain=1:seed=1"),
        save: false,
        check: Some(Check::Equals("debanded")),
    },
    Step {
        name: "camera",
        about: "the camera pipeline: Bayer -> RGB -> blur -> 8-bit, one upload and one download",
        from: "bayer",
        make: Make::Spec("demosaic=method=mhc:out=f32,gaussian=sigma=2,convert=u8"),
        save: true,
        check: None,
    },
    Step {
        name: "camera-bilateral",
        about: "Bayer -> RGB -> edge-preserving denoise (bilateral, fast) -> 8-bit, on the device",
        from: "bayer",
        make: Make::Spec(
            "demosaic=method=mhc:out=f32,bilateral=sigma_s=2:sigma_r=0.08:precision=fast,convert=u8",
        ),
        save: true,
        check: Some(Check::Psnr("input", 33.0)),
    },
    Step {
        name: "sensor",
        about: "the photo as linear light on a 12-bit sensor: sRGB undone (power 2.2), \
                colours mixed (overlapping filters), a green-heavy cast, black level 64",
        from: "input",
        make: Make::Spec(SENSOR),
        save: false,
        check: None,
    },
    Step {
        name: "sensor-bayer",
        about: "the 12-bit sensor's RGGB mosaic (in 16-bit containers)",
        from: "sensor",
        make: Make::Mosaic,
        save: false,
        check: None,
    },
    Step {
        name: "sensor-black",
        about: "raw -> black level: 64..4095 stretched to the 16-bit range (before the demosaic, \
                which must start a device chain)",
        from: "sensor-bayer",
        make: Make::Spec("black=64:white=4095"),
        save: false,
        check: None,
    },
    Step {
        name: "camera-colour",
        about: "-> demosaic -> white balance -> colour matrix -> sRGB -> 8-bit, on the device",
        from: "sensor-black",
        make: Make::Spec(CAMERA_COLOUR),
        save: true,
        check: Some(Check::Psnr("input", 27.5)),
    },
];

/// The sensor step: the inverse of [`CAMERA_COLOUR`]'s matrix and gains;
/// 0..65535 becomes 64..4095 (`(in + 1040.5) * 4031 / 65535`).
const SENSOR: &str = "convert=u16,gamma=0.4545,\
    ccm=m=0.913043/0.0434783/0.0434783/0.0434783/0.913043/0.0434783/0.0434783/0.0434783/0.913043,\
    wb=r=0.5:b=0.7,normalize=sub=-1040.5:factor=0.061509:out=u16";

/// The camera-colour step (after the black level): gains that undo the
/// sensor step's cast, a mild saturation matrix (rows
/// sum to 1, so gray stays gray) that undoes the sensor's mixing, and the
/// sRGB curve. The result is the photo again, within the demosaic's and
/// the curves' differences (its PSNR floor).
const CAMERA_COLOUR: &str = "demosaic=method=mhc:out=f32,wb=r=2:b=1.4286,\
    ccm=m=1.1/-0.05/-0.05/-0.05/1.1/-0.05/-0.05/-0.05/1.1,gamma=srgb,convert=u8";

fn save(img: &DynImage, dir: &std::path::Path, stem: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(file_name_for(stem, img.sample_type()));
    clfilter::image::save(img, &path)?;
    Ok(path)
}

/// Runs `filterctl demo`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let start = Instant::now();
    let (input, source) = demo_input(&args)?;
    let engine = global.engine()?;
    let full = engine.backend().describe();
    let short = format!("[{}]", short_backend(&engine));
    out!("filterctl demo: {source}, {}", describe(&input))?;
    out!("backend {short}: {full}")?;
    let path = save(&input, &args.out, "input")?;
    out!("wrote {}", path.display())?;

    let mut images: HashMap<&str, DynImage> = HashMap::new();
    images.insert("input", input);
    let mut failed = Vec::new();
    for (i, step) in STEPS.iter().enumerate() {
        let from = images.get(step.from).cloned().ok_or_else(|| {
            CliError::Failed(format!(
                "demo step {} reads '{}', which no earlier step made",
                step.name, step.from
            ))
        })?;
        out!(
            "[{}/{}] {}: {} ({} on {})",
            i + 1,
            STEPS.len(),
            step.name,
            step.about,
            match step.make {
                Make::Spec(spec) => format!("spec '{spec}'"),
                Make::Mosaic => "RGGB mosaic".into(),
                Make::HotPixels => "hot pixels".into(),
                Make::HistogramPlot => "histogram, plotted".into(),
            },
            step.from
        )?;
        let result = run_step(&engine, step, from, (&full, &short), &args.out)?;
        if step.save {
            let path = save(&result, &args.out, step.name)?;
            out!("      wrote {} ({})", path.display(), describe(&result))?;
        }
        if let Some(f) = check_step(step, &result, &images, args.input.is_none())? {
            failed.push(f);
        }
        images.insert(step.name, result);
    }
    if let Some(stats) = crate::util::build_stats(&engine) {
        out!("{stats}")?;
    }
    out!(
        "done in {} (outputs in {})",
        ms(start.elapsed()),
        args.out.display()
    )?;
    if !failed.is_empty() {
        return Err(CliError::Failed(format!(
            "demo check failed: {}",
            failed.join("; ")
        )));
    }
    Ok(())
}

/// Runs one step on `from` and prints what ran.
fn run_step(
    engine: &clfilter::Engine,
    step: &Step,
    from: DynImage,
    (full, short): (&str, &str),
    dir: &std::path::Path,
) -> Result<DynImage, CliError> {
    let context =
        |e: clfilter::Error| CliError::from(e).context(format!("demo step {}", step.name));
    let (result, outcomes) = match step.make {
        Make::Spec(spec) => {
            pipeline::run_outcomes(engine, &pipeline::parse(spec)?, from).map_err(context)?
        }
        Make::Mosaic => {
            let rggb = clfilter::ops::demosaic::Pattern::Rggb;
            let cfa: DynImage = match &from {
                DynImage::U8(rgb) => clfilter::ops::demosaic::mosaic(rgb, rggb)
                    .map_err(context)?
                    .into(),
                DynImage::U16(rgb) => clfilter::ops::demosaic::mosaic(rgb, rggb)
                    .map_err(context)?
                    .into(),
                DynImage::F32(_) => {
                    return Err(CliError::Failed("the demo mosaics 8- or 16-bit RGB".into()))
                }
            };
            (cfa, Vec::new())
        }
        Make::HotPixels => {
            let DynImage::U8(mut img) = from else {
                return Err(CliError::Failed("the demo's hot pixels are 8-bit".into()));
            };
            let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
            for y in 0..img.height() {
                for v in img.row_mut(y) {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    if s.is_multiple_of(400) {
                        *v = 255;
                    }
                }
            }
            (img.into(), Vec::new())
        }
        Make::HistogramPlot => {
            plot_histogram(engine, step, &from, dir, (full, short))?;
            (from, Vec::new())
        }
    };
    for (k, o) in outcomes.iter().enumerate() {
        for r in &o.reports {
            // Every step here is one stage, so the stage number is left out.
            let stage = (outcomes.len() > 1).then_some(k + 1);
            out!(
                "      {}",
                report_line(stage, o.op.name(), r, Some((full, short)))
            )?;
        }
        for line in &o.lines {
            out!("      {line}")?;
        }
    }
    Ok(result)
}

/// Counts `img`'s histogram and writes `<step>.png` (a chart) into `dir`.
fn plot_histogram(
    engine: &Engine,
    step: &Step,
    img: &DynImage,
    dir: &std::path::Path,
    (full, short): (&str, &str),
) -> Result<(), CliError> {
    use clfilter::ops::histogram::{HistogramExt, HistogramParams};
    let p = HistogramParams::default_for(img.sample_type());
    let (h, r) = match img {
        DynImage::U8(i) => engine.histogram_report(i, &p)?,
        DynImage::U16(i) => engine.histogram_report(i, &p)?,
        DynImage::F32(i) => engine.histogram_report(i, &p)?,
    };
    out!(
        "      {}",
        report_line(None, "histogram", &r, Some((full, short)))
    )?;
    #[cfg(feature = "plot")]
    {
        let path = dir.join(format!("{}.png", step.name));
        let to = (path.as_path(), clfilter::image::OutputFormat::Png);
        crate::plot::histogram_png(&h, &p, "the demo input", to)?;
        out!(
            "      wrote {} ({} bins per channel)",
            path.display(),
            h.bins
        )?;
    }
    #[cfg(not(feature = "plot"))]
    {
        let _ = (dir, h);
        out!(
            "      {}: no chart (filterctl was built without the `plot` feature)",
            step.name
        )?;
    }
    Ok(())
}

/// Runs a step's check, printing the verdict; `Some(why)` when it failed.
fn check_step(
    step: &Step,
    result: &DynImage,
    images: &HashMap<&str, DynImage>,
    floors: bool,
) -> Result<Option<String>, CliError> {
    match &step.check {
        Some(Check::Equals(other)) => match difference(result, &images[other]) {
            None => {
                out!(
                    "      check: {} == {}: ok ({})",
                    step.name,
                    other,
                    describe(result)
                )?;
                Ok(None)
            }
            Some(d) => {
                out!("      check: {} == {}: FAILED: {d}", step.name, other)?;
                Ok(Some(format!("{} differs from {other}: {d}", step.name)))
            }
        },
        Some(Check::Psnr(other, min)) => {
            let min = *min;
            let psnr = match (result, &images[other]) {
                (DynImage::U8(got), DynImage::U8(want)) if got.channels() == 3 => {
                    clfilter::ops::demosaic::psnr(got, want, 10).map_err(|e| {
                        CliError::from(e).context(format!("demo step {}", step.name))
                    })?
                }
                _ => {
                    return Err(CliError::Failed(format!(
                        "demo step {}: PSNR compares 8-bit RGB images",
                        step.name
                    )))
                }
            };
            if !floors {
                out!("      PSNR against {other}: {psnr:.2} dB (the floor of {min} dB holds for the built-in photo)")?;
                Ok(None)
            } else if psnr >= min {
                out!("      PSNR against {other}: {psnr:.2} dB (floor {min} dB)")?;
                Ok(None)
            } else {
                out!("      PSNR against {other}: {psnr:.2} dB: FAILED, below {min} dB")?;
                Ok(Some(format!("{} PSNR {psnr:.2} dB < {min} dB", step.name)))
            }
        }
        None => Ok(None),
    }
}
