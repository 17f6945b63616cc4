//! `filterctl tune`: measure every variant per key and cache the result
//! (see `clfilter::tune` and docs/TUNING.md); `--show` prints the cache,
//! `--clear` deletes it.

use std::time::Duration;

use clfilter::tune::{store, DispatchCheck, KeyResult, Mode, Status, TuneConfig, TuneEntry};
use clfilter::{CacheDir, SampleType};
use serde::Serialize;

use crate::bench::parse_channels;
use crate::error::CliError;
use crate::util::{parse_sample, parse_size};
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

    /// Sample type.
    #[arg(long = "type", value_name = "u8|u16|f32", default_value = "f32", value_parser = parse_sample)]
    sample: SampleType,

    /// Channels per pixel.
    #[arg(long, value_name = "1|3|4", default_value_t = 1, value_parser = parse_channels)]
    channels: usize,

    /// Gaussian sigmas (both axes), comma-separated; one key each.
    #[arg(long, value_name = "S,...", value_delimiter = ',', default_value = "2")]
    sigma: Vec<f32>,

    /// Seconds to spend in all (a target: every candidate gets a few runs).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_budget)]
    budget: f64,

    /// Measure again keys that the cache already holds.
    #[arg(long, conflicts_with_all = ["show", "clear"])]
    force: bool,

    /// Print JSON on stdout instead of tables.
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

/// Runs `filterctl tune`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    if args.clear {
        return clear();
    }
    if args.show {
        return show(global, args.json);
    }
    let cfg = TuneConfig {
        ops: args
            .ops
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        sizes: args.sizes,
        sample: args.sample,
        channels: args.channels,
        sigmas: args.sigma,
        budget: Duration::from_secs_f64(args.budget),
        force: args.force,
    };
    let engine = global.measuring_engine()?;
    let pb = indicatif::ProgressBar::new(0);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    let report = clfilter::tune::tune(&engine, &cfg, &mut |p| {
        pb.set_length(p.total as u64);
        pb.set_position(p.done as u64);
        pb.set_message(p.message.to_string());
    });
    pb.finish_and_clear();
    let report = report?;
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
    let cached = report.keys.iter().filter(|k| k.cached).count();
    if cached > 0 {
        out!(
            "{cached} of {} keys came from the cache; --force measures them again",
            report.keys.len()
        )?;
    }
    Ok(())
}
