//! `filterctl tune`: measure every variant per key and cache the result
//! (see `clfilter::tune` and docs/TUNING.md); `--show` prints the cache,
//! `--clear` deletes it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clfilter::pipeline::{self, Op};
use clfilter::tune::{
    store, DispatchCheck, Formats, KeyResult, Mode, Progress, Status, TuneConfig, TuneEntry,
    TuneReport,
};
use clfilter::{CacheDir, DynImage, Engine, RawFormat, SampleType};
use serde::Serialize;

use crate::bench::parse_channels;
use crate::error::CliError;
use crate::frames::{camera_wb, check_image_format, read_dng, read_frame, FrameSpec};
use crate::util::{parse_format, parse_sample, parse_size};
use crate::Global;

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

fn num(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// The key in words: what was measured and what it stands for.
fn heading(e: &TuneEntry, how: &str) -> String {
    let sigma = e.sigma.map(|s| format!(" sigma {s}")).unwrap_or_default();
    format!(
        "{} {} {}x{}{sigma} [bucket 2^{} px, params {}] ({how})",
        e.key.op, e.key.format, e.width, e.height, e.key.size_bucket, e.key.params
    )
}

/// One entry as a table: a row per timed candidate and mode (fastest
/// first, the winner marked `*`), then the candidates that were not timed,
/// then the check of the engine's own call when there is one.
fn entry_table(e: &TuneEntry, how: &str, check: Option<&DispatchCheck>) -> Result<(), CliError> {
    out!("{}", heading(e, how))?;
    if let Some(c) = e.copy_gb_per_s {
        out!("  copy kernel: {c:.2} GB/s (read + write)")?;
    }
    timing_rows(e)?;
    untimed_lines(e)?;
    if let Some(c) = check {
        dispatch_line(c)?;
    }
    out!("")?;
    Ok(())
}

/// The width of the table's variant column: the longest variant name (at
/// least `variant`) and room for the winner's ` *`.
fn variant_width(e: &TuneEntry) -> usize {
    e.candidates
        .iter()
        .map(|c| c.variant.len())
        .max()
        .unwrap_or(0)
        .max(7)
        + 2
}

/// The table's header and a row per timed candidate, kernel mode first,
/// then end to end; within a mode the fastest first, the winner marked `*`.
fn timing_rows(e: &TuneEntry) -> Result<(), CliError> {
    let vw = variant_width(e);
    out!(
        "  {:6}  {:vw$}  {:>10}  {:>7}  {:>9}  {:>7}  {:>6}",
        "mode",
        "variant",
        "median ms",
        "spread",
        "MP/s",
        "GB/s",
        "% copy"
    )?;
    for mode in [Mode::Kernel, Mode::E2e] {
        let mut rows: Vec<_> = e
            .candidates
            .iter()
            .filter_map(|c| c.timing(mode).map(|t| (c, t)))
            .collect();
        rows.sort_by(|a, b| a.1.median_ms.total_cmp(&b.1.median_ms));
        for (c, t) in rows {
            let mark = if e.winner(mode) == Some(c.variant.as_str()) {
                " *"
            } else {
                ""
            };
            out!(
                "  {:6}  {:vw$}  {:>10}  {:>7}  {:>9}  {:>7}  {:>6}",
                mode.to_string(),
                format!("{}{mark}", c.variant),
                num(t.median_ms, 3),
                format!("{:.0}%", t.spread_pct),
                num(t.mp_per_s, 1),
                num(t.gb_per_s, 2),
                t.pct_of_copy
                    .map(|p| format!("{p:.0}%"))
                    .unwrap_or_else(|| "-".into())
            )?;
        }
    }
    Ok(())
}

/// A line per candidate that was not timed: disqualified or unsupported
/// (with why), or a mode that was left out (with the note; never for the
/// CPU variant).
fn untimed_lines(e: &TuneEntry) -> Result<(), CliError> {
    for c in &e.candidates {
        match &c.status {
            Status::Disqualified(why) => out!("  disqualified {}: {}", c.variant, first_line(why))?,
            Status::Unsupported(why) => out!("  unsupported  {}: {}", c.variant, why)?,
            Status::Ok => {
                for (mode, note, t) in [
                    (Mode::Kernel, &c.kernel_note, &c.kernel),
                    (Mode::E2e, &c.e2e_note, &c.e2e),
                ] {
                    match (note, t) {
                        (Some(n), None) if c.variant != clfilter::ops::CPU => {
                            out!("  {mode} not timed {}: {n}", c.variant)?
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(())
}

/// The check of the engine's own call: the variant it runs now against the
/// forced winner, timed in the same interleaved rounds.
fn dispatch_line(c: &DispatchCheck) -> Result<(), CliError> {
    out!(
        "  engine call now runs {}: {} ms end to end, forced winner {} ms in the same {} interleaved rounds ({:+.1}%)",
        c.variant,
        num(c.median_ms, 3),
        num(c.winner_median_ms, 3),
        c.runs,
        100.0 * (c.median_ms / c.winner_median_ms - 1.0)
    )
}

/// Build logs run to many lines; the table shows the first.
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
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

/// The figure of `variant` in `mode`, ms.
fn median_of(e: &TuneEntry, variant: &str, mode: Mode) -> Option<f64> {
    e.candidates
        .iter()
        .find(|c| c.variant == variant)
        .and_then(|c| c.timing(mode))
        .map(|t| t.median_ms)
}

/// The summary's cells of one mode: winner, its median, how much slower
/// the second-best is, and (end to end) how much slower the CPU path is.
fn winner_cells(e: &TuneEntry, mode: Mode) -> [String; 4] {
    let Some(w) = e.winner(mode) else {
        return ["-".into(), "-".into(), "-".into(), "-".into()];
    };
    let ms = median_of(e, w, mode).unwrap_or(f64::NAN);
    let mut others: Vec<f64> = e
        .candidates
        .iter()
        .filter(|c| c.variant != w)
        .filter_map(|c| c.timing(mode).map(|t| t.median_ms))
        .collect();
    others.sort_by(f64::total_cmp);
    let ratio = |o: f64| format!("{:.2}x", o / ms);
    let second = others.first().map_or("-".into(), |&o| ratio(o));
    let cpu = match median_of(e, clfilter::ops::CPU, mode) {
        Some(c) if w != clfilter::ops::CPU => ratio(c),
        _ => "-".into(),
    };
    [w.to_string(), num(ms, 3), second, cpu]
}

/// One line per key: the end-to-end winner (what host calls run) with its
/// median, the second-best's and the CPU path's time as multiples of it,
/// and the kernel-mode winner (what device-resident stages run).
fn summary(keys: &[KeyResult]) -> Result<(), CliError> {
    let rows: Vec<[String; 9]> = keys
        .iter()
        .map(|k| {
            let e = &k.entry;
            let [w, ms, second, cpu] = winner_cells(e, Mode::E2e);
            let [kw, kms, _, _] = winner_cells(e, Mode::Kernel);
            [
                e.key.op.clone(),
                format!("{} 2^{} {}", e.key.format, e.key.size_bucket, e.key.params),
                w,
                ms,
                second,
                cpu,
                kw,
                kms,
                if k.cached { "cached" } else { "" }.into(),
            ]
        })
        .collect();
    let head = [
        "op",
        "key",
        "e2e winner",
        "ms",
        "vs 2nd",
        "vs cpu",
        "kernel winner",
        "ms",
        "",
    ];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let w: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |r: [&str; 9]| {
        format!(
            "{:w0$}  {:w1$}  {:w2$}  {:>w3$}  {:>w4$}  {:>w5$}  {:w6$}  {:>w7$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
            w5 = w[5],
            w6 = w[6],
            w7 = w[7],
        )
        .trim_end()
        .to_string()
    };
    out!("{}", line(head))?;
    for r in &rows {
        out!("{}", line(std::array::from_fn(|i| r[i].as_str())))?;
    }
    Ok(())
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
    let report = measure(&engine, &args)?;
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
