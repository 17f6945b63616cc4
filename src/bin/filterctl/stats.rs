//! `filterctl stats IN [--json]`: per-channel sum, mean, standard
//! deviation, minimum and maximum of an image (the `stats` operation).

use std::path::PathBuf;

use clap::Parser;
use clfilter::ops::stats::{Stats, StatsExt};
use clfilter::DynImage;

use crate::batch::{input_name, load_one};
use crate::error::CliError;
use crate::Global;

/// `filterctl stats` arguments.
#[derive(Debug, Parser)]
pub struct Args {
    /// The image (PNG, TIFF, PNM, JPEG, WebP), or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// Print `{"channels": C, "count": N, "sum": [..], "mean": [..],
    /// "std": [..], "min": [..], "max": [..]}`, one entry per channel
    /// (non-finite values are null).
    #[arg(long)]
    json: bool,
}

/// Runs the subcommand.
pub fn run(global: &Global, a: Args) -> Result<(), CliError> {
    let img = load_one(&a.input)?;
    let engine = global.engine()?;
    let (s, report) = match &img {
        DynImage::U8(i) => engine.stats_report(i),
        DynImage::U16(i) => engine.stats_report(i),
        DynImage::F32(i) => engine.stats_report(i),
    }
    .map_err(|e| CliError::from(e).context(input_name(&a.input)))?;
    status!(
        "stats: {} on {} in {:.2} ms",
        report.variant,
        report.backend,
        report.elapsed.as_secs_f64() * 1e3
    );
    if a.json {
        out!("{}", serde_json::to_string(&s)?)?;
        return Ok(());
    }
    print_text(&s, &a.input)
}

/// A table: one line per channel.
fn print_text(s: &Stats, input: &std::path::Path) -> Result<(), CliError> {
    let names = crate::histogram::channel_names(s.channels);
    out!(
        "stats of {}: {} samples per channel",
        input_name(input),
        s.count
    )?;
    out!("channel\tsum\tmean\tstd\tmin\tmax")?;
    for (c, n) in names.iter().enumerate().take(s.channels) {
        out!(
            "{n}\t{}\t{}\t{}\t{}\t{}",
            s.sum[c],
            s.mean[c],
            s.std[c],
            s.min[c],
            s.max[c]
        )?;
    }
    Ok(())
}
