//! `filterctl tune`: measure every variant per key and cache the result
//! (see `clfilter::tune` and docs/TUNING.md); `--show` prints the cache,
//! `--clear` deletes it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clfilter::pipeline::{self, Op};
use clfilter::tune::{store, Formats, KeyResult, Progress, TuneConfig, TuneEntry, TuneReport};
use clfilter::{CacheDir, DynImage, Engine, RawFormat, SampleType};
use serde::Serialize;

use crate::bench::parse_channels;
use crate::error::CliError;
use crate::frames::{camera_wb, check_image_format, read_dng, read_frame, FrameSpec};
use crate::util::{parse_format, parse_sample, parse_size};
use crate::Global;

mod report;

use report::{entry_table, summary};

/// Options of `filterctl tune`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Operations to tune, comma-separated (default: all).
    #[arg(long, value_name = "OP,...", value_delimiter = ',')]
    ops: Vec<String>,

    /// Image sizes, comma-separated; each becomes one key per operation
    /// (sizes in the same power-of-two bucket are measured once).
    #[arg(
        long,
        value_name = "WxH,...",
        value_delimiter = ',',
        default_value = "640x480,1920x1080,3840x2160",
        value_parser = parse_size
    )]
    sizes: Vec<(usize, usize)>,

    /// Sample type (with --channels, default 1): tune this format alone.
    /// Without both, every operation is tuned on gray, RGB and RGBA of u8,
    /// u16 and f32 (each on those it reads): the keys apply, stream and
    /// view look up for common inputs.
    #[arg(long = "type", value_name = "u8|u16|f32", value_parser = parse_sample)]
    sample: Option<SampleType>,

    /// Channels per pixel (with --type, default f32): tune this format alone.
    #[arg(long, value_name = "1|3|4", value_parser = parse_channels)]
    channels: Option<usize>,

    /// Gaussian sigmas (both axes), comma-separated; one key each.
    #[arg(long, value_name = "S,...", value_delimiter = ',', default_value = "2")]
    sigma: Vec<f32>,

    /// Seconds to spend in all (a target: every candidate gets a few runs).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_budget)]
    budget: f64,

    /// Tune exactly what `filterctl apply -f SPEC IN` runs: the input's
    /// size, type and channels, each stage's operation and parameters, as
    /// a device-resident chain and as host calls (`-`: an image on stdin).
    #[arg(
        long = "for",
        value_name = "IN",
        requires = "spec",
        conflicts_with_all = ["ops", "sizes", "sample", "channels", "sigma", "show", "clear"]
    )]
    for_input: Option<PathBuf>,

    /// The pipeline of --for, as `apply -f` takes it.
    #[arg(
        short = 'f',
        long = "filter",
        value_name = "SPEC",
        requires = "for_input"
    )]
    spec: Option<String>,

    /// With --for and --format: IN is one headerless raw frame of WxH
    /// pixels, as `apply --size` reads it.
    #[arg(long, value_name = "WxH", value_parser = parse_size, requires_all = ["format", "for_input"])]
    size: Option<(usize, usize)>,

    /// With --for: the camera format, as `apply --format` takes it.
    #[arg(long, value_name = "FMT", value_parser = parse_format, requires = "for_input")]
    format: Option<RawFormat>,

    /// Measure again keys that the cache already holds.
    #[arg(long, conflicts_with_all = ["show", "clear"])]
    force: bool,

    /// Print JSON on stdout instead of the summary (every candidate's
    /// figures; -v prints them as tables).
    #[arg(long, conflicts_with = "clear")]
    json: bool,

    /// Print what the cache holds (entries for this device and these
    /// kernels are `current`), and measure nothing.
    #[arg(long, conflicts_with = "clear")]
    show: bool,

    /// Delete the tuning cache.
    #[arg(long)]
    clear: bool,
}

fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "budget '{s}': give a number of seconds above 0 (at most a day)"
        )),
    }
}

/// How a cached entry relates to this engine.
#[derive(Serialize)]
struct ShownEntry {
    /// `current`, `stale` (kernels or variants changed) or `other device`
    /// (every entry, on the CPU backend).
    status: &'static str,
    #[serde(flatten)]
    entry: TuneEntry,
}

fn show(global: &Global, json: bool) -> Result<(), CliError> {
    // The engine's cache folder is `CacheDir::Default` (see `Global::engine`).
    let Some(dir) = CacheDir::Default.resolve() else {
        return Err(CliError::Failed(
            "disk caching is off (FILTERCTL_CACHE_DIR=disabled or no home folder): no tuning cache"
                .into(),
        ));
    };
    let path = &store::path_in(&dir);
    let engine = global.measuring_engine()?;
    let tuning = engine.tuning();
    let file = store::load(path);
    let shown: Vec<ShownEntry> = file
        .entries
        .into_iter()
        .map(|entry| {
            let status = if Some(entry.key.device.as_str()) != tuning.fingerprint() {
                "other device"
            } else if tuning.checksum(&entry.key.op) == Some(entry.checksum.as_str()) {
                "current"
            } else {
                "stale"
            };
            ShownEntry { status, entry }
        })
        .collect();
    if json {
        out!("{}", serde_json::to_string_pretty(&shown)?)?;
        return Ok(());
    }
    out!("tuning cache: {} ({} entries)", path.display(), shown.len())?;
    out!(
        "this device: {}",
        tuning.fingerprint().unwrap_or("- (CPU backend)")
    )?;
    out!("")?;
    for s in &shown {
        let how = if s.status == "other device" {
            format!("other device: {}", s.entry.key.device)
        } else {
            s.status.to_string()
        };
        entry_table(&s.entry, &how, None)?;
    }
    Ok(())
}

fn clear() -> Result<(), CliError> {
    let Some(dir) = CacheDir::Default.resolve() else {
        out!("disk caching is off: no tuning cache to clear")?;
        return Ok(());
    };
    let path = store::path_in(&dir);
    match store::clear(&path) {
        Ok(true) => out!("removed {}", path.display()),
        Ok(false) => out!("no tuning cache at {}", path.display()),
        Err(source) => Err(CliError::Io { path, source }),
    }
}

/// The input of `--for`: an image file, or a raw frame with `--size`.
enum ForInput {
    Image(DynImage),
    Frame(clfilter::image::raw::RawImage),
}

/// Loads `--for IN` and parses `-f SPEC` for it, as `apply` does.
fn load_for(args: &Args, path: &std::path::Path) -> Result<(ForInput, Vec<Op>), CliError> {
    let spec = args.spec.as_deref().unwrap_or_default();
    let in_file = |e: CliError| e.context(path.display().to_string());
    if let (Some((width, height)), Some(format)) = (args.size, args.format) {
        if crate::batch::is_stdio(path) {
            return Err(CliError::usage(
                "tune --for - reads an image from stdin; give a raw frame as a file",
            ));
        }
        let f = FrameSpec {
            width,
            height,
            format,
            bytes: format.frame_bytes(width, height)?,
        };
        let frame = read_frame(path, &f).map_err(in_file)?;
        let ops = pipeline::parse_with_format(spec, Some(&format))?;
        return Ok((ForInput::Frame(frame), ops));
    }
    // A DNG file is the leveled raw frame `apply` reads from it, with its
    // white balance for `wb=camera`.
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if regular && !crate::batch::is_stdio(path) && clfilter::image::dng::is_dng(path)? {
        if let Some(f) = args.format {
            return Err(CliError::usage(format!(
                "{}: a DNG file carries its own pattern and levels; leave out --format {f}",
                path.display()
            )));
        }
        let dng = read_dng(path, &clfilter::image::DecodeLimits::from_env()?)?;
        let spec = camera_wb(spec, dng.gains).map_err(in_file)?;
        let ops = pipeline::parse_with_format(&spec, Some(&dng.format))?;
        return Ok((ForInput::Frame(dng.raw), ops));
    }
    // `-` is stdin, within FILTERCTL_DECODE_LIMIT, as every image input.
    let img = crate::batch::load_one(path)?;
    let format = match args.format {
        Some(fmt) => Some(check_image_format(path, &img, fmt).map_err(in_file)?),
        None => None,
    };
    let ops = pipeline::parse_with_format(spec, format.as_ref())?;
    Ok((ForInput::Image(img), ops))
}

/// The progress bar on stderr: the bar fills the terminal's width, with
/// the count and the ETA, and the step under it. Hidden when stderr is not
/// a terminal (indicatif draws nothing there), so logs and pipes get no
/// bar lines.
fn progress_bar() -> indicatif::ProgressBar {
    let pb =
        indicatif::ProgressBar::with_draw_target(Some(0), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{wide_bar}] {pos}/{len} ETA {eta}\n  {wide_msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

/// Runs the tuner with the progress bar.
fn with_progress(
    run: impl FnOnce(&mut dyn FnMut(&Progress<'_>)) -> clfilter::Result<TuneReport>,
) -> Result<TuneReport, CliError> {
    let pb = progress_bar();
    let report = run(&mut |p| {
        pb.set_length(p.total as u64);
        pb.set_position(p.done as u64);
        pb.set_message(p.message.to_string());
    });
    pb.finish_and_clear();
    Ok(report?)
}

/// The tuner's run: exactly the requests of `--for`, else the keys of the
/// options.
fn measure(engine: &Engine, args: &Args) -> Result<TuneReport, CliError> {
    let budget = Duration::from_secs_f64(args.budget);
    if let Some(path) = &args.for_input {
        let (input, ops) = load_for(args, path)?;
        let input = match &input {
            ForInput::Image(i) => pipeline::Input::Image(i),
            ForInput::Frame(f) => pipeline::Input::Frame(f),
        };
        let requests = clfilter::tune::requests_for(engine, &ops, input).map_err(|e| {
            CliError::from(e)
                .context(format!("pipeline '{}'", pipeline::to_spec(&ops)))
                .context(crate::batch::input_name(path))
        })?;
        log::info!(
            "--for {}: {} requests to tune: {}",
            path.display(),
            requests.len(),
            requests
                .iter()
                .map(|r| format!("{} {}x{}", r.op.name, r.shape.sample, r.shape.channels))
                .collect::<Vec<_>>()
                .join(", ")
        );
        return with_progress(|p| {
            clfilter::tune::tune_requests(engine, &requests, budget, args.force, p)
        });
    }
    let formats = match (args.sample, args.channels) {
        (None, None) => Formats::Common,
        (s, c) => Formats::Only(s.unwrap_or(SampleType::F32), c.unwrap_or(1)),
    };
    let cfg = TuneConfig {
        ops: crate::util::op_names(&args.ops)?,
        sizes: args.sizes.clone(),
        formats,
        sigmas: args.sigma.clone(),
        budget,
        force: args.force,
    };
    with_progress(|p| clfilter::tune::tune(engine, &cfg, p))
}

/// `e`, a failed tuning run; where the engine fell back to the CPU
/// backend because `auto` found no usable OpenCL device, with that
/// device's error appended (as `-v` would log it).
fn with_reason(global: &Global, engine: &Engine, e: CliError) -> CliError {
    match (e, engine.backend().device()) {
        (CliError::Engine(clfilter::Error::InvalidArgument(m)), None) => {
            match global.no_opencl_reason() {
                Some(why) => CliError::Engine(clfilter::Error::InvalidArgument(format!(
                    "{m}; no OpenCL device was usable: {why}"
                ))),
                None => CliError::Engine(clfilter::Error::InvalidArgument(m)),
            }
        }
        (e, _) => e,
    }
}

/// Runs `filterctl tune`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    if args.clear {
        return clear();
    }
    if args.show {
        return show(global, args.json);
    }
    // Checked before any measuring: a sigma that no key can take would
    // otherwise leave every Gaussian key untuned, with a warning each.
    crate::util::op_names(&args.ops)?;
    for &sigma in &args.sigma {
        clfilter::ops::gaussian::GaussianParams::new(sigma).validate()?;
        if sigma <= 0.0 {
            return Err(CliError::usage(
                "--sigma 0: gaussian is timed and tuned at a sigma above 0 (sigma 0 is a copy)",
            ));
        }
    }
    let engine = global.measuring_engine()?;
    if !std::io::stderr().is_terminal() {
        log::info!(
            "tuning on {} (no progress bar: stderr is not a terminal)",
            engine.backend().describe()
        );
    }
    let report = measure(&engine, &args).map_err(|e| with_reason(global, &engine, e))?;
    if report.keys.is_empty() && args.for_input.is_none() {
        // Every key of the options was refused (the warnings above say
        // why, such as an odd size for demosaic): nothing was measured,
        // which exit 0 would hide from a script. (`--for` may rightly find
        // nothing to tune: a pipeline that dispatches no kernel.)
        return Err(CliError::usage(
            "nothing was tuned: no key of these operations, sizes and formats could be \
             measured (the warnings above say why)",
        ));
    }
    if args.json {
        out!("{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(());
    }
    out!("device: {}", report.device)?;
    out!(
        "cache: {}",
        report
            .file
            .as_ref()
            .map_or("off (results kept in memory only)".into(), |p| p
                .display()
                .to_string())
    )?;
    out!("")?;
    if global.verbose > 0 {
        for KeyResult {
            cached,
            entry,
            dispatch,
        } in &report.keys
        {
            entry_table(
                entry,
                if *cached { "cached" } else { "measured" },
                dispatch.as_ref(),
            )?;
        }
    }
    summary(&report.keys)?;
    let cached = report.keys.iter().filter(|k| k.cached).count();
    out!("")?;
    if cached > 0 {
        out!(
            "{cached} of {} keys came from the cache; --force measures them again",
            report.keys.len()
        )?;
    }
    if global.verbose == 0 {
        out!("every candidate's figures: -v (tables) or --json")?;
    }
    Ok(())
}
