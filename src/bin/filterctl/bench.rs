//! `filterctl bench`: kernel times of every variant, next to the copy
//! kernel's bandwidth (see `clfilter::bench`).

use std::time::{Duration, Instant};

use clfilter::bench::{BenchConfig, BenchReport};
use clfilter::ops::tuning::{self, Ask};
use clfilter::SampleType;

use crate::error::CliError;
use crate::util::{bytes, ms, parse_sample, parse_size};
use crate::Global;

/// Options of `filterctl bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Operations to time, comma-separated (default: all).
    #[arg(long, value_name = "OP,...", value_delimiter = ',')]
    ops: Vec<String>,

    /// Image size.
    #[arg(long, value_name = "WxH", default_value = "8192x8192", value_parser = parse_size)]
    size: (usize, usize),

    /// Sample type.
    #[arg(long = "type", value_name = "u8|u16|f32", default_value = "f32", value_parser = parse_sample)]
    sample: SampleType,

    /// Channels per pixel.
    #[arg(long, value_name = "1|3|4", default_value_t = 1, value_parser = parse_channels)]
    channels: usize,

    /// Timed runs per variant, after one warm-up run (the CPU path: warm-up
    /// calls for at least 50 ms).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    iters: u32,

    /// Gaussian sigma (both axes) for the `gaussian` rows.
    #[arg(long, default_value_t = 2.0)]
    sigma: f32,

    /// Method for the `demosaic` rows (RGGB frames of --type u8|u16 in,
    /// --channels 3 or 4 out; 4 when --channels is 1).
    #[arg(long, value_name = "bilinear|mhc|edge", default_value = "mhc")]
    method: clfilter::ops::demosaic::Method,

    /// Bins for the `histogram` rows, over the type's default range
    /// (default: two rows, 256 and 4096 bins).
    #[arg(long, value_name = "N")]
    bins: Option<usize>,

    /// Do not time the rayon CPU path.
    #[arg(long)]
    no_cpu: bool,

    /// Print the BenchReport as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Parses `--channels` (1, 3 or 4).
pub fn parse_channels(s: &str) -> Result<usize, String> {
    match s.trim() {
        "1" => Ok(1),
        "3" => Ok(3),
        "4" => Ok(4),
        _ => Err(format!("'{s}' channels: images have 1, 3 or 4")),
    }
}

/// A spinner on stderr while the measurement runs (hidden when stderr is
/// not a terminal).
fn spinner(msg: String) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

fn num(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "-".into()
    }
}

fn table(r: &BenchReport) -> Result<(), CliError> {
    let px = r.sample.size() * r.channels;
    let image_bytes = (r.width * r.height * px) as u64;
    out!(
        "device: {}  size: {}x{}x{} {} ({})  copy kernel: {}",
        r.device,
        r.width,
        r.height,
        r.channels,
        r.sample,
        bytes(image_bytes),
        match r.copy_gb_per_s {
            Some(c) => format!("{c:.2} GB/s (read + write)"),
            None => "- (no OpenCL device)".into(),
        }
    )?;
    if r.rows.is_empty() {
        out!("(nothing measured: no OpenCL device and --no-cpu)")?;
        return Ok(());
    }
    // An operation measured with several parameter sets names the set
    // after each variant: `cpu (ycc samples4)`.
    let several = |op: &str| {
        let mut sets = r.rows.iter().filter(|x| x.op == op).map(|x| &x.params);
        sets.next()
            .is_some_and(|first| sets.any(|other| other != first))
    };
    let name = |row: &clfilter::bench::BenchRow| match &row.params {
        Some(p) if several(&row.op) => format!("{} ({p})", row.variant),
        _ => row.variant.clone(),
    };
    let vw = r
        .rows
        .iter()
        .map(|row| name(row).len())
        .max()
        .unwrap_or(0)
        .max(7);
    let ow = r
        .rows
        .iter()
        .map(|row| row.op.len())
        .max()
        .unwrap_or(0)
        .max(2);
    out!(
        "{:ow$}  {:vw$}  {:>10}  {:>19}  {:>9}  {:>7}  {:>6}",
        "op",
        "variant",
        "median ms",
        "min..max ms",
        "MP/s",
        "GB/s",
        "% copy"
    )?;
    for row in &r.rows {
        if let Some(e) = &row.error {
            out!("{:ow$}  {:vw$}  error: {e}", row.op, name(row))?;
            continue;
        }
        out!(
            "{:ow$}  {:vw$}  {:>10}  {:>19}  {:>9}  {:>7}  {:>6}",
            row.op,
            name(row),
            num(row.median_ms, 3),
            format!("{}..{}", num(row.min_ms, 3), num(row.max_ms, 3)),
            num(row.mp_per_s, 1),
            num(row.gb_per_s, 2),
            row.pct_of_copy
                .map(|p| format!("{p:.0}%"))
                .unwrap_or_else(|| "-".into())
        )?;
    }
    Ok(())
}

/// Refuses, as a usage error, an operation named in `--ops` that cannot
/// take the images the options describe (`wb` with `--channels 1`,
/// `demosaic` on f32 or an odd `--size`): timing it would print only an
/// error row. With every operation (no `--ops`), such rows stay errors.
fn check_named_ops(cfg: &BenchConfig) -> Result<(), CliError> {
    if cfg.ops.is_empty() {
        return Ok(());
    }
    let ask = Ask {
        sigmas: &[cfg.sigma],
        channels: cfg.channels,
        method: Some(&cfg.method),
        bins: cfg.bins,
    };
    let shape = (cfg.width, cfg.height, cfg.channels);
    for t in tuning::selected(&cfg.ops)? {
        let refuse = |why: &dyn std::fmt::Display| {
            CliError::usage(format!(
                "bench --ops {} on {}x{}x{} {}: {why}",
                t.spec().name,
                cfg.width,
                cfg.height,
                cfg.channels,
                cfg.sample
            ))
        };
        t.takes(cfg.sample, cfg.channels)
            .map_err(|why| refuse(&why))?;
        for params in t.params(&ask)? {
            t.job_shape(cfg.sample, shape, params)
                .map_err(|e| refuse(&e))?;
        }
    }
    Ok(())
}

/// Runs `filterctl bench`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let ops = crate::util::op_names(&args.ops)?;
    let (width, height) = args.size;
    clfilter::ops::gaussian::GaussianParams::new(args.sigma).validate()?;
    if let Some(bins) = args.bins {
        clfilter::ops::histogram::HistogramParams {
            bins,
            ..clfilter::ops::histogram::HistogramParams::default_for(args.sample)
        }
        .binning()?;
    }
    let cfg = BenchConfig {
        ops,
        width,
        height,
        channels: args.channels,
        sample: args.sample,
        iters: args.iters as usize,
        cpu: !args.no_cpu,
        sigma: args.sigma,
        method: args.method.name().to_string(),
        bins: args.bins,
    };
    check_named_ops(&cfg)?;
    let engine = global.measuring_engine()?;
    let pb = spinner(format!(
        "timing {} on {} ({width}x{height}x{} {}, {} runs each)",
        if cfg.ops.is_empty() {
            "every operation".to_string()
        } else {
            cfg.ops.join(", ")
        },
        engine.backend().describe(),
        cfg.channels,
        cfg.sample,
        cfg.iters
    ));
    let start = Instant::now();
    let report = clfilter::bench::run(&engine, &cfg);
    pb.finish_and_clear();
    let report = report?;
    log::info!("bench took {}", ms(start.elapsed()));
    if args.json {
        out!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        table(&report)?;
    }
    // A table of failures measured nothing: say so in the exit status too.
    let errors: Vec<&str> = report
        .rows
        .iter()
        .filter_map(|r| r.error.as_deref())
        .collect();
    if let (Some(first), true) = (errors.first(), errors.len() == report.rows.len()) {
        return Err(CliError::Failed(format!(
            "every variant failed, the first with: {first}"
        )));
    }
    Ok(())
}
